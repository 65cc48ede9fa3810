"""The catalogue: every algorithm of :mod:`collectives.algorithms` with its collective, the
rank counts it supports and the topology it is designed for.

:data:`CATALOG` maps a name to an :class:`Algorithm` whose ``build(n)`` makes the schedule for
``n`` ranks with a uniform signature (torus algorithms pick the most square 2-D shape of n
ranks, see :func:`square_shape`), so that tests, benchmarks, the chooser
(:mod:`collectives.algorithms.choose`) and chapters can loop over all of them. Adding an
algorithm to the package means one line here. Left out of the catalogue: the algorithms
whose signature is not ``build(n)`` (hierarchical and multi-slice ones take node and slice
counts, NCCL's own take nodes and GPUs per node, point-to-point ones take peers) and the
in-network ones, which need a switch participant on the topology.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import CollectivesError
from .alltoall import (
    bidirectional_ring_all_to_all,
    bruck_all_to_all,
    chain_all_to_all,
    chain_farthest_first_all_to_all,
    pairwise_all_to_all,
    ring_all_to_all,
)
from .chain import chain_all_gather, chain_broadcast, chain_reduce_scatter
from .checks import rank_count
from .direct import direct_all_gather, direct_all_to_all
from .p2p import direct_gather, direct_scatter
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
from .torus import torus_all_gather, torus_all_reduce, torus_all_to_all, torus_reduce_scatter
from .tree import binomial_tree_broadcast, binomial_tree_reduce, double_binary_tree_all_reduce

if TYPE_CHECKING:
    from ..schedule import Schedule

__all__ = ["Algorithm", "CATALOG", "supports", "square_shape"]


def square_shape(n: int) -> tuple[int, int]:
    """The most square 2-D torus shape (a, b) with a * b = n and a <= b."""
    a = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return (a, n // a)


@dataclass(frozen=True)
class Algorithm:
    """A catalogue entry: ``build(n, **options)`` makes the schedule for n ranks; ``topology``
    names the wiring it is designed for ("ring", "chain", "switch" or "torus")."""

    name: str
    build: Callable[..., Schedule]
    collective: str
    topology: str
    power_of_two_only: bool = False


def _torus(builder, **options):
    def build(n):
        return builder(square_shape(rank_count(n)), **options)

    return build


CATALOG = {
    a.name: a
    for a in (
        # all-gather
        Algorithm("ring_all_gather", ring_all_gather, "all_gather", "ring"),
        Algorithm(
            "bidirectional_ring_all_gather", bidirectional_ring_all_gather, "all_gather", "ring"
        ),
        Algorithm(
            "latency_optimal_ring_all_gather", latency_optimal_ring_all_gather, "all_gather", "ring"
        ),
        Algorithm("chain_all_gather", chain_all_gather, "all_gather", "chain"),
        Algorithm(
            "recursive_doubling_all_gather",
            recursive_doubling_all_gather,
            "all_gather",
            "switch",
            power_of_two_only=True,
        ),
        Algorithm("direct_all_gather", direct_all_gather, "all_gather", "switch"),
        Algorithm("torus_all_gather", _torus(torus_all_gather), "all_gather", "torus"),
        Algorithm(
            "torus_all_gather_concurrent",
            _torus(torus_all_gather, concurrent=True),
            "all_gather",
            "torus",
        ),
        # reduce-scatter
        Algorithm("ring_reduce_scatter", ring_reduce_scatter, "reduce_scatter", "ring"),
        Algorithm(
            "bidirectional_ring_reduce_scatter",
            bidirectional_ring_reduce_scatter,
            "reduce_scatter",
            "ring",
        ),
        Algorithm(
            "latency_optimal_ring_reduce_scatter",
            latency_optimal_ring_reduce_scatter,
            "reduce_scatter",
            "ring",
        ),
        Algorithm("chain_reduce_scatter", chain_reduce_scatter, "reduce_scatter", "chain"),
        Algorithm(
            "recursive_halving_reduce_scatter",
            recursive_halving_reduce_scatter,
            "reduce_scatter",
            "switch",
            power_of_two_only=True,
        ),
        Algorithm("torus_reduce_scatter", _torus(torus_reduce_scatter), "reduce_scatter", "torus"),
        Algorithm(
            "torus_reduce_scatter_concurrent",
            _torus(torus_reduce_scatter, concurrent=True),
            "reduce_scatter",
            "torus",
        ),
        # all-reduce
        Algorithm("ring_all_reduce", ring_all_reduce, "all_reduce", "ring"),
        Algorithm(
            "bidirectional_ring_all_reduce", bidirectional_ring_all_reduce, "all_reduce", "ring"
        ),
        Algorithm(
            "latency_optimal_ring_all_reduce", latency_optimal_ring_all_reduce, "all_reduce", "ring"
        ),
        Algorithm(
            "rabenseifner_all_reduce",
            rabenseifner_all_reduce,
            "all_reduce",
            "switch",
            power_of_two_only=True,
        ),
        Algorithm(
            "recursive_doubling_all_reduce",
            recursive_doubling_all_reduce,
            "all_reduce",
            "switch",
            power_of_two_only=True,
        ),
        Algorithm(
            "double_binary_tree_all_reduce", double_binary_tree_all_reduce, "all_reduce", "switch"
        ),
        Algorithm("torus_all_reduce", _torus(torus_all_reduce), "all_reduce", "torus"),
        Algorithm(
            "torus_all_reduce_concurrent",
            _torus(torus_all_reduce, concurrent=True),
            "all_reduce",
            "torus",
        ),
        # all-to-all
        Algorithm("ring_all_to_all", ring_all_to_all, "all_to_all", "ring"),
        Algorithm(
            "bidirectional_ring_all_to_all", bidirectional_ring_all_to_all, "all_to_all", "ring"
        ),
        Algorithm("chain_all_to_all", chain_all_to_all, "all_to_all", "chain"),
        Algorithm(
            "chain_farthest_first_all_to_all",
            chain_farthest_first_all_to_all,
            "all_to_all",
            "chain",
        ),
        Algorithm("direct_all_to_all", direct_all_to_all, "all_to_all", "switch"),
        Algorithm("pairwise_all_to_all", pairwise_all_to_all, "all_to_all", "switch"),
        Algorithm("bruck_all_to_all", bruck_all_to_all, "all_to_all", "switch"),
        Algorithm("torus_all_to_all", _torus(torus_all_to_all), "all_to_all", "torus"),
        # rooted
        Algorithm("binomial_tree_broadcast", binomial_tree_broadcast, "broadcast", "switch"),
        Algorithm("chain_broadcast", chain_broadcast, "broadcast", "chain"),
        Algorithm("binomial_tree_reduce", binomial_tree_reduce, "reduce", "switch"),
        Algorithm("direct_gather", direct_gather, "gather", "switch"),
        Algorithm("direct_scatter", direct_scatter, "scatter", "switch"),
    )
}


def supports(name: str, n: int) -> bool:
    """Whether catalogue algorithm ``name`` accepts ``n`` ranks."""
    algorithm = CATALOG.get(name) if isinstance(name, str) else None
    if algorithm is None:
        raise CollectivesError(f"unknown algorithm {name!r}; see collectives.algorithms.CATALOG")
    return n >= 1 and (not algorithm.power_of_two_only or n & (n - 1) == 0)
