"""Compatibility module: class grading (``grade``, ``status``) is instructor tooling, now
:mod:`collectives_grader.classroom` (``python -m collectives_grader.classroom ...``); this
name keeps old imports and ``python -m collectives.grading.classroom ...`` working.

``collectives.grading`` never imports this module (nor ``collectives_grader``): the graded code's
copy of the package does not need the instructor's tools.
"""

import sys

from collectives_grader.classroom import *  # noqa: F403 (the old module's names)
from collectives_grader.classroom import __all__, main  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
