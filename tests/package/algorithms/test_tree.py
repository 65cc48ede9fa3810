"""collectives/algorithms/tree.py: NCCL's double binary tree (checked against the rules of
NCCL's src/graph/trees.cc, ncclGetBtree and ncclGetDtree, restated here independently), its
all-reduce, and the depth and height of a tree's nodes."""

import math

import numpy as np
import pytest

import collectives as cl
from collectives.algorithms import (
    depth_and_height,
    double_binary_tree_all_reduce,
    double_binary_trees,
)

from ground_truth import tree_shape


def reference_btree(n):
    """NCCL's first tree from the rules in trees.cc's comment, written as children: rank r
    with lowest set bit b has children r - b/2 and the largest r + b/2**k below n; rank 0's
    only child is the largest power of two below n. Returns parent[] (-1 at the root)."""
    parent = [-1] * n
    for r in range(n):
        if r == 0:
            kids = [1 << (n - 1).bit_length() - 1] if n > 1 else []
        else:
            half = (r & -r) >> 1
            kids = [r - half] if half else []
            step = half
            while step and r + step >= n:
                step >>= 1
            if step:
                kids.append(r + step)
        for k in kids:
            assert parent[k] == -1, f"rank {k} has two parents"
            parent[k] = r
    return parent


@pytest.mark.parametrize("n", list(range(1, 65)) + [100, 1000, 1001])
def test_trees_follow_ncclGetBtree_and_ncclGetDtree(n):
    first, second = double_binary_trees(n)
    assert first.tolist() == reference_btree(n)
    r = np.arange(n)
    if n % 2 == 0:  # mirror: the tree of n-1-r, renamed back
        expected = [-1 if first[n - 1 - x] < 0 else n - 1 - first[n - 1 - x] for x in r]
    else:  # shift: the tree of r-1, renamed back
        expected = [-1 if first[(x - 1) % n] < 0 else (first[(x - 1) % n] + 1) % n for x in r]
    assert second.tolist() == expected


@pytest.mark.parametrize("n", range(2, 65))
def test_what_the_double_binary_tree_guarantees(n):
    """The property NCCL's construction gives, exactly: both trees binary, of height
    ceil(log2 n), each root with one child; for even n every rank is inner in exactly one
    tree and a leaf of the other; for odd n the same except rank 0, inner in both."""
    first, second = double_binary_trees(n)
    assert first[0] == -1 and (first < 0).sum() == 1
    root2 = n - 1 if n % 2 == 0 else 1
    assert second[root2] == -1 and (second < 0).sum() == 1
    inner = []
    for parent, root in ((first, 0), (second, root2)):
        depth, children = tree_shape(parent)
        assert depth.max() == math.ceil(math.log2(n))
        assert children.max() <= 2 and children[root] == 1
        inner.append(children > 0)
    both = np.flatnonzero(inner[0] & inner[1])
    neither = np.flatnonzero(~inner[0] & ~inner[1])
    assert neither.size == 0  # no rank is a leaf of both trees
    assert both.tolist() == ([] if n % 2 == 0 else [0])
    assert np.flatnonzero(~inner[0]).tolist() == list(range(1, n, 2))  # leaves: odd ranks


def test_one_rank_is_the_root_of_both_trees():
    assert [p.tolist() for p in double_binary_trees(1)] == [[-1], [-1]]


def test_the_figure_of_trees_cc():
    # trees.cc draws n = 12 (mirror, roots 0 and 11) and n = 13 (shift, roots 0 and 1)
    first, second = double_binary_trees(12)
    assert first[8] == 0 and first[4] == 8 and first[10] == 8 and first[11] == 10
    assert second[11] == -1 and second[3] == 11 and second[7] == 3 and second[0] == 1
    first, second = double_binary_trees(13)
    assert first[12] == 8 and first[9] == 10 and first[10] == 12
    assert second[1] == -1 and second[9] == 1 and second[0] == 9 and second[5] == 9


@pytest.mark.parametrize("n", [2, 3, 5, 8, 12, 13, 24, 64, 1000])
def test_double_binary_tree_all_reduce_takes_2_ceil_log2_n_steps(n):
    s = double_binary_tree_all_reduce(n)
    assert s.n_steps == 2 * math.ceil(math.log2(n))
    cl.verify(s)
    cl.verify(double_binary_tree_all_reduce(n, n_segments=3))
    if n <= 64:
        x = np.random.default_rng(n).integers(-9, 9, size=(n, 6))
        assert np.array_equal(
            cl.simulate(double_binary_tree_all_reduce(n, 3), x),
            np.broadcast_to(x.sum(axis=0), x.shape),
        )


def test_depth_and_height_of_a_small_tree_by_hand():
    #        0            depth: 0 -> 0; 1, 2 -> 1; 3, 4 -> 2; 5 -> 3
    #       / \           height (longest way down to a leaf): 3, 4, 5 are leaves (0);
    #      1   2          4 has the leaf 5 below it (1); 1 sits above 3 and 4 (2), 2 is a
    #     / \             leaf (0); the root's longest way down is 0-1-4-5 (3)
    #    3   4
    #         \
    #          5
    parent = np.array([-1, 0, 0, 1, 1, 4])
    depth, height = depth_and_height(parent)
    assert depth.tolist() == [0, 1, 1, 2, 2, 3]
    assert height.tolist() == [3, 2, 0, 0, 1, 0]
    depth, height = depth_and_height(np.array([-1]))  # one node: the root
    assert depth.tolist() == [0] and height.tolist() == [0]


@pytest.mark.parametrize("n", [2, 5, 12, 13, 64])
def test_depth_and_height_agree_with_the_walk_up_the_tree(n):
    for parent in double_binary_trees(n):
        depth, height = depth_and_height(parent)
        walked, _ = tree_shape(parent.tolist())  # depth by walking up
        assert depth.tolist() == walked.tolist()
        # a node's height is one more than its highest child's (0 for a leaf)
        for r in range(n):
            kids = np.flatnonzero(parent == r)
            assert height[r] == (1 + height[kids].max() if kids.size else 0)
