"""Topologies: endpoints, optional NICs and switches, directed links, and a routing rule.

``cl.topology.ring(...)``, ``chain``, ``torus``, ``switch`` (:mod:`.basic`), ``product``
(:mod:`.product`) and the GPU clusters (:mod:`.cluster`: the one builder
:func:`gpu_cluster` and the SuperPOD-style :func:`cluster`) all return a
:class:`~collectives.topology.core.Topology` (:mod:`.core`) whose :class:`TopologyInfo`
declares what it is. :mod:`.hashing` is the one flow hash every ECMP choice reads.
Taught in chapter "Cost models and the ring all-gather" and the cluster chapters.
"""

from . import hashing
from .basic import chain, ring, switch, torus
from .cluster import LEVELS, ROUTINGS, Cluster, Fabric, Tier, cluster, gpu_cluster, tier_level
from .core import ROLES, FabricInfo, Topology, TopologyInfo
from .product import product

# Public names report their public home, as before the package was split into modules:
# learners' feedback and the graded re-run name them "collectives.topology.ring" and so on.
for _public in (
    Topology,
    TopologyInfo,
    FabricInfo,
    ring,
    chain,
    torus,
    switch,
    product,
    cluster,
    gpu_cluster,
    Cluster,
    Fabric,
    Tier,
    tier_level,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "Topology",
    "TopologyInfo",
    "FabricInfo",
    "ROLES",
    "ring",
    "chain",
    "torus",
    "switch",
    "product",
    "cluster",
    "gpu_cluster",
    "Cluster",
    "Fabric",
    "Tier",
    "LEVELS",
    "ROUTINGS",
    "tier_level",
    "hashing",
]
