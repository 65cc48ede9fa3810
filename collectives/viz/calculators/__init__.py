"""The offline calculators: grids of model numbers computed when the book is built, shown by
``_static/calculators.js`` (plotly.js served from the book) so that moving a control needs
no kernel; ``live=True`` gives the same calculator as ipywidgets.

:mod:`.collective` times one collective over algorithms, ranks, link speeds and buffer sizes
(the grid from :func:`collectives.cost.time_grid`); :mod:`.plan` shows whole training steps
planned by :mod:`collectives.plan`; :mod:`.formats` prints their numbers; :mod:`.fp8` is the
FP8 explorer (a number's bits and rounding in E4M3, E5M2 and BF16, in the browser). The old paths
``collectives.viz.interactive`` and ``collectives.viz.plan`` still name all of them.
"""

from .collective import (
    DEFAULT_LATENCIES,
    DEFAULT_SIZES,
    Calculator,
    Grid,
    busbw_range,
    calculator,
    case,
    compute_grid,
    data_steps,
    model_text,
    power_of_two,
    rank_label,
    time_axis,
)
from .formats import format_bytes, format_latency, format_rate, format_seconds
from .fp8 import FP8Explorer, fp8_explorer
from .plan import (
    CLASS_COLOURS,
    DEFAULT_CLUSTERS,
    DEFAULT_MODELS,
    DEFAULT_RECIPES,
    ClusterChoice,
    PlanCalculator,
    PlanGrid,
    level_label,
    plan_calculator,
    plan_grid,
    purpose_class,
    readout_rows,
    summarise,
)

__all__ = [
    "Grid",
    "case",
    "power_of_two",
    "compute_grid",
    "calculator",
    "Calculator",
    "rank_label",
    "DEFAULT_SIZES",
    "DEFAULT_LATENCIES",
    "data_steps",
    "model_text",
    "time_axis",
    "busbw_range",
    "format_seconds",
    "format_latency",
    "format_bytes",
    "format_rate",
    "ClusterChoice",
    "PlanGrid",
    "PlanCalculator",
    "plan_grid",
    "plan_calculator",
    "summarise",
    "purpose_class",
    "level_label",
    "readout_rows",
    "DEFAULT_MODELS",
    "DEFAULT_CLUSTERS",
    "DEFAULT_RECIPES",
    "CLASS_COLOURS",
    "FP8Explorer",
    "fp8_explorer",
]
