"""Datacenter fabrics: folded-Clos and fat-tree builders with up/down routing
(:mod:`~collectives.fabric.builders`: :func:`clos`, :func:`fat_tree`, :func:`link_loads`),
and the balls-into-bins arithmetic of hash collisions (:mod:`~collectives.fabric.ecmp`);
layered fabrics with oversubscription at any tier, per-tier speeds, planes, rails and
failures (:mod:`~collectives.fabric.layered`, :func:`layered`; Meta's cluster,
:func:`meta_cluster`, now lives in :mod:`collectives.hardware.meta`); flows, max-min fair
rates and engineered routes (:mod:`~collectives.fabric.flows`); design arithmetic and PFC
headroom (:mod:`~collectives.fabric.sizing`); PFC deadlock as a cycle of buffer
dependencies (:mod:`~collectives.fabric.deadlock`). Every builder here is the one
GPU-cluster builder (:func:`collectives.topology.gpu_cluster`) with one router and one flow
hash;
``bisection_bandwidth`` and ``fabric_bisection`` are the one entry point
:func:`collectives.measures.bisection_bandwidth`. Each module's docstring says what it
models and what it leaves out. Taught in chapter "Designing the fabric".
"""

from .builders import (
    ECMP_MODES,
    FabricTopology,
    bisection_bandwidth,
    clos,
    clos_fabric,
    fat_tree,
    link_loads,
    realise_ratio,
)
from .deadlock import buffer_dependencies, dependency_cycle, node_path_links
from .ecmp import (
    ecmp_collision_probability,
    ecmp_efficiency,
    ecmp_no_collision_probability,
    expected_max_load,
    expected_max_load_exact,
    load_imbalance,
    max_load_distribution,
    max_load_estimate,
    qps_for_efficiency,
)
from .flows import (
    SCHEMES,
    Flows,
    cable_flows,
    collective_time,
    max_min_rates,
    reroute,
    route_flows,
    step_time,
)
from .layered import LayeredFabric, Tier, layered
from .presets import META_SOURCES, meta_cluster
from .sizing import (
    clos_count,
    clos_counts,
    fabric_bisection,
    failure_slowdown,
    fat_tree_counts,
    leaf_spine_bisection,
    mlx5_xoff,
    pfc_headroom,
)

__all__ = [
    "FabricTopology",
    "fat_tree",
    "clos",
    "clos_fabric",
    "realise_ratio",
    "ECMP_MODES",
    "bisection_bandwidth",
    "link_loads",
    "load_imbalance",
    "ecmp_no_collision_probability",
    "ecmp_collision_probability",
    "expected_max_load",
    "max_load_distribution",
    "expected_max_load_exact",
    "max_load_estimate",
    "Tier",
    "LayeredFabric",
    "layered",
    "meta_cluster",
    "META_SOURCES",
    "Flows",
    "SCHEMES",
    "route_flows",
    "max_min_rates",
    "step_time",
    "collective_time",
    "reroute",
    "cable_flows",
    "fabric_bisection",
    "fat_tree_counts",
    "clos_counts",
    "clos_count",
    "leaf_spine_bisection",
    "failure_slowdown",
    "ecmp_efficiency",
    "qps_for_efficiency",
    "pfc_headroom",
    "mlx5_xoff",
    "buffer_dependencies",
    "dependency_cycle",
    "node_path_links",
]
