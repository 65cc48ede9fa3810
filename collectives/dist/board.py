"""Where every worker is: a small shared file each rank writes its job and step into.

A worker (:mod:`collectives.dist.worker`) writes, before every step of a Schedule, its
job index and step number into its row of a memory-mapped file (a few bytes, no system
call). When a rank dies or hangs, the launcher reads the board and names the job and step
each rank had reached; a sweep reads it to move its progress bar. Left out: anything a rank
does inside one step (the board says "step 3", not which message it waits for).
"""

import numpy as np

__all__ = ["Board", "STARTING", "RUNNING", "FINISHING", "PHASES"]

#: phases a rank reports in column 2 of its row
STARTING, RUNNING, FINISHING = 0, 1, 2
#: what :meth:`Board.where` says of a rank in each phase but RUNNING
PHASES = {
    STARTING: "starting (importing torch, joining the process group)",
    RUNNING: "running",
    FINISHING: "in the final barrier, waiting for the others",
}


class Board:
    """``n`` rows of ``(job, step, phase)`` in the int64 file at ``path``."""

    def __init__(self, path, n, create=False):
        mode = "w+" if create else "r+"
        self.rows = np.memmap(path, dtype=np.int64, mode=mode, shape=(n, 3))
        if create:
            self.rows[:] = (-1, -1, STARTING)
            self.rows.flush()

    def at(self, rank, job, step=-1):
        """Rank ``rank`` now runs job ``job`` at step ``step``."""
        self.rows[rank] = (job, step, RUNNING)

    def finishing(self, rank):
        """Rank ``rank`` has run every job."""
        self.rows[rank, 2] = FINISHING

    def where(self, rank, describe_job):
        """Where ``rank`` was, in words: ``describe_job(job, step)`` names a job and step."""
        job, step, phase = (int(v) for v in self.rows[rank])
        if phase != RUNNING or job < 0:
            return PHASES.get(phase, "starting")
        return describe_job(job, step)

    def jobs_done(self, rank):
        """How many jobs ``rank`` has finished (its current job's index, or all when
        finishing)."""
        job, _, phase = (int(v) for v in self.rows[rank])
        return None if phase == FINISHING else max(job, 0)
