"""The first half of the graded notebook on FP8 (``exercises/source/fp8``), E4M3 by hand: the
OCP OFP8 tables written out without :mod:`collectives.fp8`, and the checks of a learner's
decoded values and codes, which :func:`~collectives.grading.check_reference` runs by name in
the isolated re-check (``check_reference(1.0, what, "grading.check_e4m3_codes", (codes, what,
x, saturate))``: each check raises with its own message, or returns 1.0).

Every expected value comes from the package (:func:`collectives.fp8.encode` and
:func:`collectives.fp8.decode`), and each check also holds it to first principles:
:func:`spec_decode_e4m3` and :func:`spec_encode_e4m3` read the OCP OFP8 tables (revision 1.0);
where the package and first principles disagree on a test's case, the check raises
:class:`~collectives.GradingError` (a bug in the test or the package, not in the answer).
The helpers that read a learner's arrays (:func:`input_array`, :func:`answer_array`) serve
the notebook's other checks too (:mod:`.fp8`, :mod:`.fp8_retired`).

The checks name the first element that is wrong, what it is and what it should be, and, when
they can tell, why ("a tie rounds to the even code"). NaN codes: E4M3 has two, ``0x7F`` and
``0xFF``; either is accepted wherever the answer is NaN (libraries differ; OFP8 keeps the
sign, which carries no meaning for NaN).

Left out: E5M2 and the other formats (the notebook's learners encode E4M3 only).
"""

import math

import numpy as np

from ...errors import GradingError
from ..checks import in_words, show

__all__ = [
    "E4M3_MAX",
    "E4M3_MIN_SUBNORMAL",
    "spec_decode_e4m3",
    "spec_encode_e4m3",
    "check_e4m3_values",
    "check_e4m3_codes",
    "disagreement",
    "input_array",
    "answer_array",
    "is_nan_code",
    "same_code",
]

#: the largest finite E4M3 value (S.1111.110) and the smallest subnormal (S.0000.001), OFP8
E4M3_MAX = 448.0
E4M3_MIN_SUBNORMAL = 2.0**-9
_NAN_CODES = (0x7F, 0xFF)


# ---- first principles: OCP OFP8 rev 1.0, E4M3 ------------------------------------------------


def spec_decode_e4m3(codes):
    """The float64 values of E4M3 codes by the OFP8 table, written without
    :mod:`collectives.fp8`: sign bit 7, exponent field bits 6-3 (bias 7), mantissa bits 2-0;
    exponent field 0 is subnormal (``M/8 * 2**-6``), S.1111.111 is NaN."""
    c = np.asarray(codes).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent, mantissa = (c >> 3) & 0xF, c & 0x7
    magnitude = np.where(
        exponent == 0, mantissa * 2.0**-9, (8 + mantissa) * np.exp2(exponent - 10.0)
    )  # (1 + M/8) 2^(E-7)
    values = sign * magnitude
    return np.where((c & 0x7F) == 0x7F, np.nan, values)


#: the finite E4M3 magnitudes, codes 0x00 to 0x7E, ascending (consecutive codes, values)
_MAGNITUDES = spec_decode_e4m3(np.arange(0x7F))
#: where a value beyond 448 would be (mantissa 111 of the top binade): its midpoint with 448,
#: 464, is a tie that goes to the even code 0x7E; anything above rounds to it: overflow
_BEYOND_MAX = 480.0


def spec_encode_e4m3(x, saturate=False):
    """E4M3 codes of ``x`` by the OFP8 rules, written without :mod:`collectives.fp8`: the
    nearest finite value of the table, a tie to the even code, the sign kept (also for zero);
    rounding to 480 or beyond (above 464) and +-Inf overflow: NaN (``0x7F`` with the sign),
    or +-448 with ``saturate``; NaN gives NaN."""
    v = np.asarray(x, dtype=np.float64)
    a = np.abs(v)
    finite = np.isfinite(v)
    a_f = np.where(finite, a, 0.0)
    lo = np.clip(np.searchsorted(_MAGNITUDES, a_f, side="right") - 1, 0, 0x7E)
    hi = lo + 1
    upper = np.where(hi <= 0x7E, _MAGNITUDES[np.minimum(hi, 0x7E)], _BEYOND_MAX)
    below, above = a_f - _MAGNITUDES[lo], upper - a_f  # exact (Sterbenz) where it matters
    up = (above < below) | ((above == below) & (hi % 2 == 0))
    code = np.where(up, hi, lo)
    overflow = (code > 0x7E) | np.isinf(v)
    sign = np.where(np.signbit(v), 0x80, 0)
    code = np.where(overflow, 0x7E if saturate else 0x7F, code)
    code = np.where(np.isnan(v), 0x7F, code)
    return (code | sign).astype(np.uint8)


def disagreement(what):
    """The error when the package and first principles disagree on a test's case."""
    return GradingError(
        f"{what} disagree (a bug in the test or the package, or collectives.fp8 "
        "was changed in this notebook)"
    )


def is_nan_code(c):
    """Whether the E4M3 code ``c`` is one of the two NaN codes, S.1111.111."""
    return int(c) & 0x7F == 0x7F


def _code(c):
    """``0x02 (0.00390625)``: a code and the value it stands for."""
    c = int(c)
    if is_nan_code(c):
        return f"{c:#04x} (NaN)"
    return f"{c:#04x} ({float(spec_decode_e4m3(c))!r})"


# ---- reading a learner's arrays --------------------------------------------------------------


def input_array(x, what):
    """A test's input as a float64 array (a bug in the test if it is none)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise GradingError(
            f"the test's input for {what} is {show(x)}, not numbers (a bug in the test)"
        ) from None
    return arr


def answer_array(value, what, shape, kinds, expected_kind):
    """A learner's answer as a numpy array of ``shape`` whose dtype kind is in ``kinds``;
    a :class:`GradingError` saying what it is instead."""
    if value is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value)
        except (TypeError, ValueError):
            raise GradingError(
                f"{what} is {in_words(value)}, which is not an array of {expected_kind}"
            ) from None
    if not isinstance(value, np.ndarray):
        raise GradingError(
            f"{what} is {in_words(value)}; expected a numpy array of {expected_kind}"
        )
    if value.dtype.kind == "b":
        raise GradingError(f"{what} is an array of booleans; expected {expected_kind}")
    if value.dtype.kind not in kinds:
        hint = ""
        if "f" not in kinds and value.dtype.kind == "f":
            hint = ": codes are integers 0..255, return them as uint8 (`.astype(np.uint8)`)"
        raise GradingError(
            f"{what} is an array of dtype {value.dtype}; expected {expected_kind}{hint}"
        )
    if value.shape != tuple(shape):
        raise GradingError(
            f"{what} has shape {value.shape}; expected shape {tuple(shape)} "
            "(one answer per input value)"
        )
    return value


# ---- Task 1 (a): decoding --------------------------------------------------------------------


def _decode_hint(c, got):
    exponent, mantissa = (c >> 3) & 0xF, c & 0x7
    if is_nan_code(c):
        return "; S.1111.111 (0x7F and 0xFF) is NaN in E4M3, which has no infinities"
    if c == 0x80:
        return "; 0x80 is negative zero, -0.0 (np.signbit tells them apart)"
    if exponent == 0 and mantissa:
        return (
            "; an exponent field of 0 is subnormal: no implicit leading 1, and the "
            "exponent of the smallest normal binade, 2**-6"
        )
    if got == -float(spec_decode_e4m3(c)):
        return "; the sign is bit 7"
    return ""


def check_e4m3_values(values, what, codes):
    """Check a learner's decoding ``values`` of the E4M3 ``codes`` against
    :func:`collectives.fp8.decode` (and :func:`spec_decode_e4m3`): NaN where NaN, otherwise
    equal, with negative zero for ``0x80``. Returns 1.0."""
    from ...fp8 import decode

    c = np.asarray(codes).astype(np.int64)
    got = answer_array(values, what, c.shape, "fiu", "numbers (float64)").astype(np.float64)
    want = decode(c.astype(np.uint8), "e4m3").astype(np.float64)
    spec = spec_decode_e4m3(c)
    if not np.array_equal(want, spec, equal_nan=True):
        raise disagreement("collectives.fp8.decode and the OFP8 table")
    for i in range(c.size):
        g, w = float(got.flat[i]), float(want.flat[i])
        ok = (math.isnan(g) and math.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w))
        if not ok:
            code = int(c.flat[i])
            raise AssertionError(
                f"{what}: code {code:#04x} (bits {code:08b}) gives {g!r}, expected {w!r} = "
                f"collectives.fp8.decode({code:#04x}, 'e4m3'){_decode_hint(code, g)}"
            )
    return 1.0


# ---- Task 1 (b): encoding --------------------------------------------------------------------


def _encode_hint(x, expected, saturate):
    a = abs(x)
    if math.isnan(x):
        return "; NaN encodes as NaN (0x7F or 0xFF)"
    if math.isinf(x):
        return (
            "; E4M3 has no infinity: with saturate=True it becomes +-448 (0x7E / 0xFE)"
            if saturate
            else "; E4M3 has no infinity: without saturation it is NaN (0x7F or 0xFF)"
        )
    if a > 464.0:
        return (
            "; it rounds beyond the largest value 448 (anything above 464 does): with "
            "saturate=True that is +-448 (0x7E / 0xFE)"
            if saturate
            else "; it rounds beyond the largest value 448 (anything above 464 does): without "
            "saturation that is NaN (0x7F or 0xFF)"
        )
    i = int(np.searchsorted(_MAGNITUDES, a, side="right") - 1)
    lower = float(_MAGNITUDES[i])
    upper = float(_MAGNITUDES[i + 1]) if i < 0x7E else _BEYOND_MAX
    if a != lower and a - lower == upper - a:
        return (
            f"; |x| lies exactly halfway between {lower!r} and {upper!r}: a tie rounds to "
            "the even code (mantissa's last bit 0)"
        )
    if expected & 0x7F == 0:
        return (
            "; it rounds to zero, and the sign stays: negative zero is 0x80"
            if expected & 0x80
            else "; it rounds to zero"
        )
    if expected & 0x78 == 0:
        return (
            "; it is below the smallest normal value 2**-6 = 0.015625: a subnormal, a "
            "multiple of 2**-9, with exponent field 0"
        )
    return ""


def check_e4m3_codes(codes, what, x, saturate):
    """Check a learner's E4M3 ``codes`` of the values ``x`` (saturating or not) against
    :func:`collectives.fp8.encode` (and :func:`spec_encode_e4m3`): bit-exact, except that
    NaN may be either NaN code. Returns 1.0."""
    from ...fp8 import encode

    xs = input_array(x, what)
    got = answer_array(codes, what, xs.shape, "iu", "uint8 codes (integers 0..255)")
    want = encode(xs, "e4m3", saturate=bool(saturate))
    spec = spec_encode_e4m3(xs, bool(saturate))
    if not all(same_code(w, s) for w, s in zip(want.flat, spec.flat)):
        raise disagreement("collectives.fp8.encode and the OFP8 rules")
    for i in range(xs.size):
        g, w, v = int(got.flat[i]), int(want.flat[i]), float(xs.flat[i])
        if not 0 <= g <= 255:
            raise AssertionError(
                f"{what}: x[{i}] = {v!r} gives {g}, which is not a code (codes are 0..255)"
            )
        if not same_code(g, w):
            raise AssertionError(
                f"{what}: x[{i}] = {v!r} gives {_code(g)}, expected {_code(w)} = "
                f"collectives.fp8.encode({v!r}, 'e4m3', saturate={bool(saturate)})"
                f"{_encode_hint(v, w, bool(saturate))}"
            )
    return 1.0


def same_code(a, b):
    """Whether two E4M3 codes are the same answer: equal, or both NaN."""
    a, b = int(a), int(b)
    return a == b or (is_nan_code(a) and is_nan_code(b))
