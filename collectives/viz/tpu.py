"""Figures of hardware: TPU slices and cubes, the bandwidth hierarchy, hop maps, level times.

Everything is drawn from the package's own objects: a slice from the Topology a hardware
preset builds (its shape and per-axis wraparound), hosts from
:func:`collectives.hardware.tpu_hosts`, bandwidths from :func:`collectives.hardware.spec`,
hop counts from the topology's router, level times from :meth:`collectives.Timing.level_seconds`.
Nothing is pasted from elsewhere. One palette (:data:`COLOURS`) is used throughout, so that
HBM, ICI, PCIe and DCN have the same colour in every figure. Fonts are at least 10 pt at the
figure sizes chosen here (about 6.4 inches wide, readable when a page is narrowed to a
phone). matplotlib is imported inside the functions. Taught in chapter "TPU cluster topology".
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from .style import LEVEL_COLOURS

__all__ = ["COLOURS", "FONT", "draw_slice", "draw_cube", "plot_bandwidth_hierarchy",
           "draw_hops", "plot_level_seconds"]

#: one colour per level of the hierarchy (the book's, :mod:`.style`), and for wraparound /
#: optical links
COLOURS = {**{k: LEVEL_COLOURS[k] for k in ("hbm", "ici", "pcie", "dcn")},
           "wrap": "#AA4499",       # purple (Tol): wraparound links (optical between cubes)
           "link": "0.65"}          # ordinary neighbour links

#: font size (points) of labels and ticks; titles are one point larger
FONT = 11


def _grid_of(topology):
    if topology.shape is None or topology.wraparound is None or len(topology.shape) != 2:
        raise CollectivesError(
            f"draw_slice draws a 2-D torus or mesh (a 2-D TPU slice), got {topology.name}")
    return tuple(topology.shape), tuple(topology.wraparound)


def draw_slice(topology, hosts: Optional[np.ndarray] = None, ax=None,
               title: Optional[str] = None):
    """A 2-D slice (a 2-D torus Topology, e.g. ``hardware.preset("tpu-v5e", shape=(8, 16))``):
    chips as dots, row-major like the ranks (axis 0 down, axis 1 across), neighbour links in
    grey and every wraparound link as a purple stub leaving one edge (it arrives at the
    opposite edge). ``hosts`` (one host id per chip, :func:`collectives.hardware.tpu_hosts`)
    shades the chips by host and outlines each host's tile. Returns the axes and the legend
    handles (for a figure-level legend shared by several slices)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    (rows, cols), wrap = _grid_of(topology)
    ax = ax or plt.gca()
    r, c = np.divmod(np.arange(rows * cols), cols)
    x, y = c.astype(float), -r.astype(float)
    # neighbour links: drawn from the topology's own links (one line per pair)
    seen = set()
    for u, v in zip(topology.link_src.tolist(), topology.link_dst.tolist()):
        key = (min(u, v), max(u, v))
        if key in seen:
            continue
        seen.add(key)
        if abs(r[u] - r[v]) + abs(c[u] - c[v]) == 1:
            ax.plot([x[u], x[v]], [y[u], y[v]], color=COLOURS["link"], linewidth=1.6, zorder=1)
    stub = 0.45
    if wrap[1] and cols > 2:
        for row in range(rows):
            for x0, dx in ((0, -stub), (cols - 1, stub)):
                ax.plot([x0, x0 + dx], [-row, -row], color=COLOURS["wrap"], linewidth=2.4,
                        solid_capstyle="round", zorder=1)
    if wrap[0] and rows > 2:
        for col in range(cols):
            for y0, dy in ((0, stub), (-(rows - 1), -stub)):
                ax.plot([col, col], [y0, y0 + dy], color=COLOURS["wrap"], linewidth=2.4,
                        solid_capstyle="round", zorder=1)
    size = 140 if max(rows, cols) <= 8 else 70
    if hosts is not None:
        hosts = np.asarray(hosts).ravel()
        palette = plt.get_cmap("Pastel1")
        faces = [palette(int(h) % palette.N) for h in hosts]
    else:
        faces = ["white"] * (rows * cols)
    ax.scatter(x, y, s=size, c=faces, edgecolors="0.2", linewidths=0.9, zorder=3)
    if hosts is not None:
        for h in np.unique(hosts):
            members = hosts == h
            x0, x1 = x[members].min() - 0.32, x[members].max() + 0.32
            y0, y1 = y[members].min() - 0.32, y[members].max() + 0.32
            ax.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], color="0.35", linewidth=0.9,
                    linestyle=":", zorder=2)
    ax.set_aspect("equal")
    ax.set_xlim(-0.9, cols - 0.1)
    ax.set_ylim(-rows + 0.1, 0.9)
    ax.axis("off")
    handles = [Line2D([], [], color=COLOURS["link"], linewidth=1.6, label="ICI link"),
               Line2D([], [], color=COLOURS["wrap"], linewidth=2.4,
                      label="wraparound (to the opposite edge)")]
    if hosts is not None:
        handles.append(Line2D([], [], color="0.35", linewidth=0.9, linestyle=":",
                              label="one host"))
    if title:
        ax.set_title(title, fontsize=FONT + 1)
    return ax, handles


def draw_cube(shape: Sequence[int] = (4, 4, 4), ax=None, title: Optional[str] = None):
    """A 3-D block of chips (a TPU v4/v5p cube by default): chips as dots, the electrical
    links inside the block in grey, and the link of every chip on a face that leaves the
    block (to an optical circuit switch, which closes the wraparound or joins another
    cube) as a purple stub. Returns the axes and the number of stubs drawn."""
    import matplotlib.pyplot as plt

    shape = tuple(int(s) for s in shape)
    if len(shape) != 3 or min(shape) < 1:
        raise CollectivesError(f"draw_cube takes a 3-D shape, got {shape!r}")
    if ax is None:
        ax = plt.figure().add_subplot(projection="3d")
    coords = np.indices(shape).reshape(3, -1).T
    for axis in range(3):
        step = np.eye(3, dtype=int)[axis]
        inside = coords[coords[:, axis] < shape[axis] - 1]
        for p in inside:
            q = p + step
            ax.plot(*zip(p, q), color=COLOURS["link"], linewidth=1.0, zorder=1)
    stub = 0.55
    n_stubs = 0
    for axis in range(3):
        step = np.eye(3)[axis]
        for end, sign in ((0, -1), (shape[axis] - 1, 1)):
            for p in coords[coords[:, axis] == end]:
                q = p + sign * stub * step
                ax.plot(*zip(p, q), color=COLOURS["wrap"], linewidth=1.8, zorder=2)
                n_stubs += 1
    ax.scatter(*coords.T, s=22, color="white", edgecolors="0.15", linewidths=0.8,
               depthshade=False, zorder=3)
    ax.view_init(elev=22, azim=-58)
    ax.set_box_aspect(shape, zoom=1.25)
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=FONT + 1)
    return ax, n_stubs


def plot_bandwidth_hierarchy(systems, ax=None, title: Optional[str] = None):
    """Grouped bars, log scale: for each :class:`collectives.hardware.System` in ``systems``
    the bytes/s per chip of HBM, ICI (all of the chip's links, one direction), PCIe (to its
    host) and DCN (the chip's share of its host's network). A level the source does not
    publish is left out of that group. Returns the axes and the plotted values as
    ``{system name: {level: bytes/s}}``."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    levels = [("hbm", "HBM"), ("ici", "ICI (all links)"), ("pcie", "PCIe"),
              ("dcn", "DCN")]
    values = {}
    width = 0.2
    for i, system in enumerate(systems):
        row = {"hbm": system.hbm_bandwidth,
               "ici": system.ici_links * system.link_bandwidth if system.ici_links else None,
               "pcie": system.pcie_bandwidth, "dcn": system.dcn_bandwidth}
        values[system.name] = {k: v for k, v in row.items() if v is not None}
        for j, (key, label) in enumerate(levels):
            if row[key] is None:
                ax.text(i + (j - 1.5) * width, 1.3e9, "n/p", ha="center", va="bottom",
                        fontsize=FONT - 1, rotation=90, color="0.4")
                continue
            ax.bar(i + (j - 1.5) * width, row[key], width, color=COLOURS[key],
                   label=label if i == 0 else None, edgecolor="white", linewidth=0.5)
    ax.set_yscale("log")
    ax.set_ylim(1e9, 2e13)
    ax.set_xticks(range(len(systems)), [s.name.replace("tpu-", "") for s in systems],
                  fontsize=FONT)
    ax.set_ylabel("bytes/s per chip", fontsize=FONT)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=FONT - 1, ncol=2, loc="upper left", frameon=False)
    if title:
        ax.set_title(title, fontsize=FONT + 1)
    return ax, values


def draw_hops(hops: np.ndarray, ax=None, title: Optional[str] = None, vmax=None):
    """A 2-D array of hop counts (from one chip to every chip of a 2-D slice) as a heat map,
    each cell labelled with its count."""
    import matplotlib.pyplot as plt

    hops = np.asarray(hops)
    if hops.ndim != 2:
        raise CollectivesError(f"draw_hops takes a 2-D array of hop counts, got {hops.shape}")
    ax = ax or plt.gca()
    vmax = hops.max() if vmax is None else vmax
    ax.imshow(hops, cmap="Oranges", vmin=0, vmax=vmax * 1.25)
    for (i, j), h in np.ndenumerate(hops):
        ax.text(j, i, str(int(h)), ha="center", va="center", fontsize=FONT - 1,
                color="black")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=FONT + 1)
    return ax


def plot_level_seconds(rows, ax=None, title: Optional[str] = None):
    """Horizontal stacked bars, one per ``(label, timing)`` in ``rows``: the transfer seconds
    each link level bounds (:meth:`collectives.Timing.level_seconds`), ICI then DCN, in
    milliseconds; the bottleneck level is named at the end of each bar."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    labels = [label for label, _ in rows]
    for i, (_, timing) in enumerate(rows):
        seconds = timing.level_seconds()
        left = 0.0
        for level in ("ici", "dcn"):
            ms = seconds.get(level, 0.0) * 1e3
            ax.barh(i, ms, left=left, color=COLOURS[level], height=0.6,
                    label=level.upper() if i == 0 else None)
            left += ms
        if timing.bottleneck_level is not None:
            ax.text(left, i, f"  {timing.bottleneck_level.upper()}", va="center",
                    fontsize=FONT - 1)
    ax.set_yticks(range(len(rows)), labels, fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlabel("transfer time (ms)", fontsize=FONT)
    ax.tick_params(axis="x", labelsize=FONT)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=FONT - 1, loc="lower right", frameon=False)
    if title:
        ax.set_title(title, fontsize=FONT + 1)
    return ax
