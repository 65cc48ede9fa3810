"""collectives/plan/inference.py: prefill and decode collectives, hand-derived; decode is
latency-bound where latency is modelled."""

import pytest

import collectives as cl
from collectives.plan import Layout, LayoutError

P = cl.plan
PARAMS_8B = 8_027_897_856  # tests/package/plan/test_model.py derives it by hand


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
    assert ip.decode.compute_seconds < 16 * weights_read * 1.2  # + a small KV cache
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
    slow = P.inference(
        "llama3-8b", Layout(tp=16), cl.hardware.preset("tpu-v5e", shape=(4, 4)), **kw
    )
    fast = P.inference(
        "llama3-8b",
        Layout(tp=16),
        cl.hardware.preset("tpu-v5e", shape=(4, 4), hop_latency=0.0),
        **kw,
    )
    dec, dec0 = slow.decode.collectives[0], fast.decode.collectives[0]
    pre, pre0 = slow.prefill.collectives[0], fast.prefill.collectives[0]
    assert dec.seconds > 3 * dec0.seconds  # latency dominates decode
    assert pre.seconds < 1.1 * pre0.seconds  # bandwidth dominates prefill


def test_inference_bad_input(dgx):
    with pytest.raises(LayoutError, match="batch = 3 sequences must split evenly"):
        P.inference("llama3-8b", Layout(dp=8), dgx, batch=3, prompt_len=8, new_tokens=1)
    with pytest.raises(LayoutError, match="cp = 8 must divide prompt_len = 12"):
        P.inference("llama3-8b", Layout(cp=8), dgx, batch=1, prompt_len=12, new_tokens=1)
    with pytest.raises(cl.CollectivesError, match="new_tokens must be an integer >= 1"):
        P.inference("llama3-8b", Layout(tp=8), dgx, batch=1, prompt_len=8, new_tokens=0)


def test_serving_all_reduces_unless_sequence_parallelism_is_asked(dgx):
    kw = dict(batch=4, prompt_len=1024, new_tokens=16)
    default = P.inference("llama3-8b", Layout(tp=8), dgx, **kw)  # training's default
    asked = P.inference("llama3-8b", Layout(tp=8, sequence_parallel=True), dgx, **kw)
    assert [r.collective for r in default.prefill.collectives] == ["all_reduce"]
    assert [r.collective for r in asked.prefill.collectives] == ["all_gather", "reduce_scatter"]
    # decode: one token per sequence cannot be split over the sequence
    assert [r.collective for r in asked.decode.collectives] == ["all_reduce"]


def test_mfu_slows_the_compute_bound_prefill(dgx):
    kw = dict(batch=4, prompt_len=1024, new_tokens=16)
    peak = P.inference("llama3-8b", Layout(tp=8), dgx, **kw)
    half = P.inference("llama3-8b", Layout(tp=8), dgx, mfu=0.5, **kw)
    assert half.prefill.compute_seconds == pytest.approx(2 * peak.prefill.compute_seconds)
    # decode stays bound by HBM reads
    assert half.decode.compute_seconds == peak.decode.compute_seconds
    with pytest.raises(cl.CollectivesError, match="mfu"):
        P.inference("llama3-8b", Layout(tp=8), dgx, mfu=2, **kw)
