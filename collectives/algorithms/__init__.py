"""Collective algorithms, each a function ``name(n, ...) -> Schedule``.

:data:`CATALOG` lists every algorithm with its collective and the rank counts it supports,
so tests, benchmarks and chapters can loop over all of them.
"""

from dataclasses import dataclass
from typing import Callable

from .direct import direct_all_gather, direct_all_to_all
from .recursive import recursive_doubling_all_gather, recursive_halving_reduce_scatter
from .ring import (
    bidirectional_ring_all_gather,
    bidirectional_ring_all_reduce,
    bidirectional_ring_reduce_scatter,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
)
from .tree import binomial_tree_broadcast, binomial_tree_reduce

__all__ = [
    "Algorithm", "CATALOG", "supports",
    "ring_all_gather", "ring_reduce_scatter", "ring_all_reduce",
    "bidirectional_ring_all_gather", "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
    "recursive_doubling_all_gather", "recursive_halving_reduce_scatter",
    "direct_all_gather", "direct_all_to_all",
    "binomial_tree_broadcast", "binomial_tree_reduce",
]


@dataclass(frozen=True)
class Algorithm:
    """A catalogue entry: the builder, its collective, and which n it accepts."""

    name: str
    build: Callable
    collective: str
    power_of_two_only: bool = False


CATALOG = {
    a.name: a
    for a in (
        Algorithm("ring_all_gather", ring_all_gather, "all_gather"),
        Algorithm("bidirectional_ring_all_gather", bidirectional_ring_all_gather, "all_gather"),
        Algorithm("recursive_doubling_all_gather", recursive_doubling_all_gather, "all_gather",
                  power_of_two_only=True),
        Algorithm("direct_all_gather", direct_all_gather, "all_gather"),
        Algorithm("ring_reduce_scatter", ring_reduce_scatter, "reduce_scatter"),
        Algorithm("bidirectional_ring_reduce_scatter", bidirectional_ring_reduce_scatter,
                  "reduce_scatter"),
        Algorithm("recursive_halving_reduce_scatter", recursive_halving_reduce_scatter,
                  "reduce_scatter", power_of_two_only=True),
        Algorithm("ring_all_reduce", ring_all_reduce, "all_reduce"),
        Algorithm("bidirectional_ring_all_reduce", bidirectional_ring_all_reduce, "all_reduce"),
        Algorithm("direct_all_to_all", direct_all_to_all, "all_to_all"),
        Algorithm("binomial_tree_broadcast", binomial_tree_broadcast, "broadcast"),
        Algorithm("binomial_tree_reduce", binomial_tree_reduce, "reduce"),
    )
}


def supports(name, n):
    """Whether catalogue algorithm ``name`` accepts ``n`` ranks."""
    algorithm = CATALOG[name]
    return n >= 1 and (not algorithm.power_of_two_only or n & (n - 1) == 0)
