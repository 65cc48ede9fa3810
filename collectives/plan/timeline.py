"""One step of a :class:`~collectives.plan.Plan` laid out in time: what runs when, per lane.

:func:`timeline` turns a plan's own totals into start and end times, so that a timeline
(a Gantt chart, :func:`collectives.viz.timeline.draw_timeline`) and the plan's numbers
cannot disagree: the last span ends at ``plan.step_seconds``, and the exposed spans add up
to ``plan.exposed_seconds``, whatever the layout.

What is laid out, on one device of the first pipeline stage (the stage that ends the
step), lane by lane: "compute" (the matmuls, and the pipeline bubble as idle time), then
one lane per parallelism whose collectives the step issues ("tp", "cp", "ep", "pp",
"fsdp", "dp": the first word of a record's purpose). Each pass (forward, then backward,
the recomputed forward counted in the backward as the planner counts it) is cut into the
plan's ``m`` micro-batch slices, and every slice holds, in this order:

1. its compute, ``pass / m`` seconds, and beside it, from the slice's start, the
   collectives that can hide behind it (the records whose ``hidden_behind`` names this
   pass: FSDP's gathers and reduce-scatters in every slice; the once-per-step DP
   reduction in the last backward slice, ZeRO-1's weight all-gather in the first forward
   slice), one after the other in their overlap stream;
2. what of those does not fit beside the compute: each stream's excess, stream after
   stream, is *exposed* (the rule of :mod:`collectives.plan.report`:
   ``max(0, c + L - w)`` per slice and stream);
3. the slice's share (``1 / m``) of the collectives on the critical path (TP, CP, EP and
   the pipeline sends of its pass), exposed, one after the other.

The pipeline bubble, ``plan.bubble_seconds``, is one idle span between the forward and the
backward slices.

Left out, because the planner does not model it: the order of 1F1B (the first stage
alternates forward and backward micro-batches after its warm-up; here every forward
slice comes first), where the bubble's idle time falls (here: in one piece, between the
passes), and the interleaving of the critical-path collectives with the compute layer by
layer (here: together, after the slice's compute). Also the planner's, and pessimistic: a
data stream hides only behind its slice's compute, not behind the slice's exposed
critical-path collectives, although Megatron-LM issues the DP/FSDP collectives
asynchronously and their NIC traffic could go on while TP runs on NVLink (the chapter
computes that optimistic bound from these spans). The lengths are the planner's; the
order inside a slice is a drawing convention. Taught in chapter "Putting it together".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import CollectivesError

__all__ = ["Span", "Timeline", "timeline", "LANES", "lane_of"]

#: the lanes of a timeline, in the order they are drawn: compute first, then one per
#: parallelism (a record's lane is the first word of its purpose)
LANES = ("compute", "tp", "cp", "ep", "pp", "fsdp", "dp")

#: the passes of a training step and the record phases and windows each holds
_PASSES = (
    ("forward", ("forward",), ("forward", "first forward")),
    ("backward", ("backward", "recompute"), ("backward", "last backward")),
)


@dataclass(frozen=True)
class Span:
    """One bar of a timeline: ``lane`` (one of :data:`LANES`), ``label`` (a record's
    purpose, "forward 1/4", "pipeline bubble"), ``start`` and ``end`` (seconds from the
    step's start), ``kind`` ("compute", "bubble", "hidden": communication behind compute,
    "exposed": communication on the step's time), ``pass_name`` ("forward", "backward",
    or None for the bubble) and ``micro_batch`` (0-based, None for the bubble)."""

    lane: str
    label: str
    start: float
    end: float
    kind: str
    pass_name: Optional[str] = None
    micro_batch: Optional[int] = None

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Timeline:
    """A plan's step in time (module text): ``spans`` in order of their start, the
    ``lanes`` that hold any, ``step_seconds`` (the plan's), ``micro_batches`` and the
    plan's ``name``."""

    name: str
    spans: tuple[Span, ...]
    lanes: tuple[str, ...]
    step_seconds: float
    micro_batches: int

    def seconds(self, kind: str, lane: Optional[str] = None) -> float:
        """Total seconds of the spans of ``kind`` (on ``lane``, or every lane)."""
        return float(
            sum(s.seconds for s in self.spans if s.kind == kind and lane in (None, s.lane))
        )

    @property
    def exposed_seconds(self) -> float:
        """Seconds of exposed communication: the plan's ``exposed_seconds``."""
        return self.seconds("exposed")


def lane_of(purpose: str) -> str:
    """The lane of a record: the first word of its ``purpose`` ("tp activation all-gather"
    -> "tp"); raises :class:`~collectives.CollectivesError` for a purpose of no lane."""
    words = purpose.split() if isinstance(purpose, str) else []
    if not words or words[0] not in LANES[1:]:
        raise CollectivesError(
            f"no timeline lane for purpose {purpose!r}: a purpose starts with one of "
            f"{', '.join(LANES[1:])}"
        )
    return words[0]


def _pass_of(record) -> int:
    """Index into :data:`_PASSES` of the pass that holds ``record``."""
    for i, (_, phases, windows) in enumerate(_PASSES):
        if record.hidden_behind is not None and record.hidden_behind in windows:
            return i
        if record.hidden_behind is None and record.phase in phases:
            return i
    raise CollectivesError(
        f"{record.purpose!r} (phase {record.phase!r}, hidden behind "
        f"{record.hidden_behind!r}) belongs to no pass of a training step"
    )


def timeline(plan) -> Timeline:
    """Lay ``plan`` (a :class:`~collectives.plan.Plan` of :func:`training_step`, or a phase
    of :func:`inference`) out in time (module text). Returns a :class:`Timeline` whose
    last span ends at ``plan.step_seconds`` and whose exposed spans add up to
    ``plan.exposed_seconds``."""
    if not hasattr(plan, "collectives") or not hasattr(plan, "forward_seconds"):
        raise CollectivesError(f"timeline needs a cl.plan Plan, got {type(plan).__name__}")
    m = max(int(plan.micro_batches), 1)
    records = [(r, lane_of(r.purpose), _pass_of(r)) for r in plan.collectives]
    spans: list[Span] = []
    t = 0.0
    for index, (pass_name, _, windows) in enumerate(_PASSES):
        if index == 1 and plan.bubble_seconds > 0:
            end = t + plan.bubble_seconds
            spans.append(Span("compute", "pipeline bubble", t, end, "bubble"))
            t = end
        w = (plan.forward_seconds, plan.backward_seconds)[index] / m
        mine = [(r, lane) for r, lane, p in records if p == index]
        if w <= 0 and not mine:
            continue
        each, once = windows
        for i in range(m):
            if w > 0:
                spans.append(
                    Span("compute", f"{pass_name} {i + 1}/{m}", t, t + w, "compute", pass_name, i)
                )
            # the collectives behind this slice, stream by stream: (record, lane, seconds)
            streams: dict[str, list] = {}
            for r, lane in mine:
                if r.hidden_behind == each:
                    streams.setdefault(r.stream, []).append((r, lane, r.total_seconds / m))
            for r, lane in mine:
                first_or_last = i == (0 if once == "first forward" else m - 1)
                if r.hidden_behind == once and first_or_last:
                    streams.setdefault(r.stream, []).append((r, lane, r.total_seconds))
            excess_at = t + w
            for stream in sorted(streams):
                start = t
                for r, lane, seconds in streams[stream]:
                    end = start + seconds
                    hidden_end = min(end, t + w)
                    if hidden_end > start:
                        spans.append(
                            Span(lane, r.purpose, start, hidden_end, "hidden", pass_name, i)
                        )
                    if end > t + w:
                        over = end - max(start, t + w)
                        spans.append(
                            Span(
                                lane,
                                r.purpose,
                                excess_at,
                                excess_at + over,
                                "exposed",
                                pass_name,
                                i,
                            )
                        )
                        excess_at += over
                    start = end
            t = excess_at
            for r, lane in mine:
                if r.hidden_behind is None:
                    seconds = r.total_seconds / m
                    spans.append(Span(lane, r.purpose, t, t + seconds, "exposed", pass_name, i))
                    t += seconds
    used = {s.lane for s in spans}
    lanes = tuple(lane for lane in LANES if lane in used)
    spans.sort(key=lambda s: (s.start, LANES.index(s.lane)))
    return Timeline(plan.name, tuple(spans), lanes, float(t), m)
