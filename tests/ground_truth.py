"""What each collective must compute, written from first principles with plain numpy.

Independent of collectives.semantics on purpose: the tests compare the package to these.
"""

import numpy as np


def expected_outputs(collective, inputs, root=None):
    """Rows each rank must hold after ``collective`` on ``inputs`` (one row per rank)."""
    x = np.asarray(inputs)
    n = x.shape[0]
    if collective == "all_gather":  # everyone: all shards in rank order
        return np.tile(x.reshape(1, -1), (n, 1))
    if collective == "all_reduce":  # everyone: the elementwise sum
        return np.tile(x.sum(axis=0, dtype=x.dtype), (n, 1))
    if collective == "reduce_scatter":  # rank r: part r of the sum
        return x.sum(axis=0, dtype=x.dtype).reshape(n, -1)
    if collective == "all_to_all":  # rank r: part r of every rank's input
        parts = x.reshape(n, n, -1)  # [source, destination, piece]
        return parts.transpose(1, 0, 2).reshape(n, -1)
    if collective == "broadcast":
        return np.tile(x[root], (n, 1))
    if collective == "reduce":  # only the root's row is defined
        return x.sum(axis=0, dtype=x.dtype)
    if collective == "gather":  # only the root's row is defined
        return x.reshape(-1)
    if collective == "scatter":  # rank r: part r of the root's buffer
        return x[root].reshape(n, -1)
    raise ValueError(collective)


def tree_shape(parent):
    """(depth, number of children) of every node of a tree given by ``parent[]`` (-1 at the
    root), by walking up from each node; checks that parent[] is one tree (no cycle)."""
    n = len(parent)
    depth = []
    for r in range(n):
        d, v = 0, r
        while parent[v] >= 0:
            v, d = parent[v], d + 1
            assert d <= n, "parent[] has a cycle"
        depth.append(d)
    children = np.bincount([p for p in parent if p >= 0], minlength=n)
    return np.array(depth), children
