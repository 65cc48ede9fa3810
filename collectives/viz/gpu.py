"""Figures for the GPU chapters: one scalable unit's rails, bandwidth per GPU by level, the
bytes on every GPU's NVLink, and cost curves with one colour per algorithm.

Everything drawn is read from the objects the rest of the package builds: the wiring of a
scalable unit from a :func:`collectives.topology.cluster` topology (which NIC a GPU uses,
which leaf that NIC is cabled to, which spines that leaf reaches and with how many cables),
bytes from :class:`collectives.Timing`. The figures are sized to stay readable on a phone:
about 4.6 inches wide with 13-point text, so that text is still about 10 points when the
page scales the figure to a 360-pixel column. One colour per algorithm
(:data:`ALGORITHM_COLOURS`) and per link level (:data:`LEVEL_COLOURS`) across both chapters.
matplotlib is imported inside the functions. Taught in chapters "GPU nodes and clusters" and
"Collectives inside a node".
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from .style import ALGORITHM_COLOURS as BOOK_ALGORITHM_COLOURS
from .style import LEVEL_COLOURS as BOOK_LEVEL_COLOURS, fonts, use_fonts

__all__ = ["ALGORITHM_COLOURS", "LEVEL_COLOURS", "FIG_WIDTH", "setup", "style", "draw_scalable_unit",
           "plot_bars", "link_bytes", "plot_link_bytes"]

#: one colour per algorithm, the same in every chapter (:mod:`.style`)
ALGORITHM_COLOURS = BOOK_ALGORITHM_COLOURS

#: one colour per link level of a cluster topology (the book's, :mod:`.style`)
LEVEL_COLOURS = {k: BOOK_LEVEL_COLOURS[k] for k in ("nvlink", "pcie", "leaf", "spine", "core")}

#: width (inches) of a figure that stays readable on a phone
FIG_WIDTH = 4.6


def setup(font_size: float = 13) -> None:
    """Make every later matplotlib text about ``font_size`` points (13 by default), for the
    rest of the session: what a chapter calls once at the top (:func:`.style.use_fonts`)."""
    use_fonts(font_size)


def style(font_size: float = 13):
    """The font sizes of :func:`setup` inside a ``with`` block only (:func:`.style.fonts`)."""
    return fonts(font_size)


def _links_from(topology, nodes, level):
    """(src, dst) of the links of ``level`` (a name of ``topology.info.levels``) leaving
    ``nodes``, one row per link (parallel links repeat)."""
    levels = tuple(topology.info.levels)
    if level not in levels:
        raise CollectivesError(f"{topology.name} has no {level!r} links (levels: {levels})")
    code = levels.index(level)
    mask = (topology.link_level == code) & np.isin(topology.link_src, nodes)
    return topology.link_src[mask], topology.link_dst[mask]


def draw_scalable_unit(topology, nodes: Sequence[int] = (0, 1, 2, 31), ax=None,
                       title: Optional[str] = None):
    """One scalable unit of a cluster topology: the GPUs of ``nodes`` (drawn in that order,
    with a gap where node numbers skip), the rail leaf each GPU's NIC is cabled to (one
    colour per rail) and the spines each leaf reaches, with its number of parallel cables.

    Read from the topology's links: GPU -> NIC ("pcie"), NIC -> leaf ("leaf"), leaf -> spine
    ("spine"); the leaves drawn are those the shown GPUs reach. Returns the Axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    if topology.info.family != "cluster" or topology.shape is None:
        raise CollectivesError("draw_scalable_unit needs a cluster topology "
                               "(cl.topology.cluster or a DGX / SuperPOD preset)")
    n_nodes, g = topology.shape
    nodes = [int(x) for x in nodes]
    if not nodes or min(nodes) < 0 or max(nodes) >= n_nodes:
        raise CollectivesError(f"nodes must be node numbers 0..{n_nodes - 1}, got {nodes}")
    ax = ax or plt.gca()
    gpus = np.array([node * g + i for node in nodes for i in range(g)])
    gpu_src, nic = _links_from(topology, gpus, "pcie")
    nic_src, leaf_of_nic = _links_from(topology, nic, "leaf")
    nic_of = dict(zip(gpu_src.tolist(), nic.tolist()))
    leaf_of = dict(zip(nic_src.tolist(), leaf_of_nic.tolist()))
    gpu_leaf = np.array([leaf_of[nic_of[int(x)]] for x in gpus])
    leaves = np.unique(gpu_leaf)
    leaf_src, spine_dst = _links_from(topology, leaves, "spine")
    spines = np.unique(spine_dst)
    cables = {}
    for u, v in zip(leaf_src.tolist(), spine_dst.tolist()):
        cables[(u, v)] = cables.get((u, v), 0) + 1

    # node slots, with a gap where the numbering skips
    slots, x = [], 0.0
    for k, node in enumerate(nodes):
        if k and node != nodes[k - 1] + 1:
            x += 0.6
            ax.text(x - 0.925, 0.0, "⋯", ha="center", va="center")
        slots.append(x)
        x += 1.25
    width = x - 0.25
    rail_colour = [plt.get_cmap("tab10")(r % 10) for r in range(len(leaves))]
    leaf_x = {leaf: (i + 0.5) * width / len(leaves) - 0.5 for i, leaf in enumerate(leaves)}
    spine_x = {s: (i + 0.5) * width / len(spines) - 0.5 for i, s in enumerate(spines)}
    y_gpu, y_leaf, y_spine = 0.0, 2.2, 3.6
    gpu_xy = {}
    for slot, node in zip(slots, nodes):
        ax.add_patch(FancyBboxPatch((slot - 0.5, -0.45), 1.0, 0.9,
                                    boxstyle="round,pad=0.02", facecolor="#f2f2f2",
                                    edgecolor="0.3", zorder=1))
        ax.text(slot, -0.75, str(node), ha="center", va="top")
        for i in range(g):
            gx = slot - 0.375 + 0.25 * (i % 4)
            gy = 0.18 if i < 4 else -0.18
            gpu_xy[node * g + i] = (gx, gy)
    for gpu, leaf in zip(gpus.tolist(), gpu_leaf.tolist()):
        colour = rail_colour[int(np.searchsorted(leaves, leaf))]
        gx, gy = gpu_xy[gpu]
        ax.plot([gx, leaf_x[leaf]], [gy, y_leaf - 0.2], color=colour, linewidth=1.0,
                alpha=0.8, zorder=2)
        ax.scatter([gx], [gy], s=28, color=colour, edgecolor="0.2", linewidth=0.5, zorder=3)
    for (leaf, spine), count in cables.items():
        ax.plot([leaf_x[leaf], spine_x[spine]], [y_leaf + 0.2, y_spine - 0.2], color="0.6",
                linewidth=0.8 + 0.2 * count, zorder=1)
    for i, leaf in enumerate(leaves):
        ax.add_patch(FancyBboxPatch((leaf_x[leaf] - 0.22, y_leaf - 0.2), 0.44, 0.4,
                                    boxstyle="round,pad=0.02", facecolor=rail_colour[i],
                                    edgecolor="0.2", zorder=3))
        ax.text(leaf_x[leaf], y_leaf, str(i), ha="center", va="center", color="white",
                fontweight="bold", zorder=4)
    for s in spines:
        ax.add_patch(FancyBboxPatch((spine_x[s] - 0.3, y_spine - 0.2), 0.6, 0.4,
                                    boxstyle="round,pad=0.02", facecolor="0.85",
                                    edgecolor="0.2", zorder=3))
    per_pair = sorted(set(cables.values()))
    label = (f"{len(spines)} spines, {per_pair[0]} cables from every leaf to each"
             if len(per_pair) == 1 else f"{len(spines)} spines")
    ax.text(width / 2 - 0.5, y_spine + 0.35, label, ha="center", va="bottom")
    ax.text(-0.75, y_leaf, "rail\nleaves", ha="right", va="center")
    ax.text(-0.75, y_gpu, "nodes", ha="right", va="center")
    ax.set_xlim(-1.9, width - 0.3)
    ax.set_ylim(-1.3, y_spine + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


def plot_bars(rows: Iterable[tuple[str, float, str]], ax=None, unit: float = 1e9,
              unit_label: str = "GB/s", log: bool = True, title: Optional[str] = None):
    """Horizontal bars, one per ``(label, value, colour)`` row (top to bottom), each with its
    value (divided by ``unit``) written at its end. Returns the Axes."""
    import matplotlib.pyplot as plt

    rows = list(rows)
    ax = ax or plt.gca()
    labels = [r[0] for r in rows]
    values = np.array([r[1] for r in rows], dtype=float) / unit
    y = np.arange(len(rows))[::-1]
    ax.barh(y, values, color=[r[2] for r in rows], edgecolor="0.2", height=0.7)
    for yi, v in zip(y, values):
        ax.text(v * (1.08 if log else 1.01), yi, f"{v:,.0f}", va="center", ha="left")
    ax.set_yticks(y, labels)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(values.min() / 2, values.max() * 6)
    else:
        ax.set_xlim(0, values.max() * 1.3)
    ax.set_xlabel(unit_label)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax


def link_bytes(timing, topology, gpu: Optional[int] = None) -> tuple[float, float]:
    """Bytes (up: GPU to NVSwitch, down: NVSwitch to GPU) that a :class:`collectives.Timing`
    puts on one GPU's NVLinks, as multiples of its buffer ``timing.nbytes``; ``gpu=None``: the
    most loaded up-link and the most loaded down-link over all GPUs (what bounds the time)."""
    levels = tuple(topology.info.levels)
    code = levels.index("nvlink") if "nvlink" in levels else 0
    on_level = topology.link_level == code
    gpus = topology.link_src < topology.n_ranks
    up = on_level & gpus
    down = on_level & (topology.link_dst < topology.n_ranks)
    if gpu is not None:
        up &= topology.link_src == gpu
        down &= topology.link_dst == gpu
    if not up.any() or not down.any():
        raise CollectivesError(f"no NVLink into and out of GPU {gpu} in {topology.name}")
    s = timing.nbytes
    return (float(timing.link_bytes[up].max() / s), float(timing.link_bytes[down].max() / s))


def plot_link_bytes(cases: Sequence[tuple[str, object, str]], topology, gpu: Optional[int] = None,
                    ax=None, title: Optional[str] = None):
    """Bytes on a GPU's link to its NVSwitch, up (solid) and down (hatched), as a multiple
    of the buffer ``S``, for each ``(label, timing, colour)`` (a :class:`collectives.Timing`
    on ``topology``, whose ``nbytes`` is ``S``); ``gpu=None``: the busiest links (see
    :func:`link_bytes`). Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    y = np.arange(len(cases))[::-1]
    for yi, (label, timing, colour) in zip(y, cases):
        u, d = link_bytes(timing, topology, gpu)
        ax.barh(yi + 0.18, u, height=0.34, color=colour, edgecolor="0.2")
        ax.barh(yi - 0.18, d, height=0.34, color=colour, edgecolor="0.2", hatch="//",
                alpha=0.6)
        ax.text(u + 0.03, yi + 0.18, f"{u:.3f}", va="center")
        ax.text(d + 0.03, yi - 0.18, f"{d:.3f}", va="center")
    ax.set_yticks(y, [c[0] for c in cases])
    ax.set_xlabel("bytes on the link / S")
    ax.set_xlim(0, 2.6)
    ax.grid(True, axis="x", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax
