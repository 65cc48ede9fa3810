"""Products of topologies (collectives.topology.product): counts, dimension-order routes,
per-dimension speeds, declared dimensions, errors."""

import itertools
import re

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


def test_product_counts():
    # 4 x 3 x 5 = 60 endpoints, numbered row-major.
    # dim 0, ring(4): 8 links, one copy per (dim1, dim2) coordinate: 3 * 5 = 15 -> 120 links
    # dim 1, switch(3): 6 links + 1 switch, 4 * 5 = 20 copies -> 120 links, 20 switches
    # dim 2, ring(5): 10 links, 4 * 3 = 12 copies -> 120 links
    t = tp.product(tp.ring(4, 1.0), tp.switch(3, 1.0), tp.ring(5, 1.0))
    assert (t.n_ranks, t.n_switches, t.n_links, t.n_nodes) == (60, 20, 360, 80)
    assert np.bincount(t.link_level).tolist() == [120, 120, 120]
    assert t.kind == "product" and t.shape == (4, 3, 5)
    assert t.info.levels == ("dim0", "dim1", "dim2")
    assert t.switches.tolist() == list(range(60, 80))
    # every switch serves the 3 endpoints of one dim-1 line: 3 up-links, 3 down-links
    assert np.bincount(t.link_dst, minlength=80)[60:].tolist() == [3] * 20
    # switch copy k = row-major index over (dim0, dim2): copy 7 is dim0 = 1, dim2 = 2
    assert sorted(t.link_src[t.link_dst == 60 + 7].tolist()) == [17, 22, 27]


PRODUCTS = [
    (tp.ring(4, 1.0), tp.switch(3, 1.0), tp.ring(5, 1.0)),
    (tp.chain(3, 1.0), tp.ring(4, 1.0, bidirectional=False)),
    (tp.torus((2, 3), 1.0), tp.switch(2, 1.0)),
    (tp.ring(1, 1.0), tp.ring(6, 1.0), tp.ring(1, 1.0)),
]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(range(len(PRODUCTS))), st.data())
def test_product_routes_chain_dimension_by_dimension(which, data):
    dims = PRODUCTS[which]
    t = tp.product(*dims)
    sizes = t.shape
    src = data.draw(st.lists(st.integers(0, t.n_ranks - 1), min_size=1, max_size=20))
    dst = [data.draw(st.integers(0, t.n_ranks - 1).filter(lambda b, a=a: b != a)) for a in src]
    pair, link = t.paths(src, dst)
    for i, (a, b) in enumerate(zip(src, dst)):
        links = link[pair == i].tolist()
        assert_chain(t, a, b, links)
        assert np.all(np.diff(t.link_level[links]) >= 0)  # dimension 0 first
        # each dimension's leg has that dimension's own route length
        ca, cb = np.unravel_index(a, sizes), np.unravel_index(b, sizes)
        for d, dim in enumerate(dims):
            want = len(dim.route(int(ca[d]), int(cb[d])))
            assert np.count_nonzero(t.link_level[links] == d) == want


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 6), (5, 1)])
def test_product_of_rings_is_the_torus(shape):
    p = tp.product(*(tp.ring(n, 7e9, hop_latency=1e-6) for n in shape))
    t = tp.torus(shape, 7e9, hop_latency=1e-6)
    assert p.n_links == t.n_links
    assert sorted(zip(p.link_src.tolist(), p.link_dst.tolist())) == sorted(
        zip(t.link_src.tolist(), t.link_dst.tolist())
    )
    src, dst = map(np.array, zip(*itertools.permutations(range(p.n_ranks), 2)))
    p_pair, p_link = p.paths(src, dst)
    t_pair, t_link = t.paths(src, dst)
    assert np.bincount(p_pair).tolist() == np.bincount(t_pair).tolist()  # route lengths
    assert hops(p, p_link) == hops(t, t_link)  # the same walks
    assert p.link_bandwidth[p_link].tolist() == t.link_bandwidth[t_link].tolist()
    np.testing.assert_allclose(p.path_latency(src, dst), t.path_latency(src, dst))


def test_product_keeps_each_dimensions_link_speeds():
    # 4 x 2: a ring of 4 (10 GB/s, 1 us) times a switch of 2 (50 GB/s, 0.5 us per link)
    t = tp.product(
        tp.ring(4, 10e9, hop_latency=1e-6),
        tp.switch(2, 50e9, hop_latency=5e-7),
        level_names=("ici", "nvlink"),
    )
    assert t.info.levels == ("ici", "nvlink")
    assert set(t.link_bandwidth[t.link_level == 0].tolist()) == {10e9}
    assert set(t.link_bandwidth[t.link_level == 1].tolist()) == {50e9}
    # 0 = (0, 0) -> 5 = (2, 1): two ring hops on column 0, then up and down switch copy 2
    route = t.route(0, 5)
    assert hops(t, route) == [(0, 2), (2, 4), (4, 10), (10, 5)]
    assert levels(t, route) == ["ici", "ici", "nvlink", "nvlink"]
    assert t.link_bandwidth[route].tolist() == [10e9, 10e9, 50e9, 50e9]
    assert t.path_latency([0], [5]).tolist() == pytest.approx([2e-6 + 2 * 5e-7])


def test_product_of_one_ring_costs_as_the_ring():
    k = 6
    schedule = cl.algorithms.ring_all_gather(k)
    ring = tp.ring(k, 45e9, hop_latency=1e-6)
    alone = cl.time(schedule, ring, 2**20)
    composed = cl.time(schedule, tp.product(ring), 2**20)
    assert composed.seconds == pytest.approx(alone.seconds)
    np.testing.assert_allclose(composed.step_seconds, alone.step_seconds)


def test_product_does_not_route_to_its_switches():
    t = tp.product(tp.ring(2, 1.0), tp.switch(2, 1.0))
    with pytest.raises(cl.TopologyError, match="does not route to or from its switches"):
        t.paths([0], [4])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tp.product(), "product() needs at least one dimension (a Topology)"),
        (
            lambda: tp.product(tp.ring(2, 1.0), 4),
            "dimension 1 of product() must be a Topology, got int",
        ),
        (
            lambda: tp.product(
                tp.cluster(
                    1, 2, nvlink_bandwidth=1.0, pcie_bandwidth=1.0, nic_bandwidth=1.0, name="c"
                )
            ),
            "dimension 0 of product() (c) has NICs; only topologies of endpoints, switches and "
            "links can be dimensions",
        ),
        (
            lambda: tp.product(tp.ring(2, 1.0), tp.ring(2, 1.0), level_names=("x",)),
            "level_names must be 2 distinct non-empty strings (one per dimension), got ('x',)",
        ),
        (
            lambda: tp.product(tp.ring(2, 1.0), tp.ring(2, 1.0), level_names=("x", "x")),
            "level_names must be 2 distinct non-empty strings (one per dimension), got ('x', 'x')",
        ),
        (
            lambda: tp.product(tp.ring(2, 1.0), level_names="x"),
            "level_names must be a sequence of names, got 'x'",
        ),
    ],
)
def test_bad_products_are_named(call, message):
    with pytest.raises(cl.TopologyError, match=f"^{re.escape(message)}$"):
        call()
