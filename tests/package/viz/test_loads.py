"""collectives.viz.loads: link loads drawn as hot cables. What is drawn is checked against
loads worked out by hand for small schedules (the same bytes collectives.cost says)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import loads as vl
from collectives.viz import wiring as vw
from collectives.viz.animation import frame_description, frame_png


def _two_nodes():
    """2 nodes of 4 GPUs, one spine with one cable per leaf: the flat ring's two
    rail-changing hops (GPU 3 -> 4 and 7 -> 0) share the rail-3 leaf's cable to the spine
    and the spine's cable down to the rail-0 leaf."""
    return cl.topology.cluster(
        2, 4, nvlink_bandwidth=9.0, pcie_bandwidth=2.0, nic_bandwidth=1.0, n_spines=1, spine_links=1
    )


def _line_colour(ax, a, b):
    """The colour of the line drawn between points ``a`` and ``b``."""
    for line in ax.lines:
        xy = line.get_xydata()
        if len(xy) == 2 and {tuple(np.round(p, 9)) for p in xy} == {
            tuple(np.round(a, 9)),
            tuple(np.round(b, 9)),
        }:
            return matplotlib.colors.to_rgba(line.get_color()), line.get_linewidth()
    raise AssertionError(f"no line between {a} and {b}")


def test_the_hot_cables_are_the_ones_the_step_loads_most():
    t = _two_nodes()
    ring = cl.algorithms.ring_all_gather(8)
    loads = cl.cost.step_link_bytes(ring, t, 8.0, 0)  # one byte per chunk
    spine = t.info.levels.index("spine")
    leaf = t.info.levels.index("leaf")
    # by hand: each of the 8 hops carries one chunk; the two rail changes share the spine
    # cables (2 chunks each way), every other loaded link carries 1
    assert sorted(loads[t.link_level == spine]) == [0, 0, 0, 0, 0, 0, 2, 2]
    assert loads[t.link_level == leaf].max() == 1
    ax = plt.figure().gca()
    lay = vw.wiring_of(t)
    vl.draw_link_loads(t, loads, ax, layout=lay, colorbar=False)
    pos = lay.positions
    hot_colour, hot_width = None, 0.0
    for link in np.flatnonzero(loads):
        colour, width = _line_colour(ax, pos[t.link_src[link]], pos[t.link_dst[link]])
        fraction = loads[link] / 2.0  # the scale's top is 2
        np.testing.assert_allclose(colour, vl.load_colour(fraction))
        if fraction == 1.0:
            hot_colour, hot_width = colour, width
    # the spine cables are the hottest and the thickest; an idle cable is pale grey
    assert hot_colour is not None
    idle = next(
        k for k in np.flatnonzero((loads == 0) & (t.link_level == spine)) if loads[_twin(t, k)] == 0
    )  # a cable idle both ways
    colour, width = _line_colour(ax, pos[t.link_src[idle]], pos[t.link_dst[idle]])
    assert matplotlib.colors.same_color(colour, vl.IDLE_COLOUR) and width < hot_width
    plt.close("all")


def test_a_line_shows_the_busiest_of_its_cables():
    ring = cl.topology.ring(3, 1.0)
    loads = np.zeros(ring.n_links)
    loads[0], loads[3] = 5.0, 2.0  # one direction of a cable, and of another
    per_line = vl.line_loads(ring, loads)
    u0, v0 = int(ring.link_src[0]), int(ring.link_dst[0])
    assert per_line[(min(u0, v0), max(u0, v0))] == max(5.0, loads[_twin(ring, 0)])
    assert len(per_line) == 3 and sorted(per_line.values())[-1] == 5.0


def _twin(topology, link):
    u, v = topology.link_src[link], topology.link_dst[link]
    return int(np.flatnonzero((topology.link_src == v) & (topology.link_dst == u))[0])


def test_chip_lines_show_the_load_of_the_link_they_split():
    dgx = cl.hardware.preset("dgx-h100")
    lay = vw.wiring_of(dgx, ("nvlink",), chips=True)
    t = cl.time(cl.algorithms.ring_all_reduce(8), dgx, 1.0)
    ax = plt.figure().gca()
    vl.draw_link_loads(dgx, t.link_bytes, ax, layout=lay)
    # every GPU's NVLink carries 2(n-1)/n = 1.75 S each way: all 32 chip lines at the top
    (split,) = lay.chips
    full = vl.load_colour(1.0)
    chip_lines = [
        line
        for line in ax.lines
        if any(np.allclose(line.get_xydata()[-1], xy) for xy in split.positions)
    ]
    assert len(chip_lines) == 32
    assert all(
        np.allclose(matplotlib.colors.to_rgba(line.get_color()), full) for line in chip_lines
    )
    plt.close("all")


def test_bad_loads_are_refused():
    ring = cl.topology.ring(4, 1.0)
    with pytest.raises(cl.CollectivesError, match=r"one value per link of ring.*\(8\)"):
        vl.draw_link_loads(ring, np.ones(3))
    with pytest.raises(cl.CollectivesError, match="finite and >= 0"):
        vl.draw_link_loads(ring, -np.ones(8))
    with pytest.raises(cl.CollectivesError, match="unit must be a number > 0"):
        vl.draw_link_loads(ring, np.ones(8), unit=0)
    with pytest.raises(cl.CollectivesError, match="expected a collectives Topology"):
        vl.line_loads("ring", np.ones(8))
    plt.close("all")


def test_the_load_stepper_has_a_tab_per_chosen_step_on_one_scale():
    t = _two_nodes()
    ring = cl.algorithms.ring_all_gather(8)
    tab = vl.load_stepper(ring, t, 8.0, steps=[0, 3], step_titles=[f"s{k}" for k in range(7)])
    assert tab.titles == ("step 0", "step 3")
    pngs = [frame_png(frame) for frame in tab.children]
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs)
    anim = vl.animate_loads(ring, t, 8.0, steps=[0, 1])
    html = anim.to_jshtml()
    assert html.count("data:image/png;base64") >= 2
    with pytest.raises(cl.CollectivesError, match="step_titles must be 7 strings"):
        vl.load_stepper(ring, t, 8.0, step_titles=["one"])
    plt.close("all")


def test_a_scale_from_vmin_spreads_the_colours_above_it():
    ring = cl.topology.ring(3, 1.0)
    loads = np.array([0.0, 3.0, 4.0, 5.0, 2.0, 0.0])
    ax = plt.figure().gca()
    vl.draw_link_loads(ring, loads, ax, vmin=3.0, vmax=5.0, colorbar=False)
    per_line = vl.line_loads(ring, loads)
    lay = vw.wiring_of(ring)
    for (u, v), load in per_line.items():
        colour, _ = _line_colour(ax, lay.positions[u], lay.positions[v])
        # (load - 3) / (5 - 3), the loads at or below 3 at the palest end
        np.testing.assert_allclose(colour, vl.load_colour(max(load - 3.0, 0.0) / 2.0))
    with pytest.raises(cl.CollectivesError, match="vmin must be a number from 0 to below vmax"):
        vl.draw_link_loads(ring, loads, vmin=6.0, vmax=5.0)
    plt.close("all")


def test_a_failed_cable_is_drawn_dashed_with_a_cross():
    fabric = cl.fabric.layered(2, 1e9, [cl.fabric.Tier(2, 3)])
    leaf = int(fabric.switches[fabric.node_tier[fabric.switches] == 1][0])
    cable = int(np.flatnonzero((fabric.link_src == leaf) & fabric.link_up)[0])
    broken = fabric.fail(links=[cable])
    lay = vw.wiring_of(broken)
    ends = lay.positions[[broken.link_src[cable], broken.link_dst[cable]]]
    ax = vl.draw_link_loads(broken, np.ones(broken.n_links), ax=plt.figure().gca(), colorbar=False)
    dashed = [line for line in ax.lines if line.get_linestyle() not in ("-", "None")]
    assert len(dashed) == 1  # the failed cable, once for its two directions
    np.testing.assert_allclose(dashed[0].get_xydata(), ends)
    crosses = [line for line in ax.lines if line.get_marker() == "X"]
    assert len(crosses) == 1 and np.allclose(crosses[0].get_xydata()[0], ends.mean(axis=0))
    (label,) = [t for t in ax.texts if t.get_text() == "failed"]  # readable at phone width
    np.testing.assert_allclose(label.xy, ends.mean(axis=0))
    assert crosses[0].get_markersize() >= 9
    # the intact fabric has neither
    ax = vl.draw_link_loads(fabric, np.ones(fabric.n_links), ax=plt.figure().gca(), colorbar=False)
    assert not [line for line in ax.lines if line.get_marker() == "X"]
    assert not [t for t in ax.texts if t.get_text() == "failed"]
    plt.close("all")


def test_an_array_of_fractions_gets_the_colours_of_its_elements():
    fractions = np.array([[0.0, 0.5], [1.0, 2.0]])
    colours = vl.load_colour(fractions)
    assert colours.shape == (2, 2, 4)
    for index in np.ndindex(2, 2):
        np.testing.assert_allclose(colours[index], vl.load_colour(float(fractions[index])))
    np.testing.assert_allclose(colours[1, 1], vl.load_colour(1.0))  # clipped to the top


def test_the_load_stepper_describes_each_step_s_busiest_link():
    """A 4-rank ring all-gather on a 4-rank unidirectional ring, 4 bytes (1 byte a chunk):
    in every step each of the 4 links carries exactly one chunk (rank r -> r + 1), so each
    frame says 4 of 4 links carry data, the busiest 1 byte, one chunk."""
    ring = cl.topology.ring(4, 1.0, bidirectional=False)
    tab = vl.load_stepper(cl.algorithms.ring_all_gather(4), ring, 4.0, dpi=20)
    descriptions = [frame_description(frame) for frame in tab.children]
    assert len(descriptions) == 3
    for k, d in enumerate(descriptions):
        assert d.startswith(f"step {k}: 4 of 4 links carry data")
        assert "carries 1 bytes, 1 chunks on the link (as do 3 other links)" in d
    plt.close("all")
