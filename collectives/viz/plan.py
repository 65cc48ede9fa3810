"""Figures of training-step plans, and (a compatibility module) every name of the
capstone's plan calculator, which now lives in :mod:`collectives.viz.calculators.plan`.

:func:`plot_stacked` draws horizontal stacked bars of whatever breakdown a chapter takes
from its plans (a step into compute, bubble and exposed communication; memory per device
by kind against the HBM; communication by parallelism; a what-if's step); the Gantt chart
of one step is :func:`collectives.viz.timeline.draw_timeline`. Drawing only: every number
comes from :mod:`collectives.plan`. matplotlib is imported inside the function."""

import math

from .calculators.plan import (
    CLASS_COLOURS,
    DEFAULT_CLUSTERS,
    DEFAULT_MODELS,
    DEFAULT_RECIPES,
    MEMORY_PARTS,
    STEP_PARTS,
    ClusterChoice,
    PlanCalculator,
    PlanGrid,
    level_label,
    plan_calculator,
    plan_grid,
    purpose_class,
    readout_rows,
    summarise,
)

#: the readout rows under their old private name (the site's browser test reads them)
_readout_rows = readout_rows

__all__ = [
    "ClusterChoice",
    "PlanGrid",
    "PlanCalculator",
    "plan_grid",
    "plan_calculator",
    "summarise",
    "purpose_class",
    "level_label",
    "readout_rows",
    "DEFAULT_MODELS",
    "DEFAULT_CLUSTERS",
    "DEFAULT_RECIPES",
    "CLASS_COLOURS",
    "plot_stacked",
    "LEGIBLE",
    "STEP_PARTS",
    "MEMORY_PARTS",
]


# ---- figures of plans ----------------------------------------------------------------------


#: a part whose every segment is under this fraction of the axis is left out of the legend
#: (it cannot be seen at a phone's width)
LEGIBLE = 0.005


def _total_decimals(ends) -> int:
    """One number of decimals for every bar's total: three significant figures of the
    largest, and at least one decimal where a total is under 10."""
    positive = [e for e in ends if e > 0]
    if not positive:
        return 0
    largest = max(positive)
    decimals = max(0, 2 - math.floor(math.log10(largest)))
    return max(decimals, 1 if min(positive) < 10 else 0)


def plot_stacked(
    rows,
    parts,
    ax=None,
    *,
    unit: float = 1.0,
    xlabel: str = "seconds per step",
    limit=None,
    limit_label: str = "",
    title=None,
    totals: bool = True,
    ncol: int = 2,
):
    """Horizontal stacked bars, one per row, top to bottom, each row's label written above
    its bar (so that the bars keep the figure's width on a phone): ``rows`` maps a row's
    label to ``{part: value}`` and ``parts`` is ``[(part, label, colour), ...]``, the
    order, legend and look of the segments (a part a row lacks, or 0, is skipped; the
    legend names the parts drawn, in this order, leaving out a part too thin to see:
    under :data:`LEGIBLE` of the axis in every row). Values are divided by ``unit``;
    ``totals`` writes each bar's total at its end, all with the same decimals; ``limit``
    (in the values' units, before ``unit``) draws a dashed vertical line named
    ``limit_label`` (an HBM, a step time).
    Draws what it is given (a plan's breakdown, its memory, a what-if's step): nothing is
    computed here. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from ..errors import CollectivesError
    from .style import FIG_WIDTH, PALETTE, font_size

    rows = dict(rows)
    parts = list(parts)
    if not rows or not parts:
        raise CollectivesError("plot_stacked needs at least one row and one part")
    known = {p[0] for p in parts}
    for label, values in rows.items():
        unknown = set(values) - known
        if unknown:
            raise CollectivesError(f"row {label!r} has parts {sorted(unknown)} not in parts")
    totals_ = [sum(max(0.0, float(v.get(p[0], 0.0))) for p in parts) / unit for v in rows.values()]
    scale = max(*totals_, 0.0 if limit is None else limit / unit) or 1.0
    # the legend names the parts one can see: a segment of at least LEGIBLE of the axis
    drawn = [
        p
        for p in parts
        if any(float(v.get(p[0], 0.0)) / unit >= LEGIBLE * scale for v in rows.values())
    ]
    legend_rows = -(-len(drawn) // max(1, ncol))
    if ax is None:
        _, ax = plt.subplots(
            figsize=(FIG_WIDTH, 0.62 * len(rows) + 0.3 * legend_rows + 1.3),
            constrained_layout=True,
        )
    ends = []
    for y, values in enumerate(rows.values()):
        left = 0.0
        for key, _, colour in parts:
            width = float(values.get(key, 0.0)) / unit
            if width <= 0:
                continue
            ax.barh(y, width, left=left, color=colour, height=0.5, edgecolor="white", linewidth=0.5)
            left += width
        ends.append(left)
    right = max(*ends, 0.0 if limit is None else limit / unit) or 1.0
    decimals = _total_decimals(ends)
    for y, (label, end) in enumerate(zip(rows, ends)):
        # on white, so that a limit line crossing a long label stops short of its letters
        ax.text(
            0,
            y - 0.3,
            label,
            va="bottom",
            ha="left",
            fontsize=font_size("small"),
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
            zorder=3,
        )
        if totals and end > 0:
            ax.text(end, y, f" {end:.{decimals}f}", va="center", fontsize=font_size("small"))
    if limit is not None:
        ax.axvline(limit / unit, color=PALETTE["black"], linestyle="--", linewidth=1)
        if limit_label:
            ax.text(
                limit / unit, -0.75, f" {limit_label}", va="bottom", fontsize=font_size("small")
            )
    ax.set_yticks([])
    ax.set_ylim(len(rows) - 0.6, -0.85 if limit is not None and limit_label else -0.75)
    ax.set_xlim(0, right * 1.15)
    ax.set_xlabel(xlabel)
    ax.grid(True, axis="x", alpha=0.3)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title)
    handles = [Patch(facecolor=colour, label=name) for _, name, colour in drawn]
    # under the figure, outside the axes: the bars keep the figure's width
    constrained = type(ax.figure.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    ax.figure.legend(
        handles=handles,
        loc="outside lower center" if constrained else "lower center",
        ncol=ncol,
        frameon=False,
        fontsize=font_size("small"),
    )
    return ax
