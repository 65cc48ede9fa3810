"""collectives/plan/report.py: a plan's totals, its table, and its memory flag."""

import pytest

import collectives as cl
from collectives.plan import Layout

P = cl.plan


@pytest.fixture(scope="module")
def dgx():
    return cl.hardware.preset("dgx-h100")  # one node, 8 GPUs


@pytest.fixture(scope="module")
def two_nodes():
    return cl.hardware.preset("dgx-h100", nodes=2)


def test_memory_over_hbm_is_a_flag_not_an_error(dgx):
    p = P.training_step("llama3-70b", Layout(dp=8), dgx, seq_len=512, global_batch=8)
    assert p.fits is False and p.memory_per_device > 80e9
    assert "DOES NOT FIT" in p.table()


def test_report_totals_and_table(two_nodes):
    p = P.training_step(
        "mixtral-8x7b",
        Layout(ep=8, pp=2, micro_batches=4),
        two_nodes,
        seq_len=1024,
        global_batch=32,
    )
    assert p.communication_seconds == pytest.approx(sum(r.seconds * r.count for r in p.collectives))
    assert p.compute_to_communication == pytest.approx(p.compute_seconds / p.communication_seconds)
    assert p.step_seconds == pytest.approx(p.compute_seconds + p.bubble_seconds + p.exposed_seconds)
    assert p.bottleneck in p.level_seconds()
    text = p._repr_markdown_()
    assert text.count("\n| ") == len(p.collectives) + 1 and "ep token dispatch" in text


# ---- the overlap windows ---------------------------------------------------------------------


def _record(purpose, count, seconds, phase, behind, stream="data"):
    return P.Record(
        purpose,
        "all_gather",
        "x",
        8,
        1e6,
        count,
        phase,
        behind,
        "across nodes",
        "ring",
        seconds,
        stream=stream,
    )


def _plan(records, micro, forward=1.0, backward=2.0):
    memory = P.Memory(0, 0, 0, 0, 0, 0, None)
    return P.Plan(
        "hand-made",
        tuple(records),
        forward + backward,
        forward,
        backward,
        0.0,
        memory,
        1,
        8,
        "none",
        micro_batches=micro,
    )


def test_once_per_step_reductions_hide_behind_the_last_micro_batch_only():
    records = [
        _record("fsdp grad reduce-scatter", 4, 0.2, "backward", "backward"),  # per micro-batch
        _record("dp grad reduce-scatter", 1, 0.45, "backward", "last backward"),
        _record("dp weight all-gather", 1, 0.3, "step", "first forward"),
        _record("tp activation all-gather", 10, 0.01, "forward", None),
    ]
    four = _plan(records, micro=4)
    # 4 micro-batches: slices of 1/4 s (forward) and 1/2 s (backward).
    # backward: 3 x max(0, 0.2 - 0.5) + max(0, 0.2 + 0.45 - 0.5) = 0.15
    # forward: 4 x nothing per slice, then the first slice holds the 0.3 s gather: 0.05
    # TP: 10 x 0.01 on the critical path
    # (alone, the 0.45 s reduce-scatter fits its 0.5 s slice: exposure counts the records
    # chosen, "grad" choosing both)
    assert four.exposed("grad") == pytest.approx(0.15) and four.exposed("dp grad") == 0
    assert four.exposed("dp weight") == pytest.approx(0.05)
    assert four.exposed("fsdp") == 0
    assert four.exposed("tp") == pytest.approx(0.1)
    assert four.exposed() == pytest.approx(0.15 + 0.05 + 0.1)
    assert four.window(records[1]) == 0.5 and four.window(records[3]) == 0
    # one micro-batch: the whole pass hides everything (0.8 + 0.45 < 2, 0.3 < 1)
    one = _plan(records, micro=1)
    assert one.exposed() == pytest.approx(0.1) and one.window(records[1]) == 2.0


def test_fsdp_per_micro_batch_collectives_keep_the_whole_pass():
    # 8 micro-batches of 0.3 s of gradient reduce-scatter against 2 s of backward: per slice
    # 0.3 - 0.25 = 0.05 exposed, 8 x 0.05 = 0.4 = 2.4 - 2 (the pass-wide rule)
    plan = _plan([_record("fsdp grad reduce-scatter", 8, 0.3, "backward", "backward")], micro=8)
    assert plan.exposed() == pytest.approx(0.4)


def test_overlapped_tensor_parallelism_is_its_own_stream():
    # TP all-gathers overlapped with their GEMMs (stream "tp", on NVLink) and FSDP gathers
    # (stream "data") each hide behind the same forward: 0.8 + 0.8 > 1 s would expose 0.6
    # if they competed, but each alone fits
    records = [
        _record("tp activation all-gather", 8, 0.1, "forward", "forward", "tp"),
        _record("fsdp weight all-gather", 8, 0.1, "forward", "forward"),
    ]
    plan = _plan(records, micro=1)
    assert plan.exposed() == 0
    slow = _plan(records, micro=1, forward=0.5)
    assert slow.exposed("tp") == pytest.approx(0.3) and slow.exposed() == pytest.approx(0.6)


def test_logits_are_part_of_the_memory():
    mem = P.Memory(1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 20.0, logits=6.0)
    assert mem.total == 21.0 and mem.fits is False
    assert mem.breakdown()["logits"] == 6.0


def test_bubble_with_communication_counts_the_critical_path():
    from dataclasses import replace

    records = [
        _record("dp grad reduce-scatter", 1, 0.45, "backward", "last backward"),  # hidden
        _record("tp activation all-gather", 10, 0.01, "forward", None),  # on path
        _record("pp activation send", 4, 0.05, "forward", None),  # on path
    ]
    # 3 s of compute with a bubble of 3/4 of it (p = 4, m = 4): 2.25 s; Narayanan et al.'s
    # t_f + t_b also holds the 0.1 s of TP and the 0.2 s of sends: 3/4 x 3.3 = 2.475 s
    p = replace(_plan(records, micro=4), bubble_seconds=2.25)
    assert p.bubble_with_communication_seconds == pytest.approx(2.475)
    assert p.step_seconds == pytest.approx(3 + 2.25 + p.exposed_seconds)  # compute only
    assert _plan(records, micro=4).bubble_with_communication_seconds == 0
