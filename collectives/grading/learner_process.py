"""Compatibility module: the learner's process program is now
:mod:`collectives.grading.isolation.learner_process` (run by its path from the package copy;
this module only keeps the earlier import path of its names)."""

from .isolation.learner_process import *  # noqa: F403 (the old module's names)
from .isolation.learner_process import __all__  # noqa: F401
