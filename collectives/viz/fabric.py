"""Figures of chapter "Designing the fabric" and of link loads: a layered fabric drawn tier by
tier, how routing schemes load a set of links, and how many flows share each cable.

:func:`draw_layered` places the hosts and each tier's switches on rows and draws every
cable, coloured by tier (the book's level colours); it is meant for small fabrics (a few
hundred cables). :func:`plot_link_loads` draws, per routing scheme, how many flows each
link of a chosen set carries, sorted, with the even-spreading level marked.
:func:`plot_cable_loads` draws the histogram of :func:`collectives.fabric.cable_flows` (flows
per cable of one level, up and down). :func:`draw_uplink_loads` draws every uplink of one
tier of any cluster or fabric at once, one column per lower switch (a rack's switch) and one
cell per uplink, coloured by its load on the scale of :mod:`collectives.viz.loads` (what
:func:`~collectives.viz.loads.draw_link_loads` shows for a window of racks, here for all the
racks a step spans: the hottest cell is the uplink the step waits for); :func:`uplink_matrix`
is the arrangement it draws. :func:`plot_sweep` draws quantities the package computed over
a swept design parameter (racks a step spans, queue pairs per connection), one line per
quantity, with simulated points and a target level. :func:`plot_parts` draws totals made of
parts (the terms of a PFC port's headroom) as stacked bars. Colours and text sizes come from
:mod:`collectives.viz.style`; nothing here computes a load or a cost; matplotlib is imported
inside the functions.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from ..topology import Cluster
from .loads import IDLE_COLOUR, load_colour, load_colourbar, loads_arg
from .style import FIG_WIDTH, LEVEL_COLOURS, PALETTE, font_size

__all__ = [
    "FIG_WIDTH",
    "TIER_COLOURS",
    "SCHEME_COLOURS",
    "draw_layered",
    "plot_link_loads",
    "plot_cable_loads",
    "uplink_matrix",
    "draw_uplink_loads",
    "SWEEP_COLOURS",
    "plot_sweep",
    "plot_parts",
]

#: cables by tier: host cables, leaf-spine, spine-aggregation (the book's level colours)
TIER_COLOURS = {
    1: LEVEL_COLOURS["leaf"],
    2: LEVEL_COLOURS["spine"],
    3: LEVEL_COLOURS["core"],
    4: PALETTE["vermillion"],
}
#: routing schemes, the same colour in every figure of the chapter
SCHEME_COLOURS = {
    "ECMP, 1 QP": PALETTE["vermillion"],
    "ECMP, 16 QPs": PALETTE["orange"],
    "ECMP, 16 QPs, one source port": PALETTE["orange"],
    "enhanced ECMP, 16 QPs": PALETTE["blue"],
    "engineered": PALETTE["bluish green"],
}


def _xs(count, width=1.0):
    return (np.arange(count) + 0.5) / count * width


def draw_layered(
    topology, ax=None, host_size: float = 18, switch_size: float = 60, ratios: bool = False
):
    """Draw a :class:`~collectives.fabric.LayeredFabric`: hosts on the bottom row, each
    tier's switches above (all planes side by side), every cable a line in its tier's
    colour; failed cables dashed grey. ``ratios``: write each tier's downlink:uplink
    capacity (:attr:`~collectives.topology.Cluster.oversubscription`, e.g. "2:1") at the
    right end of its row. Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ..fabric.layered import LayeredFabric

    if not isinstance(topology, LayeredFabric):
        raise CollectivesError("draw_layered needs a fabric built by collectives.fabric.layered")
    if topology.n_links > 4000:
        raise CollectivesError(
            f"{topology.name} has {topology.n_links} links: too many to "
            f"draw; draw a smaller fabric of the same shape"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, 3.2))
    tiers = topology.node_tier
    x = np.zeros(topology.n_nodes)
    # hosts in cabling order (rails put GPU g of every node under leaf g)
    pos = topology.port_position
    x[: topology.n_ranks] = _xs(topology.n_ranks)[pos]
    for t in range(1, topology.n_tiers + 1):
        nodes = np.flatnonzero(tiers == t)
        x[nodes] = _xs(len(nodes))
    y = tiers.astype(float)
    up = topology.link_up
    for t in range(1, topology.n_tiers + 1):
        sel = np.flatnonzero(up & (topology.link_tier == t))
        for dead in (False, True):
            s = sel[topology.failed[sel] == dead]
            if not s.size:
                continue
            xs = np.stack([x[topology.link_src[s]], x[topology.link_dst[s]]])
            ys = np.stack([y[topology.link_src[s]], y[topology.link_dst[s]]])
            ax.plot(
                xs,
                ys,
                color=PALETTE["grey"] if dead else TIER_COLOURS[t],
                lw=1.2 if dead else 0.8,
                ls="--" if dead else "-",
                alpha=1.0 if dead else 0.7,
            )
    ax.scatter(
        x[: topology.n_ranks], y[: topology.n_ranks], s=host_size, color=PALETTE["black"], zorder=3
    )
    ax.scatter(
        x[topology.n_ranks :],
        y[topology.n_ranks :],
        s=switch_size,
        marker="s",
        color="white",
        edgecolor=PALETTE["black"],
        zorder=3,
    )
    if ratios:
        for t, ratio in enumerate(topology.oversubscription, start=1):
            ax.annotate(
                f"{ratio:.3g}:1",
                (1.0, t),
                xycoords=("axes fraction", "data"),
                xytext=(4, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=font_size("small"),
            )
    names = ["hosts", "leaves", "spines", "aggregation", "tier 4"]
    ax.set_yticks(range(topology.n_tiers + 1), names[: topology.n_tiers + 1])
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [
        Line2D([], [], color=TIER_COLOURS[t], label=f"tier {t} cables" if t > 1 else "host cables")
        for t in range(1, topology.n_tiers + 1)
    ]
    if topology.failed.any():
        handles.append(Line2D([], [], color=PALETTE["grey"], ls="--", label="failed"))
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.02),
        ncol=4,
        frameon=False,
        fontsize=font_size("small"),
    )
    return ax


def plot_link_loads(
    loads: Mapping[str, np.ndarray],
    ax=None,
    even: Optional[float] = None,
    ylabel: str = "flows on the link",
):
    """Per scheme (name -> flows or bytes per link of a chosen set), the links sorted from
    busiest to idlest as a step line; ``even``: the level of perfect spreading, dotted.
    Returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, 3.2))
    for i, (name, values) in enumerate(loads.items()):
        v = np.sort(np.asarray(values, dtype=float))[::-1]
        colour = SCHEME_COLOURS.get(name)
        if colour is None:
            raise CollectivesError(f"no colour for scheme {name!r}; add it to SCHEME_COLOURS")
        # a wide line first, narrower and dashed after it, so that equal curves stay visible
        ax.step(
            np.arange(1, len(v) + 1),
            v,
            where="mid",
            color=colour,
            lw=4.5 if i == 0 else 2,
            ls="--" if i % 2 else "-",
            label=f"{name} (max {v[0]:.3g})",
        )
    if even is not None:
        ax.axhline(even, color=PALETTE["black"], ls=":", lw=1.5, label=f"even ({even:.3g})")
    ax.set_xlabel("links, busiest first")
    ax.set_ylabel(ylabel)
    ax.legend(
        frameon=False,
        fontsize=font_size("small"),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25),
        ncol=1,
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def plot_cable_loads(loads: Mapping[str, np.ndarray], ax=None, title: Optional[str] = None):
    """Bar chart of :func:`collectives.fabric.cable_flows`: how many cables carry 0, 1, 2,
    ... flows, up and down (whole flows: a fabric routed ``"adaptive"`` spreads flows in
    shares, which this histogram does not draw). Returns the Axes."""
    import matplotlib.pyplot as plt

    counts = {direction: np.asarray(v) for direction, v in loads.items()}
    for direction, v in counts.items():
        if v.size and not np.allclose(v, np.round(v)):
            raise CollectivesError(
                f"plot_cable_loads draws whole flows per cable; the "
                f"{direction!r} counts have fractions (adaptive routing)"
            )
    ax = ax or plt.gca()
    top = max(int(v.max()) if len(v) else 0 for v in counts.values())
    x = np.arange(top + 1)
    colours = {"up": LEVEL_COLOURS["spine"], "down": LEVEL_COLOURS["core"]}
    width = 0.8 / max(len(counts), 1)
    for i, (direction, v) in enumerate(counts.items()):
        hist = np.bincount(np.round(v).astype(np.int64), minlength=top + 1)
        ax.bar(
            x + (i - (len(counts) - 1) / 2) * width,
            hist,
            width=width,
            color=colours.get(direction, "0.5"),
            label=f"{direction} ({len(v)} cables)",
        )
    ax.set_xticks(x)
    ax.set_xlabel("flows on one cable")
    ax.set_ylabel("cables")
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def _per_link(topology, loads):
    if not isinstance(topology, Cluster):
        raise CollectivesError(
            f"uplinks are drawn for a cluster or fabric (collectives.fabric.layered, a GPU "
            f"cluster preset), got {getattr(topology, 'name', type(topology).__name__)!r}"
        )
    return loads_arg(topology, loads)


def uplink_matrix(topology, loads, tier: int, switches: Optional[Sequence[int]] = None):
    """The up links of ``tier`` (``topology.link_tier == tier`` and ``link_up``: tier 2 is a
    leaf's cables to the spines) arranged by their lower end: ``(lower, matrix)`` where
    ``lower`` are the lower switches, those in ``switches`` (node ids) or every one with
    such links, in node order, and ``matrix[j, i]`` is ``loads`` (one number per link of
    ``topology``) on the ``j``-th uplink, in link order, of switch ``lower[i]``. Raises
    :class:`~collectives.CollectivesError` for a tier without up links, a switch without
    them, or switches with different numbers of uplinks."""
    values = _per_link(topology, loads)
    if isinstance(tier, bool) or not isinstance(tier, (int, np.integer)):
        raise CollectivesError(f"tier must be an integer, got {tier!r}")
    on = np.flatnonzero(topology.link_up & (topology.link_tier == tier))
    if not on.size:
        raise CollectivesError(
            f"{topology.name} has no up links at tier {tier} (its tiers of cables are "
            f"1..{int(topology.link_tier.max())}, 1 the host cables)"
        )
    lower_end = topology.link_src[on]
    if switches is None:
        lower = np.unique(lower_end)
    else:
        lower = np.asarray(switches).ravel()
        if lower.dtype.kind not in "iu" or not lower.size:
            raise CollectivesError(f"switches must be node ids, got {switches!r}")
        missing = lower[~np.isin(lower, lower_end)]
        if missing.size:
            raise CollectivesError(
                f"node {int(missing[0])} of {topology.name} has no up links at tier {tier}"
            )
    order = np.argsort(lower_end, kind="stable")  # by lower switch, then link order
    counts = np.bincount(lower_end, minlength=topology.n_nodes)[lower]
    if np.any(counts != counts[0]):
        raise CollectivesError(
            f"the switches have {counts.min()} to {counts.max()} uplinks at tier {tier}: "
            "choose switches with as many uplinks each"
        )
    sorted_ends = lower_end[order]
    start = np.searchsorted(sorted_ends, lower)
    links = on[order][start[None, :] + np.arange(counts[0])[:, None]]
    return lower, values[links]


def draw_uplink_loads(
    topology,
    loads,
    tier: int,
    ax=None,
    *,
    switches: Optional[Sequence[int]] = None,
    unit: float = 1.0,
    unit_label: str = "load",
    vmax: Optional[float] = None,
    title: Optional[str] = None,
    colorbar: bool = True,
    xlabel: str = "lower switch",
    ylabel: str = "its uplinks",
    mark_hottest: bool = False,
):
    """Every up link of ``tier`` of ``topology`` (:func:`uplink_matrix`; ``switches``: only
    these lower switches) as one cell, a column per lower switch, coloured by its load
    (``loads``, one number per link, drawn divided by ``unit``) on the scale of
    :func:`~collectives.viz.loads.draw_link_loads` from 0 to ``vmax`` (default the largest):
    idle cells pale grey, the hottest the darkest red. ``colorbar``: a colour bar labelled
    ``unit_label`` below (panels on one scale share one with
    :func:`~collectives.viz.loads.load_colourbar`). ``mark_hottest``: a black ring around
    every cell at the largest load (the one a synchronous step waits for), findable where
    the cells are a pixel or two wide. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    if not (isinstance(unit, (int, float)) and np.isfinite(unit) and unit > 0):
        raise CollectivesError(f"unit must be a number > 0, got {unit!r}")
    lower, matrix = uplink_matrix(topology, loads, tier, switches)
    matrix = matrix / unit
    top = float(matrix.max()) if vmax is None else vmax
    if isinstance(top, bool) or not isinstance(top, (int, float)) or not np.isfinite(top):
        raise CollectivesError(f"vmax must be a number > 0, got {vmax!r}")
    if top <= 0:
        top = 1.0
    ax = ax or plt.gca()
    fraction = np.clip(matrix / top, 0.0, 1.0)
    rgba = np.array(load_colour(fraction))
    rgba[matrix <= 0] = to_rgba(IDLE_COLOUR)
    ax.imshow(
        rgba,
        aspect="auto",
        interpolation="nearest",
        origin="lower",
        extent=(-0.5, len(lower) - 0.5, 0.5, matrix.shape[0] + 0.5),
    )
    if mark_hottest and matrix.max() > 0:
        rows, cols = np.nonzero(matrix == matrix.max())
        ax.plot(
            cols,
            rows + 1,
            ls="none",
            marker="o",
            markersize=7,
            mfc="none",
            mec=PALETTE["black"],
            mew=1.5,
            clip_on=False,
            label="hottest",
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=font_size("note"))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if colorbar:
        load_colourbar(ax.figure, [ax], top, unit_label)
    return ax


#: the colours of :func:`plot_sweep`'s lines, in order (the book's palette)
SWEEP_COLOURS = (
    PALETTE["blue"],
    PALETTE["vermillion"],
    PALETTE["bluish green"],
    PALETTE["orange"],
    PALETTE["reddish purple"],
    PALETTE["sky blue"],
)


def _curve(x, y, label):
    xs = np.asarray(x, dtype=float).ravel()
    ys = np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape or not xs.size:
        raise CollectivesError(
            f"{label!r}: needs one value per x ({xs.size} x values), got {ys.size}"
        )
    return xs, ys


def plot_sweep(
    x,
    series: Mapping[str, Sequence[float]],
    ax=None,
    *,
    points: Optional[Mapping[str, tuple]] = None,
    level: Optional[float] = None,
    level_label: Optional[str] = None,
    xlabel: str = "",
    ylabel: str = "",
    logx: bool = False,
    title: Optional[str] = None,
    legend_loc: str = "best",
    dashed: Sequence[str] = (),
):
    """Quantities swept over a design parameter: each of ``series`` (label -> one value
    per ``x``) a line with markers, in :data:`SWEEP_COLOURS` order; ``points`` (label ->
    ``(x, y)``) unconnected markers (a simulation's draws); ``level``: a dotted horizontal
    line (a target), labelled ``level_label``. ``logx``: a log x axis, ticks at the swept
    values; ``legend_loc``: where the legend goes (matplotlib's ``loc``); ``dashed``: labels
    of series drawn thinner, dashed and without markers, so that a series they coincide
    with stays visible under them. Returns the Axes."""
    import matplotlib.pyplot as plt

    if not series and not points:
        raise CollectivesError("plot_sweep needs at least one series or set of points")
    unknown = [label for label in dashed if label not in series]
    if unknown:
        raise CollectivesError(f"dashed names no series: {unknown} (series: {list(series)})")
    ax = ax or plt.gca()
    for i, (label, y) in enumerate(series.items()):
        xs, ys = _curve(x, y, label)
        colour = SWEEP_COLOURS[i % len(SWEEP_COLOURS)]
        if label in dashed:
            ax.plot(xs, ys, ls="--", lw=1.5, color=colour, label=label, zorder=3)
        else:
            ax.plot(xs, ys, marker="o", markersize=4, lw=2, color=colour, label=label)
    for i, (label, (px, py)) in enumerate((points or {}).items()):
        xs, ys = _curve(px, py, label)
        ax.plot(
            xs,
            ys,
            ls="none",
            marker=("x", "+", "s")[i % 3],
            markersize=8,
            mew=2,
            color=PALETTE["black"],
            label=label,
        )
    if level is not None:
        ax.axhline(level, color=PALETTE["grey"], ls=":", lw=1.5, label=level_label)
    if logx:
        ax.set_xscale("log")
        ticks = np.unique(np.asarray(x, dtype=float))
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=font_size("note"))
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, fontsize=font_size("small"), loc=legend_loc)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def plot_parts(
    rows: Mapping[str, Mapping[str, float]],
    ax=None,
    *,
    unit: float = 1.0,
    unit_label: str = "",
    title: Optional[str] = None,
    digits: int = 3,
):
    """One horizontal bar per row (``rows``: label -> {part: value}, top to bottom), split
    into its parts in the order the first row names them, each part in its
    :data:`SWEEP_COLOURS` colour in every bar, the total (divided by ``unit``) written at the
    bar's end to ``digits`` significant digits (match the text's rounding); a legend of the
    parts below. Every row must name the same parts, each a number >= 0. Returns the Axes."""
    import matplotlib.pyplot as plt

    if not rows:
        raise CollectivesError("plot_parts needs at least one row")
    if not (isinstance(unit, (int, float)) and np.isfinite(unit) and unit > 0):
        raise CollectivesError(f"unit must be a number > 0, got {unit!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise CollectivesError(f"digits must be an integer >= 1, got {digits!r}")
    parts = list(next(iter(rows.values())))
    for label, row in rows.items():
        if list(row) != parts:
            raise CollectivesError(
                f"row {label!r} has the parts {list(row)}; every row needs {parts}, in order"
            )
        values = np.asarray(list(row.values()), dtype=float)
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise CollectivesError(f"row {label!r}: every part must be a number >= 0")
    ax = ax or plt.gca()
    for y, row in enumerate(rows.values()):
        left = 0.0
        for k, (part, value) in enumerate(row.items()):
            ax.barh(
                y,
                value / unit,
                left=left,
                height=0.6,
                color=SWEEP_COLOURS[k % len(SWEEP_COLOURS)],
                edgecolor="white",
                label=part if y == 0 else None,
            )
            left += value / unit
        ax.text(left, y, f" {left:.{digits}g}", va="center")
    ax.set_yticks(range(len(rows)), list(rows))
    ax.invert_yaxis()
    ax.set_xlabel(unit_label)
    ax.margins(x=0.15)
    if title:
        ax.set_title(title, fontsize=font_size("note"))
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25),
        ncol=2,
        frameon=False,
        fontsize=font_size("small"),
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax
