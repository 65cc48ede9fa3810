"""collectives/algorithms/nccl.py: NCCL's Tree and Ring across nodes.

The node-level structure is checked against src/graph/connect.cc (connectRings,
connectTrees); the costs against closed forms derived by hand in the comments. The double
binary tree itself (src/graph/trees.cc) is tested in test_tree.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collectives as cl
from collectives.algorithms import (
    double_binary_trees,
    nccl_ring_all_gather,
    nccl_ring_all_reduce,
    nccl_ring_reduce_scatter,
    nccl_rings,
    nccl_tree_all_reduce,
    nccl_trees,
)

from ground_truth import tree_shape

NVLINK, PCIE, NIC = 450e9, 64e9, 50e9


def cluster(n_nodes, g=8, **options):
    return cl.topology.cluster(
        n_nodes, g, nvlink_bandwidth=NVLINK, pcie_bandwidth=PCIE, nic_bandwidth=NIC, **options
    )


def nic_to_leaf_bytes(timing, topo):
    """Bytes on each NIC -> leaf link, indexed by GPU (NIC of GPU i is node E + i)."""
    nic = np.flatnonzero(topo.node_role == cl.topology.ROLES.index("nic"))
    out = np.zeros(topo.n_ranks)
    src, dst = topo.link_src, topo.link_dst
    up = np.isin(src, nic) & (topo.node_role[dst] == cl.topology.ROLES.index("switch"))
    np.add.at(out, src[up] - topo.n_ranks, timing.link_bytes[up])
    return out


# ---- node-level structure ---------------------------------------------------------------------


def test_single_node_rings_and_chains_are_in_pci_order():
    # src/graph/search.cc, intra-node only: "Try PCI order first", then replay the previous
    # channel; a single-node H100 log (NVIDIA/nccl issue #1259) prints 0 1 2 3 4 5 6 7
    assert nccl_rings(1, 8, 4).tolist() == [list(range(8))] * 4
    assert nccl_trees(1, 8, 2).tolist() == [[-1, 0, 1, 2, 3, 4, 5, 6]] * 4


def test_rings_as_nccl_prints_them():
    # NCCL's log on three 8 x H100 nodes (VMs, NVIDIA/nccl issue #1453): "Channel 00/16 :
    # 0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9 16 23 22 21" -- enter at GPU 0, go down, leave
    # from GPU 1; "Channel 01/16 : 0 7 6 5 4 3 2 9 8 15 ..."
    rings = nccl_rings(3, 8, 2)
    assert rings[0].tolist() == [
        0,
        7,
        6,
        5,
        4,
        3,
        2,
        1,
        8,
        15,
        14,
        13,
        12,
        11,
        10,
        9,
        16,
        23,
        22,
        21,
        20,
        19,
        18,
        17,
    ]
    # channel 1 enters each node at GPU 1 and leaves from GPU 2; listed from rank 0
    assert rings[1].tolist() == [
        0,
        7,
        6,
        5,
        4,
        3,
        2,
        9,
        8,
        15,
        14,
        13,
        12,
        11,
        10,
        17,
        16,
        23,
        22,
        21,
        20,
        19,
        18,
        1,
    ]


@pytest.mark.parametrize(
    "n_nodes,g,channels", [(1, 1, 1), (1, 8, 3), (4, 1, 2), (5, 8, 8), (3, 4, 6), (2, 3, 2)]
)
def test_every_ring_crosses_each_node_boundary_once_on_its_rail(n_nodes, g, channels):
    rings = nccl_rings(n_nodes, g, channels)
    size = n_nodes * g
    for c, ring in enumerate(rings):
        assert sorted(ring.tolist()) == list(range(size)) and ring[0] == 0
        src, dst = ring, np.roll(ring, -1)
        across = src // g != dst // g
        assert across.sum() == (n_nodes if n_nodes > 1 else 0)
        # connectRings: GPU c+1 of node k sends to GPU c (= ringRecv) of node k+1
        assert set((src[across] % g).tolist()) <= {(c + 1) % g}
        assert set((dst[across] % g).tolist()) <= {c % g}
        assert np.all((dst[across] // g - src[across] // g) % n_nodes == 1)
        # inside a node: one step down, GPU l -> l - 1; on one node the PCI order, l -> l + 1
        step = 1 if n_nodes > 1 else -1
        assert np.all((src[~across] - dst[~across]) % g == step % g)


@pytest.mark.parametrize(
    "n_nodes,g,channels", [(1, 1, 1), (1, 8, 2), (6, 1, 1), (5, 8, 3), (4, 2, 1), (7, 3, 4)]
)
def test_tree_channels_chain_the_gpus_and_join_the_heads(n_nodes, g, channels):
    parents = nccl_trees(n_nodes, g, channels)
    assert parents.shape == (2 * channels, n_nodes * g)
    node_trees = double_binary_trees(n_nodes)
    rank = np.arange(n_nodes * g)
    for row, parent in enumerate(parents):
        tree, c = divmod(row, channels)
        head = c % g if n_nodes > 1 else 0  # one node: the PCI order for all
        depth, children = tree_shape(parent.tolist())
        assert children.max() <= 3  # NCCL_MAX_TREE_ARITY
        chain = rank % g != head
        # connectTrees / ncclTopoPreset: up = intra[i-1], the chain c, c+1, .., c-1
        assert np.array_equal(parent[chain], (rank[chain] // g) * g + (rank[chain] - 1) % g)
        heads = rank[~chain]
        up = node_trees[tree][heads // g]
        assert np.array_equal(parent[heads], np.where(up < 0, -1, up * g + head))
        # the tree is as deep as NCCL's estimate, g - 1 + ceil(log2 N)
        assert depth.max() == g - 1 + math.ceil(math.log2(n_nodes))


# ---- verification and simulation ------------------------------------------------------------

CASES = [(1, 1), (1, 2), (1, 8), (2, 1), (5, 1), (2, 2), (3, 4), (4, 8), (5, 3), (7, 2)]


@pytest.mark.parametrize("n_nodes,g", CASES)
@pytest.mark.parametrize("channels", [1, 2, 3])
def test_nccl_schedules_verify_and_compute_their_collective(n_nodes, g, channels):
    size = n_nodes * g
    rng = np.random.default_rng(100 * n_nodes + 10 * g + channels)
    for s in (
        nccl_ring_all_reduce(n_nodes, g, channels),
        nccl_tree_all_reduce(n_nodes, g, n_segments=3, n_channels=channels),
    ):
        cl.verify(s)
        x = rng.integers(-50, 50, size=(size, 2 * s.n_chunks))
        assert np.array_equal(cl.simulate(s, x), np.broadcast_to(x.sum(axis=0), x.shape))
    ag = nccl_ring_all_gather(n_nodes, g, channels)
    cl.verify(ag)
    shards = rng.integers(-50, 50, size=(size, 2 * channels))
    assert np.array_equal(
        cl.simulate(ag, shards), np.broadcast_to(shards.ravel(), (size, shards.size))
    )
    rs = nccl_ring_reduce_scatter(n_nodes, g, channels)
    cl.verify(rs)
    full = rng.integers(-50, 50, size=(size, size * channels))
    assert np.array_equal(cl.simulate(rs, full), full.sum(axis=0).reshape(size, channels))


@pytest.mark.parametrize(
    "n_nodes,g,chunks", [(1, 1, 4), (1, 8, 1), (1, 8, 5), (2, 2, 4), (9, 8, 3), (64, 8, 8)]
)
def test_tree_steps_one_chunk_per_step_per_edge(n_nodes, g, chunks):
    s = nccl_tree_all_reduce(n_nodes, g, n_segments=chunks, n_channels=2)
    size = n_nodes * g
    height = g - 1 + math.ceil(math.log2(n_nodes))
    assert s.n_steps == (0 if size == 1 else chunks - 1 + 2 * height)
    # every edge of every (channel, tree) part: each chunk once up (reduce), once down (copy)
    assert s.n_transfers == 2 * (size - 1) * chunks * 4
    a = s.transfer_arrays()
    part = a["src_chunk"] // chunks
    key = np.stack([a["step"], a["src"], a["dst"], part])
    assert np.unique(key, axis=1).shape[1] == s.n_transfers


def test_a_broadcast_sent_before_the_root_has_every_sum_is_rejected():
    s = nccl_tree_all_reduce(3, 2, n_segments=2)
    a = s.transfer_arrays()
    step = a["step"].copy()
    first_copy = np.flatnonzero(~a["reduce"])[0]  # the root's first broadcast
    step[first_copy] -= 1
    o = np.argsort(step, kind="stable")
    bad = cl.Schedule.from_arrays(
        "all_reduce",
        s.n_ranks,
        s.n_chunks,
        step[o],
        a["src"][o],
        a["dst"][o],
        a["src_chunk"][o],
        a["dst_chunk"][o],
        a["reduce"][o],
        n_steps=s.n_steps,
    )
    with pytest.raises(cl.ScheduleError, match=r"summed over 2 of 6 ranks"):
        cl.verify(bad)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: nccl_tree_all_reduce(0, 8), "n_nodes must be an integer >= 1"),
        (lambda: nccl_ring_all_reduce(2, 0), "gpus_per_node must be an integer >= 1"),
        (lambda: nccl_ring_all_gather(2, 8, n_channels=0), "n_channels must be an integer >= 1"),
        # the old keyword n_chunks is still accepted, and named when it is wrong
        (lambda: nccl_tree_all_reduce(2, 8, n_chunks=0), "n_chunks must be an integer >= 1"),
        (lambda: nccl_tree_all_reduce(2, 8, n_segments=0), "n_segments must be an integer >= 1"),
        (
            lambda: nccl_tree_all_reduce(2, 8, n_segments=2, n_chunks=3),
            "n_segments and its old name n_chunks were both given",
        ),
        (lambda: nccl_rings(2, 2.5), "gpus_per_node must be an integer"),
        (lambda: nccl_trees(True, 2), "n_nodes must be an integer"),
    ],
)
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(cl.ScheduleError, match=message):
        call()


# ---- link loads on the rail-optimised cluster ------------------------------------------------


def test_tree_on_two_nodes_of_two_gpus_by_hand():
    # Ranks 0,1 | 2,3; heads GPU 0 (ranks 0 and 2). Part 0 (tree 1, root node 0): 1->0 and
    # 3->2 at step j, 2->0 at j+1; down 0->1, 0->2 at j+2, 2->3 at j+3. Part 1 (tree 2, root
    # node 1) the mirror image. A chunk is S/(2K). The inter-node link of each direction
    # carries one part's reduction (step j+1) and the other part's broadcast (step j+2):
    # 1 chunk at step 1, 2 chunks at steps 2..K, 1 at step K+1 -> leaf steps cost
    # (2 * 1/2 + (K-1)) S/(K B_nic) = S / B_nic. The NVLink-bound steps: step 0 (two
    # chunks on GPU1->NVSwitch: 2 S/(2K)/450e9) and step K+2 (one chunk: S/(2K)/450e9),
    # together S / (K 300e9). T = S/50e9 + S/(300e9 K).
    S, K = 1e9, 4
    s = nccl_tree_all_reduce(2, 2, n_segments=K)
    assert s.n_steps == K + 3
    t = cl.time(s, cluster(2, 2), S)
    assert t.seconds == pytest.approx(S / NIC + S / (300e9 * K), rel=1e-12)
    levels = t.level_seconds()
    assert levels["leaf"] == pytest.approx(S / NIC, rel=1e-12)
    assert levels["nvlink"] == pytest.approx(S / (300e9 * K), rel=1e-12)
    # bytes: 2 inter-node edges-directions x 2 parts x S/2, each over NIC->leaf->NIC (2
    # leaf links) and GPU->NIC, NIC->GPU (2 PCIe links): 4S each; the 2 chain edges carry
    # 2 parts x 2 directions x S/2 over GPU->NVSwitch->GPU: 8S
    b = t.level_bytes()
    assert b["leaf"] == pytest.approx(4 * S) and b["pcie"] == pytest.approx(4 * S)
    assert b["nvlink"] == pytest.approx(8 * S) and b["spine"] == 0


@pytest.mark.parametrize("n_nodes,channels", [(2, 1), (5, 2), (8, 8), (13, 3)])
def test_tree_link_bytes_closed_forms(n_nodes, channels):
    # Every tree edge carries its part (S / (2C)) once up and once down; 2C parts. N-1
    # inter-node edges per part, each hop over 2 leaf links: leaf bytes
    # 2C (N-1) 2 (S/2C) 2 = 4 (N-1) S, whatever C; the heads of a channel share a rail, so
    # no spine. N (g-1) chain edges per part over 2 NVLink links: 4 N (g-1) S.
    S, g = 1e9, 8
    t = cl.time(
        nccl_tree_all_reduce(n_nodes, g, n_segments=4, n_channels=channels), cluster(n_nodes, g), S
    )
    b = t.level_bytes()
    assert b["leaf"] == pytest.approx(4 * (n_nodes - 1) * S)
    assert b["nvlink"] == pytest.approx(4 * n_nodes * (g - 1) * S)
    assert b["spine"] == 0
    # the traffic stays on the channels' rails: NIC i carries bytes only if some channel
    # has its head on GPU i
    nic_up = nic_to_leaf_bytes(t, cluster(n_nodes, g)).reshape(n_nodes, g)
    used = nic_up.sum(axis=0) > 0
    assert np.flatnonzero(used).tolist() == sorted({c % g for c in range(channels)})


def test_ring_on_four_nodes_eight_channels_runs_at_the_nics_speed():
    # R = 32 ranks, C = 8 channels, chunk S/(C R). Each step every ring edge moves one
    # chunk. With PXN, channel c leaves node k from GPU c+1 over NVLink to GPU c and NIC c:
    # every NIC link carries 1 chunk per step (its own channel), 1/50e9 s per chunk byte;
    # every GPU->NVSwitch link carries 8 (one per channel), 8/450e9 = 1/56.25e9 s per chunk
    # byte; PCIe 1 chunk, 1/64e9. So the NIC bounds each step:
    # T = 2(R-1) S / (C R B_nic) = 62 S / (8 * 32 * 50e9); busbw = 2(R-1)/R S/T = C B_nic.
    S, N, g, C = 1e9, 4, 8, 8
    R = N * g
    s = nccl_ring_all_reduce(N, g, C)
    assert s.n_steps == 2 * (R - 1) and not s.is_listed
    t = cl.time(s, cluster(N, g, pxn=True), S)
    assert t.seconds == pytest.approx(62 * S / (8 * 32 * NIC), rel=1e-12)
    assert cl.busbw("all_reduce", S, t.seconds, R) == pytest.approx(C * NIC, rel=1e-12)
    assert t.bottleneck_level == "leaf" and set(t.level_seconds()) == {"leaf"}
    # each channel crosses each of the N node boundaries once per step: leaf bytes
    # C N 2(R-1) (S/(C R)) 2 links = 4 N (R-1) S / R, nothing on the spines
    b = t.level_bytes()
    assert b["leaf"] == pytest.approx(4 * N * (R - 1) * S / R)
    assert b["spine"] == 0
    nic_up = nic_to_leaf_bytes(t, cluster(N, g, pxn=True))
    assert nic_up == pytest.approx(np.full(R, 2 * (R - 1) * S / (C * R)))


def test_ring_without_pxn_crosses_rails_through_the_spines():
    # GPU c+1 of node k sends to GPU c of node k+1: without PXN that hop goes out of NIC c+1
    # (rail c+1), up to a spine and down to rail c -- the spine carries what the leaves do
    S, N, g, C = 1e9, 4, 8, 8
    R = N * g
    s = nccl_ring_all_reduce(N, g, C)
    direct = cl.time(s, cluster(N, g), S)
    pxn = cl.time(s, cluster(N, g, pxn=True), S)
    b = direct.level_bytes()
    assert b["spine"] == pytest.approx(b["leaf"]) == pytest.approx(4 * N * (R - 1) * S / R)
    assert direct.seconds >= pxn.seconds


def test_one_channel_ring_on_two_nodes_by_hand():
    # ranks 0 -> 1 -> 2 -> 3 -> 0; chunk S/4; 6 steps, each bounded by one chunk on a NIC:
    # T = 6 (S/4) / 50e9 = 3 S / 100e9 (the PCIe hop, S/4 / 64e9, and NVLink are faster)
    S = 1e9
    t = cl.time(nccl_ring_all_reduce(2, 2), cluster(2, 2, pxn=True), S)
    assert t.seconds == pytest.approx(3 * S / 100e9, rel=1e-12)


def test_ring_all_gather_and_reduce_scatter_move_half_the_all_reduce():
    # (R-1) steps of one chunk S/(C R) per edge: T = (R-1) S / (C R B_nic) on the NICs
    S, N, g, C = 1e9, 4, 8, 8
    R = N * g
    topo = cluster(N, g, pxn=True)
    for s in (nccl_ring_all_gather(N, g, C), nccl_ring_reduce_scatter(N, g, C)):
        assert s.n_steps == R - 1
        t = cl.time(s, topo, S)
        assert t.seconds == pytest.approx((R - 1) * S / (C * R * NIC), rel=1e-12)
        assert t.level_bytes()["leaf"] == pytest.approx(2 * N * (R - 1) * S / R)


def test_512_nodes_of_8_gpus_build_and_cost_quickly():
    import time as clock

    S, N, g = 1e9, 512, 8
    R = N * g
    start = clock.perf_counter()
    ring = nccl_ring_all_reduce(N, g, n_channels=8)
    tree = nccl_tree_all_reduce(N, g, n_segments=8, n_channels=2)
    topo = cluster(N, g, pxn=True)
    t_ring, t_tree = cl.time(ring, topo, S), cl.time(tree, topo, S)
    elapsed = clock.perf_counter() - start
    assert elapsed < 30  # a loose bound: it takes well under a second here
    assert not ring.is_listed  # costed from its traffic, 268 million transfers unlisted
    assert t_ring.seconds == pytest.approx(2 * (R - 1) * S / (8 * R * NIC), rel=1e-12)
    # 8 - 1 + 2 (g - 1 + log2 512) = 7 + 2 * 16 steps
    assert tree.n_steps == 39 and t_tree.level_bytes()["leaf"] == pytest.approx(4 * (N - 1) * S)
    # with a microsecond per link the tree's 39 steps beat the ring's 8190 on small buffers
    slow = cluster(N, g, pxn=True, nvlink_latency=1e-6, pcie_latency=1e-6, network_latency=1e-6)
    assert cl.time(tree, slow, 1e5).seconds < cl.time(ring, slow, 1e5).seconds / 50


def test_n_segments_is_the_current_name_of_the_trees_pipelining_depth():
    new = nccl_tree_all_reduce(3, 2, n_segments=4, n_channels=2)
    for old in (
        nccl_tree_all_reduce(3, 2, n_chunks=4, n_channels=2),
        nccl_tree_all_reduce(3, 2, 4, 2),
    ):  # positional, as before
        assert old.to_lists() == new.to_lists() and old.n_chunks == new.n_chunks
    # 2 channels x 2 trees = 4 parts of 4 segments: 16 slots
    assert new.n_chunks == 16
