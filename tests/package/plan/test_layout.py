"""collectives/plan/layout.py: sequence parallelism on by default with tp > 1, the layouts the
frameworks refuse (TP overlap without sequence parallelism,
interleaving that does not divide), the bubble fraction."""

import pytest

import collectives as cl
from collectives.plan import Layout, LayoutError
from collectives.plan.layout import ZERO2_WITH_PP

P = cl.plan


def test_sequence_parallelism_is_on_by_default_with_tensor_parallelism():
    # Megatron-LM's parallelism guide: "Always enable when using TP"; arguments.py turns it
    # off when tp = 1
    assert Layout(tp=8).sequence_parallel is True
    assert Layout(tp=8).sequence_parallel_default is True
    assert Layout(dp=8).sequence_parallel is False
    assert Layout(tp=1, sequence_parallel=True).sequence_parallel is False
    plain = Layout(tp=8, sequence_parallel=False)
    assert plain.sequence_parallel is False and plain.sequence_parallel_default is False
    assert Layout(tp=4, sequence_parallel=True).sequence_parallel_default is False
    # the same layout whether the default was taken or given
    assert Layout(tp=8) == Layout(tp=8, sequence_parallel=True)
    assert "sequence parallel" in repr(Layout(tp=8))


def test_zero2_with_pipeline_parallelism_is_planned_with_its_frameworks_named():
    # DeepSpeed's pipeline engine refuses it; Llama 3 and torchtitan run sharded gradients
    # with pipelines: the layout is accepted and its plans carry the note naming both
    layout = Layout(dp=4, pp=2, zero_stage=2)
    assert (layout.zero_stage, layout.pp) == (2, 2)
    assert "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism" in ZERO2_WITH_PP
    assert "engine.py" in ZERO2_WITH_PP and "torchtitan" in ZERO2_WITH_PP
    assert Layout(dp=4, pp=2, zero_stage=1).zero_stage == 1
    assert Layout(dp=4, zero_stage=2, micro_batches=4).zero_stage == 2


def test_tp_overlap_needs_sequence_parallelism():
    assert Layout(tp=8, tp_overlap=True).tp_overlap
    with pytest.raises(
        LayoutError,
        match="Tensor parallel communication/GEMM overlap can "
        "happen only when sequence parallelism",
    ):
        Layout(tp=8, sequence_parallel=False, tp_overlap=True)
    with pytest.raises(LayoutError, match="tp_overlap needs sequence parallelism"):
        Layout(dp=8, tp_overlap=True)


def test_interleaved_bubble_and_its_conditions():
    # (pp - 1) / (v m): 3 / (1 x 8) for 1F1B, 3 / (2 x 8) interleaved over 2 chunks
    assert Layout(pp=4, micro_batches=8).bubble_fraction == 3 / 8
    assert Layout(pp=4, micro_batches=8, virtual_stages=2).bubble_fraction == 3 / 16
    assert Layout(dp=8).bubble_fraction == 0
    with pytest.raises(LayoutError, match="micro_batches a multiple of pp = 4, got 6"):
        Layout(pp=4, micro_batches=6, virtual_stages=2)
    with pytest.raises(LayoutError, match="virtual_stages = 2 needs pipeline parallelism"):
        Layout(dp=8, virtual_stages=2)
    m = P.Transformer(layers=12, hidden=512, ffn=1024, heads=8)
    with pytest.raises(LayoutError, match="virtual_stages = 4 must divide the 6 blocks"):
        Layout(pp=2, micro_batches=2, virtual_stages=4).check(m, 2)
    Layout(pp=2, micro_batches=2, virtual_stages=3).check(m, 2)  # 6 blocks, 3 chunks
    assert "interleaved x3" in repr(Layout(pp=2, micro_batches=2, virtual_stages=3))


def test_model_parallel_factor():
    assert Layout(dp=4, tp=8, pp=4).model_parallel == 32
    assert Layout(fsdp=16).model_parallel == 1
