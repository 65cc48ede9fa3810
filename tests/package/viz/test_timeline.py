"""collectives.viz.timeline and viz.plan.plot_stacked: what is drawn is the plan's timeline
and the breakdown given, bar for bar."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba

import collectives as cl
from collectives.plan import Memory, Plan, Record
from collectives.viz import plan as vp
from collectives.viz.timeline import HIDDEN_ALPHA, LANE_COLOURS, draw_timeline, lane_label


def _plan():
    # forward 1 s, backward 2 s, one micro-batch: TP 0.2 s exposed after the forward, an
    # FSDP gather of 0.4 s hidden behind it, a DP all-reduce of 2.5 s behind the backward
    # (2 s hidden, 0.5 s exposed)
    def rec(purpose, phase, hidden, seconds):
        return Record(
            purpose, "all_reduce", "x", 2, 1.0, 1, phase, hidden, "inside a node", "ring", seconds
        )

    records = (
        rec("tp activation all-reduce", "forward", None, 0.2),
        rec("fsdp weight all-gather", "forward", "forward", 0.4),
        rec("dp grad all-reduce", "backward", "last backward", 2.5),
    )
    return Plan("hand", records, 3.0, 1.0, 2.0, 0.0, Memory(0, 0, 0, 0, 0, 0, None), 1, 1, "x")


def _bars(ax):
    return [
        (
            round(p.get_x(), 9),
            round(p.get_width(), 9),
            round(p.get_y() + p.get_height() / 2),
            p.get_facecolor(),
        )
        for p in ax.patches
    ]


def test_draw_timeline_draws_one_bar_per_span_in_its_lane():
    tl = cl.plan.timeline(_plan())
    ax = draw_timeline(tl)
    grey, blue = to_rgba(LANE_COLOURS["compute"]), to_rgba(LANE_COLOURS["tp"])
    fsdp, dp = LANE_COLOURS["fsdp"], LANE_COLOURS["dp"]
    # lanes top to bottom: compute 0, tp 1, fsdp 2, dp 3
    assert sorted(_bars(ax)) == sorted(
        [
            (0.0, 1.0, 0, grey),
            (1.2, 2.0, 0, grey),  # forward, backward
            (1.0, 0.2, 1, blue),  # TP, after the forward
            (0.0, 0.4, 2, to_rgba(fsdp, HIDDEN_ALPHA)),  # hidden behind it
            (1.2, 2.0, 3, to_rgba(dp, HIDDEN_ALPHA)),
            (3.2, 0.5, 3, to_rgba(dp)),
        ]
    )
    assert [t.get_text() for t in ax.get_yticklabels()] == ["compute", "TP", "FSDP", "DP"]
    # the step ends at compute 3 + exposed 0.2 + 0.5: the dashed line
    assert ax.lines[0].get_xdata()[0] == pytest.approx(3.7)
    assert ax.get_title() == "one step: 3.7 s"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["compute", "pale: hidden", "solid: exposed"]  # no bubble here
    # the pale/solid pair is neutral: no lane's colour, so it names no one lane
    pale, solid = ax.get_legend().legend_handles[1:]
    assert to_rgba(pale.get_facecolor())[:3] == to_rgba(solid.get_facecolor())[:3]
    assert pale.get_alpha() == HIDDEN_ALPHA and solid.get_alpha() in (None, 1)
    assert all(to_rgba(solid.get_facecolor())[:3] != to_rgba(c)[:3] for c in LANE_COLOURS.values())
    plt.close("all")


def test_draw_timeline_shares_a_scale_and_rejects_bad_input():
    tl = cl.plan.timeline(_plan())
    ax = draw_timeline(tl, xmax=10.0, legend=False, title="")
    assert ax.get_xlim()[1] == pytest.approx(10.2) and ax.get_legend() is None
    with pytest.raises(cl.CollectivesError, match=r"needs a cl\.plan\.timeline"):
        draw_timeline(_plan())
    with pytest.raises(cl.CollectivesError, match="xmax must be"):
        draw_timeline(tl, xmax=0)
    with pytest.raises(cl.CollectivesError, match="no timeline lane"):
        lane_label("zz")
    plt.close("all")


def test_plot_stacked_draws_each_part_in_order():
    rows = {"a": {"compute": 2.0, "exposed": 1.0}, "b": {"compute": 3.0}}
    parts = [("compute", "compute", "#777777"), ("exposed", "exposed", "#D55E00")]
    ax = vp.plot_stacked(rows, parts, limit=4.0, limit_label="HBM")
    assert _bars(ax) == [
        (0.0, 2.0, 0, to_rgba("#777777")),
        (2.0, 1.0, 0, to_rgba("#D55E00")),
        (0.0, 3.0, 1, to_rgba("#777777")),
    ]
    # each row's label above its bar, its total at its end, then the limit's name
    assert [t.get_text() for t in ax.texts] == ["a", " 3.00", "b", " 3.00", " HBM"]
    assert [t.get_position() for t in ax.texts[::2][:2]] == [(0, -0.3), (0, 0.7)]
    assert [t.get_text() for t in ax.figure.legends[-1].get_texts()] == ["compute", "exposed"]
    assert ax.lines[0].get_xdata()[0] == 4.0
    # the legend names the parts drawn, in the order of parts
    ax = vp.plot_stacked({"a": {"exposed": 1.0}}, parts)
    assert [t.get_text() for t in ax.figure.legends[-1].get_texts()] == ["exposed"]
    # a part too thin to see (under half a percent of the axis) is drawn but not named;
    # every total has the same decimals: 0.40 beside 2.32, not 0.402
    thin = {"a": {"compute": 2.32, "exposed": 0.0001}, "b": {"compute": 0.402}}
    ax = vp.plot_stacked(thin, parts)
    assert [t.get_text() for t in ax.figure.legends[-1].get_texts()] == ["compute"]
    assert [t.get_text() for t in ax.texts] == ["a", " 2.32", "b", " 0.40"]
    # memory-sized totals: three figures of the largest, a decimal for those under 10
    ax = vp.plot_stacked({"a": {"compute": 252.1}, "b": {"compute": 8.74}}, parts)
    assert [t.get_text() for t in ax.texts] == ["a", " 252.1", "b", " 8.7"]
    with pytest.raises(cl.CollectivesError, match="not in parts"):
        vp.plot_stacked({"a": {"other": 1.0}}, parts)
    with pytest.raises(cl.CollectivesError, match="at least one row"):
        vp.plot_stacked({}, parts)
    plt.close("all")
