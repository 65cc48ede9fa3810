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
    # along its 16-chip ring: 15 steps of alpha + S/(32B)
    assert slices.v5e_axis_seconds((8, 16), 1, 2**20) == pytest.approx(
        15 * (A + 2**20 / (32 * B)), rel=1e-12)
    assert slices.v5e_axis_seconds((16, 16), 0, 1e8, "all_reduce") == pytest.approx(
        2 * 15 * (A + 1e8 / (32 * B)), rel=1e-12)


@pytest.mark.parametrize("n, nbytes, shape", [
    # 16 chips: (4, 4) chains: all-gather 3(a + S/(16B)) + 3(a + S/(4B)), doubled: 12a + 1.875 S/B;
    # (1, 16) ring: 2 x 15(a + S/(32B)) = 30a + 0.9375 S/B; (2, 8): 16a + 1.875 S/B.
    # They cross at S = 18a / (0.9375/B) = 864 kB
    (16, 1e4, (4, 4)), (16, 8e5, (4, 4)), (16, 9e5, (1, 16)), (16, 1e8, (1, 16)),
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


def _axis(m, nbytes):
    """One v5e axis's all-gather: a bidirectional ring on 16 chips, a chain otherwise."""
    return 0.0 if m == 1 else (m - 1) * (A + nbytes / (m * B * (2 if m == 16 else 1)))


@pytest.mark.parametrize("case, answer", [
    # many small gathers: the 2-chip chain has 1 step where the ring has 15
    ((2, 1e5, 1e4, 100), "data"),
    # one small gather, a small gradient: the gradient's 2 x 15 steps cost more on the ring
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


def test_a_question_without_a_clear_answer_is_a_bug_in_the_test():
    with pytest.raises(GradingError, match="no v5e slice has 24 chips"):
        slices.best_v5e_slice_shape(24, 1e6)
    # (1, 16) and (16, 1) never both appear; (2, 2) alone for 4 chips beats (1, 4): no tie
    assert slices.best_v5e_slice_shape(4, 1e6) == (2, 2)
