"""Compatibility module: the across-nodes chapter's figures by kind. Time per link level is
:func:`collectives.viz.costs.level_seconds_bars`; flows per cable are counted by
:func:`collectives.fabric.cable_flows` and drawn by
:func:`collectives.viz.fabric.plot_cable_loads`; a small cluster with routed flows is
:func:`collectives.viz.hardware.draw_cluster`; fonts are set by
:func:`collectives.viz.style.use_fonts`. Every name of the old module is here."""

from ..fabric.flows import cable_flows
from .costs import BAR_COLOURS, LEVEL_LABELS, level_seconds_bars
from .fabric import plot_cable_loads
from .hardware import draw_cluster
from .style import ALGORITHM_COLOURS, fonts

__all__ = [
    "LEVEL_COLOURS",
    "LEVEL_LABELS",
    "ALGORITHM_COLOURS",
    "WIDTH",
    "FONT",
    "phone_style",
    "level_seconds_bars",
    "cable_loads",
    "plot_cable_loads",
    "draw_cluster",
]

#: one colour per link level (the book's), and for the latency part of a bar
LEVEL_COLOURS = BAR_COLOURS
#: figure width (inches) and font size (points) the chapter's figures were drawn at
WIDTH, FONT = 3.9, 12
#: flows per cable of one level (:func:`collectives.fabric.cable_flows`)
cable_loads = cable_flows


def phone_style():
    """The old chapter's font sizes inside a ``with`` block (:func:`.style.fonts`); chapters
    now call :func:`collectives.viz.style.use_fonts` once instead."""
    return fonts(FONT)
