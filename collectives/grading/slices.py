"""Compatibility module: :mod:`collectives.grading.tasks.topology_reasoning` under its
earlier name (the notebook on TPU slices, and released copies of it, use
``collectives.grading.slices``)."""

from .tasks.topology_reasoning import *  # noqa: F403 (the old module's names)
from .tasks.topology_reasoning import __all__  # noqa: F401
