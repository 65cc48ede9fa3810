"""viz draws from the same Schedules the rest of the package uses."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import collectives as cl  # noqa: E402
from collectives import viz  # noqa: E402


def test_draw_schedule_has_a_row_per_step_and_shows_the_buffers():
    s = cl.algorithms.ring_all_gather(4)
    fig = viz.draw_schedule(s, cl.topology.ring(4, 1.0))
    assert len(fig.axes) == 2 * (s.n_steps + 1)
    grid = fig.axes[-1]                         # the buffers after the last step: all full
    labels = sorted(t.get_text() for t in grid.texts)
    assert labels == sorted(str(c) for c in range(4) for _ in range(4))


def test_reductions_show_contribution_counts():
    s = cl.algorithms.ring_reduce_scatter(3)
    fig = viz.draw_schedule(s)
    last = [t.get_text() for t in fig.axes[-1].texts]
    # rank r ends with chunk r summed over all 3 ranks
    assert {"0\n3/3", "1\n3/3", "2\n3/3"} <= set(last)


def test_topology_arrows_follow_the_routes():
    s = cl.algorithms.direct_all_gather(3)
    ax = viz.draw_topology(cl.topology.switch(3, 1.0), step=0, schedule=s)
    arrows = [p for p in ax.patches if type(p).__name__ == "FancyArrowPatch"]
    assert len(arrows) == 2 * s.n_transfers          # up-link and down-link of each transfer


def test_stepper_has_one_tab_per_frame():
    tab = viz.stepper(cl.algorithms.ring_all_gather(5), cl.topology.ring(5, 1.0))
    assert len(tab.children) == 5 and tab.titles == ("start", "step 0", "step 1", "step 2", "step 3")
    assert all(img.value[:8] == b"\x89PNG\r\n\x1a\n" for img in tab.children)


def test_animation_has_a_frame_per_state():
    import re

    html = viz.animate(cl.algorithms.ring_all_gather(3)).to_jshtml()
    frames = set(re.findall(r"frames\[(\d+)\] = ", html))
    assert frames == {"0", "1", "2"}                 # before step 0, after steps 0 and 1


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


def test_one_colour_blind_safe_palette_for_the_whole_book():
    """Every algorithm, link level and FP8 colour of every viz module comes from the palette
    defined once in viz.style (Okabe-Ito and Paul Tol's muted scheme)."""
    from collectives.viz import cluster, fp8, gpu, style, tpu

    palette = {c.lower() for c in style.PALETTE.values()} | {"#ddcc77"}      # Tol's sand
    used = {**style.ALGORITHM_COLOURS, **style.LEVEL_COLOURS,
            **{f"fp8 {k}": v for k, v in {**fp8.FORMAT_COLOURS, **fp8.FIELD_COLOURS,
                                          **fp8.SCALING_COLOURS, **fp8.PART_COLOURS}.items()},
            "tpu wrap": tpu.COLOURS["wrap"]}
    outside = {k: v for k, v in used.items() if v.lower() not in palette}
    assert not outside, outside
    # the chapters' modules share the book's table, they do not copy it
    assert gpu.ALGORITHM_COLOURS is style.ALGORITHM_COLOURS
    assert cluster.ALGORITHM_COLOURS is style.ALGORITHM_COLOURS
    # a name the chapters use in two spellings keeps one colour
    assert style.algorithm_colour("NCCL ring") == style.algorithm_colour("ring")
    assert style.algorithm_colour("double binary tree") == style.algorithm_colour("tree")
