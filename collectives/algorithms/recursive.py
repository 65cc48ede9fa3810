"""Recursive doubling and halving: ranks pair up by flipping one bit of their number.

Recursive-doubling all-gather takes log2(n) steps; at step i rank r swaps everything it
holds (2^i shards) with rank r XOR 2^i. Recursive-halving reduce-scatter is its mirror:
at step i (distance d = n / 2^(i+1)) rank r sends the half of its current block that its
partner r XOR d keeps. Both move (n-1)/n of the buffer per rank, like a ring, but with
log2(n) latency terms instead of n - 1. They need n to be a power of two. Taught in
chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from .checks import power_of_two

__all__ = [
    "recursive_doubling_all_gather",
    "recursive_halving_reduce_scatter",
    "rabenseifner_all_reduce",
    "recursive_doubling_all_reduce",
]


def _exchanges(n, sizes):
    """For each step's block size b: (step, rank, j) for j < b, flattened step-major."""
    steps, ranks, offsets = [], [], []
    for i, b in enumerate(sizes):
        steps.append(np.full(n * b, i))
        ranks.append(np.repeat(np.arange(n), b))
        offsets.append(np.tile(np.arange(b), n))
    if not steps:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(steps), np.concatenate(ranks), np.concatenate(offsets)


def recursive_doubling_all_gather(n: int) -> Schedule:
    """All-gather in log2(n) steps: at step i, rank r and r XOR 2^i swap their 2^i shards."""
    n = power_of_two(n, "recursive_doubling_all_gather")
    log_n = n.bit_length() - 1
    sizes = [1 << i for i in range(log_n)]
    step, r, j = _exchanges(n, sizes)
    b = np.left_shift(1, step)
    chunk = (r // b) * b + j  # the aligned block of 2^i shards r holds
    return Schedule.from_arrays(
        "all_gather",
        n,
        n,
        step,
        r,
        r ^ b,
        chunk,
        chunk,
        n_steps=log_n,
        name="recursive_doubling_all_gather",
    )


def recursive_halving_reduce_scatter(n: int) -> Schedule:
    """Reduce-scatter in log2(n) steps: at distance d = n/2, n/4, ..., 1 rank r adds the d
    chunks its partner r XOR d keeps into that partner; rank r ends with chunk r."""
    n = power_of_two(n, "recursive_halving_reduce_scatter")
    log_n = n.bit_length() - 1
    sizes = [n >> (i + 1) for i in range(log_n)]
    step, r, j = _exchanges(n, sizes)
    d = np.right_shift(n, step + 1)
    partner = r ^ d
    chunk = (partner // d) * d + j  # the half of the block that partner keeps
    return Schedule.from_arrays(
        "reduce_scatter",
        n,
        n,
        step,
        r,
        partner,
        chunk,
        chunk,
        True,
        n_steps=log_n,
        name="recursive_halving_reduce_scatter",
    )


def rabenseifner_all_reduce(n: int) -> Schedule:
    """Rabenseifner's all-reduce: recursive-halving reduce-scatter then recursive-doubling
    all-gather, 2 log2(n) steps moving 2(n-1)/n of the buffer per rank (n a power of two)."""
    from ..schedule import compose

    return compose(
        recursive_halving_reduce_scatter(n),
        recursive_doubling_all_gather(n),
        name="rabenseifner_all_reduce",
    )


def recursive_doubling_all_reduce(n: int, n_chunks: int = 1) -> Schedule:
    """Latency-optimal all-reduce: at step i rank r adds its whole buffer into rank
    r XOR 2^i (both directions at once). log2(n) steps, each moving the full buffer."""
    from .checks import chunk_count

    n = power_of_two(n, "recursive_doubling_all_reduce")
    n_chunks = chunk_count(n_chunks)
    log_n = n.bit_length() - 1
    step = np.repeat(np.arange(log_n), n * n_chunks)
    r = np.tile(np.repeat(np.arange(n), n_chunks), log_n)
    chunk = np.tile(np.arange(n_chunks), n * log_n)
    return Schedule.from_arrays(
        "all_reduce",
        n,
        n_chunks,
        step,
        r,
        r ^ np.left_shift(1, step),
        chunk,
        chunk,
        True,
        n_steps=log_n,
        name="recursive_doubling_all_reduce",
    )
