"""collectives/fp8/scaling.py: the scaling recipes, by hand, against reference loops written
here, against first principles, and against ml_dtypes (a test oracle only)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
import collectives.fp8 as fp8
from collectives.errors import CollectivesError

from garbage import check_every_bad_argument

ml_dtypes = pytest.importorskip("ml_dtypes")

ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
F32MAX = np.finfo(np.float32).max


def half_ulp(v, fmt):
    """Half the spacing of ``fmt``'s values at magnitude ``v`` (first principles: the
    quantum of the binade of ``v``, never below the subnormal spacing)."""
    f = fp8.FORMATS[fmt]
    a = np.abs(np.asarray(v, np.float64))
    e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.maximum(np.where(a > 0, e, 1 - f.bias), 1 - f.bias)
    return np.ldexp(0.5, (e - f.mantissa_bits).astype(int))


finite32 = st.floats(min_value=-(2.0**20), max_value=2.0**20, width=32)


# ----------------------------------------------------------------------------- current scaling


def test_current_scale_by_hand():
    # TE current scaling: FP8_MAX / amax / 2^margin, in float32
    assert fp8.current_scale([1.0, -2.0]) == 224.0  # 448 / 2
    assert fp8.current_scale([1.0, -2.0], margin=1) == 112.0  # 448 / 2 / 2
    assert fp8.current_scale([0.5], "e5m2") == 114688.0  # 57344 / 0.5
    assert fp8.current_scale(np.float32(3.0)) == float(np.float32(448) / np.float32(3))
    # no information: TE's compute_scale_from_amax returns 1 for amax 0, Inf and NaN
    assert fp8.current_scale([0.0, -0.0]) == 1.0
    assert fp8.current_scale([]) == 1.0
    assert fp8.current_scale([1.0, np.inf]) == 1.0
    assert fp8.current_scale([1.0, np.nan]) == 1.0
    # 448 / 1e-44 overflows float32: TE uses the float32 maximum
    assert fp8.current_scale([1e-44]) == float(F32MAX)
    assert isinstance(fp8.current_scale([1.0]), float)


# ----------------------------------------------------------------------------- delayed scaling


def te_delayed_reference(amaxes, fmt, history_len, margin, algo):
    """Transformer Engine's delayed scaling as its PyTorch code does it, one step at a time:
    a zero-filled history buffer, this step's amax written to slot 0, the amax for the next
    scale taken from it, then torch.roll(-1) and slot 0 cleared; scale in float32, kept when
    the amax is 0, Inf or NaN (transformer_engine/pytorch/fp8.py)."""
    fmax = np.float32(fp8.max_value(fmt))
    history = np.zeros(history_len, np.float32)
    scale = np.float32(1.0)
    used = []
    for a in amaxes:
        used.append(scale)
        history[0] = np.float32(a)
        amax = np.max(history) if algo == "max" else history[0]
        if history_len > 1:
            history = np.roll(history, -1)
        history[0] = 0.0
        if amax > 0 and np.isfinite(amax):
            with np.errstate(over="ignore", divide="ignore"):
                s = (fmax / np.float32(amax)) / np.float32(2.0**margin)
            scale = np.float32(F32MAX) if np.isinf(s) else np.float32(s)
    return np.array(used, np.float32)


amax_values = st.one_of(
    st.floats(min_value=0, max_value=1e5), st.sampled_from([0.0, np.inf, np.nan, 1e-44, 448.0])
)


@settings(max_examples=150, deadline=None)
@given(
    amaxes=st.lists(amax_values, min_size=0, max_size=60),
    history_len=st.integers(1, 20),
    margin=st.integers(0, 3),
    algo=st.sampled_from(["max", "most_recent"]),
    fmt=st.sampled_from(["e4m3", "e5m2"]),
)
def test_delayed_scaling_equals_te_reference_loop(amaxes, history_len, margin, algo, fmt):
    want = te_delayed_reference(amaxes, fmt, history_len, margin, algo)
    got = fp8.delayed_scales(amaxes, fmt, history_len, margin, algo)
    np.testing.assert_array_equal(got, want)
    ds = fp8.DelayedScaling(fmt, history_len, margin, algo)
    stepwise = []
    for a in amaxes:
        stepwise.append(ds.scale)
        ds.update(a)
    np.testing.assert_array_equal(np.array(stepwise, np.float32), want)
    assert len(ds.amax_history) == min(len(amaxes), history_len)


def test_delayed_scaling_defaults_and_history():
    ds = fp8.DelayedScaling()
    # TE 1.x/2.x defaults: amax_history_len=1024, amax_compute_algo="max", margin=0
    assert (ds.fmt, ds.history_len, ds.margin, ds.algo, ds.scale) == ("e4m3", 1024, 0.0, "max", 1.0)
    assert ds.update(2.0) == 224.0  # 448 / 2
    assert ds.update(1.0) == 224.0  # the window still holds 2
    assert ds.amax_history.tolist() == [2.0, 1.0]  # newest last
    short = fp8.DelayedScaling(history_len=2)
    for a in (4.0, 1.0, 1.0):
        short.update(a)
    assert short.scale == 448.0  # 4 has left the 2-step window
    assert fp8.DelayedScaling(algo="most_recent").update(7.0) == 64.0
    # per-rank amaxes are MAX-reduced first (TE's amax all-reduce)
    assert fp8.DelayedScaling().update([1.0, 4.0, 2.0]) == 112.0
    assert "scale=112" in repr(_updated([1.0, 4.0]))
    with pytest.raises(AttributeError):
        ds.history_len = 3


def _updated(amax):
    ds = fp8.DelayedScaling()
    ds.update(amax)
    return ds


def test_delayed_scales_by_hand_and_ranks():
    # step 0 uses 1.0; step t uses 448 / max(amax[t-3 .. t-1])
    got = fp8.delayed_scales([2.0, 8.0, 1.0, 1.0, 1.0, 0.0], history_len=3)
    assert got.tolist() == [1.0, 224.0, 56.0, 56.0, 56.0, 448.0]
    by_rank = fp8.delayed_scales([[1.0, 2.0], [8.0, 0.5]], history_len=4)
    assert by_rank.tolist() == [1.0, 224.0]  # max over ranks of step 0 is 2
    long = np.abs(np.random.default_rng(3).normal(size=5000)).astype(np.float32)
    np.testing.assert_array_equal(
        fp8.delayed_scales(long), te_delayed_reference(long, "e4m3", 1024, 0, "max")
    )


# ----------------------------------------------------------------------------- amax all-reduce

ALL_REDUCES = {
    "ring": lambda n: cl.algorithms.ring_all_reduce(n),
    "recursive doubling": lambda n: cl.algorithms.recursive_doubling_all_reduce(n),
    "bidirectional ring": lambda n: cl.algorithms.bidirectional_ring_all_reduce(n),
    "double binary tree": lambda n: cl.algorithms.double_binary_tree_all_reduce(n),
}


@pytest.mark.parametrize("name", sorted(ALL_REDUCES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_amax_all_reduce_equals_np_max(name, data):
    n = data.draw(st.sampled_from([2, 4, 8]))
    k = data.draw(st.integers(1, 5))
    amaxes = np.array(
        data.draw(st.lists(st.floats(0, 2.0**100, width=32), min_size=n * k, max_size=n * k)),
        np.float32,
    ).reshape(n, k)
    schedule = ALL_REDUCES[name](n)
    got = fp8.amax_all_reduce(amaxes, schedule)
    np.testing.assert_array_equal(got, np.broadcast_to(amaxes.max(axis=0), (n, k)))
    one = fp8.amax_all_reduce(amaxes[:, 0], schedule)
    assert one.shape == (n,) and np.all(one == amaxes[:, 0].max())


def test_amax_all_reduce_default_groups_and_nan():
    assert fp8.amax_all_reduce([1.0, 3.0, 2.0]).tolist() == [3.0, 3.0, 3.0]
    grouped = cl.grouped(cl.algorithms.ring_all_reduce(2), [[0, 2], [1, 3]])
    assert fp8.amax_all_reduce([1.0, 5.0, 2.0, 4.0], grouped).tolist() == [2, 5, 2, 5]
    assert np.all(np.isnan(fp8.amax_all_reduce([1.0, np.nan, 2.0, 0.0])))
    assert fp8.amax_all_reduce([7.0]).tolist() == [7.0]


# ----------------------------------------------------------------------------- scaled casts


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
@settings(max_examples=80, deadline=None)
@given(data=st.lists(finite32, min_size=1, max_size=64), margin=st.integers(0, 2))
def test_quantize_scaled_round_trip_within_half_ulp(fmt, data, margin):
    x = np.array(data, np.float32)
    scale = fp8.current_scale(x, fmt, margin)
    codes, s = fp8.quantize_scaled(x, scale, fmt)
    assert codes.dtype == np.uint8 and codes.shape == x.shape and s == scale
    v = x.astype(np.float64) * np.float64(np.float32(scale))  # the exact scaled value
    q = fp8.decode(codes, fmt).astype(np.float64)
    assert np.all(np.abs(q - v) <= half_ulp(v, fmt))  # nothing saturates here
    back = fp8.dequantize_scaled(codes, scale, fmt)
    np.testing.assert_array_equal(
        back, fp8.decode(codes, fmt) * (np.float32(1) / np.float32(scale))
    )
    assert back.dtype == np.float32


def test_quantize_scaled_by_hand():
    # scale 2: 100 -> 200, halfway between the e4m3 values 192 (1.100b x 2^7, 0x74) and 208
    # (1.101b x 2^7, 0x75): the tie goes to the even mantissa, 192; 300 -> 600 saturates to
    # 448 = 0x7E; -1e-4 -> -2e-4 is below half the smallest subnormal (2^-10): -0 = 0x80
    codes, s = fp8.quantize_scaled([100.0, 300.0, -1e-4], 2.0)
    assert codes.tolist() == [0x74, 0x7E, 0x80] and s == 2.0
    assert fp8.dequantize_scaled(codes, 2.0).tolist() == [96.0, 224.0, -0.0]
    assert np.isnan(fp8.decode(fp8.quantize_scaled([300.0], 2.0, saturate=False)[0], "e4m3"))
    per_row, s = fp8.quantize_scaled([[1.0], [1.0]], [[2.0], [4.0]])
    assert fp8.decode(per_row, "e4m3").tolist() == [[2.0], [4.0]] and s.shape == (2, 1)


# ----------------------------------------------------------------------------- MX blocks


def mx_scale_first_principles(amax, fmt, rule):
    """X by the OCP MX v1.0 rule, 2^(floor(log2 amax) - emax), or NVIDIA's,
    2^ceil(log2(amax / FP8_MAX)), with math.frexp on the exact amax."""
    f = fp8.FORMATS[fmt]
    if amax == 0:
        return 2.0**-127
    m, e = math.frexp(amax)  # amax = m 2^e, 0.5 <= m < 1
    if rule == "ocp":
        k = (e - 1) - f.emax
    else:
        k = (e - 1) - f.emax
        if amax > f.max * 2.0**k:
            k += 1
    return 2.0 ** max(k, -127)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
@pytest.mark.parametrize("rule", ["ocp", "ceil"])
@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.floats(min_value=-(2.0**100), max_value=2.0**100, width=32), min_size=1, max_size=80
    )
)
def test_mx_quantize_scales_and_elements(fmt, rule, data):
    x = np.array(data, np.float32)
    codes, scale_codes = fp8.mx_quantize(x, block=16, fmt=fmt, rule=rule)
    n_blocks = -(-x.size // 16)
    assert codes.shape == x.shape and scale_codes.shape == (n_blocks,)
    X = fp8.decode(scale_codes, "e8m0").astype(np.float64)
    for b in range(n_blocks):  # loops: reference only
        amax = float(np.max(np.abs(x[16 * b : 16 * (b + 1)])))
        assert X[b] == mx_scale_first_principles(amax, fmt, rule)
    # the scale codes are E8M0 as ml_dtypes casts them (exact for powers of two)
    assert np.array_equal(
        scale_codes, X.astype(np.float32).astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
    )
    # the elements: x / X cast as ml_dtypes does (exact division by a power of two), with
    # saturation where ml_dtypes, non-saturating, overflows to NaN (only under "ocp")
    per = np.repeat(X, 16)[: x.size].astype(np.float32)
    ref = (x / per).astype(ML[fmt]).view(np.uint8)
    ref_nan = ~np.isfinite(fp8.decode(ref, fmt))  # NaN (e4m3) or Inf (e5m2)
    assert np.array_equal(codes[~ref_nan], ref[~ref_nan])
    assert np.all(np.abs(fp8.decode(codes[ref_nan], fmt)) == fp8.max_value(fmt))
    if rule == "ceil":
        assert not ref_nan.any()  # nothing saturates
    back = fp8.mx_dequantize(codes, scale_codes, block=16, fmt=fmt).astype(np.float64)
    ok = ~ref_nan
    err = np.abs(back[ok] - x[ok])
    assert np.all(err <= per[ok] * half_ulp(x[ok] / per[ok], fmt))


def test_mx_quantize_by_hand():
    # one block of 32 with amax 3: OCP X = 2^(1 - 8) = 2^-7 (3 / X = 384 <= 448); ceil rule:
    # 3 / 448 = 2^-7.22 -> X = 2^-7 as well. amax 480: OCP X = 2^(8 - 8) = 1, 480 saturates
    # to 448; ceil rule: 480 / 448 > 1 -> X = 2, 480 / 2 = 240 exactly
    x = np.zeros(64)
    x[0], x[32] = 3.0, 480.0
    codes, sc = fp8.mx_quantize(x)
    assert sc.tolist() == [127 - 7, 127]
    assert fp8.mx_dequantize(codes, sc)[[0, 32]].tolist() == [3.0, 448.0]
    codes, sc = fp8.mx_quantize(x, rule="ceil")
    assert sc.tolist() == [127 - 7, 128]
    assert fp8.mx_dequantize(codes, sc)[[0, 32]].tolist() == [3.0, 480.0]
    assert np.array_equal(fp8.mx_quantize(x, rule="te")[1], sc)  # mx_block_scale's name


# ----------------------------------------------------------------------------- DeepSeek tiles


@pytest.mark.parametrize("tile", [(1, 128), (128, 128), (1, 16), (4, 8)])
def test_tile_quantize_scales_by_hand(tile):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((130, 200)) * np.exp(rng.normal(0, 3, (130, 1)))).astype(np.float32)
    x[: tile[0], : tile[1]] = 0  # one all-zero tile
    codes, scales = fp8.tile_quantize(x, tile)
    rows, cols = -(-130 // tile[0]), -(-200 // tile[1])
    assert scales.shape == (rows, cols) and scales.dtype == np.float32
    for i in range(rows):  # loops: reference only
        for j in range(cols):
            block = x[i * tile[0] : (i + 1) * tile[0], j * tile[1] : (j + 1) * tile[1]]
            amax = np.float32(np.max(np.abs(block)))
            want = np.float32(1.0) if amax == 0 else amax / np.float32(448)
            assert scales[i, j] == want, (i, j)
    back = fp8.tile_dequantize(codes, scales, tile).astype(np.float64)
    per = np.repeat(np.repeat(scales.astype(np.float64), tile[0], 0), tile[1], 1)[:130, :200]
    # within half an ulp of the scaled value, or clipped at 448 by at most the rounding of s
    v = x / per
    assert np.all(np.abs(back / per - v) <= half_ulp(np.minimum(np.abs(v), 448), "e4m3") + 1e-3)


def test_tile_quantize_padding_and_specials():
    x = np.arange(1.0, 11.0)
    codes, s = fp8.tile_quantize(x, (4,))
    assert s.tolist() == [
        np.float32(4) / np.float32(448),
        np.float32(8) / np.float32(448),
        np.float32(10) / np.float32(448),
    ]
    padded_codes, padded_s = fp8.tile_quantize(np.concatenate([x, [0, 0]]), (4,))
    assert np.array_equal(padded_s, s) and np.array_equal(padded_codes[:10], codes)
    c, s = fp8.tile_quantize([[1.0, np.nan], [2.0, 3.0]], (1, 2))
    assert np.isnan(s[0, 0]) and s[1, 0] == np.float32(3) / np.float32(448)
    c, s = fp8.tile_quantize(np.ones((2, 3, 256)))  # leading axes kept
    assert s.shape == (2, 3, 2) and np.all(fp8.tile_dequantize(c, s) == 1.0)


# ----------------------------------------------------------------------------- errors

ERRORS = [
    (lambda: fp8.current_scale([1.0], "e8m0"), r"current_scale \(element formats\) takes one of"),
    (lambda: fp8.current_scale([1.0], margin=np.inf), r"margin must be finite, got inf"),
    (lambda: fp8.DelayedScaling(history_len=0), r"history_len must be an integer >= 1, got 0"),
    (
        lambda: fp8.DelayedScaling(algo="mean"),
        r"algo must be 'max' or 'most_recent' \(TE's amax_compute_algo\), got 'mean'",
    ),
    (
        lambda: fp8.DelayedScaling().update(-1.0),
        r"DelayedScaling.update: amax is a maximum of \|x\| and must be >= 0, got -1\.0",
    ),
    (
        lambda: fp8.DelayedScaling().update([[1.0]]),
        r"takes this step's amax: a number, or a 1-D array with one amax per data-parallel "
        r"rank; got shape \(1, 1\)",
    ),
    (lambda: fp8.DelayedScaling().update([]), r"got shape \(0,\)"),
    (
        lambda: fp8.delayed_scales([[[1.0]]]),
        r"delayed_scales takes amaxes of shape \(steps,\) or \(steps, ranks\), "
        r"got shape \(1, 1, 1\)",
    ),
    (lambda: fp8.delayed_scales([1.0, -2.0]), r"every amax is a maximum of \|x\| and must be >= 0"),
    (
        lambda: fp8.amax_all_reduce([1.0, 2.0], cl.algorithms.ring_all_gather(2)),
        r"amax_all_reduce needs an all_reduce schedule, got 'ring_all_gather' \(all_gather\)",
    ),
    (
        lambda: fp8.amax_all_reduce([1.0, 2.0, 3.0], cl.algorithms.ring_all_reduce(2)),
        r"the schedule 'ring_all_reduce' has 2 ranks but amaxes has 3 rows \(one per rank\)",
    ),
    (lambda: fp8.amax_all_reduce([1.0, 2.0], "ring"), r"schedule must be a collectives.Schedule"),
    (lambda: fp8.amax_all_reduce(1.0), r"got shape \(\)"),
    (
        lambda: fp8.quantize_scaled([1.0], 0.0),
        r"quantize_scaled: scale must be finite and > 0 "
        r"\(as a float32\), got 0\.0",
    ),
    (lambda: fp8.quantize_scaled([1.0], 1e39), r"scale must be finite and > 0 \(as a float32\)"),
    (
        lambda: fp8.quantize_scaled([1.0, 2.0], [1.0, 2.0, 3.0]),
        r"scale has shape \(3,\), which does not broadcast to the data's shape \(2,\)",
    ),
    (
        lambda: fp8.quantize_scaled([1.0, 2.0], [[1.0]]),
        r"scale has shape \(1, 1\), which does not broadcast to the data's shape \(2,\)",
    ),
    (
        lambda: fp8.dequantize_scaled([1.5], 1.0),
        r"takes uint8 codes \(integers 0\.\.255\), "
        r"got dtype float64",
    ),
    (
        lambda: fp8.mx_quantize(np.ones(4), rule="nearest"),
        r"mx_quantize: rule must be 'ocp' .* or 'ceil' .*, got 'nearest'",
    ),
    (
        lambda: fp8.mx_quantize(np.ones(4), block=0),
        r"mx_quantize: block must be a positive "
        r"integer, got 0",
    ),
    (lambda: fp8.mx_quantize(1.0), r"mx_quantize: x must have at least one axis"),
    (
        lambda: fp8.mx_quantize(np.ones(4), fmt="e4m3fnuz"),
        r"mx_quantize \(MXFP8 elements\) takes one of 'e4m3', 'e5m2', got 'e4m3fnuz'",
    ),
    (
        lambda: fp8.mx_dequantize(np.zeros(40, np.uint8), np.zeros(1, np.uint8)),
        r"codes of shape \(40,\) in blocks of 32 need scale_codes of shape \(2,\), got \(1,\)",
    ),
    (
        lambda: fp8.tile_quantize(np.ones(8), (1, 128)),
        r"tile_quantize: tile \(1, 128\) spans 2 axes but the data has 1",
    ),
    (
        lambda: fp8.tile_quantize(np.ones((2, 2)), (0, 2)),
        r"tile must be a tuple of positive integers such as \(1, 128\), got \(0, 2\)",
    ),
    (
        lambda: fp8.tile_dequantize(np.zeros((2, 256), np.uint8), np.ones((2, 1))),
        r"codes of shape \(2, 256\) in tiles of \(1, 128\) need scales of shape \(2, 2\), "
        r"got \(2, 1\)",
    ),
    (
        lambda: fp8.snr_db([1.0, 2.0], [1.0]),
        r"snr_db: reference has shape \(2,\) but approx has shape \(1,\)",
    ),
    (lambda: fp8.snr_db([], []), r"snr_db: the arrays are empty"),
    (lambda: fp8.relative_error([np.nan], [1.0]), r"must be finite \(no NaN or Inf\)"),
    (
        lambda: fp8.underflow_rate([1.0], -1.0),
        r"underflow_rate: scale must be finite and > 0 \(as a float32\), got -1\.0",
    ),
    (
        lambda: fp8.overflow_rate([1.0, 2.0], [1.0, 2.0, 3.0]),
        r"scale has shape \(3,\), which does not broadcast to x's shape \(2,\)",
    ),
]


@pytest.mark.parametrize("call, message", ERRORS)
def test_errors_name_the_problem(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()


CALLS = {
    "current_scale": (fp8.current_scale, [np.ones(4), "e4m3", 0]),
    "DelayedScaling": (fp8.DelayedScaling, ["e4m3", 16, 0, "max"]),
    "DelayedScaling.update": (lambda a: fp8.DelayedScaling().update(a), [1.0]),
    "delayed_scales": (fp8.delayed_scales, [np.ones(5), "e4m3", 4, 0, "max"]),
    "amax_all_reduce": (fp8.amax_all_reduce, [np.ones(4), cl.algorithms.ring_all_reduce(4)]),
    "quantize_scaled": (fp8.quantize_scaled, [np.ones(4), 2.0, "e4m3", True]),
    "dequantize_scaled": (fp8.dequantize_scaled, [np.zeros(4, np.uint8), 2.0, "e4m3"]),
    "mx_quantize": (fp8.mx_quantize, [np.ones(64), 32, "e4m3", "ocp"]),
    "mx_dequantize": (
        fp8.mx_dequantize,
        [np.zeros(64, np.uint8), np.zeros(2, np.uint8), 32, "e4m3"],
    ),
    "tile_quantize": (fp8.tile_quantize, [np.ones((2, 256)), (1, 128), "e4m3"]),
    "tile_dequantize": (
        fp8.tile_dequantize,
        [np.zeros((2, 256), np.uint8), np.ones((2, 2)), (1, 128), "e4m3"],
    ),
    "snr_db": (fp8.snr_db, [np.ones(4), np.ones(4)]),
    "relative_error": (fp8.relative_error, [np.ones(4), np.ones(4)]),
    "underflow_rate": (fp8.underflow_rate, [np.ones(4), 1.0, "e4m3"]),
    "overflow_rate": (fp8.overflow_rate, [np.ones(4), 1.0, "e4m3"]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_bad_argument_raises_a_collectives_error(name):
    function, args = CALLS[name]
    check_every_bad_argument(name, function, args)
