"""collectives/plan/report.py: a plan's totals, its table, and its memory flag."""

import pytest

import collectives as cl
from collectives.plan import Layout

P = cl.plan


@pytest.fixture(scope="module")
def dgx():
    return cl.hardware.preset("dgx-h100")          # one node, 8 GPUs


@pytest.fixture(scope="module")
def two_nodes():
    return cl.hardware.preset("dgx-h100", nodes=2)


def test_memory_over_hbm_is_a_flag_not_an_error(dgx):
    p = P.training_step("llama3-70b", Layout(dp=8), dgx, seq_len=512, global_batch=8)
    assert p.fits is False and p.memory_per_device > 80e9
    assert "DOES NOT FIT" in p.table()


def test_report_totals_and_table(two_nodes):
    p = P.training_step("mixtral-8x7b", Layout(ep=8, pp=2, micro_batches=4), two_nodes,
                        seq_len=1024, global_batch=32)
    assert p.communication_seconds == pytest.approx(sum(r.seconds * r.count
                                                        for r in p.collectives))
    assert p.compute_to_communication == pytest.approx(p.compute_seconds /
                                                       p.communication_seconds)
    assert p.step_seconds == pytest.approx(p.compute_seconds + p.bubble_seconds
                                           + p.exposed_seconds)
    assert p.bottleneck in p.level_seconds()
    text = p._repr_markdown_()
    assert text.count("\n| ") == len(p.collectives) + 1 and "ep token dispatch" in text
