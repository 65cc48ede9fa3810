"""collectives.grading.diagnosis: check_schedule, step by step against a reference.

Messages are asserted exactly where a learner reads them first, by key phrases elsewhere.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
import collectives.analytic
import collectives.grading
from collectives import GradingError
from collectives.grading import check_schedule, describe_slot, recheck, step_states

from .helpers import RING, WHAT, failure, message, ring_steps


# ---- check_schedule: what passes -------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 17])
def test_the_ring_all_gather_passes(n):
    schedule = check_schedule(ring_steps(n), "all_gather", n, n_steps=n - 1, **RING)
    assert isinstance(schedule, cl.Schedule) and schedule.n_steps == n - 1
    check_schedule(cl.algorithms.ring_all_gather(n), "all_gather", n, n_steps=n - 1, **RING)


def test_every_spelling_of_the_same_schedule_passes():
    n = 5
    steps = ring_steps(n)
    spellings = [
        [[list(t) for t in step] for step in steps],  # transfers as lists
        tuple(tuple(step) for step in steps),  # tuples
        [set(step) for step in steps],  # a step is a set
        [list(reversed(step)) for step in steps],  # any order in a step
        [[tuple(np.int64(v) for v in t) for t in step] for step in steps],  # numpy ints
        [[(*t, "copy") for t in step] for step in steps],  # 5 fields
        [[(*t, False) for t in step] for step in steps],
        np.array(steps),  # an int array
        [np.array(step, dtype=np.int32) for step in steps],
        steps + [[]],  # an empty last step
    ]
    for answer in spellings:
        check_schedule(answer, "all_gather", n, n_steps=n - 1, **RING)


def test_a_slower_correct_ring_passes_unless_the_step_count_is_required():
    """Shards travel one at a time, one hop per step: correct, neighbour-only, n (n - 1)
    steps. It is not the reference's order, and passes; only n_steps rejects it."""
    n = 4
    steps = [[(c + k) % n, (c + k + 1) % n, c, c] for c in range(n) for k in range(n - 1)]
    steps = [[tuple(t)] for t in steps]
    check_schedule(steps, "all_gather", n, **RING)
    assert message(check_schedule, steps, "all_gather", n, n_steps=3, **RING) == (
        "your schedule computes the all-gather, but in 12 steps that move data; this "
        "exercise expects 3"
    )


def test_other_collectives_and_neighbour_rules():
    check_schedule(
        cl.algorithms.bidirectional_ring_all_gather(5),
        "all_gather",
        5,
        neighbours="bidirectional_ring",
        n_steps=4,
    )
    check_schedule(cl.algorithms.ring_all_reduce(5), "all_reduce", 5, neighbours="ring")
    check_schedule(
        cl.algorithms.ring_reduce_scatter(6),
        "reduce_scatter",
        6,
        neighbours=lambda r: [(r + 1) % 6],
    )
    check_schedule(cl.algorithms.direct_all_to_all(4), "all_to_all", 4)
    check_schedule(cl.algorithms.binomial_tree_reduce(5, root=2), "reduce", 5, root=2)
    check_schedule(cl.algorithms.binomial_tree_broadcast(5, root=3), "broadcast", 5, root=3)
    check_schedule(cl.algorithms.recursive_doubling_all_gather(8), "all_gather", 8)
    assert message(
        check_schedule,
        cl.algorithms.bidirectional_ring_all_gather(5),
        "all_gather",
        5,
        neighbours="ring",
    ).startswith(
        "your schedule: step 0 sends from rank 0 to rank 4 (transfer 1: (0, 4, 1, 1)), which is "
        "not its ring neighbour 1"
    )


@pytest.mark.parametrize(
    "answer, expected",
    [
        (
            None,
            "ring_all_gather_steps(4) is None, not a list of steps: nothing was returned (did "
            "you forget `return`?)",
        ),
        (
            3.0,
            "ring_all_gather_steps(4) is a float (3.0), not a list of steps (each step a list of "
            "(src, dst, src_chunk, dst_chunk) tuples)",
        ),
        (
            7,
            "ring_all_gather_steps(4) is an int (7), not a list of steps (each step a list of "
            "(src, dst, src_chunk, dst_chunk) tuples)",
        ),
        (
            "steps",
            "ring_all_gather_steps(4) is the string 'steps', not a list of steps (each step a "
            "list of (src, dst, src_chunk, dst_chunk) tuples)",
        ),
        (
            {0: []},
            "ring_all_gather_steps(4) is a dict of 1 item ({0: []}), not a list of steps "
            "(each step a list of (src, dst, src_chunk, dst_chunk) tuples)",
        ),
        (
            {(0, 1, 0, 0)},
            "ring_all_gather_steps(4) is a set; steps happen in order, so return a list of steps",
        ),
        (
            np.zeros((3, 4, 4)),
            "ring_all_gather_steps(4) is a numpy array of shape (3, 4, 4) and "
            "dtype float64; return a list of steps, each a list of (src, dst, "
            "src_chunk, dst_chunk) tuples of ints",
        ),
        (
            [(0, 1, 0, 0), (1, 2, 1, 1)],
            "ring_all_gather_steps(4): step 0 is (0, 1, 0, 0), which looks like one transfer, not "
            "a step; put the transfers of each step in a list of their own: "
            "[[(0, 1, 0, 0), (1, 2, 1, 1), ...], [...], ...]",
        ),
        (
            [[(0, 1, 0, 0)], 5],
            "ring_all_gather_steps(4): step 1 is an int (5); each step must be a "
            "list of (src, dst, src_chunk, dst_chunk) tuples",
        ),
        (
            [[(0, 1, 0, 0)], None],
            "ring_all_gather_steps(4): step 1 is None; each step must be a "
            "list of (src, dst, src_chunk, dst_chunk) tuples",
        ),
        (
            [[0, 1, 2]],
            "ring_all_gather_steps(4): step 0, transfer 0 is an int (0); a transfer "
            "is a tuple (src, dst, src_chunk, dst_chunk)",
        ),
        (
            [[(0, 1, 0)]],
            "ring_all_gather_steps(4): step 0, transfer 0 is (0, 1, 0), with 3 "
            "fields; a transfer is a tuple (src, dst, src_chunk, dst_chunk)",
        ),
        (
            [[(0, 1, 0.0, 0)]],
            "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0.0, 0): "
            "src_chunk is 0.0, a float; rank and chunk numbers must be ints (use "
            "// rather than /, or int(...))",
        ),
        (
            [[(0, 1.5, 0, 0)]],
            "ring_all_gather_steps(4): step 0, transfer 0 (0, 1.5, 0, 0): dst is "
            "1.5; expected an integer",
        ),
        (
            [[(True, 1, 0, 0)]],
            "ring_all_gather_steps(4): step 0, transfer 0 (True, 1, 0, 0): src "
            "is True, a bool; expected an integer",
        ),
        (
            [[(0, "1", 0, 0)]],
            "ring_all_gather_steps(4): step 0, transfer 0 (0, '1', 0, 0): dst is "
            "the string '1'; expected an integer",
        ),
        (
            [[(0, 1, 0, 0, "move")]],
            "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 0, "
            "'move'): the fifth field must be 'copy' or 'reduce' (or "
            "False/True), got 'move'",
        ),
    ],
)
def test_bad_forms_get_a_precise_grading_error(answer, expected):
    error = failure(check_schedule, answer, "all_gather", 4, **RING, **WHAT)
    assert isinstance(error, GradingError)
    assert str(error) == expected


def test_a_generator_is_named_as_such():
    text = message(check_schedule, (s for s in ring_steps(4)), "all_gather", 4, **WHAT)
    assert text.startswith("ring_all_gather_steps(4) is a generator (<generator object")
    assert text.endswith(
        "not a list of steps (each step a list of (src, dst, src_chunk, dst_chunk) tuples)"
    )


def test_a_schedule_of_the_wrong_shape_is_named():
    assert message(
        check_schedule, cl.algorithms.bidirectional_ring_all_gather(4), "all_gather", 4, n_chunks=4
    ) == ("your schedule is a Schedule with n_chunks=8; expected n_chunks=4")
    assert message(check_schedule, cl.algorithms.ring_all_gather(5), "all_gather", 4) == (
        "your schedule is a Schedule with n_ranks=5; expected n_ranks=4"
    )
    assert message(check_schedule, cl.algorithms.ring_reduce_scatter(4), "all_gather", 4) == (
        "your schedule is a Schedule with collective='reduce_scatter'; expected "
        "collective='all_gather'"
    )


# ---- check_schedule: scratch slots -----------------------------------------------------------
def staged_ring_steps(n):
    """A ring all-gather through scratch slots, by hand: in step 2s rank r sends shard r - s
    into scratch slot n + (r - s) of rank r + 1, which copies it into its data slot in step
    2s + 1 (a local transfer). Every transfer changes slot."""
    steps = []
    for s in range(n - 1):
        steps.append([(r, (r + 1) % n, (r - s) % n, n + (r - s) % n) for r in range(n)])
        steps.append([(r, r, n + (r - 1 - s) % n, (r - 1 - s) % n) for r in range(n)])
    return steps


def dual_steps(steps, n_chunks, swap=True):
    """Steps reversed, each transfer reversed and made a reduce, except the first write into a
    scratch slot (a copy); ``swap=False`` keeps each transfer's slots (the learners' slip)."""
    out, filled = [], set()
    for step in reversed(steps):
        new = []
        for src, dst, src_chunk, dst_chunk in step:
            written = src_chunk if swap else dst_chunk
            first = written >= n_chunks and (src, written) not in filled
            filled.add((src, written))
            pair = (dst_chunk, src_chunk) if swap else (src_chunk, dst_chunk)
            new.append((dst, src, *pair, "copy" if first else "reduce"))
        out.append(new)
    return out


@given(st.integers(2, 7))
@settings(max_examples=6, deadline=None)
def test_schedules_through_scratch_slots_pass_with_n_scratch(n):
    steps = staged_ring_steps(n)
    schedule = check_schedule(steps, "all_gather", n, n_scratch=n, n_steps=2 * (n - 1))
    assert (schedule.n_chunks, schedule.n_scratch) == (n, n)
    check_schedule(dual_steps(steps, n), "reduce_scatter", n, n_scratch=n)
    # a Schedule brings its own scratch slots
    check_schedule(cl.Schedule("all_gather", n, n, steps, n_scratch=n), "all_gather", n)


@given(st.integers(2, 7))
@settings(max_examples=6, deadline=None)
def test_a_dual_that_keeps_the_slots_fails_through_scratch(n):
    steps = staged_ring_steps(n)
    # in the dual's step 0 (the all-gather's last local copies reversed), rank 0 reduces its
    # scratch slot n + (0 - 1 - (n - 2)) % n = n + 1, still empty, into data slot 1
    text = message(
        check_schedule,
        dual_steps(steps, n, swap=False),
        "reduce_scatter",
        n,
        n_scratch=n,
        what="dual(staged ring)",
        reference=cl.transforms.dual(
            cl.Schedule("all_gather", n, n, steps, n_scratch=n, name="staged")
        ),
    )
    first, *hint = text.split("\n")
    assert first == (
        f"dual(staged ring) does not compute the reduce-scatter: step 0, transfer 0 "
        f"(reduce rank 0 chunk {n + 1} -> rank 0 chunk 1): rank 0 chunk {n + 1} "
        "holds nothing yet"
    )
    assert hint[0] == (
        f"Step by step against the reference dual(staged): after step 0, rank 0 "
        f"chunk {n + 1} holds nothing; in the reference it holds chunk 1 of rank 0."
    )


def test_scratch_slots_in_messages():
    steps = staged_ring_steps(4)
    # without n_scratch the scratch slots are out of range
    assert message(check_schedule, steps, "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 4): dst_chunk 4 is not a chunk; "
        "each rank's buffer has chunks 0..3 (did you forget `% n`?)"
    )
    assert message(check_schedule, [[(0, 1, 0, 9)]], "all_gather", 4, n_scratch=4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 9): dst_chunk 9 is not a chunk; "
        "each rank's buffer has chunks 0..7 (chunks 4..7 are scratch)"
    )
    # the first write into an empty scratch slot must be a copy
    assert "holds nothing to add into; copy the first contribution there" in message(
        check_schedule, [[(0, 1, 0, 4, "reduce")]], "reduce_scatter", 4, n_scratch=4
    )
    schedule = cl.Schedule("all_gather", 4, 4, steps, n_scratch=4)
    assert message(check_schedule, schedule, "all_gather", 4, n_scratch=2) == (
        "your schedule uses 4 scratch slots; this exercise has 2"
    )
    assert message(check_schedule, schedule, "all_gather", 4, n_scratch=0) == (
        "your schedule uses 4 scratch slots; this exercise has none"
    )
    for bad in (-1, 1.5, True):
        assert "n_scratch must be an integer >= 0 (a bug in the test)" in message(
            check_schedule, steps, "all_gather", 4, n_scratch=bad
        )


@pytest.mark.slow  # starts the isolated re-check's process
def test_recheck_passes_n_scratch():
    steps = staged_ring_steps(3)
    recheck(("check_schedule", (dual_steps(steps, 3), "reduce_scatter", 3), {"n_scratch": 3}))
    with pytest.raises(AssertionError, match="holds nothing yet"):
        recheck(
            (
                "check_schedule",
                (dual_steps(steps, 3, swap=False), "reduce_scatter", 3),
                {"n_scratch": 3},
            )
        )


# ---- check_schedule: wrong content -----------------------------------------------------------
def test_sending_past_the_last_rank_suggests_modulo():
    assert message(check_schedule, [[(3, 4, 3, 3)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (3, 4, 3, 3): dst 4 is not a rank; the "
        "ranks are 0..3 (did you forget `% n`?)"
    )
    assert message(check_schedule, [[(0, 1, -1, -1)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, -1, -1): src_chunk -1 is not a "
        "chunk; each rank's buffer has chunks 0..3 (did you forget `% n`?)"
    )
    assert message(check_schedule, [[(0, 1, 9, 9)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 9, 9): src_chunk 9 is not a "
        "chunk; each rank's buffer has chunks 0..3"
    )


def test_a_send_to_a_rank_that_is_not_the_ring_neighbour():
    steps = ring_steps(4)
    steps[0][2] = (2, 0, 2, 2)
    assert message(check_schedule, steps, "all_gather", 4, **RING, **WHAT) == (
        "ring_all_gather_steps(4): step 0 sends from rank 2 to rank 0 (transfer 2: "
        "(2, 0, 2, 2)), which is not its ring neighbour 3 (on a one-way ring rank r sends "
        "only to rank (r + 1) % n)"
    )


def test_a_wrong_schedule_is_compared_step_by_step_with_the_reference():
    steps = ring_steps(4)
    steps[1] = steps[0]  # step 1 repeats step 0
    first, *hint = message(check_schedule, steps, "all_gather", 4, n_steps=3, **RING, **WHAT).split(
        "\n"
    )
    # the first line is cl.verify's own message; the rest compares with the reference
    assert first.startswith("ring_all_gather_steps(4) does not compute the all-gather: ")
    assert "holds nothing" in first
    assert "\n".join(hint) == (
        "Step by step against the reference ring_all_gather: after step 1, rank 0 chunk 2 holds "
        "nothing; in the reference it holds chunk 2 of rank 2.\n"
        "  your step 1: [(0, 1, 0, 0), (1, 2, 1, 1), (2, 3, 2, 2), (3, 0, 3, 3)]"
    )
    # the reference's own step would give the answer away: it is never shown
    assert "(0, 1, 3, 3)" not in "\n".join(hint) and "reference step" not in "\n".join(hint)


def test_a_missing_step_is_named():
    first, *rest = message(
        check_schedule, ring_steps(4)[:2], "all_gather", 4, n_steps=3, **RING, **WHAT
    ).split("\n")
    assert first.startswith("ring_all_gather_steps(4) does not compute the all-gather: ")
    assert "rank 0 chunk 1 holds nothing" in first  # cl.verify's words
    assert "\n".join(rest) == (
        "It has 2 steps that move data; this exercise expects 3.\n"
        "Your 2 steps match the first 2 of the reference ring_all_gather, which goes on for 1 "
        "more step"
    )


def test_reading_an_empty_slot_is_named_at_its_step():
    text = message(check_schedule, [[(0, 1, 2, 2)]], "all_gather", 4, **WHAT)
    assert text.startswith("ring_all_gather_steps(4) does not compute the all-gather: step 0, ")
    assert "rank 0 chunk 2 holds nothing" in text


def test_one_step_too_many_is_named():
    n = 4
    steps = [[(r, (r + 1) % n, (r - s) % n, (r - s) % n) for r in range(n)] for s in range(n)]
    assert message(check_schedule, steps, "all_gather", n, n_steps=3, **RING, **WHAT) == (
        "ring_all_gather_steps(4) computes the all-gather, but in 4 steps that move data; this "
        "exercise expects 3. Step 3 changes nothing: every chunk it sends is already where it "
        "is sent"
    )


def test_two_sends_by_one_rank_in_one_step():
    steps = ring_steps(3)
    steps[1] = steps[1] + [(0, 1, 0, 0)]  # rank 1 has chunk 0 already
    assert message(check_schedule, steps, "all_gather", 3, n_steps=2, **RING) == (
        "your schedule: in step 1 rank 0 sends 2 chunks ((0, 1, 2, 2), (0, 1, 0, 0)); this "
        "exercise allows 1 per rank per step, so that each link carries one chunk per step as "
        "the cost model assumes"
    )


def test_two_copies_into_one_slot_and_reduces_in_an_all_gather():
    text = message(check_schedule, [[(0, 1, 0, 0), (2, 1, 2, 0)]], "all_gather", 4)
    assert text.startswith("your schedule: step 0: rank 1 chunk 0 is written by 2 transfers")
    assert message(check_schedule, [[(0, 1, 0, 0, "reduce")]], "all_gather", 4) == (
        "your schedule: step 0, transfer 0 (0, 1, 0, 0, 'reduce') is a reduce; all-gather only "
        "copies chunks"
    )


def test_a_reduce_that_counts_a_rank_twice():
    steps = cl.algorithms.ring_reduce_scatter(3).to_lists()
    steps[1].append((2, 0, 1, 1, True))  # rank 2 adds chunk 1 into rank 0 again
    text = message(check_schedule, steps, "reduce_scatter", 3, neighbours="ring")
    assert "does not compute the reduce-scatter" in text
    assert "twice" in text


def test_the_numeric_check_catches_what_a_broken_verify_misses(monkeypatch):
    monkeypatch.setattr("collectives.replay.verify", lambda schedule: None)
    assert message(check_schedule, [[(0, 1, 0, 0)]], "all_gather", 2, **WHAT).startswith(
        "ring_all_gather_steps(4): simulated on numbers, rank 0 ends with ["
    )


def test_bad_arguments_from_the_test_itself():
    assert "a bug in the test" in message(check_schedule, [], "all_gather", 0)
    assert "unknown neighbour rule 'torus'" in message(
        check_schedule, [], "all_gather", 1, neighbours="torus"
    )
    error = failure(
        check_schedule, [[(0, 0, 1, 1)]], "all_gather", 2, reference="no_such_algorithm"
    )
    assert isinstance(error, GradingError) and "unknown reference algorithm" in str(error)


# ---- step_states and describe_slot -----------------------------------------------------------
def test_step_states_replays_the_ring():
    states = step_states(cl.algorithms.ring_all_gather(3))
    assert len(states) == 3
    assert states[0] == (((0, (0,)), None, None), (None, (1, (1,)), None), (None, None, (2, (2,))))
    assert states[1][1] == ((0, (0,)), (1, (1,)), None)
    assert all(slot == (c, (c,)) for rank in states[2] for c, slot in enumerate(rank))


def test_step_states_continues_past_errors_and_describe_slot_says_why():
    steps = [[(0, 1, 0, 1, True)], [(0, 1, 0, 0, True), (2, 1, 0, 0, True)], [(1, 2, 0, 0)]]
    states = step_states(cl.Schedule("reduce_scatter", 3, 3, steps[:2]))
    assert describe_slot(states[1][1][1], 3) == (
        "an invalid sum of different chunks (from ranks 0, 1)"
    )
    assert describe_slot(states[2][1][0], 3) == "chunk 0 summed over all 3 ranks"
    assert describe_slot((0, (0, 1, 1)), 3) == (
        "chunk 0 summed over 2 of 3 ranks (0, 1), with rank 1 counted more than once"
    )
    assert describe_slot((4, (2,)), 3) == "chunk 4 of rank 2"
    assert describe_slot(None, 3) == "nothing"
    with pytest.raises(GradingError, match=r"step_states needs a collectives\.Schedule"):
        step_states(ring_steps(3))
