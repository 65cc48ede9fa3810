"""Compatibility module: the collective calculators now live in
:mod:`collectives.viz.calculators` (:mod:`~collectives.viz.calculators.collective`, with the
number formats in :mod:`~collectives.viz.calculators.formats`); the grid they show is
:func:`collectives.cost.time_grid`. Every name of the old module is here."""

from .calculators.collective import (
    DEFAULT_SIZES,
    Calculator,
    Grid,
    calculator,
    case,
    compute_grid,
    power_of_two,
)
from .calculators.formats import format_bytes, format_rate, format_seconds

__all__ = [
    "Grid",
    "case",
    "power_of_two",
    "compute_grid",
    "calculator",
    "Calculator",
    "format_seconds",
    "format_bytes",
    "format_rate",
    "DEFAULT_SIZES",
]
