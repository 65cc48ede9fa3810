"""collectives.measures: hops, hop matrix, diameter, average hops, bisection bandwidth.

Golden values are derived by hand in the comment beside them. Property tests hold the closed
forms of tori to the routes the topology's router really takes, and the bisection of a torus
to maximum flows (networkx) and, on small ones, to every balanced cut.
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import TopologyError
from collectives.measures import (
    MAX_RANKS,
    average_hops,
    bisection_bandwidth,
    diameter,
    hop_matrix,
    hops,
)

B = 4.5e10  # TPU v5e ICI, bytes/s per link per direction


# ---- independent references --------------------------------------------------------------


def routed_hop_matrix(topology):
    """Hops of every pair, counted from topology.paths one pair at a time."""
    n = topology.n_ranks
    out = np.zeros((n, n), dtype=np.int64)
    for s in range(n):
        for d in range(n):
            if s != d:
                out[s, d] = len(topology.route(s, d))
    return out


def max_flow(topology, sources, sinks):
    """networkx maximum flow from a set of endpoints to another (parallel links add up)."""
    g = nx.DiGraph()
    for u, v, data in topology.to_networkx().edges(data=True):
        if g.has_edge(u, v):
            g[u][v]["capacity"] += data["bandwidth"]
        else:
            g.add_edge(u, v, capacity=data["bandwidth"])
    g.add_edges_from(("s", x) for x in sources)
    g.add_edges_from((x, "t") for x in sinks)
    return nx.maximum_flow_value(g, "s", "t")


def halves_flow(topology, first):
    """The one-way max-flow between ``first`` and the other endpoints, smaller direction."""
    second = [r for r in range(topology.n_ranks) if r not in set(first)]
    return min(max_flow(topology, first, second), max_flow(topology, second, first))


def worst_balanced_cut(topology):
    """Bytes/s one way over the worst split of the endpoints into floor(n/2) and ceil(n/2),
    trying every split (endpoint-only topologies of at most 16 endpoints)."""
    n = topology.n_ranks
    combos = np.array(list(itertools.combinations(range(n), n // 2)))
    side = np.ones((len(combos), n), np.int8)
    np.put_along_axis(side, combos, 0, axis=1)
    a, b = side[:, topology.link_src], side[:, topology.link_dst]
    bw = topology.link_bandwidth
    return float(np.minimum(((a == 0) & (b == 1)) @ bw, ((a == 1) & (b == 0)) @ bw).min())


def rank(shape, coords):
    return int(np.ravel_multi_index(coords, shape))


# ---- golden values -----------------------------------------------------------------------


def test_16x16_torus():
    t = cl.topology.torus((16, 16), B)
    # farthest chip: 8 hops each way round both axes of 16 -> 8 + 8 = 16
    assert diameter(t) == 16
    # mean distance on a wrapped axis of 16: (0 + 2(1 + ... + 7) + 8) / 16 = 64/16 = 4 per
    # axis, 8 over all 256^2 ordered pairs; without a chip's distance to itself: 8 * 256/255
    assert average_hops(t) == pytest.approx(8 * 256 / 255, rel=1e-15)
    # cut across axis 0: each of the 16 columns is cut twice (middle and wraparound), so 32
    # links per direction (64 directed links in all), 32 * B one way
    assert bisection_bandwidth(t) == pytest.approx(32 * B, rel=1e-15)
    # (0, 0) -> (15, 15): one hop back round each axis
    assert hops(t, 0, 255) == 2
    assert hops(t, rank((16, 16), (0, 0)), rank((16, 16), (8, 3))) == 8 + 3


def test_16x16_mesh_without_wraparound():
    t = cl.topology.torus((16, 16), B, wraparound=False)
    # corner to corner: 15 + 15
    assert diameter(t) == 30
    assert hops(t, 0, 255) == 30
    # mean |i - j| over i, j in 0..15 is (16^2 - 1)/(3 * 16) = 255/48 per axis; two axes,
    # then * 256/255: 2 * 255/48 * 256/255 = 32/3
    assert average_hops(t) == pytest.approx(32 / 3, rel=1e-14)
    # each of the 16 columns is cut once: 16 links
    assert bisection_bandwidth(t) == pytest.approx(16 * B, rel=1e-15)


def test_v5e_8x16_slice_wraps_only_its_long_axis():
    t = cl.hardware.preset("tpu-v5e", shape=(8, 16))
    assert t.wraparound == (False, True)
    # 7 along the chain of 8, 8 round the ring of 16
    assert diameter(t) == 15
    # cut across the chain axis: 16 lines cut once = 16 links; across the ring axis: 8 lines
    # cut twice = 16 links; both 16 * B = 7.2e11 bytes/s
    assert bisection_bandwidth(t) == pytest.approx(16 * B, rel=1e-15)
    # per axis: (64 - 1)/24 on the chain of 8, 16/4 on the ring; * 128/127
    assert average_hops(t) == pytest.approx((63 / 24 + 4) * 128 / 127, rel=1e-14)


def test_full_v5p_pod_answers_from_closed_forms():
    pod = cl.hardware.preset("tpu-v5p")  # 16 x 20 x 28 = 8960 chips, wrapped
    assert pod.n_ranks == 8960
    # 8 + 10 + 14
    assert diameter(pod) == 32
    # 16/4 + 20/4 + 28/4 = 16 over all pairs; * 8960/8959
    assert average_hops(pod) == pytest.approx(16 * 8960 / 8959, rel=1e-14)
    # the cheapest cut is across the longest axis: 8960/28 = 320 lines, cut twice = 640
    # links of 9e10 bytes/s = 5.76e13 (across 20: 896 links, across 16: 1120)
    assert bisection_bandwidth(pod) == pytest.approx(640 * 9e10, rel=1e-15)
    # a corner to the opposite corner: one hop back round each axis
    assert hops(pod, 0, 8959) == 3
    far = rank((16, 20, 28), (8, 10, 14))
    assert hops(pod, 0, far) == 32
    assert hops(pod, np.zeros(3, int), [1, 28, 560]).tolist() == [1, 1, 1]


def test_v4_pod():
    pod = cl.hardware.preset("tpu-v4")  # 16^3, wrapped
    assert diameter(pod) == 24  # 3 x 8
    # 4096/16 = 256 lines cut twice: 512 links of 4.5e10 = 2.304e13
    assert bisection_bandwidth(pod) == pytest.approx(512 * 4.5e10, rel=1e-15)


@pytest.mark.parametrize(
    "build, d, mean, cut",
    [
        # ring of 8: distances from 0 are 1 2 3 4 3 2 1 -> max 4, mean 16/7; cut twice
        (lambda: cl.topology.ring(8, 1.0), 4, 16 / 7, 2.0),
        # ring of 5: 1 2 2 1 -> mean 6/4; halves of 2 and 3, still two links
        (lambda: cl.topology.ring(5, 1.0), 2, 1.5, 2.0),
        # chain of 5: ordered distinct pairs sum to 2(4*1 + 3*2 + 2*3 + 1*4) = 40 over 20 pairs
        (lambda: cl.topology.chain(5, 1.0), 4, 2.0, 1.0),
        # one-way ring of 6: 1..5 hops forward, mean 3; one link crosses each way
        (lambda: cl.topology.ring(6, 1.0, bidirectional=False), 5, 3.0, 1.0),
        # 2 x 2 x 2: an axis of 2 has one link each way, no extra wraparound; 3 hops corner to
        # corner; mean (1/2 per axis) * 3 * 8/7 = 12/7; 4 lines cut once
        (lambda: cl.topology.torus((2, 2, 2), 1.0), 3, 12 / 7, 4.0),
        # one switch of 7: up-link then down-link; 3 endpoints' up-links limit the cut
        (lambda: cl.topology.switch(7, 1.0), 2, 2.0, 3.0),
        (lambda: cl.topology.switch(8, 1.0), 2, 2.0, 4.0),
        # k = 4 fat tree: 16 hosts; host-edge-aggregation-core-aggregation-edge-host = 6 links;
        # bisection N b / 2 = 8 (collectives.fabric.bisection_bandwidth)
        (lambda: cl.fabric.fat_tree(4, 1.0), 6, None, 8.0),
        # a single chip
        (lambda: cl.topology.torus((1, 1), 1.0), 0, 0.0, None),
    ],
)
def test_small_topologies(build, d, mean, cut):
    t = build()
    assert diameter(t) == d
    if mean is not None:
        assert average_hops(t) == pytest.approx(mean, rel=1e-14)
    if cut is not None:
        assert bisection_bandwidth(t) == cut


def test_fat_tree_hops_and_average():
    t = cl.fabric.fat_tree(4, 1.0)
    # hosts 0 and 1 share a leaf (2 links); 0 and 2 share a pod (4); 0 and 8 do not (6)
    assert hops(t, 0, [1, 2, 8]).tolist() == [2, 4, 6]
    # from each host: 1 host at 2, 2 at 4, 12 at 6 -> (2 + 8 + 72)/15
    assert average_hops(t) == pytest.approx(82 / 15)
    # the cut between the two pods-halves: 8 hosts each side on links of 1 byte/s, and every
    # tier above carries as much as the host cables (non-blocking): 8 one way, by hand
    assert bisection_bandwidth(t) == 8.0


def test_product_and_cluster_use_routes_and_max_flow():
    t = cl.topology.product(cl.topology.ring(4, 2.0), cl.topology.switch(2, 1.0))
    # rank = 2 * ring position + switch position; the natural halves are ring positions
    # {0, 1} and {2, 3}: both copies of the ring are cut twice, 4 links of 2.0 bytes/s
    assert bisection_bandwidth(t) == pytest.approx(8.0)
    assert bisection_bandwidth(t) == pytest.approx(halves_flow(t, range(4)))
    np.testing.assert_array_equal(hop_matrix(t), routed_hop_matrix(t))
    # ring position 0 -> 2 (two hops) then across the switch (two links)
    assert hops(t, 0, 5) == 4 and diameter(t) == 4
    c = cl.topology.cluster(4, 2, nvlink_bandwidth=10.0, pcie_bandwidth=5.0, nic_bandwidth=3.0)
    assert bisection_bandwidth(c) == pytest.approx(halves_flow(c, range(4)))
    np.testing.assert_array_equal(hop_matrix(c), routed_hop_matrix(c))
    assert diameter(c) == routed_hop_matrix(c).max()


def test_links_of_different_speeds_are_added_up():
    # a custom topology: endpoints only, so the cut is the crossing capacity
    ring = cl.topology.ring(4, 1.0)
    bw = np.arange(1.0, ring.n_links + 1)
    t = cl.Topology(4, ring.link_src, ring.link_dst, bw, 0.0, ring.router, name="uneven")
    first, second = {0, 1}, {2, 3}
    one = sum(b for s, d, b in zip(t.link_src, t.link_dst, bw) if s in first and d in second)
    other = sum(b for s, d, b in zip(t.link_src, t.link_dst, bw) if s in second and d in first)
    assert bisection_bandwidth(t) == min(one, other)


# ---- properties --------------------------------------------------------------------------


_SIDES = st.integers(1, 7)  # a torus side: 1 to 7 ranks


@st.composite
def small_tori(draw, sizes=_SIDES, max_ranks=60):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(sizes, min_size=ndim, max_size=ndim)))
    if math.prod(shape) > max_ranks:
        shape = shape[:1]
    wrap = tuple(draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape))))
    return shape, wrap


@settings(max_examples=150, deadline=None)
@given(small_tori())
def test_closed_forms_agree_with_the_routes(case):
    shape, wrap = case
    t = cl.topology.torus(shape, 1.0, wraparound=wrap)
    matrix = hop_matrix(t)
    np.testing.assert_array_equal(matrix, routed_hop_matrix(t))
    assert diameter(t) == matrix.max()
    n = t.n_ranks
    mean = matrix.sum() / (n * (n - 1)) if n > 1 else 0.0
    assert average_hops(t) == pytest.approx(mean, rel=1e-12)
    src, dst = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    np.testing.assert_array_equal(hops(t, src, dst), matrix)


@settings(max_examples=60, deadline=None)
@given(small_tori(sizes=st.sampled_from([1, 2, 4, 6]), max_ranks=48))
def test_torus_bisection_is_the_max_flow_across_the_cheapest_axis(case):
    shape, wrap = case
    t = cl.topology.torus(shape, 1.0, wraparound=wrap)
    if t.n_ranks < 2:
        return
    coords = np.stack(np.unravel_index(np.arange(t.n_ranks), shape), axis=1)
    flows = [
        halves_flow(t, np.flatnonzero(coords[:, a] < size // 2).tolist())
        for a, size in enumerate(shape)
        if size > 1
    ]
    assert bisection_bandwidth(t) == pytest.approx(min(flows))
    if t.n_ranks <= 16:
        # and no balanced cut at all is worse
        assert bisection_bandwidth(t) == pytest.approx(worst_balanced_cut(t))


@settings(max_examples=40, deadline=None)
@given(small_tori(sizes=st.integers(2, 7), max_ranks=14))
def test_torus_bisection_is_never_below_the_worst_cut(case):
    shape, wrap = case
    t = cl.topology.torus(shape, 1.0, wraparound=wrap)
    assert bisection_bandwidth(t) >= worst_balanced_cut(t) - 1e-9
    if len([s for s in shape if s > 1]) == 1:  # rings and chains: exact
        assert bisection_bandwidth(t) == pytest.approx(worst_balanced_cut(t))


def test_an_odd_axis_can_have_a_cheaper_staircase_cut():
    # the documented limit: across the short even axis of a 2 x 5 mesh 5 links cross; a cut
    # that steps between the rows crosses 3 (2 along the rows, 1 between them)
    t = cl.topology.torus((2, 5), 1.0, wraparound=False)
    assert bisection_bandwidth(t) == 5.0 and worst_balanced_cut(t) == 3.0


# ---- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: hops("torus", 0, 1), "hops takes a collectives Topology"),
        (lambda: diameter((16, 16)), "diameter takes a collectives Topology"),
        (lambda: bisection_bandwidth(None), "bisection_bandwidth takes a collectives Topology"),
        (
            lambda: hops(cl.topology.ring(4, 1.0), 0, 4),
            "dst holds 4, which is not an endpoint of ring of 4 (endpoints are 0..3)",
        ),
        (lambda: hops(cl.topology.switch(4, 1.0), 4, 0), "src holds 4, which is not an endpoint"),
        (lambda: hops(cl.topology.ring(4, 1.0), -1, 0), "src holds -1"),
        (lambda: hops(cl.topology.ring(4, 1.0), 0.5, 1), "src must hold integers"),
        (
            lambda: hops(cl.topology.ring(4, 1.0), [0, 1, 2], [1, 2]),
            "src (shape (3,)) and dst (shape (2,)) do not broadcast",
        ),
        (
            lambda: hop_matrix(cl.topology.ring(8, 1.0), max_ranks=4),
            "hop_matrix of ring of 8 would hold 8 x 8 = 64 pairs, more than the limit of "
            "max_ranks=4",
        ),
        (
            lambda: hop_matrix(cl.topology.ring(8, 1.0), max_ranks=0),
            "max_ranks must be an integer >= 1",
        ),
        (lambda: hop_matrix(cl.hardware.preset("tpu-v5p")), f"limit of max_ranks={MAX_RANKS}"),
        (
            lambda: diameter(cl.fabric.fat_tree(4, 1.0), max_ranks=8),
            "diameter of fat tree k=4, 16 hosts has no closed form here",
        ),
        (lambda: bisection_bandwidth(cl.topology.ring(1, 1.0)), "has a single endpoint"),
    ],
)
def test_bad_input_is_refused_clearly(call, text):
    with pytest.raises(TopologyError) as info:
        call()
    assert text in str(info.value)


def test_max_flow_refuses_huge_topologies(monkeypatch):
    import collectives.measures as measures

    monkeypatch.setattr(measures, "MAX_FLOW_LINKS", 10)
    t = cl.topology.product(cl.topology.ring(4, 1.0), cl.topology.switch(2, 1.0))
    with pytest.raises(TopologyError, match="needs a maximum flow over its"):
        bisection_bandwidth(t)


def test_shapes_and_types_of_answers():
    t = cl.topology.torus((4, 4), 1.0)
    assert isinstance(hops(t, 0, 5), np.integer)
    assert hops(t, [[0], [1]], [2, 3, 4]).shape == (2, 3)
    assert hop_matrix(t).dtype == np.int64 and hop_matrix(t).shape == (16, 16)
    assert isinstance(diameter(t), int) and isinstance(average_hops(t), float)
    assert isinstance(bisection_bandwidth(t), float)
    assert cl.measures is __import__("collectives.measures").measures


def test_bisection_of_a_layered_fabric_is_its_tier_cut_and_equals_the_max_flow():
    # 4 leaves of 4 hosts, 2 spines, 1 GB/s links: each half (2 leaves) has 2 x 2 uplinks,
    # so 4 GB/s cross the cut; after one spine fails, 2 GB/s
    from collectives import fabric as fb

    fab = fb.layered(4, 1e9, [fb.Tier(4, 2)])
    assert cl.measures.bisection_bandwidth(fab) == 4e9 == cl.measures.cut_bandwidth(fab, range(8))
    spine = fab.switches[fab.node_tier[fab.switches] == 2][:1]
    assert cl.measures.bisection_bandwidth(fab.fail(switches=spine)) == 2e9


def test_routed_hops_count_the_routes_not_the_closed_form():
    # on a 4 x 4 torus the routes and the closed form agree: from chip 0, chip 10 = (2, 2)
    # is 2 + 2 hops away, chip 5 = (1, 1) 1 + 1, itself 0
    t = cl.topology.torus((4, 4), 1.0)
    assert cl.measures.routed_hops(t, 0, [10, 5, 0]).tolist() == [4, 2, 0]
    np.testing.assert_array_equal(
        cl.measures.routed_hops(t, np.arange(16)[:, None], np.arange(16)), hop_matrix(t)
    )
    assert isinstance(cl.measures.routed_hops(t, 0, 5), np.integer)
    # on a DGX H100 node GPU 0 -> 1 crosses its NVSwitch: 2 links
    assert cl.measures.routed_hops(cl.hardware.preset("dgx-h100"), 0, 1) == 2


def test_cut_bandwidth_is_the_max_flow_across_any_split():
    # a ring of 6 on links of 1 byte/s: {0, 1, 2} against the rest is cut at 2 -> 3 and
    # 5 -> 0, 2 bytes/s each way; {0, 3} against the rest at 4 links each way (by hand)
    ring = cl.topology.ring(6, 1.0)
    assert cl.measures.cut_bandwidth(ring, [0, 1, 2]) == 2.0
    assert cl.measures.cut_bandwidth(ring, [0, 3]) == 4.0
    with pytest.raises(TopologyError, match="needs endpoints on both sides"):
        cl.measures.cut_bandwidth(ring, range(6))


def test_bandwidth_per_endpoint_on_each_level():
    # a SuperPOD per GPU: 450 GB/s of NVLink, PCIe Gen5 x16 (32 GT/s x 16 x 128/130 / 8),
    # 50 GB/s at every fabric tier (one cable per GPU at each: non-blocking)
    pod = cl.hardware.preset("superpod-h100", units=16)
    levels = cl.measures.bandwidth_per_endpoint(pod)
    assert levels["nvlink"] == 450e9
    assert levels["pcie"] == pytest.approx(32e9 * 16 * 128 / 130 / 8)
    assert levels["leaf"] == levels["spine"] == levels["core"] == 50e9
    # a ring of 4: 8 links of 3 bytes/s, 4 one way: 3 per endpoint
    assert cl.measures.bandwidth_per_endpoint(cl.topology.ring(4, 3.0)) == {"link": 3.0}


def test_a_cluster_without_a_clean_top_cut_falls_back_to_the_max_flow():
    # 2 nodes of 2 GPUs on rails under one spine tier: the top block's halves would be the
    # rails, splitting every node, so the natural halves (node 0 | node 1) are cut by max
    # flow: each GPU's 1 byte/s NIC cable: 2 bytes/s (by hand)
    c = cl.topology.cluster(2, 2, nvlink_bandwidth=10.0, pcie_bandwidth=5.0, nic_bandwidth=1.0)
    assert c.bisection_cut() is None
    assert bisection_bandwidth(c) == 2.0
    # Meta's cluster: zones split in halves, no server straddles: the tier cut, 4 zones x 18
    # CTSWs x 36 uplinks x 50 GB/s (the chapter's 129.6 TB/s)
    meta = cl.hardware.preset("meta-roce-32k")
    assert meta.bisection_cut() == bisection_bandwidth(meta) == 4 * 18 * 36 * 50e9
