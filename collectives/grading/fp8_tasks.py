"""Compatibility module: :mod:`collectives.grading.tasks.fp8` under its earlier name (the
notebook on FP8, and released copies of it, use ``collectives.grading.fp8_tasks``)."""

from .tasks.fp8 import *  # noqa: F403 (the old module's names)
from .tasks.fp8 import __all__  # noqa: F401
