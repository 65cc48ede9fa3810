"""Ring algorithms: every rank talks only to its ring neighbours.

Unidirectional rings send one chunk per rank per step forward (rank r to r+1); an
all-gather or reduce-scatter over n ranks takes n-1 steps and moves (n-1)/n of the buffer
over each link. Two bidirectional forms use both directions of every link:

* ``bidirectional_ring_*`` splits every shard in two halves that travel opposite ways round
  the whole ring: n-1 steps of half a shard, (n-1)S/(2n) per link direction;
* ``latency_optimal_ring_*`` sends every whole shard both ways, each copy only half-way
  round (the antipodal shard of an even ring split between the two ways): floor(n/2)
  steps, the ring's diameter, and the same (n-1)S/(2n) per link direction. This is the
  bidirectional all-gather of The Scaling Book ("Sharded matrices", |X|/2 hops), and no
  ring schedule has fewer steps or fewer bytes per link direction.

The all-reduce is a reduce-scatter followed by an all-gather (:func:`collectives.compose`);
each reduce-scatter is the dual of its all-gather. Taught in chapters "Cost models and the
ring all-gather", "All-gather" and "TPU cluster topology".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule, compose
from ..traffic import Traffic
from ..transforms import dual
from .checks import rank_count

__all__ = [
    "ring_all_gather",
    "ring_reduce_scatter",
    "ring_all_reduce",
    "bidirectional_ring_all_gather",
    "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
    "latency_optimal_ring_all_gather",
    "latency_optimal_ring_reduce_scatter",
    "latency_optimal_ring_all_reduce",
]


def _grid(n):
    """(step, rank) for every rank in each of the n-1 steps, flattened step-major."""
    step = np.repeat(np.arange(n - 1), n)
    rank = np.tile(np.arange(n), n - 1)
    return step, rank


def _one_way(n):
    """Every step of a unidirectional ring: rank r sends one chunk to r + 1."""
    r = np.arange(n)
    return Traffic.run(n - 1, r, (r + 1) % n)


def _two_way_traffic(n):
    """Every step of a bidirectional ring: one chunk to each neighbour."""
    r = np.arange(n)
    return Traffic.run(n - 1, np.repeat(r, 2), np.stack([(r + 1) % n, (r - 1) % n], 1).ravel())


def _listing(step, src, dst, chunk, reduce):
    return {
        "step": step,
        "src": src,
        "dst": dst,
        "src_chunk": chunk,
        "dst_chunk": chunk,
        "reduce": reduce,
    }


def ring_all_gather(n: int) -> Schedule:
    """Ring all-gather: at step s rank r forwards shard (r - s) mod n to rank r + 1."""
    n = rank_count(n)

    def listing():
        step, r = _grid(n)
        return _listing(step, r, (r + 1) % n, (r - step) % n, False)

    return Schedule.from_traffic("all_gather", n, n, _one_way(n), listing, name="ring_all_gather")


def ring_reduce_scatter(n: int) -> Schedule:
    """Ring reduce-scatter: at step s rank r adds its partial sum of chunk (r - s - 1) mod n
    into rank r + 1; after n - 1 steps rank r holds chunk r summed over all ranks."""
    n = rank_count(n)

    def listing():
        step, r = _grid(n)
        return _listing(step, r, (r + 1) % n, (r - step - 1) % n, True)

    return Schedule.from_traffic(
        "reduce_scatter", n, n, _one_way(n), listing, name="ring_reduce_scatter"
    )


def ring_all_reduce(n: int) -> Schedule:
    """Ring all-reduce: ring reduce-scatter then ring all-gather, 2(n - 1) steps."""
    return compose(ring_reduce_scatter(n), ring_all_gather(n), name="ring_all_reduce")


def _two_way(n: int, reduce: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Both directions at once: even slots go forward, odd slots backward (2n chunks)."""
    step, r = _grid(n)
    shift = 1 if reduce else 0
    forward = 2 * ((r - step - shift) % n)
    backward = 2 * ((r + step + shift) % n) + 1
    steps = np.repeat(step, 2)
    src = np.repeat(r, 2)
    dst = np.stack([(r + 1) % n, (r - 1) % n], axis=1).ravel()
    chunk = np.stack([forward, backward], axis=1).ravel()
    return steps, src, dst, chunk


def bidirectional_ring_all_gather(n: int) -> Schedule:
    """Bidirectional ring all-gather: each shard is cut in two halves (slots 2r, 2r + 1);
    the first travels forward, the second backward, so both link directions carry data."""
    n = rank_count(n)
    return Schedule.from_traffic(
        "all_gather",
        n,
        2 * n,
        _two_way_traffic(n),
        lambda: _listing(*_two_way(n, reduce=False), False),
        name="bidirectional_ring_all_gather",
    )


def bidirectional_ring_reduce_scatter(n: int) -> Schedule:
    """Bidirectional ring reduce-scatter: even slots are reduced forward, odd slots
    backward; rank r ends with slots 2r and 2r + 1 summed over all ranks."""
    n = rank_count(n)
    return Schedule.from_traffic(
        "reduce_scatter",
        n,
        2 * n,
        _two_way_traffic(n),
        lambda: _listing(*_two_way(n, reduce=True), True),
        name="bidirectional_ring_reduce_scatter",
    )


def bidirectional_ring_all_reduce(n: int) -> Schedule:
    """Bidirectional ring all-reduce: the two bidirectional halves composed."""
    return compose(
        bidirectional_ring_reduce_scatter(n),
        bidirectional_ring_all_gather(n),
        name="bidirectional_ring_all_reduce",
    )


def _half_way(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The transfers of the latency-optimal all-gather, step-major: at step s < floor(n/2)
    rank r forwards shard (r - s) mod n to r + 1 and shard (r + s) mod n to r - 1, both
    halves (slots 2q, 2q + 1); at the last step of an even ring the antipodal shard's first
    half goes forward and its second half backward."""
    n_steps = n // 2
    steps, srcs, dsts, chunks = [], [], [], []
    r = np.arange(n)
    for s in range(n_steps):
        ahead, behind = (r - s) % n, (r + s) % n
        if n % 2 == 0 and s == n_steps - 1:  # the antipodal shard: halves split
            src = np.concatenate([r, r])
            dst = np.concatenate([(r + 1) % n, (r - 1) % n])
            chunk = np.concatenate([2 * ahead, 2 * behind + 1])
        else:  # whole shards both ways
            src = np.repeat(r, 4)
            dst = np.stack([(r + 1) % n, (r + 1) % n, (r - 1) % n, (r - 1) % n], 1).ravel()
            chunk = np.stack([2 * ahead, 2 * ahead + 1, 2 * behind, 2 * behind + 1], 1).ravel()
        order = np.argsort(src, kind="stable")
        steps.append(np.full(len(src), s))
        srcs.append(src[order])
        dsts.append(dst[order])
        chunks.append(chunk[order])
    if not steps:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty
    return (
        np.concatenate(steps),
        np.concatenate(srcs),
        np.concatenate(dsts),
        np.concatenate(chunks),
    )


def _half_way_traffic(n: int) -> Traffic:
    """Two chunks to each neighbour per step; one at the last step of an even ring."""
    r = np.arange(n)
    src = np.repeat(r, 2)
    dst = np.stack([(r + 1) % n, (r - 1) % n], 1).ravel()
    whole = n // 2 - (1 if n % 2 == 0 else 0)
    traffic = Traffic.run(whole, src, dst, 2)
    if n % 2 == 0:
        traffic = traffic.then(Traffic.run(1, src, dst, 1))
    return traffic


def latency_optimal_ring_all_gather(n: int) -> Schedule:
    """Latency-optimal bidirectional ring all-gather: every shard travels whole both ways,
    half-way round (shard chunks: slots 2r, 2r + 1 of rank r).

    floor(n/2) steps, the ring's diameter (n - 1 for the unidirectional and the split
    bidirectional ring); each link direction carries (n-1)/(2n) of the buffer, as in
    :func:`bidirectional_ring_all_gather`. On an even ring the antipodal shard's halves go
    opposite ways in the last step, which therefore moves half a shard per link.
    Modelled: the ring's links only. Taught in chapter "TPU cluster topology".
    """
    n = rank_count(n)
    return Schedule.from_traffic(
        "all_gather",
        n,
        2 * n,
        _half_way_traffic(n),
        lambda: _listing(*_half_way(n), False),
        name="latency_optimal_ring_all_gather",
    )


def latency_optimal_ring_reduce_scatter(n: int) -> Schedule:
    """Latency-optimal bidirectional ring reduce-scatter: the dual of
    :func:`latency_optimal_ring_all_gather` (partial sums travel half-way round from both
    sides, reduced on the way); floor(n/2) steps, rank r ends with slots 2r and 2r + 1
    summed over all ranks."""
    return dual(latency_optimal_ring_all_gather(n), name="latency_optimal_ring_reduce_scatter")


def latency_optimal_ring_all_reduce(n: int) -> Schedule:
    """Latency-optimal bidirectional ring all-reduce: its reduce-scatter then its
    all-gather, 2 floor(n/2) steps."""
    return compose(
        latency_optimal_ring_reduce_scatter(n),
        latency_optimal_ring_all_gather(n),
        name="latency_optimal_ring_all_reduce",
    )
