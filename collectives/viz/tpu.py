"""Compatibility module: the TPU chapter's figures now live in
:mod:`collectives.viz.hardware` (slices, cubes, the bandwidth hierarchy, hop maps) and
:mod:`collectives.viz.costs` (time per level); fonts are set by
:func:`collectives.viz.style.use_fonts`. Every name of the old module is here."""

from .costs import plot_level_seconds
from .hardware import COLOURS, draw_cube, draw_hops, draw_slice, plot_bandwidth_hierarchy

__all__ = [
    "COLOURS",
    "FONT",
    "draw_slice",
    "draw_cube",
    "plot_bandwidth_hierarchy",
    "draw_hops",
    "plot_level_seconds",
]

#: the font size (points) the chapter's figures were drawn at before the one font API
FONT = 11
