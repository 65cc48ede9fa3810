"""The instructor's tools: the sandboxed grading kernel, class grading and the prechecks.

``sandbox``
    the kernel provisioner that runs every autograded notebook under bubblewrap, and its kernel
    spec: ``python -m collectives_grader.sandbox install|check``.
``classroom``
    grading every submission of an assignment (checked first, sandboxed, in parallel,
    resumable), then feedback and ``grades.csv``: ``python -m collectives_grader.classroom
    grade|status <assignment>`` (``make grade ASSIGNMENT=...``).
``precheck``
    what makes a submission ungradable, found before nbgrader runs, and the tamper report.

These need jupyter_client and nbgrader (the ``course`` extra), and sit outside the
``collectives`` package on purpose: the book never imports them, and the read-only copy of
``collectives/`` that graded code imports (:mod:`collectives.grading.isolation.snapshot`)
does not hold them. This package imports ``collectives``; ``collectives`` never imports it
(its compatibility modules ``collectives.grading.sandbox``, ``.classroom`` and ``.precheck``
re-export these for old commands and imports, and nothing in ``collectives`` imports those).
"""

__all__ = []
