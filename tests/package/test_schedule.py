"""Schedule construction: shapes, ranges, conflicts, and their error messages."""

import numpy as np
import pytest

import collectives as cl


def ag(steps, n=3, **kw):
    return cl.Schedule("all_gather", n, n, steps, **kw)


def test_steps_from_tuples_and_back():
    s = ag([[(0, 1, 0, 0), (1, 2, 1, 1, "copy")], [(2, 0, 2, 2, False)]])
    assert s.n_steps == 2 and s.n_transfers == 3
    assert s.to_lists() == [[(0, 1, 0, 0, False), (1, 2, 1, 1, False)], [(2, 0, 2, 2, False)]]
    assert list(s.step(1)) == [cl.Transfer(2, 0, 2, 2, False)]
    assert s.step(-1).src.tolist() == [2]


def test_arrays_are_read_only():
    s = cl.algorithms.ring_all_gather(4)
    with pytest.raises(ValueError, match="read-only"):  # numpy's "assignment destination is ..."
        s.src[0] = 3
    with pytest.raises(ValueError, match="read-only"):
        s.step(0).dst[0] = 1


def test_step_index_out_of_range():
    with pytest.raises(IndexError, match="step 5 out of range: the schedule has 2 steps"):
        cl.algorithms.ring_all_gather(3).step(5)


@pytest.mark.parametrize(
    "steps, message",
    [
        (
            [[(0, 3, 0, 0)]],
            r"step 0, transfer 0 \(copy rank 0 chunk 0 -> rank 3 chunk 0\): dst 3 is not a rank "
            r"\(0..2\)",
        ),
        ([[(0, 1, 0, 0)], [(-1, 1, 0, 0)]], r"step 1, transfer 0 .*: src -1 is not a rank"),
        ([[(0, 1, 7, 0)]], r"src_chunk 7 is not a chunk slot \(0..2\)"),
        (
            [[(0, 1, 0, 0, True)]],
            r"all_gather only moves data; a reduce transfer has no place in it",
        ),
        ([[(0, 1, 0, 0), (2, 1, 2, 0)]], r"step 0: rank 1 chunk 0 is written by 2 transfers"),
        ([[(0, 1, 0)]], r"step 0, transfer 0: expected 4 or 5 fields"),
        ([[(0, 1, 0, 0.5)]], r"dst_chunk must be an integer, got 0.5"),
        ([[(0, 1, 0, 0, "add")]], r"the fifth field must be 'copy' or 'reduce', got 'add'"),
        ([[5]], r"step 0, transfer 0: expected a tuple"),
        ([7], r"step 0, expected a list of transfers, got int"),
        ("abc", r"steps must be a list, got a string"),
    ],
)
def test_malformed_schedules_are_named_precisely(steps, message):
    with pytest.raises(cl.ScheduleError, match=message):
        ag(steps)


def test_copy_and_reduce_into_one_slot_clash_but_several_reduces_do_not():
    with pytest.raises(cl.ScheduleError, match="a slot takes one copy, or only reduces"):
        cl.Schedule("all_reduce", 3, 1, [[(0, 2, 0, 0), (1, 2, 0, 0, "reduce")]])
    s = cl.Schedule("all_reduce", 3, 1, [[(0, 2, 0, 0, "reduce"), (1, 2, 0, 0, "reduce")]])
    assert s.n_transfers == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(collective="all_gather", n_ranks=3, n_chunks=4), "n_chunks divisible by 3"),
        (dict(collective="allgather", n_ranks=3, n_chunks=3), "unknown collective 'allgather'"),
        (
            dict(collective="all_gather", n_ranks=0, n_chunks=3),
            "n_ranks must be an integer >= 1, got 0",
        ),
        (dict(collective="all_gather", n_ranks=3, n_chunks=3.0), "n_chunks must be an integer"),
        (dict(collective="broadcast", n_ranks=3, n_chunks=1), "broadcast needs a root rank"),
        (
            dict(collective="reduce", n_ranks=3, n_chunks=1, root=3),
            r"root 3 is not a rank \(0..2\)",
        ),
        (
            dict(collective="all_reduce", n_ranks=3, n_chunks=1, n_scratch=-1),
            "n_scratch must be an integer >= 0",
        ),
    ],
)
def test_bad_schedule_parameters(kwargs, message):
    with pytest.raises(cl.ScheduleError, match=message):
        cl.Schedule(steps=[], **kwargs)


def test_dashes_in_collective_names_are_accepted():
    assert cl.Schedule("all-gather", 2, 2, []).collective == "all_gather"


def test_from_arrays_checks_order():
    with pytest.raises(cl.ScheduleError, match="sorted by step"):
        cl.Schedule.from_arrays("all_gather", 2, 2, [1, 0], [0, 1], [1, 0], [0, 1], [0, 1])


def test_compose_builds_an_all_reduce_and_refuses_mismatches():
    n = 5
    s = cl.compose(cl.algorithms.ring_reduce_scatter(n), cl.algorithms.ring_all_gather(n))
    assert s.collective == "all_reduce" and s.n_steps == 2 * (n - 1)
    cl.verify(s)
    with pytest.raises(cl.ScheduleError, match="over 4 and 5 ranks"):
        cl.compose(cl.algorithms.ring_reduce_scatter(4), cl.algorithms.ring_all_gather(5))
    with pytest.raises(cl.ScheduleError, match="with 5 and 10 chunks"):
        cl.compose(
            cl.algorithms.ring_reduce_scatter(5), cl.algorithms.bidirectional_ring_all_gather(5)
        )
    with pytest.raises(cl.ScheduleError, match="not a known collective"):
        cl.compose(cl.algorithms.ring_all_gather(5), cl.algorithms.ring_all_gather(5))


def test_compose_tree_reduce_then_broadcast_is_an_all_reduce():
    s = cl.compose(
        cl.algorithms.binomial_tree_reduce(6, root=2),
        cl.algorithms.binomial_tree_broadcast(6, root=2),
    )
    assert s.collective == "all_reduce"
    cl.verify(s)
    with pytest.raises(cl.ScheduleError, match="not a known collective"):
        cl.compose(
            cl.algorithms.binomial_tree_reduce(6, root=2),
            cl.algorithms.binomial_tree_broadcast(6, root=1),
        )


def test_transfer_fields_accept_numpy_integers():
    s = ag([[(np.int64(0), np.int32(1), np.int16(0), np.uint8(0))]])
    assert s.src.tolist() == [0]


def test_transfer_tuples_are_checked_like_plain_tuples():
    # a Transfer is a NamedTuple, which checks nothing: its fields used to be taken as they
    # were, so a float rank was truncated (0.7 -> rank 0) and the word "copy" made a reduce
    with pytest.raises(
        cl.ScheduleError,
        match=r"^step 0, transfer 0: src must be an integer, "
        r"got 0\.7$",
    ):
        ag([[cl.Transfer(0.7, 1, 0, 0)]])
    s = cl.Schedule(
        "all_reduce", 2, 1, [[cl.Transfer(0, 1, 0, 0, "copy")], [cl.Transfer(1, 0, 0, 0, "reduce")]]
    )
    assert s.reduce.tolist() == [False, True]
    # a Transfer of the right types goes through unchanged
    assert ag([[cl.Transfer(0, 1, 0, 0, False)]]).to_lists() == [[(0, 1, 0, 0, False)]]
