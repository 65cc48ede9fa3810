"""collectives.grading.tasks.fp8_codec: the OFP8 tables written out again, and the checks of a
learner's E4M3 values and codes, with their messages (moved from test_fp8.py with the code).

Values are derived by hand from the OCP OFP8 tables (E4M3: bias 7, max 448 = 0x7E, smallest
subnormal 2**-9); the pipeline test (tests/course/test_grading_pipeline.py -k fp8) runs them end
to end through nbgrader.
"""

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading.tasks.fp8_codec import (
    check_e4m3_codes,
    check_e4m3_values,
    spec_decode_e4m3,
    spec_encode_e4m3,
)

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
    assert (
        np.all(np.diff(MAGNITUDES) > 0)
        and len(set(spec_decode_e4m3(CODES)[~np.isnan(spec_decode_e4m3(CODES))].tolist())) == 253
    )


def test_spec_decode_is_the_packages():
    ours = spec_decode_e4m3(CODES)
    theirs = cl.fp8.decode(CODES.astype(np.uint8), "e4m3").astype(np.float64)
    assert np.array_equal(ours, theirs, equal_nan=True)
    numbers = ~np.isnan(ours)  # -0.0 for 0x80 in both; NaN's sign is moot
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
    x = np.concatenate(
        [
            nudged(MAGNITUDES),
            nudged(TIES),
            -nudged(TIES),
            [480.0, 1e6, np.inf, -np.inf, np.nan],
            rng.standard_normal(20000) * 10.0 ** rng.uniform(-5, 3, 20000),
            [5e-324, -5e-324],
        ]
    )
    assert same_codes(spec_encode_e4m3(x, saturate), cl.fp8.encode(x, "e4m3", saturate)).all()


def test_spec_encode_is_ml_dtypes_on_float32():
    # ml_dtypes 0.6 casts without saturating; a float32 input is rounded once (a float64 one
    # is rounded to float32 first, twice)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [
            nudged(TIES).astype(np.float32),
            (rng.standard_normal(20000) * 10.0 ** rng.uniform(-5, 3, 20000)).astype(np.float32),
        ]
    )
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


@pytest.mark.parametrize(
    "code, value, text",
    [
        (0x01, 0.0087890625, "; an exponent field of 0 is subnormal: no implicit leading 1"),
        (0x80, 0.0, "; 0x80 is negative zero, -0.0 (np.signbit tells them apart)"),
        (0xFF, -480.0, "; S.1111.111 (0x7F and 0xFF) is NaN in E4M3, which has no infinities"),
        (0xB8, 1.0, "; the sign is bit 7"),
    ],
)
def test_a_wrong_value_is_named_with_why(code, value, text):
    values = spec_decode_e4m3(CODES)
    values[code] = value
    with pytest.raises(AssertionError) as info:
        check_e4m3_values(values, "decode_e4m3(codes)", CODES)
    message = str(info.value)
    assert message.startswith(
        f"decode_e4m3(codes): code {code:#04x} (bits {code:08b}) gives {value!r}, expected "
    )
    assert f"= collectives.fp8.decode({code:#04x}, 'e4m3'){text}" in message


@pytest.mark.parametrize(
    "x, saturate, code, text",
    [
        (
            1.0625,
            False,
            0x39,
            "; |x| lies exactly halfway between 1.0 and 1.125: a tie rounds to "
            "the even code (mantissa's last bit 0)",
        ),
        (464.0, True, 0x7F, "; |x| lies exactly halfway between 448.0 and 480.0: a tie"),
        (
            2.0**-9,
            False,
            0x00,
            "; it is below the smallest normal value 2**-6 = 0.015625: a "
            "subnormal, a multiple of 2**-9, with exponent field 0",
        ),
        (-1e-9, False, 0x00, "; it rounds to zero, and the sign stays: negative zero is 0x80"),
        (
            465.0,
            False,
            0x7E,
            "; it rounds beyond the largest value 448 (anything above 464 does): "
            "without saturation that is NaN (0x7F or 0xFF)",
        ),
        (-465.0, True, 0xFF, "with saturate=True that is +-448 (0x7E / 0xFE)"),
        (np.inf, False, 0x7E, "; E4M3 has no infinity: without saturation it is NaN"),
        (np.inf, True, 0x7F, "; E4M3 has no infinity: with saturate=True it becomes +-448"),
        (np.nan, True, 0x7E, "; NaN encodes as NaN (0x7F or 0xFF)"),
    ],
)
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


@pytest.mark.parametrize(
    "answer, error, text",
    [
        (None, GradingError, "e is None: nothing was returned (did you forget `return`?)"),
        (
            np.array([56.0, 58.0]),
            GradingError,
            "e is an array of dtype float64; expected uint8 codes "
            "(integers 0..255): codes are integers 0..255, return "
            "them as uint8 (`.astype(np.uint8)`)",
        ),
        (np.array([True, False]), GradingError, "e is an array of booleans"),
        (np.array([56], np.uint8), GradingError, "e has shape (1,); expected shape (2,)"),
        ("0x38", GradingError, "e is the string '0x38'; expected a numpy array"),
        ([56, 256], AssertionError, "e: x[1] = 1.1875 gives 256, which is not a code"),
    ],
)
def test_the_form_of_codes(answer, error, text):
    with pytest.raises(error) as info:
        check_e4m3_codes(answer, "e", [1.0, 1.1875], False)
    assert str(info.value).startswith(text)


def test_a_package_at_odds_with_the_tables_is_a_bug_in_the_test(monkeypatch):
    monkeypatch.setattr(cl.fp8, "encode", lambda x, fmt, saturate=False: np.zeros(2, np.uint8))
    with pytest.raises(
        GradingError,
        match=r"collectives\.fp8\.encode and the OFP8 rules "
        r"disagree \(a bug in the test or the package, or "
        r"collectives\.fp8 was changed in this notebook\)",
    ):
        check_e4m3_codes([0x38, 0x3A], "e", [1.0, 1.1875], False)
