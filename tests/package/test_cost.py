"""time() agrees with the closed forms where nothing is shared, and models sharing."""

import math

import numpy as np
import pytest

import collectives as cl
from collectives import analytic
from collectives import topology as tp

B = 45e9  # bytes/s per direction (TPU v5e ICI link, Scaling Book 2026-07)
H = 1e-6  # seconds per hop


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


# (algorithm, topology builder, alpha as a function of hop latency)
CASES = [
    ("ring_all_gather", lambda n: tp.ring(n, B, H), H),
    ("ring_all_gather", lambda n: tp.ring(n, B, H, bidirectional=False), H),
    ("ring_reduce_scatter", lambda n: tp.ring(n, B, H), H),
    ("ring_all_reduce", lambda n: tp.ring(n, B, H), H),
    ("bidirectional_ring_all_gather", lambda n: tp.ring(n, B, H), H),
    ("bidirectional_ring_reduce_scatter", lambda n: tp.ring(n, B, H), H),
    ("bidirectional_ring_all_reduce", lambda n: tp.ring(n, B, H), H),
    ("latency_optimal_ring_all_gather", lambda n: tp.ring(n, B, H), H),
    ("latency_optimal_ring_reduce_scatter", lambda n: tp.ring(n, B, H), H),
    ("latency_optimal_ring_all_reduce", lambda n: tp.ring(n, B, H), H),
    ("ring_all_gather", lambda n: tp.switch(n, B, H), 2 * H),
    ("recursive_doubling_all_gather", lambda n: tp.switch(n, B, H), 2 * H),
    ("recursive_halving_reduce_scatter", lambda n: tp.switch(n, B, H), 2 * H),
    ("direct_all_gather", lambda n: tp.switch(n, B, H), 2 * H),
    ("direct_all_to_all", lambda n: tp.switch(n, B, H), 2 * H),
    ("binomial_tree_broadcast", lambda n: tp.switch(n, B, H), 2 * H),
    ("binomial_tree_reduce", lambda n: tp.switch(n, B, H), 2 * H),
    ("chain_all_gather", lambda n: tp.chain(n, B, H), H),
    ("chain_reduce_scatter", lambda n: tp.chain(n, B, H), H),
    ("rabenseifner_all_reduce", lambda n: tp.switch(n, B, H), 2 * H),
    ("recursive_doubling_all_reduce", lambda n: tp.switch(n, B, H), 2 * H),
    ("ring_all_to_all", lambda n: tp.ring(n, B, H), H),
    ("bidirectional_ring_all_to_all", lambda n: tp.ring(n, B, H), H),
    ("chain_all_to_all", lambda n: tp.chain(n, B, H), H),
    ("chain_farthest_first_all_to_all", lambda n: tp.chain(n, B, H), H),
    ("pairwise_all_to_all", lambda n: tp.switch(n, B, H), 2 * H),
    ("bruck_all_to_all", lambda n: tp.switch(n, B, H), 2 * H),
]


@pytest.mark.parametrize("name, make_topology, alpha", CASES)
@pytest.mark.parametrize("nbytes", [0.0, 1e3, 4.5e4, 2**20, 1e9])
def test_time_equals_closed_form_when_uncontended(name, make_topology, alpha, nbytes):
    closed_form = getattr(analytic, name)
    for n in [1, 2, 3, 4, 5, 8, 16, 33, 64]:
        if not cl.algorithms.supports(name, n):
            continue
        schedule = cl.algorithms.CATALOG[name].build(n)
        got = cl.time(schedule, make_topology(n), nbytes).seconds
        want = closed_form(n, nbytes, alpha=alpha, bandwidth=B)
        assert rel(got, want) < 1e-9 or (want == 0 and got == 0), (n, got, want)


def test_hand_derived_ring_all_gather():
    # 8 ranks, 8 MB: 7 steps x (1 us + 1 MB / 45e9 B/s) = 7 x 23.2222 us = 162.5556 us
    t = cl.time(cl.algorithms.ring_all_gather(8), tp.ring(8, 45e9, 1e-6), 8e6)
    assert math.isclose(t.seconds, 7 * (1e-6 + 1e6 / 45e9), rel_tol=1e-12)
    assert t.n_steps == 7
    np.testing.assert_allclose(t.step_latency, 1e-6)
    np.testing.assert_allclose(t.step_bottleneck_bytes, 1e6)
    # every forward link carries 7 shards over the schedule, backward links none
    r = tp.ring(8, 45e9)
    forward = r.link_dst == (r.link_src + 1) % 8
    np.testing.assert_allclose(t.link_bytes[forward], 7e6)
    np.testing.assert_allclose(t.link_bytes[~forward], 0)


def test_two_transfers_over_one_link_take_twice_as_long():
    one = cl.Schedule("all_gather", 3, 3, [[(0, 1, 0, 0)]], n_scratch=0)
    two = cl.Schedule("all_gather", 3, 3, [[(0, 1, 0, 0), (0, 2, 0, 0)]])
    chain = tp.chain(3, 1e9)  # 0 -> 2 crosses 0 -> 1 too
    t1 = cl.time(one, chain, 3e9).seconds
    t2 = cl.time(two, chain, 3e9).seconds
    assert t1 == pytest.approx(1.0) and t2 == pytest.approx(2.0)
    timing = cl.time(two, chain, 3e9)
    assert timing.step_bottleneck_link[0] == chain.route(0, 1)[0]


def test_direct_all_gather_on_a_ring_is_contended():
    # Every rank sends its shard to all others at once over a 4-ring: routes of length
    # 1, 2 (tie: forward) and 1 (back). Link r -> r+1 carries r's shard to r+1 and r+2,
    # and r-1's shard to r+1: 3 shards of S/4 -> 0.75 s at S = 4 B/s x 1 s.
    t = cl.time(cl.algorithms.direct_all_gather(4), tp.ring(4, 1.0), 4.0)
    assert t.seconds == pytest.approx(3.0)


def test_losing_wraparound_doubles_a_bidirectional_ring_on_a_chain():
    n, S = 16, 1e9
    ag, bi = cl.algorithms.ring_all_gather(n), cl.algorithms.bidirectional_ring_all_gather(n)
    # Bidirectional ring: each link direction carries half a shard per step.
    ring = cl.time(bi, tp.ring(n, B), S).seconds
    assert ring == pytest.approx((n - 1) * S / (2 * n * B))
    # On a chain the "wrap" transfers (15 -> 0 forward half, 0 -> 15 backward half) are
    # routed the long way and load every link in the other direction: two halves per link.
    chain = cl.time(bi, tp.chain(n, B), S).seconds
    assert chain == pytest.approx(2 * ring)
    # A unidirectional ring schedule only uses one direction, so on a chain its long
    # transfer rides idle reverse links: the same bytes per link, only more latency.
    assert cl.time(ag, tp.chain(n, B), S).seconds == pytest.approx(2 * ring)
    extra = cl.time(ag, tp.chain(n, B, H), S).seconds - cl.time(ag, tp.chain(n, B), S).seconds
    assert extra == pytest.approx((n - 1) * (n - 1) * H)  # a 15-hop path in every step


def test_local_transfers_are_free():
    s = cl.Schedule("all_to_all", 2, 2, [[(0, 0, 0, 0)], [(0, 1, 1, 0), (1, 0, 0, 1)]])
    t = cl.time(s, tp.ring(2, 1.0, 1.0), 2.0)
    assert t.step_seconds.tolist() == [0.0, 2.0]  # 1 s latency + 1 byte / 1 B/s
    assert t.step_bottleneck_link[0] == -1


def test_sparse_path_matches_dense(monkeypatch):
    from collectives import cost

    s = cl.algorithms.bruck_all_to_all(12)
    topo = tp.torus((3, 4), 7e9, 2e-6)
    dense = cl.time(s, topo, 12e6)
    monkeypatch.setattr(cost, "_DENSE_LIMIT", 0)
    sparse = cl.time(s, topo, 12e6)
    np.testing.assert_allclose(sparse.step_seconds, dense.step_seconds, rtol=1e-12)
    np.testing.assert_array_equal(sparse.step_bottleneck_bytes, dense.step_bottleneck_bytes)
    np.testing.assert_allclose(sparse.link_bytes, dense.link_bytes, rtol=1e-12)


def test_compact_traffic_costs_the_same_as_the_listed_transfers():
    # ring_all_reduce is built from its traffic pattern; rebuilt from its listed transfers it
    # must cost exactly the same, step by step, on a contended torus
    s = cl.algorithms.ring_all_reduce(12)
    topo = tp.torus((3, 4), 7e9, 2e-6)
    compact = cl.time(s, topo, 12e6)
    listed = cl.Schedule(s.collective, s.n_ranks, s.n_chunks, s.to_lists())
    explicit = cl.time(listed, topo, 12e6)
    assert compact.seconds == explicit.seconds
    assert np.array_equal(compact.step_seconds, explicit.step_seconds)
    assert np.array_equal(compact.link_bytes, explicit.link_bytes)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: cl.time(cl.algorithms.ring_all_gather(4), tp.ring(5, 1.0), 1.0),
            cl.TopologyError,
            "the schedule has 4 ranks but ring of 5 has 5 endpoints; give placement",
        ),
        (
            lambda: cl.time(cl.algorithms.ring_all_gather(4), tp.ring(4, 1.0), -1),
            cl.CollectivesError,
            "nbytes must be finite and >= 0, got -1",
        ),
        (
            lambda: cl.time(cl.algorithms.ring_all_gather(4), tp.ring(4, 1.0), float("nan")),
            cl.CollectivesError,
            "nbytes must be finite",
        ),
        (
            lambda: cl.time(cl.algorithms.ring_all_gather(4), tp.ring(4, 1.0), "1MB"),
            cl.CollectivesError,
            "nbytes must be a number of bytes, got '1MB'",
        ),
        (
            lambda: cl.time(cl.algorithms.ring_all_gather(4), "ring", 1.0),
            cl.TopologyError,
            "expected a collectives Topology, got str",
        ),
        (lambda: cl.algbw(1e6, 0), cl.CollectivesError, "seconds must be a finite number > 0"),
        (lambda: cl.busbw("allreduce", 1e6, 1.0, 8), cl.CollectivesError, "unknown collective"),
        (
            lambda: cl.busbw("all_reduce", 1e6, 1.0, 0),
            cl.CollectivesError,
            "must be an integer >= 1",
        ),
    ],
)
def test_bad_cost_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_busbw_factors_follow_nccl_tests():
    # nccl-tests doc/PERFORMANCE.md: 2(n-1)/n all-reduce, (n-1)/n gathers/scatters/all-to-all
    assert cl.busbw("all_reduce", 8e9, 1.0, 8) == pytest.approx(14e9)
    assert cl.busbw("all_gather", 8e9, 1.0, 8) == pytest.approx(7e9)
    assert cl.busbw("reduce_scatter", 8e9, 2.0, 8) == pytest.approx(3.5e9)
    assert cl.busbw("all_to_all", 8e9, 1.0, 8) == pytest.approx(7e9)
    assert cl.busbw("broadcast", 8e9, 1.0, 8) == pytest.approx(8e9)
    assert cl.algbw(8e9, 2.0) == 4e9


def test_ring_all_reduce_busbw_approaches_link_bandwidth():
    # bandwidth-bound ring all-reduce: busbw = 2(n-1)/n x S / (2(n-1) S/(nB)) = B exactly
    n, S = 8, 1e9
    t = cl.time(cl.algorithms.ring_all_reduce(n), tp.ring(n, B), S)
    assert cl.busbw("all_reduce", S, t.seconds, n) == pytest.approx(B, rel=1e-12)
    assert t.algbw == pytest.approx(S / t.seconds)


def test_crossover_is_where_latency_equals_transfer():
    n, alpha = 16, 1e-6
    s_star = analytic.ring_crossover_bytes(n, alpha=alpha, bandwidth=B)
    assert s_star == pytest.approx(16 * 45e3)  # 720 kB on a 16-chip v5e axis
    t = cl.time(cl.algorithms.ring_all_gather(n), tp.ring(n, B, alpha), s_star)
    assert t.step_latency[0] == pytest.approx(t.step_transfer[0])


@pytest.mark.parametrize("k", [1, 2, 7, 32])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 17])
def test_pipelined_chain_broadcast_matches_its_closed_form(n, k):
    s = cl.algorithms.chain_broadcast(n, root=n // 2, n_segments=k)
    got = cl.time(s, tp.ring(n, B, H), 1e8).seconds
    want = analytic.chain_broadcast(n, 1e8, alpha=H, bandwidth=B, n_segments=k)
    assert rel(got, want) < 1e-9 or n == 1


def test_pipelining_a_chain_broadcast_approaches_one_buffer_time():
    # (n - 2 + k)(S / (k B)) -> S / B as k grows: 15 ranks, k = 1 costs 14 S/B
    n, S = 15, 1e9
    times = [
        cl.time(cl.algorithms.chain_broadcast(n, n_segments=k), tp.chain(n, B), S).seconds
        for k in (1, 8, 64, 512)
    ]
    assert times[0] == pytest.approx(14 * S / B)
    assert times == sorted(times, reverse=True)
    assert times[-1] == pytest.approx((13 + 512) * S / (512 * B))


TORI = [(4, 4), (2, 8), (3, 5), (16, 16), (4, 4, 4), (2, 2), (1, 6)]


@pytest.mark.parametrize("shape", TORI)
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("name", ["torus_all_gather", "torus_reduce_scatter", "torus_all_reduce"])
@pytest.mark.parametrize("latency_optimal", [True, False])
def test_torus_collectives_match_closed_forms(shape, bidirectional, name, latency_optimal):
    topo = tp.torus(shape, B, H)
    for concurrent in (False, True):
        if concurrent and len({m for m in shape if m > 1}) > 1:
            with pytest.raises(cl.CollectivesError, match="same size"):
                getattr(analytic, name)(
                    shape,
                    1e8,
                    alpha=H,
                    bandwidth=B,
                    bidirectional=bidirectional,
                    concurrent=concurrent,
                )
            continue
        s = getattr(cl.algorithms, name)(
            shape,
            bidirectional=bidirectional,
            concurrent=concurrent,
            latency_optimal=latency_optimal,
        )
        got = cl.time(s, topo, 1e8).seconds
        want = getattr(analytic, name)(
            shape,
            1e8,
            alpha=H,
            bandwidth=B,
            bidirectional=bidirectional,
            concurrent=concurrent,
            latency_optimal=latency_optimal,
        )
        assert rel(got, want) < 1e-9


def test_torus_latency_by_hand():
    # 16x16 torus, nothing to send: the latency-optimal rings take 16/2 steps per axis,
    # 8 + 8 = 16 us for the all-gather over both axes; the split-halves rings 15 + 15 = 30 us
    topo = tp.torus((16, 16), B, H)
    fast = cl.time(cl.algorithms.torus_all_gather((16, 16)), topo, 0.0)
    split = cl.time(cl.algorithms.torus_all_gather((16, 16), latency_optimal=False), topo, 0.0)
    assert fast.n_steps == 16 and fast.seconds == pytest.approx(16e-6)
    assert split.n_steps == 30 and split.seconds == pytest.approx(30e-6)


@pytest.mark.parametrize("shape", TORI)
@pytest.mark.parametrize("line", ["ring", "bidirectional_ring"])
def test_torus_all_to_all_matches_closed_form(shape, line):
    s = cl.algorithms.torus_all_to_all(shape, line=line)
    got = cl.time(s, tp.torus(shape, B, H), 1e8).seconds
    assert rel(got, analytic.torus_all_to_all(shape, 1e8, alpha=H, bandwidth=B, line=line)) < 1e-9


def test_torus_all_gather_matches_the_scaling_book():
    # Scaling Book: an all-gather over both axes of a 16x16 torus with bidirectional rings
    # takes about V / (W x 2 axes), W = 2B; ours differs by the exact (n-1)/n factors.
    S, topo = 256e6, tp.torus((16, 16), B)
    seq = cl.time(cl.algorithms.torus_all_gather((16, 16)), topo, S).seconds
    both = cl.time(cl.algorithms.torus_all_gather((16, 16), concurrent=True), topo, S).seconds
    assert seq == pytest.approx(S / (2 * B) * 255 / 256)
    assert both == pytest.approx(S / (2 * B * 2) * 255 / 256)


@pytest.mark.parametrize("shape", [(4, 4), (8, 16), (3, 5), (4, 4, 4)])
def test_torus_collectives_use_chains_where_an_axis_does_not_wrap(shape):
    import itertools

    for wrap in itertools.product([True, False], repeat=len(shape)):
        topo = tp.torus(shape, B, H, wraparound=wrap)
        for bidirectional in (True, False):
            s = cl.algorithms.torus_all_gather(shape, bidirectional=bidirectional, wraparound=wrap)
            cl.verify(s)
            got = cl.time(s, topo, 1e8).seconds
            want = analytic.torus_all_gather(
                shape,
                1e8,
                alpha=H,
                bandwidth=B,
                bidirectional=bidirectional,
                concurrent=False,
                wraparound=wrap,
            )
            assert rel(got, want) < 1e-9
            rings = cl.algorithms.torus_all_gather(shape, bidirectional=bidirectional)
            assert got <= cl.time(rings, topo, 1e8).seconds * (1 + 1e-12)


# ---- the helpers viz draws from: placement, an endpoint's link bytes, a grid of times ------


def test_placement_nodes_are_where_time_runs_the_participants():
    dgx = cl.hardware.preset("dgx-h100")
    nvls = cl.algorithms.nvls_all_reduce(8)
    # GPUs 0..7, then the node's NVSwitch: node 2E + node = 16 (topology.cluster's numbering)
    nodes = cl.cost.placement_nodes(nvls, dgx)
    assert nodes.tolist() == list(range(8)) + [16] and int(dgx.switches[0]) == 16
    two = tp.cluster(2, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    ring = cl.algorithms.ring_all_gather(4)
    assert cl.cost.placement_nodes(ring, two, placement=[4, 5, 6, 7]).tolist() == [4, 5, 6, 7]
    with pytest.raises(cl.TopologyError, match="different endpoint"):
        cl.cost.placement_nodes(ring, two, placement=[4, 4, 5, 6])
    with pytest.raises(cl.TopologyError, match="placement"):
        cl.cost.placement_nodes(ring, two)  # 4 ranks on 8 endpoints: say where


def test_endpoint_link_bytes():
    S = 2**20
    # ring all-reduce on a DGX node: each GPU sends 2(n-1) chunks of S/n up its NVLink to the
    # NVSwitch and receives as many: 14/8 S = 1.75 S each way
    dgx = cl.hardware.preset("dgx-h100")
    t = cl.time(cl.algorithms.ring_all_reduce(8), dgx, S)
    assert t.endpoint_link_bytes(dgx, "nvlink") == pytest.approx((1.75 * S, 1.75 * S))
    assert t.endpoint_link_bytes(dgx) == pytest.approx((1.75 * S, 1.75 * S))  # first level
    # nothing crosses PCIe inside one node
    assert t.endpoint_link_bytes(dgx, "pcie") == (0.0, 0.0)
    # direct all-gather on a switch of 4: each rank sends its shard S/4 to 3 others up its
    # link, and receives 3 shards down: 0.75 S each way
    sw = tp.switch(4, B)
    d = cl.time(cl.algorithms.direct_all_gather(4), sw, S)
    assert d.endpoint_link_bytes(sw, endpoint=2) == pytest.approx((0.75 * S, 0.75 * S))
    with pytest.raises(cl.TopologyError, match="not of"):
        d.endpoint_link_bytes(dgx)
    with pytest.raises(cl.TopologyError, match="no 'nvlink' links"):
        d.endpoint_link_bytes(sw, "nvlink")
    with pytest.raises(cl.TopologyError, match="endpoint"):
        d.endpoint_link_bytes(sw, endpoint=4)


def test_time_grid_times_every_case_key_bandwidth_and_size():
    cases = {
        "ring": lambda n, b: (cl.algorithms.ring_all_gather(n), tp.ring(n, b, H)),
        # half the bytes on the wire, and only at even rank counts
        "ring, half": lambda n, b: (
            None if n % 2 else (cl.algorithms.ring_all_gather(n), tp.ring(n, b, H), 0.5)
        ),
    }
    g = cl.cost.time_grid("all_gather", cases, [3, 4], [10e9, 40e9], [2**20])
    assert g.cases == ("ring", "ring, half") and g.group_sizes == (3, 4)
    assert g.seconds.shape == g.busbw.shape == (2, 2, 2, 1)
    # ring, 4 ranks, 10 GB/s, 1 MiB: 3 * (1e-6 + 1048576 / 4e10) = 81.6432e-6 s
    assert g.seconds[0, 1, 0, 0] == pytest.approx(81.6432e-6, rel=1e-9)
    # busbw = S / t * (n - 1) / n
    assert g.busbw[0, 1, 0, 0] == pytest.approx(2**20 / 81.6432e-6 * 3 / 4, rel=1e-9)
    # half on the wire: 3 * (1e-6 + 524288 / 4e10) = 42.3216e-6 s; busbw on the whole buffer
    assert g.seconds[1, 1, 0, 0] == pytest.approx(42.3216e-6, rel=1e-9)
    assert g.busbw[1, 1, 0, 0] == pytest.approx(2**20 / 42.3216e-6 * 3 / 4, rel=1e-9)
    assert np.isnan(g.seconds[1, 0]).all() and np.isnan(g.busbw[1, 0]).all()
    with pytest.raises(cl.CollectivesError, match="not all_gather"):
        cl.cost.time_grid(
            "all_gather",
            {"rs": lambda n, b: (cl.algorithms.ring_reduce_scatter(n), tp.ring(n, b))},
            [4],
            [1e9],
            [1024],
        )
    with pytest.raises(cl.CollectivesError, match="no case applies"):
        cl.cost.time_grid("all_gather", {"x": lambda n, b: None}, [4], [1e9], [1024])
    with pytest.raises(cl.CollectivesError, match="positive"):
        cl.cost.time_grid("all_gather", cases, [4], [0.0], [1024])
    with pytest.raises(cl.CollectivesError, match="positive"):
        cl.cost.time_grid("all_gather", cases, [4], [1e9], [0])
    with pytest.raises(cl.CollectivesError, match="at least one"):
        cl.cost.time_grid("all_gather", {}, [4], [1e9], [1024])


# --- one step's link bytes (cl.cost.step_link_bytes) -------------------------------------


def test_one_steps_link_bytes_by_hand():
    # ring all-gather of 4 ranks on a ring of 4: in step 0 rank r sends its shard (S/4) to
    # r + 1 over the one link r -> r+1; nothing goes the other way
    ring = tp.ring(4, 1.0)
    s = cl.algorithms.ring_all_gather(4)
    b = cl.cost.step_link_bytes(s, ring, 8.0, 0)
    for link, (u, v) in enumerate(zip(ring.link_src, ring.link_dst)):
        assert b[link] == (2.0 if v == (u + 1) % 4 else 0.0)
    # the steps add up to the whole schedule's bytes, and the busiest link over its
    # bandwidth is the step's transfer time (what cl.time charges)
    t = cl.time(s, ring, 8.0)
    total = sum(cl.cost.step_link_bytes(s, ring, 8.0, k) for k in range(s.n_steps))
    np.testing.assert_allclose(total, t.link_bytes)
    for k in range(s.n_steps):
        per = cl.cost.step_link_bytes(s, ring, 8.0, k) / ring.link_bandwidth
        assert math.isclose(per.max(), t.step_transfer[k])


def test_one_steps_link_bytes_follow_placement_and_adaptive_shares():
    su = cl.hardware.preset("superpod-h100", units=1, routing="adaptive")
    n_nodes, g = su.shape
    s = cl.algorithms.ring_all_gather(n_nodes * g)
    b = cl.cost.step_link_bytes(s, su, float(n_nodes * g), 0)  # one byte per chunk
    spine = su.info.levels.index("spine")
    up = (su.link_level == spine) & su.link_up
    # the 32 rail-changing hops (GPU 7 of node k -> GPU 0 of node k+1) leave leaf 7; adaptive
    # routing spreads each over leaf 7's 32 up cables (4 spines x 8), so every one of those
    # carries 32 x 1/32 = 1 byte, and the other leaves' up cables none
    loaded = b[up]
    assert np.isclose(loaded.sum(), 32) and np.isclose(loaded.max(), 1.0)
    assert np.count_nonzero(loaded) == 32
    # placed on 4 GPUs of node 0 a 4-rank ring crosses NVLink only: GPU -> NVSwitch -> GPU
    four = cl.cost.step_link_bytes(
        cl.algorithms.ring_all_gather(4), su, 4.0, 0, placement=[0, 1, 2, 3]
    )
    nvlink = su.info.levels.index("nvlink")
    assert four.sum() == 8.0 and (su.link_level[four > 0] == nvlink).all()


def test_one_steps_link_bytes_refuse_a_step_out_of_range():
    s = cl.algorithms.ring_all_gather(4)
    with pytest.raises(cl.CollectivesError, match="step must be an integer <= 2"):
        cl.cost.step_link_bytes(s, tp.ring(4, 1.0), 1.0, 3)
    with pytest.raises(cl.TopologyError, match="expected a collectives Topology"):
        cl.cost.step_link_bytes(s, "ring", 1.0, 0)
