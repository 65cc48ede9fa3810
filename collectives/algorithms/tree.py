"""Binomial trees: broadcast and reduce in ceil(log2 n) steps, for any n.

Ranks are renumbered relative to the root (v = (r - root) mod n). Broadcast: at step i
every v < 2^i that has the data sends the whole buffer to v + 2^i. Reduce runs the same
tree backwards: at step i (largest first) every v in [2^i, 2^(i+1)) adds its subtree's sum
into v - 2^i. Each step moves the whole buffer, so trees pay log2(n) times the bytes of a
ring per link, but only log2(n) latencies. Taught in chapter "Cost models and the ring
all-gather".
"""

import numpy as np

from ..schedule import Schedule
from ._checks import chunk_count, rank_count, root_rank

__all__ = ["binomial_tree_broadcast", "binomial_tree_reduce"]


def _tree_edges(n):
    """(step, parent, child) in relative numbering, for the broadcast order."""
    steps, parents, children = [], [], []
    i = 0
    while (1 << i) < n:
        parent = np.arange(min(1 << i, n - (1 << i)))
        steps.append(np.full(len(parent), i))
        parents.append(parent)
        children.append(parent + (1 << i))
        i += 1
    if not steps:
        empty = np.zeros(0, dtype=np.int64)
        return 0, empty, empty, empty
    return i, np.concatenate(steps), np.concatenate(parents), np.concatenate(children)


def _expand(step, a, b, n_chunks):
    """One transfer per chunk of the buffer for every tree edge."""
    return (np.repeat(step, n_chunks), np.repeat(a, n_chunks), np.repeat(b, n_chunks),
            np.tile(np.arange(n_chunks), len(step)))


def binomial_tree_broadcast(n, root=0, n_chunks=1):
    """Broadcast from ``root`` along a binomial tree: ceil(log2 n) steps of the full buffer."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_chunks = chunk_count(n_chunks)
    n_steps, step, parent, child = _tree_edges(n)
    step, src, dst, chunk = _expand(step, (parent + root) % n, (child + root) % n, n_chunks)
    return Schedule.from_arrays("broadcast", n, n_chunks, step, src, dst, chunk, chunk,
                                n_steps=n_steps, root=root, name="binomial_tree_broadcast")


def binomial_tree_reduce(n, root=0, n_chunks=1):
    """Reduce to ``root`` along a binomial tree: the broadcast tree run backwards."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_chunks = chunk_count(n_chunks)
    n_steps, step, parent, child = _tree_edges(n)
    order = np.argsort(-step, kind="stable")
    step = n_steps - 1 - step[order]
    step, src, dst, chunk = _expand(step, (child[order] + root) % n,
                                    (parent[order] + root) % n, n_chunks)
    return Schedule.from_arrays("reduce", n, n_chunks, step, src, dst, chunk, chunk, True,
                                n_steps=n_steps, root=root, name="binomial_tree_reduce")
