"""Compatibility module: :mod:`collectives.grading.tasks.planning` under its earlier name (the
notebook on planning a training run, and released copies of it, use
``collectives.grading.plan_tasks``)."""

from .tasks.planning import *  # noqa: F403 (the old module's names)
from .tasks.planning import __all__  # noqa: F401
