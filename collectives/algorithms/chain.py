"""Chain algorithms: a line of ranks without the wraparound link (a torus axis that does
not wrap, or ranks on a shelf).

The chain all-gather sends every shard both ways at once, left to the lower ranks and
right to the higher ones; after n - 1 steps it has reached both ends. Each link direction
still carries one shard per step, but there is no second direction to split the data
over, so a chain takes twice as long as a bidirectional ring: the end rank must receive
n - 1 shards through its single link. The pipelined chain broadcast cuts the buffer in
segments that follow each other down the line, which is how rings and chains broadcast
large messages. Taught in chapter "All-gather".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from ..transforms import dual, pipelined
from .checks import chunk_count, rank_count, root_rank

__all__ = ["chain_all_gather", "chain_reduce_scatter", "chain_broadcast"]


def chain_all_gather(n: int) -> Schedule:
    """Chain all-gather: at step s rank r passes shard r - s right and shard r + s left
    (when they exist), n - 1 steps."""
    n = rank_count(n)
    step = np.repeat(np.arange(n - 1), n)
    r = np.tile(np.arange(n), n - 1)
    right = (r - step >= 0) & (r + 1 <= n - 1)
    left = (r + step <= n - 1) & (r - 1 >= 0)
    steps = np.concatenate([step[right], step[left]])
    src = np.concatenate([r[right], r[left]])
    dst = np.concatenate([r[right] + 1, r[left] - 1])
    chunk = np.concatenate([(r - step)[right], (r + step)[left]])
    order = np.argsort(steps, kind="stable")
    return Schedule.from_arrays(
        "all_gather",
        n,
        n,
        steps[order],
        src[order],
        dst[order],
        chunk[order],
        chunk[order],
        n_steps=n - 1,
        name="chain_all_gather",
    )


def chain_reduce_scatter(n: int) -> Schedule:
    """Chain reduce-scatter: the dual of the chain all-gather."""
    return dual(chain_all_gather(n), name="chain_reduce_scatter")


def chain_broadcast(n: int, root: int = 0, n_segments: int = 1) -> Schedule:
    """Broadcast down the chain root -> root + 1 -> ... (ranks taken cyclically from the
    root, so it runs on a ring too), the buffer cut into ``n_segments`` pipelined segments:
    (n - 2 + n_segments) steps each moving S / n_segments."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_segments = chunk_count(n_segments, "n_segments")
    hops = np.arange(n - 1)
    one = Schedule.from_arrays(
        "broadcast",
        n,
        1,
        hops,
        (root + hops) % n,
        (root + hops + 1) % n,
        np.zeros(n - 1, np.int64),
        np.zeros(n - 1, np.int64),
        n_steps=n - 1,
        root=root,
    )
    return pipelined(one, n_segments, name="chain_broadcast")
