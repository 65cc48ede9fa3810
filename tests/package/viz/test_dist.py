"""collectives.viz.dist: a sweep's lines and modelled curves, and the processes of a step
with one arrow per message, drawn from the rank programs."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyArrowPatch

import collectives as cl
from collectives.dist import SweepResult, SweepRow
from collectives.dist.programs import messages
from collectives.viz.animation import frame_description, frame_png
from collectives.viz.dist import MESSAGE_COLOURS, draw_processes, plot_sweep, process_stepper


def _sweep():
    rows = (
        SweepRow(4096, 1024, "float32", "sum", "ring", 100.0, 0.04, 0.06, 0, 90.0, 130.0),
        SweepRow(8192, 2048, "float32", "sum", "ring", 150.0, 0.05, 0.08, 0, 140.0, 160.0),
        SweepRow(4096, 1024, "float32", "sum", "all_reduce", 80.0, 0.05, 0.08, 0),
        SweepRow(8192, 2048, "float32", "sum", "all_reduce", 90.0, 0.09, 0.14, 0),
    )
    return SweepResult("all_reduce", 4, 4, "gloo", 2, 1, rows, repeats=3)


def test_plot_sweep_draws_measured_lines_and_models():
    ax = plot_sweep(_sweep(), models={"model": ([4096, 6000, 8192], [0.05, 0.06, 0.07])})
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["ring"].get_ydata()) == [0.06, 0.08]  # busbw, by size
    assert list(lines["all_reduce"].get_ydata()) == [0.08, 0.14]
    assert list(lines["model"].get_xdata()) == [4096, 6000, 8192]
    assert lines["model"].get_linestyle() == "--"
    plt.close("all")


def test_plot_sweep_time_has_the_repeats_range():
    ax = plot_sweep(_sweep(), metric="time")
    ring = ax.containers[0]  # the errorbar of the first impl
    assert list(ring.lines[0].get_ydata()) == [0.1, 0.15]  # 100 and 150 us, in ms
    segments = ring.lines[2][0].get_segments()  # from the fastest to the slowest
    assert [tuple(np.round(s[:, 1], 9)) for s in segments] == [(0.09, 0.13), (0.14, 0.16)]
    # no range measured: a bar of no length
    flat = ax.containers[1].lines[2][0].get_segments()
    assert [tuple(np.round(s[:, 1], 9)) for s in flat] == [(0.08, 0.08), (0.09, 0.09)]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "time (ms)"
    with pytest.raises(cl.CollectivesError, match="metric must be"):
        plot_sweep(_sweep(), metric="latency")
    with pytest.raises(cl.CollectivesError, match="as many values as sizes"):
        plot_sweep(_sweep(), models={"m": ([1, 2], [1.0])})
    plt.close("all")


def test_messages_pack_each_peer_s_chunks():
    ring = cl.algorithms.ring_all_reduce(4)
    # step 0 of the ring all-reduce: rank r sends chunk r-1 to r+1, which adds it
    assert [(m.src, m.dst, m.src_chunks, m.reduce) for m in messages(ring, 0)] == [
        (0, 1, (3,), (True,)),
        (1, 2, (0,), (True,)),
        (2, 3, (1,), (True,)),
        (3, 0, (2,), (True,)),
    ]
    # step 3 starts the all-gather half: copies
    assert all(m.reduce == (False,) for m in messages(ring, 3))
    with pytest.raises(cl.ScheduleError, match=r"step must be one of 0\.\.5"):
        messages(ring, 6)


def test_draw_processes_draws_one_arrow_per_message():
    ring = cl.algorithms.ring_all_reduce(4)
    ax = draw_processes(ring, 0)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 4
    assert all(a.get_edgecolor() == to_rgba(MESSAGE_COLOURS["reduce"]) for a in arrows)
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t.startswith("rank")] == [f"rank {r}" for r in range(4)]
    assert sorted(t for t in texts if t.startswith("chunk")) == [f"chunk {c} +" for c in range(4)]
    assert ax.get_title() == "step 0: 4 messages"
    ax = draw_processes(ring, 3)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert all(a.get_edgecolor() == to_rgba(MESSAGE_COLOURS["copy"]) for a in arrows)
    ax = draw_processes(ring)  # the processes alone
    assert not [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    # over groups: messages stay inside each group of the mesh axis
    tp = cl.Mesh({"dp": 2, "tp": 2}).collective(cl.algorithms.ring_all_reduce(2), "tp")
    assert {(m.src, m.dst) for m in messages(tp, 0)} == {(0, 1), (1, 0), (2, 3), (3, 2)}
    ax = draw_processes(tp, 0)
    edges = [
        np.round(p.get_edgecolor(), 3).tolist()
        for p in ax.patches
        if not isinstance(p, FancyArrowPatch)
    ]
    assert edges[0] == edges[1] != edges[2] == edges[3]  # one outline per group
    plt.close("all")


def test_process_stepper_has_a_tab_per_chosen_step():
    tab = process_stepper(cl.algorithms.ring_all_reduce(4), steps=[0, 3], dpi=30)
    assert list(tab.titles) == ["start", "step 0", "step 3"]
    frames = [frame_png(child) for child in tab.children]
    assert len(set(frames)) == 3  # each frame differs
    # ring all-reduce on 4 ranks, step 3 (the first of the all-gather half): rank r sends
    # to r + 1 the chunk r it has just completed, overwriting (no "adds")
    step3 = frame_description(tab.children[2])
    for r in range(4):
        assert f"rank {r} sends chunk {r} to rank {(r + 1) % 4}" in step3
    plt.close("all")


def test_draw_failure_draws_each_rank_s_step():
    from collectives.viz.dist import draw_failure

    ring = cl.algorithms.ring_all_reduce(4)
    err = cl.DistError(
        "rank 2 failed",
        rank=2,
        exception="ProcessDied",
        reached={
            0: (0, 4, "running"),
            1: (0, 3, "running"),
            2: (0, 3, "running"),
            3: (0, -1, "starting"),
        },
    )
    ax = draw_failure(err, ring)
    assert [p.get_width() for p in ax.patches] == [4, 3, 3, 0]  # steps finished
    assert [p.get_facecolor() for p in ax.patches][2] == to_rgba("#D55E00")  # the named rank
    assert [t.get_text() for t in ax.texts] == [
        "in step 4",
        "in step 3",
        "in step 3: ProcessDied",
        "starting",
    ]
    done = cl.DistError("x", rank=0, reached={0: (0, 5, "finishing"), 1: (0, 5, "running")})
    ax = draw_failure(done, ring)
    assert ax.patches[0].get_width() == 6 and ax.texts[1].get_text() == "in step 5"
    with pytest.raises(cl.CollectivesError, match="needs a DistError"):
        draw_failure(cl.DistError("no board"), ring)
    plt.close("all")
