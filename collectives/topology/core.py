"""The Topology: endpoints, optional NICs and switches, directed links, and a routing rule.

A :class:`Topology` is a set of directed links, each with a bandwidth (bytes/s in its one
direction) and a latency (seconds), between nodes numbered ``0..n_ranks-1`` (endpoints:
chips or GPUs) then ``n_ranks..n_nodes-1`` (NICs and switches, :data:`ROLES`). Its router
maps (src, dst) pairs to the links their data crosses, vectorised over pairs.

What code may dispatch on is declared when a Topology is built, in its
:class:`TopologyInfo` (the wiring family, a torus's shape and wraparound, the link level
names, a product's dimensions, a GPU cluster's nodes and the shape of its switch fabric in
:class:`FabricInfo`), never read from a router's or builder's private state.

Modelled: link bandwidth and latency, shared links, routes (one path per pair, or a
connection spread over several paths with a share on each link: :meth:`Topology.link_shares`).
Left out: switch buffering and arbitration, per-chip injection limits beyond its links.
The builders live beside this module (:mod:`~collectives.topology.basic`,
:mod:`~collectives.topology.product`, :mod:`~collectives.topology.cluster`). Taught in
chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import TopologyError
from ..validation import int_array, integer, number

if TYPE_CHECKING:
    import networkx as nx

    from ..hardware.systems import System

__all__ = ["Topology", "TopologyInfo", "FabricInfo", "ROLES", "Router", "readonly", "link_params"]

_Scalar = TypeVar("_Scalar", bound=np.generic)

#: roles a node can play; ``Topology.node_role`` holds indices into this tuple
ROLES = ("endpoint", "nic", "switch")

#: a router: ``(src, dst)`` int arrays of distinct node pairs -> ``(pair, link)`` arrays
Router = Callable[
    [NDArray[np.int64], NDArray[np.int64]], "tuple[NDArray[np.int64], NDArray[np.int64]]"
]

#: what a router that spreads a pair over several paths offers as ``router.shares``:
#: ``(src, dst)`` -> ``(pair, link, share)``
_Shares = Callable[
    [NDArray[np.int64], NDArray[np.int64]],
    "tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]",
]


@dataclass(frozen=True)
class FabricInfo:
    """The declared shape of a cluster's switch fabric (:mod:`collectives.topology.cluster`).

    Tier 1 is the leaves, tier ``len(switches_per_tier)`` the top. ``hosts_per_leaf``:
    down-ports of a leaf (nodes per rail leaf when ``rails``); ``switches_per_tier`` and
    ``cables_per_tier`` (host cables first): counts over all ``planes``;
    ``tier_bandwidth``: bytes/s per direction of one cable at each tier (host cables
    first); ``endpoints_per_block``: endpoints under one full block of each tier (a leaf's
    hosts first, then a tier-2 block such as a SuperPOD spine group or a Meta AI zone, up
    to the whole top block); ``wiring``: "mesh" or "striped" above tier 2; ``rails``: GPU
    ``i`` of every node of a leaf group on leaf ``i``; ``routing`` ("hash", "dmodk" or
    "adaptive") and ``hash_seed``: how routes choose among equal-cost paths.
    """

    hosts_per_leaf: int
    switches_per_tier: tuple[int, ...]
    cables_per_tier: tuple[int, ...]
    tier_bandwidth: tuple[float, ...]
    endpoints_per_block: tuple[int, ...]
    planes: int = 1
    wiring: str = "mesh"
    rails: bool = False
    routing: str = "hash"
    hash_seed: int = 0

    @property
    def n_tiers(self) -> int:
        """Switch tiers, the leaves included."""
        return len(self.switches_per_tier)


@dataclass(frozen=True)
class TopologyInfo:
    """What code may dispatch on, declared when a Topology is built (never added later).

    ``family``: how it is wired ("ring", "chain", "torus", "switch", "product", "cluster",
    "layered", "fat_tree", "clos", "custom"); ``shape`` and ``wraparound``: per-axis sizes
    and wrap flags of a torus-like wiring (a product: the dimensions' sizes; a cluster:
    ``(nodes, gpus per node)``; ``None`` otherwise); ``levels``: the names of the link
    levels, indexed by ``Topology.link_level`` (e.g. ``("nvlink", "pcie", "leaf",
    "spine")``; GPU clusters and fabrics take theirs from
    :data:`collectives.topology.cluster.LEVELS`); ``system``: the hardware record a preset
    was built from (``None`` for a bare builder); ``sources``: where the numbers come from;
    ``dimensions``: a product's dimension topologies, in order; ``gpus_per_node``: GPUs of
    one NVLink node (server) of a cluster (``None`` where endpoints are not in nodes);
    ``fabric``: the shape of a cluster's switch fabric (:class:`FabricInfo`).
    """

    family: str = "custom"
    shape: Optional[tuple[int, ...]] = None
    wraparound: Optional[tuple[bool, ...]] = None
    levels: tuple[str, ...] = ("link",)
    system: Optional[System] = None
    sources: tuple[str, ...] = ()
    dimensions: tuple["Topology", ...] = ()
    gpus_per_node: Optional[int] = None
    fabric: Optional[FabricInfo] = None

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
        if self.is_torus and self.shape is not None and len(self.shape) <= 2:
            return "grid"
        if self.family == "switch":
            return "star"
        return "graph"


def readonly(a: NDArray[_Scalar]) -> NDArray[_Scalar]:
    """``a``, marked read-only (a Topology's arrays cannot be changed once built)."""
    a.flags.writeable = False
    return a


def link_params(link_bandwidth: Any, hop_latency: Any) -> tuple[float, float]:
    """Every link's bandwidth (bytes/s per direction) and latency (seconds), checked."""
    return (
        number(
            link_bandwidth,
            "link_bandwidth",
            positive=True,
            unit="bytes/s per direction",
            error=TopologyError,
        ),
        number(hop_latency, "hop_latency", unit="seconds", error=TopologyError),
    )


class Topology:
    """Directed links with bandwidth (bytes/s per direction) and latency (s), plus a router.

    Nodes ``0..n_ranks-1`` are endpoints (chips, GPUs: the ranks a Schedule runs on); the
    nodes after them are NICs and switches (``node_role``). ``router(src, dst)`` takes
    equal-length int arrays of distinct node pairs and returns ``(pair, link)``: for every
    link crossed, the index of the pair crossing it, grouped by pair in path order. A
    router may also offer ``shares(src, dst) -> (pair, link, share)`` when it spreads a
    pair over several paths (adaptive routing), and ``reaches_switches = True`` when it
    routes between an endpoint and a switch (in-network reduction). ``info``
    (:class:`TopologyInfo`) declares the shape, levels and hardware record; a Topology
    cannot be changed once built.
    """

    n_ranks: int
    link_src: NDArray[np.int64]
    link_dst: NDArray[np.int64]
    link_bandwidth: NDArray[np.float64]
    link_latency: NDArray[np.float64]
    node_role: NDArray[np.int8]
    name: str
    info: TopologyInfo
    _link_level: NDArray[np.int64]
    _router: Router

    def __init__(
        self,
        n_ranks: int,
        link_src: ArrayLike,
        link_dst: ArrayLike,
        link_bandwidth: ArrayLike,
        link_latency: ArrayLike,
        router: Router,
        *,
        n_switches: int = 0,
        node_role: Optional[ArrayLike] = None,
        link_level: Optional[ArrayLike] = None,
        info: Optional[TopologyInfo] = None,
        name: str = "topology",
        kind: Optional[str] = None,
        shape: Optional[Sequence[int]] = None,
        wraparound: Optional[Sequence[bool]] = None,
    ) -> None:
        n_ranks = integer(n_ranks, "n_ranks", minimum=1, error=TopologyError)
        src = readonly(np.asarray(link_src, dtype=np.int64))
        dst = readonly(np.asarray(link_dst, dtype=np.int64))
        n_links = len(src)
        if len(dst) != n_links:
            raise TopologyError("link_src and link_dst differ in length")
        if node_role is None:
            n_switches = integer(n_switches, "n_switches", minimum=0, error=TopologyError)
            node_role = np.concatenate(
                [np.zeros(n_ranks, np.int8), np.full(n_switches, ROLES.index("switch"), np.int8)]
            )
        role = int_array(
            node_role, "node_role", ndim=1, minimum=0, maximum=len(ROLES) - 1, error=TopologyError
        ).astype(np.int8)
        if len(role) < n_ranks or np.any(role[:n_ranks] != 0) or np.any(role[n_ranks:] == 0):
            raise TopologyError(
                "node_role must list the n_ranks endpoints first, then only NICs and switches"
            )
        n_nodes = len(role)
        for ends in (src, dst):
            if n_links and (ends.min() < 0 or ends.max() >= n_nodes):
                raise TopologyError(f"a link end is not a node (0..{n_nodes - 1})")
        if info is None:
            info = TopologyInfo(
                family=kind or "custom",
                shape=None if shape is None else tuple(shape),
                wraparound=None if wraparound is None else tuple(wraparound),
            )
        if link_level is None:
            link_level = np.zeros(n_links, np.int64)
        level = int_array(
            link_level,
            "link_level",
            shape=(n_links,),
            minimum=0,
            maximum=len(info.levels) - 1,
            error=TopologyError,
        )
        bandwidth = readonly(
            np.broadcast_to(np.asarray(link_bandwidth, dtype=float), (n_links,)).copy()
        )
        latency = readonly(
            np.broadcast_to(np.asarray(link_latency, dtype=float), (n_links,)).copy()
        )
        if np.any(bandwidth <= 0) or not np.all(np.isfinite(bandwidth)):
            raise TopologyError("every link_bandwidth must be finite and > 0 (bytes/s)")
        if np.any(latency < 0) or not np.all(np.isfinite(latency)):
            raise TopologyError("every link_latency must be finite and >= 0 (seconds)")
        fields: dict[str, Any] = {
            "n_ranks": n_ranks,
            "link_src": src,
            "link_dst": dst,
            "link_bandwidth": bandwidth,
            "link_latency": latency,
            "node_role": readonly(role),
            "_link_level": readonly(level),
            "_router": router,
            "name": str(name),
            "info": info,
        }
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        if key.startswith("_"):  # subclasses' own private state
            object.__setattr__(self, key, value)
            return
        raise TopologyError(
            f"a Topology cannot be changed once built (tried to set {key!r}); build a new one"
        )

    def with_info(self, *, name: Optional[str] = None, **info_fields: Any) -> "Topology":
        """The same wiring under a new name and/or with ``info`` fields replaced (a preset
        names its hardware record this way); the links and router are shared, not copied."""
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
        """The hardware record of a preset (``info.system``, a
        :class:`collectives.hardware.System`), or None."""
        return self.info.system

    @property
    def link_level(self) -> NDArray[np.int64]:
        """Per link: its level, an index into ``info.levels``."""
        return self._link_level

    @property
    def router(self) -> Router:
        """The routing function (see the class docstring); a Topology of the same wiring
        with other link speeds can be built with it."""
        return self._router

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
    def switches(self) -> NDArray[np.int64]:
        """Node ids of the switches, in order."""
        return np.flatnonzero(self.node_role == ROLES.index("switch"))

    # ---- routing -----------------------------------------------------------------------
    def checked_pairs(
        self, src: ArrayLike, dst: ArrayLike
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``src`` and ``dst`` checked: equal-length arrays of distinct endpoint or switch
        pairs the router reaches."""
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
                    f"{self.name}"
                )
        if np.any(src == dst):
            raise TopologyError("paths() takes pairs of distinct nodes")
        if (
            src.size
            and (np.any(src >= self.n_ranks) or np.any(dst >= self.n_ranks))
            and not getattr(self._router, "reaches_switches", False)
        ):
            raise TopologyError(
                f"{self.name} does not route to or from its switches; only endpoints can "
                "exchange data on it"
            )
        return src, dst

    def paths(self, src: ArrayLike, dst: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays.

        ``src`` and ``dst`` are endpoints, or switches where the router reaches them. A
        router that spreads a pair over several paths gives one of them here (all have the
        same length); :meth:`link_shares` gives the share of the pair's bytes on each link.
        """
        src, dst = self.checked_pairs(src, dst)
        if src.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        return self._router(src, dst)

    def link_shares(
        self, src: ArrayLike, dst: ArrayLike
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """``(pair, link, share)``: the share of each pair's bytes that each link carries.

        With one path per pair (every router but an adaptive one) these are the links of
        :meth:`paths` with share 1; an adaptive router spreads a pair evenly over its
        equal-cost paths, so a link carries the fraction of the paths that cross it.
        """
        src, dst = self.checked_pairs(src, dst)
        if src.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        shares: Optional[_Shares] = getattr(self._router, "shares", None)
        if shares is not None:
            return shares(src, dst)
        pair, link = self._router(src, dst)
        return pair, link, np.ones(len(link))

    def route(self, src: int, dst: int) -> list[int]:
        """The links from ``src`` to ``dst``, in order, as a list of link ids."""
        if src == dst:
            return []
        _, links = self.paths([src], [dst])
        route: list[int] = links.tolist()
        return route

    def route_levels(self, src: int, dst: int) -> list[str]:
        """The link levels (names of ``info.levels``) the route from ``src`` to ``dst``
        crosses, in order: e.g. ``["pcie", "leaf", "spine", "spine", "leaf", "pcie"]``."""
        return [self.info.levels[int(self._link_level[link])] for link in self.route(src, dst)]

    def path_latency(self, src: ArrayLike, dst: ArrayLike) -> NDArray[np.float64]:
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
            g.add_edge(
                u,
                v,
                key=i,
                bandwidth=float(self.link_bandwidth[i]),
                latency=float(self.link_latency[i]),
                level=self.info.levels[int(self._link_level[i])],
            )
        return g

    def __repr__(self) -> str:
        extra = f", shape={self.shape}" if self.shape else ""
        nics = f", n_nics={self.n_nics}" if self.n_nics else ""
        return (
            f"Topology({self.name!r}, n_ranks={self.n_ranks}, n_switches={self.n_switches}"
            f"{nics}, n_links={self.n_links}{extra})"
        )
