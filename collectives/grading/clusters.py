"""Compatibility module: :mod:`collectives.grading.tasks.cluster_collectives` under its
earlier name (the notebook on GPU clusters, and released copies of it, use
``collectives.grading.clusters``)."""

from .tasks.cluster_collectives import *  # noqa: F403 (the old module's names)
from .tasks.cluster_collectives import __all__  # noqa: F401
