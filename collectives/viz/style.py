"""One look for every figure of the book: a colour-blind-safe palette, one colour per link level
and per algorithm (the same in every chapter), and font sizes that stay legible at phone width.

Font sizes are set in matplotlib's rcParams and only they are restored afterwards;
``matplotlib.rc_context`` would restore every setting, interactive mode included, and a
notebook's inline backend could then stop showing later figures.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["PALETTE", "LEVEL_COLOURS", "ALGORITHM_COLOURS", "ALIASES", "algorithm_colour",
           "font_settings", "use_fonts", "fonts"]

#: the book's colour-blind-safe palette: Okabe and Ito's eight colours ("Color Universal
#: Design", jfly.uni-koeln.de/color) without yellow, which is too pale for lines on white, and
#: Paul Tol's "muted" scheme (personal.sron.nl/~pault) for the algorithms beyond seven
PALETTE = {
    "blue": "#0072B2", "orange": "#E69F00", "bluish green": "#009E73", "vermillion": "#D55E00",
    "reddish purple": "#CC79A7", "sky blue": "#56B4E9", "black": "#000000",
    "indigo": "#332288", "teal": "#44AA99", "olive": "#999933", "wine": "#882255",
    "rose": "#CC6677", "green": "#117733", "purple": "#AA4499", "grey": "#777777",
}

#: one colour per link level, in every figure of the book: the memory, the scale-up links
#: (ICI, NVLink), the host and NIC links, the scale-out network tiers
LEVEL_COLOURS = {
    "hbm": PALETTE["blue"],
    "ici": PALETTE["orange"],          # scale-up links ...
    "nvlink": PALETTE["orange"],       # ... on TPUs and on GPUs alike
    "pcie": PALETTE["bluish green"],
    "leaf": PALETTE["indigo"],         # NIC to its rail leaf
    "spine": PALETTE["reddish purple"],
    "core": PALETTE["grey"],
    "dcn": PALETTE["vermillion"],      # between TPU slices
}

_ALGORITHM_PALETTE = {
    # rings, chains and tori
    "ring": "blue", "bidirectional ring": "sky blue", "chain": "olive", "torus": "indigo",
    "flat ring": "orange", "snake ring": "purple", "rail ring": "blue",
    # fewer steps
    "tree": "reddish purple", "recursive doubling": "wine", "halving-doubling": "teal",
    "direct": "vermillion", "pairwise": "rose", "bruck": "green",
    # across levels
    "hierarchical": "bluish green", "two-level ring": "bluish green",
    "two-level, pipelined": "teal",
    # in the switch
    "nvls": "black", "sharp": "black", "in-switch ideal": "grey",
    "measured": "grey",
}

#: one colour per algorithm, under every name the chapters give it, so that an algorithm
#: keeps its colour from one figure and one chapter to the next (look names up with
#: :func:`algorithm_colour`, which also knows the aliases below)
ALGORITHM_COLOURS = {name: PALETTE[colour] for name, colour in _ALGORITHM_PALETTE.items()}
ALGORITHM_COLOURS.update({"NCCL ring": ALGORITHM_COLOURS["ring"],
                          "NCCL tree": ALGORITHM_COLOURS["tree"],
                          "SHARP": ALGORITHM_COLOURS["sharp"]})

#: other names of the same algorithms (lower case)
ALIASES = {
    "unidirectional ring": "ring", "bidi ring": "bidirectional ring", "ring (both directions)":
    "bidirectional ring", "double binary tree": "tree", "binary tree": "tree",
    "rabenseifner": "halving-doubling", "recursive halving": "halving-doubling",
    "halving/doubling": "halving-doubling", "halving and doubling": "halving-doubling",
    "farthest-first chain": "chain", "torus, no wraparound": "chain", "switch": "direct", "one-shot": "direct",
    "nvlink sharp": "nvls", "in-network": "sharp", "2-d torus": "torus", "2d torus": "torus",
    "latency-optimal ring": "bidirectional ring", "latency optimal ring": "bidirectional ring",
    "split-ring torus": "torus",
}


def algorithm_colour(name: str) -> str:
    """The book's colour of algorithm ``name`` (case and a leading "NCCL " ignored, aliases
    in :data:`ALIASES`). Raises :class:`~collectives.CollectivesError` for an unknown name,
    so that a new algorithm gets its colour here, once, rather than a colour per figure."""
    from ..errors import CollectivesError

    if name in ALGORITHM_COLOURS:
        return ALGORITHM_COLOURS[name]
    key = " ".join(name.lower().split())
    if key.startswith("nccl "):
        key = key[5:]
    key = ALIASES.get(key, key)
    if key in ALGORITHM_COLOURS:
        return ALGORITHM_COLOURS[key]
    raise CollectivesError(
        f"no colour for algorithm {name!r}: add it (or an alias) to collectives/viz/style.py")


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
