"""FP8 number formats, bit-exact: encode, decode, saturation, and the scaling recipes.

What is modelled
----------------
Conversion between real numbers and five 8-bit formats, as bit patterns (``uint8``):

``"e4m3"``, ``"e5m2"``
    OCP 8-bit Floating Point Specification (OFP8), Revision 1.0 (2023), which grew out of
    Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433. E4M3: bias 7,
    no infinities, NaN = S.1111.111, max 448. E5M2: bias 15 (IEEE-like), Inf = S.11111.00,
    NaN = S.11111.{01,10,11}, max 57344. (ml_dtypes and PyTorch call E4M3 ``float8_e4m3fn``.)
``"e4m3fnuz"``, ``"e5m2fnuz"``
    Not OCP: the variants of Noune et al., "8-bit Numerical Formats for Deep Neural
    Networks", arXiv:2206.02915, as built into AMD MI300 and named in LLVM and ml_dtypes.
    Bias 8 / 16, no infinities, no negative zero, a single NaN 0x80; max 240 / 57344.
``"e8m0"``
    The scale format of the OCP Microscaling Formats (MX) Specification v1.0 (2023):
    8 exponent bits, no sign, no mantissa, bias 127, value 2^(e - 127), 0xFF = NaN; no zero,
    no infinities. Used for MXFP8 block scales (:func:`mx_block_scale`).

Rounding is round-to-nearest-even (the OFP8 rounding mode), applied once to the exact input
value, including into the subnormals and at the boundary to the largest finite value.
``saturate=False`` (the default, as in ml_dtypes) maps overflow to NaN (E4M3, fnuz, E8M0)
or to +-Inf (E5M2); ``saturate=True`` maps overflow and +-Inf to +-max (OFP8's saturating
mode). NaN stays NaN in both modes.

Also here: the spec constants (:data:`FORMATS`, :func:`max_value`), :func:`quantize`
(round to the nearest FP8 value, back in float32), Transformer Engine's per-tensor scale
(:func:`scale_for`) and the MXFP8 block scale under two rules (:func:`mx_block_scale`).

What is left out
----------------
Arithmetic in FP8 (products, accumulation), stochastic rounding, the other MX element types
(FP6, FP4, INT8), FP8 collectives and memory accounting (elsewhere in the package). Inputs
are real numbers held as float16/32/64, integers or any dtype numpy can cast to float64
without loss (e.g. ml_dtypes' bfloat16); they are rounded once from their exact value, so a
float64 input is *not* rounded to float32 first (ml_dtypes 0.6 and torch 2.13 do that, which
rounds twice; see the tests for the cases where results differ).

NaN bit patterns: encoding a NaN, or overflowing without saturation, gives S.1111.111
(E4M3), S.11111.10 (E5M2), 0x80 (fnuz) or 0xFF (E8M0), with S the sign of the input.
Other libraries choose other NaN patterns; compare NaN-ness, not NaN bits.

Taught in the FP8 chapter.
"""

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..errors import CollectivesError
from .checks import as_array, check_bool, real_array, real_number

__all__ = [
    "Format",
    "FORMATS",
    "ELEMENT_FORMATS",
    "MX_ELEMENT_FORMATS",
    "LIBRARY_NAMES",
    "get_format",
    "encode",
    "decode",
    "quantize",
    "max_value",
    "scale_for",
    "scale_from_amax",
    "mx_block_scale",
]

_OFP8 = "OCP 8-bit Floating Point Specification (OFP8) Revision 1.0 (2023); arXiv:2209.05433"
_FNUZ = (
    "Noune et al., 8-bit Numerical Formats for Deep Neural Networks, arXiv:2206.02915 "
    "(not OCP); as in LLVM APFloat and ml_dtypes"
)
_MX = "OCP Microscaling Formats (MX) Specification v1.0 (2023); arXiv:2310.10537"


@dataclass(frozen=True)
class Format:
    """The constants of one 8-bit format (values as in its specification).

    ``emax`` is the exponent of the largest binade (``max = m * 2**emax``, ``1 <= m < 2``):
    the ``emax_elem`` of the MX spec. ``min_subnormal`` is ``None`` for E8M0, which has no
    subnormals. Bit patterns are ``uint8`` values, the sign in bit 7 where there is one.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    emax: int
    max: float
    min_normal: float
    min_subnormal: float | None
    has_inf: bool
    has_negative_zero: bool
    signed: bool
    max_pattern: int  # the pattern of +max
    nan_patterns: tuple
    inf_patterns: tuple  # (+inf, -inf), or () if the format has none
    source: str


FORMATS = MappingProxyType(
    {
        "e4m3": Format(
            "e4m3",
            4,
            3,
            7,
            8,
            448.0,
            2.0**-6,
            2.0**-9,
            False,
            True,
            True,
            0x7E,
            (0x7F, 0xFF),
            (),
            _OFP8,
        ),
        "e5m2": Format(
            "e5m2",
            5,
            2,
            15,
            15,
            57344.0,
            2.0**-14,
            2.0**-16,
            True,
            True,
            True,
            0x7B,
            (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF),
            (0x7C, 0xFC),
            _OFP8,
        ),
        "e4m3fnuz": Format(
            "e4m3fnuz",
            4,
            3,
            8,
            7,
            240.0,
            2.0**-7,
            2.0**-10,
            False,
            False,
            True,
            0x7F,
            (0x80,),
            (),
            _FNUZ,
        ),
        "e5m2fnuz": Format(
            "e5m2fnuz",
            5,
            2,
            16,
            15,
            57344.0,
            2.0**-15,
            2.0**-17,
            False,
            False,
            True,
            0x7F,
            (0x80,),
            (),
            _FNUZ,
        ),
        "e8m0": Format(
            "e8m0",
            8,
            0,
            127,
            127,
            2.0**127,
            2.0**-127,
            None,
            False,
            False,
            False,
            0xFE,
            (0xFF,),
            (),
            _MX,
        ),
    }
)
"""Name -> :class:`Format`, for the five formats ``encode`` and ``decode`` accept."""

# Positive pattern produced for a NaN input and for a non-saturated overflow (sign is ORed in
# where the format has a sign and the pattern is not the fnuz NaN 0x80).
_NAN_OUT = {"e4m3": 0x7F, "e5m2": 0x7E, "e4m3fnuz": 0x80, "e5m2fnuz": 0x80, "e8m0": 0xFF}
_OVERFLOW_OUT = {"e4m3": 0x7F, "e5m2": 0x7C, "e4m3fnuz": 0x80, "e5m2fnuz": 0x80, "e8m0": 0xFF}

#: the formats that hold tensor elements (E8M0 only holds MX block scales)
ELEMENT_FORMATS = ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz")
#: MXFP8's element types in the MX spec v1.0
MX_ELEMENT_FORMATS = ("e4m3", "e5m2")
#: the name each format has as a dtype in ml_dtypes and in PyTorch (``torch.float8_e4m3fn``
#: and so on): OCP's E4M3 is "e4m3fn" there ("fn": finite, no infinities, with NaN), the
#: non-OCP variants built into AMD's MI300 (gfx942) carry "fnuz" (finite, NaN, unsigned
#: zero), and E8M0 is "e8m0fnu" (finite, NaN, unsigned)
LIBRARY_NAMES = MappingProxyType(
    {
        "e4m3": "float8_e4m3fn",
        "e5m2": "float8_e5m2",
        "e4m3fnuz": "float8_e4m3fnuz",
        "e5m2fnuz": "float8_e5m2fnuz",
        "e8m0": "float8_e8m0fnu",
    }
)


def _decode_table(f):
    codes = np.arange(256)
    if f.name == "e8m0":
        values = np.ldexp(1.0, codes - f.bias)
    else:
        m = f.mantissa_bits
        magnitude = codes & 0x7F
        exponent = magnitude >> m
        mantissa = magnitude & ((1 << m) - 1)
        values = np.where(
            exponent == 0,
            np.ldexp(mantissa.astype(np.float64), 1 - f.bias - m),  # subnormal
            np.ldexp((mantissa + (1 << m)).astype(np.float64), exponent - f.bias - m),
        )
        values = np.where(codes & 0x80, -values, values)
        for pattern in f.inf_patterns:
            values[pattern] = -np.inf if pattern & 0x80 else np.inf
    for pattern in f.nan_patterns:  # NaN keeps the pattern's sign bit, if any
        values[pattern] = -np.nan if f.has_negative_zero and pattern & 0x80 else np.nan
    table = values.astype(np.float32)
    table.flags.writeable = False
    return table


_TABLES = {name: _decode_table(f) for name, f in FORMATS.items()}


def get_format(fmt, allowed=None, what="this function"):
    """The :class:`Format` named ``fmt``, one of ``allowed`` (default: all of
    :data:`FORMATS`), or a CollectivesError naming ``what`` takes it and, for ml_dtypes'
    spellings, the name used here."""
    if not isinstance(fmt, str):
        raise CollectivesError(
            f"{what}: fmt must be a format name such as 'e4m3', got {type(fmt).__name__} {fmt!r}"
        )
    names = tuple(FORMATS) if allowed is None else allowed
    if fmt in FORMATS and fmt not in names:
        raise CollectivesError(
            f"{what} takes one of {', '.join(repr(n) for n in names)}, got {fmt!r}"
        )
    if fmt not in names:
        hint = ""
        if fmt in ("e4m3fn", "float8_e4m3fn"):
            hint = " (OCP E4M3, ml_dtypes' float8_e4m3fn, is spelled 'e4m3' here)"
        elif fmt in ("e8m0fnu", "float8_e8m0fnu"):
            hint = " (ml_dtypes' float8_e8m0fnu is spelled 'e8m0' here)"
        raise CollectivesError(
            f"unknown FP8 format {fmt!r} for {what}; expected one of "
            f"{', '.join(repr(n) for n in names)}{hint}"
        )
    return FORMATS[fmt]


def encode(x, fmt, saturate=False):
    """Round ``x`` to the nearest value of ``fmt`` and return its bit patterns (``uint8``).

    ``x``: a number or array-like of real numbers (float16/32/64, integers, or a dtype numpy
    casts to float64 losslessly such as bfloat16); the result has the same shape (a 0-d array
    for a scalar). ``fmt``: one of :data:`FORMATS`.

    Element formats (E4M3, E5M2 and the fnuz pair): round-to-nearest-even on the exact input
    (OFP8 rev 1.0), subnormals included; a value exactly halfway between +-max and the next
    step beyond rounds to whichever is even, and rounding beyond max is overflow.
    ``saturate=False``: overflow gives NaN (E4M3, fnuz) or +-Inf (E5M2), +-Inf gives NaN
    (E4M3, fnuz) or +-Inf (E5M2). ``saturate=True``: overflow and +-Inf give +-max. NaN gives
    NaN. -0.0 gives the negative-zero pattern 0x80 in E4M3 and E5M2, and 0x00 in the fnuz
    formats, which have no negative zero (any negative value that rounds to zero does too).

    E8M0 (MX scale format): a positive value rounds to the nearest power of two in linear
    distance, ties (exactly 1.5 * 2^k) rounding up, which is what ml_dtypes 0.6 and torch 2.13
    do (E8M0 has no mantissa bit to make a tie "even"). Positive values below 2^-127 give
    2^-127 (the nearest representable value: E8M0 has no zero). Results above 2^127 and +Inf
    are overflow: NaN, or 2^127 with ``saturate=True``. Zero, negative values, -Inf and NaN
    give NaN (0xFF) in both modes, as in ml_dtypes; they are not errors, so that a whole
    array of scales can be encoded at once. Two library differences: torch 2.13 maps 0 to
    0x00 and drops the sign (-1 -> 0x7F); both ml_dtypes 0.6 and torch 2.13 send float32
    subnormals in (2^-127, 1.5 * 2^-127) up to 2^-126, where the nearest value is 2^-127.
    For MX block scales use :func:`mx_block_scale`, which rounds down (OCP) or up
    (Transformer Engine) rather than to nearest.

    Speed: one lookup per value in a table of the exact rounding (see ``_lookup_table``),
    several times ml_dtypes' ``astype`` throughput on float32 (``bench/fp8.py``).

    Raises :class:`~collectives.errors.CollectivesError` for an unknown format, a
    non-boolean ``saturate`` or input that is not real numbers (complex, strings, objects).
    """
    f = get_format(fmt, what="encode")
    sat = check_bool(saturate, "saturate")
    v = real_array(x, "encode", keep_float32=True)
    return _encode_lookup(v, f, sat)


# ---- the rounding itself: exact arithmetic, and tables of its results -----------------------


def _encode_exact(v, f, sat):
    """The rounding of float64 values ``v`` to ``f``, in exact arithmetic (the definition
    the lookup tables are built from)."""
    if f.name == "e8m0":
        return _encode_e8m0(v, f, sat)

    m = f.mantissa_bits
    emin = 1 - f.bias
    nan = np.isnan(v)
    inf = np.isinf(v)
    negative = np.signbit(v)
    a = np.where(nan | inf, 0.0, np.abs(v))
    # a = frac * 2**e2 with 0.5 <= frac < 1, so floor(log2 a) = e2 - 1. Below the normal
    # range the quantum stays that of the smallest binade (the subnormal spacing).
    _, e2 = np.frexp(a)
    e = np.where(a == 0, emin, np.maximum(e2.astype(np.int64) - 1, emin))
    # n = a / quantum, exact (a power-of-two scaling), then rounded half to even.
    n = np.rint(np.ldexp(a, m - e))
    # Magnitude code: consecutive codes are consecutive values, so a mantissa carry
    # (n == 2**(m+1)) moves into the next binade and past max into overflow by itself.
    code = (e - emin) * (1 << m) + n
    overflow = inf | (code > f.max_pattern)
    magnitude = np.where(overflow | nan, 0, code).astype(np.uint8)
    if f.has_negative_zero:
        sign = np.where(negative, 0x80, 0).astype(np.uint8)
    else:
        sign = np.where(negative & (magnitude != 0), 0x80, 0).astype(np.uint8)
    bits = magnitude | sign
    if sat:
        bits = np.where(overflow, np.where(negative, f.max_pattern | 0x80, f.max_pattern), bits)
    else:
        bits = np.where(overflow, _signed(_OVERFLOW_OUT[f.name], negative), bits)
    bits = np.where(nan, _signed(_NAN_OUT[f.name], negative), bits)
    return np.asarray(bits, dtype=np.uint8)


# Which FP8 value a float32 or float64 rounds to depends only on its top 16 bits (sign,
# exponent and the leading mantissa bits: 7 of float32's, 4 of float64's) and on whether
# any lower bit is set. Every element format keeps at most 3 mantissa bits, so its round
# bit (and E8M0's, the first mantissa bit) lies within the top 16 bits at every exponent;
# the lower bits only act as the "sticky" bit that breaks a tie. So encode is one table
# lookup per value, keyed by (top 16 bits, any lower bit set): 2^17 one-byte entries per
# (format, saturate, input width), computed once with the exact arithmetic above from one
# representative of each key. The input is processed in chunks that stay in cache.
_LOOKUP: dict[tuple, np.ndarray] = {}
_CHUNK = 1 << 16


def _lookup_table(f, sat, width):
    key = (f.name, sat, width)
    table = _LOOKUP.get(key)
    if table is None:
        uint, real = (np.uint32, np.float32) if width == 32 else (np.uint64, np.float64)
        top = np.arange(1 << 16, dtype=uint) << uint(width - 16)
        table = np.empty(1 << 17, np.uint8)
        with np.errstate(invalid="ignore"):  # signalling NaNs raise "invalid" when cast
            table[0::2] = _encode_exact(top.view(real).astype(np.float64), f, sat)
            table[1::2] = _encode_exact((top | uint(1)).view(real).astype(np.float64), f, sat)
        table.flags.writeable = False
        _LOOKUP[key] = table
    return table


def _encode_lookup(v, f, sat):
    """``_encode_exact`` of a float32 or float64 array through the lookup table."""
    width = 32 if v.dtype == np.float32 else 64
    uint = np.uint32 if width == 32 else np.uint64
    table = _lookup_table(f, sat, width)
    flat = np.ascontiguousarray(v).reshape(-1)
    bits = flat.view(uint)
    out = np.empty(flat.size, np.uint8)
    size = min(_CHUNK, flat.size)
    key = np.empty(size, uint)
    low = np.empty(size, uint)
    sticky = np.empty(size, bool)
    shift = uint(width - 17)
    top_mask = uint(0x1FFFE)
    low_mask = uint((1 << (width - 16)) - 1)
    for start in range(0, flat.size, _CHUNK):
        chunk = bits[start : start + _CHUNK]
        n = chunk.size
        k, lo, st = key[:n], low[:n], sticky[:n]
        np.right_shift(chunk, shift, out=k)  # 2 * (top 16 bits)
        np.bitwise_and(k, top_mask, out=k)
        np.bitwise_and(chunk, low_mask, out=lo)
        np.not_equal(lo, 0, out=st)
        np.add(k, st, out=k, casting="unsafe")  # + 1 if any lower bit is set
        np.take(table, k, out=out[start : start + n])
    return out.reshape(v.shape)


def _signed(pattern, negative):
    if pattern == 0x80:  # the fnuz NaN carries no sign
        return np.uint8(0x80)
    return np.where(negative, pattern | 0x80, pattern).astype(np.uint8)


def _encode_e8m0(v, f, sat):
    positive = v > 0  # False for NaN, 0, negatives
    finite = np.isfinite(v)
    a = np.where(positive & finite, v, 1.0)
    frac, e2 = np.frexp(a)  # a = frac * 2**e2, 0.5 <= frac < 1
    # a lies in [2**(e2-1), 2**e2); it is nearer 2**e2 from the midpoint 1.5 * 2**(e2-1)
    # (frac == 0.75) upwards.
    k = e2.astype(np.int64) - 1 + (frac >= 0.75)
    k = np.maximum(k, -f.bias)  # below 2^-127: the nearest value is 2^-127
    overflow = positive & (~finite | (k > f.bias))
    bits = np.where(positive & ~overflow, k + f.bias, 0xFF)
    if sat:
        bits = np.where(overflow, f.max_pattern, bits)
    return np.asarray(bits, dtype=np.uint8)


def decode(bits, fmt):
    """The values (``float32``, same shape) of the bit patterns ``bits`` in format ``fmt``.

    ``bits``: a ``uint8`` array, or any integers in 0..255 (Python ints, lists, int arrays).
    Every FP8 and E8M0 value is exact in float32 (2^-127 as a float32 subnormal). NaN
    patterns decode to NaN, E5M2's S.11111.00 to +-Inf, 0x80 to -0.0 where it is not NaN.
    An ml_dtypes float8 array should be passed as ``array.view(np.uint8)``.

    Raises :class:`~collectives.errors.CollectivesError` for an unknown format, non-integer
    input (floats, booleans, strings) or integers outside 0..255.
    """
    f = get_format(fmt, what="decode")
    arr = as_array(bits, "decode takes uint8 bit patterns")
    if arr.dtype.kind not in "iu":
        raise CollectivesError(
            f"decode takes uint8 bit patterns (integers 0..255), got dtype {arr.dtype}; "
            "to round real numbers use encode(); for an ml_dtypes float8 array pass "
            "array.view(np.uint8)"
        )
    if arr.dtype != np.uint8 and arr.size:
        bad = (arr < 0) | (arr > 255)
        if bad.any():
            first = arr[bad].flat[0]
            raise CollectivesError(
                f"decode takes bit patterns 0..255, got {int(first)} "
                f"({int(bad.sum())} value(s) out of range)"
            )
    table = _TABLES[f.name]
    if arr.dtype != np.uint8:
        return np.asarray(table[arr.astype(np.intp)], dtype=np.float32)
    flat = np.ascontiguousarray(arr).reshape(-1)
    out = np.empty(flat.size, np.float32)
    for start in range(0, flat.size, _CHUNK):  # chunks that stay in cache
        np.take(table, flat[start : start + _CHUNK], out=out[start : start + _CHUNK])
    return out.reshape(arr.shape)


def quantize(x, fmt, saturate=True):
    """``decode(encode(x, fmt, saturate), fmt)``: ``x`` rounded to ``fmt``, as float32.

    Saturating by default, as a scaled cast in training does (Transformer Engine and torch's
    float8_e4m3fn cast on CPU clamp to +-max), so a value beyond the range becomes +-max
    rather than NaN.
    """
    return decode(encode(x, fmt, saturate=saturate), fmt)


def max_value(fmt):
    """The largest finite value of ``fmt`` (448.0 for E4M3, 57344.0 for E5M2, ...)."""
    return get_format(fmt, what="max_value").max


def scale_for(amax, fmt, margin=0, *, previous=1.0):
    """Transformer Engine's per-tensor FP8 scale: ``(FP8_MAX / amax) / 2**margin``.

    Models ``_default_sf_compute`` of Transformer Engine (transformer_engine/pytorch,
    delayed scaling; NVIDIA/TransformerEngine on GitHub): the tensor is multiplied by the
    scale before the cast to FP8, so ``amax`` lands on ``FP8_MAX / 2**margin``. Like TE it
    computes in float32 (``amax`` is taken as float32) and keeps ``previous`` where ``amax``
    is 0, Inf or NaN (no information), and returns the float32 maximum where the scale
    would be infinite (``amax`` so small that ``FP8_MAX / amax`` overflows float32).

    ``amax``: a number or array of maxima of ``|x|`` (>= 0, NaN or Inf allowed); in delayed
    scaling it is the max over an amax history window (default 1024 steps) and all-reduced
    with MAX across ranks; in current scaling (TE ``Float8CurrentScaling``) it is the amax of
    the tensor being cast. ``fmt``: an element format (E4M3, E5M2, fnuz). ``margin``: a
    finite real number (TE uses an integer, default 0). ``previous``: the scale kept where
    ``amax`` gives none (scalar or array broadcastable to ``amax``'s shape). Returns float32
    with ``amax``'s shape.

    Left out: the amax history itself, the MAX all-reduce, and TE's older power-of-two
    variant (``2**(floor(log2(FP8_MAX / amax)) - margin)``) used by versions before 1.x.
    """
    f = get_format(fmt, allowed=ELEMENT_FORMATS, what="scale_for (element formats)")
    margin = real_number(margin, "margin")
    a = real_array(amax, "scale_for").astype(np.float32)
    if np.any(a < 0):
        first = a[a < 0].flat[0]
        raise CollectivesError(
            f"scale_for: amax is a maximum of |x| and must be >= 0, got {float(first)!r}"
        )
    prev = real_array(previous, "scale_for (previous)").astype(np.float32)
    try:
        prev = np.broadcast_to(prev, a.shape)
    except ValueError:
        raise CollectivesError(
            f"scale_for: previous has shape {prev.shape}, which does not broadcast to amax's "
            f"shape {a.shape}"
        ) from None
    return scale_from_amax(a, f, margin, prev)


def scale_from_amax(a, f, margin, previous):
    """TE's ``_default_sf_compute`` in float32 (``a``: float32 amax, ``previous``: float32
    broadcastable to it): ``(FP8_MAX / a) / 2**margin``, ``previous`` where ``a`` is 0, Inf
    or NaN, the float32 maximum where the quotient overflows."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        sf = (np.float32(f.max) / a) / np.float32(2.0**margin)
    sf = np.where((a > 0) & np.isfinite(a), sf, previous)
    sf = np.where(np.isinf(sf), np.finfo(np.float32).max, sf)
    return np.asarray(sf, dtype=np.float32)


def mx_block_scale(x, block=32, fmt="e4m3", rule="ocp"):
    """MXFP8 shared scales ``X`` (powers of two, E8M0 values) for blocks of the last axis.

    ``x``: array-like of real numbers with at least one axis; blocks of ``block`` consecutive
    elements along the last axis share one scale (MX spec v1.0: k = 32). A ragged last block
    is padded with zeros, as the OCP reference code (microsoft/microxcaling) pads. Returns
    float32 ``X`` of shape ``x.shape[:-1] + (ceil(n / block),)``; the block is stored as
    ``X`` (E8M0, ``encode(X, "e8m0")`` is exact) and the elements ``x / X`` in ``fmt``.

    With ``amax`` the block's largest ``|x|`` and ``FP8_MAX``, ``emax`` from :data:`FORMATS`:

    ``rule="ocp"`` (MX spec v1.0 conversion, as in microxcaling's ``_shared_exponents``):
        ``X = 2**(floor(log2 amax) - emax)`` (emax = 8 for E4M3, 15 for E5M2). Then
        ``amax / X`` lies in ``[2**emax, 2**(emax+1))`` and may exceed ``FP8_MAX`` (E4M3:
        amax = 480 gives X = 1): those elements saturate to +-max when cast.
    ``rule="te"`` (NVIDIA Transformer Engine's MXFP8 kernels: ``float_to_e8m0(amax *
    (1/FP8_MAX))`` with PTX ``cvt.rp.satfinite.ue8m0x2.f32``, i.e. rounding up):
        ``X = 2**ceil(log2(amax / FP8_MAX))``, so ``amax / X <= FP8_MAX``: nothing
        saturates, at the price of up to one binade of range. TE forms ``amax * (1/FP8_MAX)``
        in float32 before rounding up; for every float32 amax whose quotient is a normal
        float32 this gives the same X as the exact rule used here (checked in the tests).

    Both rules clamp exponents below -127 to -127 (X = 2^-127; a block of zeros gets
    2^-127). A block holding NaN gets NaN. Overflow (exponent above 127, or Inf in the
    block): NaN for ``"ocp"`` (as microxcaling), 2^127 for ``"te"`` (``satfinite``).

    Left out: the element cast itself (``quantize(x / X, fmt)`` per block), the other MX
    element types, and TE's swizzled scale layout for the GEMM.
    """
    f = get_format(fmt, allowed=MX_ELEMENT_FORMATS, what="mx_block_scale (MXFP8 elements)")
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)):
        raise CollectivesError(f"mx_block_scale: block must be a positive integer, got {block!r}")
    if block < 1:
        raise CollectivesError(f"mx_block_scale: block must be a positive integer, got {block}")
    if rule not in ("ocp", "te"):
        raise CollectivesError(f"mx_block_scale: rule must be 'ocp' or 'te', got {rule!r}")
    v = real_array(x, "mx_block_scale")
    if v.ndim == 0:
        raise CollectivesError(
            "mx_block_scale: x must have at least one axis (blocks run along the last axis), "
            "got a scalar"
        )
    n = v.shape[-1]
    n_blocks = -(-n // block)
    a = np.abs(v)
    pad = n_blocks * block - n
    if pad:
        a = np.concatenate([a, np.zeros(v.shape[:-1] + (pad,))], axis=-1)
    a = a.reshape(v.shape[:-1] + (n_blocks, block))
    amax = a.max(axis=-1)  # NaN propagates through max

    nan = np.isnan(amax)
    inf = np.isinf(amax)
    ok = ~(nan | inf) & (amax > 0)
    safe = np.where(ok, amax, 1.0)
    _, e2 = np.frexp(safe)
    floor_log2 = e2.astype(np.int64) - 1
    if rule == "ocp":
        k = floor_log2 - f.emax
    else:
        # smallest k with FP8_MAX * 2**k >= amax: FP8_MAX = mmax * 2**emax (1 <= mmax < 2)
        # and amax in [2**floor_log2, 2**(floor_log2+1)), so k is floor_log2 - emax, or one
        # more when amax is above FP8_MAX * 2**(floor_log2 - emax). Exact in float64.
        k = floor_log2 - f.emax
        k = k + (safe > np.ldexp(f.max, k))
    k = np.where(ok, k, -127)  # zero blocks: X = 2^-127
    k = np.maximum(k, -127)
    scale = np.ldexp(1.0, k)
    too_big = (k > 127) | inf
    if rule == "ocp":
        scale = np.where(too_big, np.nan, scale)
    else:
        scale = np.where(too_big, 2.0**127, scale)
    scale = np.where(nan, np.nan, scale)
    return np.asarray(scale, dtype=np.float32)
