"""collectives.grading.tasks.topology_reasoning (earlier collectives.grading.slices): the
references of the notebook on TPU slices (exercises/source/topology_reasoning), against values
derived by hand.
"""


import pytest

from collectives import GradingError
from collectives.grading.tasks import topology_reasoning as slices

# ---- the references of the notebook on TPU slices ----------------------------------------
A, B = 1e-6, 4.5e10        # v5e: seconds per step, bytes/s per link direction


def test_slice_references_against_hand_derived_values():
    assert slices.slice_hops((16, 16), (True, True), (0, 0), (15, 15)) == 2     # 1 + 1
    assert slices.slice_hops((16, 16), (False, False), (0, 0), (15, 15)) == 30  # 15 + 15
    assert slices.slice_hops((16, 20, 28), (True,) * 3, (3, 19, 1), (12, 2, 27)) == 7 + 3 + 2
    assert slices.slice_diameter((16, 20, 28), (True, False, True)) == 8 + 19 + 14
    # (16, 12), wraparound on the 16 only: across it 12 lines x 2 links, across the 12 16 x 1
    assert slices.slice_bisection_bandwidth((16, 12), (True, False), 1e9) == 16e9
    # along the 8-chip chain of an 8 x 16 v5e slice: 7 steps of alpha + S/(8B)
    assert slices.v5e_axis_seconds((8, 16), 0, 2**20) == pytest.approx(
        7 * (A + 2**20 / (8 * B)), rel=1e-12)
    # along its 16-chip ring (latency-optimal): 16/2 = 8 steps, each link direction carrying
    # 7 whole shards of S/16 and one half shard: 8 alpha + 15 S/(32B)
    assert slices.v5e_axis_seconds((8, 16), 1, 2**20) == pytest.approx(
        8 * A + 15 * 2**20 / (32 * B), rel=1e-12)
    assert slices.v5e_axis_seconds((16, 16), 0, 1e8, "all_reduce") == pytest.approx(
        2 * (8 * A + 15 * 1e8 / (32 * B)), rel=1e-12)


@pytest.mark.parametrize("shape, axis, nbytes, bound", [
    # the chain of 8: diameter 7 hops, and the end chip receives 7/8 of S through one link
    ((8, 16), 0, 2**20, 7 * A + 7 / 8 * 2**20 / B),
    # the ring of 16: diameter 8 hops, 15/16 of S through two links
    ((8, 16), 1, 2**20, 8 * A + 15 / 16 * 2**20 / (2 * B)),
    ((2, 2), 1, 1e9, A + 1e9 / (2 * B)),           # a chain of 2: one hop, half of S
    ((1, 16), 0, 1e6, 0.0),                         # an axis of one chip: nothing to do
])
def test_the_lower_bound_by_hand_and_the_schedules_that_reach_it(shape, axis, nbytes, bound):
    assert slices.v5e_axis_lower_bound(shape, axis, nbytes) == pytest.approx(bound, rel=1e-12)
    assert slices.v5e_axis_seconds(shape, axis, nbytes) == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("n, nbytes, shape", [
    # 16 chips: (4, 4) chains: all-gather 3(a + S/(16B)) + 3(a + S/(4B)), doubled: 12a + 1.875 S/B;
    # (1, 16) latency-optimal ring: 2 (8a + 15 S/(32B)) = 16a + 0.9375 S/B; (2, 8): 16a + 1.875 S/B.
    # (4, 4) and (1, 16) cross at S = 4a / (0.9375/B) = 192 kB
    (16, 1e4, (4, 4)), (16, 1.5e5, (4, 4)), (16, 2.5e5, (1, 16)), (16, 1e8, (1, 16)),
    (1, 1e6, (1, 1)), (8, 1e6, (2, 4)), (256, 1e6, (16, 16)),
])
def test_best_v5e_slice_shape(n, nbytes, shape):
    assert slices.best_v5e_slice_shape(n, nbytes) == shape
    closed = {s: min(2 * (_axis(s[a], nbytes / s[b]) + _axis(s[b], nbytes))
                     for a, b in ((0, 1), (1, 0)))
              for s in slices.V5E_SHAPES if s[0] * s[1] == n}
    assert min(closed, key=closed.get) == shape
    for s, seconds in closed.items():
        assert slices.v5e_all_reduce_seconds(s, nbytes) == pytest.approx(seconds, rel=1e-12)
        assert slices.v5e_slice_all_reduce_seconds(s, n, nbytes) == pytest.approx(seconds,
                                                                                rel=1e-12)


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


@pytest.mark.parametrize("case, answer", [
    # many small gathers: the 2-chip chain has 1 step where the ring has 8
    ((2, 1e5, 1e4, 100), "data"),
    # one small gather, a small gradient: the gradient's 2 x 8 steps cost more on the ring
    ((2, 1e5, 1e4, 1), "model"),
    ((8, 1e9, 1e8, 4), "data"),
    ((4, 1e7, 1e8, 4), "model"),
])
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
