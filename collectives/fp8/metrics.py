"""How much an FP8 cast or an FP8 collective loses: SNR, relative error, under- and overflow.

What is modelled
----------------
The statistics FP8-LM (Peng et al., "FP8-LM: Training FP8 Large Language Models",
arXiv:2310.18313, section 3.3 and Fig. 7) reports for gradient all-reduce, on arrays:

* :func:`snr_db`: signal-to-noise ratio ``10 log10(sum(ref^2) / sum((ref - approx)^2))``;
* :func:`relative_error`: ``||ref - approx||_2 / ||ref||_2``;
* :func:`underflow_rate`: the fraction of the nonzero inputs ``x`` whose scaled value
  ``x * scale`` rounds to zero in the format (lost to underflow);
* :func:`overflow_rate`: the fraction of the nonzero inputs whose scaled value rounds
  beyond the largest finite value (clipped by a saturating cast, NaN/Inf otherwise).

Both rates use the bit-exact cast of :mod:`collectives.fp8.formats` (round to nearest-even),
so a value exactly halfway between 0 and the smallest subnormal counts as underflow (the tie
goes to the even code, 0) and one exactly halfway between max and the next step beyond
counts as overflow. FP8-LM does not define its SNR in the paper; the usual power ratio is
used here.

What is left out
----------------
Per-element error bounds (see the tests: the cast is within half a unit in the last place),
statistics of NaN/Inf inputs (they are neither counted nor in the denominator).

Taught in the FP8 chapter.
"""

import numpy as np

from ..errors import CollectivesError
from .checks import real_array
from .formats import ELEMENT_FORMATS, encode, get_format

__all__ = ["snr_db", "relative_error", "underflow_rate", "overflow_rate"]


def _pair(reference, approx, what):
    ref = real_array(reference, f"{what} (reference)")
    app = real_array(approx, f"{what} (approx)")
    if ref.shape != app.shape:
        raise CollectivesError(
            f"{what}: reference has shape {ref.shape} but approx has shape {app.shape}; "
            "compare arrays of the same shape"
        )
    if ref.size == 0:
        raise CollectivesError(f"{what}: the arrays are empty")
    if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(app))):
        raise CollectivesError(f"{what}: reference and approx must be finite (no NaN or Inf)")
    return ref, app


def snr_db(reference, approx):
    """Signal-to-noise ratio of ``approx`` against ``reference``, in decibels.

    ``10 * log10(sum(reference**2) / sum((reference - approx)**2))``, in float64. ``inf``
    when ``approx`` equals ``reference``; ``-inf`` when ``reference`` is all zeros and
    ``approx`` is not. Arrays of the same shape, finite.
    """
    ref, app = _pair(reference, approx, "snr_db")
    signal = float(np.sum(ref * ref))
    noise = float(np.sum((ref - app) ** 2))
    if noise == 0:
        return float("inf")
    if signal == 0:
        return float("-inf")
    return float(10.0 * np.log10(signal / noise))


def relative_error(reference, approx):
    """``||reference - approx||_2 / ||reference||_2`` (float64): 0.0 when equal, ``inf`` when
    ``reference`` is all zeros and ``approx`` is not."""
    ref, app = _pair(reference, approx, "relative_error")
    err = float(np.linalg.norm((ref - app).ravel()))
    norm = float(np.linalg.norm(ref.ravel()))
    if err == 0:
        return 0.0
    if norm == 0:
        return float("inf")
    return err / norm


def _scaled(x, scale, fmt, what):
    f = get_format(fmt, allowed=ELEMENT_FORMATS, what=f"{what} (element formats)")
    v = real_array(x, what)
    s = real_array(scale, f"{what} (scale)")
    with np.errstate(over="ignore"):
        s32 = s.astype(np.float32)  # the scale as TE holds it
    bad = ~(np.isfinite(s32) & (s32 > 0))
    if np.any(bad):
        raise CollectivesError(
            f"{what}: scale must be finite and > 0 (as a float32), got {float(s[bad].flat[0])!r}"
        )
    try:
        shape = np.broadcast_shapes(v.shape, s.shape)
    except ValueError:
        shape = None
    if shape != v.shape:
        raise CollectivesError(
            f"{what}: scale has shape {s.shape}, which does not broadcast to x's shape {v.shape}"
        )
    with np.errstate(over="ignore"):
        scaled = v * s32.astype(np.float64)
    return f, scaled, np.isfinite(scaled) & (v != 0)


def underflow_rate(x, scale, fmt="e4m3"):
    """Fraction of the nonzero finite elements of ``x`` that become 0 when ``x * scale`` is
    cast to ``fmt`` (0.0 when there are none). ``scale``: > 0, a number or broadcastable to
    ``x`` (as in :func:`~collectives.fp8.quantize_scaled`)."""
    f, scaled, counted = _scaled(x, scale, fmt, "underflow_rate")
    n = int(counted.sum())
    if n == 0:
        return 0.0
    codes = encode(scaled[counted], f.name, saturate=True)
    return float(np.count_nonzero((codes & 0x7F) == 0)) / n


def overflow_rate(x, scale, fmt="e4m3"):
    """Fraction of the nonzero finite elements of ``x`` for which ``x * scale`` rounds beyond
    the largest finite value of ``fmt`` (0.0 when there are none)."""
    f, scaled, counted = _scaled(x, scale, fmt, "overflow_rate")
    n = int(counted.sum())
    if n == 0:
        return 0.0
    codes = encode(scaled[counted], f.name, saturate=False)
    beyond = (codes & 0x7F) > f.max_pattern
    if f.name in ("e4m3fnuz", "e5m2fnuz"):
        beyond = codes == 0x80  # their only non-finite pattern, NaN
    return float(np.count_nonzero(beyond)) / n
