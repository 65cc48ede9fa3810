"""Structural measures of a topology: hops, diameter, average hops, bisection bandwidth,
the bandwidth across any cut, and the bandwidth per endpoint on each link level.

These are the numbers a designer looks at before costing any collective: how far apart
endpoints are (each hop costs a link latency and loads one more link), and how many bytes per
second can cross the middle of the machine (what an all-to-all or a badly placed collective
runs into). Every function takes any :class:`~collectives.topology.Topology`.

What is modelled
----------------
- **Hops** are the links on the route the topology's own router picks (dimension-order on a
  torus, up/down in a fabric, up-link then down-link through a switch), so they are what
  :func:`collectives.time` charges latency for; a switch or NIC on the way is not a hop, the
  links into and out of it are.
- **Tori, rings and chains** (``topology.info.family`` "torus", "ring" or "chain", with
  ``info.shape`` and ``info.wraparound``) use closed forms, so a full TPU v5p pod (16 x 20 x
  28 = 8,960 chips) answers at once. Along an axis of ``L`` chips the distance between
  coordinates ``a`` and ``b`` is ``min(|a-b|, L-|a-b|)`` with wraparound, ``|a-b|`` without
  (a chain) and ``(b-a) mod L`` on a one-way ring; dimension-order routing takes the shortest
  way along each axis, so the hops of a pair are the sum over the axes (W. J. Dally and
  B. Towles, *Principles and Practices of Interconnection Networks*, 2004, chapter "Torus
  Networks"). Hence the diameter
  ``sum(L // 2)`` over wrapped axes plus ``sum(L - 1)`` over the others, and the mean
  distance per axis ``floor(L^2/4)/L`` (``L/4`` for even ``L``) with wraparound,
  ``(L^2-1)/(3L)`` without and ``(L-1)/2`` one way, summed over the axes.
- **Bisection bandwidth**: bytes/s that can cross, one way, the worst cut of the endpoints
  into two equal halves. On a torus it is the cut across an axis: ``2 N B / L`` with
  wraparound on that axis (every line of the axis is cut twice) and ``N B / L`` without,
  minimised over the axes that can be halved (of even length); when every axis wraps (or
  none does) that is the cut across the longest axis (Dally and Towles, same chapter). On one
  switch it is ``floor(n/2) B``. On a cluster or fabric
  (:class:`~collectives.topology.Cluster`: GPU clusters, fat trees and Clos, layered
  fabrics) it is the cut between the two halves of the top block, from the built live links
  (:meth:`~collectives.topology.Cluster.bisection_cut`; ``N b / 2 / d`` on a Clos with leaf
  oversubscription ``d``), where that cut halves the endpoints and no node's GPUs straddle
  it. Any other topology is cut into its natural halves, ranks ``[0, n/2)`` and
  ``[n/2, n)``, and the bytes/s that can flow across are a ``networkx`` maximum flow
  (switches and NICs may carry traffic on either side; failed links carry nothing), the
  smaller of the two directions (:func:`cut_bandwidth` computes it for any split). There
  is one bisection entry point: ``collectives.fabric.bisection_bandwidth`` and
  ``collectives.fabric.fabric_bisection`` are this function.

What is left out
----------------
Latency in seconds (use ``topology.path_latency``), contention between routes, adaptive or
non-minimal routing, and on a general topology the search for its worst bisection: the
natural halves are one balanced cut, so their max-flow is an upper bound on the bisection.
It is exact on tori whose axes all have even length (checked against every balanced cut of
small tori in the tests), on 1-D rings and chains of any length, on one switch and on the
fabrics above; on a torus with an odd axis a staircase cut can beat every straight one (a
2 x 5 mesh: 3 links, not 5), so the value is then an upper bound too. The
measures that look at every pair of endpoints of a topology without a closed form refuse
topologies of more than ``max_ranks`` endpoints (default :data:`MAX_RANKS`) instead of
running for minutes. Taught in chapter "TPU cluster topology" and practised in the graded
notebook ``topology_reasoning``.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .errors import TopologyError
from .topology import ROLES, Cluster, Topology
from .validation import int_array, integer

__all__ = [
    "hops",
    "routed_hops",
    "hop_matrix",
    "diameter",
    "average_hops",
    "bisection_bandwidth",
    "cut_bandwidth",
    "bandwidth_per_endpoint",
    "MAX_RANKS",
    "MAX_FLOW_LINKS",
]

#: The most endpoints :func:`hop_matrix` (and :func:`diameter` / :func:`average_hops` of a
#: topology without a closed form) accept by default: 2048**2 = 4.2 million pairs.
MAX_RANKS = 2048
#: The most directed links :func:`bisection_bandwidth` hands to networkx's maximum flow.
MAX_FLOW_LINKS = 200_000
#: pairs routed at once when hops are counted from routes (bounds the memory of a batch)
_BATCH_PAIRS = 1 << 18


# ---- arguments ---------------------------------------------------------------------------


def _topology_arg(topology: Any, what: str) -> Topology:
    if not isinstance(topology, Topology):
        raise TopologyError(
            f"{what} takes a collectives Topology (e.g. "
            f"cl.topology.torus((16, 16), 45e9)), got {type(topology).__name__}"
        )
    return topology


def _endpoints(value: Any, what: str, topology: Topology) -> np.ndarray:
    array = int_array(value, what, error=TopologyError)
    bad = (array < 0) | (array >= topology.n_ranks)
    if bad.any():
        raise TopologyError(
            f"{what} holds {int(array[bad].flat[0])}, which is not an endpoint "
            f"of {topology.name} (endpoints are 0..{topology.n_ranks - 1})"
        )
    return array


def _max_ranks_arg(max_ranks: Any) -> int:
    return integer(max_ranks, "max_ranks", minimum=1, error=TopologyError)


# ---- which closed form fits --------------------------------------------------------------


def _torus_form(topology: Topology) -> Optional[tuple[tuple[int, ...], tuple[str, ...]]]:
    """``(shape, modes)`` when the topology is a torus, ring or chain built by
    :mod:`collectives.topology` (checked from its declared info and its link count), with one
    mode per axis: "wrap" (links both ways, wraparound), "chain" (both ways, none) or
    "forward" (a one-way ring); None otherwise."""
    info = topology.info
    if (
        info.family not in ("torus", "ring", "chain")
        or info.shape is None
        or info.wraparound is None
        or len(info.wraparound) != len(info.shape)
    ):
        return None
    shape = tuple(int(s) for s in info.shape)
    n = math.prod(shape)
    if n != topology.n_ranks or topology.n_nodes != n:
        return None
    wrap = tuple(bool(w) and size > 1 for w, size in zip(info.wraparound, shape))
    both_ways = sum(2 * (n if w else n - n // size) for w, size in zip(wrap, shape) if size > 1)
    if topology.n_links == both_ways:
        return shape, tuple("wrap" if w else "chain" for w in wrap)
    if len(shape) == 1 and info.family == "ring" and topology.n_links == n:
        return shape, ("forward",)
    return None


def _axis_distance(a: np.ndarray, b: np.ndarray, size: int, mode: str) -> np.ndarray:
    if mode == "forward":
        return (b - a) % size
    d = np.abs(b - a)
    return np.minimum(d, size - d) if mode == "wrap" else d


def _torus_hops(shape, modes, src, dst):
    out = np.zeros(np.broadcast(src, dst).shape, dtype=np.int64)
    strides = [math.prod(shape[a + 1 :]) for a in range(len(shape))]
    for size, mode, stride in zip(shape, modes, strides):
        if size > 1:
            out += _axis_distance((src // stride) % size, (dst // stride) % size, size, mode)
    return out


def _axis_diameter(size: int, mode: str) -> int:
    return size // 2 if mode == "wrap" else size - 1


def _axis_mean(size: int, mode: str) -> float:
    """Mean distance along one axis over all ordered coordinate pairs (equal ones included)."""
    if mode == "wrap":
        return (size * size // 4) / size
    if mode == "chain":
        return (size * size - 1) / (3 * size)
    return (size - 1) / 2


def _is_switch(topology: Topology) -> bool:
    """One crossbar as :func:`collectives.topology.switch` builds it."""
    n = topology.n_ranks
    return (
        topology.info.family == "switch" and topology.n_nodes == n + 1 and topology.n_links == 2 * n
    )


# ---- hops --------------------------------------------------------------------------------


def _routed_hops(topology: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Links on the route of each pair (flat arrays), from the router, in bounded batches."""
    out = np.zeros(len(src), dtype=np.int64)
    remote = np.flatnonzero(src != dst)
    for start in range(0, len(remote), _BATCH_PAIRS):
        chosen = remote[start : start + _BATCH_PAIRS]
        pair, _ = topology.paths(src[chosen], dst[chosen])
        out[chosen] = np.bincount(pair, minlength=len(chosen))
    return out


def _pair_arrays(topology: Topology, src: ArrayLike, dst: ArrayLike, what: str):
    topology = _topology_arg(topology, what)
    src = _endpoints(src, "src", topology)
    dst = _endpoints(dst, "dst", topology)
    try:
        shape = np.broadcast(src, dst).shape
    except ValueError:
        raise TopologyError(
            f"src (shape {src.shape}) and dst (shape {dst.shape}) do not "
            "broadcast to one shape of pairs"
        ) from None
    return topology, src, dst, shape


def routed_hops(topology: Topology, src: ArrayLike, dst: ArrayLike) -> np.ndarray:
    """Links on the route the topology's own router picks from each endpoint of ``src`` to
    the matching one of ``dst`` (0 where they are equal), never a closed form: what the
    closed forms of :func:`hops` are checked against. Shapes as :func:`hops`."""
    topology, src, dst, shape = _pair_arrays(topology, src, dst, "routed_hops")
    s, d = np.broadcast_arrays(src, dst)
    out = _routed_hops(topology, s.ravel(), d.ravel()).reshape(shape)
    return out[()] if out.ndim == 0 else out


def hops(topology: Topology, src: ArrayLike, dst: ArrayLike) -> np.ndarray:
    """Links on the route from each endpoint of ``src`` to the matching one of ``dst``.

    ``src`` and ``dst`` are endpoint ids (ints or int arrays that broadcast together); the
    answer has their broadcast shape (a numpy integer for two scalars), 0 where
    ``src == dst``. Counted on tori, rings and chains by the closed form of the module
    docstring (per axis ``min(|a-b|, L-|a-b|)`` with wraparound, ``|a-b|`` without), equal
    to the routes' length; elsewhere from the routes themselves (:meth:`Topology.paths`).
    """
    topology, src, dst, shape = _pair_arrays(topology, src, dst, "hops")
    form = _torus_form(topology)
    if form is not None:
        out = _torus_hops(*form, src, dst)
    else:
        s, d = np.broadcast_arrays(src, dst)
        out = _routed_hops(topology, s.ravel(), d.ravel()).reshape(shape)
    return out[()] if out.ndim == 0 else out


def hop_matrix(topology: Topology, *, max_ranks: int = MAX_RANKS) -> np.ndarray:
    """``(n, n)`` int array: the hops from every endpoint (row) to every endpoint (column).

    Refused (a :class:`~collectives.errors.TopologyError`) when the topology has more than
    ``max_ranks`` endpoints: ``n**2`` entries, each routed, would take minutes and gigabytes;
    use :func:`diameter` and :func:`average_hops` (closed forms on tori) or :func:`hops` on
    the pairs you need, or raise ``max_ranks`` knowingly.
    """
    topology = _topology_arg(topology, "hop_matrix")
    limit = _max_ranks_arg(max_ranks)
    n = topology.n_ranks
    if n > limit:
        raise TopologyError(
            f"hop_matrix of {topology.name} would hold {n} x {n} = {n * n:,} pairs, more than "
            f"the limit of max_ranks={limit} endpoints; use diameter() or average_hops() "
            "(closed forms on tori), or hops() on the pairs you need, or pass a larger "
            "max_ranks"
        )
    ranks = np.arange(n, dtype=np.int64)
    form = _torus_form(topology)
    if form is not None:
        return _torus_hops(*form, ranks[:, None], ranks[None, :])
    src = np.repeat(ranks, n)
    dst = np.tile(ranks, n)
    return _routed_hops(topology, src, dst).reshape(n, n)


def _routed_totals(topology: Topology, max_ranks: Any, what: str) -> tuple[int, int]:
    """(max, sum) of the hops over all ordered pairs, row block by row block."""
    limit = _max_ranks_arg(max_ranks)
    n = topology.n_ranks
    if n > limit:
        raise TopologyError(
            f"{what} of {topology.name} has no closed form here and would route all "
            f"{n * (n - 1):,} pairs of its {n} endpoints, more than the limit of "
            f"max_ranks={limit}; pass a larger max_ranks knowingly"
        )
    rows = max(1, _BATCH_PAIRS // max(n, 1))
    ranks = np.arange(n, dtype=np.int64)
    largest, total = 0, 0
    for start in range(0, n, rows):
        block = ranks[start : start + rows]
        h = _routed_hops(topology, np.repeat(block, n), np.tile(ranks, len(block)))
        if h.size:
            largest = max(largest, int(h.max()))
            total += int(h.sum())
    return largest, total


def diameter(topology: Topology, *, max_ranks: int = MAX_RANKS) -> int:
    """The most hops between any two endpoints (0 for a single endpoint).

    Tori, rings and chains: ``sum(L // 2)`` over the axes with wraparound plus
    ``sum(L - 1)`` over the others (``L - 1`` on a one-way ring): 16 on a 16 x 16 torus, 32
    on a TPU v5p pod (8 + 10 + 14). One switch: 2 (up-link, down-link). Otherwise the
    maximum over the routes of all pairs (refused above ``max_ranks`` endpoints).
    """
    topology = _topology_arg(topology, "diameter")
    if topology.n_ranks == 1:
        return 0
    form = _torus_form(topology)
    if form is not None:
        return sum(_axis_diameter(size, mode) for size, mode in zip(*form))
    if _is_switch(topology):
        return 2
    return _routed_totals(topology, max_ranks, "diameter")[0]


def average_hops(topology: Topology, *, max_ranks: int = MAX_RANKS) -> float:
    """Mean hops over all ordered pairs of distinct endpoints (0.0 for a single endpoint).

    Tori, rings and chains: the sum over the axes of the mean distance per axis (``L/4`` for
    an even wrapped axis, ``floor(L^2/4)/L`` in general with wraparound, ``(L^2-1)/(3L)``
    without, ``(L-1)/2`` one way), which averages over all ``N^2`` ordered pairs, times
    ``N / (N - 1)`` to leave out a chip's distance to itself: 8 x 256/255 = 8.031... on a
    16 x 16 torus. One switch: 2. Otherwise from the routes (refused above ``max_ranks``).
    """
    topology = _topology_arg(topology, "average_hops")
    n = topology.n_ranks
    if n == 1:
        return 0.0
    form = _torus_form(topology)
    if form is not None:
        per_pair = sum(_axis_mean(size, mode) for size, mode in zip(*form) if size > 1)
        return per_pair * n / (n - 1)
    if _is_switch(topology):
        return 2.0
    return _routed_totals(topology, max_ranks, "average_hops")[1] / (n * (n - 1))


# ---- bisection bandwidth -----------------------------------------------------------------


def _cut_capacity(topology: Topology, side: np.ndarray) -> float:
    """Bytes/s one way (the smaller direction) over the links between the two sides of a
    split of the nodes (``side``: 0 or 1 per node)."""
    a, b = side[topology.link_src], side[topology.link_dst]
    bw = topology.link_bandwidth
    return float(min(bw[(a == 0) & (b == 1)].sum(), bw[(a == 1) & (b == 0)].sum()))


def _torus_bisection(topology: Topology, shape: tuple[int, ...]) -> Optional[float]:
    """The smallest cut across an axis that halves the endpoints (None if none does)."""
    n = topology.n_ranks
    strides = [math.prod(shape[a + 1 :]) for a in range(len(shape))]
    long_axes = [a for a, size in enumerate(shape) if size > 1]
    ranks = np.arange(n, dtype=np.int64)
    cuts = []
    for a in long_axes:
        size = shape[a]
        if size % 2 and len(long_axes) > 1:
            continue  # cutting an odd axis leaves N/L more endpoints on one side
        side = ((ranks // strides[a]) % size >= size // 2).astype(np.int8)
        cuts.append(_cut_capacity(topology, side))
    return min(cuts) if cuts else None


def _switch_bisection(topology: Topology) -> float:
    n = topology.n_ranks
    half = np.arange(n) >= n // 2
    up = np.zeros(n)
    down = np.zeros(n)
    to_switch = topology.link_src < n
    up[topology.link_src[to_switch]] = topology.link_bandwidth[to_switch]
    down[topology.link_dst[~to_switch]] = topology.link_bandwidth[~to_switch]
    one_way = min(up[~half].sum(), down[half].sum())
    other_way = min(up[half].sum(), down[~half].sum())
    return float(min(one_way, other_way))


def cut_bandwidth(topology: Topology, side: ArrayLike) -> float:
    """Bytes/s that can cross, the smaller of the two directions, between the endpoints in
    ``side`` (endpoint ids) and all the other endpoints: a ``networkx`` maximum flow over the
    topology's links (parallel links add up; switches and NICs carry traffic on either side;
    a cluster's failed links carry nothing). Refused above :data:`MAX_FLOW_LINKS` links."""
    import networkx as nx

    topology = _topology_arg(topology, "cut_bandwidth")
    chosen = _endpoints(side, "side", topology).ravel()
    if topology.n_links > MAX_FLOW_LINKS:
        raise TopologyError(
            f"bisection_bandwidth of {topology.name} needs a maximum flow over its "
            f"{topology.n_links:,} links, more than MAX_FLOW_LINKS = {MAX_FLOW_LINKS:,}; it "
            "has no closed form here (tori, rings, chains, one switch and fat trees have)"
        )
    a = np.zeros(topology.n_ranks, bool)
    a[chosen] = True
    if a.all() or not a.any():
        raise TopologyError("cut_bandwidth needs endpoints on both sides of the cut")
    live = ~topology.failed if isinstance(topology, Cluster) else np.ones(topology.n_links, bool)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(topology.n_nodes))
    for u, v, bw in zip(
        topology.link_src[live].tolist(),
        topology.link_dst[live].tolist(),
        topology.link_bandwidth[live].tolist(),
    ):
        if graph.has_edge(u, v):
            graph[u][v]["capacity"] += bw  # parallel links add up
        else:
            graph.add_edge(u, v, capacity=bw)
    flows = []
    for sending in (a, ~a):
        g = graph.copy()
        g.add_edges_from(("source", int(s)) for s in np.flatnonzero(sending))  # unbounded
        g.add_edges_from((int(t), "sink") for t in np.flatnonzero(~sending))
        flows.append(nx.maximum_flow_value(g, "source", "sink"))
    return float(min(flows))


def bisection_bandwidth(topology: Topology) -> float:
    """Bytes/s that can cross, one way, the worst cut of the endpoints into two halves.

    - torus, ring, chain: the cut across an axis, ``2 N B / L`` with wraparound on that axis
      and ``N B / L`` without, the smallest over the axes of even length (a 1-D ring or chain
      of odd length is cut into ``floor(n/2)`` and ``ceil(n/2)``): on a 16 x 16 torus of
      ``B`` links ``2 x 256 / 16 = 32`` links, ``32 B``; on a TPU v5p pod the cut across
      its 28-chip axis, ``2 x 8960 / 28 = 640`` links. Computed by adding up the bandwidths
      of the links that cross, so it also holds for links of different speeds;
    - one switch: ``floor(n/2) B``, what the up-links of one half can send;
    - a cluster or fabric (:class:`~collectives.topology.Cluster`: GPU clusters and
      presets, fat trees and Clos, layered fabrics): the cut between the halves of its top
      block over its live links (``N b / 2 / d`` on a Clos), where that cut halves the
      endpoints without splitting a node;
    - anything else (and a torus whose axes are all odd): the natural halves, ranks
      ``[0, n/2)`` and ``[n/2, n)``: a ``networkx`` maximum flow from one half to the other
      (switches and NICs free to carry traffic), the smaller direction.

    Exact for tori with every axis even, 1-D rings and chains, one switch and fat trees; an
    upper bound on the true bisection otherwise (module docstring: a torus with an odd axis
    may have a cheaper staircase cut).

    A single endpoint has no bisection: :class:`~collectives.errors.TopologyError`.
    """
    topology = _topology_arg(topology, "bisection_bandwidth")
    if topology.n_ranks < 2:
        raise TopologyError(
            f"{topology.name} has a single endpoint: there is nothing to cut in half"
        )
    if isinstance(topology, Cluster):
        cut = topology.bisection_cut()
        if cut is not None:
            return cut
    form = _torus_form(topology)
    if form is not None:
        cut = _torus_bisection(topology, form[0])
        if cut is not None:
            return cut
    if _is_switch(topology):
        return _switch_bisection(topology)
    if np.all(topology.node_role == ROLES.index("endpoint")):
        # only endpoints: every node is in one half, so the max-flow is the crossing capacity
        side = (np.arange(topology.n_nodes) >= topology.n_ranks // 2).astype(np.int8)
        return _cut_capacity(topology, side)
    return cut_bandwidth(topology, np.arange(topology.n_ranks // 2))


def bandwidth_per_endpoint(topology: Topology) -> dict[str, float]:
    """Bytes/s per endpoint per direction on each link level: the level's total link
    bandwidth, halved (links come in pairs, one each way), divided among the endpoints
    (on a SuperPOD: 450 GB/s of NVLink, 63 GB/s of PCIe and 50 GB/s at every fabric tier
    per GPU). A capacity per endpoint, not what a collective reaches."""
    topology = _topology_arg(topology, "bandwidth_per_endpoint")
    total = np.bincount(
        topology.link_level, weights=topology.link_bandwidth, minlength=len(topology.info.levels)
    )
    return {
        name: float(total[i]) / 2 / topology.n_ranks for i, name in enumerate(topology.info.levels)
    }
