"""collectives.plan.inference: prefill and decode collectives, hand-derived; decode is
latency-bound where latency is modelled; plus the planner's other options (recompute, ZeRO
2, concurrency, multislice TPUs)."""

import math

import pytest

import collectives as cl
from collectives.plan import Layout, LayoutError

P = cl.plan
PARAMS_8B = 8_027_897_856          # tests/package/plan/test_plan.py derives it by hand


@pytest.fixture(scope="module")
def dgx():
    return cl.hardware.preset("dgx-h100")


def test_prefill_and_decode_tensor_parallel_all_reduces(dgx):
    ip = P.inference("llama3-8b", Layout(tp=8), dgx, batch=4, prompt_len=1024, new_tokens=16)
    (pre,) = ip.prefill.collectives
    (dec,) = ip.decode.collectives
    # prefill: 2 all-reduces per layer of the whole prompt's activation, b x T x h bf16
    assert (pre.collective, pre.count, pre.nbytes) == ("all_reduce", 2 * 32, 4 * 1024 * 4096 * 2)
    # decode: 2 per layer per generated token, one token per sequence
    assert (dec.count, dec.nbytes) == (2 * 32 * 16, 4 * 4096 * 2)
    assert ip.prefill.tokens == 4 * 1024 and ip.decode.tokens == 4 * 16
    assert ip.seconds_per_token == pytest.approx(ip.decode.step_seconds / 16)
    assert ip.time_to_first_token == ip.prefill.step_seconds
    assert set(ip.phases) == {"prefill", "decode"}


def test_decode_is_memory_bound_and_prefill_compute_bound(dgx):
    ip = P.inference("llama3-8b", Layout(tp=8), dgx, batch=4, prompt_len=1024, new_tokens=16)
    # each decode step reads the device's weights (8.03e9 x 2 bytes / 8) from HBM at 3.35 TB/s
    weights_read = PARAMS_8B * 2 / 8 / 3.35e12
    assert ip.decode.compute_seconds >= 16 * weights_read
    assert ip.decode.compute_seconds < 16 * weights_read * 1.2       # + a small KV cache
    assert "memory-bound" in ip.decode.notes[0]
    # prefill: 2 P + attention FLOPs per token (QK^T and AV, 2 x 2 x context x 4096 per
    # layer, context 512 on average under the causal mask) at 989 TFLOP/s over 8 GPUs
    flops = 4 * 1024 * (2 * PARAMS_8B + 4 * 32 * 4096 * 512)
    assert ip.prefill.compute_seconds == pytest.approx(flops / 8 / 9.89e14)
    assert "compute-bound" in ip.prefill.notes[0]
    # KV cache: 2 (K, V) x 32 layers x 1 KV head of 128 per GPU x 1040 tokens x 4 x 2 bytes
    assert ip.decode.memory.kv_cache == 2 * 32 * 128 * 1040 * 4 * 2


def test_decode_all_reduces_are_latency_bound_on_a_tpu():
    """1 us per ICI hop (The Scaling Book): decode's 32 kB all-reduces are mostly latency,
    prefill's are mostly bandwidth."""
    kw = dict(batch=4, prompt_len=1024, new_tokens=8)
    slow = P.inference("llama3-8b", Layout(tp=16), cl.hardware.preset("tpu-v5e", shape=(4, 4)),
                       **kw)
    fast = P.inference("llama3-8b", Layout(tp=16), cl.hardware.preset(
        "tpu-v5e", shape=(4, 4), hop_latency=0.0), **kw)
    dec, dec0 = slow.decode.collectives[0], fast.decode.collectives[0]
    pre, pre0 = slow.prefill.collectives[0], fast.prefill.collectives[0]
    assert dec.seconds > 3 * dec0.seconds                     # latency dominates decode
    assert pre.seconds < 1.1 * pre0.seconds                   # bandwidth dominates prefill


def test_inference_bad_input(dgx):
    with pytest.raises(LayoutError, match="batch = 3 sequences must split evenly"):
        P.inference("llama3-8b", Layout(dp=8), dgx, batch=3, prompt_len=8, new_tokens=1)
    with pytest.raises(LayoutError, match="cp = 8 must divide prompt_len = 12"):
        P.inference("llama3-8b", Layout(cp=8), dgx, batch=1, prompt_len=12, new_tokens=1)
    with pytest.raises(cl.CollectivesError, match="new_tokens must be an integer >= 1"):
        P.inference("llama3-8b", Layout(tp=8), dgx, batch=1, prompt_len=8, new_tokens=0)


def test_full_recomputation(dgx):
    kw = dict(seq_len=2048, global_batch=2)
    base = P.training_step("llama3-8b", Layout(tp=8), dgx, **kw)
    full = P.training_step("llama3-8b", Layout(tp=8), dgx, recompute="full", **kw)
    # one more forward: compute x 4/3, and 2 more all-reduces per layer
    assert full.compute_seconds == pytest.approx(base.compute_seconds * 4 / 3)
    assert sum(r.count for r in full.records("tp")) == 6 * 32
    # keeps the block input only: 2 s b h bytes per layer (2048 x 2 x 4096 x 2 x 32 layers)
    assert full.memory.activations == 2 * 2048 * 2 * 4096 * 32
    assert base.memory.activations == 2048 * 2 * 4096 * (10 + 24 / 8) * 32
    with pytest.raises(cl.CollectivesError, match="recompute must be"):
        P.training_step("llama3-8b", Layout(tp=8), dgx, recompute="some", **kw)


def test_zero2_reduces_every_micro_batch(dgx):
    kw = dict(seq_len=256, global_batch=32)
    z1 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=1, micro_batches=4), dgx, **kw)
    z2 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=2, micro_batches=4), dgx, **kw)
    assert z1.records("grad reduce-scatter")[0].count == 1
    assert z2.records("grad reduce-scatter")[0].count == 4
    # ZeRO 2 also shards the FP32 gradients: 4 bytes / 8 ranks
    assert z2.memory.grads == pytest.approx(PARAMS_8B * 4 / 8)
    assert z1.memory.grads == pytest.approx(PARAMS_8B * 4)


def test_concurrent_collectives_share_the_nics():
    # DP along the rails and PP across nodes both leave through each GPU's NIC
    pod = cl.hardware.preset("dgx-h100", nodes=4)
    p = P.training_step("llama3-8b", Layout(dp=2, pp=2, tp=8, micro_batches=2), pod,
                        seq_len=4096, global_batch=4)
    together = p.concurrent("dp grad", "pp gradient")
    assert together.names == ("pp gradient send (backward)", "dp grad all-reduce (backward)")
    assert len(together.components) == 1                     # they share links
    alone = [t.seconds for t in together.alone]
    assert together.seconds >= max(alone)
    apart = p.concurrent("tp activation", "dp grad")          # NVLink vs the rails
    assert len(apart.components) == 2 and apart.slowdown == pytest.approx(1.0)
    assert len(p.concurrent().names) == 3                     # every backward kind
    with pytest.raises(cl.CollectivesError, match="no collective of this plan"):
        p.concurrent("ep token")


def test_multislice_gradient_all_reduce_crosses_dcn():
    pods = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4), slices=2)
    p = P.training_step("llama3-8b", Layout(dp=128), pods, seq_len=512, global_batch=128)
    (r,) = p.collectives
    assert r.level == "dcn" and r.algorithm == "multislice_all_reduce"
    # torus phases inside each slice, then a 2-rank ring over DCN on 1/64 of the buffer
    # at 6.25e9 B/s per chip: 2 x 1/2 x S / 64 / 6.25e9 is the DCN part
    S = PARAMS_8B * 2
    assert r.level_seconds["dcn"] == pytest.approx(S / 64 / 6.25e9)
    assert set(r.level_seconds) == {"ici", "dcn"}
    flat = dict(P.Coster(pods, Layout(dp=128).mesh()).cost("all_reduce", ("dp",), S)
                .candidates)
    assert flat["multislice_all_reduce"] < flat["two_level_ring_all_reduce"]


def test_moe_on_a_tpu_slice_and_deepseek_on_a_superpod():
    p = P.training_step("mixtral-8x7b", Layout(dp=8, ep=8), cl.hardware.preset(
        "tpu-v5p", shape=(4, 4, 4)), seq_len=1024, global_batch=64)
    assert {r.level for r in p.collectives} == {"ici"}
    assert [r.group_size for r in p.records("dp grad")] == [64, 8]   # dense, experts
    ds = P.training_step("deepseek-v3", Layout(dp=2, ep=64, pp=8, micro_batches=4,
                                               uneven_stages=True),
                         cl.hardware.preset("superpod-h100"), seq_len=4096, global_batch=512)
    a2a = ds.records("all-to-all")
    # ep innermost-but-one: 64 ranks over 8 nodes of the rails; 8 of 58 MoE layers per stage
    assert {r.group_size for r in a2a} == {64} and {r.count for r in a2a} == {8 * 4}
    assert {r.level for r in a2a} == {"across nodes"}
    assert ds.records("dp grad")[0].nbytes == pytest.approx(
        P.model("deepseek-v3").dense_parameters() / 8 * 2)


def test_oversubscribed_aggregation_slows_cross_zone_data_parallelism():
    """Meta's RoCE cluster: zones joined 1:7 (Llama 3 paper). A DP group of 2 with one
    member per zone sends everything through the aggregation tier."""
    m = P.Transformer(layers=2, hidden=1024, ffn=4096, heads=8, vocab=1000)
    seconds = {}
    for ratio in (7, 1):
        meta = cl.hardware.preset("meta-roce-32k", zones=2, oversubscription=ratio)
        p = P.training_step(m, Layout(dp=2, fsdp=4032), meta, seq_len=256,
                            global_batch=8064)
        (r,) = p.records("dp grad")
        assert r.level == "across pods" and r.group_size == 2
        assert [x.level for x in p.records("fsdp")] == ["across nodes"] * 3
        seconds[ratio] = (r.seconds, r.bottleneck_level)
    assert seconds[7][1] == "core"                        # the CTSW-ATSW uplinks
    assert seconds[7][0] > 2 * seconds[1][0]
