"""NCCL's own latency model of an all-reduce across nodes: the constants of its tuner.

NCCL 2.30.7 (``src/graph/tuning.cc``, :data:`collectives.hardware.systems.NCCL_TUNING_CC`)
picks an algorithm and protocol by adding a fixed base latency to a per-step latency for every
step inside a node (NVLink) and across nodes (the network). :func:`nccl_allreduce_latency`
redoes that sum for a ring and a tree under the protocols LL and LL128, as
``ncclTopoTuneModel`` computes it for a multi-node job. It is NCCL's estimate, not a
measurement, and it leaves out the topology's extra ``latencyInter``, the Simple protocol
(which costs more still) and every bandwidth term: it answers "how many microseconds before
the first byte counts", the part the chapter "Collectives across nodes" compares between a
ring of 2(n - 1) steps and a tree of 2 log2(nodes) network steps.
"""

from __future__ import annotations

import math

from ..errors import CollectivesError
from ..validation import choice, integer

__all__ = [
    "BASE_LATENCY",
    "NVLINK_LATENCY",
    "NET_LATENCY",
    "NET_OVERHEAD",
    "nccl_allreduce_latency",
]

#: baseLatencies of tuning.cc, microseconds, by (algorithm, protocol)
BASE_LATENCY = {
    ("ring", "LL128"): 14.0,
    ("tree", "LL128"): 14.0,
    ("ring", "LL"): 6.6,
    ("tree", "LL"): 6.8,
}
#: hwLatencies[NCCL_HW_NVLINK] of tuning.cc, microseconds per step inside a node
NVLINK_LATENCY = {
    ("ring", "LL128"): 1.9,
    ("tree", "LL128"): 1.25,
    ("ring", "LL"): 0.6,
    ("tree", "LL"): 0.6,
}
#: hwLatencies[NCCL_HW_NET] of tuning.cc, microseconds per step across nodes
NET_LATENCY = {
    ("ring", "LL128"): 4.0,
    ("tree", "LL128"): 8.5,
    ("ring", "LL"): 2.7,
    ("tree", "LL"): 5.0,
}
#: getNetOverhead() on an Intel host, microseconds per ring step (x3 for Simple only)
NET_OVERHEAD = 1.0


def nccl_allreduce_latency(algo: str, n_ranks: int, n_nodes: int, proto: str = "LL128") -> float:
    """NCCL's modelled latency of an all-reduce over ``n_ranks`` GPUs on ``n_nodes`` nodes, in
    microseconds, for ``algo`` ("ring" or "tree") under ``proto`` ("LL128" or "LL").

    A ring takes 2(n_ranks - 1) steps, 2(n_nodes - 1) of them across nodes; every step inside a
    node costs at least the network overhead (NCCL: "inter-node rings still have to launch
    nsteps * net overhead"). A tree climbs and descends the GPUs of a node and floor(log2
    n_nodes) network levels. Raises :class:`~collectives.errors.CollectivesError` on an unknown
    algorithm or protocol, or ranks that do not fill the nodes evenly.
    """
    choice(algo, "algo", ("ring", "tree"))
    choice(proto, "proto", ("LL128", "LL"))
    nodes = integer(n_nodes, "n_nodes", minimum=1)
    ranks = integer(n_ranks, "n_ranks", minimum=nodes)
    if ranks % nodes:
        raise CollectivesError(
            f"n_ranks ({ranks}) must be a multiple of n_nodes ({nodes}): "
            "NCCL's model puts the same number of GPUs on every node"
        )
    key = (algo, proto)
    inter = NET_LATENCY[key]
    if algo == "ring":
        intra = max(NVLINK_LATENCY[key], NET_OVERHEAD)
        steps, inter_steps = 2 * (ranks - 1), 2 * (nodes - 1)
        return BASE_LATENCY[key] + (steps - inter_steps) * intra + inter_steps * inter
    levels = int(math.floor(math.log2(nodes)))
    return BASE_LATENCY[key] + 2 * ((ranks // nodes - 1) * NVLINK_LATENCY[key] + levels * inter)
