"""Compatibility module: the capstone's plan calculator now lives in
:mod:`collectives.viz.calculators.plan`. Every name of the old module is here."""

from .calculators.plan import (
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

#: the readout rows under their old private name (the site's browser test reads them)
_readout_rows = readout_rows

__all__ = [
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
]
