"""Binomial trees: broadcast and reduce in ceil(log2 n) steps, for any n.

Ranks are renumbered relative to the root (v = (r - root) mod n). Broadcast: at step i
every v < 2^i that has the data sends the whole buffer to v + 2^i. Reduce runs the same
tree backwards: at step i (largest first) every v in [2^i, 2^(i+1)) adds its subtree's sum
into v - 2^i. Each step moves the whole buffer, so trees pay log2(n) times the bytes of a
ring per link, but only log2(n) latencies. Taught in chapter "Cost models and the ring
all-gather".

NCCL's double binary tree (:func:`double_binary_trees`, :func:`double_binary_tree_all_reduce`)
is built as NCCL's ``src/graph/trees.cc`` builds it; taught in chapter "All-reduce".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from .checks import chunk_count, rank_count, root_rank

__all__ = [
    "binomial_tree_broadcast",
    "binomial_tree_reduce",
    "double_binary_trees",
    "double_binary_tree_all_reduce",
    "depth_and_height",
]


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
    return (
        np.repeat(step, n_chunks),
        np.repeat(a, n_chunks),
        np.repeat(b, n_chunks),
        np.tile(np.arange(n_chunks), len(step)),
    )


def binomial_tree_broadcast(n: int, root: int = 0, n_chunks: int = 1) -> Schedule:
    """Broadcast from ``root`` along a binomial tree: ceil(log2 n) steps of the full buffer."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_chunks = chunk_count(n_chunks)
    n_steps, step, parent, child = _tree_edges(n)
    step, src, dst, chunk = _expand(step, (parent + root) % n, (child + root) % n, n_chunks)
    return Schedule.from_arrays(
        "broadcast",
        n,
        n_chunks,
        step,
        src,
        dst,
        chunk,
        chunk,
        n_steps=n_steps,
        root=root,
        name="binomial_tree_broadcast",
    )


def binomial_tree_reduce(n: int, root: int = 0, n_chunks: int = 1) -> Schedule:
    """Reduce to ``root`` along a binomial tree: the broadcast tree run backwards."""
    n = rank_count(n)
    root = root_rank(root, n)
    n_chunks = chunk_count(n_chunks)
    n_steps, step, parent, child = _tree_edges(n)
    order = np.argsort(-step, kind="stable")
    step = n_steps - 1 - step[order]
    step, src, dst, chunk = _expand(
        step, (child[order] + root) % n, (parent[order] + root) % n, n_chunks
    )
    return Schedule.from_arrays(
        "reduce",
        n,
        n_chunks,
        step,
        src,
        dst,
        chunk,
        chunk,
        True,
        n_steps=n_steps,
        root=root,
        name="binomial_tree_reduce",
    )


def double_binary_trees(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The two trees of NCCL's double binary tree over ranks ``0..n-1``, as parent arrays
    (``parent[r]``, -1 at the root), following NCCL's ``src/graph/trees.cc`` (functions
    ``ncclGetBtree`` and ``ncclGetDtree``, NCCL 2.30.7; unchanged since NCCL 2.4).

    Tree 1: rank ``r > 0`` with lowest set bit ``b`` has parent ``(r ^ b) | 2b``, or ``r ^ b``
    when that is not a rank; rank 0 is the root, with a single child (the largest power of
    two below ``n``). Ranks are in in-order: the children of ``r`` are ``r - b/2`` and the
    largest ``r + b/2**k < n``, so tree 1's leaves are exactly the odd ranks. Tree 2 is tree
    1 **mirrored** (rank ``r`` plays ``n - 1 - r``; root ``n - 1``) when ``n`` is even, and
    **shifted** by one (rank ``r`` plays ``r - 1``; root 1) when ``n`` is odd.

    What this guarantees, for every ``n >= 2`` (tested for 2..64 and beyond): both trees are
    binary, each root has exactly one child, both have height ``ceil(log2 n)``, no rank is
    a leaf of both trees. For even ``n`` every rank is an inner node of exactly one tree
    and a leaf of the other (the mirror sends the odd ranks, tree 1's leaves, onto the even
    ones, so tree 2's leaves are the even ranks). For odd ``n`` the shift makes tree 2's
    leaves the even ranks ``2, 4, .., n - 1``: every rank but one is inner in exactly one
    tree, and rank 0 (tree 1's root) is an inner node of both, a leaf of neither.
    (``n = 1``: one rank, the root of both trees.)
    """
    n = rank_count(n)
    r = np.arange(n, dtype=np.int64)
    low = r & -r  # lowest set bit (0 for rank 0)
    up = (r ^ low) | (low << 1)
    first = np.where(up < n, up, r ^ low)
    first[0] = -1
    if n % 2:  # shift: rank r plays r - 1
        played = first[(r - 1) % n]
        second = np.where(played < 0, -1, (played + 1) % n)
    else:  # mirror: rank r plays n - 1 - r
        played = first[n - 1 - r]
        second = np.where(played < 0, -1, n - 1 - played)
    return first, second


def depth_and_height(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depth (root 0) and height (leaves 0) of every node of a tree given by its parents
    (``parent[r]``, -1 at the root, as :func:`double_binary_trees` gives them): a node sends
    up when its subtree is summed (its height) and receives from above at its depth. Loops
    over the levels, vectorised within each."""
    n = len(parent)
    depth = np.zeros(n, dtype=np.int64)
    above = parent.copy()
    while (above >= 0).any():
        has = above >= 0
        depth += has
        above = np.where(has, parent[np.maximum(above, 0)], -1)
    height = np.zeros(n, dtype=np.int64)
    for level in range(int(depth.max()) if n else 0, 0, -1):
        nodes = np.flatnonzero(depth == level)
        np.maximum.at(height, parent[nodes], height[nodes] + 1)
    return depth, height


def double_binary_tree_all_reduce(n: int, n_segments: int = 1) -> Schedule:
    """NCCL's Tree algorithm over ``n`` ranks: two binary trees, each reducing then
    broadcasting half of the buffer, so that every rank sends and receives about the same
    amount (Sanders, Speck and Traeff, 2009).

    The trees are NCCL's (:func:`double_binary_trees`: ``src/graph/trees.cc``,
    ``ncclGetBtree`` / ``ncclGetDtree``): tree 2 is tree 1 mirrored for even ``n`` and
    shifted by one rank for odd ``n``. Half A (chunk 0) goes up tree 1 and back down, half B
    (chunk 1) up and down tree 2, both at once: a rank sends up when its subtree is summed
    (step = its height), and the broadcast leaves the root after ``ceil(log2 n)`` steps, so
    the schedule has ``2 ceil(log2 n)`` steps. ``n_segments`` pipelines each half (see
    :func:`collectives.transforms.pipelined`). Here the trees span ranks; NCCL spans
    nodes with them and chains the GPUs of each node
    (:func:`collectives.algorithms.nccl_tree_all_reduce`). Taught in chapter "All-reduce".
    """
    from ..transforms import pipelined

    n = rank_count(n)
    n_segments = chunk_count(n_segments, "n_segments")
    trees = double_binary_trees(n)
    shapes = [depth_and_height(parent) for parent in trees]
    total = max(int(height.max()) for _, height in shapes)
    pieces = []
    for chunk, (parent, (depth, height)) in enumerate(zip(trees, shapes)):
        child = np.flatnonzero(parent >= 0)
        top = int(height.max())
        up_step = height[child]  # child sends when done
        down_step = top + depth[child] - 1  # parent forwards down
        pieces.append((up_step, child, parent[child], chunk, True))
        pieces.append((down_step, parent[child], child, chunk, False))
    step = np.concatenate([p[0] for p in pieces])
    src = np.concatenate([p[1] for p in pieces])
    dst = np.concatenate([p[2] for p in pieces])
    chunks = np.concatenate([np.full(len(p[0]), p[3]) for p in pieces])
    reduce = np.concatenate([np.full(len(p[0]), p[4]) for p in pieces])
    order = np.argsort(step, kind="stable")
    one = Schedule.from_arrays(
        "all_reduce",
        n,
        2,
        step[order],
        src[order],
        dst[order],
        chunks[order],
        chunks[order],
        reduce[order],
        n_steps=2 * total,
        name="double_binary_tree_all_reduce",
    )
    if n_segments == 1:
        return one
    return pipelined(one, n_segments, name="double_binary_tree_all_reduce")
