"""The basic topologies: rings, chains, tori (N-D, per-axis wraparound) and one switch.

:func:`ring`, :func:`chain` and :func:`torus` wire endpoints to their neighbours along every
axis and route dimension-order (axis 0 first, the shorter way round each wrapped axis);
:func:`switch` puts every endpoint on one non-blocking crossbar (an NVSwitch node), routed
up-link then down-link. Modelled: link bandwidth and latency, shared links. Left out:
switch buffering and arbitration, routing adaptivity, per-chip injection limits beyond its
links. Taught in chapters "Cost models and the ring all-gather" and "TPU cluster topology".
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import TopologyError
from ..validation import integer, per_axis_flags
from .core import Topology, TopologyInfo, link_params

__all__ = ["ring", "chain", "torus", "switch"]


class _TorusRouter:
    """Dimension-order routing on a torus/mesh: axis 0 first, shortest way round each axis.

    Ties (exactly half-way round) go in the + direction. Unidirectional tori only have
    + links and always go forward.
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        wrap: tuple[bool, ...],
        bidirectional: bool,
        link_table: NDArray[np.int64],
    ) -> None:
        self.shape = np.array(shape, dtype=np.int64)
        self.strides = np.array(
            [math.prod(shape[a + 1 :]) for a in range(len(shape))], dtype=np.int64
        )
        self.wrap = np.array(wrap, dtype=bool)
        self.bidirectional = bidirectional
        self.link_table = link_table  # (node, axis, direction 0:+ 1:-) -> link or -1

    def __call__(
        self, src: NDArray[np.int64], dst: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        n_pairs = len(src)
        src_c = (src[:, None] // self.strides) % self.shape
        dst_c = (dst[:, None] // self.strides) % self.shape
        node = src.copy()
        pairs: list[NDArray[np.int64]] = []
        links: list[NDArray[np.int64]] = []
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


def _torus(
    shape: tuple[int, ...],
    link_bandwidth: float,
    hop_latency: float,
    wraparound: tuple[bool, ...],
    bidirectional: bool,
    name: str,
    kind: str,
) -> Topology:
    bandwidth, latency = link_params(link_bandwidth, hop_latency)
    n = math.prod(shape)
    ndim = len(shape)
    strides = [math.prod(shape[a + 1 :]) for a in range(ndim)]
    # a 2-long bidirectional axis already has both links between its two chips
    wrap = tuple(
        w and size > 1 and (size > 2 or not bidirectional) for w, size in zip(wraparound, shape)
    )
    coords = np.stack(np.unravel_index(np.arange(n), shape), axis=1) if n else np.zeros((0, ndim))
    table = np.full((n, ndim, 2), -1, dtype=np.int64)
    srcs: list[NDArray[np.int64]] = []
    dsts: list[NDArray[np.int64]] = []
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
    return Topology(
        n,
        link_src,
        link_dst,
        bandwidth,
        latency,
        router,
        name=name,
        info=TopologyInfo(family=kind, shape=shape, wraparound=wrap),
    )


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        sizes = tuple(shape)
    except TypeError:
        raise TopologyError(f"shape must be a tuple of axis sizes, got {shape!r}") from None
    if not sizes or any(
        isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes
    ):
        raise TopologyError(f"shape must be a non-empty tuple of positive integers, got {sizes!r}")
    return tuple(int(s) for s in sizes)


def ring(
    n: int, link_bandwidth: float, hop_latency: float = 0.0, bidirectional: bool = True
) -> Topology:
    """``n`` endpoints in a ring: links to both neighbours, or only to the next one.

    ``link_bandwidth`` is bytes/s per link per direction; ``hop_latency`` seconds per link.
    Routing takes the shorter way round (the forward way if unidirectional).
    """
    n = integer(n, "n", minimum=1, error=TopologyError)
    kind = "ring" if bidirectional else "unidirectional ring"
    return _torus(
        (n,), link_bandwidth, hop_latency, (True,), bool(bidirectional), f"{kind} of {n}", "ring"
    )


def chain(n: int, link_bandwidth: float, hop_latency: float = 0.0) -> Topology:
    """``n`` endpoints in a line (a ring without its wraparound link), links both ways.

    ``link_bandwidth`` is bytes/s per link per direction; ``hop_latency`` seconds per link.
    """
    n = integer(n, "n", minimum=1, error=TopologyError)
    return _torus((n,), link_bandwidth, hop_latency, (False,), True, f"chain of {n}", "chain")


def torus(
    shape: int | Sequence[int],
    link_bandwidth: float,
    hop_latency: float = 0.0,
    wraparound: bool | Sequence[bool] = True,
) -> Topology:
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

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(
        self, src: NDArray[np.int64], dst: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
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
    bandwidth, latency = link_params(link_bandwidth, hop_latency)
    ranks = np.arange(n)
    link_src = np.concatenate([ranks, np.full(n, n)])
    link_dst = np.concatenate([np.full(n, n), ranks])
    return Topology(
        n,
        link_src,
        link_dst,
        bandwidth,
        latency,
        _SwitchRouter(n),
        n_switches=1,
        name=f"switch of {n}",
        info=TopologyInfo(family="switch"),
    )
