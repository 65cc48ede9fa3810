"""The error of :mod:`collectives.dist` (a worker failed, a run timed out, or a schedule has
no process to run on), shared by its modules."""

from ..errors import CollectivesError

__all__ = ["DistError"]


class DistError(CollectivesError):
    """A worker process failed, or the run timed out.

    Attributes: ``rank`` (the failing rank, ``None`` on a timeout), ``exception`` (the
    worker's exception type name), ``worker_message``, ``worker_traceback``, ``task`` (the
    index of the job in :func:`~collectives.dist.run_many`), ``failures`` (for every rank
    that failed, ``{rank: "Type: message"}``) and ``unfinished`` (ranks still running at a
    timeout).
    """

    def __init__(self, message, *, rank=None, exception=None, worker_message=None,
                 worker_traceback=None, task=None, failures=None, unfinished=()):
        super().__init__(message)
        self.rank = rank
        self.exception = exception
        self.worker_message = worker_message
        self.worker_traceback = worker_traceback
        self.task = task
        self.failures = dict(failures or {})
        self.unfinished = tuple(unfinished)
