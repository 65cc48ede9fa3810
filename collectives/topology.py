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

import math

import numpy as np

from .errors import TopologyError

__all__ = ["Topology", "ring", "chain", "torus", "switch"]


class Topology:
    """Directed links with bandwidth (bytes/s per direction) and latency (s), plus a router.

    ``router(src, dst)`` takes equal-length int arrays of distinct endpoint pairs and returns
    ``(pair, link)``: for every link crossed, the index of the pair crossing it, grouped by
    pair in path order.
    """

    def __init__(self, n_ranks, link_src, link_dst, link_bandwidth, link_latency, router, *,
                 n_switches=0, name="topology", kind="custom", shape=None, wraparound=None):
        self.n_ranks = _count(n_ranks, "n_ranks", 1)
        self.n_switches = _count(n_switches, "n_switches", 0)
        self.link_src = _readonly(np.asarray(link_src, dtype=np.int64))
        self.link_dst = _readonly(np.asarray(link_dst, dtype=np.int64))
        n_links = len(self.link_src)
        self.link_bandwidth = _readonly(np.broadcast_to(
            np.asarray(link_bandwidth, dtype=float), (n_links,)).copy())
        self.link_latency = _readonly(np.broadcast_to(
            np.asarray(link_latency, dtype=float), (n_links,)).copy())
        if len(self.link_dst) != n_links:
            raise TopologyError("link_src and link_dst differ in length")
        n_nodes = self.n_ranks + self.n_switches
        for ends in (self.link_src, self.link_dst):
            if n_links and (ends.min() < 0 or ends.max() >= n_nodes):
                raise TopologyError(f"a link end is not a node (0..{n_nodes - 1})")
        self._router = router
        self.name, self.kind = name, kind
        self.shape = None if shape is None else tuple(shape)
        self.wraparound = None if wraparound is None else tuple(wraparound)

    @property
    def n_links(self):
        """Number of directed links."""
        return len(self.link_src)

    @property
    def n_nodes(self):
        return self.n_ranks + self.n_switches

    def paths(self, src, dst):
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        if len(src) != len(dst):
            raise TopologyError(f"src has {len(src)} ranks but dst has {len(dst)}")
        for what, v in (("src", src), ("dst", dst)):
            if v.size and (v.min() < 0 or v.max() >= self.n_ranks):
                bad = int(v[(v < 0) | (v >= self.n_ranks)][0])
                raise TopologyError(
                    f"{what} rank {bad} is not an endpoint of {self.name} (0..{self.n_ranks - 1})")
        if np.any(src == dst):
            raise TopologyError("paths() takes pairs of distinct ranks")
        if src.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        return self._router(src, dst)

    def route(self, src, dst):
        """The links from ``src`` to ``dst``, in order, as a list of link ids."""
        if src == dst:
            return []
        _, links = self.paths([src], [dst])
        return links.tolist()

    def path_latency(self, src, dst):
        """Seconds of latency along each (src, dst) pair's path (0 where src == dst)."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        out = np.zeros(len(src))
        remote = np.flatnonzero(src != dst)
        pair, link = self.paths(src[remote], dst[remote])
        out[remote] = np.bincount(pair, weights=self.link_latency[link], minlength=len(remote))
        return out

    def to_networkx(self):
        """A ``networkx.MultiDiGraph`` with ``bandwidth`` and ``latency`` on each edge."""
        import networkx as nx

        g = nx.MultiDiGraph(name=self.name)
        g.add_nodes_from(range(self.n_ranks), kind="endpoint")
        g.add_nodes_from(range(self.n_ranks, self.n_nodes), kind="switch")
        for i, (u, v) in enumerate(zip(self.link_src.tolist(), self.link_dst.tolist())):
            g.add_edge(u, v, key=i, bandwidth=float(self.link_bandwidth[i]),
                       latency=float(self.link_latency[i]))
        return g

    def __repr__(self):
        extra = f", shape={self.shape}" if self.shape else ""
        return (f"Topology({self.name!r}, n_ranks={self.n_ranks}, n_switches={self.n_switches}, "
                f"n_links={self.n_links}{extra})")


def _readonly(a):
    a.flags.writeable = False
    return a


def _count(value, what, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TopologyError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise TopologyError(f"{what} must be >= {minimum}, got {value}")
    return int(value)


def _check_link_params(link_bandwidth, hop_latency):
    for what, v, positive in (("link_bandwidth", link_bandwidth, True),
                              ("hop_latency", hop_latency, False)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TopologyError(f"{what} must be a number, got {v!r}")
        if not math.isfinite(v) or v < 0 or (positive and v == 0):
            need = "> 0" if positive else ">= 0"
            unit = "bytes/s per direction" if positive else "seconds"
            raise TopologyError(f"{what} must be finite and {need} ({unit}), got {v!r}")
    return float(link_bandwidth), float(hop_latency)


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
    bandwidth, latency = _check_link_params(link_bandwidth, hop_latency)
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
    return Topology(n, link_src, link_dst, bandwidth, latency, router, name=name, kind=kind,
                    shape=shape, wraparound=wrap)


def _shape_arg(shape):
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


def ring(n, link_bandwidth, hop_latency=0.0, bidirectional=True):
    """``n`` endpoints in a ring: links to both neighbours, or only to the next one.

    ``link_bandwidth`` is bytes/s per link per direction; ``hop_latency`` seconds per link.
    Routing takes the shorter way round (the forward way if unidirectional).
    """
    n = _count(n, "n", 1)
    kind = "ring" if bidirectional else "unidirectional ring"
    return _torus((n,), link_bandwidth, hop_latency, (True,), bool(bidirectional),
                  f"{kind} of {n}", "ring")


def chain(n, link_bandwidth, hop_latency=0.0):
    """``n`` endpoints in a line (a ring without its wraparound link), links both ways."""
    n = _count(n, "n", 1)
    return _torus((n,), link_bandwidth, hop_latency, (False,), True, f"chain of {n}", "chain")


def torus(shape, link_bandwidth, hop_latency=0.0, wraparound=True):
    """An N-D torus (or mesh) of ``prod(shape)`` endpoints, ranks numbered row-major.

    Each endpoint links to its two neighbours along every axis (bytes/s per direction).
    ``wraparound``: one bool, or one per axis; an axis without it is a chain. Routing is
    dimension-order (axis 0 first), the shorter way round each wrapped axis.
    """
    shape = _shape_arg(shape)
    if isinstance(wraparound, (bool, np.bool_)):
        wrap = (bool(wraparound),) * len(shape)
    else:
        try:
            wrap = tuple(bool(w) for w in wraparound)
        except TypeError:
            raise TopologyError(f"wraparound must be a bool or one bool per axis, got {wraparound!r}") from None
        if len(wrap) != len(shape):
            raise TopologyError(
                f"wraparound has {len(wrap)} entries but the shape has {len(shape)} axes")
    label = "x".join(map(str, shape))
    return _torus(shape, link_bandwidth, hop_latency, wrap, True, f"torus {label}", "torus")


class _SwitchRouter:
    """Every path is up-link of the source, then down-link of the destination."""

    def __init__(self, n):
        self.n = n

    def __call__(self, src, dst):
        pair = np.repeat(np.arange(len(src)), 2)
        link = np.stack([src, self.n + dst], axis=1).ravel()
        return pair, link


def switch(n, link_bandwidth, hop_latency=0.0):
    """``n`` endpoints on one non-blocking switch (a crossbar, as an NVSwitch node).

    Each endpoint has an up-link to the switch and a down-link from it, each
    ``link_bandwidth`` bytes/s; a path crosses two links so costs ``2 * hop_latency``.
    Modelled: per-endpoint injection and ejection bandwidth. Left out: in-switch reduction
    (see the in-network algorithms), switch-internal contention.
    """
    n = _count(n, "n", 1)
    bandwidth, latency = _check_link_params(link_bandwidth, hop_latency)
    ranks = np.arange(n)
    link_src = np.concatenate([ranks, np.full(n, n)])
    link_dst = np.concatenate([np.full(n, n), ranks])
    return Topology(n, link_src, link_dst, bandwidth, latency, _SwitchRouter(n), n_switches=1,
                    name=f"switch of {n}", kind="switch")
