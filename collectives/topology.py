"""Topologies: endpoints, optional switches, directed links, and a routing rule.

A :class:`Topology` is a set of directed links, each with a bandwidth (bytes/s in its one
direction) and a latency (seconds), between nodes numbered ``0..n_ranks-1`` (endpoints:
chips or GPUs) then ``n_ranks..n_ranks+n_switches-1`` (switches). Its router maps
(src, dst) rank pairs to the links their data crosses, vectorised over pairs.

Builders: :func:`ring`, :func:`chain`, :func:`torus` (N-D, per-axis wraparound,
dimension-order routing) and :func:`switch` (one non-blocking crossbar). Modelled: link
bandwidth and latency, shared links. Left out: switch buffering and arbitration, routing
adaptivity, per-chip injection limits beyond its links. Taught in chapter "Cost models and
the ring all-gather".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .errors import TopologyError
from .validation import int_array, integer, number, per_axis_flags

if TYPE_CHECKING:
    import networkx as nx

    from .hardware import System

__all__ = ["Topology", "TopologyInfo", "ROLES", "ring", "chain", "torus", "switch", "product",
           "cluster"]


@dataclass(frozen=True)
class TopologyInfo:
    """What code may dispatch on, declared when a Topology is built (never added later).

    ``family``: how it is wired ("ring", "chain", "torus", "switch", "product", "cluster",
    "fat_tree", "clos", "custom"); ``shape`` and ``wraparound``: per-axis sizes and wrap
    flags of a torus-like wiring (``None`` otherwise); ``levels``: the names of the link
    levels, indexed by ``Topology.link_level`` (e.g. ``("nvlink", "pcie", "leaf", "spine")``);
    ``system``: the hardware record a preset was built from (``None`` for a bare builder);
    ``sources``: where the numbers come from.
    """

    family: str = "custom"
    shape: Optional[tuple[int, ...]] = None
    wraparound: Optional[tuple[bool, ...]] = None
    levels: tuple[str, ...] = ("link",)
    system: Any = None
    sources: tuple[str, ...] = ()

    @property
    def is_torus(self) -> bool:
        """Whether torus algorithms (per-axis rings and chains over ``shape``, with
        ``wraparound``) fit this wiring: a torus or mesh of endpoints."""
        return self.family == "torus" and self.shape is not None

    @property
    def drawing(self) -> str:
        """How a figure lays the endpoints out: "circle" (a ring), "line" (a chain), "grid"
        (a torus of at most 2 axes), "star" (one switch) or "graph" (anything else)."""
        if self.family == "ring":
            return "circle"
        if self.family == "chain":
            return "line"
        if self.is_torus and len(self.shape) <= 2:
            return "grid"
        if self.family == "switch":
            return "star"
        return "graph"


#: roles a node can play; ``Topology.node_role`` holds indices into this tuple
ROLES = ("endpoint", "nic", "switch")


class Topology:
    """Directed links with bandwidth (bytes/s per direction) and latency (s), plus a router.

    Nodes ``0..n_ranks-1`` are endpoints (chips, GPUs: the ranks a Schedule runs on); the
    nodes after them are NICs and switches (``node_role``). ``router(src, dst)`` takes
    equal-length int arrays of distinct node pairs and returns ``(pair, link)``: for every
    link crossed, the index of the pair crossing it, grouped by pair in path order. Routers
    of topologies with switches also route between an endpoint and a switch (in-network
    reduction). ``info`` (:class:`TopologyInfo`) declares the shape, levels and hardware
    record; a Topology cannot be changed once built.
    """

    n_ranks: int
    link_src: np.ndarray
    link_dst: np.ndarray
    link_bandwidth: np.ndarray
    link_latency: np.ndarray
    node_role: np.ndarray
    name: str
    info: TopologyInfo
    _link_level: np.ndarray
    _router: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

    def __init__(self, n_ranks: int, link_src: ArrayLike, link_dst: ArrayLike,
                 link_bandwidth: ArrayLike, link_latency: ArrayLike,
                 router: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                 *, n_switches: int = 0, node_role: Optional[ArrayLike] = None,
                 link_level: Optional[ArrayLike] = None,
                 info: Optional[TopologyInfo] = None, name: str = "topology",
                 kind: Optional[str] = None, shape: Optional[Sequence[int]] = None,
                 wraparound: Optional[Sequence[bool]] = None) -> None:
        n_ranks = integer(n_ranks, "n_ranks", minimum=1, error=TopologyError)
        link_src = _readonly(np.asarray(link_src, dtype=np.int64))
        link_dst = _readonly(np.asarray(link_dst, dtype=np.int64))
        n_links = len(link_src)
        if len(link_dst) != n_links:
            raise TopologyError("link_src and link_dst differ in length")
        if node_role is None:
            n_switches = integer(n_switches, "n_switches", minimum=0, error=TopologyError)
            node_role = np.concatenate([np.zeros(n_ranks, np.int8),
                                        np.full(n_switches, ROLES.index("switch"), np.int8)])
        node_role = int_array(node_role, "node_role", ndim=1, minimum=0,
                              maximum=len(ROLES) - 1, error=TopologyError).astype(np.int8)
        if len(node_role) < n_ranks or np.any(node_role[:n_ranks] != 0) \
                or np.any(node_role[n_ranks:] == 0):
            raise TopologyError("node_role must list the n_ranks endpoints first, then only "
                                "NICs and switches")
        n_nodes = len(node_role)
        for ends in (link_src, link_dst):
            if n_links and (ends.min() < 0 or ends.max() >= n_nodes):
                raise TopologyError(f"a link end is not a node (0..{n_nodes - 1})")
        if info is None:
            info = TopologyInfo(family=kind or "custom",
                                shape=None if shape is None else tuple(shape),
                                wraparound=None if wraparound is None else tuple(wraparound))
        if link_level is None:
            link_level = np.zeros(n_links, np.int64)
        link_level = int_array(link_level, "link_level", shape=(n_links,), minimum=0,
                               maximum=len(info.levels) - 1, error=TopologyError)
        fields: dict[str, Any] = {
            "n_ranks": n_ranks, "link_src": link_src, "link_dst": link_dst,
            "link_bandwidth": _readonly(np.broadcast_to(
                np.asarray(link_bandwidth, dtype=float), (n_links,)).copy()),
            "link_latency": _readonly(np.broadcast_to(
                np.asarray(link_latency, dtype=float), (n_links,)).copy()),
            "node_role": _readonly(node_role), "_link_level": _readonly(link_level),
            "_router": router, "name": str(name), "info": info,
        }
        if np.any(fields["link_bandwidth"] <= 0) or not np.all(np.isfinite(
                fields["link_bandwidth"])):
            raise TopologyError("every link_bandwidth must be finite and > 0 (bytes/s)")
        if np.any(fields["link_latency"] < 0) or not np.all(np.isfinite(fields["link_latency"])):
            raise TopologyError("every link_latency must be finite and >= 0 (seconds)")
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        if key.startswith("_"):                     # subclasses' own private state
            object.__setattr__(self, key, value)
            return
        raise TopologyError(
            f"a Topology cannot be changed once built (tried to set {key!r}); build a new one")

    def with_info(self, *, name: Optional[str] = None, **info_fields: Any) -> "Topology":
        """The same wiring under a new name and/or with ``info`` fields replaced (a preset
        names its hardware record this way); the links and router are shared, not copied."""
        import dataclasses

        other = object.__new__(type(self))
        for key, value in vars(self).items():
            object.__setattr__(other, key, value)
        object.__setattr__(other, "name", self.name if name is None else str(name))
        object.__setattr__(other, "info", dataclasses.replace(self.info, **info_fields))
        return other

    # ---- declared metadata -------------------------------------------------------------
    @property
    def kind(self) -> str:
        """The wiring family (``info.family``)."""
        return self.info.family

    @property
    def shape(self) -> Optional[tuple[int, ...]]:
        return self.info.shape

    @property
    def wraparound(self) -> Optional[tuple[bool, ...]]:
        return self.info.wraparound

    @property
    def system(self) -> Optional[System]:
        """The hardware record of a preset (``info.system``), or None."""
        return self.info.system

    @property
    def link_level(self) -> np.ndarray:
        """Per link: its level, an index into ``info.levels``."""
        return self._link_level

    # ---- counts ------------------------------------------------------------------------
    @property
    def n_links(self) -> int:
        """Number of directed links."""
        return len(self.link_src)

    @property
    def n_nodes(self) -> int:
        return len(self.node_role)

    @property
    def n_switches(self) -> int:
        """Switch nodes (NICs are counted apart, in ``n_nics``)."""
        return int(np.count_nonzero(self.node_role == ROLES.index("switch")))

    @property
    def n_nics(self) -> int:
        return int(np.count_nonzero(self.node_role == ROLES.index("nic")))

    @property
    def switches(self) -> np.ndarray:
        """Node ids of the switches, in order."""
        return np.flatnonzero(self.node_role == ROLES.index("switch"))

    # ---- routing -----------------------------------------------------------------------
    def paths(self, src: ArrayLike, dst: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays.

        ``src`` and ``dst`` are endpoints, or switches where the router reaches them.
        """
        src = int_array(src, "src", error=TopologyError).ravel()
        dst = int_array(dst, "dst", error=TopologyError).ravel()
        if len(src) != len(dst):
            raise TopologyError(f"src has {len(src)} ranks but dst has {len(dst)}")
        switch = ROLES.index("switch")
        for what, v in (("src", src), ("dst", dst)):
            if not v.size:
                continue
            bad = (v < 0) | (v >= self.n_nodes)
            bad[~bad] = (self.node_role[v[~bad]] != 0) & (self.node_role[v[~bad]] != switch)
            if bad.any():
                b = int(v[bad][0])
                raise TopologyError(
                    f"{what} {b} is not an endpoint (0..{self.n_ranks - 1}) or a switch of "
                    f"{self.name}")
        if np.any(src == dst):
            raise TopologyError("paths() takes pairs of distinct nodes")
        if src.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        if (np.any(src >= self.n_ranks) or np.any(dst >= self.n_ranks)) \
                and not getattr(self._router, "reaches_switches", False):
            raise TopologyError(
                f"{self.name} does not route to or from its switches; only endpoints can "
                "exchange data on it")
        return self._router(src, dst)

    def route(self, src: int, dst: int) -> list[int]:
        """The links from ``src`` to ``dst``, in order, as a list of link ids."""
        if src == dst:
            return []
        _, links = self.paths([src], [dst])
        return links.tolist()

    def path_latency(self, src: ArrayLike, dst: ArrayLike) -> np.ndarray:
        """Seconds of latency along each (src, dst) pair's path (0 where src == dst)."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        out = np.zeros(len(src))
        remote = np.flatnonzero(src != dst)
        pair, link = self.paths(src[remote], dst[remote])
        out[remote] = np.bincount(pair, weights=self.link_latency[link], minlength=len(remote))
        return out

    def to_networkx(self) -> nx.MultiDiGraph:
        """A ``networkx.MultiDiGraph`` with ``bandwidth``, ``latency`` and ``level`` on each
        edge and ``role`` on each node."""
        import networkx as nx

        g = nx.MultiDiGraph(name=self.name)
        for node, role in enumerate(self.node_role.tolist()):
            g.add_node(node, kind=ROLES[role])
        for i, (u, v) in enumerate(zip(self.link_src.tolist(), self.link_dst.tolist())):
            g.add_edge(u, v, key=i, bandwidth=float(self.link_bandwidth[i]),
                       latency=float(self.link_latency[i]),
                       level=self.info.levels[int(self._link_level[i])])
        return g

    def __repr__(self):
        extra = f", shape={self.shape}" if self.shape else ""
        nics = f", n_nics={self.n_nics}" if self.n_nics else ""
        return (f"Topology({self.name!r}, n_ranks={self.n_ranks}, n_switches={self.n_switches}"
                f"{nics}, n_links={self.n_links}{extra})")


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _link_params(link_bandwidth, hop_latency):
    return (number(link_bandwidth, "link_bandwidth", positive=True,
                   unit="bytes/s per direction", error=TopologyError),
            number(hop_latency, "hop_latency", unit="seconds", error=TopologyError))


# ---- tori, rings, chains ------------------------------------------------------------------

class _TorusRouter:
    """Dimension-order routing on a torus/mesh: axis 0 first, shortest way round each axis.

    Ties (exactly half-way round) go in the + direction. Unidirectional tori only have
    + links and always go forward.
    """

    def __init__(self, shape, wrap, bidirectional, link_table):
        self.shape = np.array(shape, dtype=np.int64)
        self.strides = np.array([math.prod(shape[a + 1:]) for a in range(len(shape))],
                                dtype=np.int64)
        self.wrap = np.array(wrap, dtype=bool)
        self.bidirectional = bidirectional
        self.link_table = link_table          # (node, axis, direction 0:+ 1:-) -> link or -1

    def __call__(self, src, dst):
        n_pairs = len(src)
        src_c = (src[:, None] // self.strides) % self.shape
        dst_c = (dst[:, None] // self.strides) % self.shape
        node = src.copy()
        pairs, links = [], []
        for a, size in enumerate(self.shape.tolist()):
            forward = (dst_c[:, a] - src_c[:, a]) % size
            if not self.bidirectional:
                hops, direction = forward, np.zeros(n_pairs, dtype=np.int64)
            elif self.wrap[a]:
                back = size - forward
                direction = (back < forward).astype(np.int64)
                hops = np.where(direction == 1, back, forward)
            else:
                diff = dst_c[:, a] - src_c[:, a]
                direction = (diff < 0).astype(np.int64)
                hops = np.abs(diff)
            sign = 1 - 2 * direction
            total = int(hops.sum())
            if total:
                pair = np.repeat(np.arange(n_pairs), hops)
                start = np.cumsum(hops) - hops
                t = np.arange(total) - np.repeat(start, hops)
                coord = (src_c[pair, a] + sign[pair] * t) % size
                at = node[pair] + (coord - src_c[pair, a]) * self.strides[a]
                pairs.append(pair)
                links.append(self.link_table[at, a, direction[pair]])
            node = node + (dst_c[:, a] - src_c[:, a]) * self.strides[a]
        pair = np.concatenate(pairs)
        link = np.concatenate(links)
        order = np.argsort(pair, kind="stable")
        if np.any(link < 0):
            raise TopologyError("routing used a link that does not exist (internal error)")
        return pair[order], link[order]


def _torus(shape, link_bandwidth, hop_latency, wrap, bidirectional, name, kind):
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    shape = tuple(shape)
    n = math.prod(shape)
    ndim = len(shape)
    strides = [math.prod(shape[a + 1:]) for a in range(ndim)]
    # a 2-long bidirectional axis already has both links between its two chips
    wrap = tuple(w and size > 1 and (size > 2 or not bidirectional) for w, size in zip(wrap, shape))
    coords = np.stack(np.unravel_index(np.arange(n), shape), axis=1) if n else np.zeros((0, ndim))
    table = np.full((n, ndim, 2), -1, dtype=np.int64)
    srcs, dsts = [], []
    n_links = 0
    for a, size in enumerate(shape):
        for direction, step in ((0, 1), (1, -1)):
            if direction == 1 and not bidirectional:
                continue
            nxt = coords[:, a] + step
            ok = (nxt >= 0) & (nxt < size) if not wrap[a] else np.full(n, size > 1)
            nodes = np.flatnonzero(ok)
            neighbour = nodes + ((nxt[nodes] % size) - coords[nodes, a]) * strides[a]
            table[nodes, a, direction] = n_links + np.arange(len(nodes))
            n_links += len(nodes)
            srcs.append(nodes)
            dsts.append(neighbour)
    link_src = np.concatenate(srcs) if srcs else np.zeros(0, np.int64)
    link_dst = np.concatenate(dsts) if dsts else np.zeros(0, np.int64)
    router = _TorusRouter(shape, wrap, bidirectional, table)
    return Topology(n, link_src, link_dst, bandwidth, latency, router, name=name,
                    info=TopologyInfo(family=kind, shape=shape, wraparound=wrap))


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TopologyError(f"shape must be a tuple of axis sizes, got {shape!r}") from None
    if not shape or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1
                        for s in shape):
        raise TopologyError(f"shape must be a non-empty tuple of positive integers, got {shape!r}")
    return tuple(int(s) for s in shape)


def ring(n: int, link_bandwidth: float, hop_latency: float = 0.0,
         bidirectional: bool = True) -> Topology:
    """``n`` endpoints in a ring: links to both neighbours, or only to the next one.

    ``link_bandwidth`` is bytes/s per link per direction; ``hop_latency`` seconds per link.
    Routing takes the shorter way round (the forward way if unidirectional).
    """
    n = integer(n, "n", minimum=1, error=TopologyError)
    kind = "ring" if bidirectional else "unidirectional ring"
    return _torus((n,), link_bandwidth, hop_latency, (True,), bool(bidirectional),
                  f"{kind} of {n}", "ring")


def chain(n: int, link_bandwidth: float, hop_latency: float = 0.0) -> Topology:
    """``n`` endpoints in a line (a ring without its wraparound link), links both ways.

    ``link_bandwidth`` is bytes/s per link per direction; ``hop_latency`` seconds per link.
    """
    n = integer(n, "n", minimum=1, error=TopologyError)
    return _torus((n,), link_bandwidth, hop_latency, (False,), True, f"chain of {n}", "chain")


def torus(shape: int | Sequence[int], link_bandwidth: float, hop_latency: float = 0.0,
          wraparound: bool | Sequence[bool] = True) -> Topology:
    """An N-D torus (or mesh) of ``prod(shape)`` endpoints, ranks numbered row-major.

    Each endpoint links to its two neighbours along every axis (``link_bandwidth`` bytes/s
    per direction; ``hop_latency`` seconds per link).
    ``wraparound``: one bool, or one per axis; an axis without it is a chain. Routing is
    dimension-order (axis 0 first), the shorter way round each wrapped axis.
    """
    shape = _shape_arg(shape)
    wrap = per_axis_flags(wraparound, len(shape), error=TopologyError)
    label = "x".join(map(str, shape))
    return _torus(shape, link_bandwidth, hop_latency, wrap, True, f"torus {label}", "torus")


class _SwitchRouter:
    """Every path is the up-link of the source, then the down-link of the destination; a
    path to (from) the switch itself is the up-link (down-link) alone."""

    reaches_switches = True

    def __init__(self, n):
        self.n = n

    def __call__(self, src, dst):
        up, down = src < self.n, dst < self.n
        hops = up.astype(np.int64) + down
        pair = np.repeat(np.arange(len(src)), hops)
        both = np.stack([np.where(up, src, -1), np.where(down, self.n + dst, -1)], axis=1)
        link = both.ravel()
        return pair, link[link >= 0]


def switch(n: int, link_bandwidth: float, hop_latency: float = 0.0) -> Topology:
    """``n`` endpoints on one non-blocking switch (a crossbar, as an NVSwitch node).

    Each endpoint has an up-link to the switch and a down-link from it, each
    ``link_bandwidth`` bytes/s; ``hop_latency`` is seconds per link, and a path crosses two
    links so costs ``2 * hop_latency``.
    Modelled: per-endpoint injection and ejection bandwidth. Left out: in-switch reduction
    (see the in-network algorithms), switch-internal contention.
    """
    n = integer(n, "n", minimum=1, error=TopologyError)
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    ranks = np.arange(n)
    link_src = np.concatenate([ranks, np.full(n, n)])
    link_dst = np.concatenate([np.full(n, n), ranks])
    return Topology(n, link_src, link_dst, bandwidth, latency, _SwitchRouter(n), n_switches=1,
                    name=f"switch of {n}", info=TopologyInfo(family="switch"))


# composed topologies build on this module; they are offered here too
from .composed import cluster, product  # noqa: E402
