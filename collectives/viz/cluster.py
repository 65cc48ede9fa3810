"""Figures for GPU clusters: routes on a rail-optimised fabric, where the time goes per link
level, and how many flows share each cable.

Everything is drawn from the objects the rest of the package computes: routes from
:meth:`~collectives.topology.Topology.route` (the same routes :func:`collectives.time` costs),
per-level seconds from :meth:`~collectives.cost.Timing.level_seconds`. Colours are fixed per
link level (:data:`LEVEL_COLOURS`) and per algorithm (:data:`ALGORITHM_COLOURS`) so that
every figure of a chapter uses the same ones. Figures are sized for a phone: one column,
:data:`WIDTH` inches wide, text at :data:`FONT` points (at most ``WIDTH / FONT`` shrinks
every font to about 10 points on a 360-pixel screen). matplotlib is imported inside the
functions. Taught in chapter "Collectives across nodes".
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import CollectivesError
from .style import ALGORITHM_COLOURS as BOOK_ALGORITHM_COLOURS
from .style import LEVEL_COLOURS as BOOK_LEVEL_COLOURS, fonts

__all__ = ["LEVEL_COLOURS", "LEVEL_LABELS", "ALGORITHM_COLOURS", "WIDTH", "FONT", "phone_style",
           "level_seconds_bars", "cable_loads", "plot_cable_loads", "draw_cluster"]

#: one colour per link level (the book's, :mod:`.style`), and for the latency part of a bar
LEVEL_COLOURS = {**BOOK_LEVEL_COLOURS, "link": "0.5", "latency": "0.75"}
#: how each link level is named in legends
LEVEL_LABELS = {"nvlink": "NVLink", "pcie": "PCIe", "leaf": "NIC to leaf", "spine": "leaf to spine",
                "core": "spine to core", "ici": "ICI", "dcn": "DCN", "link": "link",
                "latency": "latency"}
#: one colour per algorithm, the same in every chapter (:mod:`.style`)
ALGORITHM_COLOURS = BOOK_ALGORITHM_COLOURS
#: figure width (inches) and font size (points) for figures read on a phone
WIDTH, FONT = 3.9, 12


def phone_style():
    """Font sizes for a one-column figure that stays legible at phone width, inside a
    ``with`` block (:func:`.style.fonts`)."""
    return fonts(FONT)


def level_seconds_bars(timings: Mapping[str, object], ax=None, unit: float = 1e-3,
                       unit_label: str = "ms"):
    """One horizontal bar per case (``{label: Timing}``, top to bottom), split into the
    transfer seconds of the steps each link level bounds (``Timing.level_seconds()``) and
    the latency of all steps (grey). The bar's length is the case's total time."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    labels = list(timings)
    used = []
    for row, label in enumerate(labels):
        timing = timings[label]
        left = 0.0
        parts = dict(timing.level_seconds())
        latency = float(np.sum(timing.step_latency))
        if latency > 0:
            parts["latency"] = latency
        for level, seconds in parts.items():
            width = seconds / unit
            ax.barh(row, width, left=left, color=LEVEL_COLOURS.get(level, "0.5"),
                    edgecolor="white", height=0.6,
                    label=LEVEL_LABELS.get(level, level) if level not in used else None)
            used.append(level)
            left += width
        ax.text(left, row, f" {timing.seconds / unit:.3g}", va="center")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit_label})")
    ax.margins(x=0.2)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.22),
              ncol=min(len(labels), 3), frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def cable_loads(topology, src: Sequence[int], dst: Sequence[int], level: str = "spine"):
    """How many of the flows ``src[i] -> dst[i]`` cross each cable of ``level``, for every
    cable of that level attached to a switch that any of the flows uses there.

    Returns ``{"up": counts, "down": counts}``: one int per cable, towards the upper tier
    ("up", e.g. leaf to spine) and back down. A cable's end in the lower tier is the one that
    also has links of the level below (a leaf has NIC links; a spine has none)."""
    levels = tuple(topology.info.levels)
    if level not in levels:
        raise CollectivesError(f"{topology.name} has no link level {level!r}; its levels are "
                               f"{', '.join(levels)}")
    index = levels.index(level)
    pair, link = topology.paths(np.asarray(src), np.asarray(dst))
    on_level = topology.link_level == index
    counts = np.bincount(link[on_level[link]], minlength=topology.n_links)
    below = np.zeros(topology.n_nodes, bool)
    if index > 0:                                     # nodes with links of the level below
        lower = topology.link_level == index - 1
        below[topology.link_src[lower]] = True
        below[topology.link_dst[lower]] = True
    out = {}
    for direction, lower_end in (("up", topology.link_src), ("down", topology.link_dst)):
        cables = np.flatnonzero(on_level & below[lower_end])
        busy = np.unique(lower_end[cables[counts[cables] > 0]])
        chosen = cables[np.isin(lower_end[cables], busy)]
        out[direction] = counts[chosen]
    return out


def plot_cable_loads(loads: Mapping[str, np.ndarray], ax=None, title: str | None = None):
    """Bar chart of :func:`cable_loads`: how many cables carry 0, 1, 2, ... flows, up and
    down."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    top = max(int(v.max()) if len(v) else 0 for v in loads.values())
    x = np.arange(top + 1)
    colours = {"up": LEVEL_COLOURS["spine"], "down": LEVEL_COLOURS["core"]}
    width = 0.8 / max(len(loads), 1)
    for i, (direction, counts) in enumerate(loads.items()):
        hist = np.bincount(counts, minlength=top + 1)
        ax.bar(x + (i - (len(loads) - 1) / 2) * width, hist, width=width,
               color=colours.get(direction, "0.5"), label=f"{direction} ({len(counts)} cables)")
    ax.set_xticks(x)
    ax.set_xlabel("flows on one cable")
    ax.set_ylabel("cables")
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def _cluster_layout(topology):
    """Drawing positions of every node of a :func:`collectives.topology.cluster`: GPUs in a
    row (grouped by node), NICs just above them, each node's NVSwitch below, then rows of
    leaves, spines and cores, each spread over the width it serves."""
    if topology.info.family != "cluster":
        raise CollectivesError(f"draw_cluster draws a cluster topology, not {topology.name}")
    levels = tuple(topology.info.levels)
    n_nodes, g = topology.shape
    e = topology.n_ranks
    pos = np.full((topology.n_nodes, 2), np.nan)
    gpu = np.arange(e)
    pos[gpu, 0] = gpu // g * (g + 1.5) + gpu % g
    pos[gpu, 1] = 0.0

    def ends(level, lower):
        """(lower node, upper node) of the links of ``level`` going up from ``lower``."""
        sel = (topology.link_level == levels.index(level)) & np.isin(topology.link_src, lower)
        return topology.link_src[sel], topology.link_dst[sel]

    src, dst = ends("nvlink", gpu)
    for switch in np.unique(dst):
        pos[switch] = [pos[src[dst == switch], 0].mean(), -1.2]
    src, dst = ends("pcie", gpu)
    pos[dst] = np.column_stack([pos[src, 0], np.full(len(src), 0.9)])
    lower = np.unique(dst)
    for level, height in (("leaf", 2.6), ("spine", 4.4), ("core", 6.2)):
        if level not in levels:
            break
        src, dst = ends(level, lower)
        upper = np.unique(dst)
        centre = np.array([pos[src[dst == u], 0].mean() for u in upper])
        span = np.array([np.ptp(pos[src[dst == u], 0]) for u in upper])
        order = np.argsort(centre, kind="stable")
        # spread the switches of a tier evenly over the width their children cover
        lo, hi = np.nanmin(pos[gpu, 0]), np.nanmax(pos[gpu, 0])
        if len(upper) > 1 and span.max() > 0.5 * (hi - lo):
            x = np.linspace(lo, hi, len(upper))
        else:
            x = centre[order]
        pos[upper[order], 0] = x
        pos[upper[order], 1] = height
        lower = upper
    return pos


def draw_cluster(topology, flows: Sequence[tuple[int, int, str]] = (), ax=None,
                 title: str | None = None, rail_colours: bool = True):
    """A small :func:`collectives.topology.cluster`, drawn tier by tier, with ``flows``
    ``(src, dst, colour)`` drawn along the routes the topology gives them (the routes
    :func:`collectives.time` costs). GPUs are labelled with their local index; cables from
    NICs to leaves are tinted by rail. Meant for a few nodes (the drawing has one column
    per GPU)."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    pos = _cluster_layout(topology)
    n_nodes, g = topology.shape
    levels = tuple(topology.info.levels)
    rail = plt.get_cmap("tab10")
    drawn = set()
    for u, v, lv in zip(topology.link_src.tolist(), topology.link_dst.tolist(),
                        topology.link_level.tolist()):
        key = (min(u, v), max(u, v))
        if key in drawn or np.isnan(pos[[u, v]]).any():
            continue
        drawn.add(key)
        colour, width = "0.82", 1.0
        if rail_colours and levels[lv] == "leaf":
            nic = min(u, v)
            colour, width = rail((nic - topology.n_ranks) % g), 1.6
        ax.plot(*pos[[u, v]].T, color=colour, linewidth=width, zorder=1)
    gpu = np.arange(topology.n_ranks)
    ax.scatter(*pos[gpu].T, s=260, color="white", edgecolor="0.2", zorder=3)
    for r in gpu:
        ax.text(*pos[r], str(r % g), ha="center", va="center", fontsize=FONT - 1, zorder=4)
    switches = topology.switches
    ok = switches[~np.isnan(pos[switches, 0])]
    ax.scatter(*pos[ok].T, s=110, marker="s", color="0.88", edgecolor="0.3", zorder=3)
    for src, dst, colour in flows:
        nodes = [src] + [int(topology.link_dst[link]) for link in topology.route(src, dst)]
        xy = pos[nodes]
        ax.plot(*xy.T, color=colour, linewidth=2.2, alpha=0.85, zorder=2)
        ax.annotate("", xy=xy[-1], xytext=xy[-2],
                    arrowprops=dict(arrowstyle="-|>", color=colour, linewidth=1.8,
                                    shrinkA=0, shrinkB=6), zorder=2)
    for y, name in ((-1.2, "NVSwitch"), (2.6, "leaves"), (4.4, "spines"), (6.2, "cores")):
        if np.any(np.isclose(pos[switches, 1], y)):
            ax.text(np.nanmin(pos[:, 0]) - 1.0, y, name, ha="right", va="center")
    ax.set_aspect("auto")
    ax.axis("off")
    ax.margins(x=0.05, y=0.08)
    if title:
        ax.set_title(title)
    return ax
