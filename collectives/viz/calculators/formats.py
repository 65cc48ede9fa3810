"""Numbers as the calculators print them: times, buffer sizes and rates with about three
significant digits and a unit, never an exponent. ``_static/calculators.js`` formats the
same way when a reader moves a control.
"""

from __future__ import annotations

import numpy as np

__all__ = ["format_seconds", "format_bytes", "format_rate", "format_latency", "digits"]


def digits(x: float) -> str:
    """About three significant digits, never an exponent (``_static/calculators.js`` too)."""
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def format_seconds(t: float) -> str:
    """``t`` seconds with about three significant digits and a unit: ``12.3 µs``, ``4.56 ms``."""
    if not np.isfinite(t):
        return "n/a"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if t >= scale:
            return f"{digits(t / scale)} {unit}"
    return f"{digits(t / 1e-9)} ns"


def format_bytes(n: float) -> str:
    """A buffer size in binary units: ``1 KiB``, ``64 MiB``, ``1.5 GiB``."""
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n:.4g} B"


def format_rate(bps: float) -> str:
    """Bytes per second as ``GB/s`` (decimal, as nccl-tests prints it)."""
    if not np.isfinite(bps):
        return "n/a"
    return f"{digits(bps / 1e9)} GB/s"


def format_latency(t: float) -> str:
    """A latency as a calculator's text names it: ``0``, ``0.6 µs``, ``14 µs``, ``1.5 ms``
    (up to three significant digits, no trailing zeros; microseconds from 0.1 µs up)."""
    if not np.isfinite(t):
        return "n/a"
    if t == 0:
        return "0"
    for scale, unit, above in ((1.0, "s", 1.0), (1e-3, "ms", 1e-3), (1e-6, "µs", 1e-7)):
        if t >= above:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"
