"""Rings, chains, tori and one switch (collectives.topology.basic): link counts, routes that
are real walks, shortest paths, errors."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import topology as tp


def assert_walk(topo, src, dst, links):
    """Consecutive links join up, starting at src and ending at dst."""
    assert links, (src, dst)
    assert topo.link_src[links[0]] == src
    assert topo.link_dst[links[-1]] == dst
    for a, b in zip(links, links[1:]):
        assert topo.link_dst[a] == topo.link_src[b]


@pytest.mark.parametrize(
    "topo, n_links",
    [
        (tp.ring(1, 1.0), 0),
        (tp.ring(2, 1.0), 2),  # one link each way; no duplicate wraparound
        (tp.ring(5, 1.0), 10),
        (tp.ring(5, 1.0, bidirectional=False), 5),
        (tp.ring(2, 1.0, bidirectional=False), 2),
        (tp.chain(5, 1.0), 8),
        (tp.torus((4, 4), 1.0), 64),  # 16 chips x 2 axes x 2 directions
        (tp.torus((4, 4), 1.0, wraparound=(False, True)), 56),
        (tp.torus((2, 3, 4), 1.0, wraparound=False), 2 * (1 * 12 + 2 * 8 + 3 * 6)),
        (tp.switch(8, 1.0), 16),
    ],
)
def test_link_counts(topo, n_links):
    assert topo.n_links == n_links


def test_switch_counts():
    s = tp.switch(8, 450e9)
    assert (s.n_ranks, s.n_switches, s.n_nodes) == (8, 1, 9)
    assert s.route(2, 5) == [2, 8 + 5]


@pytest.mark.parametrize(
    "topo",
    [
        tp.ring(7, 1.0),
        tp.ring(6, 1.0),
        tp.ring(5, 1.0, bidirectional=False),
        tp.chain(6, 1.0),
        tp.torus((3, 4), 1.0),
        tp.torus((4, 4, 2), 1.0, wraparound=(True, False, True)),
        tp.torus((2, 2, 2), 1.0),
        tp.switch(5, 1.0),
    ],
)
def test_every_route_is_a_shortest_walk(topo):
    g = nx.DiGraph()
    g.add_edges_from(zip(topo.link_src.tolist(), topo.link_dst.tolist()))
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    pairs = [(a, b) for a, b in itertools.permutations(range(topo.n_ranks), 2)]
    src, dst = map(np.array, zip(*pairs))
    pair, link = topo.paths(src, dst)
    assert np.all(np.diff(pair) >= 0)
    for i, (a, b) in enumerate(pairs):
        links = link[pair == i].tolist()
        assert_walk(topo, a, b, links)
        assert len(links) == lengths[a][b]  # dimension-order routes are shortest


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_torus_routes_go_axis_by_axis(shape, data):
    wrap = tuple(data.draw(st.booleans()) for _ in shape)
    topo = tp.torus(tuple(shape), 1.0, wraparound=wrap)
    n = topo.n_ranks
    if n < 2:
        return
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(0, n - 1).filter(lambda x: x != a))
    links = topo.route(a, b)
    assert_walk(topo, a, b, links)
    # coordinates change one axis at a time, in axis order
    coords = [np.unravel_index(topo.link_src[link], shape) for link in links] + [
        np.unravel_index(b, shape)
    ]
    changed = [
        int(np.flatnonzero(np.array(c1) != np.array(c0))[0]) for c0, c1 in zip(coords, coords[1:])
    ]
    assert changed == sorted(changed)


def test_ring_tie_goes_forward_and_shorter_way_otherwise():
    r = tp.ring(6, 1.0)
    assert [r.link_dst[link] for link in r.route(0, 3)] == [1, 2, 3]  # half-way: + direction
    assert [r.link_dst[link] for link in r.route(0, 5)] == [5]  # wraparound, backwards
    u = tp.ring(6, 1.0, bidirectional=False)
    assert [u.link_dst[link] for link in u.route(0, 5)] == [1, 2, 3, 4, 5]


def test_chain_has_no_wraparound():
    c = tp.chain(4, 1.0)
    assert [c.link_dst[link] for link in c.route(3, 0)] == [2, 1, 0]


def test_path_latency_sums_hops():
    t = tp.torus((4, 4), 1.0, hop_latency=2e-6)
    np.testing.assert_allclose(t.path_latency([0, 0, 5], [15, 0, 6]), [4e-6, 0.0, 2e-6])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tp.ring(0, 1.0), "n must be an integer >= 1, got 0"),
        (
            lambda: tp.ring(4, 0),
            r"link_bandwidth must be finite and > 0 \(bytes/s per direction\), got 0",
        ),
        (lambda: tp.ring(4, -1e9), "link_bandwidth must be finite and > 0"),
        (lambda: tp.ring(4, float("inf")), "link_bandwidth must be finite"),
        (
            lambda: tp.ring(4, 1e9, hop_latency=-1),
            r"hop_latency must be finite and >= 0 \(seconds\)",
        ),
        (lambda: tp.ring(4, "fast"), "link_bandwidth must be a number"),
        (lambda: tp.torus((4, 0), 1.0), "shape must be a non-empty tuple of positive integers"),
        (lambda: tp.torus((), 1.0), "shape must be a non-empty tuple"),
        (
            lambda: tp.torus((4, 4), 1.0, wraparound=(True,)),
            "wraparound has 1 entries but the shape has 2 axes",
        ),
        (lambda: tp.switch(2.5, 1.0), "n must be an integer"),
        (
            lambda: tp.ring(4, 1.0).paths([0], [4]),
            r"dst 4 is not an endpoint \(0..3\) or a switch of ring of 4",
        ),
        (lambda: tp.ring(4, 1.0).paths([1], [1]), "distinct nodes"),
    ],
)
def test_bad_topologies_are_named(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()
