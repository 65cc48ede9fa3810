"""collectives/algorithms/innetwork.py: NCCL's cross-node NVLS algorithms (NVLSTree, NVLS with
CollNet) as Schedules with switch participants: they compute an all-reduce for any cluster
shape (property tests), they use the participants NCCL uses (heads = local GPU h, NCCL
#1453's "NVLS Head h: h, 8+h, 16+h"), and they cost what a hand count of their bytes says."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.errors import ScheduleError

A = cl.algorithms
NVLINK, PCIE, NIC = 450e9, 64e9, 50e9


def gpus(n_nodes, g, **options):
    return cl.topology.cluster(
        n_nodes, g, nvlink_bandwidth=NVLINK, pcie_bandwidth=PCIE, nic_bandwidth=NIC, **options
    )


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 9), st.integers(1, 5), st.integers(1, 4), st.sampled_from(["tree", "collnet"])
)
def test_cross_node_nvls_computes_the_sum(n_nodes, g, segments, which):
    build = A.nvls_tree_all_reduce if which == "tree" else A.nvls_collnet_all_reduce
    s = build(n_nodes, g, n_segments=segments)
    cl.verify(s)
    x = np.random.default_rng(n_nodes * 7 + g).integers(-9, 9, (n_nodes * g, s.n_chunks))
    np.testing.assert_array_equal(cl.simulate(s, x), np.broadcast_to(x.sum(0), x.shape))
    assert s.n_switches == (n_nodes if which == "tree" else n_nodes + g)


def test_heads_talk_only_along_their_rail():
    # connectNvls: head h of node k talks to head h of its tree neighbours (NCCL #1453 prints
    # "NVLS Head 0: 0 8 16"); every network transfer joins two GPUs of the same local index
    n, g = 5, 4
    s = A.nvls_tree_all_reduce(n, g)
    a = s.transfer_arrays()
    ranks = n * g
    net = (a["src"] < ranks) & (a["dst"] < ranks)
    assert net.any()
    assert np.all(a["src"][net] % g == a["dst"][net] % g)
    assert np.all(a["src"][net] // g != a["dst"][net] // g)
    # and the tree over the nodes is NCCL's double binary tree: one edge per tree and head
    trees = A.double_binary_trees(n)
    edges = {(int(min(p, c)), int(max(p, c))) for t in trees for c, p in enumerate(t) if p >= 0}
    seen = {
        (int(min(x, y)) // g, int(max(x, y)) // g) for x, y in zip(a["src"][net], a["dst"][net])
    }
    assert seen == edges


def test_step_counts():
    # one node: NVLS's four steps; N nodes: 4 + 2T, T the taller tree's height
    assert A.nvls_tree_all_reduce(1, 8).n_steps == 4
    for n in (2, 3, 4, 8, 16):
        top = max(int(A.depth_and_height(t)[1].max()) for t in A.double_binary_trees(n))
        assert A.nvls_tree_all_reduce(n, 8).n_steps == 4 + 2 * top
    assert A.nvls_collnet_all_reduce(4, 8).n_steps == 6


def test_nvls_tree_on_two_nodes_costs_the_hand_count():
    # 2 nodes: both trees are one edge (tree 0: node 1 -> 0, tree 1: node 0 -> 1), T = 1.
    # One segment, S bytes, g = 8, slots of S/(2g):
    #   step 0: load, S up every GPU link;  step 1: S/g down to each head (its two slots);
    #   step 2: each head sends one slot up its tree: S/(2g) out of every NIC;
    #   step 3: the roots send it back down (S/(2g) per NIC) and store their slot (S/(2g)
    #           up NVLink, hidden behind the NIC);
    #   step 4: the roots' switches multicast their g slots (S/2 down every GPU link), the
    #           children store theirs;  step 5: the children's multicast, S/2 down.
    S, g = 1e9, 8
    t = cl.time(A.nvls_tree_all_reduce(2, g), gpus(2, g), S)
    expected = S / NVLINK + S / g / NVLINK + 2 * (S / (2 * g)) / NIC + 2 * (S / 2) / NVLINK
    assert t.seconds == pytest.approx(expected, rel=1e-12)
    assert t.n_steps == 6


def test_nvls_collnet_costs_the_hand_count_and_uses_the_rail_leaves():
    # one unit of 4 nodes; the default switch placement: the 4 NVSwitches, then rail leaves
    S, g, n = 1e9, 8, 4
    topo = gpus(n, g)
    t = cl.time(A.nvls_collnet_all_reduce(n, g), topo, S)
    # load S, to heads S/g, up to SHARP S/g over the NIC, back S/g, store S/g, multicast S
    expected = 2 * S / NVLINK + 2 * S / g / NVLINK + 2 * S / g / NIC
    assert t.seconds == pytest.approx(expected, rel=1e-12)
    assert t.level_bytes().get("spine", 0) == 0


def test_pipelined_nvls_tree_beats_the_ring_on_two_nodes():
    # streamed, NVLSTree's NICs carry S/(2g) per tree and direction against the 8-channel
    # ring's 2(R-1)/R S/g: with NVLink not the limit it would be twice as fast; NVLink's
    # (1 + 1/g) S per direction at 450 GB/s bounds it at S (1 + 1/8) / 450e9
    S, g = 2**31, 8
    topo = gpus(2, g, pxn=True)
    tree = cl.time(A.nvls_tree_all_reduce(2, g, n_segments=256), topo, S).seconds
    ring = cl.time(A.nccl_ring_all_reduce(2, g, n_channels=g), topo, S).seconds
    assert ring == pytest.approx(2 * 15 / 16 * S / (g * NIC))
    assert S * (1 + 1 / g) / NVLINK < tree < 0.6 * ring


def test_bad_sizes_raise():
    with pytest.raises(ScheduleError):
        A.nvls_tree_all_reduce(0, 8)
    with pytest.raises(ScheduleError):
        A.nvls_collnet_all_reduce(2, 8, n_segments=0)
    assert math.isfinite(cl.time(A.nvls_tree_all_reduce(3, 2), gpus(3, 2), 1e6).seconds)
