"""The one GPU-cluster builder (collectives.topology.cluster): rail-optimised SuperPOD
clusters, routes through NVLink, PCIe and the fabric, PXN, routes to switches, the routing
options (hashed ECMP, deterministic up/down, adaptive), property tests on random small
clusters of every kind."""

import itertools
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import topology as tp


def hops(topo, links):
    """The (from, to) node pairs a list of links joins."""
    return [(int(topo.link_src[link]), int(topo.link_dst[link])) for link in links]


def assert_chain(topo, src, dst, links):
    """The links join up into one walk from src to dst."""
    nodes = hops(topo, links)
    assert nodes, (src, dst)
    assert nodes[0][0] == src and nodes[-1][1] == dst
    assert all(a[1] == b[0] for a, b in zip(nodes, nodes[1:]))


def levels(topo, links):
    return [topo.info.levels[topo.link_level[link]] for link in links]


def dgx(n_nodes=4, **options):
    options = {"nodes_per_unit": 2, "n_spines": 4, **options}
    return tp.cluster(
        n_nodes,
        8,
        nvlink_bandwidth=450e9,
        pcie_bandwidth=64e9,
        nic_bandwidth=50e9,
        nvlink_latency=1e-7,
        pcie_latency=2e-7,
        network_latency=1e-6,
        **options,
    )


# node ids of dgx(): GPUs 0..31, NICs 32..63, NVSwitches 64..67, leaves 68..83, spines 84..87
NVSWITCH, LEAF, SPINE = 64, 68, 84


def test_cluster_counts():
    # 4 nodes x 8 GPUs, 2 units of 2 nodes, 4 spines:
    # 32 GPUs, 32 NICs; switches: 4 NVSwitches + 2 units x 8 rails = 16 leaves + 4 spines = 24
    # links, each way: 32 GPU-NVSwitch + 32 GPU-NIC + 32 NIC-leaf + 16 x 4 leaf-spine
    #   = 2 x (32 + 32 + 32 + 64) = 320
    c = dgx()
    assert (c.n_ranks, c.n_nics, c.n_switches, c.n_nodes, c.n_links) == (32, 32, 24, 88, 320)
    assert c.kind == "cluster" and c.shape == (4, 8)
    assert c.info.levels == ("nvlink", "pcie", "leaf", "spine")
    assert np.bincount(c.link_level).tolist() == [64, 64, 64, 128]
    assert c.switches.tolist() == list(range(NVSWITCH, SPINE + 4))
    assert c.node_role[32:64].tolist() == [cl.topology.ROLES.index("nic")] * 32
    for level, bandwidth in enumerate([450e9, 64e9, 50e9, 50e9]):
        assert set(c.link_bandwidth[c.link_level == level].tolist()) == {bandwidth}
    # rail-optimised: NIC 3 of node 0 and node 1 share leaf (unit 0, rail 3) = 68 + 3;
    # node 2 (unit 1) has leaf 68 + 8 + 3
    nic_leaf = {int(s): int(d) for s, d in zip(c.link_src, c.link_dst) if 32 <= s < 64}
    assert (nic_leaf[32 + 3], nic_leaf[32 + 11], nic_leaf[32 + 19]) == (71, 71, 79)
    # every leaf has one link each way to every spine
    up = c.link_level == 3
    pairs = set(zip(c.link_src[up].tolist(), c.link_dst[up].tolist()))
    assert pairs == {
        (a, b)
        for leaf in range(LEAF, SPINE)
        for s in range(SPINE, SPINE + 4)
        for a, b in ((leaf, s), (s, leaf))
    }


def test_cluster_routes():
    c = dgx()
    # inside node 0: GPU 1 -> NVSwitch 64 -> GPU 5
    assert hops(c, c.route(1, 5)) == [(1, 64), (64, 5)]
    assert levels(c, c.route(1, 5)) == ["nvlink", "nvlink"]
    # node 0 -> node 1, rail 3, unit 0: one leaf, no NVLink, no spine
    assert hops(c, c.route(3, 11)) == [(3, 35), (35, 71), (71, 43), (43, 11)]
    assert levels(c, c.route(3, 11)) == ["pcie", "leaf", "leaf", "pcie"]
    # across units (node 0 -> node 2, rail 3) and across rails (rail 3 -> rail 4): a spine
    for dst, dst_leaf in ((19, 79), (12, 72)):
        route = hops(c, c.route(3, dst))
        assert levels(c, c.route(3, dst)) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]
        assert route[:2] == [(3, 35), (35, 71)] and route[-2:] == [
            (dst_leaf, 32 + dst),
            (32 + dst, dst),
        ]
        assert SPINE <= route[2][1] < SPINE + 4
    # latency: 2 PCIe hops + 4 network hops
    assert c.path_latency([3], [19]).tolist() == pytest.approx([2 * 2e-7 + 4 * 1e-6])


def test_cluster_routes_to_its_nvswitch_and_rail_leaf():
    c = dgx()
    assert hops(c, c.route(9, NVSWITCH + 1)) == [(9, 65)]
    assert hops(c, c.route(NVSWITCH + 1, 9)) == [(65, 9)]
    assert hops(c, c.route(9, LEAF + 1)) == [(9, 41), (41, 69)]
    assert hops(c, c.route(LEAF + 1, 9)) == [(69, 41), (41, 9)]
    assert levels(c, c.route(LEAF + 1, 9)) == ["leaf", "pcie"]


@pytest.mark.parametrize(
    "src, dst",
    [
        (9, NVSWITCH),  # another node's NVSwitch
        (9, LEAF + 2),  # another rail's leaf
        (9, LEAF + 8 + 1),  # the same rail's leaf in the other unit
        (9, SPINE),
        (SPINE, 9),
        (LEAF, SPINE),  # switch to switch
    ],
)
def test_cluster_refuses_other_switch_routes(src, dst):
    message = (
        f"a cluster routes a GPU only to and from its own node's NVSwitch and its rail "
        f"leaf switch, not {src} -> {dst}"
    )
    with pytest.raises(cl.TopologyError, match=f"^{re.escape(message)}$"):
        dgx().paths([0, src], [1, dst])


def test_cluster_refuses_nics_as_ends():
    with pytest.raises(cl.TopologyError, match=r"^src 40 is not an endpoint \(0..31\)"):
        dgx().paths([40], [1])


def test_cluster_routes_are_shortest_and_spread_over_spines():
    c = dgx()
    g = nx.DiGraph(list(zip(c.link_src.tolist(), c.link_dst.tolist())))
    src, dst = map(np.array, zip(*itertools.permutations(range(32), 2)))
    pair, link = c.paths(src, dst)
    length = np.bincount(pair)
    for i in range(0, len(src), 7):
        assert length[i] == nx.shortest_path_length(g, int(src[i]), int(dst[i]))
    spine_hops = c.link_dst[link][c.link_level[link] == 3]
    used = np.bincount(spine_hops[spine_hops >= SPINE] - SPINE, minlength=4)
    assert used.min() > 0.8 * used.mean()  # every spine takes its share
    _, again_link = c.paths(src, dst)  # deterministic
    assert again_link.tolist() == link.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 5), st.integers(1, 3), st.data())
def test_cluster_routes_chain(n_nodes, gpus, per_unit, n_spines, data):
    c = tp.cluster(
        n_nodes,
        gpus,
        nvlink_bandwidth=1.0,
        pcie_bandwidth=1.0,
        nic_bandwidth=1.0,
        nodes_per_unit=per_unit,
        n_spines=n_spines,
    )
    e = c.n_ranks
    gpu = data.draw(st.integers(0, e - 1))
    node, rail = divmod(gpu, gpus)
    leaf = 2 * e + n_nodes + node // per_unit * gpus + rail
    others = [b for b in range(e) if b != gpu] + [2 * e + node, leaf]
    for other in data.draw(st.lists(st.sampled_from(others), min_size=1, max_size=6)):
        for a, b in ((gpu, other), (other, gpu)):
            assert_chain(c, a, b, c.route(a, b))


def test_cluster_defaults():
    one = tp.cluster(4, 8, nvlink_bandwidth=1.0, pcie_bandwidth=1.0, nic_bandwidth=2.0)
    # one unit of 4 nodes: 8 leaves, 4 spines (as many leaf up-links as down-links)
    assert one.n_switches == 4 + 8 + 4
    assert set(one.link_bandwidth[one.link_level == 3].tolist()) == {2.0}
    assert one.name == "cluster of 4 x 8 GPUs, 4 spines"
    partial = tp.cluster(
        3,
        2,
        nvlink_bandwidth=1.0,
        pcie_bandwidth=1.0,
        nic_bandwidth=1.0,
        nodes_per_unit=2,
        spine_bandwidth=4.0,
    )
    # 2 units (the last holds one node): 3 NVSwitches + 2 x 2 leaves + 2 spines
    assert partial.n_switches == 3 + 4 + 2
    assert set(partial.link_bandwidth[partial.link_level == 3].tolist()) == {4.0}
    slots = tp.cluster(
        4, 1, nvlink_bandwidth=1.0, pcie_bandwidth=1.0, nic_bandwidth=1.0, nodes_per_unit=32
    )
    assert slots.n_switches == 4 + 1 + 4  # spines: min(32, 4 nodes)


def test_cluster_time_of_a_cross_node_exchange():
    # all-gather over 2 GPUs on 2 nodes (one GPU each, rail 0, one unit): 1 step, each GPU
    # sends its 2**20-byte half over PCIe (64 GB/s), NIC -> leaf -> NIC (50 GB/s), PCIe:
    # the NIC links bound it: 2**20 / 50e9 s, plus 2 x 0.2 us PCIe + 2 x 1 us network latency
    c = tp.cluster(
        2,
        1,
        nvlink_bandwidth=450e9,
        pcie_bandwidth=64e9,
        nic_bandwidth=50e9,
        pcie_latency=2e-7,
        network_latency=1e-6,
    )
    t = cl.time(cl.algorithms.ring_all_gather(2), c, 2 * 2**20)
    assert t.seconds == pytest.approx(2**20 / 50e9 + 2 * 2e-7 + 2 * 1e-6)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_nodes": 0}, "n_nodes must be an integer >= 1, got 0"),
        ({"gpus_per_node": 2.5}, "gpus_per_node must be an integer, got 2.5"),
        ({"nodes_per_unit": 0}, "nodes_per_unit must be an integer >= 1, got 0"),
        ({"n_spines": 0}, "n_spines must be an integer >= 1, got 0"),
        (
            {"nvlink_bandwidth": 0},
            "nvlink_bandwidth must be finite and > 0 (bytes/s per direction), got 0.0",
        ),
        (
            {"nic_bandwidth": "fast"},
            "nic_bandwidth must be a number (bytes/s per direction), got 'fast'",
        ),
        (
            {"spine_bandwidth": float("inf")},
            "spine_bandwidth must be finite and > 0 (bytes/s per direction), got inf",
        ),
        (
            {"network_latency": -1e-6},
            "network_latency must be finite and >= 0 (seconds), got -1e-06",
        ),
    ],
)
def test_bad_clusters_are_named(options, message):
    args = {
        "n_nodes": 2,
        "gpus_per_node": 2,
        "nvlink_bandwidth": 1.0,
        "pcie_bandwidth": 1.0,
        "nic_bandwidth": 1.0,
        **options,
    }
    with pytest.raises(cl.TopologyError, match=f"^{re.escape(message)}$"):
        tp.cluster(args.pop("n_nodes"), args.pop("gpus_per_node"), **args)


def test_composed_topologies_are_immutable():
    with pytest.raises(cl.TopologyError, match="cannot be changed once built"):
        dgx().n_ranks = 3


def test_pxn_crosses_nvlink_to_the_gpu_on_the_destinations_rail_first():
    t = tp.cluster(
        4,
        8,
        nvlink_bandwidth=450e9,
        pcie_bandwidth=64e9,
        nic_bandwidth=50e9,
        nodes_per_unit=2,
        pxn=True,
    )
    levels = t.info.levels

    def kinds(a, b):
        return [levels[t.link_level[link]] for link in t.route(a, b)]

    # GPU 0 (node 0, rail 0) to GPU 9 (node 1, rail 1), same unit: over NVLink to GPU 1,
    # then out of GPU 1's NIC through the rail-1 leaf; no spine
    assert kinds(0, 9) == ["nvlink", "nvlink", "pcie", "leaf", "leaf", "pcie"]
    assert [int(t.link_dst[link]) for link in t.route(0, 9)][1] == 1
    # to another unit (GPU 17: node 2, rail 1): the same, then through a spine
    assert kinds(0, 17) == ["nvlink", "nvlink", "pcie", "leaf", "spine", "spine", "leaf", "pcie"]
    # same rail: no detour; inside a node: NVLink only
    assert kinds(0, 8) == ["pcie", "leaf", "leaf", "pcie"]
    assert kinds(0, 1) == ["nvlink", "nvlink"]
    # without PXN the cross-rail route takes the spine even inside a unit
    plain = tp.cluster(
        4, 8, nvlink_bandwidth=450e9, pcie_bandwidth=64e9, nic_bandwidth=50e9, nodes_per_unit=2
    )
    assert [levels[plain.link_level[link]] for link in plain.route(0, 9)] == [
        "pcie",
        "leaf",
        "spine",
        "spine",
        "leaf",
        "pcie",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(1, 2),
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(1, 2),
    st.integers(1, 2),
    st.data(),
)
def test_three_tier_cluster_routes_are_shortest_chains(
    n_nodes, gpus, per_unit, per_group, n_spines, spine_links, cores, core_links, data
):
    c = tp.cluster(
        n_nodes,
        gpus,
        nvlink_bandwidth=1.0,
        pcie_bandwidth=1.0,
        nic_bandwidth=1.0,
        nodes_per_unit=per_unit,
        units_per_group=per_group,
        n_spines=n_spines,
        spine_links=spine_links,
        cores_per_group=cores,
        core_links=core_links,
    )
    n_units = -(-n_nodes // per_unit)
    n_groups = -(-n_units // per_group)
    # switches: NVSwitches, leaves, spines per group, and cores only with several groups
    assert c.n_switches == (
        n_nodes + n_units * gpus + n_groups * n_spines + (n_spines * cores if n_groups > 1 else 0)
    )
    # cables per tier: one per NIC, spine_links per (leaf, spine of its group), core_links per
    # (spine, core of its core group)
    cables = np.bincount(c.link_level, minlength=5) // 2
    assert cables[3] == n_units * gpus * n_spines * spine_links
    assert cables[4] == (n_groups * n_spines * cores * core_links if n_groups > 1 else 0)
    g = nx.MultiDiGraph(list(zip(c.link_src.tolist(), c.link_dst.tolist())))
    e = c.n_ranks
    src = data.draw(st.integers(0, e - 1))
    for dst in data.draw(st.lists(st.integers(0, e - 1), min_size=1, max_size=5)):
        if dst == src:
            continue
        route = c.route(src, dst)
        assert_chain(c, src, dst, route)
        assert len(route) == nx.shortest_path_length(g, src, dst)


def test_parallel_cables_share_the_load():
    # 1 unit of 32 nodes, 4 spines, 8 cables between each leaf and spine (the 1-SU SuperPOD):
    # the 32 x 31 routes from rail-0 GPUs to rail-1 GPUs cross the spine tier and spread
    # over all 32 up-cables of the rail-0 leaf
    c = tp.cluster(
        32,
        8,
        nvlink_bandwidth=1.0,
        pcie_bandwidth=1.0,
        nic_bandwidth=1.0,
        n_spines=4,
        spine_links=8,
    )
    src = np.repeat(np.arange(32) * 8, 31)
    dst = np.array([d * 8 + 1 for s in range(32) for d in range(32) if d != s])
    _, link = c.paths(src, dst)
    up = link[(c.link_level[link] == 3) & (c.link_src[link] < c.link_dst[link])]
    used = np.unique(up)
    assert len(used) == 32


# ---- the routing options ---------------------------------------------------------------

MASK = 2**64 - 1


def reference_fmix64(h):
    """MurmurHash3 fmix64 on Python ints (as in test_hashing.py)."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def reference_flow_hash(src, dst, seed):
    """flow_hash of flow 0 under ``seed``, from its docstring."""
    extra = reference_fmix64((seed & MASK) * 0xD6E8FEB86659FD93 & MASK)
    return reference_fmix64(((src << 32) | dst) ^ extra)


def two_leaves(routing, seed=0):
    """2 leaves x 2 hosts (hosts 0, 1 on leaf 4; 2, 3 on leaf 5), 2 spines (6, 7), links of
    1 byte/s; the leaf uplinks are links 8..11: (4 -> 6), (4 -> 7), (5 -> 6), (5 -> 7)."""
    return cl.fabric.layered(2, 1.0, [cl.fabric.Tier(2, 2)], routing=routing, hash_seed=seed)


SHIFT = (np.arange(4), (np.arange(4) + 2) % 4)  # 0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1


def test_the_two_leaf_fabric_is_wired_as_drawn():
    f = two_leaves("dmodk")
    up = np.flatnonzero((f.link_tier == 2) & f.link_up)
    assert up.tolist() == [8, 9, 10, 11]
    assert list(zip(f.link_src[up].tolist(), f.link_dst[up].tolist())) == [
        (4, 6),
        (4, 7),
        (5, 6),
        (5, 7),
    ]


def test_dmodk_loads_every_uplink_of_a_shift_exactly_once():
    # destination mod k: a flow leaves its leaf on uplink (destination's port under its own
    # leaf) mod 2: 0 -> 2 and 2 -> 0 on spine 6, 1 -> 3 and 3 -> 1 on spine 7; each leaf
    # sends one flow up each uplink and each spine one flow down each leaf: every link once
    f = two_leaves("dmodk")
    loads = cl.fabric.link_loads(f, *SHIFT)
    np.testing.assert_array_equal(loads, np.ones(f.n_links))
    # the choice depends on the destination only: every source reaching host 3 climbs
    # to spine 7 (3's port under leaf 5 is 1)
    for src in (0, 1):
        assert f.link_dst[f.route(src, 3)[1]] == 7


@pytest.mark.parametrize("seed", range(8))
def test_hashing_puts_the_flows_where_the_hash_digit_says(seed):
    # hashed ECMP: a flow's uplink is spine 6 + (flow_hash(src, dst, 0, seed) mod 2), the
    # first digit of the hash (the reference implementation above, not the package's)
    f = two_leaves("hash", seed)
    up = np.flatnonzero((f.link_tier == 2) & f.link_up)
    expected = np.zeros(4)
    for s, d in zip(*SHIFT):
        spine = reference_flow_hash(int(s), int(d), seed) % 2
        expected[2 * (s // 2) + spine] += 1
    np.testing.assert_array_equal(cl.fabric.link_loads(f, *SHIFT)[up], expected)


def test_hashing_collides_for_some_seed_and_costs_twice_as_long_then():
    # seed 1 puts both flows of each leaf on one uplink (0 -> 2, 1 -> 3 both hash to digit
    # 0, 2 -> 0 and 3 -> 1 both to 1, by the reference hash): k = 2 flows on a link, so one
    # step of S bytes per flow takes 2 S / B; d-mod-k and adaptive routing take S / B
    hashes = [reference_flow_hash(s, d, 1) % 2 for s, d in zip(*map(np.ndarray.tolist, SHIFT))]
    assert hashes == [0, 0, 1, 1]
    up = np.flatnonzero((two_leaves("hash").link_tier == 2) & two_leaves("hash").link_up)
    assert cl.fabric.link_loads(two_leaves("hash", 1), *SHIFT)[up].tolist() == [2, 0, 0, 2]
    step = cl.Schedule(
        "permute",
        4,
        1,
        [[(0, 2, 0, 0), (1, 3, 0, 0), (2, 0, 0, 0), (3, 1, 0, 0)]],
        peers=[2, 3, 0, 1],
    )
    seconds = {
        r: cl.time(step, two_leaves(r, 1), 10.0).seconds for r in ("hash", "dmodk", "adaptive")
    }
    assert seconds == {"hash": 20.0, "dmodk": 10.0, "adaptive": 10.0}


def test_adaptive_spreads_a_connection_evenly_over_its_paths():
    f = two_leaves("adaptive")
    # 0 -> 2 has two equal-cost paths (spine 6 or 7): its host cables carry all of it,
    # each uplink and each downlink half
    pair, link, share = f.link_shares([0], [2])
    assert link.tolist() == [0, 8, 9, 14, 15, 6] and share.tolist() == [1, 0.5, 0.5, 0.5, 0.5, 1]
    # the shift: every uplink carries two halves, 1 byte per byte sent, as d-mod-k
    np.testing.assert_array_equal(cl.fabric.link_loads(f, *SHIFT), np.ones(f.n_links))
    # paths() gives one of the equal-cost paths: the one d-mod-k takes
    assert f.route(0, 2) == two_leaves("dmodk").route(0, 2)


def test_adaptive_routing_on_a_superpod_rail_spreads_over_every_spine_cable():
    # 1 SU (32 nodes, 4 spines, 8 cables between each leaf and spine): a GPU on rail 0 of
    # node 0 to rail 1 of node 1 spreads over the 32 up-cables of its leaf: 1/32 on each
    c = cl.hardware.preset("superpod-h100", units=1, routing="adaptive")
    pair, link, share = c.link_shares([0], [9])
    spine_up = (c.link_level[link] == c.info.levels.index("spine")) & c.link_up[link]
    assert spine_up.sum() == 32 and np.allclose(share[spine_up], 1 / 32)
    assert share[c.link_level[link] == c.info.levels.index("pcie")].tolist() == [1.0, 1.0]


def test_with_routing_keeps_the_links_and_declares_the_choice():
    f = two_leaves("hash")
    g = f.with_routing("dmodk")
    assert g.routing == "dmodk" and g.info.fabric.routing == "dmodk" and f.routing == "hash"
    assert np.array_equal(g.link_src, f.link_src) and g.hash_seed == 0
    assert f.with_routing(hash_seed=4).info.fabric.hash_seed == 4
    with pytest.raises(
        cl.TopologyError, match="routing must be one of 'hash', 'dmodk', 'adaptive', got 'random'"
    ):
        f.with_routing("random")


# ---- the one builder on every fabric -----------------------------------------------------


def test_nvlink_nodes_on_a_fat_tree_fabric():
    # a k = 4 fat tree's 16 host ports carry the NICs of 4 nodes of 4 GPUs: GPUs of a node
    # meet on their NVSwitch, others cross PCIe and the fat tree (rails off: a node's 4
    # NICs fill one pod's two edge switches)
    fabric = cl.fabric.clos_fabric(4, 3, 2, 2, 50e9)
    c = tp.gpu_cluster(fabric, 4, 4, nvlink_bandwidth=450e9, pcie_bandwidth=64e9)
    assert c.info.levels == ("nvlink", "pcie", "leaf", "spine", "core")
    assert (c.n_ranks, c.n_nics, c.n_switches) == (16, 16, 4 + 20)
    assert c.route_levels(0, 3) == ["nvlink", "nvlink"]
    assert c.route_levels(0, 4) == [
        "pcie",
        "leaf",
        "spine",
        "core",
        "core",
        "spine",
        "leaf",
        "pcie",
    ]
    assert c.info.gpus_per_node == 4 and c.info.fabric.switches_per_tier == (8, 8, 4)
    assert c.info.fabric.endpoints_per_block == (2, 4, 16)


def test_fabric_descriptions_are_checked():
    fabric = tp.Fabric(2, 1.0, (tp.Tier(2, 2),))
    with pytest.raises(cl.TopologyError, match="NVLink nodes need pcie_bandwidth"):
        tp.gpu_cluster(fabric, 2, 2, nvlink_bandwidth=1.0)
    with pytest.raises(
        cl.TopologyError,
        match=r"the fabric holds 4 hosts \(2 leaves of 2\), fewer than the 6 endpoints",
    ):
        tp.gpu_cluster(fabric, 6)
    with pytest.raises(cl.TopologyError, match="pxn relays over NVLink"):
        tp.gpu_cluster(fabric, 2, 2, pxn=True)
    with pytest.raises(
        cl.TopologyError, match=r"fabric must be a collectives\.topology\.cluster\.Fabric"
    ):
        tp.gpu_cluster((2, 1.0), 2)
    with pytest.raises(cl.TopologyError, match=r"tiers\[0\] must be a fabric\.Tier"):
        tp.gpu_cluster(tp.Fabric(2, 1.0, ((2, 2),)), 2)


def test_nvlink_and_pcie_do_not_fail_and_a_failed_spine_is_avoided():
    c = dgx()
    with pytest.raises(cl.TopologyError, match="link 0 is an NVLink or PCIe link"):
        c.fail(links=[0])
    with pytest.raises(cl.TopologyError, match="switch ids must be fabric switches"):
        c.fail(switches=[NVSWITCH])
    broken = c.fail(switches=[SPINE])
    src, dst = map(np.array, zip(*itertools.permutations(range(32), 2)))
    for routing in tp.ROUTINGS:
        _, link, _ = broken.with_routing(routing).link_shares(src, dst)
        assert not np.isin(SPINE, broken.link_dst[link])
        assert not broken.failed[link].any()
    assert broken.live_capacity() == c.live_capacity() - 2 * 16 * 50e9  # 16 leaf cables


def test_route_with_lets_the_caller_choose_each_hop():
    # always the last candidate: on the two-leaf fabric 0 -> 2 and 1 -> 3 climb to spine 7
    f = two_leaves("hash")
    seen = []

    def last(hop, pairs, cand, usable):
        seen.append((hop, pairs.tolist()))
        return np.full(len(pairs), cand.shape[1] - 1)

    pair, link = f.route_with([0, 1], [2, 3], last)
    assert pair.tolist() == [0] * 4 + [1] * 4  # host, leaf-spine, spine-leaf, host
    assert f.link_dst[link[1]] == 7 and f.link_dst[link[5]] == 7
    assert seen[0] == (0, [0, 1]) and (1, [0, 1]) in seen
    with pytest.raises(cl.TopologyError, match="route_with routes pairs of endpoints only"):
        dgx().route_with([0], [NVSWITCH], last)


# ---- properties: random small fabrics of every kind, every routing option ----------------


@st.composite
def small_fabrics(draw):
    kind = draw(st.sampled_from(["superpod", "layered", "clos", "nvlink-layered"]))
    routing = draw(st.sampled_from(tp.ROUTINGS))
    seed = draw(st.integers(0, 3))
    if kind == "superpod":
        g = draw(st.integers(1, 3))
        topo = tp.cluster(
            draw(st.integers(1, 5)),
            g,
            nvlink_bandwidth=4.0,
            pcie_bandwidth=2.0,
            nic_bandwidth=1.0,
            nodes_per_unit=draw(st.integers(1, 3)),
            n_spines=draw(st.integers(1, 3)),
            spine_links=draw(st.integers(1, 2)),
            units_per_group=draw(st.integers(1, 2)),
            cores_per_group=draw(st.integers(1, 2)),
            core_links=draw(st.integers(1, 2)),
            pxn=draw(st.booleans()),
            routing=routing,
            hash_seed=seed,
        )
    elif kind == "clos":
        radix = draw(st.sampled_from([2, 4, 6]))
        tiers = draw(st.integers(1, 3))
        ratio = draw(st.sampled_from([1, 2, 3])) if tiers > 1 and radix > 2 else 1
        try:
            topo = cl.fabric.clos(radix, tiers, 1.0, ratio, routing=routing, hash_seed=seed)
        except cl.TopologyError:
            topo = cl.fabric.clos(radix, tiers, 1.0, routing=routing, hash_seed=seed)
    else:
        wiring = draw(st.sampled_from(["mesh", "striped"]))
        tiers = [tp.Tier(draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2)))]
        if draw(st.booleans()):
            w = tiers[0].switches * (2 if wiring == "striped" else draw(st.integers(1, 2)))
            tiers.append(tp.Tier(draw(st.integers(1, 2)), w, draw(st.integers(1, 2))))
        a = draw(st.integers(1, 3))
        planes = draw(st.integers(1, 2))
        if kind == "layered":
            topo = cl.fabric.layered(
                a, 1.0, tiers, planes=planes, wiring=wiring, routing=routing, hash_seed=seed
            )
        else:
            fabric = tp.Fabric(2 * a, 1.0, tuple(tiers), wiring=wiring, planes=planes)
            topo = tp.gpu_cluster(
                fabric,
                None,
                2,
                nvlink_bandwidth=4.0,
                pcie_bandwidth=2.0,
                routing=routing,
                hash_seed=seed,
            )
    return topo


def assert_up_then_down(topo, links):
    """Tiers rise one per hop, then fall one per hop: all up-links come first."""
    up = topo.link_up[links]
    assert not np.any(np.diff(up.astype(int)) > 0), "an up-link after a down-link"
    tier = topo.link_tier[links]
    assert list(tier) == list(tier[::-1])


@settings(max_examples=80, deadline=None)
@given(small_fabrics(), st.data())
def test_routes_are_valid_up_down_paths_on_every_fabric(topo, data):
    n = topo.n_ranks
    if n < 2:
        return
    src = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=10)))
    dst = (
        src
        + np.array(data.draw(st.lists(st.integers(1, n - 1), min_size=len(src), max_size=len(src))))
    ) % n
    flow = np.array(data.draw(st.lists(st.integers(0, 7), min_size=len(src), max_size=len(src))))
    pair, link = topo.paths(src, dst, flow_id=flow)
    assert np.all(np.diff(pair) >= 0)
    g = topo.gpus_per_node or 1
    pxn = "PXN" in topo.name
    for i, (s, d) in enumerate(zip(src, dst)):
        links = link[pair == i]
        assert_chain(topo, s, d, links.tolist())
        relay = pxn and s // g != d // g and s % g != d % g
        assert_up_then_down(topo, links[2:] if relay else links)
    # a spread flow is one unit of flow: it leaves src, reaches dst, and is conserved at
    # every node on the way
    pair, link, share = topo.link_shares(src, dst, flow_id=flow)
    for i, (s, d) in enumerate(zip(src, dst)):
        on = pair == i
        out = np.bincount(topo.link_src[link[on]], weights=share[on], minlength=topo.n_nodes)
        into = np.bincount(topo.link_dst[link[on]], weights=share[on], minlength=topo.n_nodes)
        net = out - into
        expected = np.zeros(topo.n_nodes)
        expected[s], expected[d] = 1.0, -1.0
        np.testing.assert_allclose(net, expected, atol=1e-12)
        if topo.routing != "adaptive":
            assert np.all(share[on] == 1.0)


def test_dmodk_is_the_destination_digit_rule_of_the_docstring():
    # 3 tiers: leaves of 2 hosts, 3 leaves per tier-2 block under 2 switches with 2 cables
    # from each leaf to each, 2 blocks under 3 top switches. The rule, by hand: at the leaf
    # the destination's port (dst mod 2) among 2 x 2 = 4 uplinks; at tier 2 its leaf's
    # index (dst // 2) mod 3 among the 3 top switches; going down, dst mod 2 among the 2
    # switches of the block, then dst mod 2 among the 2 cables into the leaf. route_with
    # takes that rule hop by hop (the general path); paths() must agree (the fast one).
    f = cl.fabric.layered(2, 1.0, [tp.Tier(3, 2, links=2), tp.Tier(2, 3)], routing="dmodk")
    src, dst = map(np.array, zip(*itertools.permutations(range(f.n_ranks), 2)))

    def by_hand(hop, pairs, cand, usable):
        d = dst[pairs]
        rule = {0: np.zeros_like(d), 1: (d % 2) % 4, 2: (d // 2) % 3, 3: d % 2, 4: d % 2}
        assert cand.shape[1] == {0: 1, 1: 4, 2: 3, 3: 2, 4: 2}[hop]
        return rule[hop]

    assert np.array_equal(f.route_with(src, dst, by_hand)[1], f.paths(src, dst)[1])


def test_hashed_ecmp_reads_the_flow_hash_as_digits_in_tier_order():
    # the same 3-tier fabric, hash seed 2: a flow's hash h (the reference above) is read as
    # digits of the bases (2 switches, 2 cables) up from the leaf, (3 switches, 1 cable) up
    # from tier 2, (2 switches, 1 cable) down from the top, (1 switch, 2 cables) down into
    # the leaf: h % 2, h // 2 % 2, h // 4 % 3, then h // 12 % 2, then h // 24 % 2
    f = cl.fabric.layered(2, 1.0, [tp.Tier(3, 2, links=2), tp.Tier(2, 3)], hash_seed=2)
    src, dst = map(np.array, zip(*itertools.permutations(range(f.n_ranks), 2)))
    h = np.array([reference_flow_hash(int(s), int(d), 2) for s, d in zip(src, dst)], dtype=object)

    def by_hand(hop, pairs, cand, usable):
        k = h[pairs]
        rule = {
            0: k * 0,
            1: (k % 2) * 2 + k // 2 % 2,
            2: k // 4 % 3,
            3: k // 12 % 2,
            4: k // 24 % 2,
        }
        return rule[hop].astype(np.int64)

    assert np.array_equal(f.route_with(src, dst, by_hand)[1], f.paths(src, dst)[1])
