"""Compatibility module: :mod:`collectives.grading.tasks.real_processes` under its earlier
name (the notebook on real processes, and released copies of it, use
``collectives.grading.processes``)."""

from .tasks.real_processes import *  # noqa: F403 (the old module's names)
from .tasks.real_processes import __all__  # noqa: F401
