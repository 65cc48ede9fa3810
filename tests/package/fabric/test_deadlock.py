"""collectives/fabric/deadlock.py: buffer dependencies of routes, and the cycles that make a
lossless (PFC) fabric deadlock."""

import numpy as np
import pytest

from collectives import fabric
from collectives.errors import TopologyError


def three_leaves():
    # 3 leaves (nodes 6, 7, 8) of 2 hosts, 2 spines (nodes 9, 10); hosts 0-1, 2-3, 4-5
    return fabric.layered(2, 50e9, [fabric.Tier(3, 2)])


def test_up_down_routes_have_no_dependency_cycle():
    # every route climbs then descends: no dependency leads from a down link to an up link
    f = three_leaves()
    src, dst = np.meshgrid(np.arange(6), np.arange(6))
    keep = src != dst
    flows = fabric.route_flows(f, src[keep], dst[keep], 1e6, qps=4, hash_qp=True)
    edges = fabric.buffer_dependencies(flows)
    assert len(edges) > 0
    assert fabric.dependency_cycle(flows) is None
    # the same with every path choice: deterministic up/down routing
    dmodk = fabric.layered(2, 50e9, [fabric.Tier(3, 2)], routing="dmodk")
    assert fabric.dependency_cycle(fabric.route_flows(dmodk, src[keep], dst[keep], 1e6)) is None


def test_bouncing_routes_close_a_cycle():
    # three routes that go down into a leaf and up again (as a reroute around a failure
    # might): 9->7 waits on 7->10 (route A), 7->10 on 10->8 (A), 10->8 on 8->9 (B),
    # 8->9 on 9->7 (C): every buffer waits on the next, around the loop
    f = three_leaves()
    a = [0, 6, 9, 7, 10, 8, 4]
    b = [2, 7, 10, 8, 9, 6, 0]
    c = [4, 8, 9, 7, 2]
    cycle = fabric.dependency_cycle([a, b, c], f)
    link = {(int(u), int(v)): i for i, (u, v) in enumerate(zip(f.link_src, f.link_dst))}
    loop = [link[9, 7], link[7, 10], link[10, 8], link[8, 9]]
    assert cycle is not None and sorted(cycle) == sorted(loop)
    # each link of the cycle waits on the next one in it
    edges = {tuple(e) for e in fabric.buffer_dependencies([a, b, c], f).tolist()}
    assert all((cycle[i], cycle[(i + 1) % len(cycle)]) in edges for i in range(len(cycle)))
    # any two of the three routes leave the loop open
    for pair in ([a, b], [b, c], [a, c]):
        assert fabric.dependency_cycle(pair, f) is None


def test_node_paths_and_bad_routes():
    f = three_leaves()
    assert fabric.node_path_links(f, [0, 6, 9]) == [0, 12]  # host 0 up, leaf 6 to spine 9
    with pytest.raises(TopologyError, match=r"no link of .* goes from node 6 to node 7"):
        fabric.node_path_links(f, [0, 6, 7])
    with pytest.raises(TopologyError, match="need the topology"):
        fabric.dependency_cycle([[0, 6, 9]])
    spread = fabric.route_flows(
        fabric.layered(2, 50e9, [fabric.Tier(3, 2)], routing="adaptive"), [0], [4], 1e6
    )
    with pytest.raises(TopologyError, match="one path per flow"):
        fabric.buffer_dependencies(spread)
    assert fabric.buffer_dependencies([], f).shape == (0, 2)
