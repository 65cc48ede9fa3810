"""Binomial trees: broadcast and reduce in ceil(log2 n) steps, for any n.

Ranks are renumbered relative to the root (v = (r - root) mod n). Broadcast: at step i
every v < 2^i that has the data sends the whole buffer to v + 2^i. Reduce runs the same
tree backwards: at step i (largest first) every v in [2^i, 2^(i+1)) adds its subtree's sum
into v - 2^i. Each step moves the whole buffer, so trees pay log2(n) times the bytes of a
ring per link, but only log2(n) latencies. Taught in chapter "Cost models and the ring
all-gather".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from .checks import chunk_count, rank_count, root_rank

__all__ = ["binomial_tree_broadcast", "binomial_tree_reduce", "double_binary_tree_all_reduce"]


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


def binomial_tree_broadcast(n: int, root: int = 0, n_chunks: int = 1) -> Schedule:
    """Broadcast from ``root`` along a binomial tree: ceil(log2 n) steps of the full buffer."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_chunks = chunk_count(n_chunks)
    n_steps, step, parent, child = _tree_edges(n)
    step, src, dst, chunk = _expand(step, (parent + root) % n, (child + root) % n, n_chunks)
    return Schedule.from_arrays("broadcast", n, n_chunks, step, src, dst, chunk, chunk,
                                n_steps=n_steps, root=root, name="binomial_tree_broadcast")


def binomial_tree_reduce(n: int, root: int = 0, n_chunks: int = 1) -> Schedule:
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


def _in_order_tree(n):
    """Parent of every rank in the balanced in-order binary tree over 0..n-1 (-1: root)
    and every rank's height (leaves 0)."""
    parent = np.full(n, -1, dtype=np.int64)
    height = np.zeros(n, dtype=np.int64)
    stack = [(0, n - 1, -1)]
    order = []
    while stack:                      # iterative: depth-first over the subranges
        lo, hi, up = stack.pop()
        if lo > hi:
            continue
        mid = (lo + hi) // 2
        parent[mid] = up
        order.append(mid)
        stack.append((lo, mid - 1, mid))
        stack.append((mid + 1, hi, mid))
    for node in reversed(order):      # children before parents
        if parent[node] >= 0:
            height[parent[node]] = max(height[parent[node]], height[node] + 1)
    return parent, height


def double_binary_tree_all_reduce(n: int, n_segments: int = 1) -> Schedule:
    """NCCL's Tree algorithm: two binary trees, each reducing then broadcasting half of
    the buffer, so that every rank sends and receives about the same amount.

    Tree 1 is the balanced in-order binary tree over the ranks; tree 2 is tree 1 shifted
    by one rank (n even) or mirrored (n odd), so that the leaves of one are mostly inner
    nodes of the other (Sanders, Speck and Traeff, 2009; NCCL's double binary tree). Half
    A (chunk 0) goes up tree 1 and back down, half B (chunk 1) up and down tree 2; both at
    once. ``n_segments`` pipelines each half (see :func:`collectives.transforms.pipelined`).
    """
    from ..transforms import pipelined

    n = rank_count(n)
    n_segments = chunk_count(n_segments, "n_segments")
    parent, height = _in_order_tree(n)
    ranks = np.arange(n)
    other = (ranks + 1) % n if n % 2 == 0 else n - 1 - ranks      # rank playing node v in tree 2
    depth_total = int(height.max()) if n > 1 else 0
    depth = np.zeros(n, dtype=np.int64)
    for v in np.argsort(-height, kind="stable"):                  # parents before children
        if parent[v] >= 0:
            depth[v] = depth[parent[v]] + 1
    child = np.flatnonzero(parent >= 0)
    pieces = []
    for tree_rank, chunk in ((ranks, 0), (other, 1)):
        up_step = height[child]                                    # child sends when done
        down_step = depth_total + depth[child] - 1                 # parent forwards down
        pieces.append((up_step, tree_rank[child], tree_rank[parent[child]], chunk, True))
        pieces.append((down_step, tree_rank[parent[child]], tree_rank[child], chunk, False))
    step = np.concatenate([p[0] for p in pieces])
    src = np.concatenate([p[1] for p in pieces])
    dst = np.concatenate([p[2] for p in pieces])
    chunk = np.concatenate([np.full(len(p[0]), p[3]) for p in pieces])
    reduce = np.concatenate([np.full(len(p[0]), p[4]) for p in pieces])
    order = np.argsort(step, kind="stable")
    one = Schedule.from_arrays("all_reduce", n, 2, step[order], src[order], dst[order],
                               chunk[order], chunk[order], reduce[order],
                               n_steps=2 * depth_total, name="double_binary_tree_all_reduce")
    if n_segments == 1:
        return one
    return pipelined(one, n_segments, name="double_binary_tree_all_reduce")
