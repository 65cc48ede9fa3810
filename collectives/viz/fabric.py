"""Figures of chapter "Designing the fabric" and of link loads: a layered fabric drawn tier by
tier, how routing schemes load a set of links, and how many flows share each cable.

:func:`draw_layered` places the hosts and each tier's switches on rows and draws every
cable, coloured by tier (the book's level colours); it is meant for small fabrics (a few
hundred cables). :func:`plot_link_loads` draws, per routing scheme, how many flows each
link of a chosen set carries, sorted, with the even-spreading level marked.
:func:`plot_cable_loads` draws the histogram of :func:`collectives.fabric.cable_flows` (flows
per cable of one level, up and down). Colours and text sizes come from
:mod:`collectives.viz.style`; matplotlib is imported inside the functions.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from ..errors import CollectivesError
from .style import LEVEL_COLOURS, PALETTE, font_size

__all__ = [
    "FIG_WIDTH",
    "TIER_COLOURS",
    "SCHEME_COLOURS",
    "draw_layered",
    "plot_link_loads",
    "plot_cable_loads",
]

FIG_WIDTH = 7.0
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


def draw_layered(topology, ax=None, host_size: float = 18, switch_size: float = 60):
    """Draw a :class:`~collectives.fabric.LayeredFabric`: hosts on the bottom row, each
    tier's switches above (all planes side by side), every cable a line in its tier's
    colour; failed cables dashed grey. Returns the axes."""
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
        ncol=2,
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
