"""collectives.viz.costs: cost figures drawn from collectives.time and Timing's per-level and
per-link detail; each algorithm keeps its book colour."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives import viz
from collectives.viz import costs


def test_plot_costs_plots_time_from_cost_time():
    s, topo = cl.algorithms.ring_all_gather(4), cl.topology.ring(4, 1e9, 1e-6)
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    viz.plot_costs([("ring", s, topo)], [1e3, 1e6], "seconds", ax=ax)
    y = ax.lines[0].get_ydata()
    np.testing.assert_allclose(y, [cl.time(s, topo, 1e3).seconds, cl.time(s, topo, 1e6).seconds])
    with pytest.raises(cl.CollectivesError, match="metric must be"):
        viz.plot_costs([("ring", s, topo)], [1e3], "latency", ax=ax)
    plt.close("all")


def _lines(cases):
    fig, ax = plt.subplots()
    viz.plot_costs(cases, [1e3, 1e6], "seconds", ax=ax)
    lines = {
        line.get_label(): (matplotlib.colors.to_hex(line.get_color()), line.get_linestyle())
        for line in ax.get_lines()
    }
    plt.close(fig)
    return lines


def test_plot_costs_gives_each_algorithm_its_book_colour_in_any_order():
    """An algorithm keeps its colour from one figure to the next (issue 12): matplotlib's
    colour cycle would give the ring blue in one plot and orange in the next."""
    ring8, switch8 = cl.topology.ring(8, 1e9, 1e-6), cl.topology.switch(8, 1e9, 1e-6)
    ring = ("ring", cl.algorithms.ring_all_reduce(8), ring8)
    rab = ("Rabenseifner", cl.algorithms.rabenseifner_all_reduce(8), switch8)
    tree = (
        "double binary tree, 8 segments",
        cl.algorithms.double_binary_tree_all_reduce(8, n_segments=8),
        switch8,
    )
    first, second = _lines([ring, rab, tree]), _lines([tree, rab, ring])
    assert first == second
    # Okabe-Ito blue for rings, Tol's teal for halving-doubling, reddish purple for trees
    # (the palette in collectives/viz/style.py); the tree is found by its schedule's name
    assert first["ring"][0] == "#0072b2"
    assert first["Rabenseifner"][0] == "#44aa99"
    assert first["double binary tree, 8 segments"][0] == "#cc79a7"
    assert len({colour for colour, _ in first.values()}) == 3


def test_plot_costs_tells_two_cases_of_one_algorithm_apart_by_line_style():
    torus = cl.topology.torus((4, 4), 1e9, 1e-6)
    lines = _lines(
        [
            ("torus, one axis at a time", cl.algorithms.torus_all_gather((4, 4)), torus),
            (
                "torus, all axes at once",
                cl.algorithms.torus_all_gather((4, 4), concurrent=True),
                torus,
            ),
        ]
    )
    (c1, s1), (c2, s2) = lines.values()
    assert c1 == c2 == matplotlib.colors.to_hex(viz.style.algorithm_colour("torus"))
    assert s1 != s2


def test_plot_costs_refuses_a_case_with_no_book_colour():
    bogus = cl.algorithms.ring_all_gather(2).renamed("mystery_all_gather")
    fig, ax = plt.subplots()
    with pytest.raises(cl.CollectivesError, match="no colour"):
        viz.plot_costs([("mystery", bogus, cl.topology.switch(2, 1e9))], [1e3], ax=ax)
    plt.close(fig)


def test_link_multiples_are_the_timings_endpoint_bytes_over_the_buffer():
    """A ring all-reduce of S on a DGX node: each GPU sends 2(n-1)/n S = 1.75 S over its
    NVLink up to the NVSwitch and receives as much (n = 8)."""
    dgx = cl.hardware.preset("dgx-h100")
    timing = cl.time(cl.algorithms.ring_all_reduce(8), dgx, 2**20)
    up, down = costs.link_multiples(timing, dgx)
    assert up == pytest.approx(1.75) and down == pytest.approx(1.75)
    assert costs.link_multiples(timing, dgx, gpu=3) == pytest.approx((1.75, 1.75))
    fig, ax = plt.subplots()
    costs.plot_link_bytes([("ring", timing, "#0072B2")], dgx, ax=ax)
    widths = sorted(round(p.get_width(), 9) for p in ax.patches)
    assert widths == [1.75, 1.75]
    plt.close(fig)


def test_level_bars_are_as_long_as_the_timing():
    """level_seconds_bars: each bar's parts add up to Timing.seconds (transfer per level +
    the latency of all steps)."""
    pod = cl.topology.cluster(
        2,
        4,
        nvlink_bandwidth=4.5e11,
        pcie_bandwidth=6.4e10,
        nic_bandwidth=5e10,
        network_latency=1e-6,
    )
    timings = {"ring": cl.time(cl.algorithms.ring_all_reduce(8), pod, 2**24)}
    fig, ax = plt.subplots()
    costs.level_seconds_bars(timings, ax=ax, unit=1e-3)
    total = sum(p.get_width() for p in ax.patches)
    assert total == pytest.approx(timings["ring"].seconds / 1e-3)
    plt.close(fig)
