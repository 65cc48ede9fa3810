"""Cost figures: time and bus bandwidth against buffer size, where the time goes per link
level, horizontal bars of bandwidths, and the bytes a collective puts on a GPU's NVLinks.

Everything drawn is computed below viz: times by :func:`collectives.time`, per-level seconds
by :meth:`collectives.Timing.level_seconds`, a GPU's link bytes by
:meth:`collectives.Timing.endpoint_link_bytes`. Each algorithm has its colour in every figure
of the book (:func:`case_colour`, :mod:`.style`), each link level too. matplotlib is imported
inside the functions. Taught from chapter "Cost models and the ring all-gather" on, and in
the hardware chapters.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from .style import LEVEL_COLOURS, algorithm_colour, font_size

__all__ = [
    "case_colour",
    "plot_costs",
    "BAR_COLOURS",
    "LEVEL_LABELS",
    "level_seconds_bars",
    "plot_level_seconds",
    "plot_bars",
    "link_multiples",
    "plot_link_bytes",
]

#: one colour per link level (the book's, :mod:`.style`), and for the latency part of a bar
BAR_COLOURS = {**LEVEL_COLOURS, "link": "0.5", "latency": "0.75"}
#: how each link level is named in legends
LEVEL_LABELS = {
    "nvlink": "NVLink",
    "pcie": "PCIe",
    "leaf": "NIC to leaf",
    "spine": "leaf to spine",
    "core": "spine to core",
    "ici": "ICI",
    "dcn": "DCN",
    "link": "link",
    "latency": "latency",
}


def case_colour(label, schedule):
    """The book's colour (:func:`collectives.viz.style.algorithm_colour`) for a cost-plot case:
    by its ``label`` if that names an algorithm ("ring", "Rabenseifner"), else by the
    schedule's name without the collective and a "_concurrent" ("torus_all_gather_concurrent"
    is a torus, "double_binary_tree_all_reduce" a tree). Raises
    :class:`~collectives.CollectivesError` if neither is known."""
    try:
        return algorithm_colour(label)
    except CollectivesError:
        pass
    name = schedule.name.removesuffix("_concurrent").removesuffix("_" + schedule.collective)
    try:
        return algorithm_colour(name.replace("_", " "))
    except CollectivesError:
        raise CollectivesError(
            f"no colour for case {label!r} (schedule {schedule.name!r}): name the algorithm "
            "in the label or add it to collectives/viz/style.py"
        ) from None


_REPEAT_STYLES = ("-", "--", ":", "-.")


def plot_costs(cases, sizes, metric="seconds", ax=None):
    """Cost against buffer size for several ``cases`` = [(label, schedule, topology), ...].

    ``metric``: "seconds", "algbw" or "busbw" (bytes/s, nccl-tests' definitions); sizes
    in bytes (nccl-tests' S). Log-log axes. Each line has its algorithm's colour in every
    figure of the book (:func:`case_colour`); two cases of the same algorithm (a torus one
    axis at a time and all axes at once) share the colour and differ in line style.
    """
    import matplotlib.pyplot as plt

    from ..cost import algbw, busbw, time

    if metric not in ("seconds", "algbw", "busbw"):
        raise CollectivesError(f"metric must be 'seconds', 'algbw' or 'busbw', got {metric!r}")
    ax = ax or plt.gca()
    sizes = np.asarray(sizes, dtype=float)
    seen = {}
    for label, schedule, topology in cases:
        colour = case_colour(label, schedule)
        repeat = seen.get(colour, 0)
        seen[colour] = repeat + 1
        seconds = np.array([time(schedule, topology, s).seconds for s in sizes])
        if metric == "seconds":
            y = seconds
        elif metric == "algbw":
            y = np.array([algbw(s, t) for s, t in zip(sizes, seconds)])
        else:
            y = np.array(
                [busbw(schedule.collective, s, t, schedule.n_ranks) for s, t in zip(sizes, seconds)]
            )
        ax.loglog(
            sizes,
            y,
            marker="o",
            markersize=3,
            label=label,
            color=colour,
            linestyle=_REPEAT_STYLES[repeat % len(_REPEAT_STYLES)],
        )
    ax.set_xlabel("buffer size S (bytes)")
    ax.set_ylabel(
        {"seconds": "time (s)", "algbw": "algbw (bytes/s)", "busbw": "busbw (bytes/s)"}[metric]
    )
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=font_size("tiny"))
    return ax


def level_seconds_bars(
    timings: Mapping[str, Any], ax=None, unit: float = 1e-3, unit_label: str = "ms"
):
    """One horizontal bar per case (``{label: Timing}``, top to bottom), split into the
    transfer seconds of the steps each link level bounds (``Timing.level_seconds()``) and
    the latency of all steps (grey). The bar's length is the case's total time."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    labels = list(timings)
    used = []
    for row, label in enumerate(labels):
        timing = timings[label]
        left = 0.0
        parts = dict(timing.level_seconds())
        latency = float(np.sum(timing.step_latency))
        if latency > 0:
            parts["latency"] = latency
        for level, seconds in parts.items():
            width = seconds / unit
            ax.barh(
                row,
                width,
                left=left,
                color=BAR_COLOURS.get(level, "0.5"),
                edgecolor="white",
                height=0.6,
                label=LEVEL_LABELS.get(level, level) if level not in used else None,
            )
            used.append(level)
            left += width
        ax.text(left, row, f" {timing.seconds / unit:.3g}", va="center")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit_label})")
    ax.margins(x=0.2)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.22),
        ncol=min(len(labels), 3),
        frameon=False,
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def plot_level_seconds(rows, ax=None, title: Optional[str] = None):
    """Horizontal stacked bars, one per ``(label, timing)`` in ``rows``: the transfer seconds
    each link level bounds (:meth:`collectives.Timing.level_seconds`), ICI then DCN, in
    milliseconds; the bottleneck level is named at the end of each bar."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    labels = [label for label, _ in rows]
    for i, (_, timing) in enumerate(rows):
        seconds = timing.level_seconds()
        left = 0.0
        for level in ("ici", "dcn"):
            ms = seconds.get(level, 0.0) * 1e3
            ax.barh(
                i,
                ms,
                left=left,
                color=LEVEL_COLOURS[level],
                height=0.6,
                label=level.upper() if i == 0 else None,
            )
            left += ms
        if timing.bottleneck_level is not None:
            ax.text(
                left,
                i,
                f"  {timing.bottleneck_level.upper()}",
                va="center",
                fontsize=font_size("small"),
            )
    ax.set_yticks(range(len(rows)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("transfer time (ms)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="lower right", frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_bars(
    rows: Iterable[tuple[str, float, str]],
    ax=None,
    unit: float = 1e9,
    unit_label: str = "GB/s",
    log: bool = True,
    title: Optional[str] = None,
):
    """Horizontal bars, one per ``(label, value, colour)`` row (top to bottom), each with its
    value (divided by ``unit``) written at its end. Returns the Axes."""
    import matplotlib.pyplot as plt

    rows = list(rows)
    ax = ax or plt.gca()
    labels = [r[0] for r in rows]
    values = np.array([r[1] for r in rows], dtype=float) / unit
    y = np.arange(len(rows))[::-1]
    ax.barh(y, values, color=[r[2] for r in rows], edgecolor="0.2", height=0.7)
    for yi, v in zip(y, values):
        text = f"{v:,.0f}" if v >= 10 else f"{v:.2g}"  # a small value keeps two digits
        ax.text(v * (1.08 if log else 1.01), yi, text, va="center", ha="left")
    ax.set_yticks(y, labels)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(values.min() / 2, values.max() * 6)
    else:
        ax.set_xlim(0, values.max() * 1.3)
    ax.set_xlabel(unit_label)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax


def link_multiples(timing, topology, gpu: Optional[int] = None) -> tuple[float, float]:
    """:meth:`collectives.Timing.endpoint_link_bytes` on the NVLink level (the first level
    when there is none) as multiples of the buffer ``timing.nbytes``: (up, GPU to NVSwitch;
    down, NVSwitch to GPU) of GPU ``gpu``, or of the busiest links (``gpu=None``)."""
    levels = tuple(topology.info.levels)
    level = "nvlink" if "nvlink" in levels else levels[0]
    up, down = timing.endpoint_link_bytes(topology, level, gpu)
    return up / timing.nbytes, down / timing.nbytes


def plot_link_bytes(
    cases: Sequence[tuple[str, object, str]],
    topology,
    gpu: Optional[int] = None,
    ax=None,
    title: Optional[str] = None,
):
    """Bytes on a GPU's link to its NVSwitch, up (solid) and down (hatched), as a multiple
    of the buffer ``S``, for each ``(label, timing, colour)`` (a :class:`collectives.Timing`
    on ``topology``, whose ``nbytes`` is ``S``); ``gpu=None``: the busiest links (see
    :func:`link_multiples`). Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    y = np.arange(len(cases))[::-1]
    for yi, (_label, timing, colour) in zip(y, cases):
        u, d = link_multiples(timing, topology, gpu)
        ax.barh(yi + 0.18, u, height=0.34, color=colour, edgecolor="0.2")
        ax.barh(yi - 0.18, d, height=0.34, color=colour, edgecolor="0.2", hatch="//", alpha=0.6)
        ax.text(u + 0.03, yi + 0.18, f"{u:.3f}", va="center")
        ax.text(d + 0.03, yi - 0.18, f"{d:.3f}", va="center")
    ax.set_yticks(y, [c[0] for c in cases])
    ax.set_xlabel("bytes on the link / S")
    ax.set_xlim(0, 2.6)
    ax.grid(True, axis="x", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax
