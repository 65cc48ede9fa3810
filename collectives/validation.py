"""One place that checks arguments, so that bad input always gets the same clear error.

Every public function of the package checks its arguments with these helpers. Each takes
the value, the name the user knows it by (``what``) and the error class to raise (a
:class:`~collectives.CollectivesError` subclass), so a message reads the same everywhere:
"n_ranks must be an integer >= 1, got 2.5". No numpy broadcasting error, ``KeyError``,
``ZeroDivisionError`` or silent truncation reaches a user.

Checks of the package's own types live with the type (``collectives.schedule.schedule_arg``
for a Schedule), so that this module imports nothing but the errors.
"""

from __future__ import annotations

import math
from typing import Any, Collection, Optional, TypeVar

import numpy as np
from numpy.typing import NDArray

from .errors import CollectivesError

__all__ = [
    "integer",
    "number",
    "flag",
    "choice",
    "int_array",
    "input_rows",
    "per_axis_flags",
    "check_nbytes",
    "renamed_arg",
]

_T = TypeVar("_T")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def integer(
    value: Any,
    what: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[CollectivesError] = CollectivesError,
) -> int:
    """``value`` as a Python int within ``[minimum, maximum]``, or ``error``."""
    if not _is_int(value):
        raise error(f"{what} must be an integer, got {value!r}")
    checked = int(value)
    if minimum is not None and checked < minimum:
        raise error(f"{what} must be an integer >= {minimum}, got {checked}")
    if maximum is not None and checked > maximum:
        raise error(f"{what} must be an integer <= {maximum}, got {checked}")
    return checked


def number(
    value: Any,
    what: str,
    *,
    positive: bool = False,
    unit: str = "",
    error: type[CollectivesError] = CollectivesError,
) -> float:
    """``value`` as a finite float, ``>= 0`` (``> 0`` if ``positive``), or ``error``.

    ``unit`` is named in the message ("link_bandwidth must be finite and > 0 (bytes/s ...)").
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise error(f"{what} must be a number{f' ({unit})' if unit else ''}, got {value!r}")
    checked = float(value)
    if not math.isfinite(checked) or checked < 0 or (positive and checked == 0):
        need = "> 0" if positive else ">= 0"
        raise error(
            f"{what} must be finite and {need}{f' ({unit})' if unit else ''}, got {checked!r}"
        )
    return checked


def flag(value: Any, what: str, *, error: type[CollectivesError] = CollectivesError) -> bool:
    """``value`` as a bool (True/False only, not 0/1 or strings), or ``error``."""
    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{what} must be True or False, got {value!r}")
    return bool(value)


def choice(
    value: _T,
    what: str,
    options: Collection[object],
    *,
    error: type[CollectivesError] = CollectivesError,
) -> _T:
    """``value`` if it is one of ``options``, else ``error`` listing them."""
    try:
        ok = value in options
    except TypeError:
        ok = False
    if not ok:
        raise error(f"{what} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def int_array(
    value: Any,
    what: str,
    *,
    ndim: int | None = None,
    shape: tuple[int | None, ...] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[CollectivesError] = CollectivesError,
) -> NDArray[np.int64]:
    """``value`` as an int64 numpy array of the given rank/shape and value range, or ``error``.

    In ``shape`` a ``None`` entry accepts any length on that axis.
    """
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise error(f"{what} must be an array of integers; its rows differ in length") from None
    if array.size and (array.dtype == bool or not np.issubdtype(array.dtype, np.integer)):
        raise error(f"{what} must hold integers, got {array.dtype} values")
    ints = array.astype(np.int64, copy=False)
    if ndim is not None and ints.ndim != ndim:
        raise error(f"{what} must be a {ndim}-D array, got shape {ints.shape}")
    if shape is not None and (
        ints.ndim != len(shape)
        or any(want is not None and got != want for got, want in zip(ints.shape, shape))
    ):
        want = "(" + ", ".join("G" if s is None else str(s) for s in shape) + ")"
        raise error(f"{what} must have shape {want}, got {ints.shape}")
    if ints.size and minimum is not None and ints.min() < minimum:
        raise error(f"{what} must be >= {minimum}; it holds {int(ints.min())}")
    if ints.size and maximum is not None and ints.max() > maximum:
        raise error(f"{what} must be <= {maximum}; it holds {int(ints.max())}")
    return ints


def input_rows(
    inputs: Any, n_ranks: int | None = None, error: type[CollectivesError] = CollectivesError
) -> NDArray[np.generic]:
    """``inputs`` as a numeric 2-D array, one row per rank (``n_ranks`` rows if given)."""
    try:
        data = np.asarray(inputs)
    except ValueError:
        raise error(
            "inputs must be one equal-length row per rank; the rows differ in length"
        ) from None
    if data.dtype == object:
        raise error(
            "inputs must be one equal-length numeric row per rank; the rows differ in "
            "length or are not numbers"
        )
    if n_ranks is None:
        if data.ndim != 2 or data.shape[0] < 1:
            raise error(f"inputs must have shape (n_ranks, length), got shape {data.shape}")
    elif data.ndim != 2 or data.shape[0] != n_ranks:
        raise error(f"inputs must have shape (n_ranks={n_ranks}, length), got shape {data.shape}")
    if not (np.issubdtype(data.dtype, np.number) or data.dtype == bool):
        raise error(f"inputs must be numeric, got dtype {data.dtype}")
    return data


def per_axis_flags(
    value: Any,
    n_axes: int,
    what: str = "wraparound",
    error: type[CollectivesError] = CollectivesError,
) -> tuple[bool, ...]:
    """One bool for every axis (``value``: one bool for all, or one per axis), or ``error``."""
    if isinstance(value, (bool, np.bool_)):
        return (bool(value),) * n_axes
    try:
        flags = tuple(flag(v, f"every entry of {what}", error=error) for v in value)
    except TypeError:
        raise error(f"{what} must be a bool or one bool per axis, got {value!r}") from None
    if len(flags) != n_axes:
        raise error(f"{what} has {len(flags)} entries but the shape has {n_axes} axes")
    return flags


def check_nbytes(nbytes: Any) -> float:
    """``nbytes`` (a buffer size in bytes, as :func:`collectives.time` takes it) as a finite
    float >= 0, or a CollectivesError."""
    if isinstance(nbytes, (bool, np.bool_)) or not isinstance(
        nbytes, (int, float, np.integer, np.floating)
    ):
        raise CollectivesError(f"nbytes must be a number of bytes, got {nbytes!r}")
    if not math.isfinite(nbytes) or nbytes < 0:
        raise CollectivesError(f"nbytes must be finite and >= 0, got {nbytes!r}")
    return float(nbytes)


def renamed_arg(
    value: _T,
    default: object,
    old_value: Optional[_T],
    name: str,
    old_name: str,
    *,
    error: type[CollectivesError] = CollectivesError,
) -> tuple[_T, str]:
    """An argument renamed from ``old_name`` to ``name`` whose old keyword is still accepted:
    ``(its value, the name it was given under)``, so that a check can name what the caller
    wrote. ``old_value`` is ``None`` when the old keyword was not given; giving it while
    ``value`` differs from its ``default`` is an ``error`` (two values for one argument)."""
    if old_value is None:
        return value, name
    if value is not None and value != default:
        raise error(
            f"{name} and its old name {old_name} were both given ({value!r} and "
            f"{old_value!r}); give {name} only"
        )
    return old_value, old_name
