"""Argument checks shared by the FP8 modules: arrays of real numbers, real numbers, flags.

Each raises :class:`~collectives.CollectivesError` naming the function (``what``) and what it
takes instead, so that a string, a complex array or a list of lists of different lengths
never reaches numpy's own error. Format names are checked by
:func:`collectives.fp8.formats.get_format`.
"""

import numpy as np

from ..errors import CollectivesError

__all__ = ["as_array", "real_array", "real_number", "check_bool"]


def as_array(x, takes):
    """``np.asarray(x)``, or a CollectivesError saying what the caller ``takes`` instead."""
    if isinstance(x, (str, bytes)):
        raise CollectivesError(f"{takes}, got the string {x!r}")
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise CollectivesError(f"{takes}; cannot make an array of {x!r} ({exc})") from None


def real_array(x, what, keep_float32=False):
    """``x`` as a float64 array (exact for every accepted input dtype but longdouble); a
    float32 array stays float32 with ``keep_float32``."""
    if isinstance(x, (str, bytes)):
        raise CollectivesError(f"{what} takes numbers, got the string {x!r}")
    arr = as_array(x, f"{what} takes a number or an array of numbers")
    kind = arr.dtype.kind
    if kind == "c":
        raise CollectivesError(
            f"{what} takes real numbers, got complex input (dtype {arr.dtype}); FP8 formats "
            "are real: encode the real and imaginary parts separately"
        )
    if kind == "b":
        raise CollectivesError(f"{what} takes real numbers, got a boolean array")
    if keep_float32 and arr.dtype == np.float32:
        return arr
    if kind in "fiu" or (kind == "V" and np.can_cast(arr.dtype, np.float64, "safe")):
        with np.errstate(invalid="ignore"):  # signalling NaNs raise "invalid" when cast
            return arr.astype(np.float64)
    example = f" (e.g. {arr.ravel()[:1].tolist()[0]!r})" if arr.size else ""
    raise CollectivesError(
        f"{what} takes real numbers, got non-numeric input of dtype {arr.dtype}{example}"
    )


def check_bool(value, name):
    """``value`` as a bool (True/False only), or a CollectivesError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise CollectivesError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def real_number(value, name):
    """``value`` if it is a finite real number (not a bool), or a CollectivesError naming
    ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise CollectivesError(f"{name} must be a real number, got {value!r}")
    if not np.isfinite(value):
        raise CollectivesError(f"{name} must be finite, got {value!r}")
    return value
