"""Figures of hardware: TPU slices and cubes, the bandwidth hierarchy, hop maps, a scalable
unit's rails, and a small GPU cluster with flows along their routes.

Everything is drawn from the package's own objects: a slice from the Topology a hardware
preset builds (its shape and per-axis wraparound), hosts from
:func:`collectives.hardware.tpu_hosts`, bandwidths from :func:`collectives.hardware.spec`,
hop counts from :mod:`collectives.measures`, a scalable unit and a cluster from the links of
a :func:`collectives.topology.cluster` (which NIC a GPU uses, which leaf that NIC is cabled
to, which spines that leaf reaches) and its declared info, placed as
:func:`collectives.viz.wiring.wiring_of` places them; routes from the topology's router (the
routes :func:`collectives.time` costs). One colour per link level (:mod:`.style`) and text
sizes from :func:`~collectives.viz.style.font_size`. matplotlib is imported inside the
functions. Taught in chapters "TPU cluster topology", "GPU nodes and clusters" and
"Collectives across nodes".
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from ..topology import Cluster
from .style import LEVEL_COLOURS, font_size
from .wiring import wiring_of

__all__ = [
    "COLOURS",
    "draw_slice",
    "draw_cube",
    "plot_bandwidth_hierarchy",
    "draw_hops",
    "draw_scalable_unit",
    "draw_cluster",
    "nic_rails",
]

#: one colour per level of the hierarchy (the book's, :mod:`.style`), and for wraparound /
#: optical links
COLOURS = {
    **{k: LEVEL_COLOURS[k] for k in ("hbm", "ici", "pcie", "dcn")},
    "wrap": "#AA4499",  # purple (Tol): wraparound links (optical between cubes)
    "link": "0.65",
}  # ordinary neighbour links


# ---- TPU ----------------------------------------------------------------------------------


def _grid_of(topology):
    if topology.shape is None or topology.wraparound is None or len(topology.shape) != 2:
        raise CollectivesError(
            f"draw_slice draws a 2-D torus or mesh (a 2-D TPU slice), got {topology.name}"
        )
    return tuple(topology.shape), tuple(topology.wraparound)


def draw_slice(topology, hosts: Optional[np.ndarray] = None, ax=None, title: Optional[str] = None):
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
                ax.plot(
                    [x0, x0 + dx],
                    [-row, -row],
                    color=COLOURS["wrap"],
                    linewidth=2.4,
                    solid_capstyle="round",
                    zorder=1,
                )
    if wrap[0] and rows > 2:
        for col in range(cols):
            for y0, dy in ((0, stub), (-(rows - 1), -stub)):
                ax.plot(
                    [col, col],
                    [y0, y0 + dy],
                    color=COLOURS["wrap"],
                    linewidth=2.4,
                    solid_capstyle="round",
                    zorder=1,
                )
    size = 140 if max(rows, cols) <= 8 else 70
    if hosts is not None:
        hosts = np.asarray(hosts).ravel()
        palette = plt.get_cmap("Pastel1")
        faces: list = [palette(int(h) % palette.N) for h in hosts]
    else:
        faces = ["white"] * (rows * cols)
    ax.scatter(x, y, s=size, c=faces, edgecolors="0.2", linewidths=0.9, zorder=3)
    if hosts is not None:
        for h in np.unique(hosts):
            members = hosts == h
            x0, x1 = x[members].min() - 0.32, x[members].max() + 0.32
            y0, y1 = y[members].min() - 0.32, y[members].max() + 0.32
            ax.plot(
                [x0, x1, x1, x0, x0],
                [y0, y0, y1, y1, y0],
                color="0.35",
                linewidth=0.9,
                linestyle=":",
                zorder=2,
            )
    ax.set_aspect("equal")
    ax.set_xlim(-0.9, cols - 0.1)
    ax.set_ylim(-rows + 0.1, 0.9)
    ax.axis("off")
    handles = [
        Line2D([], [], color=COLOURS["link"], linewidth=1.6, label="ICI link"),
        Line2D(
            [], [], color=COLOURS["wrap"], linewidth=2.4, label="wraparound (to the opposite edge)"
        ),
    ]
    if hosts is not None:
        handles.append(Line2D([], [], color="0.35", linewidth=0.9, linestyle=":", label="one host"))
    if title:
        ax.set_title(title)
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
    ax.scatter(
        *coords.T,
        s=22,
        color="white",
        edgecolors="0.15",
        linewidths=0.8,
        depthshade=False,
        zorder=3,
    )
    ax.view_init(elev=22, azim=-58)
    ax.set_box_aspect(shape, zoom=1.25)
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    return ax, n_stubs


def plot_bandwidth_hierarchy(systems, ax=None, title: Optional[str] = None):
    """Grouped bars, log scale: for each :class:`collectives.hardware.System` in ``systems``
    the bytes/s per chip of HBM, ICI (all of the chip's links, one direction), PCIe (to its
    host) and DCN (the chip's share of its host's network). A level the source does not
    publish is left out of that group. Returns the axes and the plotted values as
    ``{system name: {level: bytes/s}}``."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    levels = [("hbm", "HBM"), ("ici", "ICI (all links)"), ("pcie", "PCIe"), ("dcn", "DCN")]
    values = {}
    width = 0.2
    for i, system in enumerate(systems):
        row = {
            "hbm": system.hbm_bandwidth,
            "ici": system.ici_links * system.link_bandwidth if system.ici_links else None,
            "pcie": system.pcie_bandwidth,
            "dcn": system.dcn_bandwidth,
        }
        values[system.name] = {k: v for k, v in row.items() if v is not None}
        for j, (key, label) in enumerate(levels):
            if row[key] is None:
                ax.text(
                    i + (j - 1.5) * width,
                    1.3e9,
                    "n/p",
                    ha="center",
                    va="bottom",
                    fontsize=font_size("small"),
                    rotation=90,
                    color="0.4",
                )
                continue
            ax.bar(
                i + (j - 1.5) * width,
                row[key],
                width,
                color=COLOURS[key],
                label=label if i == 0 else None,
                edgecolor="white",
                linewidth=0.5,
            )
    ax.set_yscale("log")
    ax.set_ylim(1e9, 2e13)
    ax.set_xticks(range(len(systems)), [s.name.replace("tpu-", "") for s in systems])
    ax.set_ylabel("bytes/s per chip")
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(ncol=2, loc="upper left", frameon=False)
    if title:
        ax.set_title(title)
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
        ax.text(
            j, i, str(int(h)), ha="center", va="center", fontsize=font_size("small"), color="black"
        )
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    return ax


# ---- GPU clusters --------------------------------------------------------------------------


def _links_from(topology, nodes, level):
    """(src, dst) of the links of ``level`` (a name of ``topology.info.levels``) leaving
    ``nodes``, one row per link (parallel links repeat)."""
    levels = tuple(topology.info.levels)
    if level not in levels:
        raise CollectivesError(f"{topology.name} has no {level!r} links (levels: {levels})")
    code = levels.index(level)
    mask = (topology.link_level == code) & np.isin(topology.link_src, nodes)
    return topology.link_src[mask], topology.link_dst[mask]


def draw_scalable_unit(
    topology, nodes: Sequence[int] = (0, 1, 2, 31), ax=None, title: Optional[str] = None
):
    """One scalable unit of a cluster topology: the GPUs of ``nodes`` (drawn in that order,
    with a gap where node numbers skip), the rail leaf each GPU's NIC is cabled to (one
    colour per rail) and the spines each leaf reaches, with its number of parallel cables.

    Read from the topology's links: GPU -> NIC ("pcie"), NIC -> leaf ("leaf"), leaf -> spine
    ("spine"); a node's GPUs from ``info.shape`` (ranks row-major over (nodes, GPUs per
    node)); the leaves drawn are those the shown GPUs reach. Returns the Axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    if topology.info.family != "cluster" or topology.shape is None:
        raise CollectivesError(
            "draw_scalable_unit needs a cluster topology "
            "(cl.topology.cluster or a DGX / SuperPOD preset)"
        )
    n_nodes, g = topology.shape
    nodes = [int(x) for x in nodes]
    if not nodes or min(nodes) < 0 or max(nodes) >= n_nodes:
        raise CollectivesError(f"nodes must be node numbers 0..{n_nodes - 1}, got {nodes}")
    ax = ax or plt.gca()
    gpus = np.array(
        [np.ravel_multi_index((node, i), topology.shape) for node in nodes for i in range(g)]
    )
    gpu_src, nic = _links_from(topology, gpus, "pcie")
    nic_src, leaf_of_nic = _links_from(topology, nic, "leaf")
    nic_of = dict(zip(gpu_src.tolist(), nic.tolist()))
    leaf_of = dict(zip(nic_src.tolist(), leaf_of_nic.tolist()))
    gpu_leaf = np.array([leaf_of[nic_of[int(x)]] for x in gpus])
    leaves = np.unique(gpu_leaf)
    leaf_src, spine_dst = _links_from(topology, leaves, "spine")
    spines = np.unique(spine_dst)
    cables: dict[tuple[int, int], int] = {}
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
        ax.add_patch(
            FancyBboxPatch(
                (slot - 0.5, -0.45),
                1.0,
                0.9,
                boxstyle="round,pad=0.02",
                facecolor="#f2f2f2",
                edgecolor="0.3",
                zorder=1,
            )
        )
        ax.text(slot, -0.75, str(node), ha="center", va="top")
        for i in range(g):
            gx = slot - 0.375 + 0.25 * (i % 4)
            gy = 0.18 if i < 4 else -0.18
            gpu_xy[int(np.ravel_multi_index((node, i), topology.shape))] = (gx, gy)
    for gpu, leaf in zip(gpus.tolist(), gpu_leaf.tolist()):
        colour = rail_colour[int(np.searchsorted(leaves, leaf))]
        gx, gy = gpu_xy[gpu]
        ax.plot(
            [gx, leaf_x[leaf]], [gy, y_leaf - 0.2], color=colour, linewidth=1.0, alpha=0.8, zorder=2
        )
        ax.scatter([gx], [gy], s=28, color=colour, edgecolor="0.2", linewidth=0.5, zorder=3)
    for (leaf, spine), count in cables.items():
        ax.plot(
            [leaf_x[leaf], spine_x[spine]],
            [y_leaf + 0.2, y_spine - 0.2],
            color="0.6",
            linewidth=0.8 + 0.2 * count,
            zorder=1,
        )
    for i, leaf in enumerate(leaves):
        ax.add_patch(
            FancyBboxPatch(
                (leaf_x[leaf] - 0.22, y_leaf - 0.2),
                0.44,
                0.4,
                boxstyle="round,pad=0.02",
                facecolor=rail_colour[i],
                edgecolor="0.2",
                zorder=3,
            )
        )
        ax.text(
            leaf_x[leaf],
            y_leaf,
            str(i),
            ha="center",
            va="center",
            color="white",
            fontweight="bold",
            zorder=4,
        )
    for s in spines:
        ax.add_patch(
            FancyBboxPatch(
                (spine_x[s] - 0.3, y_spine - 0.2),
                0.6,
                0.4,
                boxstyle="round,pad=0.02",
                facecolor="0.85",
                edgecolor="0.2",
                zorder=3,
            )
        )
    per_pair = sorted(set(cables.values()))
    label = (
        f"{len(spines)} spines, {per_pair[0]} cables from every leaf to each"
        if len(per_pair) == 1
        else f"{len(spines)} spines"
    )
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


def nic_rails(topology) -> dict[int, int]:
    """``{NIC node: rail}`` of a cluster with NVLink nodes: a NIC's rail is the local index
    (within its node, from ``info.shape``) of the GPU its PCIe link reaches."""
    levels = tuple(topology.info.levels)
    if "pcie" not in levels or topology.info.shape is None:
        return {}
    sel = (topology.link_level == levels.index("pcie")) & (topology.link_src < topology.n_ranks)
    gpu, nic = topology.link_src[sel], topology.link_dst[sel]
    local = np.unravel_index(gpu, topology.info.shape)[1]
    return dict(zip(nic.tolist(), local.tolist()))


def draw_cluster(
    topology,
    flows: Sequence[tuple[int, int, str]] = (),
    ax=None,
    title: str | None = None,
    rail_colours: bool = True,
):
    """A small GPU cluster (:func:`collectives.topology.cluster`, a DGX preset, any
    :class:`~collectives.topology.Cluster`), drawn tier by tier as
    :func:`~collectives.viz.wiring.wiring_of` places it, with ``flows`` ``(src, dst, colour)``
    drawn along the routes the topology gives them (the routes :func:`collectives.time`
    costs). GPUs are labelled as :func:`~collectives.viz.wiring.wiring_of` labels them (by
    rank up to ``RANK_LABELS_UP_TO`` GPUs, else by their index in the node); cables from
    NICs to leaves are tinted by rail (:func:`nic_rails`). Meant for a few nodes (the
    drawing has one column per GPU)."""
    import matplotlib.pyplot as plt

    if not isinstance(topology, Cluster):
        raise CollectivesError(f"draw_cluster draws a cluster topology, not {topology.name}")
    ax = ax or plt.gca()
    lay = wiring_of(topology)
    pos = lay.positions
    levels = tuple(topology.info.levels)
    rails = nic_rails(topology) if rail_colours else {}
    rail = plt.get_cmap("tab10")
    drawn = set()
    for u, v, lv in zip(
        topology.link_src.tolist(), topology.link_dst.tolist(), topology.link_level.tolist()
    ):
        key = (min(u, v), max(u, v))
        if key in drawn or np.isnan(pos[[u, v]]).any():
            continue
        drawn.add(key)
        colour: object = "0.82"
        width = 1.0
        if levels[lv] == "leaf" and key[0] in rails:
            colour, width = rail(rails[key[0]] % 10), 1.6
        ax.plot(*pos[[u, v]].T, color=colour, linewidth=width, zorder=1)
    gpu = np.arange(topology.n_ranks)
    ax.scatter(*pos[gpu].T, s=260, color="white", edgecolor="0.2", zorder=3)
    for r in gpu:
        ax.text(
            *pos[r], lay.labels[r], ha="center", va="center", fontsize=font_size("small"), zorder=4
        )
    switches = topology.switches
    ok = switches[~np.isnan(pos[switches, 0])]
    ax.scatter(*pos[ok].T, s=110, marker="s", color="0.88", edgecolor="0.3", zorder=3)
    for src, dst, colour in flows:
        nodes = [src] + [int(topology.link_dst[link]) for link in topology.route(src, dst)]
        xy = pos[nodes]
        ax.plot(*xy.T, color=colour, linewidth=2.2, alpha=0.85, zorder=2)
        ax.annotate(
            "",
            xy=xy[-1],
            xytext=xy[-2],
            arrowprops=dict(arrowstyle="-|>", color=colour, linewidth=1.8, shrinkA=0, shrinkB=6),
            zorder=2,
        )
    left = np.nanmin(pos[:, 0]) - 1.0
    for y, name in lay.rows:
        ax.text(left, y, name, ha="right", va="center")
    ax.set_aspect("auto")
    ax.axis("off")
    ax.margins(x=0.05, y=0.08)
    if title:
        ax.set_title(title)
    return ax
