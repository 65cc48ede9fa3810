"""Figures for the FP8 chapter: bit layouts, the representable values of several formats on
one logarithmic line, the relative spacing of those values, stacked bars of bytes per
parameter, and an FP8 all-reduce's error hop by hop (:func:`plot_step_errors`, from
:attr:`collectives.fp8.FP8AllReduceResult.step_errors`).

Everything drawn is computed from the package: FP8 values from :func:`collectives.fp8.decode`
of all 256 bit patterns, bit fields from :data:`collectives.fp8.FORMATS`. BF16 and FP32 are
not FP8 formats and are not in ``FORMATS``; their fields are the IEEE ones (BF16 is the top
16 bits of an IEEE float32), and :func:`bf16_values` lists BF16's values by the same
construction. One colour per number format, per bit field, per gradient-scaling rule and per
part of the training state (:data:`FORMAT_COLOURS`, :data:`FIELD_COLOURS`,
:data:`SCALING_COLOURS`, :data:`PART_COLOURS`), the same in every figure of the chapter.
Figures are sized for a phone (:data:`~collectives.viz.style.FIG_WIDTH` inches wide with the
book's text size, set by :func:`collectives.viz.style.use_fonts`). matplotlib is imported
inside the functions.
Taught in chapter "The FP8 training format".
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from .style import FIG_WIDTH, PALETTE, font_size

__all__ = [
    "FORMAT_COLOURS",
    "FIELD_COLOURS",
    "SCALING_COLOURS",
    "PART_COLOURS",
    "FIG_WIDTH",
    "FIELDS",
    "bf16_values",
    "bf16_round",
    "bit_string",
    "positive_values",
    "draw_bit_layouts",
    "plot_value_lines",
    "plot_relative_spacing",
    "plot_parts",
    "plot_step_errors",
]

#: one colour per number format (from the book's colour-blind-safe :data:`.style.PALETTE`)
FORMAT_COLOURS = {
    "e4m3": PALETTE["blue"],
    "e5m2": PALETTE["orange"],
    "bf16": PALETTE["bluish green"],
    "fp32": PALETTE["grey"],
    "fp16": PALETTE["reddish purple"],
}

#: one colour per bit field
FIELD_COLOURS = {
    "sign": PALETTE["vermillion"],
    "exponent": PALETTE["sky blue"],
    "mantissa": "#DDCC77",
}  # Paul Tol's sand: text stays legible

#: one colour per FP8-LM gradient-scaling rule (and per quantisation placement)
SCALING_COLOURS = {
    "pre": PALETTE["olive"],
    "post": PALETTE["reddish purple"],
    "auto": PALETTE["blue"],
    "once": PALETTE["bluish green"],
    "per_hop": PALETTE["vermillion"],
}

#: one colour per model state (the parts of :func:`collectives.fp8.bytes_per_parameter`:
#: working weights, master copy, gradients, Adam's first and second moments)
PART_COLOURS = {
    "weights": PALETTE["blue"],
    "master": PALETTE["indigo"],
    "grads": PALETTE["orange"],
    "m": PALETTE["bluish green"],
    "v": "#DDCC77",
    "other": PALETTE["grey"],
}

#: (sign, exponent, mantissa) bits of the formats the chapter draws
FIELDS = {
    "e4m3": (1, 4, 3),
    "e5m2": (1, 5, 2),
    "bf16": (1, 8, 7),
    "fp16": (1, 5, 10),
    "fp32": (1, 8, 23),
}

_PART_LABELS = {"grads": "gradients", "m": "Adam m", "v": "Adam v"}

_NAMES = {"e4m3": "E4M3", "e5m2": "E5M2", "bf16": "BF16", "fp16": "FP16", "fp32": "FP32"}


def bf16_values() -> np.ndarray:
    """Every positive finite BF16 value (float32), smallest first: the bit patterns 0x0001 to
    0x7F7F (0x7F80 is +Inf) placed in the top half of a float32."""
    return (np.arange(1, 0x7F80, dtype=np.uint32) << 16).view(np.float32)


def bf16_round(x) -> np.ndarray:
    """``x`` (cast to float32) rounded to BF16, round-to-nearest-even, as float32 (finite
    inputs only: the rounding is done on the float32 bit pattern)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def bit_string(value: float, fmt: str) -> str:
    """The bits of ``value`` rounded to ``fmt`` ("e4m3", "e5m2" through
    :func:`collectives.fp8.encode`, saturating; "bf16" through :func:`bf16_round`), sign first."""
    from ..fp8 import encode

    if fmt in ("e4m3", "e5m2"):
        return format(int(encode(value, fmt, saturate=True)), "08b")
    if fmt == "bf16":
        pattern = int(bf16_round(value).view(np.uint32)) >> 16
        return format(pattern, "016b")
    raise CollectivesError(f"bit_string draws 'e4m3', 'e5m2' or 'bf16', got {fmt!r}")


def positive_values(fmt: str) -> np.ndarray:
    """The positive finite values of ``fmt``, smallest first: all 256 FP8 bit patterns
    decoded (:func:`collectives.fp8.decode`), or :func:`bf16_values`."""
    from ..fp8 import decode

    if fmt == "bf16":
        return bf16_values()
    v = decode(np.arange(256, dtype=np.uint8), fmt)
    return np.unique(v[np.isfinite(v) & (v > 0)])


def _fields(fmt):
    if fmt not in FIELDS:
        raise CollectivesError(f"no bit layout for {fmt!r}; known: {', '.join(FIELDS)}")
    return FIELDS[fmt]


def draw_bit_layouts(
    formats: Sequence[str] = ("e4m3", "e5m2", "bf16"),
    value: Optional[float] = None,
    ax=None,
    title: Optional[str] = None,
):
    """One row of boxes per format, one box per bit, coloured by field (sign, exponent,
    mantissa; :data:`FIELD_COLOURS`) with the field widths written under each row. With
    ``value``, each box holds that bit of ``value`` rounded to the format and the row ends
    with the value it decodes to. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    from ..fp8 import decode

    ax = ax or plt.gca()
    width = max(sum(_fields(f)) for f in formats)
    pitch = 2.9  # rows: a caption line, then the boxes
    for row, fmt in enumerate(formats):
        s, e, m = _fields(fmt)
        y = -pitch * row
        bits = bit_string(value, fmt) if value is not None else None
        kinds = ["sign"] * s + ["exponent"] * e + ["mantissa"] * m
        for b, kind in enumerate(kinds):
            ax.add_patch(
                Rectangle(
                    (b, y), 1, 1, facecolor=FIELD_COLOURS[kind], edgecolor="0.25", linewidth=0.8
                )
            )
            if bits is not None:
                ax.text(
                    b + 0.5, y + 0.5, bits[b], ha="center", va="center", fontsize=font_size("note")
                )
        ax.text(
            0,
            y + 1.25,
            f"{_NAMES[fmt]}: {s} + {e} + {m} bits",
            ha="left",
            va="bottom",
            color=FORMAT_COLOURS.get(fmt, "0.2"),
            fontweight="bold",
        )
        if value is not None:
            ax.text(
                s + e + m + 0.4,
                y + 0.5,
                "= " + _decoded(value, fmt, decode),
                ha="left",
                va="center",
            )
    handles = [Patch(facecolor=c, edgecolor="0.25", label=k) for k, c in FIELD_COLOURS.items()]
    ax.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=3,
        frameon=False,
        handlelength=1.0,
        columnspacing=1.0,
    )
    ax.set_xlim(-0.2, width + 6.0)
    ax.set_ylim(-pitch * (len(formats) - 1) - 0.2, 2.3)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, pad=28)
    return ax


def _decoded(value, fmt, decode):
    from ..fp8 import encode

    if fmt == "bf16":
        v = float(bf16_round(value))
    else:
        v = float(decode(encode(value, fmt, saturate=True), fmt))
    return f"{v:.6g}"


def plot_value_lines(
    formats: Sequence[str] = ("e4m3", "e5m2", "bf16"),
    ax=None,
    xlim: tuple[float, float] = (2.0**-18, 2.0**17),
    title: Optional[str] = None,
):
    """The positive values of each format as ticks on one logarithmic axis, one row per
    format (subnormals paler, the largest finite value labelled). Ticks of a format that
    continues beyond ``xlim`` end in an arrow with the value where it stops. Returns the
    Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    lo, hi = xlim
    for row, fmt in enumerate(formats):
        y = -row
        v = positive_values(fmt).astype(np.float64)
        colour = FORMAT_COLOURS.get(fmt, "0.3")
        s, e, m = _fields(fmt)
        min_normal = 2.0 ** (2 - 2 ** (e - 1))
        shown = v[(v >= lo) & (v <= hi)]
        normal = shown[shown >= min_normal]
        sub = shown[shown < min_normal]
        ax.vlines(normal, y - 0.32, y + 0.32, color=colour, linewidth=0.7)
        ax.vlines(sub, y - 0.2, y + 0.2, color=colour, linewidth=0.7, alpha=0.45)
        ax.text(lo / 4.5, y, _NAMES[fmt], ha="right", va="center", color=colour, fontweight="bold")
        if v.max() <= hi:
            ax.annotate(
                f"{v.max():,.0f}",
                (v.max(), y + 0.32),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=font_size("note"),
            )
        else:
            ax.annotate(
                "",
                xy=(hi * 3.5, y),
                xytext=(hi * 1.05, y),
                arrowprops=dict(arrowstyle="-|>", color=colour, linewidth=1.5),
            )
        if v.min() < lo:
            ax.annotate(
                "",
                xy=(lo / 3.5, y),
                xytext=(lo / 1.05, y),
                arrowprops=dict(arrowstyle="-|>", color=colour, linewidth=1.5),
            )
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo / 4, hi * 4)
    ax.set_ylim(-len(formats) + 0.4, 0.8)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("value (log scale; paler ticks: subnormals)")
    ax.grid(True, axis="x", which="major", alpha=0.25)
    if title:
        ax.set_title(title)
    return ax


def plot_relative_spacing(
    formats: Sequence[str] = ("e4m3", "e5m2", "bf16"),
    ax=None,
    xlim: tuple[float, float] = (2.0**-18, 2.0**17),
    title: Optional[str] = None,
):
    """For each binade [2^k, 2^(k+1)) holding values of a format, the largest gap between
    two neighbouring values relative to the smaller one (in the normal range 2^-mantissa
    bits; it grows through the subnormals), one step line per format. Rounding to nearest
    errs by at most half of it. Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    for fmt in formats:
        v = positive_values(fmt).astype(np.float64)
        gap = np.diff(v) / v[:-1]
        k = np.floor(np.log2(v[:-1])).astype(int)
        binades = np.unique(k)
        worst = np.array([gap[k == b].max() for b in binades])
        keep = (2.0 ** (binades + 1) > xlim[0]) & (2.0**binades < xlim[1])
        edges = 2.0 ** np.append(binades[keep], binades[keep][-1] + 1)
        ax.stairs(
            worst[keep] * 100,
            edges,
            color=FORMAT_COLOURS.get(fmt, "0.3"),
            label=_NAMES[fmt],
            linewidth=2,
            baseline=None,
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(xlim)
    ax.set_xlabel("value (log scale)")
    ax.set_ylabel("largest gap (%)")
    ax.set_ylim(0.3, 300)
    ax.grid(True, which="major", alpha=0.25)
    # the legend in the empty band between 1 % and 10 %, clear of every format's steps (the
    # FP8 formats' gaps are 12.5 % or more, BF16's 0.78 %)
    band = (np.log10(3.0) - np.log10(0.3)) / (np.log10(300) - np.log10(0.3))
    ax.legend(
        loc="center",
        bbox_to_anchor=(0.5, band),
        ncol=3,
        frameon=False,
        columnspacing=1.0,
        handlelength=1.2,
    )
    if title:
        ax.set_title(title)
    return ax


def plot_parts(
    rows: Mapping[str, Mapping[str, float]],
    ax=None,
    unit_label: str = "bytes",
    title: Optional[str] = None,
    total_format: str = "{:.3g}",
    xmax: Optional[float] = None,
    legend: bool = True,
):
    """Horizontal stacked bars, one per ``label -> {part: value}`` row (top to bottom), each
    part coloured by :data:`PART_COLOURS` (unknown parts: grey) and the row's total written
    at its end. ``xmax``: the axis limit (default: room for the largest total and its
    label); ``legend``: a legend of the parts below the axes. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ax = ax or plt.gca()
    labels = list(rows)
    y = np.arange(len(labels))[::-1]
    seen = []
    totals = []
    for yi, label in zip(y, labels):
        left = 0.0
        for part, value in rows[label].items():
            if value <= 0:
                continue
            colour = PART_COLOURS.get(part, PART_COLOURS["other"])
            ax.barh(yi, value, left=left, color=colour, edgecolor="0.2", height=0.7)
            left += value
            if part not in seen:
                seen.append(part)
        totals.append(left)
    limit = xmax if xmax is not None else max(totals) * 1.25
    for yi, total in zip(y, totals):
        ax.text(total + 0.01 * limit, yi, total_format.format(total), va="center", ha="left")
    ax.set_yticks(y, labels)
    ax.set_xlim(0, limit)
    ax.set_xlabel(unit_label)
    ax.grid(True, axis="x", alpha=0.3)
    if legend:
        handles = [
            Patch(
                facecolor=PART_COLOURS.get(p, PART_COLOURS["other"]),
                edgecolor="0.2",
                label=_PART_LABELS.get(p, p),
            )
            for p in seen
        ]
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.4, -0.28),
            ncol=3,
            frameon=False,
            handlelength=1.0,
            columnspacing=0.8,
        )
    if title:
        ax.set_title(title)
    return ax


def plot_step_errors(
    results: Mapping[str, object],
    ax=None,
    colours: Optional[Mapping[str, str]] = None,
    styles: Optional[Mapping[str, str]] = None,
    title: Optional[str] = None,
):
    """The relative error (%) of the values an FP8 all-reduce sends in each step, one line
    per labelled result of :func:`collectives.fp8.fp8_all_reduce` or
    :func:`collectives.fp8.msamp_all_reduce` run with ``step_errors=True`` (their
    :attr:`~collectives.fp8.FP8AllReduceResult.step_errors`), against the step: the error a
    partial sum carries hop by hop. Steps that send nothing are left out. ``colours``,
    ``styles``: a colour and a matplotlib format string per label. Raises
    :class:`~collectives.CollectivesError` for a result without step errors. Returns the
    Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    for i, (label, result) in enumerate(results.items()):
        errors = getattr(result, "step_errors", None)
        if errors is None:
            raise CollectivesError(
                f"plot_step_errors: {label!r} has no step errors; run the all-reduce with "
                "step_errors=True"
            )
        errors = np.asarray(errors, dtype=float)
        steps = np.flatnonzero(np.isfinite(errors))
        colour = (colours or {}).get(label, PALETTE["blue"] if i == 0 else "0.3")
        style = (styles or {}).get(label, "-")
        ax.plot(steps, 100 * errors[steps], style, color=colour, label=label, markersize=3)
    ax.set_xlabel("step (hop)")
    ax.set_ylabel("error of the values sent (%)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    return ax
