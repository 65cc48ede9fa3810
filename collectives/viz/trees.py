"""Drawing reduction trees read from a Schedule: NCCL's double binary tree and its kin.

Nodes are circles of a fixed radius in data coordinates (the axes keep an equal aspect), so
edges can stop at a circle's rim instead of crossing the rank's number, and the axes limits
are set from the circles themselves, so no node is clipped. Taught in chapter "All-reduce"
(the double binary tree).
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from .style import ALGORITHM_COLOURS, font_size

__all__ = [
    "NODE_RADIUS",
    "reduction_edges",
    "tree_layout",
    "edge_segments",
    "draw_tree",
    "draw_double_binary_tree",
]

#: radius of a rank's circle, in data units (ranks are 1 apart horizontally, levels 1 apart)
NODE_RADIUS = 0.34


def reduction_edges(schedule, chunk):
    """(child, parent) pairs of ``schedule``'s reducing transfers of chunk ``chunk``: the
    reduction tree of that part of the buffer (a child adds its partial sum into its parent)."""
    return [
        (src, dst)
        for step in schedule.to_lists()
        for src, dst, src_chunk, _, reduce in step
        if reduce and src_chunk == chunk
    ]


def tree_layout(edges, n):
    """Positions of ranks ``0 .. n-1`` of a tree given as (child, parent) pairs: x is the rank
    (NCCL's trees keep the ranks in in-order), y is minus the depth. Returns an (n, 2) array."""
    parent = dict(edges)
    if len(parent) != len(edges):
        raise CollectivesError("a rank has two parents: the edges do not form a tree")
    depth = np.zeros(n)
    for r in range(n):
        v, hops = r, 0
        while v in parent:
            v, hops = parent[v], hops + 1
            if hops > n:
                raise CollectivesError("the edges contain a cycle: they do not form a tree")
        depth[r] = hops
    return np.stack([np.arange(n, dtype=float), -depth], axis=1)


def edge_segments(pos, edges, radius=NODE_RADIUS):
    """Each edge as a segment from the rim of the child's circle to the rim of the parent's:
    an array of shape (len(edges), 2, 2)."""
    segments = []
    for child, par in edges:
        a, b = pos[child], pos[par]
        unit = (b - a) / np.hypot(*(b - a))
        segments.append([a + radius * unit, b - radius * unit])
    return np.array(segments).reshape(-1, 2, 2)


def _light(colour, amount):
    """``colour`` mixed with white (opaque, so nothing drawn beneath shows through)."""
    import matplotlib.colors as mcolors

    rgb = np.array(mcolors.to_rgb(colour))
    return tuple(1 - amount * (1 - rgb))


def draw_tree(edges, n, ax=None, title=None, colour=ALGORITHM_COLOURS["tree"]):
    """One tree over ranks ``0 .. n-1`` from (child, parent) pairs: inner nodes shaded, leaves
    white, edges from rim to rim. Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Circle

    ax = ax or plt.gca()
    pos = tree_layout(edges, n)
    inner = {p for _, p in edges}
    ax.add_collection(
        LineCollection(edge_segments(pos, edges), colors="0.45", linewidths=1.4, zorder=1)
    )
    for r in range(n):
        face = _light(colour, 0.45) if r in inner else "white"
        ax.add_patch(
            Circle(pos[r], NODE_RADIUS, facecolor=face, edgecolor="0.2", linewidth=1.0, zorder=2)
        )
        ax.text(
            *pos[r],
            str(r),
            ha="center",
            va="center",
            zorder=3,
            fontsize=font_size("label" if n <= 16 else "tiny"),
        )
    pad = NODE_RADIUS + 0.12
    ax.set_xlim(pos[:, 0].min() - pad, pos[:, 0].max() + pad)
    ax.set_ylim(pos[:, 1].min() - pad, pos[:, 1].max() + pad)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


def draw_double_binary_tree(schedule, figsize=None, stacked=True):
    """The two trees of a double-binary-tree all-reduce ``schedule`` (half 0 of the buffer
    through the first, half 1 through the second), one above the other (``stacked``, legible
    in a phone's column) or side by side. Returns the Figure."""
    import matplotlib.pyplot as plt

    n = schedule.n_ranks
    shape, size = ((2, 1), (6.0, 5.6)) if stacked else ((1, 2), (9.0, 3.4))
    fig, axes = plt.subplots(*shape, figsize=size if figsize is None else figsize)
    for half, ax in enumerate(axes):
        draw_tree(
            reduction_edges(schedule, half),
            n,
            ax=ax,
            title=f"tree {half + 1}: half {half} of the buffer",
        )
    fig.tight_layout()
    return fig
