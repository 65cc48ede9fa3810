"""Datacenter fabrics: folded-Clos and fat-tree builders with up/down ECMP routing
(:mod:`~collectives.fabric.builders`: :func:`clos`, :func:`fat_tree`, :func:`link_loads`,
:func:`bisection_bandwidth`), and the balls-into-bins arithmetic of hash collisions
(:mod:`~collectives.fabric.ecmp`). Each module's docstring says what it models and what it
leaves out. Taught in chapter "The datacenter fabric".
"""

from .builders import (ECMP_MODES, FabricTopology, bisection_bandwidth, clos, fat_tree,
                       link_loads)
from .ecmp import (ecmp_collision_probability, ecmp_no_collision_probability,
                   expected_max_load, expected_max_load_exact, load_imbalance,
                   max_load_distribution)

__all__ = [
    "FabricTopology", "fat_tree", "clos", "ECMP_MODES",
    "bisection_bandwidth", "link_loads", "load_imbalance",
    "ecmp_no_collision_probability", "ecmp_collision_probability",
    "expected_max_load", "max_load_distribution", "expected_max_load_exact",
]
