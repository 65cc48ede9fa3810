"""collectives/algorithms/ring.py: the ring moves the chunk the textbook says at each step."""

import collectives as cl


def test_ring_all_gather_moves_the_chunk_it_should_at_each_step():
    # Derived by hand: at step s rank r forwards chunk (r - s) mod n to rank r + 1.
    s = cl.algorithms.ring_all_gather(4)
    assert s.to_lists()[1] == [
        (0, 1, 3, 3, False),
        (1, 2, 0, 0, False),
        (2, 3, 1, 1, False),
        (3, 0, 2, 2, False),
    ]


# ---- the latency-optimal bidirectional ring ---------------------------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ground_truth import expected_outputs  # noqa: E402

A = cl.algorithms


def test_latency_optimal_all_gather_sends_whole_shards_both_ways_then_splits_the_antipode():
    # Derived by hand for n = 4 (shard q = slots 2q, 2q + 1). Step 0: rank r sends both halves
    # of its own shard to r + 1 and to r - 1. Step 1: the shard two away (antipodal) is split:
    # rank r forwards the first half of shard r - 1 to r + 1 and the second half of shard
    # r + 1 to r - 1, so rank r + 1 receives both halves of shard r - 1.
    s = A.latency_optimal_ring_all_gather(4)
    assert s.n_steps == 2 and s.n_chunks == 8
    step0, step1 = s.to_lists()
    assert step0[:4] == [
        (0, 1, 0, 0, False),
        (0, 1, 1, 1, False),
        (0, 3, 0, 0, False),
        (0, 3, 1, 1, False),
    ]
    assert len(step0) == 16
    assert sorted(step1) == sorted(
        [
            (0, 1, 6, 6, False),
            (1, 2, 0, 0, False),
            (2, 3, 2, 2, False),
            (3, 0, 4, 4, False),
            (0, 3, 3, 3, False),
            (1, 0, 5, 5, False),
            (2, 1, 7, 7, False),
            (3, 2, 1, 1, False),
        ]
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40))
def test_latency_optimal_ring_computes_its_collectives_in_floor_n_over_2_steps(n):
    x = np.random.default_rng(n).integers(0, 1000, size=(n, 2 * n))
    for build, steps in (
        (A.latency_optimal_ring_all_gather, n // 2),
        (A.latency_optimal_ring_reduce_scatter, n // 2),
        (A.latency_optimal_ring_all_reduce, 2 * (n // 2)),
    ):
        s = build(n)
        cl.verify(s)
        assert s.n_steps == steps, (build.__name__, n)
        rows = x[:, :2] if s.collective == "all_gather" else x
        np.testing.assert_array_equal(cl.simulate(s, rows), expected_outputs(s.collective, rows))


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 33), st.sampled_from([0.0, 1e3, 2**20]))
def test_latency_optimal_ring_moves_the_split_rings_bytes_per_link_direction(n, nbytes):
    # both bidirectional forms move (n-1)/(2n) of the buffer over every link direction; the
    # latency-optimal one in floor(n/2) steps instead of n - 1
    topo = cl.topology.ring(n, 45e9, 1e-6)
    fast = cl.time(A.latency_optimal_ring_all_gather(n), topo, nbytes)
    split = cl.time(A.bidirectional_ring_all_gather(n), topo, nbytes)
    np.testing.assert_allclose(fast.link_bytes, (n - 1) / (2 * n) * nbytes)
    np.testing.assert_allclose(split.link_bytes, fast.link_bytes)
    assert math.isclose(split.seconds - fast.seconds, (n - 1 - n // 2) * 1e-6, rel_tol=1e-9)


def test_latency_optimal_ring_time_by_hand():
    # 8 ranks, 8 MB, 45e9 B/s, 1 us: 3 steps of a whole shard (1 MB) each way, then the
    # antipodal half-shard (0.5 MB): 4 us + 3.5 MB / 45e9 = 4 us + 77.78 us = 81.78 us,
    # against the split ring's 7 x (1 us + 0.5 MB / 45e9) = 7 us + 77.78 us
    topo = cl.topology.ring(8, 45e9, 1e-6)
    t = cl.time(A.latency_optimal_ring_all_gather(8), topo, 8e6)
    assert math.isclose(t.seconds, 4e-6 + 3.5e6 / 45e9, rel_tol=1e-12)
    np.testing.assert_allclose(t.step_bottleneck_bytes, [1e6, 1e6, 1e6, 0.5e6])
    split = cl.time(A.bidirectional_ring_all_gather(8), topo, 8e6)
    assert math.isclose(split.seconds, 7e-6 + 3.5e6 / 45e9, rel_tol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_latency_optimal_ring_runs_in_every_group_of_a_mesh(n):
    mesh = cl.Mesh({"dp": 3, "tp": n})
    s = mesh.collective(A.latency_optimal_ring_all_reduce(n), "tp")
    cl.verify(s)
    x = np.random.default_rng(0).integers(0, 100, size=(3 * n, 2 * n))
    out = cl.simulate(s, x)
    for group in mesh.groups("tp"):
        np.testing.assert_array_equal(out[group], np.broadcast_to(x[group].sum(axis=0), (n, 2 * n)))


def test_a_latency_optimal_ring_that_sends_the_antipode_whole_both_ways_is_rejected():
    # n = 4: at step 1 rank 0 would receive the second half of shard 2 twice (from 1 and 3)
    good = A.latency_optimal_ring_all_gather(4).to_lists()
    extra = [
        (r, (r + 1) % 4, 2 * ((r - 1) % 4) + 1, 2 * ((r - 1) % 4) + 1, False) for r in range(4)
    ]
    with pytest.raises(cl.ScheduleError, match="rank 0 chunk 5 is written by 2 transfers"):
        cl.Schedule("all_gather", 4, 8, [good[0], good[1] + extra])
    with pytest.raises(cl.ScheduleError):  # one step short: shards missing
        cl.verify(cl.Schedule("all_gather", 4, 8, [good[0]]))
