"""A Schedule's transfers drawn on the wiring they run on, for any Topology.

:func:`wiring_of` places every node of a Topology from what the Topology declares (its
:class:`~collectives.topology.TopologyInfo`, and for GPU clusters and fabrics the
:class:`~collectives.topology.Cluster` tiers), never from how a builder happens to number
things:

* a ring on a circle, a chain on a line, one switch at the centre of its endpoints;
* a torus or mesh as a grid (axis 0 down, the last axis across, ranks row-major over
  ``info.shape``); with three or more axes the leading axes index *planes*, drawn side by
  side (links between planes are drawn only when a transfer crosses them, as arcs); every
  wraparound link of ``info.wraparound`` is a pair of stubs leaving one edge of the grid and
  arriving at the opposite one, so the wrap is visible without a line across the grid;
* a product (``info.dimensions``, e.g. a TPU multislice over DCN) as copies of its inner
  dimensions' drawing, one panel per coordinate of the outer one;
* a GPU cluster or fabric tier by tier: GPUs grouped by node (``info.shape`` is
  ``(nodes, GPUs per node)``), each NIC above the GPU its PCIe link reaches, each node's
  NVSwitch below its GPUs, then one row per switch tier (``Cluster.node_tier``), every switch
  above the nodes it serves (``Cluster.link_up``), a tier spread evenly when its switches
  would crowd (rails, leaves, spines, cores; planes side by side);
* anything else: a spring layout of its graph.

Switches a layout does not place (the DCN switches of a multislice) go in a row below.
:func:`draw_topology` draws the links (coloured by link level when there are several,
:func:`~collectives.viz.style.level_colour`), the nodes by role, and, with a Schedule and a
step, every transfer of the step as one arrow per link it crosses, along the routes the
Topology gives (the routes :func:`collectives.time` costs), coloured by chunk. Ranks are
placed on endpoints as :func:`collectives.time` places them (``placement``,
``switch_placement``), so grouped Schedules, collectives on part of a cluster and switch
participants (NVLS, SHARP) are drawn where they run; a switch taking part in the step is
outlined, with "Σ" where it adds what arrives and "1→m" where it multicasts
(:func:`switch_actions`).

Some drawing options change no cost: ``chips`` draws each NVSwitch as the chips it is made
of (:func:`split_switches`; a DGX H100's four, 5 : 4 : 4 : 5 of every GPU's links, from
:mod:`collectives.hardware.nvswitch`), every link to it and every transfer through it
spread over the chips in proportion; ``nodes`` draws a window of a large cluster (some of
its nodes and the switches above them); ``max_fan`` merges the arrows of a crowded link
into one labelled with their count; ``panels_per_row``, ``panel_captions`` and ``radius``
arrange and name the planes of a torus or the slices of a multislice; ``bridge`` draws a
transfer over links left out (a multislice's DCN switches, with ``levels=("ici",)``) as one
dashed arc from its source to its destination. :mod:`collectives.viz.loads` draws link loads
on the same layouts. matplotlib (and, for the spring layout, networkx) are imported inside the
functions. Taught from chapter "Cost models and the ring all-gather" on; the hardware
chapters draw their presets with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np

from ..cost import placement_nodes
from ..errors import CollectivesError
from ..topology import ROLES, Cluster, Topology
from ..validation import flag, integer, number
from .buffers import chunk_colour, shard_size
from .style import PALETTE, font_size, level_colour, smallest_text

__all__ = [
    "Wiring",
    "Chips",
    "MAX_NODES",
    "RANK_LABELS_UP_TO",
    "WRAP_COLOUR",
    "wiring_of",
    "split_switches",
    "points_per_unit",
    "frame_limits",
    "draw_wiring",
    "step_crossings",
    "switch_actions",
    "draw_transfers",
    "draw_topology",
]

#: the most nodes a wiring drawing takes (draw a smaller preset of the same shape)
MAX_NODES = 4000
#: the most nodes the spring layout (topologies with no declared drawing) takes
_MAX_SPRING = 600
#: gap between two panels (planes of a torus, copies of a product), in chip spacings
_PANEL_GAP = 1.5
#: panels per row of panels
_PANELS_PER_ROW = 4
#: length of a wraparound stub, in chip spacings
_STUB = 0.45
#: the most a bridged transfer's arc bulges out of the straight line, in chip spacings
_BRIDGE_BULGE = 0.8


@dataclass(frozen=True)
class Wiring:
    """Where a figure draws a Topology's nodes and how it draws its links.

    ``positions``: (n_nodes, 2) drawing coordinates (NaN: the node is not drawn);
    ``stub``: (n_links, 2), zero for a link drawn as a line, else the vector of the stub a
    wraparound link leaves its source by (it enters its destination from the opposite
    side); ``arc``: per link, True for a link drawn only as an arc, when a transfer crosses
    it (links between the planes of a torus); ``labels``: the text on each endpoint;
    ``rows``: ``(y, name)`` of each named row (tiers of a cluster); ``panels``: ``(x, y,
    text)`` of each panel's caption; ``radius``: an endpoint's radius in drawing units (a
    switch is a square of 1.2 times that half-side, a NIC one of 0.5 times);
    ``curvature``: the bend of the first arrow on a link (more arrows on one link bend
    more); ``hidden``: per link, True for a link left out (a level not shown; None: none);
    ``chips``: switches drawn as the chips they are made of (:func:`split_switches`), one
    :class:`Chips` per such switch; ``max_fan``: the most arrows one link fans out in a
    step, more merge into one arrow with their count (0: no limit); ``bridge``: a transfer
    whose route crosses links the drawing leaves out (``hidden``, or a node not drawn: the
    DCN switches of a multislice drawn with its ICI links only) is drawn as one dashed arc
    from its source to its destination (False: it is left out).
    """

    positions: np.ndarray
    stub: np.ndarray
    arc: np.ndarray
    labels: tuple
    rows: tuple = ()
    panels: tuple = ()
    radius: float = 0.3
    curvature: float = 0.15
    hidden: Optional[np.ndarray] = None
    chips: tuple = ()
    max_fan: int = 0
    bridge: bool = False

    @property
    def width(self) -> float:
        """The horizontal extent of the drawn nodes."""
        x = self.positions[:, 0]
        return float(np.nanmax(x) - np.nanmin(x)) if np.isfinite(x).any() else 0.0

    def chips_of(self, node: int) -> Optional["Chips"]:
        """The :class:`Chips` that draw switch ``node``, or None (drawn as one box)."""
        for split in self.chips:
            if split.switch == node:
                return split
        return None


@dataclass(frozen=True)
class Chips:
    """One switch node of a Topology drawn as the chips it is made of (a DGX H100 node's
    NVSwitch as its four NVSwitch chips): ``switch``, the node; ``positions``, (k, 2) where
    each chip is drawn; ``links``, the links every attached endpoint has to each chip. A
    link of the switch is drawn as one line to each chip, and a transfer over it as one
    arrow through each chip, ``links[j] / sum(links)`` of it through chip ``j``: the drawing
    spreads what the model costs on the one switch, it changes no cost."""

    switch: int
    positions: np.ndarray
    links: tuple

    @property
    def shares(self) -> np.ndarray:
        """The share of every link's bytes each chip carries (the links, normalised)."""
        links = np.asarray(self.links, dtype=float)
        return links / links.sum()


# ---- layouts -----------------------------------------------------------------------------


def _empty(topology, positions, labels=None, **fields):
    labels = tuple(str(r) for r in range(topology.n_ranks)) if labels is None else labels
    return Wiring(
        positions,
        np.zeros((topology.n_links, 2)),
        np.zeros(topology.n_links, bool),
        tuple(labels),
        **fields,
    )


def _circle(n):
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
    return np.stack([np.cos(angle), np.sin(angle)], axis=1)


def _radius(positions):
    """An endpoint's radius: 0.3 drawing units, less where endpoints sit closer than 1."""
    pos = positions[np.isfinite(positions[:, 0])]
    if len(pos) < 2:
        return 0.3
    gaps = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
    gaps[np.diag_indices(len(pos))] = np.inf
    return float(min(0.3, 0.32 * gaps.min()))


def _grid(topology, per_row=_PANELS_PER_ROW):
    """A torus or mesh: the last two axes as a grid, leading axes as planes side by side,
    ``per_row`` planes to a row of planes."""
    shape = tuple(topology.shape)
    n = topology.n_ranks
    coords = np.stack(np.unravel_index(np.arange(n), shape), axis=1)
    rows = shape[-2] if len(shape) >= 2 else 1
    cols = shape[-1]
    lead = shape[:-2]
    n_panels = int(np.prod(lead)) if lead else 1
    panel = np.ravel_multi_index(coords[:, :-2].T, lead) if lead else np.zeros(n, np.int64)
    per_row = min(n_panels, per_row)
    px, py = panel % per_row, panel // per_row
    x = coords[:, -1] + px * (cols + _PANEL_GAP)
    y = (-(coords[:, -2]) if len(shape) >= 2 else np.zeros(n)) - py * (rows + _PANEL_GAP + 0.6)
    pos = np.stack([x, y], axis=1).astype(float)
    # each link's axis and direction, from the coordinates of its two ends
    u, v = topology.link_src, topology.link_dst
    delta = coords[v] - coords[u]
    axis = np.argmax(delta != 0, axis=1)
    step = delta[np.arange(len(u)), axis]
    size = np.asarray(shape)[axis]
    wrapped = (np.abs(step) != 1) & (size > 2)
    unit = np.zeros((len(shape), 2))
    unit[-1] = (1.0, 0.0)
    if len(shape) >= 2:
        unit[-2] = (0.0, -1.0)
    stub = np.zeros((len(u), 2))
    in_plane = axis >= len(shape) - 2
    going = np.where(step > 0, -1.0, 1.0)  # a wrap link runs against its step
    # a wrap between planes leaves diagonally, towards the next plane up and to the right
    direction = np.where(in_plane[:, None], unit[axis], np.array([[0.7, 0.7]]))
    stub[wrapped] = direction[wrapped] * (going[wrapped] * _STUB)[:, None]
    arc = ~in_plane & ~wrapped
    panels = ()
    if lead:
        captions = []
        for p in range(n_panels):
            index = np.unravel_index(p, lead)
            text = ", ".join(f"axis {a} = {i}" for a, i in enumerate(index))
            captions.append(
                (
                    (p % per_row) * (cols + _PANEL_GAP) + (cols - 1) / 2,
                    -(p // per_row) * (rows + _PANEL_GAP + 0.6) + 0.75,
                    text,
                )
            )
        panels = tuple(captions)
    return Wiring(pos, stub, arc, tuple(str(r) for r in range(n)), panels=panels)


def _product(topology, per_row=_PANELS_PER_ROW):
    """Copies of the inner dimensions' drawing, one panel per outer coordinate, ``per_row``
    panels to a row."""
    dims = topology.info.dimensions
    outer = dims[0]
    inner_sizes = [d.n_ranks for d in dims[1:]]
    inner = dims[1] if len(dims) == 2 else None
    if inner is None:  # more than two dimensions: the inner ones as one grid
        inner_layout = _grid_like(inner_sizes)
        inner_pos, inner_stub = inner_layout, {}
    else:
        lay = wiring_of(inner)
        inner_pos = lay.positions[: inner.n_ranks]
        inner_stub = {
            (int(a), int(b)): (lay.stub[i], lay.arc[i])
            for i, (a, b) in enumerate(zip(inner.link_src, inner.link_dst))
            if lay.stub[i].any() or lay.arc[i]
        }
    m = int(np.prod(inner_sizes))
    lo, hi = np.nanmin(inner_pos, axis=0), np.nanmax(inner_pos, axis=0)
    extent = hi - lo
    per_row = min(outer.n_ranks, per_row)
    n = topology.n_ranks
    c0, rest = np.divmod(np.arange(n), m)
    px, py = c0 % per_row, c0 // per_row
    pos = np.full((topology.n_nodes, 2), np.nan)
    pos[:n, 0] = inner_pos[rest, 0] - lo[0] + px * (extent[0] + 1 + _PANEL_GAP)
    pos[:n, 1] = inner_pos[rest, 1] - hi[1] - py * (extent[1] + 1 + _PANEL_GAP + 0.6)
    stub = np.zeros((topology.n_links, 2))
    arc = np.zeros(topology.n_links, bool)
    u, v = topology.link_src, topology.link_dst
    endpoints = (u < n) & (v < n)
    same = endpoints.copy()
    same[endpoints] = c0[u[endpoints]] == c0[v[endpoints]]
    for i in np.flatnonzero(same):  # a link inside one copy: as drawn there
        found = inner_stub.get((int(rest[u[i]]), int(rest[v[i]])))
        if found is not None:
            stub[i], arc[i] = found
    panels = tuple(
        (
            px_ * (extent[0] + 1 + _PANEL_GAP) + extent[0] / 2,
            -py_ * (extent[1] + 1 + _PANEL_GAP + 0.6) + 0.75,
            f"{topology.info.levels[0]} {k}",
        )
        for k, (px_, py_) in enumerate(
            zip(np.arange(outer.n_ranks) % per_row, np.arange(outer.n_ranks) // per_row)
        )
    )
    return Wiring(
        pos,
        stub,
        arc,
        tuple(str(r) for r in range(n)),
        panels=panels,
        radius=_radius(pos[:n]) if n <= 600 else 0.3,
    )


def _grid_like(sizes):
    """Row-major positions of a grid of the given sizes (the last two as rows and columns)."""
    n = int(np.prod(sizes))
    cols = sizes[-1]
    r, c = np.divmod(np.arange(n), cols)
    return np.stack([c, -r], axis=1).astype(float)


_ROW_NAMES = {"leaf": "leaves", "spine": "spines", "core": "cores"}


def _spread(x_centre, lo, hi, span=None, min_gap=0.9):
    """x of a tier's switches: over their children, or spread evenly over [lo, hi] (in
    the order of their children) when that would put two closer than ``min_gap`` or when a
    switch's children (``span``: the width each one's children cover) reach across more
    than half of the drawing (rail leaves, spines)."""
    order = np.argsort(x_centre, kind="stable")
    x = x_centre.copy()
    crowded = len(x) > 1 and np.min(np.diff(x_centre[order])) < min_gap
    wide = span is not None and len(x) > 1 and np.max(span) > 0.5 * (hi - lo)
    if crowded or wide:
        x[order] = np.linspace(lo, hi, len(x)) if hi > lo else lo
    return x


#: extra gap (chip spacings) where a window of a cluster's nodes skips node numbers
_SKIP_GAP = 1.2
#: how much lower a switch's chips are drawn than the switch (room for their links)
_CHIP_DROP = 0.9


def _node_window(topology, nodes):
    """The node numbers a window of a cluster shows, checked (None: all of them)."""
    info = topology.info
    if nodes is None:
        return None
    if info.gpus_per_node is None or info.shape is None:
        raise CollectivesError(
            f"{topology.name} is not a cluster of GPU nodes: nodes= draws a window of a "
            "cluster's nodes (a DGX or SuperPOD preset, cl.topology.cluster)"
        )
    shown = [int(k) for k in np.atleast_1d(np.asarray(nodes)).ravel()]
    n_nodes = info.shape[0]
    if not shown or min(shown) < 0 or max(shown) >= n_nodes or len(set(shown)) != len(shown):
        raise CollectivesError(
            f"nodes must be distinct node numbers 0..{n_nodes - 1} of {topology.name}, got {shown}"
        )
    return shown


#: a whole GPU cluster of at most this many GPUs has its GPUs labelled by their ranks (0 to
#: n - 1) rather than by their index in their node (0 to 7 in each)
RANK_LABELS_UP_TO = 16


def _cluster(topology, nodes=None):
    """A GPU cluster or fabric, tier by tier (module docstring); ``nodes``: draw only those
    nodes' GPUs, NICs and NVSwitches, side by side in the order given (a wider gap and a
    "⋯" where the numbers skip), and the switches above them that they reach."""
    info = topology.info
    levels = tuple(info.levels)
    n, n_nodes = topology.n_ranks, topology.n_nodes
    pos = np.full((n_nodes, 2), np.nan)
    src, dst, level = topology.link_src, topology.link_dst, topology.link_level
    panels = []
    if info.gpus_per_node is not None and info.shape is not None:
        node, local = np.unravel_index(np.arange(n), info.shape)
        g = info.shape[1]
        if nodes is None:
            pos[:n, 0] = node * (g + _PANEL_GAP) + local
        else:
            left, x = {}, 0.0
            for k, number in enumerate(nodes):
                if k and number != nodes[k - 1] + 1:
                    panels.append((x - _PANEL_GAP / 2 + _SKIP_GAP / 2 - 0.5, -0.25, "⋯"))
                    x += _SKIP_GAP
                left[number] = x
                panels.append((x + (g - 1) / 2, -2.2, f"node {number}"))
                x += g + _PANEL_GAP
            start = np.array([left.get(int(k), np.nan) for k in range(info.shape[0])])
            pos[:n, 0] = start[node] + local
        # a small cluster's GPUs by their rank, as the buffers and the alt text name them; a
        # bigger one's (or a window's, under its "node k" captions) by their place in the node
        labels = tuple(
            str(i) for i in (range(n) if nodes is None and n <= RANK_LABELS_UP_TO else local)
        )
    else:  # bare hosts, in cabling order (rails keep rails together)
        pos[:n, 0] = np.argsort(np.argsort(topology.port_position, kind="stable"))
        labels = tuple(str(r) for r in range(n))
    pos[:n, 1] = np.where(np.isfinite(pos[:n, 0]), 0.0, np.nan)
    rows = []

    def linked(name, lower):
        """(lower end, other end) of the links of level ``name`` leaving ``lower``."""
        if name not in levels:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        sel = (level == levels.index(name)) & np.isin(src, lower)
        return src[sel], dst[sel]

    gpus = np.flatnonzero(np.isfinite(pos[:n, 0]))
    s, d = linked("nvlink", gpus)
    for nvswitch in np.unique(d):
        pos[nvswitch] = [pos[s[d == nvswitch], 0].mean(), -1.2]
    if len(d):
        rows.append((-1.2, "NVSwitch"))
    s, d = linked("pcie", gpus)
    pos[d] = np.column_stack([pos[s, 0], np.full(len(s), 0.9)])
    lo, hi = np.nanmin(pos[:n, 0]), np.nanmax(pos[:n, 0])
    tier = topology.node_tier
    up = topology.link_up
    for t in range(1, int(tier.max()) + 1):
        switches = np.flatnonzero(tier == t)
        into = up & np.isin(dst, switches) & np.isfinite(pos[src, 0])
        if nodes is not None:  # a window: only the switches its nodes reach
            switches = switches[np.isin(switches, dst[into])]
            if not switches.size:
                break
        centre, span = np.full(len(switches), (lo + hi) / 2), np.zeros(len(switches))
        for k, w in enumerate(switches):
            below = pos[src[into & (dst == w)], 0]
            if below.size:
                centre[k], span[k] = below.mean(), np.ptp(below)
        y = 0.8 + 1.8 * t
        pos[switches, 0] = _spread(centre, lo, hi, span)
        pos[switches, 1] = y
        names = {levels[k] for k in level[into]}
        name = names.pop() if len(names) == 1 else f"tier {t}"
        rows.append((y, _ROW_NAMES.get(name, name)))
    return Wiring(
        pos,
        np.zeros((topology.n_links, 2)),
        np.zeros(topology.n_links, bool),
        labels,
        rows=tuple(rows),
        panels=tuple(panels),
        radius=0.3,
        curvature=0.08,
    )


def split_switches(topology: Topology, layout: Wiring, links: Sequence[int]) -> Wiring:
    """``layout`` with every NVSwitch of ``topology`` (a switch the GPUs reach over their
    "nvlink" links) drawn as ``len(links)`` chips, every GPU having ``links[j]`` links to
    chip ``j`` (:data:`collectives.hardware.nvswitch.LINKS`: 5, 4, 4, 5 in a DGX H100). The
    chips sit in a row in the switch's place, spread under the GPUs it serves. Drawing
    only: the topology, and so every cost, keeps its one switch. Raises
    :class:`~collectives.CollectivesError` for a topology without NVLink switches or for
    link counts that are not positive integers."""
    try:
        counts = tuple(int(k) for k in links)
    except (TypeError, ValueError):
        raise CollectivesError(f"chips must be link counts per chip, got {links!r}") from None
    if not counts or min(counts) < 1 or any(k != c for k, c in zip(links, counts)):
        raise CollectivesError(f"chips must be positive whole link counts, got {links!r}")
    levels = tuple(topology.info.levels)
    if "nvlink" not in levels:
        raise CollectivesError(
            f"{topology.name} has no NVLink switch to draw as chips (levels: {', '.join(levels)})"
        )
    n = topology.n_ranks
    on = (topology.link_level == levels.index("nvlink")) & (topology.link_src < n)
    switches = np.unique(topology.link_dst[on])
    switches = switches[np.isin(switches, topology.switches)]
    if not switches.size:
        raise CollectivesError(f"{topology.name} has no NVLink switch to draw as chips")
    pos = layout.positions
    k = len(counts)
    splits = []
    for w in switches:
        if not np.isfinite(pos[w, 0]):
            continue
        gpus = topology.link_src[on & (topology.link_dst == w)]
        xs = pos[gpus, 0][np.isfinite(pos[gpus, 0])]
        x0, x1 = (xs.min(), xs.max()) if xs.size else (pos[w, 0], pos[w, 0])
        width = x1 - x0 + 1.0
        chip_x = x0 - 0.5 + (np.arange(k) + 0.5) * width / k
        chip_y = np.full(k, pos[w, 1] - _CHIP_DROP)
        splits.append(Chips(int(w), np.column_stack([chip_x, chip_y]), counts))
    rows = tuple(
        (y - _CHIP_DROP, f"{name} chips") if name == "NVSwitch" else (y, name)
        for y, name in layout.rows
    )
    panels = tuple(
        (x, y - _CHIP_DROP, text) if y < -1.2 else (x, y, text) for x, y, text in layout.panels
    )
    return replace(layout, chips=tuple(splits), rows=rows, panels=panels)


def _spring(topology):
    import networkx as nx

    if topology.n_nodes > _MAX_SPRING:
        raise CollectivesError(
            f"{topology.name} declares no drawing and has {topology.n_nodes} nodes, too many "
            f"for a spring layout (at most {_MAX_SPRING}); draw a smaller one"
        )
    layout = nx.spring_layout(topology.to_networkx().to_undirected(), seed=0)
    pos = np.array([layout[i] for i in range(topology.n_nodes)])
    return _empty(topology, pos, radius=_radius(pos))


def _place_the_rest(topology, lay):
    """Switches no rule placed: in a row below the drawing, each under the mean of the nodes
    it links to."""
    pos = lay.positions.copy()
    missing = np.flatnonzero(np.isnan(pos[:, 0]))
    if not missing.size:
        return lay
    src, dst = topology.link_src, topology.link_dst
    centre = []
    for w in missing:
        near = np.concatenate([dst[src == w], src[dst == w]])
        near = near[np.isfinite(pos[near, 0])]
        centre.append(pos[near, 0].mean() if near.size else np.nanmean(pos[:, 0]))
    lo, hi = np.nanmin(pos[:, 0]), np.nanmax(pos[:, 0])
    pos[missing, 0] = _spread(np.array(centre), lo, hi)
    pos[missing, 1] = np.nanmin(pos[:, 1]) - 1.6
    return replace(lay, positions=pos)


def wiring_of(
    topology: Topology,
    levels: Optional[Sequence[str]] = None,
    *,
    chips=None,
    nodes: Optional[Sequence[int]] = None,
    max_fan: int = 0,
    panels_per_row: Optional[int] = None,
    panel_captions: Optional[Sequence[str]] = None,
    radius: Optional[float] = None,
    bridge: bool = False,
) -> Wiring:
    """Where to draw every node of ``topology`` and how to draw its links (module
    docstring), from its declared info. ``levels``: draw only the links of these levels
    (names of ``info.levels``, e.g. ``("nvlink", "pcie")`` for the inside of a DGX node) and
    the switches and NICs they reach. ``chips``: draw every NVSwitch as its chips
    (:func:`split_switches`): the links per GPU to each chip, or True for the ones
    recorded for the topology's hardware (:func:`collectives.hardware.nvswitch.links`).
    ``nodes``: for a GPU cluster, draw only these nodes (a window: "nodes 0, 1, 2 and 31
    of a scalable unit") and the switches above them that they reach; links to anything
    not drawn are left out, and so are transfers over them. ``max_fan``: the most arrows
    a link fans out in one step; more are drawn as one arrow labelled with their count
    (0, the default: no limit). ``panels_per_row``: the planes of a torus (or the copies
    of a product, the slices of a multislice) drawn side by side before the next row of
    them (default 4; 2 puts the four planes of a 4 x 4 x 4 cube in a square that stays
    legible on a phone); ``panel_captions``: one caption per panel instead of its
    coordinates ("slice 0", ...); ``radius``: an endpoint's radius in chip spacings
    (default 0.3, less where endpoints crowd; smaller leaves more room for arrows);
    ``bridge``: draw a transfer whose route crosses links left out (``levels``) as one
    dashed arc from its source to its destination (:class:`Wiring`). Raises
    :class:`~collectives.CollectivesError` for a topology of more than :data:`MAX_NODES`
    nodes (unless ``nodes`` draws a window of it) or a level it does not have."""
    if not isinstance(topology, Topology):
        raise CollectivesError(
            f"wiring_of() draws a collectives Topology, got {type(topology).__name__}"
        )
    if topology.n_nodes > MAX_NODES and nodes is None:
        raise CollectivesError(
            f"{topology.name} has {topology.n_nodes} nodes, too many to draw (at most "
            f"{MAX_NODES}); draw a window of its nodes (nodes=) or a smaller preset of the "
            "same shape"
        )
    info = topology.info
    n = topology.n_ranks
    per_row = (
        _PANELS_PER_ROW
        if panels_per_row is None
        else integer(panels_per_row, "panels_per_row", minimum=1)
    )
    window = _node_window(topology, nodes)
    if window is not None and not isinstance(topology, Cluster):
        raise CollectivesError(f"nodes= draws a window of a GPU cluster, not of {topology.name}")
    if info.family == "ring" or (
        info.family in ("custom", "graph") and info.shape is None and topology.n_nodes == n
    ):
        lay = _empty(topology, _circle(n), radius=_radius(_circle(n)))
    elif info.family == "chain":
        lay = _empty(topology, np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1))
    elif info.family == "switch":
        pos = np.full((topology.n_nodes, 2), np.nan)
        pos[:n] = _circle(n)
        pos[n] = (0.0, 0.0)
        lay = _empty(topology, pos, radius=_radius(pos[:n]))
    elif info.is_torus:
        lay = _grid(topology, per_row)
    elif info.family == "product" and len(info.dimensions) >= 2:
        lay = _product(topology, per_row)
    elif isinstance(topology, Cluster):
        lay = _cluster(topology, window)
    else:
        lay = _spring(topology)
    if window is None:
        lay = _place_the_rest(topology, lay)
    if levels is not None:
        lay = _only(topology, lay, levels)
    if chips is not None and chips is not False:
        if chips is True:
            from ..hardware import nvswitch

            try:
                chips = nvswitch.links(topology)
            except CollectivesError as error:
                raise CollectivesError(
                    f"chips=True: {error}; give the links per chip instead"
                ) from None
        lay = split_switches(topology, lay, chips)
    if max_fan:
        lay = replace(lay, max_fan=integer(max_fan, "max_fan", minimum=1))
    if panel_captions is not None:
        captions = tuple(str(text) for text in panel_captions)
        if len(captions) != len(lay.panels):
            raise CollectivesError(
                f"panel_captions: {topology.name} is drawn in {len(lay.panels)} panels, got "
                f"{len(captions)} captions"
            )
        lay = replace(lay, panels=tuple((x, y, t) for (x, y, _), t in zip(lay.panels, captions)))
    if radius is not None:
        r = number(radius, "radius", positive=True)
        if r > 0.5:
            raise CollectivesError(f"radius must be at most 0.5 chip spacings, got {r}")
        lay = replace(lay, radius=r)
    if flag(bridge, "bridge"):
        lay = replace(lay, bridge=True)
    return lay


def _only(topology, lay, levels):
    """``lay`` with the links of other levels hidden and the nodes only they reach unplaced."""
    names = tuple(topology.info.levels)
    levels = (levels,) if isinstance(levels, str) else tuple(levels)
    unknown = [name for name in levels if name not in names]
    if unknown:
        raise CollectivesError(
            f"{topology.name} has no link level {unknown[0]!r}; its levels are {', '.join(names)}"
        )
    keep = np.isin(topology.link_level, [names.index(name) for name in levels])
    reached = np.zeros(topology.n_nodes, bool)
    reached[: topology.n_ranks] = True
    reached[topology.link_src[keep]] = True
    reached[topology.link_dst[keep]] = True
    pos = lay.positions.copy()
    pos[~reached] = np.nan
    lowest = np.nanmin(pos[:, 1])
    panels = tuple(  # captions below the drawing follow its lowest row
        (x, max(y, lowest - 1.0) if y < lowest else y, text) for x, y, text in lay.panels
    )
    return replace(
        lay,
        positions=pos,
        panels=panels,
        hidden=~keep,
        rows=tuple(
            (y, name)
            for y, name in lay.rows
            if np.any(np.isclose(pos[np.isfinite(pos[:, 1]), 1], y))
        ),
    )


# ---- drawing -------------------------------------------------------------------------------

#: colour of a wraparound link's stubs (the purple of the TPU figures)
WRAP_COLOUR = PALETTE["purple"]


def frame_limits(lay: Wiring) -> tuple[float, float, float, float]:
    """``(left, right, bottom, top)``: the drawing units a wiring drawing of ``lay`` spans,
    with room for its nodes, their arrows' bends, wraparound stubs, row names and panel
    captions (the axes limits :func:`draw_wiring` sets, before any stretch)."""
    pos = np.concatenate([lay.positions, *(split.positions for split in lay.chips)])
    ok = np.isfinite(pos[:, 0])
    x0, x1 = pos[ok, 0].min(), pos[ok, 0].max()
    y0, y1 = pos[ok, 1].min(), pos[ok, 1].max()
    # captions below the drawing (a window's node numbers) need room too
    y0 = min([y0] + [y - 0.3 for _, y, _ in lay.panels if y < y0])
    # room for a node and its arrows' bends, and for wraparound stubs where there are any
    pad = max(1.7 * lay.radius, _STUB + 0.2 if lay.stub.any() else 0.0) + 0.05
    left = x0 - pad - (2.4 if lay.rows else 0.0)
    top = y1 + pad + (0.6 if lay.panels else 0.0)
    if y1 - y0 < 1e-9:  # one row (a chain): room for arrows
        y0, y1 = y0 - 0.6, y1 + 0.6
    if lay.bridge:  # room for the arcs of bridged transfers
        y0, top = y0 - _BRIDGE_BULGE, top + _BRIDGE_BULGE
    return float(left), float(x1 + pad), float(y0 - pad), float(top)


def _frame(ax, topology, lay):
    """Set the axes limits around the drawing (room for row names and panel captions) and
    its aspect: equal, unless the drawing is much wider than the axes (a cluster of many
    nodes: as soon as it is wider), whose height is then stretched."""
    left, right, bottom, top = frame_limits(lay)
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    w, h = _axes_points(ax)
    # a cluster of several nodes drawn tier by tier stretches as soon as it is wider than
    # its axes
    stretch = 1.3 if lay.rows and lay.width > 12 else 2.5
    wide = (right - left) / (top - bottom) > stretch * w / h
    ax.set_aspect("auto" if wide else "equal")
    if lay.rows:  # the row names need their width in points, not units (a narrow frame
        # or a stretched drawing has fewer points per unit)
        names = row_names_points(lay)
        names = min(names, 0.35 * w)  # past that, the names reach into the figure's margin
        nodes_left = left + 2.4  # where the nodes' margin starts, left of the row names' room
        span = right - nodes_left
        margin = names * span / max(w - names, 1.0)
        if margin > 2.4:
            ax.set_xlim(nodes_left - margin, right)


def row_name(name: str) -> str:
    """A row's name as drawn: one word a line ("NVSwitch chips" on two), so that the names
    take little of a narrow frame's width."""
    return "\n".join(name.split())


def row_names_points(lay: Wiring) -> float:
    """Points of width the row names of ``lay`` take left of its drawing, with their gap."""
    longest = max((len(line) for _, name in lay.rows for line in name.split()), default=0)
    return longest * 0.68 * font_size("label") + 24


def _axes_points(ax):
    """The axes' width and height in points (as laid out now)."""
    box = ax.get_position()
    fw, fh = ax.figure.get_size_inches()
    return box.width * fw * 72, box.height * fh * 72


def points_per_unit(ax) -> float:
    """Points per drawing unit of a wiring drawing's axes (the smaller of the two
    directions), once :func:`draw_wiring` has framed them."""
    w, h = _axes_points(ax)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    # with an equal aspect the box shrinks along the longer side: the smaller scale holds
    return min(w / (x1 - x0), h / (y1 - y0))


def _sizes(ax, topology, lay):
    """(endpoint, switch, NIC) half-sizes in points."""
    r = lay.radius * points_per_unit(ax)
    return r, 1.2 * r, 0.5 * r


def draw_wiring(
    topology: Topology,
    ax=None,
    layout: Optional[Wiring] = None,
    title: Optional[str] = None,
    legend: bool = False,
):
    """The links and nodes of ``topology`` as :func:`wiring_of` places them: links coloured by
    level (when the topology has more than one), parallel cables drawn once, wraparound
    links as purple stubs, endpoints as labelled circles, NICs as small squares, switches as
    squares. ``legend``: a legend of the link levels below the drawing. Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    ax = ax or plt.gca()
    lay = layout or wiring_of(topology)
    pos = lay.positions
    _frame(ax, topology, lay)
    r_end, r_switch, r_nic = _sizes(ax, topology, lay)
    levels = tuple(topology.info.levels)
    several = len(levels) > 1
    width = float(np.clip(r_end / 5, 0.6, 2.0))
    drawn, used = set(), []
    for i, (u, v, lv) in enumerate(
        zip(topology.link_src.tolist(), topology.link_dst.tolist(), topology.link_level.tolist())
    ):
        key = (min(u, v), max(u, v))
        hidden = lay.hidden is not None and lay.hidden[i]
        if key in drawn or lay.arc[i] or hidden or np.isnan(pos[[u, v]]).any():
            continue
        drawn.add(key)
        colour = level_colour(levels[lv], lv) if several else "0.8"
        if lv not in used:
            used.append(lv)
        split = lay.chips_of(u) or lay.chips_of(v)
        if split is not None:  # one line to each chip, as thick as its share of the links
            other = v if split.switch == u else u
            for xy, share in zip(split.positions, split.shares):
                ax.plot(
                    *np.stack([pos[other], xy]).T,
                    color=colour,
                    linewidth=width * share * len(split.links),
                    zorder=1,
                )
        elif lay.stub[i].any():
            for end, sign in ((u, 1.0), (v, -1.0)):
                ax.plot(
                    *np.stack([pos[end], pos[end] + sign * lay.stub[i]]).T,
                    color=WRAP_COLOUR,
                    linewidth=width + 0.6,
                    solid_capstyle="round",
                    zorder=1,
                )
        else:
            ax.plot(*pos[[u, v]].T, color=colour, linewidth=width, zorder=1)
    roles = topology.node_role
    ranks = np.arange(topology.n_ranks)
    ax.scatter(
        *pos[ranks].T,
        s=(2 * r_end) ** 2,
        color="white",
        edgecolor="0.2",
        linewidth=min(1.0, width),
        zorder=3,
    )
    for rank in ranks:
        # a label fits its circle: about 0.6 of its size per character, a digit 0.7 high
        label = lay.labels[rank]
        size = min(font_size("cell"), 1.45 * r_end, 2.8 * r_end / max(len(label), 1))
        if size >= smallest_text() and np.isfinite(pos[rank, 0]):  # else left out
            ax.text(*pos[rank], label, ha="center", va="center", fontsize=size, zorder=4)
    nics = np.flatnonzero(roles == ROLES.index("nic"))
    if nics.size:
        ax.scatter(
            *pos[nics].T,
            s=(2 * r_nic) ** 2,
            marker="s",
            color="0.92",
            edgecolor="0.3",
            linewidth=0.6,
            zorder=3,
        )
    switches = topology.switches
    shown = switches[np.isfinite(pos[switches, 0])]
    shown = shown[~np.isin(shown, [split.switch for split in lay.chips])]
    if shown.size:
        ax.scatter(
            *pos[shown].T,
            s=(2 * r_switch) ** 2,
            marker="s",
            color="0.85",
            edgecolor="0.2",
            linewidth=min(1.0, width),
            zorder=3,
        )
    for split in lay.chips:  # each chip a switch square, labelled with its links per GPU
        ax.scatter(
            *split.positions.T,
            s=(2 * r_switch) ** 2,
            marker="s",
            color="0.85",
            edgecolor="0.2",
            linewidth=min(1.0, width),
            zorder=3,
        )
        size = min(font_size("cell"), 1.3 * r_switch)
        if size >= smallest_text():
            for xy, links in zip(split.positions, split.links):
                ax.text(*xy, str(links), ha="center", va="center", fontsize=size, zorder=4)
    # row names 2.2 radii left of the drawing, and never closer to it than a switch's square
    # and half the action label ("1→32") drawn above a small one
    gap = max(2.2 * lay.radius * points_per_unit(ax), r_switch + 4, 1.5 * font_size("cell"))
    for y, name in lay.rows:
        ax.annotate(
            row_name(name),
            (np.nanmin(pos[:, 0]), y),
            xytext=(-gap, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=font_size("label"),
        )
    for x, y, text in lay.panels:
        ax.text(x, y, text, ha="center", va="bottom", fontsize=font_size("note"))
    if legend:
        handles = [
            Line2D(
                [],
                [],
                color=level_colour(levels[lv], lv) if several else "0.8",
                linewidth=2,
                label=levels[lv],
            )
            for lv in sorted(used)
        ]
        if lay.stub.any():
            handles.append(
                Line2D(
                    [],
                    [],
                    color=WRAP_COLOUR,
                    linewidth=2.6,
                    label="wraparound (to the opposite edge)",
                )
            )
        if lay.arc.any():
            handles.append(
                Line2D(
                    [], [], color="0.4", linewidth=1.2, label="between planes (arcs, where used)"
                )
            )
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=min(len(handles), 3),
            frameon=False,
            fontsize=font_size("small"),
        )
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=font_size("note"))
    return ax


def step_crossings(schedule, topology: Topology, step: int, placement=None, switch_placement=None):
    """Every link crossed in step ``step`` of ``schedule`` placed on ``topology`` (as
    :func:`collectives.time` places it): ``(link, chunk, src_node, dst_node)`` int arrays,
    one row per transfer and link of its route, with the transfer's source chunk and its two
    ends as topology nodes (local copies cross no link and have no row)."""
    nodes = placement_nodes(schedule, topology, placement, switch_placement)
    st = schedule.step(step)
    src, dst = nodes[st.src], nodes[st.dst]
    remote = np.flatnonzero(src != dst)
    pair, link = topology.paths(src[remote], dst[remote])
    chosen = remote[pair]
    return link, st.src_chunk[chosen], src[chosen], dst[chosen]


def switch_actions(
    schedule, topology: Topology, step: int, placement=None, switch_placement=None
) -> dict[int, str]:
    """What each switch participant does in step ``step``, by topology node (switches a
    step only crosses are not participants): "Σ" where it receives transfers that reduce
    (it adds them: NVLS's ``multimem.ld_reduce``, SHARP), "1→m" where it sends one chunk
    to m > 1 nodes (a multicast), "" where it only forwards or stores (placed as
    :func:`collectives.time` places them)."""
    nodes = placement_nodes(schedule, topology, placement, switch_placement)
    st = schedule.step(step)
    src, dst = nodes[st.src], nodes[st.dst]
    actions: dict[int, str] = {}
    for w in np.unique(nodes[schedule.n_ranks :]):
        into, out = dst == w, src == w
        if not (into.any() or out.any()):
            continue
        text = ""
        if (into & st.reduce).any():
            text = "Σ"
        elif out.any():
            fanout = max(
                len(np.unique(dst[out & (st.src_chunk == c)])) for c in np.unique(st.src_chunk[out])
            )
            if fanout > 1:
                text = f"1→{fanout}"
        actions[int(w)] = text
    return actions


def draw_transfers(
    schedule,
    topology: Topology,
    step: int,
    ax,
    layout: Optional[Wiring] = None,
    placement=None,
    switch_placement=None,
):
    """The transfers of step ``step`` as arrows on a :func:`draw_wiring` drawing (draw that
    first, on the same ``ax``): one arrow per link a transfer crosses, coloured by its chunk
    (in an all-gather labelled by shard, one arrow per shard and link); several arrows on
    one link fan out, or, past the layout's ``max_fan``, merge into one dark arrow labelled
    with their count; an arrow on a wraparound link leaves by its stub and arrives by the
    opposite one; links between torus planes are arcs; an arrow into or out of a switch
    drawn as chips (:func:`split_switches`) goes through every chip, as thick as the chip's
    share; with the layout's ``bridge``, a transfer whose route crosses a link the drawing
    leaves out is one dashed arc from its source to its destination. Switches that take
    part in the step (send or receive, :func:`switch_actions`)
    are outlined, with "Σ" inside where they add and "1→m" where they multicast. Returns
    the number of arrows drawn."""
    from matplotlib.patches import FancyArrowPatch

    lay = layout or wiring_of(topology)
    pos = lay.positions
    link, chunk, src_node, dst_node = step_crossings(
        schedule, topology, step, placement, switch_placement
    )
    per_shard = shard_size(schedule)
    n_colours = schedule.n_chunks // per_shard
    r_end, r_switch, r_nic = _sizes(ax, topology, lay)
    role = topology.node_role
    half = np.where(role == 0, r_end, np.where(role == ROLES.index("nic"), r_nic, r_switch))
    head = float(np.clip(1.1 * r_end, 5, 14))
    width = float(np.clip(r_end / 5, 0.8, 2.0))
    keys = np.unique(
        np.stack([link, chunk // per_shard if per_shard > 1 else np.arange(len(link))], axis=1),
        axis=0,
    )
    per_link = np.bincount(keys[:, 0], minlength=topology.n_links)
    bundled = per_link > lay.max_fan if lay.max_fan else np.zeros(topology.n_links, bool)
    seen: dict[int, int] = {}
    drawn: set[tuple[int, int]] = set()
    arrows = 0

    def arrow(start, end, colour, rad, shrink_a, shrink_b, line, alpha=1.0, tip=True):
        ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle="-|>" if tip else "-",
                mutation_scale=head,
                color=colour,
                linewidth=line,
                shrinkA=shrink_a,
                shrinkB=shrink_b,
                connectionstyle=f"arc3,rad={rad}",
                zorder=2,
                alpha=alpha,
            )
        )

    left_out = np.isnan(pos[topology.link_src[link], 0]) | np.isnan(pos[topology.link_dst[link], 0])
    if lay.hidden is not None:
        left_out |= lay.hidden[link]
    bridged = np.zeros(len(link), bool)
    if lay.bridge and left_out.any():  # every hop of a transfer that crosses a link left out
        crossing = {
            (a, b, c) for a, b, c in zip(src_node[left_out], dst_node[left_out], chunk[left_out])
        }
        bridged = np.array([(a, b, c) in crossing for a, b, c in zip(src_node, dst_node, chunk)])
        arrows += _draw_bridges(
            ax,
            lay,
            src_node[bridged],
            dst_node[bridged],
            chunk[bridged] // per_shard,
            n_colours,
            width,
            half[src_node[bridged]],
            half[dst_node[bridged]],
            head,
        )
    for lk, c, last, skip in zip(
        link.tolist(), chunk.tolist(), (topology.link_dst[link] == dst_node), bridged
    ):
        if skip:
            continue
        key = (lk, c // per_shard)
        if bundled[lk]:
            key = (lk, -1)
        if (per_shard > 1 or bundled[lk]) and key in drawn:
            continue
        drawn.add(key)
        k = seen.get(lk, 0)
        seen[lk] = k + 1
        u, v = int(topology.link_src[lk]), int(topology.link_dst[lk])
        if np.isnan(pos[[u, v], 0]).any() or (lay.hidden is not None and lay.hidden[lk]):
            continue  # a link the drawing leaves out
        colour = "0.25" if bundled[lk] else chunk_colour(key[1], n_colours)
        line = width * (1.6 if bundled[lk] else 1.0)
        fan = 1 if bundled[lk] else per_link[lk]
        rad = lay.curvature + min(0.12, 0.5 / fan) * k  # fan out, bounded
        shrink_a, shrink_b = half[u] + 1, half[v] + 1
        split = lay.chips_of(u) or lay.chips_of(v)
        if split is not None:  # through every chip, as thick as its share; a transfer
            # that only passes through the chips gets its head on the way out
            tip = bool(last) or split.switch == u
            for xy, share in zip(split.positions, split.shares):
                start, end = (xy, pos[v]) if split.switch == u else (pos[u], xy)
                thick = line * share * len(split.links)
                arrow(start, end, colour, rad, shrink_a, shrink_b, thick, tip=tip)
                arrows += 1
        elif lay.stub[lk].any():
            # leave by the stub at the source, arrive by the opposite stub at the destination
            offset = np.array([-lay.stub[lk][1], lay.stub[lk][0]]) * 0.25 * k
            ax.plot(
                *np.stack([pos[u] + offset, pos[u] + lay.stub[lk] + offset]).T,
                color=colour,
                linewidth=line,
                zorder=2,
            )
            arrow(pos[v] - lay.stub[lk] + offset, pos[v], colour, 0.0, 0.0, shrink_b, line)
            arrows += 1
        else:
            bend = 0.09 + 0.05 * k if lay.arc[lk] else rad
            arrow(
                pos[u], pos[v], colour, bend, shrink_a, shrink_b, line, 0.8 if lay.arc[lk] else 1.0
            )
            arrows += 1
        if bundled[lk]:  # the count, on the arrow, nearer its endpoint (or its source)
            near, far = (pos[v], pos[u]) if role[v] == 0 and role[u] != 0 else (pos[u], pos[v])
            middle = near + 0.4 * (far - near)
            # on the arc (arc3 bends a point 0.4 of the way by 0.48 rad (dy, -dx)), so that
            # the label of the opposite direction's arrow, bent the other way, is clear of it
            delta = pos[v] - pos[u]
            middle = middle + 0.48 * rad * np.array([delta[1], -delta[0]])
            if role[u] == 0 and role[v] == 0:  # chip to chip: halfway, on the arc's side
                side = np.array([delta[1], -delta[0]]) / max(float(np.hypot(*delta)), 1e-9)
                middle = (pos[u] + pos[v]) / 2 + 0.22 * np.sign(rad) * side
            if split is not None:  # just below (or above) the endpoint its arrows fan from
                middle = near + np.array([0.0, 0.62 * np.sign(far[1] - near[1])])
            count = ax.text(
                *middle,
                f"×{per_link[lk]}",
                ha="center",
                va="center",
                fontsize=font_size("tiny"),
                color="0.1",
                zorder=5,
                bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none"},
            )
            _keep_if_clear(ax, count)
    actions = switch_actions(schedule, topology, step, placement, switch_placement)
    for w, text in actions.items():
        split = lay.chips_of(w)
        where = split.positions if split is not None else pos[[w]]
        if not np.isfinite(where[:, 0]).all():
            continue
        ax.scatter(  # above the wiring's own labels (a chip's link count)
            *where.T,
            s=(2 * r_switch) ** 2,
            marker="s",
            facecolor="0.85",
            edgecolor="black",
            linewidth=2.4,
            zorder=4.2,
        )
        size = min(font_size("cell"), 1.3 * r_switch, 2.6 * r_switch / max(len(text), 1))
        for xy in where if text else ():
            if size >= max(7, smallest_text()) and split is None:  # inside the square
                ax.text(*xy, text, ha="center", va="center", fontsize=size, zorder=4.4)
            else:  # too small a square, or a chip labelled with its links: beside it, below
                # a chip (the bottom row of a node), above any other switch
                below = split is not None
                label = ax.annotate(
                    text,
                    xy,
                    xytext=(0, -(r_switch + 2) if below else r_switch + 1),
                    textcoords="offset points",
                    ha="center",
                    va="top" if below else "bottom",
                    fontsize=smallest_text(),
                    zorder=4.4,
                )
                _inside_figure(ax, label)
    return arrows


def _renderer(ax):
    """A renderer to measure texts with, the axes' aspect applied (None when the figure's
    canvas has none: a figure an animation draws after closing it)."""
    get = getattr(ax.figure.canvas, "get_renderer", None)
    if get is None:
        return None
    ax.apply_aspect()
    return get()


def _inside_figure(ax, label) -> None:
    """Shift ``label`` (an annotation placed in offset points) sideways, just enough that it
    does not run past the figure's side."""
    renderer = _renderer(ax)
    if renderer is None:
        return
    box, edge = label.get_window_extent(renderer), ax.figure.bbox
    points = 72 / ax.figure.dpi
    x, y = label.xyann
    if box.x1 > edge.x1 - 1:
        label.xyann = (x - (box.x1 - edge.x1 + 2) * points, y)
    elif box.x0 < edge.x0 + 1:
        label.xyann = (x + (edge.x0 - box.x0 + 2) * points, y)


def _keep_if_clear(ax, text) -> bool:
    """Keep ``text`` (just added to ``ax``) only if it overlaps no other text of ``ax``, as
    laid out now; else remove it (a crowded drawing labels the first of its bundles; the
    frame's description lists the step's transfers). Returns whether it was kept."""
    renderer = _renderer(ax)
    if renderer is None:
        return True
    box = text.get_window_extent(renderer)
    for other in ax.texts:
        if other is not text and other.get_text().strip():
            if box.overlaps(other.get_window_extent(renderer)):
                text.remove()
                return False
    return True


def _draw_bridges(ax, lay, src, dst, shard, n_colours, width, half_src, half_dst, head):
    """One dashed arc per (source, destination, shard) of the bridged transfers (their route
    crosses links the drawing leaves out), bending more where several join one pair.
    Returns the number of arcs drawn."""
    from matplotlib.patches import FancyArrowPatch

    pos = lay.positions
    done: set[tuple[int, int, int]] = set()
    per_pair: dict[tuple[int, int], int] = {}
    for a, b, c, ha, hb in zip(src.tolist(), dst.tolist(), shard.tolist(), half_src, half_dst):
        if (a, b, c) in done or not np.isfinite(pos[[a, b], 0]).all():
            continue
        done.add((a, b, c))
        k = per_pair.get((a, b), 0)
        per_pair[a, b] = k + 1
        # a long arc bends less: it bulges at most _BRIDGE_BULGE drawing units
        span = float(np.hypot(*(pos[b] - pos[a])))
        rad = (0.3 + 0.06 * k) * min(1.0, _BRIDGE_BULGE / (0.3 * max(span, 1e-9)))
        ax.add_patch(
            FancyArrowPatch(
                pos[a],
                pos[b],
                arrowstyle="-|>",
                mutation_scale=head,
                color=chunk_colour(c, n_colours),
                linewidth=width,
                linestyle=(0, (3, 1.5)),
                shrinkA=ha + 1,
                shrinkB=hb + 1,
                connectionstyle=f"arc3,rad={rad}",
                zorder=2,
            )
        )
    return len(done)


def draw_topology(
    topology: Topology,
    step: Optional[int] = None,
    schedule=None,
    ax=None,
    title: Optional[str] = None,
    *,
    placement=None,
    switch_placement=None,
    layout: Optional[Wiring] = None,
    legend: bool = False,
    levels: Optional[Sequence[str]] = None,
    chips=None,
    nodes: Optional[Sequence[int]] = None,
):
    """The topology's nodes and links (:func:`draw_wiring`; ``levels``, ``chips`` and
    ``nodes`` as in :func:`wiring_of`, or a ``layout`` from it); with ``schedule`` and
    ``step``, that step's transfers as arrows along their routes, coloured by chunk
    (:func:`draw_transfers`), the ranks placed by ``placement`` / ``switch_placement`` as
    in :func:`collectives.time`. Any Topology: a ring, a torus as planes, a DGX node, a
    SuperPOD's rails, leaves and spines, a layered fabric. Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    lay = layout or wiring_of(topology, levels, chips=chips, nodes=nodes)
    draw_wiring(topology, ax=ax, layout=lay, title=title, legend=legend)
    if schedule is not None and step is not None:
        draw_transfers(
            schedule,
            topology,
            step,
            ax,
            layout=lay,
            placement=placement,
            switch_placement=switch_placement,
        )
    return ax
