"""collectives.grading.tasks.topology_reasoning (earlier collectives.grading.slices): the
references of the notebook on TPU slices (exercises/source/topology_reasoning), against values
derived by hand.
"""

import re

import pytest

from collectives import GradingError
from collectives.grading.tasks import topology_reasoning as slices

# ---- the references of the notebook on TPU slices ----------------------------------------
A, B = 1e-6, 4.5e10  # v5e: seconds per step, bytes/s per link direction


def test_slice_references_against_hand_derived_values():
    assert slices.slice_hops((16, 16), (True, True), (0, 0), (15, 15)) == 2  # 1 + 1
    assert slices.slice_hops((16, 16), (False, False), (0, 0), (15, 15)) == 30  # 15 + 15
    assert slices.slice_hops((16, 20, 28), (True,) * 3, (3, 19, 1), (12, 2, 27)) == 7 + 3 + 2
    assert slices.slice_diameter((16, 20, 28), (True, False, True)) == 8 + 19 + 14
    # (16, 12), wraparound on the 16 only: across it 12 lines x 2 links, across the 12 16 x 1
    assert slices.slice_bisection_bandwidth((16, 12), (True, False), 1e9) == 16e9
    # along the 8-chip chain of an 8 x 16 v5e slice: 7 steps of alpha + S/(8B)
    assert slices.v5e_axis_seconds((8, 16), 0, 2**20) == pytest.approx(
        7 * (A + 2**20 / (8 * B)), rel=1e-12
    )
    # along its 16-chip ring (latency-optimal): 16/2 = 8 steps, each link direction carrying
    # 7 whole shards of S/16 and one half shard: 8 alpha + 15 S/(32B)
    assert slices.v5e_axis_seconds((8, 16), 1, 2**20) == pytest.approx(
        8 * A + 15 * 2**20 / (32 * B), rel=1e-12
    )
    assert slices.v5e_axis_seconds((16, 16), 0, 1e8, "all_reduce") == pytest.approx(
        2 * (8 * A + 15 * 1e8 / (32 * B)), rel=1e-12
    )


@pytest.mark.parametrize(
    "shape, axis, nbytes, bound",
    [
        # the chain of 8: diameter 7 hops, and the end chip receives 7/8 of S through one link
        ((8, 16), 0, 2**20, 7 * A + 7 / 8 * 2**20 / B),
        # the ring of 16: diameter 8 hops, 15/16 of S through two links
        ((8, 16), 1, 2**20, 8 * A + 15 / 16 * 2**20 / (2 * B)),
        ((2, 2), 1, 1e9, A + 1e9 / (2 * B)),  # a chain of 2: one hop, half of S
        ((1, 16), 0, 1e6, 0.0),  # an axis of one chip: nothing to do
    ],
)
def test_the_lower_bound_by_hand_and_the_schedules_that_reach_it(shape, axis, nbytes, bound):
    assert slices.v5e_axis_lower_bound(shape, axis, nbytes) == pytest.approx(bound, rel=1e-12)
    assert slices.v5e_axis_seconds(shape, axis, nbytes) == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize(
    "n, nbytes, shape",
    [
        # 16 chips: (4, 4) chains: all-gather 3(a + S/(16B)) + 3(a + S/(4B)), doubled:
        # 12a + 1.875 S/B; (1, 16) latency-optimal ring: 2 (8a + 15 S/(32B)) = 16a + 0.9375 S/B;
        # (2, 8): 16a + 1.875 S/B.
        # (4, 4) and (1, 16) cross at S = 4a / (0.9375/B) = 192 kB
        (16, 1e4, (4, 4)),
        (16, 1.5e5, (4, 4)),
        (16, 2.5e5, (1, 16)),
        (16, 1e8, (1, 16)),
        (1, 1e6, (1, 1)),
        (8, 1e6, (2, 4)),
        (256, 1e6, (16, 16)),
    ],
)
def test_best_v5e_slice_shape(n, nbytes, shape):
    assert slices.best_v5e_slice_shape(n, nbytes) == shape
    closed = {
        s: min(2 * (_axis(s[a], nbytes / s[b]) + _axis(s[b], nbytes)) for a, b in ((0, 1), (1, 0)))
        for s in slices.V5E_SHAPES
        if s[0] * s[1] == n
    }
    assert min(closed, key=closed.get) == shape
    for s, seconds in closed.items():
        assert slices.v5e_all_reduce_seconds(s, nbytes) == pytest.approx(seconds, rel=1e-12)
        assert slices.v5e_slice_all_reduce_seconds(s, n, nbytes) == pytest.approx(
            seconds, rel=1e-12
        )


def _axis(m, nbytes):
    """One v5e axis's all-gather: the latency-optimal bidirectional ring on 16 chips
    (8 steps, 15/32 of S per link direction), a chain otherwise."""
    if m == 1:
        return 0.0
    if m == 16:
        return 8 * A + 15 * nbytes / (32 * B)
    return (m - 1) * (A + nbytes / (m * B))


@pytest.mark.parametrize("shape", [(3, 3), (16, 1), (2, 4), [4, 8, 1]])
def test_a_shape_that_is_not_a_candidate_has_no_cost(shape):
    with pytest.raises(GradingError, match="is not a v5e slice of 16 chips"):
        slices.v5e_slice_all_reduce_seconds(shape, 16, 1e6)


@pytest.mark.parametrize(
    "case, answer",
    [
        # many small gathers: the 2-chip chain has 1 step where the ring has 8
        ((2, 1e5, 1e4, 100), "data"),
        # one small gather, a small gradient: the gradient's 2 x 8 steps cost more on the ring
        ((2, 1e5, 1e4, 1), "model"),
        ((8, 1e9, 1e8, 4), "data"),
        ((4, 1e7, 1e8, 4), "model"),
    ],
)
def test_wrapped_axis_for(case, answer):
    k, grad, gather, n = case
    assert slices.wrapped_axis_for(*case) == answer
    data = 2 * _axis(16, grad) + n * _axis(k, gather)
    model = 2 * _axis(k, grad) + n * _axis(16, gather)
    assert ("data" if data < model else "model") == answer
    assert slices.wrapped_axis_step_seconds("data", *case) == pytest.approx(data, rel=1e-12)
    assert slices.wrapped_axis_step_seconds("model", *case) == pytest.approx(model, rel=1e-12)
    with pytest.raises(GradingError, match="'neither' is not one of the choices"):
        slices.wrapped_axis_step_seconds("neither", *case)


def test_a_question_without_a_clear_answer_is_a_bug_in_the_test():
    with pytest.raises(GradingError, match="no v5e slice has 24 chips"):
        slices.best_v5e_slice_shape(24, 1e6)
    # (1, 16) and (16, 1) never both appear; (2, 2) alone for 4 chips beats (1, 4)
    assert slices.best_v5e_slice_shape(4, 1e6) == (2, 2)


# ---- Task 3: an all-gather over a whole slice within a budget --------------------------------
B5P = 9e10  # v5p: bytes/s per link direction (alpha is 1e-6 too)


@pytest.mark.parametrize(
    "plan, chip, shape, nbytes, seconds",
    [
        # (8, 16) v5e, the chain of 8 first: it gathers blocks of S/16 (7 steps of S/(16*8) each),
        # then the ring of 16 gathers S (8 steps, 15 S/(32B)): 15 alpha + (7/128 + 60/128) S/B
        ((0, 1), "tpu-v5e", (8, 16), 1e6, 15 * A + 67 / 128 * 1e6 / B),
        # the ring first on blocks of S/8 (15 S/(256B)), then the chain on S (7 S/(8B))
        ((1, 0), "tpu-v5e", (8, 16), 1e6, 15 * A + 239 / 256 * 1e6 / B),
        # an axis of one chip may be named: it moves nothing
        ((0, 1), "tpu-v5e", (1, 16), 1e6, 8 * A + 15 / 32 * 1e6 / B),
        # (2, 4, 4) v5p is not made of whole cubes: three chains, 1 + 3 + 3 steps, and the
        # busiest links carry (1 - 1/32) S in all, whatever the order
        ((2, 0, 1), "tpu-v5p", (2, 4, 4), 1e6, 7 * A + 31 / 32 * 1e6 / B5P),
        # (4, 4, 8) v5p wraps on every axis: 2 + 2 + 4 steps, (1 - 1/128) S over two links
        ((0, 1, 2), "tpu-v5p", (4, 4, 8), 1e6, 8 * A + 127 / 128 * 1e6 / (2 * B5P)),
        # all axes at once on the v5e pod: both halves of a shard cross the two axes in opposite
        # orders at the same time on disjoint links: 16 steps, half of the bytes of one order's
        ("concurrent", "tpu-v5e", (16, 16), 1e6, 16 * A + 15 / 32 * (1 / 32 + 1 / 2) * 1e6 / B),
    ],
)
def test_a_plans_time_by_hand(plan, chip, shape, nbytes, seconds):
    assert slices.slice_all_gather_seconds(plan, chip, shape, nbytes) == pytest.approx(
        seconds, rel=1e-12
    )


def test_the_reference_plan_gathers_the_most_within_the_budget():
    # 20 us on (8, 16): 15 us of latency either way; 5 us at 67/(128 B) s per byte
    order, nbytes = slices.largest_all_gather_within("tpu-v5e", (8, 16), 2e-5)
    assert order == (0, 1) and nbytes == pytest.approx(5e-6 * 128 * B / 67, rel=1e-12)
    assert slices.largest_all_gather_within("tpu-v5e", (16, 8), 2e-5)[0] == (1, 0)
    # every order ties on a slice whose axes are all chains: the first one is kept
    order, nbytes = slices.largest_all_gather_within("tpu-v5p", (2, 4, 4), 1e-4)
    assert order == (0, 1, 2) and nbytes == pytest.approx(93e-6 * 32 / 31 * B5P, rel=1e-12)
    with pytest.raises(GradingError, match="no all-gather on tpu-v5e"):
        slices.largest_all_gather_within("tpu-v5e", (16, 16), 1e-5)  # 16 us of latency
    with pytest.raises(GradingError, match="one chip"):
        slices.largest_all_gather_within("tpu-v5e", (1, 1), 1e-3)


def test_a_plan_passes_on_what_it_does_not_on_the_references_choice():
    best = 5e-6 * 128 * B / 67
    check = slices.check_all_gather_plan
    assert check(((0, 1), best), "p", "tpu-v5e", (8, 16), 2e-5) == 1.0
    assert check([[0, 1], best * (1 - 1e-7)], "p", "tpu-v5e", (8, 16), 2e-5) == 1.0
    # rounded down to a whole byte (1 in 429851 is 2.3e-6, above the relative 1e-6): passes
    assert check(((0, 1), float(int(best))), "p", "tpu-v5e", (8, 16), 2e-5) == 1.0
    with pytest.raises(AssertionError, match="gathers 429851 bytes"):
        check(((0, 1), best - 2.0), "p", "tpu-v5e", (8, 16), 2e-5)
    # all axes at once on the pod gathers 1 / (1/32 + 1/2) * ... more than either order: passes
    one_order = slices.largest_all_gather_within("tpu-v5e", (16, 16), 1e-3)[1]
    both = (1e-3 - 16 * A) / (15 / 32 * (1 / 32 + 1 / 2) / B)
    assert both > 1.9 * one_order
    assert check(("concurrent", both), "p", "tpu-v5e", (16, 16), 1e-3) == 1.0
    with pytest.raises(AssertionError, match=r"more than the budget of 2e-05 s"):
        check(((0, 1), best * 1.01), "p", "tpu-v5e", (8, 16), 2e-5)
    # the other order gathers 134/239 of it (per byte 239/256 against 67/128): 1.784 times less
    with pytest.raises(AssertionError, match=r"the plan \(0, 1\) gathers 429851 bytes, 1\.784"):
        check(((1, 0), 5e-6 * 256 * B / 239), "p", "tpu-v5e", (8, 16), 2e-5)
    with pytest.raises(AssertionError, match="where yours gathers none"):
        check(((0, 1), 0.0), "p", "tpu-v5e", (8, 16), 2e-5)
    with pytest.raises(AssertionError, match="at least 0 bytes"):
        check(((0, 1), -1.0), "p", "tpu-v5e", (8, 16), 2e-5)


@pytest.mark.parametrize(
    "plan, message",
    [
        (
            (1,),
            r"must name each axis of the \(8, 16\) slice with more than one chip, \(0, 1\), once",
        ),
        ((0, 1, 1), "once"),
        ((0, 2), "once"),
        ("diagonal", "'diagonal' is not an order"),
        ((0.5, 1), "not an order of the axes"),
        (None, "not an order of the axes"),
    ],
)
def test_a_plan_that_is_not_one_is_named(plan, message):
    with pytest.raises(AssertionError, match=message):
        slices.check_all_gather_plan((plan, 1e3), "p", "tpu-v5e", (8, 16), 1e-3)


@pytest.mark.parametrize("answer", [1e6, "concurrent", ((0, 1),), ((0, 1), 1e3, 0)])
def test_an_answer_that_is_not_a_pair_is_named(answer):
    with pytest.raises(GradingError, match=r"should be a pair \(plan, nbytes\)"):
        slices.check_all_gather_plan(answer, "p", "tpu-v5e", (8, 16), 1e-3)


@pytest.mark.parametrize(
    "label",
    [
        "test_slice_hops",
        "test_slice_diameter",
        "test_slice_bisection_bandwidth",
        "test_slice_all_gather_plan",
        "test_best_v5e_slice_shape",
        "test_wrapped_axis_for",
    ],
)
def test_the_drawn_cases_follow_the_seed_and_are_plain(label):
    cases = slices.drawn_cases(label, 8, course_seed="cohort-a")
    assert cases == slices.drawn_cases(label, 8, course_seed="cohort-a")
    assert cases != slices.drawn_cases(label, 8, course_seed="cohort-b")
    assert len(cases) == 8 and len(set(map(repr, cases))) == 8

    def plain(value):
        if isinstance(value, tuple):
            return all(plain(v) for v in value)
        return type(value) in (int, float, bool, str)

    assert all(plain(case) for case in cases)


def test_every_drawn_plan_leaves_room_for_bytes():
    for chip, shape, budget in slices.drawn_cases(
        "test_slice_all_gather_plan", 40, course_seed="cohort-a"
    ):
        assert chip in slices.PLAN_CHIPS and len(shape) == (2 if chip == "tpu-v5e" else 3)
        assert 3e-5 <= budget <= 5e-3
        assert slices.largest_all_gather_within(chip, shape, budget)[1] > 0


def test_no_cases_drawn_for_a_cell_that_has_none():
    with pytest.raises(GradingError, match="no cases are drawn"):
        slices.drawn_cases("test_nothing", 3)


def _chain_first_bytes(budget, k):
    """Bytes a (k, 16) v5e slice gathers within ``budget``, the chain of k first (blocks of
    S/16), then the ring of 16: (k - 1 + 8) alpha + ((k - 1)/(16 k) + 15/32) S/B."""
    return (budget - (k - 1 + 8) * A) / (((k - 1) / (16 * k) + 15 / 32) / B)


@pytest.mark.parametrize(
    "answer, case, message",
    [
        # the order fixed at (0, 1): on (16, 8) the ring goes first and gathers less
        (((0, 1), 5e-6 * 256 * B / 239), ("tpu-v5e", (16, 8), 2e-5), "the plan (1, 0) gathers"),
        # v5p: the sides of 4 taken to wrap on (2, 4, 4), which has no whole cube: 1 + 2 + 2
        # steps, and per byte the chain of 2 on S/16 (1/32), the rings of 4 on S/4 and S
        # (3/8 of each): 1/2 S/B, where the three chains take 31/32 S/B
        (
            ((0, 1, 2), (1e-4 - 5 * A) / (1 / 2 / B5P)),
            ("tpu-v5p", (2, 4, 4), 1e-4),
            "more than the budget",
        ),
        # every axis gathering blocks of S/n (the blocks taken not to grow): far too many bytes
        (
            ((0, 1), (2e-5 - 15 * A) / ((7 / 8 + 15 / 32) / 128 / B)),
            ("tpu-v5e", (8, 16), 2e-5),
            "more than the budget",
        ),
        # all axes at once where the axes do not line up: the parts share the ring's links
        (
            ("concurrent", 2 * _chain_first_bytes(1e-3, 8)),
            ("tpu-v5e", (8, 16), 1e-3),
            "more than the budget",
        ),
    ],
)
def test_plausible_wrong_plans_fail(answer, case, message):
    with pytest.raises(AssertionError, match=re.escape(message)):
        slices.check_all_gather_plan(answer, "p", *case)


def test_the_chain_first_closed_form_is_the_reference_on_every_mixed_v5e_slice():
    for k in (2, 4, 8):
        order, nbytes = slices.largest_all_gather_within("tpu-v5e", (k, 16), 1e-3)
        assert order == (0, 1) and nbytes == pytest.approx(_chain_first_bytes(1e-3, k), rel=1e-12)
