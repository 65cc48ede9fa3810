"""collectives.viz.calculators.plan (also named by the old collectives.viz.plan): the
capstone's calculator shows cl.plan's numbers; the NVLink
re-costing of Meta's fabric-only preset; bad input."""

import json
import math
import re

import pytest

import collectives as cl
from collectives.plan import Layout, LayoutError, Transformer
from collectives.viz.calculators import plan as vp


@pytest.fixture(scope="module")
def calc():
    return vp.plan_calculator(setting={"cluster": 1, "batch": 1})


@pytest.fixture(scope="module")
def meta_small():
    return vp.DEFAULT_CLUSTERS[2].topology()


def test_default_grid_covers_every_setting(calc):
    g = calc.grid
    # 2 models x 3 clusters x 3 layouts x 2 recipes x 2 batches
    assert len(g.plans) == 2 * 3 * 3 * 2 * 2 == 72
    assert g.models == ("llama3-70b", "mixtral-8x7b") and g.recipes == ("bf16", "fp8")
    assert [c.split(" (")[0] for c in g.clusters] == [
        "TPU v5p slice 16×8×8",
        "H100 SuperPOD, 4 SUs",
        "Meta-style RoCE, 2 zones, 1:7",
    ]


@pytest.mark.parametrize(
    "key", [(0, 0, 2, 0, 1), (0, 1, 1, 1, 0), (1, 1, 0, 0, 1), (0, 2, 2, 0, 1)]
)
def test_grid_values_equal_the_planner(calc, key):
    m, c, lay, r, b = key
    choice = vp.DEFAULT_CLUSTERS[c]
    model = vp.DEFAULT_MODELS[m]
    direct = cl.plan.training_step(
        model,
        list(choice.layouts[model].values())[lay],
        choice.topology(),
        seq_len=4096,
        global_batch=list(choice.batches.values())[b],
        recipe=vp.DEFAULT_RECIPES[r],
        recompute="full",
    )
    shown = calc.data()["plans"][",".join(map(str, key))]
    assert shown["step"] == pytest.approx(direct.step_seconds, rel=1e-12)
    assert shown["exposed"] == pytest.approx(direct.exposed_seconds, rel=1e-12)
    assert shown["communication"] == pytest.approx(direct.communication_seconds, rel=1e-12)
    assert shown["memory_total"] == pytest.approx(direct.memory.total, rel=1e-12)
    assert shown["fits"] == direct.fits and shown["bottleneck"] == vp.level_label(direct.bottleneck)
    # the bars add up: classes and the step's three parts
    assert sum(s for _, s, _ in shown["classes"]) == pytest.approx(shown["communication"])
    assert shown["compute"] + shown["bubble"] + shown["exposed"] == pytest.approx(shown["step"])
    assert sum(v for _, v, _ in shown["memory"]) == pytest.approx(shown["memory_total"])


def test_fp8_halves_the_data_parallel_bytes_in_the_grid(calc):
    # SuperPOD, 70B, TP 8 x DP 128 ZeRO-1: gradients reduce-scattered in 2 bytes (BF16) or 1
    bf16 = calc.grid.plan(0, 1, 1, 0, 1).records("dp grad")[0]
    fp8 = calc.grid.plan(0, 1, 1, 1, 1).records("dp grad")[0]
    assert fp8.nbytes * 2 == bf16.nbytes
    assert fp8.seconds == pytest.approx(bf16.seconds / 2)


def test_page_block_holds_the_shown_setting(calc):
    text = calc._repr_html_()
    payload = re.search(
        r'<script type="application/json" class="cl-plan-data">(.*?)</script>', text, re.S
    ).group(1)
    data = json.loads(payload)
    assert data["setting"] == {"model": 0, "cluster": 1, "layout": 0, "recipe": 0, "batch": 1}
    assert len(data["plans"]) == 72
    # the readout printed in the page is the plan at that setting
    rows = re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', text)
    assert rows == [(k, v.replace("&", "&amp;")) for k, v in calc.readout()]
    p = calc.plan()
    assert ("step time", cl.viz.interactive.format_seconds(p.step_seconds)) in calc.readout()
    # one option per layout of this model on this cluster
    layout_select = re.search(r'data-plan-control="layout".*?</select>', text).group(0)
    assert layout_select.count("<option") == 3
    assert len(text) < 2e6


def test_choose_keeps_dependent_indices_in_range():
    small = vp.ClusterChoice(
        "one DGX",
        "dgx-h100",
        {
            "llama3-8b": {"DP 8": Layout(dp=8), "TP 8": Layout(tp=8)},
            "mixtral-8x7b": {"EP 8": Layout(ep=8)},
        },
        {"8 sequences": 8},
    )
    calc = vp.plan_calculator(
        ["llama3-8b", "mixtral-8x7b"], [small], ["bf16"], seq_len=512, setting={"layout": 1}
    )
    assert calc.setting["layout"] == 1
    calc.choose("model", 1)  # Mixtral has one layout: back to 0
    assert calc.setting["layout"] == 0 and calc.plan().records("ep")[0].group_size == 8


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda s: vp.plan_grid([], [s]), cl.CollectivesError, "at least one model"),
        (
            lambda s: vp.plan_grid(["llama3-8b"], [s], ["fp4"]),
            cl.CollectivesError,
            "recipe must be one of",
        ),
        (lambda s: vp.plan_grid(["gpt-5"], [s]), cl.CollectivesError, "unknown model 'gpt-5'"),
        (
            lambda s: vp.plan_grid(["mixtral-8x7b"], [s]),
            cl.CollectivesError,
            "one DGX names no layout for model 'mixtral-8x7b'",
        ),
        (
            lambda s: vp.plan_grid(["llama3-8b"], [{"dp": 8}]),
            cl.CollectivesError,
            "must be ClusterChoice",
        ),
        (
            lambda s: vp.plan_grid(
                ["llama3-8b"], [vp.ClusterChoice("x", "dgx-h100", s.layouts, {"none": 0})]
            ),
            cl.CollectivesError,
            "batches must map labels to positive",
        ),
        (
            lambda s: vp.plan_grid(
                ["llama3-8b"],
                [
                    vp.ClusterChoice(
                        "bad", "dgx-h100", {"llama3-8b": {"DP 4": Layout(dp=4)}}, {"8": 8}
                    )
                ],
            ),
            LayoutError,
            "bad, llama3-8b, DP 4: dp x fsdp",
        ),
        (
            lambda s: vp.plan_calculator(
                ["llama3-8b"], [s], ["bf16"], seq_len=512, setting={"layout": 5}
            ),
            cl.CollectivesError,
            "layout index 5 is outside 0..0",
        ),
        (
            lambda s: vp.plan_calculator(
                ["llama3-8b"], [s], ["bf16"], seq_len=512, setting={"speed": 0}
            ),
            cl.CollectivesError,
            "no control 'speed'",
        ),
        (
            lambda s: vp.purpose_class("all-reduce of something"),
            cl.CollectivesError,
            "no parallelism class",
        ),
    ],
)
def test_bad_input(call, error, message):
    small = vp.ClusterChoice(
        "one DGX", "dgx-h100", {"llama3-8b": {"DP 8": Layout(dp=8)}}, {"8 sequences": 8}
    )
    with pytest.raises(error, match=message):
        call(small)


def test_live_widget_follows_its_controls():
    pytest.importorskip("ipywidgets")
    m = Transformer(layers=4, hidden=512, ffn=1536, heads=8, vocab=1000, name="tiny")
    moe = Transformer(
        layers=4, hidden=512, ffn=1536, heads=8, vocab=1000, experts=8, top_k=2, name="tiny-moe"
    )
    choice = vp.ClusterChoice(
        "two DGX",
        lambda: cl.hardware.preset("dgx-h100", nodes=2),
        {
            "tiny": {"DP 16": Layout(dp=16), "TP 8 × DP 2": Layout(dp=2, tp=8)},
            "tiny-moe": {"EP 8 × DP 2": Layout(dp=2, ep=8)},
        },
        {"16": 16, "32": 32},
    )
    box = vp.plan_calculator([m, moe], [choice], ["bf16", "fp8"], seq_len=256, live=True)
    before = box.readout.value
    box.controls["layout"].value = 1
    assert box.readout.value != before and "tp activation all-gather" in box.readout.value
    box.controls["model"].value = 1  # one layout: the layout list follows
    assert [o[0] for o in box.controls["layout"].options] == ["EP 8 × DP 2"]
    assert "ep token dispatch" in box.readout.value
    assert math.isfinite(
        float(re.search(r"step time</th><td>([\d.]+)", box.readout.value).group(1))
    )


def test_the_timeline_shows_the_plans_timeline(calc):
    # SuperPOD, 70B, TP 8 x PP 4 x DP 32, ZeRO-1, 8 micro-batches: every lane and kind
    p = calc.grid.plan(0, 1, 2, 0, 1)
    tl = cl.plan.timeline(p)
    shown = vp.timeline_summary(p)
    assert [label for label, _ in shown["lanes"]] == ["compute", "TP", "PP sends", "DP"]
    assert shown["step"] == p.step_seconds
    assert max(end for _, _, end, _ in shown["spans"]) == pytest.approx(p.step_seconds)
    # joined spans keep each lane's and kind's seconds
    kinds = {"c": "compute", "b": "bubble", "h": "hidden", "e": "exposed"}
    for k, lane in enumerate(tl.lanes):
        for code, kind in kinds.items():
            drawn = sum(e - s for i, s, e, c in shown["spans"] if i == k and c == code)
            assert drawn == pytest.approx(tl.seconds(kind, lane), abs=1e-12)
    # 8 forward and 8 backward slices, the bubble between them: 16 compute bars, 1 bubble
    codes = [c for i, _, _, c in shown["spans"] if i == 0]
    assert codes.count("c") == 16 and codes.count("b") == 1
    traces = vp.timeline_traces(shown)
    assert {t["name"] for t in traces} >= {
        "compute",
        "pipeline bubble",
        "TP, exposed",
        "DP, hidden",
        "DP, exposed",
    }
    assert sum(len(t["x"]) for t in traces) == len(shown["spans"])
    assert '<div class="cl-plan-timeline" role="img"' in calc._repr_html_()
    assert len(calc.figures()) == 3


@pytest.mark.parametrize("layout", [0, 2])
def test_the_timeline_draws_its_lanes_in_the_timelines_order(layout):
    # plotly orders categories by first appearance; spans starting at t = 0 (FSDP's first
    # gather, ZeRO-1's weight all-gather) would come before TP without the category array
    box = vp.plan_calculator(setting={"cluster": 1, "batch": 1, "layout": layout})
    lanes = [label for label, _ in vp.timeline_summary(box.plan())["lanes"]]
    first_seen = list(dict.fromkeys(y for t in box.figures()[2].data for y in t.y))
    assert set(first_seen) == set(lanes) and first_seen != lanes  # the traces alone misorder
    yaxis = box.figures()[2].layout.yaxis
    assert yaxis.categoryorder == "array" and list(yaxis.categoryarray) == lanes
