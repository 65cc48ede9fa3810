"""collectives.grading.tasks.fp8 (earlier collectives.grading.fp8_tasks): the package's answers
to the notebook on FP8
(exercises/source/fp8) and the checks of a learner's codes, values, scales and all-reduced
means, with their messages.

Values are derived by hand from the OCP OFP8 tables (E4M3: bias 7, max 448 = 0x7E, smallest
subnormal 2**-9), Transformer Engine's delayed-scaling rules and FP8-LM's all-reduce; the
pipeline test (tests/course/test_grading_pipeline.py -k fp8) runs them end to end through nbgrader.
"""

import importlib
import math

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading import check_reference, recheck
from collectives.grading.tasks import fp8 as fp8_tasks
from collectives.grading.tasks.fp8 import (check_delayed_scales, check_e4m3_codes,
                                           check_e4m3_values, check_flushing_ranks,
                                           check_fp8_all_reduce, delayed_scales_reference,
                                           flushing_ranks, fp8_all_reduce_reference,
                                           fp8_error_bound, spec_decode_e4m3, spec_encode_e4m3)

CODES = np.arange(256)
#: the finite E4M3 magnitudes, 0 to 448, and the ties between neighbours (464 above 448)
MAGNITUDES = spec_decode_e4m3(np.arange(0x7F))
TIES = np.append((MAGNITUDES[1:] + MAGNITUDES[:-1]) / 2, 464.0)


def nudged(values):
    """Each value, and the floats just below and above it."""
    v = np.asarray(values, dtype=np.float64)
    return np.concatenate([v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf)])


def same_codes(a, b):
    """Codes equal, NaN codes (0x7F, 0xFF) counted as one."""
    a, b = np.asarray(a).astype(int), np.asarray(b).astype(int)
    return (a == b) | (((a & 0x7F) == 0x7F) & ((b & 0x7F) == 0x7F))


# ---- first principles: the OFP8 tables ------------------------------------------------------

def test_spec_decode_by_hand():
    # 0 0111 000 = 2**0; 0 1111 110 = 2**8 * 1.75; 0 0000 001 = 2**-6 / 8; 0 0001 000 = 2**-6
    values = spec_decode_e4m3([0x38, 0x7E, 0x01, 0x08, 0x07, 0xB8, 0x00])
    assert values.tolist() == [1.0, 448.0, 2.0**-9, 2.0**-6, 7 * 2.0**-9, -1.0, 0.0]
    negative_zero = spec_decode_e4m3([0x80])[0]
    assert negative_zero == 0 and np.signbit(negative_zero)
    assert np.isnan(spec_decode_e4m3([0x7F, 0xFF])).all()
    # 126 finite magnitudes above zero, each code one step up: 253 distinct values
    assert np.all(np.diff(MAGNITUDES) > 0) and len(set(spec_decode_e4m3(CODES)[
        ~np.isnan(spec_decode_e4m3(CODES))].tolist())) == 253


def test_spec_decode_is_the_packages():
    ours = spec_decode_e4m3(CODES)
    theirs = cl.fp8.decode(CODES.astype(np.uint8), "e4m3").astype(np.float64)
    assert np.array_equal(ours, theirs, equal_nan=True)
    numbers = ~np.isnan(ours)                      # -0.0 for 0x80 in both; NaN's sign is moot
    assert np.array_equal(np.signbit(ours[numbers]), np.signbit(theirs[numbers]))


def test_spec_encode_by_hand():
    # ties to even: 1.0625 between 1.0 (M=000) and 1.125 (001) -> 1.0; 1.1875 -> 1.25 (010);
    # 3 * 2**-10 between the subnormals 1 and 2 -> 2; 2**-10 between 0 and 1 -> 0; 464
    # between 448 (110) and 480 (111, NaN) -> 448; above it overflow
    x = [1.0625, 1.1875, 3 * 2.0**-10, 2.0**-10, 464.0, 465.0, -1e-9, -0.0, 0.0]
    assert spec_encode_e4m3(x).tolist() == [0x38, 0x3A, 0x02, 0x00, 0x7E, 0x7F, 0x80, 0x80, 0x00]
    assert spec_encode_e4m3(x, True).tolist()[5] == 0x7E
    special = [np.inf, -np.inf, np.nan, 1e300, -1e300]
    assert spec_encode_e4m3(special).tolist() == [0x7F, 0xFF, 0x7F, 0x7F, 0xFF]
    assert spec_encode_e4m3(special, True).tolist() == [0x7E, 0xFE, 0x7F, 0x7E, 0xFE]


@pytest.mark.parametrize("saturate", [False, True])
def test_spec_encode_is_the_packages(saturate):
    rng = np.random.default_rng(1)
    x = np.concatenate([
        nudged(MAGNITUDES), nudged(TIES), -nudged(TIES), [480.0, 1e6, np.inf, -np.inf, np.nan],
        rng.standard_normal(20000) * 10.0 ** rng.uniform(-5, 3, 20000), [5e-324, -5e-324]])
    assert same_codes(spec_encode_e4m3(x, saturate), cl.fp8.encode(x, "e4m3", saturate)).all()


def test_spec_encode_is_ml_dtypes_on_float32():
    # ml_dtypes 0.6 casts without saturating; a float32 input is rounded once (a float64 one
    # is rounded to float32 first, twice)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(2)
    x = np.concatenate([nudged(TIES).astype(np.float32),
                        (rng.standard_normal(20000) * 10.0 ** rng.uniform(-5, 3, 20000))
                        .astype(np.float32)])
    with np.errstate(over="ignore"):
        theirs = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert same_codes(spec_encode_e4m3(x), theirs).all()


# ---- Task 1: the checks of decoding and encoding -------------------------------------------

def test_the_packages_values_and_codes_pass():
    assert check_e4m3_values(cl.fp8.decode(CODES.astype(np.uint8), "e4m3"), "d", CODES) == 1.0
    x = nudged(TIES).tolist() + [np.nan, np.inf, -0.0]
    for saturate in (False, True):
        codes = cl.fp8.encode(x, "e4m3", saturate)
        assert check_e4m3_codes(codes, "e", x, saturate) == 1.0
        # the other NaN code, ints in a list or any integer dtype will do
        other_nan = np.where(codes == 0x7F, 0xFF, codes)
        assert check_e4m3_codes(other_nan.tolist(), "e", x, saturate) == 1.0
        assert check_e4m3_codes(codes.astype(np.int64), "e", x, saturate) == 1.0


@pytest.mark.parametrize("code, value, text", [
    (0x01, 0.0087890625, "; an exponent field of 0 is subnormal: no implicit leading 1"),
    (0x80, 0.0, "; 0x80 is negative zero, -0.0 (np.signbit tells them apart)"),
    (0xFF, -480.0, "; S.1111.111 (0x7F and 0xFF) is NaN in E4M3, which has no infinities"),
    (0xB8, 1.0, "; the sign is bit 7"),
])
def test_a_wrong_value_is_named_with_why(code, value, text):
    values = spec_decode_e4m3(CODES)
    values[code] = value
    with pytest.raises(AssertionError) as info:
        check_e4m3_values(values, "decode_e4m3(codes)", CODES)
    message = str(info.value)
    assert message.startswith(f"decode_e4m3(codes): code {code:#04x} (bits {code:08b}) gives "
                              f"{value!r}, expected ")
    assert f"= collectives.fp8.decode({code:#04x}, 'e4m3'){text}" in message


@pytest.mark.parametrize("x, saturate, code, text", [
    (1.0625, False, 0x39, "; |x| lies exactly halfway between 1.0 and 1.125: a tie rounds to "
                          "the even code (mantissa's last bit 0)"),
    (464.0, True, 0x7F, "; |x| lies exactly halfway between 448.0 and 480.0: a tie"),
    (2.0**-9, False, 0x00, "; it is below the smallest normal value 2**-6 = 0.015625: a "
                           "subnormal, a multiple of 2**-9, with exponent field 0"),
    (-1e-9, False, 0x00, "; it rounds to zero, and the sign stays: negative zero is 0x80"),
    (465.0, False, 0x7E, "; it rounds beyond the largest value 448 (anything above 464 does): "
                         "without saturation that is NaN (0x7F or 0xFF)"),
    (-465.0, True, 0xFF, "with saturate=True that is +-448 (0x7E / 0xFE)"),
    (np.inf, False, 0x7E, "; E4M3 has no infinity: without saturation it is NaN"),
    (np.inf, True, 0x7F, "; E4M3 has no infinity: with saturate=True it becomes +-448"),
    (np.nan, True, 0x7E, "; NaN encodes as NaN (0x7F or 0xFF)"),
])
def test_a_wrong_code_is_named_with_why(x, saturate, code, text):
    xs = [1.0, x]
    codes = spec_encode_e4m3(xs, saturate)
    codes[1] = code
    with pytest.raises(AssertionError) as info:
        check_e4m3_codes(codes, "encode_e4m3(x)", xs, saturate)
    message = str(info.value)
    assert message.startswith(f"encode_e4m3(x): x[1] = {float(x)!r} gives {code:#04x} (")
    assert f"= collectives.fp8.encode({float(x)!r}, 'e4m3', saturate={saturate})" in message
    assert text in message


@pytest.mark.parametrize("answer, error, text", [
    (None, GradingError, "e is None: nothing was returned (did you forget `return`?)"),
    (np.array([56.0, 58.0]), GradingError, "e is an array of dtype float64; expected uint8 codes "
                                           "(integers 0..255): codes are integers 0..255, return "
                                           "them as uint8 (`.astype(np.uint8)`)"),
    (np.array([True, False]), GradingError, "e is an array of booleans"),
    (np.array([56], np.uint8), GradingError, "e has shape (1,); expected shape (2,)"),
    ("0x38", GradingError, "e is the string '0x38'; expected a numpy array"),
    ([56, 256], AssertionError, "e: x[1] = 1.1875 gives 256, which is not a code"),
])
def test_the_form_of_codes(answer, error, text):
    with pytest.raises(error) as info:
        check_e4m3_codes(answer, "e", [1.0, 1.1875], False)
    assert str(info.value).startswith(text)


def test_a_package_at_odds_with_the_tables_is_a_bug_in_the_test(monkeypatch):
    monkeypatch.setattr(cl.fp8, "encode", lambda x, fmt, saturate=False: np.zeros(2, np.uint8))
    with pytest.raises(GradingError, match=r"collectives\.fp8\.encode and the OFP8 rules "
                                           r"disagree \(a bug in the test or the package, or "
                                           r"collectives\.fp8 was changed in this notebook\)"):
        check_e4m3_codes([0x38, 0x3A], "e", [1.0, 1.1875], False)


# ---- Task 2: delayed scaling ----------------------------------------------------------------

def test_delayed_scales_by_hand():
    # the notebook's example: step 0 knows nothing (1.0); step 1 knows amax 2 (448 / 2);
    # steps 2 and 3 have 4 in their window of two; step 4 sees only the 1.0s
    assert delayed_scales_reference([2.0, 4.0, 1.0, 1.0, 1.0], 2).tolist() == [
        1.0, 224.0, 112.0, 112.0, 448.0]
    # margin 1 halves every scale it computes (not the starting 1.0); zeros keep the scale
    assert delayed_scales_reference([0.0, 0.0, 3.5, 0.0], 1, 1).tolist() == [
        1.0, 1.0, 1.0, 64.0]
    # E5M2: 57344 / 2**2 / 1024
    assert delayed_scales_reference([1024.0, 1.0], 4, 2, "e5m2").tolist() == [1.0, 14.0]


def test_delayed_scales_pass_in_float64_and_fail_with_why():
    amaxes = [1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0]
    # float64 by hand: within 1e-6 of TE's float32
    assert check_delayed_scales([1.0, 224.0, 224.0, 28.0, 28.0, 28.0, 224.0], "s", amaxes, 3,
                                1) == 1.0
    call = ("collectives.fp8.delayed_scales([1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0], fmt='e4m3', "
            "history_len=3, margin=1)")
    with pytest.raises(AssertionError) as info:
        check_delayed_scales([1.0, 448.0, 448.0, 56.0, 56.0, 56.0, 448.0], "s", amaxes, 3, 1)
    assert str(info.value) == (f"s: the scale at step 1 is 448.0, expected 224.0 = {call}[1]; "
                               "yours is 2**1 times that: the margin divides the scale by "
                               "2**margin")
    with pytest.raises(AssertionError, match=r"step 2 is 28\.0, expected 224\.0 = .*\[2\]; that "
                                             r"is the scale of this step's own amax"):
        check_delayed_scales([1.0, 224.0, 28.0, 28.0, 28.0, 224.0, 224.0], "s", amaxes, 3, 1)
    with pytest.raises(AssertionError, match=r"step 6 is 28\.0, expected 224\.0 = .*; the "
                                             r"history holds the amaxes of the last 3 steps"):
        check_delayed_scales([1.0, 224.0, 224.0, 28.0, 28.0, 28.0, 28.0], "s", amaxes, 3, 1)
    with pytest.raises(GradingError, match=r"s has shape \(6,\); expected shape \(7,\)"):
        check_delayed_scales([1.0] * 6, "s", amaxes, 3, 1)


# ---- Task 3: the FP8 all-reduce -------------------------------------------------------------

EXAMPLE = [[1.0, -0.3], [4.0, 0.01]]


def test_the_all_reduce_by_hand():
    # shared scale 448 / 4 = 112, mu = 1/2: rank 0 casts [56, -16.8] -> [56, -16], rank 1
    # [224, 0.56] -> [224, 0.5625]; the sums [280, -15.4375] are stored as [288, -15] (spacing
    # 32 above 256, 1 between 8 and 16); divided by N mu s = 112
    assert fp8_all_reduce_reference(EXAMPLE, 0.5) == pytest.approx([288 / 112, -15 / 112],
                                                                    rel=1e-7)
    assert check_fp8_all_reduce([288 / 112, -15 / 112], "r", EXAMPLE, 0.5) == 1.0
    # the bound: the casts err by 0, 0.8, 0, 0.0025 and the sums by 8, 0.4375, all within
    # |x| / 16 (or 2**-10) each
    bound = fp8_error_bound(EXAMPLE, 0.5)
    assert bound == pytest.approx([(56 / 16 + 224 / 16 + 280 / 16) / 112,
                                   (16.8 / 16 + 0.56 / 16 + 15.4375 / 16) / 112])


@pytest.mark.parametrize("answer, text", [
    ([2.5, -0.145], "; that is the exact mean: the gradients must travel as FP8 codes"),
    ([576 / 112, -30 / 112], "; that is the sum: what a rank holds stands for the mean, the sum "
                             "over 2 ranks divided by 2"),
    ([1.0, -0.13392857142857142], "; that is what the largest of the ranks' scales gives"),
    ([288 / 224, -15 / 224], "; yours is 0.5 times that: the sum stands for mu * N * s times"),
])
def test_the_usual_mistakes_are_named(answer, text):
    with pytest.raises(AssertionError) as info:
        check_fp8_all_reduce(answer, "r", EXAMPLE, 0.5)
    message = str(info.value)
    assert message.startswith(f"r: element 0 is {answer[0]!r}, expected 2.5714285373687744 = "
                              "collectives.fp8.fp8_all_reduce([[1.0, -0.3], [4.0, 0.01]], "
                              "collectives.grading.tasks.fp8.chain_all_reduce(2), fmt='e4m3', "
                              "scaling='auto', mu=0.5, quantize='per_hop', accumulate='fp8')"
                              ".output[:, 0] (shared scale 112)")
    assert message.endswith(text) or text in message


def test_a_sum_not_stored_in_fp8_is_named():
    # three ranks, mu = 1/4: the exact sums of the casts, not cast again
    grads = [[0.5, -0.25, 0.125], [-3.0, 2.0, 0.75], [0.001, -0.002, 0.0005]]
    unstored = fp8_tasks._by_hand(np.array(grads), 0.25, 448 / 3, per_hop=False,
                                  recast=False)[0]
    assert not np.allclose(unstored, fp8_all_reduce_reference(grads, 0.25), rtol=1e-3)
    with pytest.raises(AssertionError, match="; that is the exact sum of the casts: every "
                                             "partial sum, the last one too, is an E4M3 number"):
        check_fp8_all_reduce(unstored, "r", grads, 0.25)


THREE = [[6.0, 1.5], [0.25, 3.0], [0.3, 0.1]]


def test_every_partial_sum_is_cast_by_hand():
    # amaxes 6, 3, 0.3: shared scale 448 / 6; mu = 1/2: multiplier 37.333. Casts (E4M3 steps:
    # 16 in [128, 256), 1 in [8, 16), 0.25 in [2, 4)): rank 0 [224, 56] (exact), rank 1
    # [9.333 -> 9, 112], rank 2 [11.2 -> 11, 3.733 -> 3.75].
    # In rank order, every partial sum cast: 224 + 9 = 233 -> 240, 240 + 11 = 251 -> 256;
    # 56 + 112 = 168, a tie of 160 (1.010b) and 176 (1.011b): 160, + 3.75 = 163.75 -> 160.
    # Divided by N mu s = 3 x 37.333 = 112: [256/112, 160/112] = [2.2857, 1.4286]
    want = [256 / 112, 160 / 112]
    assert fp8_all_reduce_reference(THREE, 0.5) == pytest.approx(want, rel=1e-7)
    assert check_fp8_all_reduce(want, "r", THREE, 0.5) == 1.0
    # the bound: the input casts' half steps |x| / 16 (224, 9.333, 11.2 | 56, 112, 3.733) and
    # the partial sums' (233, 251 | 168, 163.75), over 112
    bound = fp8_error_bound(THREE, 0.5)
    assert bound == pytest.approx([(224 + 28 / 3 + 11.2 + 233 + 251) / 16 / 112,
                                   (56 + 112 + 56 / 15 + 168 + 163.75) / 16 / 112], rel=1e-12)
    # casting once instead: 224 + 9 + 11 = 244 -> 240; 56 + 112 + 3.75 = 171.75 -> 176
    once = [240 / 112, 176 / 112]
    with pytest.raises(AssertionError, match="; that is the sum of the casts rounded to E4M3 "
                                             "once: with an FP8 datatype NCCL's ring and "
                                             "tree kernels narrow every partial sum back to "
                                             "E4M3"):
        check_fp8_all_reduce(once, "r", THREE, 0.5)


def test_chain_all_reduce():
    # rank r sends to r + 1 at step r (reducing), the last rank then copies to all: n steps
    for n in (1, 2, 5):
        s = fp8_tasks.chain_all_reduce(n)
        assert (s.collective, s.n_ranks, s.n_chunks, s.n_steps) == ("all_reduce", n, 1,
                                                                   n if n > 1 else 0)
        x = np.arange(n, dtype=np.float64)[:, None] + 1
        assert cl.simulate(s, x).tolist() == [[n * (n + 1) / 2]] * n
    with pytest.raises(GradingError, match="chain_all_reduce needs at least one rank"):
        fp8_tasks.chain_all_reduce(0)


def test_own_scales_are_named():
    # rank 0 alone: scale 448 * mu = 224, -0.3 * 224 = -67.2 -> -64; rank 1: 56, as above
    own = [(224 / 224 + 224 / 56) / 2, (-64 / 224 + 0.5625 / 56) / 2]
    with pytest.raises(AssertionError, match="that is what each rank's own scale gives"):
        check_fp8_all_reduce(own, "r", EXAMPLE, 0.5)


@pytest.mark.parametrize("n, mu", [(2, 0.5), (4, 0.25), (8, 1 / 8), (8, 0.5), (16, 1.0),
                                   (3, 1 / 3)])
def test_the_package_is_within_the_bound_where_the_sum_does_not_saturate(n, mu):
    rng = np.random.default_rng(n)
    grads = (rng.standard_normal((n, 64)) * 10.0 ** rng.uniform(-4, 1, (n, 1))).astype(np.float32)
    grads[0, 0] = 0.0
    mean = grads.astype(np.float64).mean(axis=0)
    got = fp8_all_reduce_reference(grads, mu)
    bound = fp8_error_bound(grads, mu)
    ok = np.isnan(bound) | (np.abs(got - mean) <= bound)
    assert ok.all()
    if mu * n <= 1:            # pre-scaling: no sum can saturate
        assert not np.isnan(bound).any()
    assert check_fp8_all_reduce(got, "r", grads, mu) == 1.0


def test_post_scaling_saturates_the_sums():
    grads = [[1.0, 0.5]] * 16
    # every rank casts 448 (and 224); the sums 7168 and 3584 are stored as 448: the mean
    # comes back as 448 / (16 * 448) = 1/16, not 1; the bound does not apply there
    assert fp8_all_reduce_reference(grads, 1.0).tolist() == [1 / 16, 1 / 16]
    assert np.isnan(fp8_error_bound(grads, 1.0)).all()
    assert check_fp8_all_reduce([1 / 16, 1 / 16], "r", grads, 1.0) == 1.0


def test_the_form_of_an_all_reduced_mean():
    with pytest.raises(GradingError, match=r"r has shape \(2, 2\); expected shape \(2,\)"):
        check_fp8_all_reduce([[1.0, 2.0], [1.0, 2.0]], "r", EXAMPLE, 0.5)
    with pytest.raises(GradingError, match="not one row per rank, not all zero"):
        check_fp8_all_reduce([0.0, 0.0], "r", [[0.0, 0.0]], 0.5)


# ---- Task 4: when pre-scaling flushes a gradient --------------------------------------------

@pytest.mark.parametrize("ratio, fmt, n", [
    (1e-3, "e4m3", 459),           # 448e-3 / N <= 2**-10: N >= 458.752
    (1e-3, "e5m2", 7516193),       # 57.344 * 2**17 = 7516192.768
    (2.0**-4, "e4m3", 28672),      # 28 / 28672 = 2**-10 exactly: the tie goes to 0
    (1.0, "e4m3", 458752),         # 448 * 1024, a tie too
    (2.0**-10, "e5m2", 7340032),   # 56 * 2**17, a tie
    (1e-5, "e4m3", 5),
    (1e-6, "e4m3", 1),             # 4.48e-4 < 2**-10 = 9.77e-4 on one rank already
])
def test_flushing_ranks_by_hand(ratio, fmt, n):
    assert flushing_ranks(ratio, fmt) == n
    top = cl.fp8.max_value(fmt) * ratio
    assert cl.fp8.encode(top / n, fmt) & 0x7F == 0
    if n > 1:
        assert cl.fp8.encode(top / (n - 1), fmt) & 0x7F != 0


def test_flushing_ranks_checks_and_hints():
    assert check_flushing_ranks(459, "f", 1e-3, "e4m3") == 1.0
    assert check_flushing_ranks(459.0, "f", 1e-3, "e4m3") == 1.0
    with pytest.raises(AssertionError, match=r"^f is 28673, expected 28672 = collectives\."
                                             r"grading\.flushing_ranks\(0\.0625, 'e4m3'\); with "
                                             r"28672 ranks the cast sees exactly half"):
        check_flushing_ranks(28673, "f", 2.0**-4, "e4m3")
    with pytest.raises(AssertionError, match="a value below the smallest subnormal is not zero"):
        check_flushing_ranks(230, "f", 1e-3, "e4m3")
    with pytest.raises(AssertionError, match="that is the answer in e4m3, not e5m2$"):
        check_flushing_ranks(459, "f", 1e-3, "e5m2")
    with pytest.raises(AssertionError, match="^f is 458.752, not a whole number of ranks$"):
        check_flushing_ranks(458.752, "f", 1e-3, "e4m3")
    with pytest.raises(GradingError, match=r"ratio must be in \(0, 1\]"):
        flushing_ranks(2.0)


# ---- registration: the re-check finds them by name, and a reload restores them ------------

def test_every_name_is_exported_and_resolvable():
    for name in ("check_e4m3_values", "check_e4m3_codes", "check_delayed_scales",
                 "check_fp8_all_reduce", "flushing_ranks", "check_flushing_ranks"):
        assert getattr(cl.grading, name) is getattr(fp8_tasks, name)
        assert getattr(cl.grading.fp8_tasks, name) is getattr(fp8_tasks, name)  # the old module
        assert name in cl.grading.__all__ and name in fp8_tasks.__all__


def test_the_checks_work_by_name_in_the_re_check():
    check_reference(1.0, "e", "grading.check_e4m3_codes", ([0x38, 0x3A], "e", [1.0, 1.1875],
                                                            False))
    recheck(("check_reference", (1.0, "e", "grading.check_e4m3_codes",
                                 (np.array([0x38, 0x7F], np.uint8), "e", [1.0, math.inf],
                                  False))),
            ("check_reference", (1.0, "r", "grading.check_fp8_all_reduce",
                                 ([288 / 112, -15 / 112], "r", EXAMPLE, 0.5))),
            ("check_reference", (1.0, "f", "grading.check_flushing_ranks", (459, "f", 1e-3))))
    with pytest.raises(AssertionError, match=r"^s: the scale at step 4 is 112\.0, expected "
                                             r"448\.0 = collectives\.fp8\.delayed_scales"):
        recheck(("check_reference", (1.0, "s", "grading.check_delayed_scales",
                                     ([1.0, 224.0, 112.0, 112.0, 112.0], "s",
                                      [2.0, 4.0, 1.0, 1.0, 1.0], 2))))


def test_a_reload_restores_what_a_notebook_patched():
    # as a notebook would (no monkeypatch: the reload itself must undo it)
    cl.grading.fp8_tasks.check_e4m3_codes = lambda *args, **kwargs: 1.0
    cl.grading.tasks.fp8.check_e4m3_codes = lambda *args, **kwargs: 1.0
    cl.grading.flushing_ranks = lambda *args: 0
    grading = importlib.reload(cl.grading)
    assert grading.flushing_ranks(1e-3) == 459
    with pytest.raises(AssertionError):
        grading.fp8_tasks.check_e4m3_codes([0x39], "e", [1.0625], False)
    with pytest.raises(AssertionError):
        grading.tasks.fp8.check_e4m3_codes([0x39], "e", [1.0625], False)
