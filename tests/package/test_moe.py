"""Variable all-to-all (MoE dispatch and combine)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import moe


def check_dispatch(schedule, counts, inputs, outputs):
    """Rank r's part s starts with the first counts[s, r] tokens of rank s's part r."""
    n = len(counts)
    k = schedule.n_chunks // n
    for r in range(n):
        for s in range(n):
            c = counts[s, r]
            np.testing.assert_array_equal(
                outputs[r, s * k : s * k + c], inputs[s, r * k : r * k + c]
            )


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9), st.integers(0, 6), st.integers(0, 2**31), st.booleans())
def test_dispatch_and_combine_move_every_token(n, most, seed, pairwise):
    counts = np.random.default_rng(seed).integers(0, most + 1, size=(n, n))
    build = moe.pairwise_all_to_all_v if pairwise else moe.direct_all_to_all_v
    s = build(counts)
    cl.verify(s)
    x = np.random.default_rng(seed + 1).integers(0, 10**6, size=(n, s.n_chunks))
    check_dispatch(s, counts, x, cl.simulate(s, x))
    back = moe.combine(s)
    assert back.collective == "all_to_all_v"
    np.testing.assert_array_equal(back.counts, counts.T)
    cl.verify(back)


def test_a_wrong_dispatch_is_caught():
    counts = np.array([[0, 2], [1, 0]])
    s = cl.Schedule("all_to_all_v", 2, 4, [[(0, 1, 2, 0), (1, 0, 0, 2)]], counts=counts)
    with pytest.raises(
        cl.ScheduleError,
        match=r"after the last step, rank 1 chunk 1 holds chunk 1 of rank 1; all_to_all_v needs "
        r"chunk 3 of rank 0 there \(never written\)",
    ):
        cl.verify(s)  # the second of rank 0's two tokens for rank 1 never left


def test_hot_expert_rank_sets_the_time():
    # rank 0 receives 6 tokens from each of 3 others; everything else sends 1
    counts = np.ones((4, 4), dtype=int)
    counts[1:, 0] = 6
    s = moe.direct_all_to_all_v(counts)
    t = cl.time(s, cl.topology.switch(4, 1.0), nbytes=4 * 6)  # 1 byte per token slot
    assert t.seconds == pytest.approx(18.0)  # rank 0's down-link
    assert t.step_bottleneck_link[0] == 4 + 0


def test_capacity_drops_tokens():
    counts = np.array([[0, 9], [3, 0]])
    s = moe.direct_all_to_all_v(counts, capacity=4)
    np.testing.assert_array_equal(s.counts, [[0, 4], [3, 0]])
    cl.verify(s)
    assert moe.capacity_for(counts, capacity_factor=1.25) == 4  # ceil(1.25 x 3)


def test_dispatch_counts_are_reproducible_and_add_up():
    a = moe.dispatch_counts(8, 100, 16, 2, skew=1.0, seed=3)
    b = moe.dispatch_counts(8, 100, 16, 2, skew=1.0, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.sum(axis=1).tolist() == [200] * 8  # tokens x top_k
    uniform = moe.dispatch_counts(8, 4000, 16, 2, skew=0.0, seed=3)
    assert uniform.sum(axis=0).max() / uniform.sum(axis=0).mean() < 1.05
    assert a.sum(axis=0)[0] > 2 * a.sum(axis=0).mean()  # Zipf: expert 0 is hot


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: moe.dispatch_counts(8, 10, 12, 2), "must be a multiple of n_ranks"),
        (lambda: moe.dispatch_counts(4, 10, 4, 5), "top_k \\(5\\) cannot exceed n_experts \\(4\\)"),
        (lambda: moe.dispatch_counts(4, 10, 4, 1, skew=-1), "skew must be finite and >= 0"),
        (lambda: moe.direct_all_to_all_v([[1, 2, 3]]), "square integer matrix"),
        (lambda: cl.Schedule("all_to_all_v", 2, 4, []), "all_to_all_v needs counts"),
        (
            lambda: cl.Schedule("all_to_all_v", 2, 4, [], counts=[[0, 3], [0, 0]]),
            r"counts must lie in 0..2",
        ),
        (
            lambda: cl.Schedule("all_to_all", 2, 4, [], counts=[[0, 1], [0, 0]]),
            "only for all_to_all_v",
        ),
    ],
)
def test_bad_moe_input(call, message):
    with pytest.raises(cl.CollectivesError, match=message):
        call()
