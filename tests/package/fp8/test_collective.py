"""collectives/fp8/collective.py: the FP8 all-reduce (FP8-LM's pre-, post- and auto-scaling,
MS-AMP's 1/sqrt(N) and power-of-two scale, over any all-reduce Schedule) and its cost: golden
values by hand, a reference ring loop written here, schedule independence, the FP8-LM finding,
MS-AMP's hardware mode, negative tests. ml_dtypes and numpy's float16 are oracles only
(bfloat16, half-precision and FP8 rounding in the reference loop)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
import collectives.fp8 as fp8
from collectives.errors import CollectivesError
from collectives.fp8 import collective as C

from garbage import check_every_bad_argument

ml_dtypes = pytest.importorskip("ml_dtypes")

ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
ML_ANY = {**ML, "e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "e5m2fnuz": ml_dtypes.float8_e5m2fnuz}


# ----------------------------------------------------------------------------- rounding helpers

@settings(max_examples=300, deadline=None)
@given(bits=st.integers(0, 2**32 - 1))
def test_bf16_rounding_is_bit_exact(bits):
    x = np.array([bits], np.uint32).view(np.float32)
    ours = C._round_bf16(x)
    ref = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    if np.isnan(ref[0]):
        assert np.isnan(ours[0])
    else:
        assert ours.view(np.uint32)[0] == ref.view(np.uint32)[0], hex(bits)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"])
@settings(max_examples=100, deadline=None)
@given(v=st.one_of(st.floats(-1e6, 1e6), st.sampled_from([448.0, 464.0, 464.0001, 480.0,
                                                          57344.0, 61439.0, 61440.0,
                                                          240.0, 248.0, 248.5])))
def test_overflow_test_matches_the_non_saturating_cast(fmt, v):
    f = fp8.FORMATS[fmt]
    beyond = ~np.isfinite(fp8.decode(fp8.encode(v, fmt, saturate=False), fmt))
    assert bool(C._overflows(np.float64(v), f)) == bool(beyond)
    q, clipped = C._round_fp8(np.array([v]), f)
    assert clipped[0] == beyond and np.isfinite(q[0])


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"])
def test_half_precision_add_never_changes_an_fp8_sum(fmt):
    # The FP8 FuncSum of NCCL 2.30 (Hopper) and of the MSCCL executor MS-AMP builds against
    # is __nv_fp8_e4m3(__hadd(__half(x), __half(y))): the sum rounded to IEEE half (numpy's
    # float16 here, an independent correctly rounded cast; beyond 65504 it is Inf, which
    # __NV_SATFINITE narrows to the FP8 maximum) and then to FP8. For every pair of finite
    # FP8 values that equals the exact sum rounded once, so accumulate="fp8" models it.
    v = fp8.decode(np.arange(256, dtype=np.uint8), fmt).astype(np.float64)
    v = v[np.isfinite(v)]
    a, b = np.meshgrid(v, v)
    exact = a + b                                       # exact: both on a 2^-17..2^16 grid
    with np.errstate(over="ignore"):
        half = exact.astype(np.float16).astype(np.float64)
    half = np.where(np.isinf(half), np.copysign(65504.0, half), half)
    m = fp8.max_value(fmt)
    via_half = np.clip(half, -m, m).astype(ML_ANY[fmt]).astype(np.float64)
    once = np.clip(exact, -m, m).astype(ML_ANY[fmt]).astype(np.float64)
    assert exact.size == v.size ** 2 and np.array_equal(via_half, once)
    # and the package's own rounding of a hop's sum agrees with ml_dtypes' cast
    f = fp8.FORMATS[fmt]
    np.testing.assert_array_equal(C._round_fp8(exact, f)[0], once)


def test_power_of_two_scale_by_hand():
    # MS-AMP's compute_scaling_factor: 2^floor(log2(448 / amax)), margin 0. amax 3 -> 448/3 =
    # 149.33 -> 128; amax 0.5 -> 896 -> 512; amax 448 -> 1; amax 500 -> 0.896 -> 0.5
    got = C._power_of_two_below(np.float32([448 / 3, 896, 1, 448 / 500]))
    assert got.tolist() == [128.0, 512.0, 1.0, 0.5]
    # ranks' amaxes 3 and 1.5: own scales 128 and 256 (448 / 1.5 = 298.7), shared 128
    g = np.array([[3.0, -1.0], [0.5, 1.5]])
    r = fp8.fp8_all_reduce(g, scaling="post", power_of_two_scale=True)
    assert r.shared_scale.tolist() == [128.0, 128.0] and r.rank_scales.tolist() == [128.0, 256.0]
    # inputs 384, -128 | 64, 192 (all E4M3); sums 448 and 64: exact, output / 256: [1.75, 0.25]
    assert r.output[0].tolist() == [1.75, 0.25] and r.overflow_rate == 0.0
    assert "power_of_two_scale=True" in repr(r)


def test_sqrt_scaling_is_msamps_pre_scale():
    # msamp/nn/distributed.py: pre_scale = 1.0 / math.sqrt(world_size); sf.mul_(pre_scale)
    g = np.random.default_rng(5).standard_normal((9, 90)).astype(np.float32)
    r = fp8.fp8_all_reduce(g, scaling="sqrt")
    assert r.mu == 1 / 3 and np.allclose(r.scale, r.shared_scale.astype(np.float64) / 3,
                                         rtol=1e-15)
    same = fp8.fp8_all_reduce(g, scaling="auto", mu=1 / 3)
    np.testing.assert_array_equal(r.output, same.output)
    # its output scale is N * mu * s_g = 3 s_g: the sum of the casts divided by 9 s_g / 3
    np.testing.assert_allclose(r.output_scale, 3 * r.shared_scale.astype(np.float64), rtol=1e-15)


def test_msamp_all_reduce_by_hand():
    # Three ranks, ring all-reduce, one element per chunk. Gradients, rank by rank:
    g = np.array([[1.0, 0.5, 0.25], [1.0, 0.5, 0.125], [1.0, 0.03125, 0.125]])
    # amax 1 -> 448, rounded down to a power of two: 256; mu = 1/sqrt(3): multiplier
    # m = 256/sqrt(3) = 147.80. E4M3 steps: 16 in [128, 256), 8 in [64, 128), 4 in [32, 64),
    # 2 in [16, 32), 0.5 in [4, 8), 32 in [256, 512). Inputs: 147.80 -> 144, 73.90 -> 72,
    # 36.95 -> 36, 18.48 -> 18, 4.62 -> 4.5: rank 0 [144, 72, 36], rank 1 [144, 72, 18],
    # rank 2 [144, 4.5, 18]. Ring: at step s rank r sends chunk (r - s - 1) mod 3 to r + 1,
    # which adds it to its own and narrows the sum to E4M3.
    # chunk 0: r2 144 + 144 = 288 (exact); r0 144 + 288 = 432, a tie of 416 and 448: 448
    # chunk 1: r0 72 + 4.5 = 76.5 -> 80 (3.5 away, 72 is 4.5); r1 72 + 80 = 152, a tie of
    #          144 (1.001b) and 160 (1.010b): the even mantissa, 160
    # chunk 2: r1 18 + 36 = 54, a tie of 52 and 56: 56; r2 18 + 56 = 74 -> 72
    r = fp8.msamp_all_reduce(g)
    m = 256 / np.sqrt(3)
    want = (np.array([448.0, 160.0, 72.0]) / (3 * m)).astype(np.float32)
    np.testing.assert_array_equal(r.output, np.broadcast_to(want, (3, 3)))
    assert r.shared_scale.tolist() == [256.0] * 3 and r.mu == 1 / np.sqrt(3)
    assert (r.quantize, r.accumulate, r.power_of_two_scale) == ("per_hop", "fp8", True)
    # cast once and sum wide with the same scale: 432 -> 448, 148.5 -> 144, 72 -> 72
    once = fp8.fp8_all_reduce(g, scaling="sqrt", power_of_two_scale=True)
    want_once = (np.array([448.0, 144.0, 72.0]) / (3 * m)).astype(np.float32)
    np.testing.assert_array_equal(once.output[0], want_once)
    assert dict(fp8.MSAMP_OPTIONS) == {"fmt": "e4m3", "scaling": "sqrt", "quantize": "per_hop",
                                       "accumulate": "fp8", "power_of_two_scale": True}


def test_msamp_mode_loses_on_a_ring_where_a_tree_does_not():
    # NCCL's maintainers (nccl issue 1026): a ring adds one rank's value to the sum of many,
    # a tree adds partial sums of equal weight. With FP8 narrowing at every hop that decides
    # the error; cast once and sum wide does not care.
    g = np.random.default_rng(3).standard_normal((32, 32 * 64)).astype(np.float32)
    ring = fp8.msamp_all_reduce(g, cl.algorithms.ring_all_reduce(32))
    tree = fp8.msamp_all_reduce(g, cl.algorithms.double_binary_tree_all_reduce(32))
    wide = fp8.fp8_all_reduce(g, scaling="sqrt", power_of_two_scale=True)
    # (seed 3: ring 18.8 dB, tree 22.2 dB, cast once 28.4 dB)
    assert ring.snr_db < tree.snr_db - 3 and tree.snr_db < wide.snr_db - 3
    assert ring.overflow_rate == tree.overflow_rate == 0.0


# ----------------------------------------------------------------------------- golden values

def test_two_ranks_by_hand():
    # rank 0 holds [1, 2], rank 1 holds [3, 4]: the group's amax is 4, so the shared scale
    # is s_g = 448 / 4 = 112 (the minimum of the ranks' scales 224 and 112).
    g = np.array([[1.0, 2.0], [3.0, 4.0]])
    # post-scaling (mu = 1): inputs 112, 224 | 336, 448. 336 = 1.3125 x 2^8 lies halfway
    # between the e4m3 values 320 (1.010b) and 352 (1.011b): ties to even, 320. Sums:
    # 112 + 320 = 432, halfway between 416 (1.101b) and 448 (1.110b): 448; 224 + 448 = 672,
    # beyond 448 + 16: clipped to 448. Output 448 / (2 x 112) = 2 for both elements.
    post = fp8.fp8_all_reduce(g, scaling="post")
    assert post.output.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert post.reference.tolist() == [[2.0, 3.0], [2.0, 3.0]]
    assert post.shared_scale.tolist() == [112.0, 112.0]
    assert post.rank_scales.tolist() == [224.0, 112.0]
    assert post.mu == 1.0 and post.output_scale.tolist() == [224.0, 224.0]
    assert post.overflow_rate == 0.5 and post.underflow_rate == 0.0   # element 1, both ranks
    # pre-scaling (mu = 1/2, multiplier 56): inputs 56, 112 | 168 -> 160 (1.3125 x 2^7 ties
    # to 1.25 x 2^7), 224. Sums 216 -> 224 (halfway between 208 and 224, even 1.110b) and
    # 336 -> 320. Output 224 / 112 = 2 and 320 / 112 = 2.857...
    pre = fp8.fp8_all_reduce(g, scaling="pre")
    assert pre.mu == 0.5 and pre.scale.tolist() == [56.0, 56.0]
    assert pre.output[0].tolist() == [2.0, np.float32(320 / 112)]
    assert pre.overflow_rate == 0.0
    # auto: the scaled values are 112, 224, 336, 448 (inputs) and 448, 672 (sums); at most
    # 0.001% of 6 values, i.e. none, may reach 448, so mu = 2^k with 672 x 2^k rounding
    # below 448: k = -1 (336). The same as pre-scaling here.
    auto = fp8.fp8_all_reduce(g)
    assert auto.mu == 0.5 and np.array_equal(auto.output, pre.output)
    # SNR of [2, 2.857] against [2, 3]: 10 log10(13 / (3 - 20/7)^2) = 28.1 dB
    assert auto.snr_db == pytest.approx(10 * np.log10(2 * 13 / (2 * (3 - np.float32(20 / 7))
                                                                ** 2)), rel=1e-6)


def test_zero_and_padding():
    zero = fp8.fp8_all_reduce(np.zeros((4, 5)))
    assert np.all(zero.output == 0) and zero.snr_db == np.inf and zero.rel_error == 0.0
    assert zero.shared_scale.tolist() == [1.0] * 4         # TE: amax 0 gives scale 1
    # 5 elements over a 4-rank ring: padded to 8 with zeros, trimmed back
    r = fp8.fp8_all_reduce(np.arange(20.0).reshape(4, 5))
    assert r.output.shape == (4, 5) and r.reference.shape == (4, 5)
    # one rank with an all-zero gradient (scale 1 of its own) does not lower the shared scale
    g = np.array([[0.0, 0.0], [1e-3, -2e-3]])
    r = fp8.fp8_all_reduce(g, scaling="post")
    assert r.rank_scales[0] == 1.0 and r.shared_scale[0] == np.float32(448) / np.float32(2e-3)


# ----------------------------------------------------------------------------- reference ring loop

def cast(v, fmt):
    """Saturating cast of float32 values through ml_dtypes (clip first: ml_dtypes overflows
    to NaN/Inf), back to float32."""
    m = fp8.max_value(fmt)
    return np.clip(v, -m, m).astype(np.float32).astype(ML[fmt]).astype(np.float32)


def ring_reference(grads, fmt, mu, quantize, accumulate):
    """The ring all-reduce of FP8 gradients written out rank by rank and step by step."""
    n, size = grads.shape
    fmax = np.float32(fp8.max_value(fmt))
    s_g = fmax / np.float32(np.max(np.abs(grads)))
    multiplier = mu * np.float64(s_g)
    x = grads.astype(np.float64) * multiplier
    buf = cast(x.astype(np.float64), fmt).reshape(n, n, size // n)   # (rank, chunk, elements)

    def send(v):
        return cast(v, fmt) if quantize == "per_hop" else v

    def add(a, b):
        total = a + b                                               # float32
        if accumulate == "bf16":
            total = total.astype(ml_dtypes.bfloat16).astype(np.float32)
        elif accumulate == "fp8":
            total = cast(total, fmt)
        return total

    for s in range(n - 1):                          # reduce-scatter: r adds into r + 1
        sent = [send(buf[r, (r - s - 1) % n].copy()) for r in range(n)]
        for r in range(n):
            c = (r - s - 1) % n
            buf[(r + 1) % n, c] = add(buf[(r + 1) % n, c], sent[r])
    for s in range(n - 1):                          # all-gather: r copies to r + 1
        sent = [send(buf[r, (r - s) % n].copy()) for r in range(n)]
        for r in range(n):
            buf[(r + 1) % n, (r - s) % n] = sent[r]
    result = cast(buf.reshape(n, size), fmt)        # the stored gradient is FP8
    return (result.astype(np.float64) / (n * multiplier)).astype(np.float32)


@pytest.mark.parametrize("quantize", ["once", "per_hop"])
@pytest.mark.parametrize("accumulate", ["fp32", "bf16", "fp8"])
@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_ring_equals_reference_loop(quantize, accumulate, fmt):
    rng = np.random.default_rng(11)
    n, size = 8, 8 * 300
    g = (rng.standard_normal((n, size)) * np.exp(rng.normal(0, 2, size))
         + rng.normal(0, 1, size))
    # amax exactly 56 = 448 / 8 (and 57344 / 1024): the shared scale is a power of two, so
    # the scaled inputs are exact in float32 and the loop's ml_dtypes cast (which goes
    # through float32) rounds them once, as the package does
    g = g / np.max(np.abs(g)) * 56
    g[np.unravel_index(np.argmax(np.abs(g)), g.shape)] = 56.0
    g = g.astype(np.float32)
    for scaling, mu in (("post", 1.0), ("pre", 1 / n), ("auto", 0.25), ("sqrt", n ** -0.5)):
        r = fp8.fp8_all_reduce(g, fmt=fmt, scaling=scaling, quantize=quantize,
                               accumulate=accumulate, mu=mu if scaling == "auto" else None)
        want = ring_reference(g, fmt, mu, quantize, accumulate)
        np.testing.assert_array_equal(r.output, want)
        assert r.overflow_rate > 0 or scaling != "post"        # the loop meets clipping too
        # the shared scale 448 / 56 = 8 (or 57344 / 56 = 1024) is a power of two already
        pow2 = fp8.fp8_all_reduce(g, fmt=fmt, scaling=scaling, quantize=quantize,
                                  accumulate=accumulate, mu=mu if scaling == "auto" else None,
                                  power_of_two_scale=True)
        np.testing.assert_array_equal(pow2.output, want)


def test_per_hop_and_once_agree_when_accumulating_in_fp8():
    # FP8 sums are already on the FP8 grid, so casting them again on the wire changes nothing
    g = np.random.default_rng(2).standard_normal((6, 600)).astype(np.float32)
    a = fp8.fp8_all_reduce(g, quantize="once", accumulate="fp8", scaling="post")
    b = fp8.fp8_all_reduce(g, quantize="per_hop", accumulate="fp8", scaling="post")
    np.testing.assert_array_equal(a.output, b.output)


# ----------------------------------------------------------------------------- any schedule

SCHEDULES = {
    "ring": lambda: cl.algorithms.ring_all_reduce(4),
    "bidirectional ring": lambda: cl.algorithms.bidirectional_ring_all_reduce(4),
    "recursive doubling": lambda: cl.algorithms.recursive_doubling_all_reduce(4),
    "rabenseifner": lambda: cl.algorithms.rabenseifner_all_reduce(4),
    "double binary tree": lambda: cl.algorithms.double_binary_tree_all_reduce(4),
    "nvls (switch reduces)": lambda: cl.algorithms.nvls_all_reduce(4, 2),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_any_schedule_once_fp32_is_the_cast_of_the_exact_sum(name, data):
    # FP8 inputs summed in float32 are exact (4 ranks, e4m3's 4 significant bits over 17
    # binades fit float32's 24), so every algorithm gives the FP8 cast of the exact sum
    schedule = SCHEDULES[name]()
    size = data.draw(st.sampled_from([8, 16, 40]))
    g = np.array(data.draw(st.lists(st.floats(-1e3, 1e3, width=32), min_size=4 * size,
                                    max_size=4 * size)), np.float32).reshape(4, size)
    scaling = data.draw(st.sampled_from(["pre", "post", "auto"]))
    r = fp8.fp8_all_reduce(g, schedule, scaling=scaling)
    inputs = fp8.quantize(g.astype(np.float64) * r.scale[:, None], "e4m3")
    exact = inputs.astype(np.float64).sum(axis=0)
    want = (fp8.quantize(exact, "e4m3").astype(np.float64) / r.output_scale[0]).astype(np.float32)
    np.testing.assert_array_equal(r.output, np.broadcast_to(want, g.shape))
    np.testing.assert_array_equal(r.reference, cl.simulate(schedule, g) / np.float32(4))


def test_groups_average_separately():
    schedule = cl.grouped(cl.algorithms.ring_all_reduce(2), [[0, 2], [1, 3]])
    g = np.array([[1.0, 2.0], [100.0, 0.0], [3.0, 4.0], [-100.0, 50.0]])
    r = fp8.fp8_all_reduce(g, schedule, scaling="post")
    # group {0, 2} is the two-rank example by hand above: shared scale 112, output [2, 2]
    np.testing.assert_array_equal(r.shared_scale, np.float32([112, 4.48, 112, 4.48]))
    assert r.output[0].tolist() == [2.0, 2.0] and r.output[2].tolist() == [2.0, 2.0]
    # group {1, 3}: amax 100, s_g = fl32(4.48); inputs 448, 0 | -448, 224 (each a hair
    # above, rounding down): sums 0 and 224, 224 / (2 x 4.48) = 25
    assert r.output[1].tolist() == [0.0, 25.0] and r.output[3].tolist() == [0.0, 25.0]
    assert r.reference[1].tolist() == [0.0, 25.0]


# ----------------------------------------------------------------------------- auto-scaling

def test_auto_scaling_rule():
    auto = fp8.AutoScaling()
    assert auto.mu == 1.0 and auto.threshold == 1e-5
    assert auto.update(2e-5) == 0.5                     # more than 0.001% at max: halve
    assert auto.update(1e-5) == 0.5 * 2 ** (1 / 1000)   # not more: grow
    grow = fp8.AutoScaling(mu=0.25)
    for _ in range(1000):
        grow.update(0.0)
    assert grow.mu == pytest.approx(0.5, rel=1e-12)     # doubled over 1,000 quiet steps
    assert "mu=0.5" in repr(grow)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.sampled_from([2, 4, 8]))
def test_settled_mu_is_the_largest_power_of_two_under_the_threshold(seed, n):
    rng = np.random.default_rng(seed)
    g = (rng.standard_normal((n, 64 * n)) + rng.normal(0, 2, 64 * n)).astype(np.float32)
    r = fp8.fp8_all_reduce(g)
    assert np.log2(r.mu) == np.round(np.log2(r.mu))
    fmax = fp8.max_value("e4m3")

    def fraction(mu):
        # the elements of the exact reduced sum at FP8_MAX once cast, over all of them
        # (MS-AMP pull request #140 counts the reduced gradient, zeros included)
        sums = (g.astype(np.float64) * r.shared_scale[0] * mu).sum(axis=0)
        return np.mean(np.abs(fp8.quantize(sums, "e4m3")) == fmax)

    assert fraction(r.mu) <= fp8.AUTO_SCALING_THRESHOLD < fraction(2 * r.mu)


def test_auto_scaling_counts_the_reduced_result_as_msamp_pr_140():
    # MS-AMP pull request #140 (the authors' unmerged auto-scaling) counts the reduced
    # gradient's elements at 448 over all its elements, not the ranks' inputs. Four ranks,
    # 100,000 elements: all 0.001 except elements 0 and 1, which are 1.0 on every rank. The
    # amax is 1, so s_g = 448; the exact sums are 4 x 448 mu at elements 0 and 1.
    g = np.full((4, 100_000), 0.001, np.float32)
    g[:, :2] = 1.0
    # 1e-5 of 100,000 sums allows one at the maximum, not two: 1792 mu must round below
    # 448, so mu = 1/8 (1/4 gives exactly 448). Counting the 400,000 inputs as well would
    # allow five, and mu = 1/2 (the eight inputs at 448 mu are the 3rd to 10th largest).
    r = fp8.fp8_all_reduce(g)
    assert r.mu == 1 / 8 and r.saturated_fraction == 0.0
    # with mu = 1/4 the two sums are 448 exactly (4 x 112): 2 of 100,000 elements at max,
    # above the threshold, so the rule halves mu
    at_quarter = fp8.fp8_all_reduce(g, mu=0.25)
    assert at_quarter.saturated_fraction == 2e-5
    assert fp8.AutoScaling(mu=0.25).update(at_quarter.saturated_fraction) == 0.125


# ----------------------------------------------------------------------------- the FP8-LM finding

def synthetic_gradients(n, size=1 << 14, seed=0):
    """Data-parallel gradients: a mean shared by the ranks plus per-rank noise, times
    per-element magnitudes spread over many binades (log-normal, sigma 2), small (1e-4)."""
    rng = np.random.default_rng(seed)
    magnitude = np.exp(rng.normal(0, 2.0, size))
    mean = rng.normal(0, 1, size)
    return (magnitude * (mean + rng.normal(0, 1, (n, size))) * 1e-4).astype(np.float32)


def test_fp8lm_finding_pre_underflows_post_overflows_auto_neither():
    # FP8-LM, section 2.1 and Fig. 7: pre-scaling underflows more, post-scaling overflows
    # more, auto-scaling diminishes both. Reproduced for 2, 8 and 32 ranks (fixed seed).
    runs = {n: {s: fp8.fp8_all_reduce(synthetic_gradients(n), scaling=s)
                for s in ("pre", "post", "auto")} for n in (2, 8, 32)}
    pre_under = [runs[n]["pre"].underflow_rate for n in (2, 8, 32)]
    post_over = [runs[n]["post"].overflow_rate for n in (2, 8, 32)]
    assert pre_under[0] < pre_under[1] < pre_under[2]          # grows with the ranks
    assert post_over[0] <= post_over[1] < post_over[2] and post_over[2] > 1e-3
    for n in (8, 32):
        pre, post, auto = runs[n]["pre"], runs[n]["post"], runs[n]["auto"]
        assert pre.overflow_rate == 0.0                        # sums never pass FP8_MAX
        assert post.underflow_rate < pre.underflow_rate
        assert auto.overflow_rate == 0.0 and auto.underflow_rate < pre.underflow_rate
        assert auto.snr_db > post.snr_db + 10                  # clipping ruins post's SNR
        assert auto.snr_db >= pre.snr_db - 0.5


# ----------------------------------------------------------------------------- cost

def test_wire_bytes_and_times_by_hand():
    assert [fp8.wire_bytes(10, d) for d in ("fp8", "bf16", "fp16", "fp32")] == [10, 20, 20, 40]
    # ring all-reduce on a ring of 8 at 1e9 B/s, no latency: 2 (n-1)/n S / B. 2^20 elements:
    # FP32 S = 4 MiB -> 2 x 7/8 x 4,194,304 / 1e9 = 7.340032 ms; BF16 half, FP8 a quarter
    times = fp8.all_reduce_times(2**20, cl.topology.ring(8, 1e9))
    assert times["fp32"].seconds == pytest.approx(7.340032e-3, rel=1e-12)
    assert times["bf16"].seconds == pytest.approx(3.670016e-3, rel=1e-12)
    assert times["fp8"].seconds == pytest.approx(1.835008e-3, rel=1e-12)
    # FP8-LM (section 3.2.2): 75% less traffic than FP32 in theory; 63-65% measured
    assert 1 - fp8.wire_bytes(1, "fp8") / fp8.wire_bytes(1, "fp32") == 0.75


@pytest.mark.parametrize("name, options", [("dgx-h100", {}), ("tpu-v5e", {"shape": (4, 4)}),
                                           ("gb200-nvl72", {})])
def test_times_on_presets(name, options):
    times = fp8.all_reduce_times(2**24, name, **options)
    assert set(times) == {"fp8", "bf16", "fp32"}
    t1, t2, t4 = (times[d].seconds for d in ("fp8", "bf16", "fp32"))
    # time = latency + bytes x (seconds per byte): affine in the element size
    assert t4 - t2 == pytest.approx(2 * (t2 - t1), rel=1e-9) and t1 < t2 < t4
    if name != "tpu-v5e":                       # GPU presets have no latency by default
        assert t1 == pytest.approx(t4 / 4, rel=1e-12)
    only = fp8.all_reduce_times(2**24, name, dtypes="fp8", **options)
    assert list(only) == ["fp8"] and only["fp8"].seconds == t1


# ----------------------------------------------------------------------------- errors

G = np.ones((4, 8))
ERRORS = [
    (lambda: fp8.fp8_all_reduce(np.ones(8)),
     r"takes grads of shape \(n_ranks, size\): one gradient row per rank, got shape \(8,\)"),
    (lambda: fp8.fp8_all_reduce([[1.0, np.inf], [1.0, 2.0]]),
     r"grads must be finite in float32 \(no NaN or Inf"),
    (lambda: fp8.fp8_all_reduce([[1e39], [1.0]]), r"grads must be finite in float32"),
    (lambda: fp8.fp8_all_reduce(G, cl.algorithms.ring_all_reduce(2)),
     r"the schedule 'ring_all_reduce' has 2 ranks but grads has 4 rows \(one per rank\)"),
    (lambda: fp8.fp8_all_reduce(G, cl.algorithms.ring_all_gather(4)),
     r"needs an all_reduce schedule, got 'ring_all_gather' \(all_gather\)"),
    (lambda: fp8.fp8_all_reduce(G, cl.Schedule("all_reduce", 4, 4, [], op="max")),
     r"sums gradients; the schedule 'all_reduce' reduces with op='max'"),
    (lambda: fp8.fp8_all_reduce(G, scaling="mid"),
     r"scaling must be one of 'pre', 'post', 'sqrt', 'auto', got 'mid'"),
    (lambda: fp8.fp8_all_reduce(G, quantize="twice"),
     r"quantize must be one of 'once', 'per_hop', got 'twice'"),
    (lambda: fp8.fp8_all_reduce(G, accumulate="fp16"),
     r"accumulate must be one of 'fp32', 'bf16', 'fp8', got 'fp16'"),
    (lambda: fp8.fp8_all_reduce(G, power_of_two_scale=1),
     r"power_of_two_scale must be True or False, got 1"),
    (lambda: fp8.fp8_all_reduce(G, scaling="sqrt", mu=0.5),
     r"scaling='sqrt' fixes it \(pre: 1/N, post: 1, sqrt: 1/sqrt\(N\)\)"),
    (lambda: fp8.msamp_all_reduce(G, scaling="exact"),
     r"scaling must be one of 'pre', 'post', 'sqrt', 'auto', got 'exact'"),
    (lambda: fp8.fp8_all_reduce(G, fmt="e8m0"),
     r"fp8_all_reduce \(element formats\) takes one of"),
    (lambda: fp8.fp8_all_reduce(G, scaling="pre", mu=0.5),
     r"mu is the auto-scaling factor, for scaling='auto' only; scaling='pre' fixes it"),
    (lambda: fp8.fp8_all_reduce(G, mu=0), r"mu must be > 0, got 0\.0"),
    (lambda: fp8.AutoScaling(threshold=1.0),
     r"threshold is a fraction of values and must be in \[0, 1\), got 1\.0"),
    (lambda: fp8.AutoScaling().update(1.5), r"saturated_fraction must be in \[0, 1\], got 1\.5"),
    (lambda: fp8.AutoScaling(growth_steps=0), r"growth_steps must be an integer >= 1, got 0"),
    (lambda: fp8.wire_bytes(10, "int8"),
     r"dtype must be one of 'fp8', 'bf16', 'fp16', 'fp32', got 'int8'"),
    (lambda: fp8.wire_bytes(-1, "fp8"), r"n_elements must be an integer >= 0, got -1"),
    (lambda: fp8.all_reduce_times(8, cl.topology.ring(4, 1e9), shape=(2, 2)),
     r"preset options \(shape\) are for a preset name; a Topology is already built"),
    (lambda: fp8.all_reduce_times(8, "dgx-h100", cl.algorithms.ring_all_gather(8)),
     r"all_reduce_times costs an all_reduce, got 'ring_all_gather' \(all_gather\)"),
    (lambda: fp8.all_reduce_times(8, "dgx-h100", dtypes=()), r"dtypes must name at least one"),
]


@pytest.mark.parametrize("call, message", ERRORS)
def test_errors_name_the_problem(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()



CALLS = {
    "fp8_all_reduce": (
        lambda g, s, fmt, scaling, quantize, accumulate: fp8.fp8_all_reduce(
            g, s, fmt=fmt, scaling=scaling, quantize=quantize, accumulate=accumulate),
        [np.ones((4, 8)), cl.algorithms.ring_all_reduce(4), "e4m3", "auto", "once", "fp32"]),
    "fp8_all_reduce mu": (lambda mu: fp8.fp8_all_reduce(np.ones((2, 2)), mu=mu), [0.5]),
    "fp8_all_reduce power_of_two_scale": (
        lambda p: fp8.fp8_all_reduce(np.ones((2, 2)), power_of_two_scale=p), [True]),
    "msamp_all_reduce": (lambda g, s, scaling: fp8.msamp_all_reduce(g, s, scaling=scaling),
                         [np.ones((4, 8)), cl.algorithms.ring_all_reduce(4), "post"]),
    "AutoScaling": (lambda mu, t, k: fp8.AutoScaling(mu, t, k), [1.0, 1e-5, 1000]),
    "AutoScaling.update": (lambda f: fp8.AutoScaling().update(f), [0.0]),
    "wire_bytes": (fp8.wire_bytes, [8, "fp8"]),
    "all_reduce_times": (fp8.all_reduce_times,
                         [8, cl.topology.ring(4, 1e9), cl.algorithms.ring_all_reduce(4),
                          ("fp8",)]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_bad_argument_raises_a_collectives_error(name):
    function, args = CALLS[name]
    check_every_bad_argument(name, function, args)


def test_step_errors_are_the_error_of_what_each_hop_sends():
    """Two ranks, one element per chunk, amax 448 so the shared scale is 1 and post-scaling
    keeps mu = 1. Step 0 sends inputs, already E4M3: no error. Step 1 sends the sums: with
    E4M3 sums at every hop 448 + 1 = 449 is narrowed to 448 (E4M3's steps are 32 there) and
    1 + 0.125 = 1.125 is exact, so the error is 1 / ||(449, 1.125)||; summed in FP32 and
    cast once, nothing is narrowed on the way and both steps are exact."""
    g = np.array([[448.0, 1.0], [1.0, 0.125]], np.float32)
    hw = fp8.fp8_all_reduce(g, scaling="post", quantize="per_hop", accumulate="fp8",
                            step_errors=True)
    assert hw.step_errors.shape == (2,) and hw.step_errors[0] == 0.0
    assert np.isclose(hw.step_errors[1], 1 / np.hypot(449.0, 1.125))
    wide = fp8.fp8_all_reduce(g, scaling="post", step_errors=True)
    assert wide.step_errors.tolist() == [0.0, 0.0]
    assert fp8.fp8_all_reduce(g).step_errors is None        # only when asked
    assert fp8.msamp_all_reduce(g, step_errors=True).step_errors.shape == (2,)
    with pytest.raises(cl.CollectivesError):
        fp8.fp8_all_reduce(g, step_errors="yes")
