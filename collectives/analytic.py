"""Closed-form costs in the alpha-beta model, as the chapters derive them.

Every function takes ``n`` ranks, ``nbytes`` (nccl-tests' S: the whole buffer one rank
holds when the collective is done), ``alpha`` (seconds of latency per message) and
``bandwidth`` (bytes/s per link direction) and returns seconds. A message of m bytes
costs ``alpha + m / bandwidth`` (Hockney's model). On a ring or chain topology alpha is
the hop latency; through a switch a message crosses two links, so alpha is twice the
hop latency. :func:`collectives.time` must agree with these on uncontended topologies;
the tests hold it to them. Taught in chapter "Cost models and the ring all-gather".
"""

import math

from .errors import CollectivesError

__all__ = [
    "ring_all_gather", "ring_reduce_scatter", "ring_all_reduce",
    "bidirectional_ring_all_gather", "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
    "recursive_doubling_all_gather", "recursive_halving_reduce_scatter",
    "direct_all_gather", "direct_all_to_all",
    "binomial_tree_broadcast", "binomial_tree_reduce",
    "ring_crossover_bytes",
]


def _check(n, nbytes, alpha, bandwidth):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise CollectivesError(f"n must be an integer >= 1, got {n!r}")
    for what, v in (("nbytes", nbytes), ("alpha", alpha)):
        if not math.isfinite(v) or v < 0:
            raise CollectivesError(f"{what} must be finite and >= 0, got {v!r}")
    if not math.isfinite(bandwidth) or bandwidth <= 0:
        raise CollectivesError(f"bandwidth must be finite and > 0 (bytes/s), got {bandwidth!r}")


def ring_all_gather(n, nbytes, alpha, bandwidth):
    """(n-1) steps, each moving one shard S/n per link: (n-1)(alpha + S/(n B))."""
    _check(n, nbytes, alpha, bandwidth)
    return (n - 1) * (alpha + nbytes / (n * bandwidth))


def ring_reduce_scatter(n, nbytes, alpha, bandwidth):
    """The mirror of the all-gather: the same (n-1)(alpha + S/(n B))."""
    return ring_all_gather(n, nbytes, alpha, bandwidth)


def ring_all_reduce(n, nbytes, alpha, bandwidth):
    """Reduce-scatter then all-gather: 2(n-1)(alpha + S/(n B))."""
    return 2 * ring_all_gather(n, nbytes, alpha, bandwidth)


def bidirectional_ring_all_gather(n, nbytes, alpha, bandwidth):
    """Half of each shard goes each way: (n-1)(alpha + S/(2 n B)).

    With n = 2 both halves share the single link between the two ranks, so there is no
    gain over the unidirectional ring.
    """
    _check(n, nbytes, alpha, bandwidth)
    if n <= 2:
        return ring_all_gather(n, nbytes, alpha, bandwidth)
    return (n - 1) * (alpha + nbytes / (2 * n * bandwidth))


def bidirectional_ring_reduce_scatter(n, nbytes, alpha, bandwidth):
    """Same as the bidirectional all-gather."""
    return bidirectional_ring_all_gather(n, nbytes, alpha, bandwidth)


def bidirectional_ring_all_reduce(n, nbytes, alpha, bandwidth):
    """Twice the bidirectional all-gather."""
    return 2 * bidirectional_ring_all_gather(n, nbytes, alpha, bandwidth)


def recursive_doubling_all_gather(n, nbytes, alpha, bandwidth):
    """log2(n) steps moving 1, 2, 4, ... shards: log2(n) alpha + (n-1) S / (n B)."""
    _check(n, nbytes, alpha, bandwidth)
    return math.log2(n) * alpha + (n - 1) * nbytes / (n * bandwidth)


def recursive_halving_reduce_scatter(n, nbytes, alpha, bandwidth):
    """The mirror of recursive doubling: log2(n) alpha + (n-1) S / (n B)."""
    return recursive_doubling_all_gather(n, nbytes, alpha, bandwidth)


def direct_all_gather(n, nbytes, alpha, bandwidth):
    """One step; each rank's link carries n-1 shards: alpha + (n-1) S / (n B)."""
    _check(n, nbytes, alpha, bandwidth)
    return 0.0 if n == 1 else alpha + (n - 1) * nbytes / (n * bandwidth)


def direct_all_to_all(n, nbytes, alpha, bandwidth):
    """One step; each rank sends n-1 parts of S/n: alpha + (n-1) S / (n B)."""
    return direct_all_gather(n, nbytes, alpha, bandwidth)


def binomial_tree_broadcast(n, nbytes, alpha, bandwidth):
    """ceil(log2 n) steps of the whole buffer: ceil(log2 n)(alpha + S / B)."""
    _check(n, nbytes, alpha, bandwidth)
    return math.ceil(math.log2(n)) * (alpha + nbytes / bandwidth)


def binomial_tree_reduce(n, nbytes, alpha, bandwidth):
    """The broadcast tree run backwards: the same cost."""
    return binomial_tree_broadcast(n, nbytes, alpha, bandwidth)


def ring_crossover_bytes(n, alpha, bandwidth):
    """The buffer size S at which a ring step's latency equals its transfer time:
    alpha = S / (n B), so S = n alpha B. Below it the ring is latency-bound."""
    _check(n, 0.0, alpha, bandwidth)
    return n * alpha * bandwidth
