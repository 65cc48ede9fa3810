"""Compatibility module: the checks of three notebooks under their earlier common name
``collectives.grading.collective_tasks`` (the notebooks on all-reduce, all-to-all and cost
models, and released copies of them, use it): :mod:`collectives.grading.tasks.all_reduce`,
:mod:`collectives.grading.tasks.all_to_all` and :mod:`collectives.grading.tasks.cost_models`."""

from .tasks.all_reduce import *  # noqa: F403 (the old module's names)
from .tasks.all_reduce import __all__ as _all_0
from .tasks.all_to_all import *  # noqa: F403 (the old module's names)
from .tasks.all_to_all import __all__ as _all_1
from .tasks.cost_models import *  # noqa: F403 (the old module's names)
from .tasks.cost_models import __all__ as _all_2

__all__ = list(_all_0) + list(_all_1) + list(_all_2)
