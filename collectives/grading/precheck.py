"""Compatibility module: the checks of a submission before grading is instructor tooling, now
:mod:`collectives_grader.precheck`; this name keeps old imports working.

``collectives.grading`` never imports this module (nor ``collectives_grader``): the graded code's
copy of the package does not need the instructor's tools.
"""

from collectives_grader.precheck import *  # noqa: F403 (the old module's names)
from collectives_grader.precheck import __all__  # noqa: F401
