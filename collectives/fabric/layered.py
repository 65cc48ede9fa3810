"""Layered fabrics: any number of tiers, each with its own switch count, parallel links and
link speed, so oversubscription can sit at any tier; dual-plane and rail-optimised hosts;
links and switches that fail.

**What is modelled.** :func:`layered` is the one GPU-cluster builder
(:func:`collectives.topology.gpu_cluster`) on hosts without NVLink: tier 1 is the leaf
(ToR, "RTSW") tier, ``hosts_per_leaf`` hosts per leaf on host cables of ``host_bandwidth``
bytes/s per direction. Every tier above is a :class:`Tier`: a tier-t *block* joins
``blocks`` blocks of the tier below (a zone joins 252 racks, the aggregation tier joins 8
zones) through ``switches`` switches, and every switch of those child blocks has ``links``
parallel cables to every switch of its block (a full mesh between adjacent tiers, the way
leaf-spine fabrics are cabled), each of ``bandwidth`` bytes/s per direction. The top tier
has one block. A tier-(t-1) switch thus has ``switches * links`` uplinks, and its
downlink:uplink capacity ratio is that tier's *oversubscription*
(:attr:`LayeredFabric.oversubscription`, one value per tier below the top; below 1 means
spare uplinks, as Meta's racks have).

``planes`` > 1 repeats everything above the hosts: each host has one port into each plane
(Alibaba HPN's dual-plane design) and a flow stays in the plane its hash picks.
``gpus_per_node`` makes the leaves rail-optimised: GPU ``g`` of every node under a rail
group shares leaf ``g`` of that group (NVIDIA SuperPOD wiring); ranks stay
``node * gpus_per_node + g``. NVLink inside the node is not part of this Topology
(:func:`collectives.topology.cluster` and :func:`collectives.topology.gpu_cluster` model it).

**Routing** is up/down: up to the lowest tier whose block holds both leaves, then down. At
each hop with a choice (which plane, which uplink, which parallel cable, which switch of
the child block on the way down) the package's one flow hash of ``(src, dst, flow_id)``
picks among the usable candidates, like per-flow ECMP (``routing="hash"``; "dmodk" and
"adaptive" as :func:`~collectives.topology.gpu_cluster` says). After
:meth:`LayeredFabric.fail` only live links are usable, and only towards switches that can
still reach the destination's leaf (the way routing protocols withdraw routes), so traffic
reroutes; a hashed choice then takes the ``(c mod live)``-th live candidate, so a failure
shifts every flow above the failed one by one candidate (and wraps the last onto the
first): an order-preserving stand-in for ECMP without resilient hashing, whose
hash-threshold ranges (RFC 2992) are recomputed and re-spread a large part of the flows.
Resilient hashing, which moves only the failed candidate's flows, is left out.

**Left out:** queues, buffers, PFC, ECN and congestion control; NIC and PCIe limits;
cabling other than the full mesh (or stripes) between adjacent tiers. Taught in chapter
"Designing the fabric".
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ..errors import TopologyError
from ..topology import Cluster, Fabric, Tier, gpu_cluster
from ..validation import integer, number

__all__ = ["Tier", "LayeredFabric", "layered"]

#: the class of every layered fabric (the one cluster class; the old name stays)
LayeredFabric = Cluster


def layered(
    hosts_per_leaf: int,
    host_bandwidth: float,
    tiers: Sequence[Tier] = (),
    *,
    planes: int = 1,
    gpus_per_node: Optional[int] = None,
    wiring: str = "mesh",
    hop_latency: float = 0.0,
    hash_seed: int = 0,
    name: Optional[str] = None,
    sources: Sequence[str] = (),
    routing: str = "hash",
) -> Cluster:
    """A layered fabric (see the module docstring): leaves of ``hosts_per_leaf`` hosts on
    ``host_bandwidth`` bytes/s cables, then one :class:`Tier` per tier above.

    ``wiring``: "mesh" (every child switch to every switch of its parent block) or
    "striped" (child switch i to parent switches ``i*q .. i*q+q-1``, ``q`` = parent
    switches / child switches per block, as a fat tree's planes; the leaves always mesh).
    ``planes``: copies of the switch fabric, one host port into each. ``gpus_per_node``:
    rail-optimised leaves. ``hop_latency``: seconds per link. ``hash_seed``: the ECMP seed;
    ``routing``: one of :data:`collectives.topology.ROUTINGS`.
    """
    a = integer(hosts_per_leaf, "hosts_per_leaf", minimum=1, error=TopologyError)
    bw1 = number(
        host_bandwidth,
        "host_bandwidth",
        positive=True,
        unit="bytes/s per direction",
        error=TopologyError,
    )
    latency = number(hop_latency, "hop_latency", unit="seconds", error=TopologyError)
    P = integer(planes, "planes", minimum=1, error=TopologyError)
    if wiring not in ("mesh", "striped"):
        raise TopologyError(f"wiring must be 'mesh' or 'striped', got {wiring!r}")
    if isinstance(hash_seed, bool) or not isinstance(hash_seed, (int, np.integer)):
        raise TopologyError(f"hash_seed must be an integer, got {hash_seed!r}")
    tiers = tuple(tiers)
    for i, tier in enumerate(tiers):
        if not isinstance(tier, Tier):
            raise TopologyError(
                f"tiers[{i}] must be a fabric.Tier(blocks, switches, links, "
                f"bandwidth), got {tier!r}"
            )
    rails = gpus_per_node is not None
    g = (
        1
        if gpus_per_node is None
        else integer(gpus_per_node, "gpus_per_node", minimum=1, error=TopologyError)
    )
    leaves = math.prod(
        integer(t.blocks, f"tiers[{i}].blocks", minimum=1, error=TopologyError)
        for i, t in enumerate(tiers)
    )
    hosts = a * leaves
    if name is None:
        name = (
            f"{len(tiers) + 1}-tier layered fabric, {hosts} hosts"
            + (f", {P} planes" if P > 1 else "")
            + (", rail-optimised" if rails else "")
        )
    fabric = Fabric(a, bw1, tiers, wiring=wiring, planes=P, rails=rails)
    n_nodes = leaves // g * a if rails else hosts
    if rails and leaves % g:
        n_nodes = max(1, n_nodes)  # the builder names the rail group mismatch
    return gpu_cluster(
        fabric,
        n_nodes,
        g,
        network_latency=latency,
        routing=routing,
        hash_seed=hash_seed,
        family="layered",
        name=name,
        sources=sources,
    )
