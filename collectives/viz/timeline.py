"""A step's timeline as a Gantt chart: one lane per parallelism, drawn from
:func:`collectives.plan.timeline` (so the chart ends at the plan's step time and its solid
bars add up to the plan's exposed communication).

:func:`draw_timeline` draws one :class:`~collectives.plan.Timeline`: the compute lane in
grey (the pipeline bubble hatched, idle), then a lane per parallelism in the capstone's
colours (:data:`collectives.viz.calculators.plan.CLASS_COLOURS`), each collective *pale*
where it hides behind compute and *solid* where the step waits for it; a dashed line marks
the step's end. :func:`lane_label` names a lane as the chart does. Nothing is computed
here: the spans are the planner's (what is modelled and left out is in
:mod:`collectives.plan.timeline`). matplotlib is imported inside the function. Taught in
chapter "Putting it together".
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import CollectivesError
from .calculators.plan import CLASS_COLOURS, TIMELINE_LANES
from .style import FIG_WIDTH, PALETTE, font_size

__all__ = ["draw_timeline", "lane_label", "LANE_LABELS", "LANE_COLOURS", "HIDDEN_ALPHA"]

#: how the chart names each lane (short enough for a phone): the calculator's names, so that
#: the chapter's charts and its calculator label the lanes alike
LANE_LABELS = TIMELINE_LANES
#: the colour of each lane: compute grey, the parallelisms as in the plan calculator
LANE_COLOURS = dict(compute=PALETTE["grey"], **CLASS_COLOURS)
#: the opacity of a collective's span where it hides behind compute
HIDDEN_ALPHA = 0.3


def lane_label(lane: str) -> str:
    """A lane as the chart names it ("pp" -> "PP sends")."""
    if lane not in LANE_LABELS:
        raise CollectivesError(f"no timeline lane {lane!r}; the lanes are {', '.join(LANE_LABELS)}")
    return LANE_LABELS[lane]


def draw_timeline(
    timeline,
    ax=None,
    *,
    title: Optional[str] = None,
    xmax: Optional[float] = None,
    legend: bool = True,
):
    """Draw ``timeline`` (a :class:`collectives.plan.Timeline`) as a Gantt chart: lanes top
    to bottom, seconds from the step's start along x (to ``xmax`` if given, so that several
    charts share a scale), a dashed line and the step time at its end. ``legend``: the key
    (compute, bubble, hidden, exposed) under the axes. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    spans = getattr(timeline, "spans", None)
    lanes = getattr(timeline, "lanes", None)
    if spans is None or not lanes:
        raise CollectivesError(
            f"draw_timeline needs a cl.plan.timeline(plan), got {type(timeline).__name__}"
        )
    if xmax is not None and not xmax > 0:
        raise CollectivesError(f"xmax must be a positive number of seconds, got {xmax!r}")
    if ax is None:
        _, ax = plt.subplots(
            figsize=(FIG_WIDTH, 0.5 * len(lanes) + (2.0 if legend else 1.2)),
            constrained_layout=True,
        )
    row = {lane: k for k, lane in enumerate(lanes)}
    for s in spans:
        colour = LANE_COLOURS[s.lane]
        style: dict[str, Any]
        if s.kind == "bubble":
            style = dict(facecolor="white", edgecolor=PALETTE["olive"], hatch="///")
        elif s.kind == "hidden":
            style = dict(facecolor=colour, alpha=HIDDEN_ALPHA, edgecolor="none")
        elif s.kind == "compute":  # a thin white edge between micro-batches
            style = dict(facecolor=colour, edgecolor="white", linewidth=0.5)
        else:
            style = dict(facecolor=colour, edgecolor="none")
        ax.barh(row[s.lane], s.end - s.start, left=s.start, height=0.62, **style)
    step = timeline.step_seconds
    ax.axvline(step, color=PALETTE["black"], linestyle="--", linewidth=1)
    ax.set_yticks(range(len(lanes)), [lane_label(lane) for lane in lanes])
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(0, (xmax or step) * 1.02)
    ax.set_xlabel("seconds from the step's start")
    ax.grid(True, axis="x", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title(title if title is not None else f"one step: {step:.3g} s")
    if legend:
        grey = LANE_COLOURS["compute"]
        handles = [Patch(facecolor=grey, label="compute")]
        if any(s.kind == "bubble" for s in spans):
            handles.append(
                Patch(facecolor="white", edgecolor=PALETTE["olive"], hatch="///", label="bubble")
            )
        # a neutral pair (any lane's colour): pale hidden, solid exposed
        handles += [
            Patch(facecolor=PALETTE["black"], alpha=HIDDEN_ALPHA, label="pale: hidden"),
            Patch(facecolor=PALETTE["black"], label="solid: exposed"),
        ]
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2 if len(lanes) > 2 else -0.35),
            ncol=2,
            frameon=False,
            fontsize=font_size("small"),
        )
    return ax
