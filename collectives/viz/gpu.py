"""Compatibility module: the GPU chapters' figures by kind. A scalable unit is drawn by
:func:`collectives.viz.hardware.draw_scalable_unit`; bars and a GPU's NVLink bytes by
:mod:`collectives.viz.costs` (the bytes themselves are
:meth:`collectives.Timing.endpoint_link_bytes`); fonts are set by
:func:`collectives.viz.style.use_fonts`. Every name of the old module is here."""

from .costs import link_multiples, plot_bars, plot_link_bytes
from .hardware import draw_scalable_unit
from .style import ALGORITHM_COLOURS, FIG_WIDTH, FONT_SIZE, fonts, use_fonts
from .style import LEVEL_COLOURS as BOOK_LEVEL_COLOURS

__all__ = [
    "ALGORITHM_COLOURS",
    "LEVEL_COLOURS",
    "FIG_WIDTH",
    "setup",
    "style",
    "draw_scalable_unit",
    "plot_bars",
    "link_bytes",
    "plot_link_bytes",
]

#: one colour per link level of a cluster topology (the book's, :mod:`.style`)
LEVEL_COLOURS = {k: BOOK_LEVEL_COLOURS[k] for k in ("nvlink", "pcie", "leaf", "spine", "core")}

#: bytes a Timing puts on a GPU's NVLinks, as multiples of its buffer
#: (:func:`collectives.viz.costs.link_multiples`)
link_bytes = link_multiples


def setup(font_size: float = FONT_SIZE) -> None:
    """:func:`collectives.viz.style.use_fonts` (the one font call of a chapter)."""
    use_fonts(font_size)


def style(font_size: float = FONT_SIZE):
    """:func:`collectives.viz.style.fonts` (the book's font sizes inside a ``with`` block)."""
    return fonts(font_size)
