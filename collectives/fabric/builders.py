"""Datacenter fabrics: folded-Clos and fat-tree builders, the bytes each link carries, and
the bisection bandwidth.

**What is modelled.** :func:`clos` builds a folded Clos of identical switches with ``radix``
ports in ``tiers`` tiers (tier 1 = leaf/ToR, tier ``tiers`` = spine/core); :func:`fat_tree`
is Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008), which is ``clos(k, 3)``. Both are the
one GPU-cluster builder (:func:`collectives.topology.gpu_cluster`) on hosts without NVLink,
with the fabric :func:`clos_fabric` describes. Endpoints are hosts (GPUs, NICs), ranks
``0..H-1``, numbered so hosts under one leaf are consecutive, and leaves under one pod are
consecutive; switches follow, tier by tier. Every cable is two directed links of
``link_bandwidth`` bytes/s each and ``hop_latency`` seconds each (host cables included, so
a path inside one leaf costs two hops and a path over the top tier ``2 * tiers``).

Wiring (the k-ary n-tree construction). Let ``h = radix/2``. A leaf has ``a`` host ports
and ``b`` uplinks (``a = b = h`` when non-blocking). A switch of tier ``2..tiers-1`` has
``h`` down and ``h`` up ports; a top-tier switch has all ``radix`` ports down. A tier-t
block (the hosts under one tier-t subtree) holds ``h`` tier-(t-1) blocks (``radix`` at the
top), so there are ``2 h^(tiers-1)`` leaves and ``H = 2 a h^(tiers-1)`` hosts; a non-blocking
Clos has ``2 (R/2)^L`` hosts, ``(2L-1)(R/2)^(L-1)`` switches and ``2 L H`` directed links.
A switch is named by its block and by its *position*, the up-port choices that lead to
it: uplink ``p`` of the switch at position ``q`` in tier t reaches position ``q*fan + p`` in
the parent block (``fan = b`` for leaves, ``h`` above), so the way down from a top switch is
unique: in the builder's terms, tier 2 is meshed with the leaves of its pod and the tiers
above are "striped".

**Oversubscription** ``d`` (``d:1`` downlink:uplink capacity) exists only at the leaf tier
and is realised by the port split, ``a = R d/(d+1)`` host ports and ``b = R/(d+1)`` uplinks
(e.g. radix 8 at 3:1: 6 hosts and 2 uplinks per leaf). The tiers above stay non-blocking
but hold ``b/h`` as many switches. The split must be whole ports: a requested ratio
within 1 % of a realisable ``a/b`` is rounded to it (``topology.oversubscription`` holds the
realised value); otherwise :class:`~collectives.errors.TopologyError` names the nearest
realisable splits. An oversubscribed fabric has *more* hosts than the non-blocking one on
the same switches (radix 4, 3 tiers: 16 hosts at 1:1, 24 at 3:1).

**Routing** is up/down: up to the lowest tier whose subtree holds both ends, then down the
unique way. At every tier the up-link is chosen by ``ecmp``:

- ``"hash"`` (default): hashed ECMP on the package's one flow hash
  (:mod:`collectives.topology.hashing`) of ``(src, dst, flow_id)`` under ``hash_seed``, a
  digit per tier, so tiers are independent (no hash polarisation). Like a switch hashing a
  flow's 5-tuple: a flow keeps its path, and distinct flows collide as balls in bins.
- ``"spread"``: deterministic destination-based up/down routing ("d-mod-k", Zahavi et al.
  2010; OpenSM's ftree engine; the builder's ``routing="dmodk"``): the up-port at each tier
  is a digit of the destination's leaf-local index and leaf number, rotated by ``flow_id``.
  On a non-blocking fabric no link carries two flows of any shift permutation
  ``dst = (src + s) mod H`` (so rings, pairwise exchanges and the steps of a shifted
  all-to-all); at ``a:b`` leaf ports none carries more than ``ceil(a/b)``, which the leaf
  uplinks must. An all-to-all loads all links of a tier equally. It is oblivious, so some
  other permutations still collide.

``routing="adaptive"`` (of :data:`collectives.topology.ROUTINGS`) spreads each connection
evenly over its equal-cost paths instead (the ideal of adaptive routing).

**Left out:** switch buffers, queueing, PFC/ECN and congestion control (a link's bytes
simply share its bandwidth in :func:`collectives.time`), in-network reduction; link
failures, dual-plane and rail-optimised designs, per-tier link speeds and oversubscription
above the leaves are in :func:`collectives.fabric.layered`. How often hashed flows collide
is in :mod:`collectives.fabric.ecmp`. Taught in chapter "Designing the fabric".
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..errors import CollectivesError, TopologyError
from ..measures import bisection_bandwidth
from ..topology import ROUTINGS, Cluster, Fabric, Tier, Topology, gpu_cluster
from ..validation import choice, int_array, integer, number

__all__ = [
    "FabricTopology",
    "fat_tree",
    "clos",
    "clos_fabric",
    "realise_ratio",
    "ECMP_MODES",
    "bisection_bandwidth",
    "link_loads",
]

ECMP_MODES = ("hash", "spread")
_RATIO_TOLERANCE = 0.01  # relative: 1.33 is taken as 4:3, 2.0 is not 1.95


class FabricTopology(Cluster):
    """A :class:`~collectives.topology.Cluster` built by :func:`clos` or :func:`fat_tree`.

    Beyond the Cluster's attributes it names the Clos's shape as the Clos builder does:
    ``radix``, ``tiers`` (the number of tiers, an int), ``hosts_per_leaf`` (a),
    ``leaf_uplinks`` (b), ``oversubscription`` (a/b, realised, one number), ``n_leaves``,
    ``switches_per_tier`` (tier 1 first), ``ecmp`` ("hash" or "spread") and ``hash_seed``;
    per node ``node_tier`` (0 for hosts, 1..tiers for switches); per link ``link_tier``
    (1 = host cable, t = between tiers t-1 and t), ``link_level`` (its level in
    ``info.levels``: "leaf", "spine", "core", "tier 4", ...) and ``link_up`` (True when it
    points away from the hosts). ``paths`` and ``route`` also take ``flow_id`` (default 0):
    the flow label ECMP hashes with ``(src, dst)``, e.g. one per queue pair.
    """

    @property
    def tiers(self) -> int:  # type: ignore[override]
        """The number of switch tiers."""
        return self.n_tiers

    @property
    def radix(self) -> int:
        """Ports per switch."""
        return self.hosts_per_leaf + self.leaf_uplinks

    @property
    def leaf_uplinks(self) -> int:
        """Uplinks of a leaf (0 in a one-switch Clos)."""
        return sum(t.switches * t.links for t in super().tiers[:1])

    @property
    def oversubscription(self) -> float:  # type: ignore[override]
        """Host ports : uplinks of a leaf (1.0 when non-blocking or a single switch)."""
        b = self.leaf_uplinks
        return self.hosts_per_leaf / b if b else 1.0

    @property
    def ecmp(self) -> str:
        """ "hash" or "spread" (the builder's "dmodk")."""
        return "spread" if self.routing == "dmodk" else self.routing


def realise_ratio(radix: int, oversubscription: Any, tiers: int) -> tuple[int, int]:
    """(host ports a, uplinks b) of a leaf for the requested downlink:uplink ratio."""
    if isinstance(oversubscription, bool) or not isinstance(
        oversubscription, (int, float, np.integer, np.floating)
    ):
        raise TopologyError(
            f"oversubscription must be a number (downlink:uplink capacity at "
            f"the leaf tier, e.g. 3 for 3:1), got {oversubscription!r}"
        )
    d = float(oversubscription)
    if not math.isfinite(d) or d < 1:
        raise TopologyError(
            f"oversubscription must be >= 1 (downlink:uplink capacity at the "
            f"leaf tier; 1 = non-blocking), got {oversubscription!r}"
        )
    h = radix // 2
    if d == 1:
        return h, h
    if tiers == 1:
        raise TopologyError(
            f"oversubscription {oversubscription!r} needs at least 2 tiers: "
            f"a 1-tier Clos is a single switch with no uplinks"
        )
    if d > radix - 1:
        raise TopologyError(
            f"oversubscription {oversubscription!r} cannot be realised on radix {radix}: a "
            f"leaf needs at least one uplink, so the most is {radix - 1}:1"
        )
    b = min(max(round(radix / (d + 1)), 1), h)
    candidates = {u for u in (b - 1, b, b + 1) if 1 <= u <= h}
    best = min(candidates, key=lambda u: abs((radix - u) / u - d))
    if abs((radix - best) / best - d) <= _RATIO_TOLERANCE * d:
        return radix - best, best
    lo = int(radix // (d + 1))  # more uplinks than asked: ratio below d
    options = [
        f"{radix - u} host ports : {u} uplinks ({(radix - u) / u:.4g}:1)"
        for u in (lo + 1, lo)
        if 1 <= u <= h
    ]
    raise TopologyError(
        f"oversubscription {oversubscription!r} cannot be realised on radix {radix}: a "
        f"leaf splits its {radix} ports into whole host ports and uplinks; nearest: "
        + " or ".join(options)
    )


def clos_fabric(radix: int, tiers: int, a: int, b: int, link_bandwidth: float) -> Fabric:
    """The :class:`~collectives.topology.Fabric` of a folded Clos (module docstring): leaves
    of ``a`` hosts and ``b`` uplinks; tier ``t < tiers`` joins ``h = radix/2`` blocks of the
    tier below through ``b h^(t-2)`` switches, the top joins ``radix`` of them; tier 2 meshed
    with its leaves, the tiers above striped."""
    h = radix // 2
    if tiers == 1:
        return Fabric(radix, link_bandwidth)
    levels = tuple(Tier(h if t < tiers else 2 * h, b * h ** (t - 2)) for t in range(2, tiers + 1))
    return Fabric(a, link_bandwidth, levels, wiring="striped")


def _routing_arg(ecmp: Any, routing: Optional[str]) -> str:
    if routing is not None:
        return choice(routing, "routing", ROUTINGS, error=TopologyError)
    if ecmp not in ECMP_MODES:
        raise TopologyError(f"ecmp must be one of {', '.join(map(repr, ECMP_MODES))}, got {ecmp!r}")
    return "dmodk" if ecmp == "spread" else "hash"


def _seed_arg(hash_seed: Any) -> int:
    if isinstance(hash_seed, (bool, np.bool_)) or not isinstance(hash_seed, (int, np.integer)):
        raise TopologyError(f"hash_seed must be an integer, got {hash_seed!r}")
    return int(hash_seed)


def _link_params(link_bandwidth: Any, hop_latency: Any) -> tuple[float, float]:
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


def _build(radix, tiers, a, b, bandwidth, latency, routing, hash_seed, name, kind):
    fabric = clos_fabric(radix, tiers, a, b, bandwidth)
    return gpu_cluster(
        fabric,
        None,
        1,
        network_latency=latency,
        routing=routing,
        hash_seed=hash_seed,
        family=kind,
        name=name,
        topology_class=FabricTopology,
    )


def clos(
    radix: int,
    tiers: int,
    link_bandwidth: float,
    oversubscription: float = 1.0,
    hop_latency: float = 0.0,
    *,
    ecmp: str = "hash",
    hash_seed: int = 0,
    routing: Optional[str] = None,
) -> FabricTopology:
    """A folded Clos of ``radix``-port switches in ``tiers`` tiers, hosts as endpoints.

    Non-blocking (``oversubscription=1``) it holds ``2 (radix/2)^tiers`` hosts. With
    ``oversubscription=d`` each leaf has ``radix d/(d+1)`` host ports and ``radix/(d+1)``
    uplinks (whole ports; see the module docstring), so cross-leaf traffic gets ``1/d`` of
    the host links' capacity. ``link_bandwidth``: bytes/s per link per direction, every
    link; ``hop_latency``: seconds per link. ``ecmp``: ``"hash"`` (per-flow hashing, with
    collisions) or ``"spread"`` (deterministic d-mod-k); ``routing`` (one of
    :data:`collectives.topology.ROUTINGS`) overrides it; ``hash_seed`` varies the hash like a
    switch's seed. ``tiers=1`` is a single switch of ``radix`` hosts.
    """
    radix = integer(radix, "radix", minimum=2, error=TopologyError)
    if radix % 2:
        raise TopologyError(
            f"radix must be even (a switch below the top tier has half its "
            f"ports down and half up), got {radix}"
        )
    tiers = integer(tiers, "tiers", minimum=1, error=TopologyError)
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    routing = _routing_arg(ecmp, routing)
    hash_seed = _seed_arg(hash_seed)
    a, b = realise_ratio(radix, oversubscription, tiers)
    ratio = "" if a == b else f", {a} hosts + {b} uplinks per leaf ({a / b:.4g}:1)"
    name = f"{tiers}-tier Clos, radix {radix}{ratio}, {2 * a * (radix // 2) ** (tiers - 1)} hosts"
    return _build(radix, tiers, a, b, bandwidth, latency, routing, hash_seed, name, "clos")


def fat_tree(
    k: int,
    link_bandwidth: float,
    hop_latency: float = 0.0,
    *,
    ecmp: str = "hash",
    hash_seed: int = 0,
    routing: Optional[str] = None,
) -> FabricTopology:
    """Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008): ``clos(k, 3)``, non-blocking.

    ``k`` pods of ``k/2`` edge and ``k/2`` aggregation switches, ``(k/2)^2`` core switches
    (``5k^2/4`` switches), ``k^3/4`` hosts (``k/2`` per edge switch, consecutive ranks),
    ``3k^3/2`` directed links. Core switch ``j*(k/2) + p`` links to aggregation switch ``j``
    of every pod. Options as :func:`clos`.
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TopologyError(f"k must be an integer (the switch radix), got {k!r}")
    if k < 2:
        raise TopologyError(f"k must be >= 2 (the switch radix), got {k}")
    if k % 2:
        raise TopologyError(f"k must be even (each switch has k/2 ports down and k/2 up), got {k}")
    k = int(k)
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    routing = _routing_arg(ecmp, routing)
    hash_seed = _seed_arg(hash_seed)
    h = k // 2
    return _build(
        k,
        3,
        h,
        h,
        bandwidth,
        latency,
        routing,
        hash_seed,
        f"fat tree k={k}, {k**3 // 4} hosts",
        "fat_tree",
    )


def link_loads(
    topology: Topology, src: Any, dst: Any, flow_bytes: Any = 1.0, flow_id: Any = None
) -> np.ndarray:
    """Bytes each directed link carries when every flow ``src[i] -> dst[i]`` sends
    ``flow_bytes`` (one number, or one per flow); an array of ``topology.n_links``.

    Flows with ``src == dst`` stay local. ``flow_id`` (clusters and fabrics only): the ECMP
    flow label, an int or one per flow (e.g. ``np.arange(16)`` repeated for 16 queue
    pairs). Works on any Topology, with each link's share of a spread flow under adaptive
    routing; the load of a link over its bandwidth is its drain time.
    """
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    src = int_array(src, "src", error=TopologyError).ravel()
    dst = int_array(dst, "dst", error=TopologyError).ravel()
    if len(src) != len(dst):
        raise TopologyError(f"src has {len(src)} flows but dst has {len(dst)}")
    try:
        size = np.asarray(flow_bytes, dtype=float)
    except (TypeError, ValueError):
        raise CollectivesError(
            f"flow_bytes must be one number or one per flow, got {flow_bytes!r}"
        ) from None
    if size.ndim == 0:
        size = np.full(len(src), float(size))
    elif size.ravel().shape != (len(src),):
        raise CollectivesError(
            f"flow_bytes must be one number or one per flow ({len(src)}), got shape {size.shape}"
        )
    size = size.ravel()
    if not np.all(np.isfinite(size)) or np.any(size < 0):
        raise CollectivesError("flow_bytes must be finite and >= 0")
    remote = np.flatnonzero(src != dst)
    if flow_id is None:
        pair, link, share = topology.link_shares(src[remote], dst[remote])
    else:
        if not isinstance(topology, Cluster):
            raise TopologyError(
                f"flow_id needs a fabric (a cluster built by "
                f"collectives.topology.gpu_cluster, cluster, fabric.clos, "
                f"fat_tree or layered), got {topology.name!r}"
            )
        flow = np.asarray(flow_id)
        if flow.ndim:
            flow = flow.ravel()
            if len(flow) != len(src):
                raise TopologyError(f"flow_id has {len(flow)} entries for {len(src)} pairs")
            flow = flow[remote]
        pair, link, share = topology.link_shares(src[remote], dst[remote], flow_id=flow)
    return np.bincount(link, weights=size[remote][pair] * share, minlength=topology.n_links)
