"""Flows on a fabric (collectives.fabric.flows): max-min fairness (feasible, every flow
bottlenecked, conservation), step and collective time against collectives.time where links
are shared evenly, queue pairs and enhanced ECMP, adaptive routing's spread flows, the
engineered assignment, rerouting."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import fabric
from collectives.errors import CollectivesError, TopologyError
from collectives.fabric import Tier

BW = 50e9


FABRICS = {
    "two-tier": lambda: fabric.layered(4, BW, [Tier(4, 4)]),
    "oversubscribed": lambda: fabric.layered(4, BW, [Tier(3, 2, bandwidth=BW / 2)]),
    "three-tier": lambda: fabric.layered(2, BW, [Tier(3, 2), Tier(2, 2, bandwidth=BW / 3)]),
    "clos": lambda: fabric.clos(6, 2, BW, 2),
    "adaptive": lambda: fabric.layered(
        2, BW, [Tier(3, 2, links=2), Tier(2, 2)], routing="adaptive"
    ),
    "torus": lambda: cl.topology.torus((3, 4), BW),
}


_built = {}


def built(name):
    if name not in _built:
        _built[name] = FABRICS[name]()
    return _built[name]


def flows_strategy():
    return st.tuples(
        st.sampled_from(sorted(FABRICS)),
        st.integers(1, 40),
        st.integers(0, 2**31 - 1),
        st.integers(1, 4),
        st.booleans(),
    )


def draw_flows(name, n, seed, qps, hash_qp):
    topo = built(name)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, topo.n_ranks, n)
    dst = (src + rng.integers(1, topo.n_ranks, n)) % topo.n_ranks
    size = rng.choice([1e6, 2e6, 5e6], n)
    hq = hash_qp and name != "torus"
    return fabric.route_flows(topo, src, dst, size, qps=qps, hash_qp=hq)


@settings(max_examples=80, deadline=None)
@given(case=flows_strategy())
def test_max_min_rates_are_feasible_and_every_flow_is_bottlenecked(case):
    flows = draw_flows(*case)
    rate = fabric.max_min_rates(flows)
    cap = flows.topology.link_bandwidth
    share = np.ones(len(flows.link)) if flows.share is None else flows.share
    used = np.bincount(flows.link, weights=rate[flows.pair] * share, minlength=len(cap))
    assert np.all(used <= cap * (1 + 1e-9)), "a link carries more than its capacity"
    assert np.all(rate > 0)
    # max-min: each flow crosses a saturated link on which no flow gets more than it
    saturated = used >= cap * (1 - 1e-9)
    top = np.zeros(len(cap))
    np.maximum.at(top, flows.link, rate[flows.pair])
    ok = saturated[flows.link] & (rate[flows.pair] >= top[flows.link] * (1 - 1e-9))
    has_bottleneck = np.bincount(flows.pair, weights=ok, minlength=flows.n_flows) > 0
    assert has_bottleneck.all()


@settings(max_examples=40, deadline=None)
@given(case=flows_strategy())
def test_bytes_are_conserved_and_steps_drain_no_faster_than_the_busiest_link(case):
    flows = draw_flows(*case)
    share = np.ones(len(flows.link)) if flows.share is None else flows.share
    hops = np.bincount(flows.pair, weights=share, minlength=flows.n_flows)  # path length
    # every byte crosses each of its flow's links once
    assert flows.link_bytes().sum() == pytest.approx(float(flows.nbytes @ hops))
    bound = np.max(flows.link_bytes() / flows.topology.link_bandwidth)
    static = fabric.step_time(flows)
    dynamic = fabric.step_time(flows, reallocate=True)
    assert dynamic >= bound * (1 - 1e-9)
    assert static >= dynamic * (1 - 1e-9)


def test_two_flows_share_a_link_half_each_and_a_third_gets_the_rest():
    # hand-worked: a, b share host link 0->leaf; c from another host to the same
    # destination leaf shares the leaf->dst link with a. Host links 50 GB/s.
    topo = built("two-tier")
    flows = fabric.route_flows(topo, [0, 0, 5], [1, 2, 1], 1e9)
    rate = fabric.max_min_rates(flows)
    # 0->1 and 0->2 share 0's uplink: 25 each; 0->1 and 5->1 share 1's downlink: 5->1
    # gets 50 - 25 = 25 at first, but max-min lets it take what 0->1 leaves: 25
    assert rate == pytest.approx([25e9, 25e9, 25e9])
    # static: every flow 1e9 / 25e9 = 0.04 s; reallocated: the same (all finish together)
    assert fabric.step_time(flows) == pytest.approx(0.04)
    flows = fabric.route_flows(topo, [0, 0], [1, 2], [1e9, 3e9])
    # reallocated: both at 25e9 until 1e9 drains at 0.04 s, then 2e9 at 50e9: 0.08 s
    assert fabric.step_time(flows, reallocate=True) == pytest.approx(0.08)
    assert fabric.step_time(flows) == pytest.approx(3e9 / 25e9)


@pytest.mark.parametrize(
    "name,algorithm",
    [
        ("two-tier", "ring_all_reduce"),
        ("two-tier", "ring_all_gather"),
        ("torus", "ring_reduce_scatter"),
        ("clos-spread", "ring_all_reduce"),
        ("switch", "ring_all_reduce"),
    ],
)
def test_collective_time_equals_cl_time_when_links_are_shared_evenly(name, algorithm):
    topo = {
        "clos-spread": lambda: fabric.clos(8, 2, BW, ecmp="spread"),
        "switch": lambda: cl.topology.switch(8, BW, hop_latency=1e-6),
    }.get(name, lambda: built(name))()
    n = topo.n_ranks
    s = getattr(cl.algorithms, algorithm)(n)
    for nbytes in (1e6, 3e8):
        expected = cl.time(s, topo, nbytes).seconds
        assert fabric.collective_time(s, topo, nbytes) == pytest.approx(expected)
        assert fabric.collective_time(s, topo, nbytes, reallocate=True) == pytest.approx(expected)


def test_collective_time_is_slower_than_the_step_model_when_sharing_is_uneven():
    # hashed ECMP on an oversubscribed fabric: flows on a busy link drain last, others
    # are held back by their own links, so the flow model can only be slower or equal
    topo = fabric.layered(4, BW, [Tier(4, 2)])
    s = cl.algorithms.ring_all_gather(topo.n_ranks)
    assert fabric.collective_time(s, topo, 1e8) >= cl.time(s, topo, 1e8).seconds * (1 - 1e-12)


def test_qps_share_a_path_unless_the_hash_sees_the_qp():
    topo = fabric.meta_cluster(zones=2, racks_per_zone=14, spines=7, aggregators=2)
    plain = fabric.route_flows(topo, [0], [topo.n_ranks - 1], 16e6, qps=16)
    paths = {tuple(p) for p in plain.paths_of(range(16))}
    assert len(paths) == 1 and plain.nbytes.sum() == 16e6
    enhanced = fabric.route_flows(topo, [0], [topo.n_ranks - 1], 16e6, qps=16, hash_qp=True)
    assert len({tuple(p) for p in enhanced.paths_of(range(16))}) > 1
    # 16 QPs hashed onto 7 spines: the fullest leaf uplink holds >= 3 of them
    up = enhanced.link_flows()[(topo.link_tier == 2) & topo.link_up]
    assert up.max() >= 3 and up.sum() == 16


def test_engineered_assignment_is_perfect_on_a_leaf_to_leaf_shift():
    # 4 hosts per leaf, 4 spines: each leaf sends its 4 flows to the next leaf; the
    # controller gives each a different spine, so every link carries one flow:
    # step = 1e9 / 50e9 = 0.02 s. Hashed ECMP collides on some seeds.
    topo = built("two-tier")
    src = np.arange(topo.n_ranks)
    dst = (src + 4) % topo.n_ranks
    te = fabric.route_flows(topo, src, dst, 1e9, scheme="engineered")
    assert te.link_flows().max() == 1
    assert fabric.step_time(te) == pytest.approx(0.02)
    slower = [
        fabric.step_time(
            fabric.route_flows(fabric.layered(4, BW, [Tier(4, 4)], hash_seed=seed), src, dst, 1e9)
        )
        for seed in range(5)
    ]
    assert max(slower) > 0.02


def test_reroute_moves_only_flows_on_failed_links():
    topo = fabric.meta_cluster(zones=2, racks_per_zone=14, spines=7, aggregators=2)
    src = np.arange(topo.n_ranks)
    dst = (src + topo.n_ranks // 2) % topo.n_ranks
    te = fabric.route_flows(topo, src, dst, 1e8, scheme="engineered")
    busiest = int(np.argmax(te.link_flows() * (topo.link_tier == 3)))
    broken = topo.fail(links=[busiest])
    moved = fabric.reroute(te, broken)
    hit = set(te.pair[te.link == busiest].tolist()) | set(
        te.pair[te.link == broken.link_twin[busiest]].tolist()
    )
    for f in range(0, te.n_flows, 13):
        if f in hit:
            assert not broken.failed[moved.paths_of(f)[0]].any()
        else:
            assert moved.paths_of(f) == te.paths_of(f)
    assert not broken.failed[moved.link].any()


def test_bad_input_is_named():
    topo = built("two-tier")
    with pytest.raises(CollectivesError, match="scheme must be one of"):
        fabric.route_flows(topo, [0], [1], 1.0, scheme="magic")
    with pytest.raises(CollectivesError, match="qps"):
        fabric.route_flows(topo, [0], [1], 1.0, qps=0)
    with pytest.raises(CollectivesError, match="finite and >= 0"):
        fabric.route_flows(topo, [0], [1], -1.0)
    with pytest.raises(TopologyError, match="2 connections but dst has 1"):
        fabric.route_flows(topo, [0, 1], [1], 1.0)
    with pytest.raises(TopologyError, match="needs a fabric built by"):
        fabric.route_flows(built("torus"), [0], [1], 1.0, scheme="engineered")
    with pytest.raises(TopologyError, match="does not hash flows"):
        fabric.route_flows(built("torus"), [0], [1], 1.0, hash_qp=True)
    with pytest.raises(CollectivesError, match="expected Flows"):
        fabric.max_min_rates([1, 2])
    with pytest.raises(TopologyError, match="reroute needs"):
        fabric.reroute(fabric.route_flows(topo, [0], [1], 1.0), built("torus"))


def test_adaptive_flows_spread_evenly_and_reach_the_link_speed_a_hash_misses():
    # 2 leaves x 2 hosts, 2 spines, 1 GB/s links; the shift 0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1.
    # Adaptive: every flow puts half of itself on each uplink of its leaf, so an uplink
    # carries two halves and every flow gets the full 1 GB/s: 1e9 bytes in 1 s (by hand).
    # Hash seed 1 puts both flows of a leaf on one uplink: 0.5 GB/s each, 2 s.
    src, dst = np.arange(4), (np.arange(4) + 2) % 4
    spread = fabric.route_flows(
        fabric.layered(2, 1e9, [Tier(2, 2)], routing="adaptive"), src, dst, 1e9
    )
    assert spread.share is not None
    up = np.flatnonzero((spread.topology.link_tier == 2) & spread.topology.link_up)
    assert spread.link_flows()[up].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert spread.link_bytes()[up].tolist() == [1e9] * 4
    assert fabric.max_min_rates(spread) == pytest.approx([1e9] * 4)
    assert fabric.step_time(spread) == pytest.approx(1.0)
    hashed = fabric.route_flows(fabric.layered(2, 1e9, [Tier(2, 2)], hash_seed=1), src, dst, 1e9)
    assert hashed.share is None and fabric.step_time(hashed) == pytest.approx(2.0)
    # the same on the step model of collectives.time
    step = cl.Schedule(
        "permute",
        4,
        1,
        [[(0, 2, 0, 0), (1, 3, 0, 0), (2, 0, 0, 0), (3, 1, 0, 0)]],
        peers=[2, 3, 0, 1],
    )
    assert fabric.collective_time(step, spread.topology, 1e9) == pytest.approx(1.0)
    assert cl.time(step, spread.topology, 1e9).seconds == pytest.approx(1.0)


# ---- flows per cable (what the across-nodes chapter's histogram draws) ----------------------


def test_cable_flows_count_the_flows_on_each_cable_of_a_level():
    # 2 nodes of 2 GPUs, rail-optimised: GPU i of each node on leaf i; 2 spines, one cable
    # from each leaf to each spine
    two = cl.topology.cluster(2, 2, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    # GPU 0 (node 0, rail 0) to GPU 3 (node 1, rail 1): up from leaf 0 to one spine, down to
    # leaf 1; the cables counted are leaf 0's two up cables and leaf 1's two down cables
    loads = fabric.cable_flows(two, [0], [3], level="spine")
    assert sorted(loads["up"].tolist()) == [0, 1] and sorted(loads["down"].tolist()) == [0, 1]
    # the same rail (GPU 0 to GPU 2) turns in leaf 0: no spine cable is used
    same = fabric.cable_flows(two, [0], [2], level="spine")
    assert len(same["up"]) == len(same["down"]) == 0
    # every leaf->spine hop of a ring that changes rail at each node boundary: GPU 1 -> 2 and
    # GPU 3 -> 0 both change rail (1 -> 0): two flows up from leaf 1, two down into leaf 0
    ring = fabric.cable_flows(two, np.arange(4), (np.arange(4) + 1) % 4, level="spine")
    assert ring["up"].sum() == ring["down"].sum() == 2 and len(ring["up"]) == 2
    with pytest.raises(TopologyError, match="no link level 'core'"):
        fabric.cable_flows(two, [0], [3], level="core")
    with pytest.raises(TopologyError, match="not one"):
        fabric.cable_flows(cl.topology.ring(4, 1e9), [0], [1])
