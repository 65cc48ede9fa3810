"""The one error hierarchy of the package.

Every check on user input raises a subclass of :class:`CollectivesError` (itself a
``ValueError``), with a message that names what is wrong and the details as attributes,
so that a notebook can show the message and a test can inspect the fields.
"""

__all__ = ["CollectivesError", "ScheduleError", "TopologyError", "GradingError"]


class CollectivesError(ValueError):
    """Base class: bad input to any function of ``collectives``."""


class ScheduleError(CollectivesError):
    """A schedule is malformed, or does not compute its collective.

    Attributes (``None`` where they do not apply): ``step`` (0-based step index),
    ``rank``, ``chunk`` (buffer slot on that rank), ``group`` (the rank's group, for a
    collective over groups), ``holds`` and ``expected`` (human-readable descriptions of the
    slot's content).
    """

    def __init__(self, message, *, step=None, rank=None, chunk=None, holds=None, expected=None,
                 group=None):
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


class SandboxError(CollectivesError, RuntimeError):
    """The grading sandbox cannot be set up (no bwrap, no user namespaces, a changed package
    copy), so grading refuses to start (``collectives_grader.sandbox``). A ``RuntimeError``
    too, as it was before it joined this hierarchy."""


__all__ += ["SandboxError"]
