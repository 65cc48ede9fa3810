"""collectives.viz.fabric: a layered fabric tier by tier, link loads per routing scheme, and
the histogram of flows per cable."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import fabric as vfab


def test_cable_load_histogram_counts_cables_per_number_of_flows():
    loads = {"up": np.array([0, 1, 1, 3]), "down": np.array([2, 2])}
    ax = vfab.plot_cable_loads(loads, ax=plt.figure().gca())
    # x = flows on one cable 0..3; up: one cable with 0, two with 1, none with 2, one with 3
    up, down = ax.containers
    assert [p.get_height() for p in up] == [1, 2, 0, 1]
    assert [p.get_height() for p in down] == [0, 0, 2, 0]
    with pytest.raises(cl.CollectivesError, match="whole flows"):
        vfab.plot_cable_loads({"up": np.array([0.5, 1.0])}, ax=plt.figure().gca())
    plt.close("all")


def test_link_loads_need_a_scheme_colour():
    ax = vfab.plot_link_loads({"ECMP, 1 QP": [3, 1, 2]}, ax=plt.figure().gca(), even=2)
    # sorted busiest first
    assert list(ax.lines[0].get_ydata()) == [3, 2, 1]
    with pytest.raises(cl.CollectivesError, match="no colour for scheme"):
        vfab.plot_link_loads({"mystery": [1]}, ax=plt.figure().gca())
    plt.close("all")


def test_a_layered_fabric_is_drawn_cable_by_cable():
    toy = cl.fabric.layered(4, 1e9, [cl.fabric.Tier(2, 2)])
    ax = vfab.draw_layered(toy, ax=plt.figure().gca())
    # one line per cable, drawn once (its up direction): 8 host cables + 2 x 2 leaf-spine
    assert len(ax.lines) == np.count_nonzero(toy.link_up) == 8 + 4
    with pytest.raises(cl.CollectivesError, match="layered"):
        vfab.draw_layered(cl.topology.ring(4, 1.0))
    plt.close("all")


def _leaf_spine():
    """2 leaves of 2 hosts, 3 spines: each leaf has 3 uplinks, one to each spine."""
    return cl.fabric.layered(2, 1e9, [cl.fabric.Tier(2, 3)])


def test_the_uplink_matrix_puts_each_leafs_uplinks_in_its_column():
    fabric = _leaf_spine()
    ids = np.arange(fabric.n_links, dtype=float)  # each link's load is its own id
    lower, matrix = vfab.uplink_matrix(fabric, ids, 2)
    leaves = fabric.switches[fabric.node_tier[fabric.switches] == 1]
    assert lower.tolist() == leaves.tolist() and matrix.shape == (3, 2)
    for i, leaf in enumerate(leaves):
        # column i: the links from leaf i up to the three spines, in link order
        expected = np.flatnonzero(
            (fabric.link_src == leaf) & fabric.link_up & (fabric.link_tier == 2)
        )
        assert matrix[:, i].tolist() == expected.tolist()
        assert set(fabric.node_tier[fabric.link_dst[expected]]) == {2}
    # one leaf only
    assert vfab.uplink_matrix(fabric, ids, 2, switches=[leaves[1]])[1][:, 0].tolist() == (
        matrix[:, 1].tolist()
    )


def test_the_uplink_matrix_refuses_what_it_cannot_arrange():
    fabric = _leaf_spine()
    ones = np.ones(fabric.n_links)
    with pytest.raises(cl.CollectivesError, match="no up links at tier 3"):
        vfab.uplink_matrix(fabric, ones, 3)
    with pytest.raises(cl.CollectivesError, match=r"node 0 .* has no up links at tier 2"):
        vfab.uplink_matrix(fabric, ones, 2, switches=[0])
    with pytest.raises(cl.CollectivesError, match="one value per link"):
        vfab.uplink_matrix(fabric, np.ones(3), 2)
    with pytest.raises(cl.CollectivesError, match="cluster or fabric"):
        vfab.uplink_matrix(cl.topology.ring(4, 1.0), np.ones(8), 2)


def test_the_hottest_uplink_is_the_darkest_cell_and_idle_ones_are_grey():
    from matplotlib.colors import to_rgba

    from collectives.viz import loads as vl

    fabric = _leaf_spine()
    loads = np.zeros(fabric.n_links)
    _, links = vfab.uplink_matrix(fabric, np.arange(fabric.n_links, dtype=float), 2)
    links = links.astype(int)
    loads[links[0, 0]] = 4.0  # leaf 0's first uplink: the hottest
    loads[links[2, 1]] = 2.0  # leaf 1's last: half of it
    ax = vfab.draw_uplink_loads(fabric, loads, 2, ax=plt.figure().gca(), colorbar=False)
    cells = ax.images[0].get_array()  # origin "lower": row 0 is the first uplink
    np.testing.assert_allclose(cells[0, 0], vl.load_colour(1.0))
    np.testing.assert_allclose(cells[2, 1], vl.load_colour(0.5))
    np.testing.assert_allclose(cells[1, 0], to_rgba(vl.IDLE_COLOUR))
    # on a fixed scale the hottest cell is no longer the darkest
    ax = vfab.draw_uplink_loads(fabric, loads, 2, ax=plt.figure().gca(), vmax=8, colorbar=False)
    np.testing.assert_allclose(ax.images[0].get_array()[0, 0], vl.load_colour(0.5))
    with pytest.raises(cl.CollectivesError, match="unit must be a number > 0"):
        vfab.draw_uplink_loads(fabric, loads, 2, unit=0)
    plt.close("all")


def test_the_hottest_cells_are_ringed_at_their_own_rack_and_uplink():
    fabric = _leaf_spine()
    loads = np.zeros(fabric.n_links)
    _, links = vfab.uplink_matrix(fabric, np.arange(fabric.n_links, dtype=float), 2)
    links = links.astype(int)
    loads[links[0, 0]] = loads[links[2, 1]] = 3.0  # two hottest: leaf 0's first, leaf 1's last
    loads[links[1, 1]] = 1.0
    ax = vfab.draw_uplink_loads(fabric, loads, 2, ax=plt.figure().gca(), mark_hottest=True)
    (rings,) = ax.get_lines()
    # column = lower switch, row = uplink number counted from 1 (the cells' centres)
    assert sorted(zip(rings.get_xdata().tolist(), rings.get_ydata().tolist())) == [
        (0, 1),
        (1, 3),
    ]
    assert rings.get_markerfacecolor() == "none"
    ax = vfab.draw_uplink_loads(fabric, loads, 2, ax=plt.figure().gca())
    assert not ax.get_lines()  # off by default
    plt.close("all")


def test_each_tier_is_labelled_with_its_oversubscription():
    fabric = cl.fabric.layered(4, 1e9, [cl.fabric.Tier(4, 5), cl.fabric.Tier(2, 2)])
    ax = vfab.draw_layered(fabric, ax=plt.figure().gca(), ratios=True)
    # leaves: 4 hosts down, 5 uplinks; spines: 4 leaves down, 2 aggregation switches up
    assert [t.get_text() for t in ax.texts] == ["0.8:1", "2:1"]
    assert [t.xy[1] for t in ax.texts] == [1, 2]  # on the leaf row, then the spine row
    ax = vfab.draw_layered(fabric, ax=plt.figure().gca())
    assert not ax.texts
    plt.close("all")


def test_a_sweep_draws_one_line_per_series_and_the_points_apart():
    ax = vfab.plot_sweep(
        [1, 8, 64],
        {"exact": [2.9, 4.0, 5.0], "estimate": [2.8, 4.0, 5.0]},
        ax=plt.figure().gca(),
        points={"simulated": ([1], [3.0])},
        level=4.5,
        logx=True,
    )
    lines = ax.get_lines()
    assert [list(line.get_ydata()) for line in lines[:3]] == [
        [2.9, 4.0, 5.0],
        [2.8, 4.0, 5.0],
        [3.0],
    ]
    assert lines[2].get_linestyle() == "None" and lines[3].get_ydata()[0] == 4.5
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == [
        "1",
        "8",
        "64",
    ]
    with pytest.raises(cl.CollectivesError, match="one value per x"):
        vfab.plot_sweep([1, 2], {"short": [1.0]}, ax=plt.figure().gca())
    with pytest.raises(cl.CollectivesError, match="at least one series"):
        vfab.plot_sweep([1, 2], {}, ax=plt.figure().gca())
    plt.close("all")


def test_a_dashed_series_leaves_the_one_it_coincides_with_visible():
    ax = vfab.plot_sweep(
        [1, 8],
        {"exact": [2.9, 4.0], "estimate": [2.9, 4.0]},
        ax=plt.figure().gca(),
        dashed=["estimate"],
    )
    exact, estimate = ax.get_lines()
    assert exact.get_linestyle() == "-" and exact.get_marker() == "o"
    assert estimate.get_linestyle() == "--" and estimate.get_marker() in ("None", "", None)
    assert estimate.get_linewidth() < exact.get_linewidth()
    legend = [h.get_linestyle() for h in ax.get_legend().legend_handles]
    assert legend == ["-", "--"]  # the legend tells the two apart as the plot does
    with pytest.raises(cl.CollectivesError, match="dashed names no series"):
        vfab.plot_sweep([1], {"exact": [1.0]}, ax=plt.figure().gca(), dashed=["other"])
    plt.close("all")


def test_parts_stack_in_one_order_and_the_total_is_written_at_the_end():
    rows = {"short": {"a": 1.0, "b": 3.0}, "long": {"a": 2.0, "b": 0.0}}
    ax = vfab.plot_parts(rows, ax=plt.figure().gca(), unit=0.5)
    bars = ax.patches  # row by row, part by part
    assert [b.get_width() for b in bars] == [2.0, 6.0, 4.0, 0.0]
    assert [b.get_x() for b in bars] == [0.0, 2.0, 0.0, 4.0]
    # part "a" has one colour in both bars, "b" another
    assert bars[0].get_facecolor() == bars[2].get_facecolor() != bars[1].get_facecolor()
    assert [t.get_text() for t in ax.texts] == [" 8", " 4"]
    with pytest.raises(cl.CollectivesError, match="every row needs"):
        vfab.plot_parts({"x": {"a": 1}, "y": {"b": 1}}, ax=plt.figure().gca())
    with pytest.raises(cl.CollectivesError, match=">= 0"):
        vfab.plot_parts({"x": {"a": -1}}, ax=plt.figure().gca())
    with pytest.raises(cl.CollectivesError, match="at least one row"):
        vfab.plot_parts({}, ax=plt.figure().gca())
    # totals to the text's rounding: 135.2 kB, not the default three digits' 135
    one = {"3 m": {"frames": 13.3, "fixed": 121.9}}
    ax = vfab.plot_parts(one, ax=plt.figure().gca(), digits=4)
    assert [t.get_text() for t in ax.texts] == [" 135.2"]
    assert [t.get_text() for t in vfab.plot_parts(one, ax=plt.figure().gca()).texts] == [" 135"]
    with pytest.raises(cl.CollectivesError, match="digits must be an integer"):
        vfab.plot_parts(one, ax=plt.figure().gca(), digits=0)
    plt.close("all")
