"""collectives.plan.timeline: a step laid out in time agrees with the plan's own totals."""

import pytest

import collectives as cl
from collectives.plan import Layout, Memory, Plan, Record
from collectives.plan.timeline import lane_of, timeline


def record(purpose, phase, hidden, count, seconds, stream="data"):
    return Record(
        purpose,
        "all_gather",
        "x",
        2,
        1.0,
        count,
        phase,
        hidden,
        "inside a node",
        "ring",
        seconds,
        stream=stream,
    )


def hand_plan(records, forward=1.0, backward=2.0, bubble=0.25, m=2):
    memory = Memory(0, 0, 0, 0, 0, 0, None)
    return Plan(
        "hand",
        tuple(records),
        forward + backward,
        forward,
        backward,
        bubble,
        memory,
        1,
        1,
        "none",
        micro_batches=m,
    )


# forward 1 s and backward 2 s in m = 2 slices: w = 0.5 s forward, 1.0 s backward
HAND = [
    record("tp activation all-gather", "forward", None, 4, 0.05),  # 0.1 s per slice
    record("fsdp weight all-gather", "forward", "forward", 2, 0.4),  # 0.4 s < 0.5: hidden
    record("fsdp grad reduce-scatter", "backward", "backward", 2, 0.6),  # 0.6 s < 1.0: hidden
    record("dp grad all-reduce", "backward", "last backward", 1, 0.7),  # 0.6 + 0.7 > 1.0
]


def spans_of(tl, lane):
    return [(s.kind, round(s.start, 9), round(s.end, 9)) for s in tl.spans if s.lane == lane]


def test_a_hand_plan_is_laid_out_slice_by_slice():
    tl = timeline(hand_plan(HAND))
    # forward slices [0, 0.5] and [0.6, 1.1], each followed by its 0.1 s of TP; the bubble;
    # backward slices [1.45, 2.45] and [2.45, 3.45], then the all-reduce's 0.3 s excess
    assert spans_of(tl, "compute") == [
        ("compute", 0.0, 0.5),
        ("compute", 0.6, 1.1),
        ("bubble", 1.2, 1.45),
        ("compute", 1.45, 2.45),
        ("compute", 2.45, 3.45),
    ]
    assert spans_of(tl, "tp") == [("exposed", 0.5, 0.6), ("exposed", 1.1, 1.2)]
    assert spans_of(tl, "fsdp") == [
        ("hidden", 0.0, 0.4),
        ("hidden", 0.6, 1.0),
        ("hidden", 1.45, 2.05),
        ("hidden", 2.45, 3.05),
    ]
    # the once-per-step all-reduce starts after the last slice's reduce-scatter, 0.4 s of
    # it fits beside the compute and 0.3 s is exposed
    assert spans_of(tl, "dp") == [("hidden", 3.05, 3.45), ("exposed", 3.45, 3.75)]
    assert tl.lanes == ("compute", "tp", "fsdp", "dp")
    # compute 3 + bubble 0.25 + exposed TP 0.2 + exposed DP 0.3
    assert tl.step_seconds == pytest.approx(3.75) and tl.exposed_seconds == pytest.approx(0.5)
    assert tl.seconds("bubble") == pytest.approx(0.25)


def test_first_forward_collectives_sit_in_the_first_slice():
    hand = [record("dp weight all-gather", "step", "first forward", 1, 0.8)]
    tl = timeline(hand_plan(hand, bubble=0.0))
    # w = 0.5 s: 0.5 hidden, 0.3 s exposed, in the first forward slice only
    assert spans_of(tl, "dp") == [("hidden", 0.0, 0.5), ("exposed", 0.5, 0.8)]
    assert tl.step_seconds == pytest.approx(3.3)


def test_two_streams_expose_their_excess_one_after_the_other():
    hand = [
        record("tp activation all-gather", "forward", "forward", 1, 0.8, stream="tp"),
        record("fsdp weight all-gather", "forward", "forward", 1, 0.7),
    ]
    tl = timeline(hand_plan(hand, backward=0.0, bubble=0.0, forward=0.5, m=1))
    # w = 0.5: "data" (FSDP) exceeds by 0.2 first, then "tp" by 0.3
    assert spans_of(tl, "fsdp") == [("hidden", 0.0, 0.5), ("exposed", 0.5, 0.7)]
    assert spans_of(tl, "tp") == [("hidden", 0.0, 0.5), ("exposed", 0.7, 1.0)]
    assert tl.exposed_seconds == pytest.approx(hand_plan(hand, 0.5, 0.0, 0.0, 1).exposed_seconds)


@pytest.fixture(scope="module")
def pod():
    return cl.hardware.preset("dgx-h100", nodes=4)


@pytest.mark.parametrize(
    "layout",
    [
        Layout(fsdp=4, tp=8),
        Layout(dp=4, tp=8, zero_stage=1, micro_batches=4),
        Layout(dp=2, pp=2, tp=8, zero_stage=1, micro_batches=4),
        Layout(dp=2, pp=2, tp=8, micro_batches=4, virtual_stages=2),
        Layout(fsdp=4, tp=8, tp_overlap=True),
        Layout(fsdp=8, ep=4),
    ],
)
def test_real_plans_end_at_their_step_time(pod, layout):
    model = "mixtral-8x7b" if layout.ep > 1 else "llama3-70b"
    p = cl.plan.training_step(model, layout, pod, seq_len=2048, global_batch=32, recompute="full")
    tl = timeline(p)
    assert tl.step_seconds == pytest.approx(p.step_seconds, rel=1e-12)
    assert tl.exposed_seconds == pytest.approx(p.exposed_seconds, rel=1e-9, abs=1e-12)
    assert tl.seconds("compute") == pytest.approx(p.compute_seconds, rel=1e-12)
    assert tl.seconds("bubble") == pytest.approx(p.bubble_seconds, rel=1e-12, abs=1e-15)
    # every collective is drawn for its whole time, hidden or exposed
    assert tl.seconds("hidden") + tl.seconds("exposed") == pytest.approx(
        p.communication_seconds, rel=1e-9
    )
    assert all(s.end >= s.start for s in tl.spans)


def test_inference_phases_lay_out_too():
    inf = cl.plan.inference(
        "llama3-70b", Layout(tp=8), "dgx-h100", batch=8, prompt_len=1024, new_tokens=16
    )
    for p in inf.phases.values():
        assert timeline(p).step_seconds == pytest.approx(p.step_seconds, rel=1e-12)


def test_errors():
    with pytest.raises(cl.CollectivesError, match="needs a cl"):
        timeline("a plan")
    with pytest.raises(cl.CollectivesError, match="no timeline lane"):
        lane_of("zz all-gather")
    with pytest.raises(cl.CollectivesError, match="belongs to no pass"):
        timeline(hand_plan([record("dp weight all-gather", "step", None, 1, 0.1)]))
