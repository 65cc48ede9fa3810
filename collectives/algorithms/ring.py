"""Ring algorithms: every rank talks only to its ring neighbours.

Unidirectional rings send one chunk per rank per step forward (rank r to r+1); an
all-gather or reduce-scatter over n ranks takes n-1 steps and moves (n-1)/n of the buffer
over each link. Bidirectional rings split every chunk in two halves that travel opposite
ways, halving the bytes per link per step. The all-reduce is a reduce-scatter followed by
an all-gather (:func:`collectives.compose`). Taught in chapter "Cost models and the ring
all-gather".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule, compose
from ..traffic import Traffic
from .checks import rank_count

__all__ = [
    "ring_all_gather", "ring_reduce_scatter", "ring_all_reduce",
    "bidirectional_ring_all_gather", "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
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
    return {"step": step, "src": src, "dst": dst, "src_chunk": chunk, "dst_chunk": chunk,
            "reduce": reduce}


def ring_all_gather(n: int) -> Schedule:
    """Ring all-gather: at step s rank r forwards shard (r - s) mod n to rank r + 1."""
    n = rank_count(n)

    def listing():
        step, r = _grid(n)
        return _listing(step, r, (r + 1) % n, (r - step) % n, False)

    return Schedule.from_traffic("all_gather", n, n, _one_way(n), listing,
                                 name="ring_all_gather")


def ring_reduce_scatter(n: int) -> Schedule:
    """Ring reduce-scatter: at step s rank r adds its partial sum of chunk (r - s - 1) mod n
    into rank r + 1; after n - 1 steps rank r holds chunk r summed over all ranks."""
    n = rank_count(n)

    def listing():
        step, r = _grid(n)
        return _listing(step, r, (r + 1) % n, (r - step - 1) % n, True)

    return Schedule.from_traffic("reduce_scatter", n, n, _one_way(n), listing,
                                 name="ring_reduce_scatter")


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
    return Schedule.from_traffic("all_gather", n, 2 * n, _two_way_traffic(n),
                                 lambda: _listing(*_two_way(n, reduce=False), False),
                                 name="bidirectional_ring_all_gather")


def bidirectional_ring_reduce_scatter(n: int) -> Schedule:
    """Bidirectional ring reduce-scatter: even slots are reduced forward, odd slots
    backward; rank r ends with slots 2r and 2r + 1 summed over all ranks."""
    n = rank_count(n)
    return Schedule.from_traffic("reduce_scatter", n, 2 * n, _two_way_traffic(n),
                                 lambda: _listing(*_two_way(n, reduce=True), True),
                                 name="bidirectional_ring_reduce_scatter")


def bidirectional_ring_all_reduce(n: int) -> Schedule:
    """Bidirectional ring all-reduce: the two bidirectional halves composed."""
    return compose(bidirectional_ring_reduce_scatter(n), bidirectional_ring_all_gather(n),
                   name="bidirectional_ring_all_reduce")
