"""One look for every figure of the book: a colour-blind-safe palette, one colour per link level
and per algorithm (the same in every chapter), and one font API.

**Fonts.** Every chapter calls :func:`use_fonts` once, at its top, and nothing else sets a
font size: the book's figure text is :data:`FONT_SIZE` points, which stays legible when a
figure :data:`FIG_WIDTH` inches wide is scaled to a phone's 390-pixel screen (13 pt on a
4.6-inch figure drawn 360 pixels wide is about 14 pixels, the size of the page's small print).
A viz function that needs text smaller than the rest of its figure (a number inside a buffer
cell, a node label) asks :func:`font_size` for a role of the type scale (:data:`TYPE_SCALE`),
so that every size follows the one setting; it never writes a size in points.

Font sizes are set in matplotlib's rcParams and only they are restored afterwards
(:func:`fonts`); ``matplotlib.rc_context`` would restore every setting, interactive mode
included, and a notebook's inline backend could then stop showing later figures.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from ..errors import CollectivesError

__all__ = [
    "PALETTE",
    "LEVEL_COLOURS",
    "ALGORITHM_COLOURS",
    "ALIASES",
    "algorithm_colour",
    "level_colour",
    "FONT_SIZE",
    "FIG_WIDTH",
    "FRAME_WIDTH",
    "smallest_text",
    "TYPE_SCALE",
    "font_settings",
    "use_fonts",
    "fonts",
    "font_size",
]

#: the book's colour-blind-safe palette: Okabe and Ito's eight colours ("Color Universal
#: Design", jfly.uni-koeln.de/color) without yellow, which is too pale for lines on white, and
#: Paul Tol's "muted" scheme (personal.sron.nl/~pault) for the algorithms beyond seven
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "sky blue": "#56B4E9",
    "black": "#000000",
    "indigo": "#332288",
    "teal": "#44AA99",
    "olive": "#999933",
    "wine": "#882255",
    "rose": "#CC6677",
    "green": "#117733",
    "purple": "#AA4499",
    "grey": "#777777",
}

#: one colour per link level, in every figure of the book: the memory, the scale-up links
#: (ICI, NVLink), the host and NIC links, the scale-out network tiers
LEVEL_COLOURS = {
    "hbm": PALETTE["blue"],
    "ici": PALETTE["orange"],  # scale-up links ...
    "nvlink": PALETTE["orange"],  # ... on TPUs and on GPUs alike
    "pcie": PALETTE["bluish green"],
    "leaf": PALETTE["indigo"],  # NIC to its rail leaf
    "spine": PALETTE["reddish purple"],
    "core": PALETTE["grey"],
    "dcn": PALETTE["vermillion"],  # between TPU slices
}

_ALGORITHM_PALETTE = {
    # rings, chains and tori
    "ring": "blue",
    "bidirectional ring": "sky blue",
    "chain": "olive",
    "torus": "indigo",
    "flat ring": "orange",
    "snake ring": "purple",
    "rail ring": "blue",
    # fewer steps
    "tree": "reddish purple",
    "recursive doubling": "wine",
    "halving-doubling": "teal",
    "direct": "vermillion",
    "pairwise": "rose",
    "bruck": "green",
    # across levels
    "hierarchical": "bluish green",
    "two-level ring": "bluish green",
    "two-level, pipelined": "teal",
    # in the switch
    "nvls": "black",
    "sharp": "black",
    "in-switch ideal": "grey",
    "measured": "grey",
}

#: one colour per algorithm, under every name the chapters give it, so that an algorithm
#: keeps its colour from one figure and one chapter to the next (look names up with
#: :func:`algorithm_colour`, which also knows the aliases below)
ALGORITHM_COLOURS = {name: PALETTE[colour] for name, colour in _ALGORITHM_PALETTE.items()}
ALGORITHM_COLOURS.update(
    {
        "NCCL ring": ALGORITHM_COLOURS["ring"],
        "NCCL tree": ALGORITHM_COLOURS["tree"],
        "SHARP": ALGORITHM_COLOURS["sharp"],
    }
)

#: other names of the same algorithms (lower case)
ALIASES = {
    "unidirectional ring": "ring",
    "bidi ring": "bidirectional ring",
    "ring (both directions)": "bidirectional ring",
    "double binary tree": "tree",
    "binary tree": "tree",
    "rabenseifner": "halving-doubling",
    "recursive halving": "halving-doubling",
    "halving/doubling": "halving-doubling",
    "halving and doubling": "halving-doubling",
    "farthest-first chain": "chain",
    "torus, no wraparound": "chain",
    "switch": "direct",
    "one-shot": "direct",
    "nvlink sharp": "nvls",
    "in-network": "sharp",
    "2-d torus": "torus",
    "2d torus": "torus",
    "latency-optimal ring": "bidirectional ring",
    "latency optimal ring": "bidirectional ring",
    "split-ring torus": "torus",
}


def algorithm_colour(name: str) -> str:
    """The book's colour of algorithm ``name`` (case and a leading "NCCL " ignored, aliases
    in :data:`ALIASES`). Raises :class:`~collectives.CollectivesError` for an unknown name,
    so that a new algorithm gets its colour here, once, rather than a colour per figure."""
    if name in ALGORITHM_COLOURS:
        return ALGORITHM_COLOURS[name]
    key = " ".join(name.lower().split())
    if key.startswith("nccl "):
        key = key[5:]
    key = ALIASES.get(key, key)
    if key in ALGORITHM_COLOURS:
        return ALGORITHM_COLOURS[key]
    raise CollectivesError(
        f"no colour for algorithm {name!r}: add it (or an alias) to collectives/viz/style.py"
    )


#: levels of a product topology or a generic one, which name no hardware level, take these
#: in order (a topology's ``info.levels``: "dim0", "dim1", ... or "link")
_OTHER_LEVELS = ("grey", "sky blue", "olive", "wine", "teal", "rose")


def level_colour(level: str, index: int = 0) -> str:
    """The colour of link level ``level`` (a name of a topology's ``info.levels``): the
    book's :data:`LEVEL_COLOURS`; fabric tiers above the third ("tier 4", ...) share the
    core's; any other name (a product's "dim0", a bare "link") takes the ``index``-th of a
    few more palette colours, ``index`` being its position in ``info.levels``."""
    if level in LEVEL_COLOURS:
        return LEVEL_COLOURS[level]
    if level.startswith("tier "):
        return LEVEL_COLOURS["core"]
    return PALETTE[_OTHER_LEVELS[index % len(_OTHER_LEVELS)]]


# ---- fonts ---------------------------------------------------------------------------------

#: the book's figure text size (points): every chapter sets it with :func:`use_fonts`
FONT_SIZE = 13

#: width (inches) of a one-column figure that stays legible on a phone at :data:`FONT_SIZE`
FIG_WIDTH = 4.6

#: width (inches) of a stepper's frame. A frame shows in its tab panel, 322 CSS pixels wide
#: on a 390-pixel phone, so a text of p points shows at p * 322 / (72 * 3.9) = 1.15 p pixels:
#: the smallest text of the type scale ("tiny", 8 points at the book's setting) at 9.2. A
#: frame stacks its drawings (the wiring above the buffers) rather than setting them side
#: by side, which would shrink them twice as much.
FRAME_WIDTH = 3.9

#: the type scale: points added to the figure's text size for each role a viz function can
#: ask :func:`font_size` for. "title", "text": axes titles, labels, ordinary text; "small":
#: ticks, legends, annotations; "label": a label inside a node or box of a diagram;
#: "note": the titles of the small panels of a multi-panel figure, notes on a plot; "cell":
#: a number inside a buffer cell or on a rank of a wiring diagram; "tiny": two-line cells,
#: the ticks of buffer grids, the legends of dense cost plots. At the book's 13 points:
#: 13, 13, 12, 11, 10, 9 and 8.
TYPE_SCALE = {"title": 0, "text": 0, "small": -1, "label": -2, "note": -3, "cell": -4, "tiny": -5}


def font_settings(size: float = FONT_SIZE) -> dict[str, float]:
    """rcParams that make every text of a figure ``size`` points (ticks and legends 1 less)."""
    return {
        "font.size": size,
        "axes.titlesize": size,
        "axes.labelsize": size,
        "figure.titlesize": size,
        "xtick.labelsize": size - 1,
        "ytick.labelsize": size - 1,
        "legend.fontsize": size - 1,
    }


def use_fonts(size: float = FONT_SIZE) -> None:
    """The book's font sizes (:func:`font_settings`) for the rest of the session: what every
    chapter calls once, at its top, with no argument."""
    import matplotlib

    rc: Any = matplotlib.rcParams
    rc.update(font_settings(size))


@contextmanager
def fonts(size: float = FONT_SIZE):
    """:func:`font_settings` inside a ``with`` block; only those settings are restored."""
    import matplotlib

    rc: Any = matplotlib.rcParams
    settings = font_settings(size)
    saved = {key: rc[key] for key in settings}
    rc.update(settings)
    try:
        yield
    finally:
        rc.update(saved)


def font_size(role: str = "text") -> float:
    """Points of a ``role`` of :data:`TYPE_SCALE` at the current setting (the figure text
    size, ``rcParams["font.size"]``, that :func:`use_fonts` sets), never below 5 points.
    Raises :class:`~collectives.CollectivesError` for an unknown role."""
    import matplotlib

    if role not in TYPE_SCALE:
        raise CollectivesError(f"no font role {role!r}; the roles are {', '.join(TYPE_SCALE)}")
    base = float(matplotlib.rcParams["font.size"])
    return max(5.0, base + TYPE_SCALE[role])


def smallest_text() -> float:
    """Points of the smallest text a figure draws (the "tiny" role of :func:`font_size`): a
    text that would have to be smaller to fit its node or cell is left out instead (the
    frames' alt text and the figures' captions say what it would have said)."""
    return font_size("tiny")
