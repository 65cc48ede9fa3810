"""One look for the hardware chapters' figures: a colour per link level and font sizes that
stay legible at phone width.

Font sizes are set in matplotlib's rcParams and only they are restored afterwards;
``matplotlib.rc_context`` would restore every setting, interactive mode included, and a
notebook's inline backend could then stop showing later figures.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["LEVEL_COLOURS", "ALGORITHM_COLOURS", "font_settings", "use_fonts", "fonts"]

#: one colour per link level, in every figure of the book: the memory, the scale-up links
#: (ICI, NVLink), the host and NIC links, the scale-out network tiers
LEVEL_COLOURS = {
    "hbm": "#4c72b0",      # blue
    "ici": "#dd8452",      # orange: scale-up links ...
    "nvlink": "#dd8452",   # ... on TPUs and on GPUs alike
    "pcie": "#55a868",     # green
    "leaf": "#937860",     # brown: NIC to its rail leaf
    "spine": "#da8bc3",    # pink
    "core": "#7f7f7f",     # grey
    "dcn": "#c44e52",      # red: between TPU slices
}

#: one colour per algorithm, under every name the chapters give it, so that an algorithm
#: keeps its colour from one figure and one chapter to the next
ALGORITHM_COLOURS = {
    "ring": "#4c72b0", "NCCL ring": "#4c72b0", "rail ring": "#4c72b0",          # blue
    "tree": "#8172b3", "NCCL tree": "#8172b3",                                 # purple
    "two-level ring": "#55a868", "hierarchical": "#55a868",                    # green
    "two-level, pipelined": "#64b5cd",                                         # light blue
    "nvls": "#c44e52", "SHARP": "#c44e52",                                     # red: switches add
    "in-switch ideal": "#e377c2",                                              # pink
    "direct": "#937860",                                                       # brown
    "flat ring": "#dd8452",                                                    # orange
    "snake ring": "#ccb974",                                                   # olive
    "measured": "#333333",                                                     # near black
}


def font_settings(size: float) -> dict[str, float]:
    """rcParams that make every text of a figure ``size`` points (ticks and legends 1 less)."""
    return {"font.size": size, "axes.titlesize": size, "axes.labelsize": size,
            "figure.titlesize": size, "xtick.labelsize": size - 1,
            "ytick.labelsize": size - 1, "legend.fontsize": size - 1}


def use_fonts(size: float = 12) -> None:
    """:func:`font_settings` for the rest of the session (what a chapter calls once)."""
    import matplotlib

    matplotlib.rcParams.update(font_settings(size))


@contextmanager
def fonts(size: float = 12):
    """:func:`font_settings` inside a ``with`` block; only those settings are restored."""
    import matplotlib

    settings = font_settings(size)
    saved = {key: matplotlib.rcParams[key] for key in settings}
    matplotlib.rcParams.update(settings)
    try:
        yield
    finally:
        matplotlib.rcParams.update(saved)
