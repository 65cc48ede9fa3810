"""Figures of chapter "Designing the fabric": a layered fabric drawn tier by tier, and how
routing schemes load a set of links.

:func:`draw_layered` places the hosts and each tier's switches on rows and draws every
cable, coloured by tier (the book's level colours); it is meant for small fabrics (a few
hundred cables). :func:`plot_link_loads` draws, per routing scheme, how many flows each
link of a chosen set carries, sorted, with the even-spreading level marked. Colours come
from :mod:`collectives.viz.style`; matplotlib is imported inside the functions.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from ..errors import CollectivesError
from .style import LEVEL_COLOURS, PALETTE

__all__ = ["FIG_WIDTH", "TIER_COLOURS", "SCHEME_COLOURS", "draw_layered", "plot_link_loads"]

FIG_WIDTH = 7.0
#: cables by tier: host cables, leaf-spine, spine-aggregation (the book's level colours)
TIER_COLOURS = {1: LEVEL_COLOURS["leaf"], 2: LEVEL_COLOURS["spine"], 3: LEVEL_COLOURS["core"],
                4: PALETTE["vermillion"]}
#: routing schemes, the same colour in every figure of the chapter
SCHEME_COLOURS = {"ECMP, 1 QP": PALETTE["vermillion"],
                  "ECMP, 16 QPs": PALETTE["orange"],
                  "enhanced ECMP, 16 QPs": PALETTE["blue"],
                  "engineered": PALETTE["bluish green"]}


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
        raise CollectivesError(f"{topology.name} has {topology.n_links} links: too many to "
                               f"draw; draw a smaller fabric of the same shape")
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
            ax.plot(xs, ys, color=PALETTE["grey"] if dead else TIER_COLOURS[t],
                    lw=1.2 if dead else 0.8, ls="--" if dead else "-",
                    alpha=1.0 if dead else 0.7)
    ax.scatter(x[: topology.n_ranks], y[: topology.n_ranks], s=host_size,
               color=PALETTE["black"], zorder=3)
    ax.scatter(x[topology.n_ranks:], y[topology.n_ranks:], s=switch_size, marker="s",
               color="white", edgecolor=PALETTE["black"], zorder=3)
    names = ["hosts", "leaves", "spines", "aggregation", "tier 4"]
    ax.set_yticks(range(topology.n_tiers + 1), names[: topology.n_tiers + 1])
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [Line2D([], [], color=TIER_COLOURS[t], label=f"tier {t} cables" if t > 1
                      else "host cables") for t in range(1, topology.n_tiers + 1)]
    if topology.failed.any():
        handles.append(Line2D([], [], color=PALETTE["grey"], ls="--", label="failed"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=4,
              frameon=False, fontsize="small")
    return ax


def plot_link_loads(loads: Mapping[str, np.ndarray], ax=None, even: Optional[float] = None,
                    ylabel: str = "flows on the link"):
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
        ax.step(np.arange(1, len(v) + 1), v, where="mid", color=colour,
                lw=4.5 if i == 0 else 2, ls="--" if i % 2 else "-",
                label=f"{name} (max {v[0]:.3g})")
    if even is not None:
        ax.axhline(even, color=PALETTE["black"], ls=":", lw=1.5, label=f"even ({even:.3g})")
    ax.set_xlabel("links, busiest first")
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False, fontsize="small", loc="upper center",
              bbox_to_anchor=(0.5, -0.25), ncol=2)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax
