"""The one error hierarchy of the package.

Every check on user input raises a subclass of :class:`CollectivesError` (itself a
``ValueError``), with a message that names what is wrong and the details as attributes,
so that a notebook can show the message and a test can inspect the fields.

Where each is raised: :class:`ScheduleError` by the Schedule, its builders, transforms and
``verify``; :class:`TopologyError` by topologies, presets and costing; :class:`GradingError` by
the checks of the graded notebooks; :class:`DistError` by :mod:`collectives.dist` (a worker
process failed or timed out); :class:`LayoutError` by :mod:`collectives.plan` (a parallelism
layout does not fit); :class:`SandboxError` by the instructor tooling (``collectives_grader``:
the grading sandbox cannot be set up). Every other bad input raises :class:`CollectivesError`
itself.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

__all__ = [
    "CollectivesError",
    "ScheduleError",
    "TopologyError",
    "GradingError",
    "DistError",
    "LayoutError",
    "SandboxError",
]


class CollectivesError(ValueError):
    """Base class: bad input to any function of ``collectives``."""


class ScheduleError(CollectivesError):
    """A schedule is malformed, or does not compute its collective.

    Attributes (``None`` where they do not apply): ``step`` (0-based step index),
    ``rank``, ``chunk`` (buffer slot on that rank), ``group`` (the rank's group, for a
    collective over groups), ``holds`` and ``expected`` (human-readable descriptions of the
    slot's content).
    """

    def __init__(
        self,
        message: str,
        *,
        step: Optional[int] = None,
        rank: Optional[int] = None,
        chunk: Optional[int] = None,
        holds: Optional[str] = None,
        expected: Optional[str] = None,
        group: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.step = step
        self.group = group
        self.rank = rank
        self.chunk = chunk
        self.holds = holds
        self.expected = expected


class TopologyError(CollectivesError):
    """A topology is malformed, or does not fit the schedule it is asked to run."""


class GradingError(CollectivesError):
    """A learner's answer has the wrong form (type, shape) for the check it is given to."""


class DistError(CollectivesError):
    """A worker process of :mod:`collectives.dist` failed, or the run timed out.

    Attributes: ``rank`` (the failing rank, ``None`` on a timeout), ``exception`` (the
    worker's exception type name), ``worker_message``, ``worker_traceback``, ``task`` (the
    index of the job in :func:`~collectives.dist.run_many`), ``failures`` (for every rank
    that failed, ``{rank: "Type: message"}``), ``unfinished`` (ranks still running at a
    timeout) and ``reached`` (where every rank was when the run ended, from the workers'
    board: ``{rank: (job, step, phase)}``, job and step -1 before the first, phase
    "starting", "running" or "finishing"; empty when the launcher did not read it).
    """

    def __init__(
        self,
        message: str,
        *,
        rank: Optional[int] = None,
        exception: Optional[str] = None,
        worker_message: Optional[str] = None,
        worker_traceback: Optional[str] = None,
        task: Optional[int] = None,
        failures: Optional[Mapping[int, str]] = None,
        unfinished: Iterable[int] = (),
        reached: Optional[Mapping[int, tuple[int, int, str]]] = None,
    ) -> None:
        super().__init__(message)
        self.rank = rank
        self.exception = exception
        self.worker_message = worker_message
        self.worker_traceback = worker_traceback
        self.task = task
        self.failures = dict(failures or {})
        self.unfinished = tuple(unfinished)
        self.reached = dict(reached or {})


class LayoutError(CollectivesError):
    """A parallelism layout (:class:`collectives.plan.Layout`) does not fit the model, the
    batch or the cluster."""


class SandboxError(CollectivesError, RuntimeError):
    """The grading sandbox cannot be set up (no bwrap, no user namespaces, a changed package
    copy), so grading refuses to start (``collectives_grader.sandbox``). A ``RuntimeError``
    too, as it was before it joined this hierarchy."""
