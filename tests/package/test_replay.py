"""collectives/replay.py: verify and simulate reject wrong schedules, naming the step, rank and
chunk."""

import numpy as np
import pytest

import collectives as cl


def ring_steps(n):
    return cl.algorithms.ring_all_gather(n).to_lists()


def test_a_missing_step_is_found_at_the_end():
    steps = ring_steps(4)[:-1]
    with pytest.raises(cl.ScheduleError) as e:
        cl.verify(cl.Schedule("all_gather", 4, 4, steps))
    err = e.value
    assert str(err) == (
        "after the last step, rank 0 chunk 1 holds nothing; all_gather needs "
        "chunk 1 of rank 1 there (never written)"
    )
    assert (err.step, err.rank, err.chunk) == (2, 0, 1)
    assert err.holds == "nothing" and err.expected == "chunk 1 of rank 1"


def test_reading_an_empty_slot_names_the_transfer():
    steps = ring_steps(4)
    steps[0][2] = (2, 3, 1, 1)  # rank 2 does not hold chunk 1 at step 0
    schedule = cl.Schedule("all_gather", 4, 4, steps)
    with pytest.raises(
        cl.ScheduleError,
        match=r"^step 0, transfer 2 \(copy rank 2 chunk 1 -> "
        r"rank 3 chunk 1\): rank 2 chunk 1 holds nothing yet$",
    ):
        cl.verify(schedule)
    with pytest.raises(cl.ScheduleError, match=r"rank 2 chunk 1 holds nothing yet"):
        cl.simulate(schedule, np.zeros((4, 1)))


def test_a_wrong_destination_slot_is_reported_with_its_content():
    steps = ring_steps(3)
    steps[1] = [(s, d, c, (c + 1) % 3 if s == 0 else c) for s, d, c, _, _ in steps[1]]
    with pytest.raises(cl.ScheduleError) as e:
        cl.verify(cl.Schedule("all_gather", 3, 3, steps))
    assert "holds chunk 2 of rank 2" in str(e.value)  # rank 1 slot 0 was overwritten
    assert e.value.rank == 1


def test_double_counting_is_caught_at_the_step():
    # 3 ranks, one chunk: rank 0 adds into 1, then 1 adds its sum back into 0.
    steps = [[(0, 1, 0, 0, "reduce")], [(1, 0, 0, 0, "reduce")]]
    with pytest.raises(cl.ScheduleError) as e:
        cl.verify(cl.Schedule("reduce", 3, 1, steps, root=0))
    assert str(e.value) == (
        "step 1, transfer 0 (reduce rank 1 chunk 0 -> rank 0 chunk 0): rank 0 chunk 0 holds "
        "chunk 0 of rank 0; adding chunk 0 summed over 2 of 3 ranks (0, 1) would count rank 0 "
        "twice"
    )
    assert (e.value.step, e.value.rank, e.value.chunk) == (1, 0, 0)


def test_two_reduces_into_one_slot_in_one_step_that_overlap_are_caught():
    steps = [[(1, 0, 0, 0, "reduce")], [(1, 2, 0, 0, "reduce"), (0, 2, 0, 0, "reduce")]]
    with pytest.raises(cl.ScheduleError, match="would count rank 1 twice"):
        cl.verify(cl.Schedule("reduce", 3, 1, steps, root=2))


def test_summing_different_chunks_is_refused():
    steps = [[(0, 1, 0, 1, "reduce")]]
    with pytest.raises(
        cl.ScheduleError,
        match="adds chunk 0 into a slot that holds chunk 1 of rank 1; only the same chunk",
    ):
        cl.verify(cl.Schedule("all_reduce", 2, 2, steps))


def test_reducing_into_an_empty_scratch_slot_is_refused():
    steps = [[(0, 1, 0, 1, "reduce")]]
    with pytest.raises(cl.ScheduleError, match="holds nothing to add into"):
        cl.verify(cl.Schedule("all_reduce", 2, 1, steps, n_scratch=1))


def test_partial_reduction_is_described_with_the_missing_ranks():
    s = cl.algorithms.ring_reduce_scatter(4)
    steps = s.to_lists()[:-1]
    with pytest.raises(cl.ScheduleError) as e:
        cl.verify(cl.Schedule("reduce_scatter", 4, 4, steps))
    # Without the last step, the sum of ranks 1..3 for chunk 0 is still on rank 3:
    # rank 0's slot 0 holds only its own contribution.
    assert (e.value.rank, e.value.chunk) == (0, 0)
    assert e.value.holds == "chunk 0 of rank 0"
    assert e.value.expected == "chunk 0 summed over all 4 ranks"
    # Chunk 1 travels 2 -> 3 -> 0 -> 1. Drop its first hop: rank 2's part never joins.
    steps = s.to_lists()
    steps[0] = [t for t in steps[0] if t[0] != 2]
    with pytest.raises(cl.ScheduleError) as e:
        cl.verify(cl.Schedule("reduce_scatter", 4, 4, steps))
    assert (e.value.rank, e.value.chunk) == (1, 1)
    assert e.value.holds == "chunk 1 summed over 3 of 4 ranks (0, 1, 3)"
    assert str(e.value).endswith("(last written at step 2)")


def test_scratch_slots_can_stage_data():
    # rank 0 -> rank 1 scratch slot 2, then into its final place at rank 1
    steps = [[(0, 1, 0, 2)], [(1, 0, 1, 1), (1, 1, 2, 0)]]
    s = cl.Schedule("all_gather", 2, 2, steps, n_scratch=1)
    cl.verify(s)
    np.testing.assert_array_equal(cl.simulate(s, [[5], [7]]), [[5, 7], [5, 7]])


def test_read_before_write_lets_ranks_swap_in_one_step():
    steps = [[(0, 1, 1, 0), (1, 0, 0, 1)]]  # an all-to-all of two ranks
    s = cl.Schedule("all_to_all", 2, 2, steps)
    cl.verify(s)
    np.testing.assert_array_equal(cl.simulate(s, [[1, 2], [3, 4]]), [[1, 3], [2, 4]])


def test_verify_refuses_non_schedules():
    with pytest.raises(
        cl.ScheduleError, match=r"schedule must be a collectives\.Schedule, got list"
    ):
        cl.verify([[(0, 1, 0, 0)]])


@pytest.mark.parametrize(
    "inputs, message",
    [
        (np.zeros((3, 4)), r"inputs must have shape \(n_ranks=4, length\), got shape \(3, 4\)"),
        (np.zeros(4), r"got shape \(4,\)"),
        ([[1, 2], [3]], "equal-length"),
        (np.array([["a"]] * 4), "inputs must be numeric"),
        (np.zeros((4, 3)), "input rows have 3 elements, which do not split into 4 equal chunks"),
    ],
)
def test_simulate_rejects_bad_inputs(inputs, message):
    with pytest.raises(cl.CollectivesError, match=message):
        cl.simulate(cl.algorithms.ring_all_reduce(4), inputs)


def test_verify_memory_guard_has_a_clear_message(monkeypatch):
    from collectives import replay as sim

    monkeypatch.setattr(sim, "VERIFY_MEMORY_LIMIT", 1000)
    with pytest.raises(
        cl.CollectivesError, match=r"verify would need .* GiB .* 64 ranks x 64 slots"
    ):
        cl.verify(cl.algorithms.ring_reduce_scatter(64))


def test_contribution_counts_are_signed_in_every_form():
    # 2 ranks, 1 chunk and 1 scratch slot: rank 0 reduces into rank 1, which copies back.
    # Before step 0 each rank's chunk holds its own contribution and the scratch slot none;
    # after the last step both chunks hold the two. The bitset form (a reduction) used to
    # count in uint64, where an empty slot's 0 - 1 wrapped round to 2**64 - 1.
    schedule = cl.Schedule(
        "all_reduce", 2, 1, [[(0, 1, 0, 0, "reduce")], [(1, 0, 0, 0)]], n_scratch=1
    )
    for states in (cl.trace(schedule), cl.trace(schedule, stop_at_error=False)):
        assert [s.counts().dtype for s in states] == [np.int64] * 3
        assert (states[0].counts() - 1).tolist() == [[0, -1], [0, -1]]
        assert states[-1].counts().tolist() == [[2, 0], [2, 0]]


def test_a_symbolic_state_without_contributions_says_so():
    # a label alone (no bits, owner or times) used to fail on indexing None
    state = cl.SymbolicState(np.array([[0]]))
    with pytest.raises(
        cl.CollectivesError, match="records no contributions; build it with bits, owner or times"
    ):
        state.contributors(0, 0)
