"""collectives/plan/sensitivity.py: one step re-planned under other MFUs, link rates, fabric
schemes and FP8 matmuls; what-ifs that do not apply say why."""

import pytest

import collectives as cl
from collectives.plan import Layout, WhatIf
from collectives.plan.sensitivity import COLUMNS

P = cl.plan


@pytest.fixture(scope="module")
def rows():
    # Llama 3 8B, 8-way TP in each of 4 DGX H100 nodes, data parallelism over the nodes
    return {
        r["what if"]: r
        for r in P.sensitivity(
            "llama3-8b",
            Layout(dp=4, tp=8, micro_batches=2),
            "dgx-h100",
            preset_options={"nodes": 4},
            seq_len=2048,
            global_batch=16,
        )
    }


def test_every_default_what_if_has_a_row(rows):
    assert list(rows) == [w.label for w in P.WHAT_IFS]
    assert all(set(r) == set(COLUMNS) for r in rows.values())
    base = rows["as planned: peak BF16, line rates, hashed ECMP"]
    direct = P.training_step(
        "llama3-8b",
        Layout(dp=4, tp=8, micro_batches=2),
        cl.hardware.preset("dgx-h100", nodes=4),
        seq_len=2048,
        global_batch=16,
    )
    assert base["step"] == pytest.approx(direct.step_seconds)
    assert base["exposed DP/FSDP"] == pytest.approx(direct.exposed("dp"))
    assert base["note"] == ""
    # end-to-end MFU by PaLM's definition: model FLOPs (no recomputation here) over step x peak
    flops = P.model("llama3-8b").flops_per_token(2048) * 16 * 2048
    assert base["MFU"] == pytest.approx(flops / (direct.step_seconds * 32 * 9.89e14))


def test_lower_mfu_never_exposes_more_data_parallel_time(rows):
    base = rows["as planned: peak BF16, line rates, hashed ECMP"]
    for label, factor in (("matmul efficiency 0.6", 1 / 0.6), ("matmul efficiency 0.4", 1 / 0.4)):
        assert rows[label]["compute"] == pytest.approx(base["compute"] * factor)
        assert rows[label]["exposed DP/FSDP"] <= base["exposed DP/FSDP"]
        assert rows[label]["step"] > base["step"]
    # the TP collectives sit on the critical path whatever the MFU
    assert rows["matmul efficiency 0.4"]["exposed TP"] == pytest.approx(base["exposed TP"])


def test_effective_rates_slow_nvlink(rows):
    base = rows["as planned: peak BF16, line rates, hashed ECMP"]
    # NVLink 450 -> 370.8 GB/s (NCCL's SM90_NVLINK_BW x 18): every TP collective 450/370.8 x
    assert rows["effective link rates"]["exposed TP"] == pytest.approx(
        base["exposed TP"] * 450 / 370.8
    )


def test_what_ifs_that_do_not_apply_say_why():
    tpu = {
        r["what if"]: r
        for r in P.sensitivity(
            "llama3-8b",
            Layout(dp=64),
            "tpu-v5p",
            preset_options={"shape": (4, 4, 4)},
            seq_len=512,
            global_batch=64,
        )
    }
    assert "rates" in tpu["effective link rates"]["note"]  # a TPU preset has none
    assert tpu["effective link rates"]["step"] is None
    assert "no FP8 peak" in tpu["FP8 matmuls"]["note"]
    assert "no switch fabric" in tpu["adaptive routing"]["note"]
    meta = P.sensitivity(
        "llama3-8b",
        Layout(fsdp=56, tp=8),
        "meta-roce-32k",
        preset_options=dict(zones=2, racks_per_zone=14, aggregators=2),
        seq_len=512,
        global_batch=56,
        what_ifs=[WhatIf("measured", rates="effective")],
    )
    assert "line rates only" in meta[0]["note"]


def test_bad_input():
    kw = dict(seq_len=64, global_batch=8)
    with pytest.raises(cl.CollectivesError, match="unknown"):
        P.sensitivity("llama3-8b", Layout(dp=8), "dgx-h1000", **kw)
    with pytest.raises(cl.LayoutError, match="devices, but the cluster has 8"):
        P.sensitivity("llama3-8b", Layout(dp=4), "dgx-h100", **kw)
    with pytest.raises(cl.CollectivesError, match="mfu is set by each WhatIf"):
        P.sensitivity("llama3-8b", Layout(dp=8), "dgx-h100", mfu=0.5, **kw)
    with pytest.raises(cl.CollectivesError, match="non-empty sequence"):
        P.sensitivity("llama3-8b", Layout(dp=8), "dgx-h100", what_ifs=[], **kw)
    with pytest.raises(cl.CollectivesError, match="rates must be"):
        WhatIf("x", rates="fast")
    built = P.sensitivity("llama3-8b", Layout(dp=8), cl.hardware.preset("dgx-h100"), **kw)
    assert "give a preset name" in built[3]["note"] and built[0]["note"] == ""
