"""The Topology itself (collectives.topology.core): declared info, routing contract, link
shares, route levels, the networkx view."""

import numpy as np
import pytest

import collectives as cl
from collectives import topology as tp


def test_to_networkx_carries_bandwidth():
    g = tp.switch(3, 5.0, hop_latency=1e-6).to_networkx()
    assert g.number_of_nodes() == 4 and g.number_of_edges() == 6
    assert {d["bandwidth"] for _, _, d in g.edges(data=True)} == {5.0}


def test_route_levels_name_the_levels_a_route_crosses():
    # 0 = (0, 0) -> 5 = (2, 1) in a ring of 4 times a switch of 2: two ring hops, then up
    # and down the switch copy
    t = tp.product(tp.ring(4, 1.0), tp.switch(2, 1.0), level_names=("ici", "nvlink"))
    assert t.route_levels(0, 5) == ["ici", "ici", "nvlink", "nvlink"]
    assert t.route_levels(3, 3) == []


def test_link_shares_of_a_single_path_router_are_its_paths_with_share_one():
    t = tp.torus((3, 4), 1.0)
    src, dst = np.array([0, 5, 11]), np.array([7, 2, 0])
    pair, link = t.paths(src, dst)
    p2, l2, share = t.link_shares(src, dst)
    assert np.array_equal(pair, p2) and np.array_equal(link, l2)
    assert share.tolist() == [1.0] * len(link)
    empty = t.link_shares([], [])
    assert [len(a) for a in empty] == [0, 0, 0]


def test_a_router_builds_the_same_wiring_with_other_link_speeds():
    ring = tp.ring(4, 1.0)
    bw = np.arange(1.0, ring.n_links + 1)
    t = cl.Topology(4, ring.link_src, ring.link_dst, bw, 0.0, ring.router, name="uneven")
    assert t.route(0, 2) == ring.route(0, 2) and t.router is ring.router
    # 0 -> 2 goes forward (a tie): links 0 (0 -> 1) and 1 (1 -> 2), of 1 and 2 bytes/s
    assert t.link_bandwidth[t.route(0, 2)].tolist() == [1.0, 2.0]


def test_declared_info_replaces_private_reads():
    # a product declares its dimensions; a cluster its nodes and fabric shape
    ring, sw = tp.ring(2, 1.0), tp.switch(3, 1.0)
    p = tp.product(ring, sw)
    assert p.info.dimensions == (ring, sw) and p.info.gpus_per_node is None
    c = tp.cluster(
        4,
        2,
        nvlink_bandwidth=9.0,
        pcie_bandwidth=3.0,
        nic_bandwidth=1.0,
        nodes_per_unit=2,
        n_spines=2,
    )
    f = c.info.fabric
    # 2 units of 2 nodes x 2 rails: 4 leaves of 2 ports, 2 spines; a leaf has 2 GPUs under
    # it, the spine tier's one block all 8
    assert c.info.gpus_per_node == 2 and f.hosts_per_leaf == 2 and f.rails
    assert f.switches_per_tier == (4, 2) and f.cables_per_tier == (8, 8)
    assert f.endpoints_per_block == (2, 8) and f.tier_bandwidth == (1.0, 1.0)
    assert f.n_tiers == 2 and f.routing == "hash" and f.planes == 1
    with pytest.raises(cl.TopologyError, match="cannot be changed once built"):
        c.info = None


def test_with_info_renames_and_shares_the_wiring():
    t = tp.ring(4, 1.0)
    u = t.with_info(name="mine", sources=("a paper",))
    assert (u.name, u.info.sources, t.name) == ("mine", ("a paper",), "ring of 4")
    assert u.link_src is t.link_src and u.router is t.router
