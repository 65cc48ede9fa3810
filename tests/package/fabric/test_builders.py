"""Clos and fat-tree builders (collectives.fabric.builders): counts against Al-Fares and the
Clos formulas, up/down routes, hashed ECMP and deterministic d-mod-k routing, loads,
oversubscription, bisection, errors."""

import math
from functools import lru_cache

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import fabric
from collectives.errors import CollectivesError, TopologyError

BW = 100e9  # bytes/s per direction


@lru_cache(maxsize=None)
def build(kind, *args, **kwargs):
    if kind == "fat_tree":
        return fabric.fat_tree(*args, **kwargs)
    return fabric.clos(*args, **kwargs)


SMALL = [  # (kind, args, kwargs): small fabrics checked exhaustively
    ("fat_tree", (2, BW), ()),
    ("fat_tree", (4, BW), ()),
    ("fat_tree", (4, BW), (("ecmp", "spread"),)),
    ("clos", (4, 1, BW), ()),
    ("clos", (6, 2, BW), ()),
    ("clos", (8, 2, BW, 3), ()),
    ("clos", (6, 3, BW, 2), ()),
    ("clos", (6, 3, BW, 2), (("ecmp", "spread"),)),
    ("clos", (4, 4, BW), ()),
    ("clos", (4, 4, BW), (("ecmp", "spread"),)),
    ("clos", (2, 3, BW), ()),
]


def small(i):
    kind, args, kwargs = SMALL[i]
    return build(kind, *args, **dict(kwargs))


def lca_tier(t, src, dst):
    """Lowest tier whose subtree holds both hosts, from the host numbering alone."""
    src, dst = np.asarray(src), np.asarray(dst)
    top = np.full(len(src), t.tiers)
    h = t.radix // 2
    for tier in range(t.tiers - 1, 0, -1):  # hosts per tier-t subtree: a h^(t-1)
        size = t.hosts_per_leaf * h ** (tier - 1)
        top = np.where(src // size == dst // size, tier, top)
    return top


def check_walks(t, src, dst, pair, link):
    """Vectorised: every pair's links form the up/down walk src -> LCA tier -> dst."""
    src, dst = np.asarray(src), np.asarray(dst)
    n = len(src)
    assert np.all(np.diff(pair) >= 0), "links are not grouped by pair"
    counts = np.bincount(pair, minlength=n)
    np.testing.assert_array_equal(counts, 2 * lca_tier(t, src, dst))
    start = np.cumsum(counts) - counts
    end = start + counts - 1
    np.testing.assert_array_equal(t.link_src[link[start]], src)
    np.testing.assert_array_equal(t.link_dst[link[end]], dst)
    same = pair[1:] == pair[:-1]
    np.testing.assert_array_equal(t.link_dst[link[:-1]][same], t.link_src[link[1:]][same])
    # up through tiers 1, 2, .., u then down through u, .., 1 (link_tier: 1 = host cable;
    # the level names are the one set: "leaf", "spine", "core", "tier 4", ...)
    pos = np.arange(len(link)) - start[pair]
    up = pos < counts[pair] // 2
    np.testing.assert_array_equal(t.link_up[link], up)
    np.testing.assert_array_equal(t.link_tier[link], np.where(up, pos + 1, counts[pair] - pos))
    names = np.array(t.info.levels)[t.link_level[link]]
    want = np.array([cl.topology.tier_level(int(k)) for k in t.link_tier[link]])
    np.testing.assert_array_equal(names, want)
    # so node tiers rise by one per hop, then fall by one per hop
    rise = t.node_tier[t.link_dst[link]] - t.node_tier[t.link_src[link]]
    np.testing.assert_array_equal(rise, np.where(up, 1, -1))


def all_pairs(n):
    src, dst = np.divmod(np.arange(n * n), n)
    keep = src != dst
    return src[keep], dst[keep]


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts_match_al_fares(k):
    t = fabric.fat_tree(k, BW)
    assert t.n_ranks == k**3 // 4  # hosts
    assert t.n_switches == 5 * k**2 // 4  # k^2/2 edge + k^2/2 agg + k^2/4 core
    assert t.switches_per_tier == (k * k // 2, k * k // 2, k * k // 4)
    # cables: k^3/4 host-edge + k^3/4 edge-agg + k^3/4 agg-core, each two directed links
    assert t.n_links == 3 * k**3 // 2
    assert t.kind == "fat_tree" and t.tiers == 3 and t.radix == k and t.oversubscription == 1
    np.testing.assert_array_equal(t.link_bandwidth, BW)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_fat_tree_wiring_uses_every_port_and_cores_reach_each_pod_once(k):
    t = fabric.fat_tree(k, BW)
    out_deg = np.bincount(t.link_src, minlength=t.n_nodes)
    in_deg = np.bincount(t.link_dst, minlength=t.n_nodes)
    np.testing.assert_array_equal(out_deg, in_deg)
    np.testing.assert_array_equal(out_deg[: t.n_ranks], 1)
    np.testing.assert_array_equal(out_deg[t.n_ranks :], k)  # every switch port used once
    g = nx.Graph(t.to_networkx())
    assert nx.is_connected(g) and g.number_of_edges() == t.n_links // 2  # no parallel cables
    # Al-Fares: each core switch links to one aggregation switch in each of the k pods
    pod_of_agg = {}
    aggs = np.flatnonzero(t.node_tier == 2)
    for agg in aggs:
        hosts = [
            v
            for v in nx.descendants(g.subgraph(np.flatnonzero(t.node_tier <= 2)), agg)
            if v < t.n_ranks
        ]
        pods = {host // (k * k // 4) for host in hosts}
        assert len(pods) == 1 and len(hosts) == k * k // 4
        pod_of_agg[agg] = pods.pop()
    for core in np.flatnonzero(t.node_tier == 3):
        assert sorted(pod_of_agg[v] for v in g[core]) == list(range(k))
    # same wiring as the 3-tier Clos of radix k
    c = fabric.clos(k, 3, BW)
    np.testing.assert_array_equal(c.link_src, t.link_src)
    np.testing.assert_array_equal(c.link_dst, t.link_dst)


@pytest.mark.parametrize(
    "radix,tiers", [(2, 1), (8, 1), (4, 2), (8, 2), (16, 2), (4, 3), (6, 3), (2, 4), (4, 4), (4, 5)]
)
def test_clos_counts(radix, tiers):
    t = fabric.clos(radix, tiers, BW)
    h = radix // 2
    hosts = 2 * h**tiers  # non-blocking: 2 (R/2)^L
    assert t.n_ranks == hosts
    assert t.n_switches == (2 * tiers - 1) * h ** (tiers - 1)
    assert t.n_links == 2 * tiers * hosts  # L levels of H cables, 2 directions
    degree = np.bincount(t.link_src, minlength=t.n_nodes)
    np.testing.assert_array_equal(degree[hosts:], radix)  # every port of every switch used
    if tiers > 1:
        assert t.n_leaves == 2 * h ** (tiers - 1) and t.hosts_per_leaf == t.leaf_uplinks == h
    else:  # one switch, every port a host
        assert (t.n_leaves, t.hosts_per_leaf, t.leaf_uplinks) == (1, radix, 0)


@pytest.mark.parametrize(
    "radix,tiers,ratio,a,b",
    [
        (8, 2, 3, 6, 2),  # leaf-spine: 8 leaves x 6 hosts, 2 spines
        (4, 3, 3, 3, 1),
        (12, 2, 2, 8, 4),
        (6, 3, 2, 4, 2),
        (64, 2, 7, 56, 8),  # Llama-3-like 1:7
        (14, 2, 1.33, 8, 6),  # rounded to the realisable 8:6 = 1.333
    ],
)
def test_oversubscribed_clos_counts(radix, tiers, ratio, a, b):
    t = fabric.clos(radix, tiers, BW, oversubscription=ratio)
    h = radix // 2
    assert (t.hosts_per_leaf, t.leaf_uplinks) == (a, b)
    assert t.oversubscription == pytest.approx(a / b)
    leaves = 2 * h ** (tiers - 1)
    assert t.n_ranks == a * leaves
    # leaves, then (tiers - 2) middle tiers of 2 b h^(L-2), then b h^(L-2) at the top
    assert t.n_switches == leaves + (2 * tiers - 3) * b * h ** (tiers - 2)
    assert t.n_links == 2 * (t.n_ranks + (tiers - 1) * 2 * b * h ** (tiers - 1))
    degree = np.bincount(t.link_src, minlength=t.n_nodes)
    np.testing.assert_array_equal(degree[t.n_ranks : t.n_ranks + leaves], a + b)
    np.testing.assert_array_equal(degree[t.n_ranks + leaves :], radix)


@pytest.mark.parametrize("i", range(len(SMALL)))
def test_every_route_is_a_shortest_up_down_walk(i):
    t = small(i)
    src, dst = all_pairs(t.n_ranks)
    pair, link = t.paths(src, dst)
    check_walks(t, src, dst, pair, link)
    # and as short as any path in the graph
    g = t.to_networkx()
    hops = np.bincount(pair, minlength=len(src))
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    np.testing.assert_array_equal(hops, [lengths[s][d] for s, d in zip(src.tolist(), dst.tolist())])


def test_ring_neighbours_under_one_leaf_use_two_links():
    t = fabric.fat_tree(4, BW)
    assert len(t.route(0, 1)) == 2  # same edge switch
    assert len(t.route(1, 2)) == 4  # same pod, via an aggregation switch
    assert len(t.route(3, 4)) == 6  # next pod, via a core switch
    assert len(t.route(15, 0)) == 6
    assert t.route(5, 5) == []


@settings(max_examples=60, deadline=None)
@given(i=st.integers(0, len(SMALL) - 1), data=st.data())
def test_random_pairs_and_flows_route_validly(i, data):
    t = small(i)
    n = t.n_ranks
    pairs = data.draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(-(2**40), 2**40)),
            min_size=1,
            max_size=30,
        )
    )
    pairs = [p for p in pairs if p[0] != p[1]] or [(0, n - 1, 0)]
    src, dst, flow = (np.array(c) for c in zip(*pairs))
    pair, link = t.paths(src, dst, flow_id=flow)
    check_walks(t, src, dst, pair, link)
    # one pair at a time gives the same links
    one = np.concatenate([t.route(int(s), int(d), flow_id=int(f)) for s, d, f in pairs])
    np.testing.assert_array_equal(one, link)


def test_routing_is_vectorised_at_scale():
    t = fabric.fat_tree(16, BW)  # 1,024 hosts, 320 switches
    rng = np.random.default_rng(1)
    src = rng.integers(0, t.n_ranks, 200_000)
    dst = (src + rng.integers(1, t.n_ranks, len(src))) % t.n_ranks
    pair, link = t.paths(src, dst)
    check_walks(t, src, dst, pair, link)


def test_time_uses_fabric_paths_with_hop_latency():
    t = fabric.fat_tree(4, BW, hop_latency=1e-6)
    s = cl.algorithms.ring_all_gather(16)
    nbytes = 16 * 2**20
    # ring neighbours never share a link here, so each of the 15 steps costs one shard
    # over a link plus the longest neighbour path: 6 hops (3 -> 4, 7 -> 8, ..., 15 -> 0)
    expected = 15 * (6e-6 + nbytes / 16 / BW)
    assert cl.time(s, t, nbytes).seconds == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(t.path_latency([0, 1, 3], [1, 2, 4]), [2e-6, 4e-6, 6e-6])


def test_hash_is_deterministic_and_depends_on_flow_and_seed():
    src, dst = all_pairs(16)
    a = fabric.fat_tree(4, BW).paths(src, dst)
    b = fabric.fat_tree(4, BW).paths(src, dst)
    np.testing.assert_array_equal(a[1], b[1])
    t = fabric.fat_tree(4, BW)
    np.testing.assert_array_equal(t.paths(src, dst, flow_id=0)[1], a[1])
    assert not np.array_equal(t.paths(src, dst, flow_id=7)[1], a[1])
    assert not np.array_equal(fabric.fat_tree(4, BW, hash_seed=1).paths(src, dst)[1], a[1])
    assert t.ecmp == "hash" and t.hash_seed == 0


def chi_square(counts):
    counts = np.asarray(counts, dtype=float).ravel()
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def test_hash_spreads_flows_evenly_and_independently_per_tier():
    t = fabric.fat_tree(8, BW)  # h = 4 uplinks at the edge and at the aggregation
    # many flows of one pair across pods (flow ids), and many pairs (flow 0)
    flows = np.arange(4000)
    pair, link = t.paths(np.zeros(4000, np.int64), np.full(4000, 127), flow_id=flows)
    links = link.reshape(4000, 6)
    edge_up = links[:, 1] - links[:, 1].min()  # the edge switch's uplink: 0..3
    agg_up = links[:, 2] - links[:, 2].min()  # 16 (agg, uplink) choices of the pod
    assert set(edge_up.tolist()) == set(range(4)) and set(agg_up.tolist()) == set(range(16))
    # chi-square 99.9 % points: 16.27 (3 dof), 37.70 (15 dof)
    assert chi_square(np.bincount(edge_up, minlength=4)) < 16.27
    assert chi_square(np.bincount(agg_up, minlength=16)) < 37.70  # tiers independent
    src = np.repeat(np.arange(16), 64)  # pod 0 -> pods 4..7
    dst = np.tile(np.arange(64, 128), 16)
    pair, link = t.paths(src, dst)
    loads = np.bincount(link, minlength=t.n_links)
    core_up = loads[(t.link_tier == 3) & t.link_up][:16]  # pod 0's 16 core uplinks
    assert core_up.sum() == 1024 and chi_square(core_up) < 37.70


def shift(n, s):
    src = np.arange(n)
    return src, (src + s) % n


@pytest.mark.parametrize("i", [2, 7, 9])
def test_spread_routes_every_shift_permutation_without_collisions(i):
    t = small(i)
    n = t.n_ranks
    # non-blocking: one flow per link; at a:b leaf ports a leaf's uplinks must carry
    # ceil(a/b) of its flows, and nothing carries more
    bound = math.ceil(t.hosts_per_leaf / t.leaf_uplinks)
    worst = [fabric.link_loads(t, *shift(n, s)).max() for s in range(1, n)]
    assert max(worst) == bound, f"shift {int(np.argmax(worst)) + 1} carries {max(worst):g}"
    assert worst[t.hosts_per_leaf - 1] == bound  # shift by one leaf: every flow leaves


def test_spread_balances_a_shift_where_hash_collides():
    spread = fabric.fat_tree(8, BW, ecmp="spread")
    hashed = fabric.fat_tree(8, BW)
    src, dst = shift(128, 64)  # every flow crosses the core: all links used once
    loads = fabric.link_loads(spread, src, dst, 1e6)
    assert fabric.load_imbalance(loads) == 1.0
    np.testing.assert_array_equal(loads, 1e6)
    hashed_loads = fabric.link_loads(hashed, src, dst, 1e6)
    assert hashed_loads.sum() == loads.sum()
    assert fabric.load_imbalance(hashed_loads) >= 2.0
    # with one flow id per queue pair, 16 flows per host pair spread out again
    q = 16
    loads16 = fabric.link_loads(
        hashed,
        np.repeat(src, q),
        np.repeat(dst, q),
        1e6 / q,
        flow_id=np.tile(np.arange(q), len(src)),
    )
    assert 1 < fabric.load_imbalance(loads16) < fabric.load_imbalance(hashed_loads)


def test_spread_all_to_all_loads_each_tier_evenly():
    t = fabric.clos(6, 3, BW, 2, ecmp="spread")
    loads = fabric.link_loads(t, *all_pairs(t.n_ranks))
    for level in range(1, 4):
        for up in (True, False):
            chosen = loads[(t.link_tier == level) & (t.link_up == up)]
            assert chosen.min() == chosen.max(), (level, up)


@pytest.mark.parametrize("radix,ratio", [(12, 2), (8, 3), (8, 1)])
def test_oversubscription_divides_cross_leaf_throughput(radix, ratio):
    t = fabric.clos(radix, 2, BW, ratio, ecmp="spread")
    a = t.hosts_per_leaf
    src, dst = shift(t.n_ranks, a)  # every host sends to its peer under the next leaf
    flow = 1e9
    seconds = (fabric.link_loads(t, src, dst, flow) / t.link_bandwidth).max()
    assert flow / seconds == pytest.approx(BW / ratio)  # per-host throughput
    near_src, near_dst = shift(t.n_ranks, 1)
    same_leaf = near_dst // a == near_src // a
    inside = fabric.link_loads(t, near_src[same_leaf], near_dst[same_leaf])
    assert inside.max() == 1  # inside a leaf: full speed
    hashed = fabric.clos(radix, 2, BW, ratio)
    seconds = (fabric.link_loads(hashed, src, dst, flow) / BW).max()
    assert flow / seconds <= BW / ratio  # hashing can only do worse


def test_all_to_all_slows_down_with_oversubscription():
    # Unit bandwidth and nbytes = n ranks, so one chunk is one byte and takes one second.
    # k=4 fat tree: the busiest links are the host links, n - 1 = 15 chunks each.
    # Radix 4, 3 tiers at 3:1: 24 hosts, 3 per leaf and 1 uplink, which carries every
    # chunk from the leaf's 3 hosts to the 21 others: 63 chunks.
    fast = fabric.fat_tree(4, 1.0, ecmp="spread")
    slow = fabric.clos(4, 3, 1.0, 3, ecmp="spread")
    t_fast = cl.time(cl.algorithms.direct_all_to_all(16), fast, 16.0)
    t_slow = cl.time(cl.algorithms.direct_all_to_all(24), slow, 24.0)
    assert t_fast.seconds == 15.0 and t_slow.seconds == 63.0
    assert fast.link_tier[t_fast.step_bottleneck_link[0]] == 1
    assert slow.link_tier[t_slow.step_bottleneck_link[0]] == 2  # the leaf uplink
    # per byte each rank sends: 15/16 -> 63/24, a 2.8x slowdown (3x as n grows)
    assert (63 / 24) / (15 / 16) == pytest.approx(2.8)
    # a ring only ever has one flow leaving a leaf, so it does not notice: n - 1 steps
    assert cl.time(cl.algorithms.ring_all_gather(24), slow, 24.0).seconds == 23.0
    # a shift by one pod: 6 flows leave each pod over 2 core uplinks, 3 per leaf uplink
    src, dst = shift(24, 6)
    assert (fabric.link_loads(slow, src, dst) / slow.link_bandwidth).max() == 3.0
    assert (fabric.link_loads(fast, *shift(16, 4)) / fast.link_bandwidth).max() == 1.0


def max_flow_across_halves(t):
    g = nx.DiGraph()
    for u, v, bw in zip(t.link_src.tolist(), t.link_dst.tolist(), t.link_bandwidth.tolist()):
        g.add_edge(u, v, capacity=g.get_edge_data(u, v, {"capacity": 0})["capacity"] + bw)
    half = t.n_ranks // 2
    for r in range(half):
        g.add_edge("s", r)  # no capacity attribute: unbounded
        g.add_edge(half + r, "t")
    return nx.maximum_flow_value(g, "s", "t")


@pytest.mark.parametrize("i", [0, 1, 3, 4, 5, 6, 8])
def test_bisection_bandwidth_is_the_max_flow_between_halves(i):
    t = small(i)
    expected = t.n_ranks * BW / 2 / t.oversubscription
    assert fabric.bisection_bandwidth(t) == pytest.approx(expected)
    assert max_flow_across_halves(t) == pytest.approx(expected)


def test_bisection_bandwidth_is_the_one_entry_point_for_every_topology():
    # fabric.bisection_bandwidth (which needed a fat tree or Clos) and fabric_bisection are
    # now measures.bisection_bandwidth, which takes any topology: a ring of 4 on links of BW
    # cut into {0, 1} and {2, 3} is crossed by two links each way: 2 BW (by hand)
    assert fabric.bisection_bandwidth is cl.measures.bisection_bandwidth
    assert fabric.fabric_bisection is cl.measures.bisection_bandwidth
    assert fabric.bisection_bandwidth(cl.topology.ring(4, BW)) == 2 * BW


def test_link_loads_on_any_topology():
    ring = cl.topology.ring(4, BW, bidirectional=False)
    loads = fabric.link_loads(ring, [0, 1, 2, 2], [2, 2, 2, 0], [10.0, 1.0, 99.0, 5.0])
    # 0 -> 2 over links 0, 1 (10 B); 1 -> 2 over link 1 (1 B); 2 -> 2 stays local;
    # 2 -> 0 over links 2, 3 (5 B)
    np.testing.assert_array_equal(loads, [10.0, 11.0, 5.0, 5.0])
    assert fabric.load_imbalance(loads) == pytest.approx(11 / 7.75)
    assert fabric.load_imbalance(loads, where=[2, 3]) == 1.0
    np.testing.assert_array_equal(fabric.link_loads(ring, [], []), 0.0)
    with pytest.raises(TopologyError, match="src must hold integers, got float64 values"):
        fabric.link_loads(ring, [0.0], [1])
    with pytest.raises(TopologyError, match="flow_id needs a fabric"):
        fabric.link_loads(ring, [0], [1], flow_id=3)
    with pytest.raises(TopologyError, match="src has 2 flows but dst has 1"):
        fabric.link_loads(ring, [0, 1], [1])
    with pytest.raises(
        CollectivesError, match=r"flow_bytes must be one number or one per flow \(2\)"
    ):
        fabric.link_loads(ring, [0, 1], [1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(CollectivesError, match="flow_bytes must be finite and >= 0"):
        fabric.link_loads(ring, [0], [1], -1.0)
    with pytest.raises(TopologyError, match="dst 9 is not an endpoint"):
        fabric.link_loads(ring, [0], [9])
    with pytest.raises(CollectivesError, match="needs at least one link with load"):
        fabric.load_imbalance(np.zeros(3))


def test_paths_with_flow_ids_checks_its_input():
    t = fabric.fat_tree(4, BW)
    with pytest.raises(TopologyError, match="paths\\(\\) takes pairs of distinct nodes"):
        t.paths([0, 3], [1, 3], flow_id=0)
    with pytest.raises(TopologyError, match="does not route to or from its switches"):
        t.paths([16], [1], flow_id=0)
    with pytest.raises(TopologyError, match="flow_id has 1 entries for 2 pairs"):
        t.paths([0, 1], [2, 3], flow_id=[1])
    with pytest.raises(TopologyError, match="flow_id must be an integer"):
        t.paths([0], [2], flow_id=0.5)
    pair, link = t.paths([], [], flow_id=0)
    assert pair.size == link.size == 0


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: fabric.fat_tree(3, BW),
            r"k must be even \(each switch has k/2 ports down and "
            r"k/2 up\), got 3",
        ),
        (lambda: fabric.fat_tree(0, BW), r"k must be >= 2 \(the switch radix\), got 0"),
        (lambda: fabric.fat_tree(4.0, BW), r"k must be an integer \(the switch radix\), got 4.0"),
        (
            lambda: fabric.fat_tree(4, -1.0),
            r"link_bandwidth must be finite and > 0 "
            r"\(bytes/s per direction\), got -1.0",
        ),
        (lambda: fabric.fat_tree(4, BW, hop_latency=-1e-6), "hop_latency must be finite and >= 0"),
        (
            lambda: fabric.fat_tree(4, BW, ecmp="random"),
            "ecmp must be one of 'hash', 'spread', got 'random'",
        ),
        (
            lambda: fabric.clos(5, 2, BW),
            r"radix must be even \(a switch below the top tier has "
            r"half its ports down and half up\), got 5",
        ),
        (lambda: fabric.clos(1, 2, BW), "radix must be an integer >= 2, got 1"),
        (lambda: fabric.clos(8, 0, BW), "tiers must be an integer >= 1, got 0"),
        (lambda: fabric.clos(8, 2.5, BW), "tiers must be an integer, got 2.5"),
        (lambda: fabric.clos(8, 2, 0), r"link_bandwidth must be finite and > 0"),
        (lambda: fabric.clos(8, 2, -BW), r"link_bandwidth must be finite and > 0"),
        (
            lambda: fabric.clos(8, 2, BW, 0.5),
            r"oversubscription must be >= 1 \(downlink:uplink "
            r"capacity at the leaf tier; 1 = non-blocking\), got 0.5",
        ),
        (lambda: fabric.clos(8, 2, BW, float("nan")), "oversubscription must be >= 1"),
        (lambda: fabric.clos(8, 2, BW, "3"), "oversubscription must be a number"),
        (
            lambda: fabric.clos(8, 2, BW, 2),
            r"oversubscription 2 cannot be realised on radix 8: a "
            r"leaf splits its 8 ports into whole host ports and "
            r"uplinks; nearest: 5 host ports : 3 uplinks "
            r"\(1.667:1\) or 6 host ports : 2 uplinks \(3:1\)",
        ),
        (lambda: fabric.clos(8, 2, BW, 2.9), "oversubscription 2.9 cannot be realised on radix 8"),
        (
            lambda: fabric.clos(4, 2, BW, 4),
            r"oversubscription 4 cannot be realised on radix 4: a "
            r"leaf needs at least one uplink, so the most is 3:1",
        ),
        (lambda: fabric.clos(8, 1, BW, 3), "oversubscription 3 needs at least 2 tiers"),
        (lambda: fabric.clos(8, 2, BW, hash_seed=1.5), "hash_seed must be an integer, got 1.5"),
    ],
)
def test_bad_input_raises_topology_error(call, message):
    with pytest.raises(TopologyError, match=message):
        call()


def test_ratio_close_to_a_realisable_split_is_rounded_to_it():
    t = fabric.clos(8, 2, BW, 2.98)
    assert (t.hosts_per_leaf, t.leaf_uplinks, t.oversubscription) == (6, 2, 3.0)
    assert t.name == "2-tier Clos, radix 8, 6 hosts + 2 uplinks per leaf (3:1), 48 hosts"
    assert isinstance(t, cl.Topology)
    for array in (t.node_tier, t.link_level, t.link_tier, t.link_up):
        assert not array.flags.writeable
    with pytest.raises(cl.TopologyError, match="cannot be changed once built"):
        t.ecmp = "spread"  # the router was built for "hash": rebuild instead


def test_timing_names_the_fabric_tier_that_bounds_it():
    # clos(8, 2, oversubscription=3): 48 hosts, 8 leaves of a = 6 hosts with b = 2 uplinks.
    # A direct all-to-all of S = 1 MiB per rank sends parts of S/48. Each leaf's uplinks
    # carry 6 hosts x 42 remote hosts = 252 parts, 126 per uplink when spread evenly:
    # 126 S/48 / 1e9 = 2.7525 ms, against 47 S/48 on a host cable. The timing must name
    # tier 2 (leaf-spine, level "spine"), not fail or blame the host cables (level "leaf").
    t = fabric.clos(8, 2, 1e9, oversubscription=3, ecmp="spread")
    assert (t.n_ranks, t.hosts_per_leaf, t.leaf_uplinks) == (48, 6, 2)
    timing = cl.time(cl.algorithms.direct_all_to_all(48), t, 2**20)
    assert timing.seconds == pytest.approx(126 * 2**20 / 48 / 1e9)
    assert timing.bottleneck_level == "spine"
    assert set(timing.level_seconds()) == {"spine"}
    # a ring of neighbours keeps to the host cables of a fat tree
    tree = fabric.fat_tree(4, 1e9)
    assert cl.time(cl.algorithms.ring_all_reduce(16), tree, 2**20).bottleneck_level == "leaf"
    assert tree.info.levels[tree.link_level[0]] == "leaf"
    assert tree.info.levels == ("leaf", "spine", "core")
