"""Layered fabrics (collectives.fabric.layered): paths that are real walks through the built
links, per-tier oversubscription, planes and rails, bisection against a max-flow computed by
networkx, failures."""

from functools import lru_cache

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import fabric
from collectives.errors import TopologyError
from collectives.fabric import Tier

BW = 50e9


@lru_cache(maxsize=None)
def small(kind):
    """Small fabrics of each shape the builder makes."""
    if kind == "two-tier":
        return fabric.layered(4, BW, [Tier(6, 3)])
    if kind == "three-tier":
        return fabric.layered(2, BW, [Tier(3, 2, links=2), Tier(4, 3)])
    if kind == "striped":
        return fabric.layered(2, BW, [Tier(2, 2), Tier(2, 4, links=2)], wiring="striped")
    if kind == "planes":
        return fabric.layered(3, BW, [Tier(4, 2), Tier(2, 2)], planes=2)
    if kind == "rails":
        return fabric.layered(2, BW, [Tier(4, 2, bandwidth=2 * BW)], gpus_per_node=4)
    if kind == "speeds":
        return fabric.layered(
            4, BW, [Tier(2, 2, bandwidth=2 * BW), Tier(2, 1, links=2, bandwidth=4 * BW)]
        )
    if kind == "meta-mini":
        # the fabric only (racks of 4 GPUs hold no 8-GPU server)
        return fabric.meta_cluster(
            zones=2,
            racks_per_zone=14,
            spines=3,
            aggregators=2,
            gpus_per_rack=4,
            gpus_per_server=None,
        )
    raise KeyError(kind)


KINDS = ["two-tier", "three-tier", "striped", "planes", "rails", "speeds", "meta-mini"]


def test_superpod_counts_are_the_ra_table_with_a_rail_fabric():
    # RA-11333-001 table 4, 4 SUs: 32 leaves and 16 spines, 127 nodes (here 128 node slots)
    plan = cl.hardware.superpod_plan(4)
    f = fabric.layered(32, 50e9, [Tier(32, 16, links=2)], gpus_per_node=8)
    assert f.n_ranks == plan.units * 32 * 8 == 1024
    assert f.switches_per_tier == (plan.leaves, plan.spines)
    assert f.cables_per_tier == (plan.node_leaf_cables, plan.leaf_spine_cables)
    assert f.oversubscription == (1.0,)


def _walks(f, src, dst, flow=None):
    pair, link = f.paths(src, dst, flow_id=flow)
    for i, (s, d) in enumerate(zip(src, dst)):
        hops = link[pair == i]
        assert f.link_src[hops[0]] == s and f.link_dst[hops[-1]] == d
        assert np.all(f.link_dst[hops[:-1]] == f.link_src[hops[1:]]), "not a walk"
        tiers = f.link_tier[hops]
        ups = f.link_up[hops]
        # up/down: all up-links first, tiers rise then fall symmetrically
        assert np.all(ups[: len(hops) // 2]) and not np.any(ups[len(hops) // 2 :])
        assert list(tiers) == list(tiers[::-1])
        assert not f.failed[hops].any()
    return pair, link


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_paths_are_up_down_walks_through_built_links(kind, data):
    f = small(kind)
    n = f.n_ranks
    src = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=12)))
    dst = (
        src
        + np.array(data.draw(st.lists(st.integers(1, n - 1), min_size=len(src), max_size=len(src))))
    ) % n
    pair, link = _walks(f, src, dst, flow=np.arange(len(src)))
    # a path climbs exactly to the lowest tier whose block holds both ends
    for i in range(len(src)):
        hops = link[pair == i]
        top = (
            1
            + next(
                t for t in range(1, f.n_tiers + 1) if f.block_of(src[i], t) == f.block_of(dst[i], t)
            )
            - 1
        )
        assert f.link_tier[hops].max() == top


@pytest.mark.parametrize("kind", KINDS)
def test_every_pair_reaches_every_other(kind):
    f = small(kind)
    src, dst = np.nonzero(~np.eye(f.n_ranks, dtype=bool))
    pair, link = f.paths(src, dst)
    g = nx.MultiDiGraph()
    g.add_edges_from(zip(f.link_src.tolist(), f.link_dst.tolist()))
    # the path length equals the graph's shortest path (up/down is minimal in a Clos)
    lengths = np.bincount(pair)
    for i in range(0, len(src), max(1, len(src) // 25)):
        assert lengths[i] == nx.shortest_path_length(g, int(src[i]), int(dst[i]))


def test_rails_put_gpu_g_of_every_node_on_leaf_g():
    f = small("rails")  # 4 GPUs per node, 2 nodes per leaf
    ranks = np.arange(f.n_ranks)
    leaf = f.leaf_of(ranks)
    node, g = ranks // 4, ranks % 4
    assert np.all(leaf == (node // 2) * 4 + g)
    # same rail, same leaf group: two hops; another rail: via a spine (four hops)
    assert len(f.route(0, 4)) == 2 and len(f.route(0, 1)) == 4


def test_planes_keep_a_connection_in_one_plane_and_use_both():
    f = small("planes")
    n = f.n_ranks
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    pair, link = f.paths(src, dst)
    first = link[np.r_[0, np.flatnonzero(np.diff(pair)) + 1]]
    plane = (first - 0) // n  # host uplinks of plane p: p*n .. p*n+n-1
    assert set(plane.tolist()) == {0, 1}
    for q in range(4):  # QPs of a connection: the same plane
        _, l2 = f.paths(src, dst, flow_id=q)
        assert np.array_equal(l2[np.r_[0, np.flatnonzero(np.diff(pair)) + 1]], first)
    # each plane's switches only carry their own plane's flows
    sw_plane = (f.link_dst[link] - n) // (f.switches_per_tier[0] // 2)
    assert set(sw_plane[(f.link_tier[link] == 1) & f.link_up[link]].tolist()) == {0, 1}


def test_oversubscription_per_tier_and_link_speeds():
    f = small("speeds")  # 4 hosts x 50 down, 2 x 100 up; spine: 2 leaves x 100 down,
    assert f.oversubscription == pytest.approx((1.0, 0.5))  # 2 x 4 x 50 up... computed
    assert f.tier_bandwidth == (BW, 2 * BW, 4 * BW)
    speeds = f.link_bandwidth[f.route(0, f.n_ranks - 1)]
    assert list(speeds) == [BW, 2 * BW, 4 * BW, 4 * BW, 2 * BW, BW]


def _max_flow_cut(f):
    """Max flow from one half of the top block's hosts to the other (networkx)."""
    g = nx.DiGraph()
    live = ~f.failed
    for s, d, b in zip(
        f.link_src[live].tolist(), f.link_dst[live].tolist(), f.link_bandwidth[live].tolist()
    ):
        cap = g[s][d]["capacity"] + b if g.has_edge(s, d) else b
        g.add_edge(s, d, capacity=cap)
    half = f.n_leaves // 2
    leaf = f.leaf_of(np.arange(f.n_ranks))
    for r in range(f.n_ranks):
        if leaf[r] < half:
            g.add_edge("S", r, capacity=float("inf"))
        else:
            g.add_edge(r, "D", capacity=float("inf"))
    return nx.maximum_flow_value(g, "S", "D")


@pytest.mark.parametrize("kind", ["three-tier", "striped", "speeds", "meta-mini"])
def test_bisection_equals_networkx_max_flow(kind):
    f = small(kind)
    assert fabric.fabric_bisection(f) == pytest.approx(_max_flow_cut(f))


def test_bisection_after_failures_equals_max_flow():
    f = small("meta-mini")
    top = np.flatnonzero((f.link_tier == 3) & f.link_up)
    g = f.fail(links=top[:3])
    assert fabric.fabric_bisection(g) == pytest.approx(_max_flow_cut(g))
    assert fabric.fabric_bisection(g) < fabric.fabric_bisection(f)


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(["two-tier", "three-tier", "striped", "meta-mini", "planes"]),
    data=st.data(),
)
def test_failures_are_routed_around(kind, data):
    f = small(kind)
    inter = np.flatnonzero(f.link_tier >= 2)
    dead = data.draw(st.lists(st.sampled_from(inter.tolist()), max_size=3, unique=True))
    g = f.fail(links=dead)
    assert g.failed[dead].all() and g.failed.sum() == 2 * len(
        set(min(x, int(f.link_twin[x])) for x in dead)
    )
    src, dst = np.nonzero(~np.eye(f.n_ranks, dtype=bool))
    try:
        _walks(g, src[::7], dst[::7])
    except TopologyError as err:  # only when some pair has truly no path left
        assert "no live path" in str(err)  # noqa: PT017 (allowed, not required)
        # routes climb to the lowest tier whose block holds both leaves and no higher
        # (collectives.topology.cluster's module docstring): a pair is lost only when no live
        # up/down path stays at or below the tier its intact route climbs to
        tops = int(f.link_tier.max())
        intact = [_up_down_graph(f, t) for t in range(tops + 1)]
        failed = [_up_down_graph(g, t) for t in range(tops + 1)]
        for s, d in zip(src[::7], dst[::7]):
            top = next(t for t in range(tops + 1) if _has_up_down_path(intact[t], s, d))
            if not _has_up_down_path(failed[top], s, d):
                break
        else:
            raise AssertionError(f"{err} but every pair has a live path within its tier")
    # the intact fabric is unchanged
    assert not f.failed.any()


def test_a_detour_above_the_common_tier_is_not_taken():
    # meta-mini, three cables of rank 27's and 28's zone down: the two racks (ranks 24-27,
    # 28-31) keep no common live spine, and the only live up/down way climbs to the
    # aggregation tier and back into the zone, which BGP's loop check drops (RFC 7938 5.2.1)
    f = small("meta-mini")
    g = f.fail(links=[244, 245, 246])
    assert not _has_up_down_path(_up_down_graph(g, 2), 27, 28)
    assert _has_up_down_path(_up_down_graph(g, 3), 27, 28)
    with pytest.raises(TopologyError, match="no live path"):
        g.paths(np.array([27]), np.array([28]))
    g.paths(np.array([27]), np.array([60]))  # another zone: routed


def _up_down_graph(f, top):
    """The live links of tier ``top`` or below as a graph of (node, phase) states: phase 0
    climbs, phase 1 descends, and no path climbs again once it has descended."""
    use = ~f.failed & (f.link_tier <= top)
    g = nx.DiGraph()
    for a, b, up in zip(
        f.link_src[use].tolist(), f.link_dst[use].tolist(), f.link_up[use].tolist()
    ):
        if up:
            g.add_edge((a, 0), (b, 0))
        else:
            g.add_edge((a, 0), (b, 1))
            g.add_edge((a, 1), (b, 1))
    return g


def _has_up_down_path(g, s, d):
    """Whether the graph of :func:`_up_down_graph` has a path from host s up to host d."""
    return (
        g.has_node((int(s), 0))
        and g.has_node((int(d), 1))
        and nx.has_path(g, (int(s), 0), (int(d), 1))
    )


def test_switch_failure_takes_the_switch_out_of_every_path():
    f = small("three-tier")
    src, dst = np.nonzero(~np.eye(f.n_ranks, dtype=bool))
    pair, link = f.paths(src, dst)
    spine = int(f.link_dst[link[f.link_tier[link] == 2][0]])
    g = f.fail(switches=[spine])
    p2, l2 = g.paths(src, dst)
    assert not np.isin(spine, g.link_dst[l2])
    assert g.live_capacity() < f.live_capacity()


def test_a_failed_uplink_re_spreads_the_flows_above_it_non_resiliently():
    # two leaves of 4 hosts under 4 spines, deterministic routing: host i of leaf 0 sends to
    # slot i of leaf 1, so it climbs to spine i. Fail leaf 0's uplink to spine 1: a choice
    # among the 3 live uplinks takes the (i mod 3)-th live one (0, 2, 3), so slot 0 stays on
    # spine 0, slot 1 goes to spine 2, slot 2 to spine 3 and slot 3 to spine 0: three flows
    # move although only one was on the failed cable (ECMP without resilient hashing)
    f = fabric.layered(4, BW, [Tier(2, 4)], routing="dmodk")
    spines = f.switches[f.node_tier[f.switches] == 2]
    src = np.arange(4)
    uplinks = np.flatnonzero(
        (f.link_tier == 2)
        & f.link_up
        & (f.link_src == f.link_src[np.flatnonzero((f.link_tier == 2) & f.link_up)[0]])
    )

    def spine_of(topo):
        pair, link = topo.paths(src, src + 4)
        up = link[(topo.link_tier[link] == 2) & topo.link_up[link]]
        return [int(np.flatnonzero(spines == topo.link_dst[u])[0]) for u in up]

    assert spine_of(f) == [0, 1, 2, 3]
    assert spine_of(f.fail(links=[uplinks[1]])) == [0, 2, 3, 0]


def test_bad_input_is_named():
    with pytest.raises(TopologyError, match=r"tiers\[0\] must be a fabric\.Tier"):
        fabric.layered(4, BW, [(2, 2)])
    with pytest.raises(TopologyError, match="wiring must be 'mesh' or 'striped'"):
        fabric.layered(4, BW, [Tier(2, 2)], wiring="ring")
    with pytest.raises(TopologyError, match="rail-optimised leaves come in groups"):
        fabric.layered(4, BW, [Tier(3, 2)], gpus_per_node=2)
    with pytest.raises(TopologyError, match="host_bandwidth"):
        fabric.layered(4, -1, [Tier(2, 2)])
    f = small("two-tier")
    with pytest.raises(TopologyError, match="switch ids must be"):
        f.fail(switches=[0])
    with pytest.raises(TopologyError, match="link ids must be"):
        f.fail(links=[f.n_links])
    with pytest.raises(TopologyError, match="distinct"):
        f.paths([1], [1])
    # every spine down: no path between leaves, said plainly
    with pytest.raises(TopologyError, match="no live path"):
        f.fail(switches=f.switches[f.node_tier[f.switches] == 2]).paths([0], [f.n_ranks - 1])
