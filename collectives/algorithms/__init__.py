"""Collective algorithms, each a function returning a :class:`~collectives.Schedule`.

One module per family (``ring``, ``chain``, ``recursive``, ``direct``, ``tree``, ``alltoall``,
``torus``, ``hierarchical``, ``innetwork``, ``nccl``, ``p2p``); :mod:`~.catalog` lists every
algorithm with its collective, the rank counts it supports and the topology it is designed
for (:data:`CATALOG`, :func:`supports`, :func:`square_shape`); :mod:`~.choose` picks the
fastest on a topology (:func:`fastest`). Every public name of these modules is re-exported
here; :mod:`~.checks` holds the builders' shared argument checks.
"""

from .alltoall import (
    bidirectional_ring_all_to_all,
    bruck_all_to_all,
    chain_all_to_all,
    chain_farthest_first_all_to_all,
    pairwise_all_to_all,
    ring_all_to_all,
)
from .catalog import CATALOG, Algorithm, square_shape, supports
from .chain import chain_all_gather, chain_broadcast, chain_reduce_scatter
from .choose import Choice, fastest
from .direct import direct_all_gather, direct_all_to_all
from .hierarchical import (
    hierarchical_all_gather,
    hierarchical_all_reduce,
    hierarchical_all_to_all,
    hierarchical_reduce_scatter,
    multislice_all_reduce,
    two_level_ring_all_reduce,
)
from .innetwork import (
    nvls_all_reduce,
    nvls_collnet_all_reduce,
    nvls_tree_all_reduce,
    sharp_all_reduce,
)
from .nccl import (
    nccl_ring_all_gather,
    nccl_ring_all_reduce,
    nccl_ring_reduce_scatter,
    nccl_rings,
    nccl_tree_all_reduce,
    nccl_trees,
)
from .p2p import collective_permute, direct_gather, direct_scatter, pipeline_shift, send_recv
from .recursive import (
    rabenseifner_all_reduce,
    recursive_doubling_all_gather,
    recursive_doubling_all_reduce,
    recursive_halving_reduce_scatter,
)
from .ring import (
    bidirectional_ring_all_gather,
    bidirectional_ring_all_reduce,
    bidirectional_ring_reduce_scatter,
    latency_optimal_ring_all_gather,
    latency_optimal_ring_all_reduce,
    latency_optimal_ring_reduce_scatter,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
)
from .torus import (
    axis_groups,
    torus_all_gather,
    torus_all_reduce,
    torus_all_to_all,
    torus_reduce_scatter,
)
from .tree import (
    binomial_tree_broadcast,
    binomial_tree_reduce,
    depth_and_height,
    double_binary_tree_all_reduce,
    double_binary_trees,
)

__all__ = [
    "Algorithm",
    "CATALOG",
    "supports",
    "square_shape",
    "fastest",
    "Choice",
    "ring_all_gather",
    "ring_reduce_scatter",
    "ring_all_reduce",
    "bidirectional_ring_all_gather",
    "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
    "latency_optimal_ring_all_gather",
    "latency_optimal_ring_reduce_scatter",
    "latency_optimal_ring_all_reduce",
    "chain_all_gather",
    "chain_reduce_scatter",
    "chain_broadcast",
    "recursive_doubling_all_gather",
    "recursive_halving_reduce_scatter",
    "rabenseifner_all_reduce",
    "recursive_doubling_all_reduce",
    "direct_all_gather",
    "direct_all_to_all",
    "binomial_tree_broadcast",
    "binomial_tree_reduce",
    "double_binary_tree_all_reduce",
    "ring_all_to_all",
    "bidirectional_ring_all_to_all",
    "chain_all_to_all",
    "chain_farthest_first_all_to_all",
    "pairwise_all_to_all",
    "bruck_all_to_all",
    "torus_all_gather",
    "torus_reduce_scatter",
    "torus_all_reduce",
    "torus_all_to_all",
    "nvls_all_reduce",
    "sharp_all_reduce",
    "nvls_tree_all_reduce",
    "nvls_collnet_all_reduce",
    "hierarchical_all_reduce",
    "two_level_ring_all_reduce",
    "multislice_all_reduce",
    "hierarchical_all_gather",
    "hierarchical_reduce_scatter",
    "hierarchical_all_to_all",
    "collective_permute",
    "send_recv",
    "pipeline_shift",
    "direct_gather",
    "direct_scatter",
    "double_binary_trees",
    "nccl_tree_all_reduce",
    "nccl_ring_all_reduce",
    "nccl_ring_all_gather",
    "nccl_ring_reduce_scatter",
    "nccl_rings",
    "nccl_trees",
    "depth_and_height",
    "axis_groups",
]
