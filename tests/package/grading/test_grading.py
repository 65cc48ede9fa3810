"""collectives.grading: the checks behind the exercises' test cells.

Messages are asserted exactly where a learner reads them first, by key phrases elsewhere.
The re-check in a fresh interpreter (``recheck``) is held to the same messages as the
in-process checks, and shown to ignore monkeypatching of this process.
"""

import importlib
import math
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
import collectives.analytic
import collectives.grading as grading
from collectives import GradingError
from collectives.grading import (call, check_close, check_number, check_reference,
                                 check_schedule, describe_slot, recheck, schedule_seconds,
                                 step_states)
from collectives.grading.recheck import decode, encode

RING = {"neighbours": "ring", "reference": "ring_all_gather", "max_sends_per_step": 1}


def ring_steps(n):
    """The one-way ring all-gather written out by hand: step s, rank r sends chunk r - s."""
    return [[(r, (r + 1) % n, (r - s) % n, (r - s) % n) for r in range(n)] for s in range(n - 1)]


def failure(check, *args, **kwargs):
    """The exception ``check`` raises (it must raise AssertionError or GradingError)."""
    with pytest.raises((AssertionError, GradingError)) as info:
        check(*args, **kwargs)
    return info.value


def message(check, *args, **kwargs):
    return str(failure(check, *args, **kwargs))


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
        [[list(t) for t in step] for step in steps],                      # transfers as lists
        tuple(tuple(step) for step in steps),                             # tuples
        [set(step) for step in steps],                                    # a step is a set
        [list(reversed(step)) for step in steps],                         # any order in a step
        [[tuple(np.int64(v) for v in t) for t in step] for step in steps],  # numpy ints
        [[(*t, "copy") for t in step] for step in steps],                 # 5 fields
        [[(*t, False) for t in step] for step in steps],
        np.array(steps),                                                  # an int array
        [np.array(step, dtype=np.int32) for step in steps],
        steps + [[]],                                                     # an empty last step
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
        "exercise expects 3")


def test_other_collectives_and_neighbour_rules():
    check_schedule(cl.algorithms.bidirectional_ring_all_gather(5), "all_gather", 5,
                   neighbours="bidirectional_ring", n_steps=4)
    check_schedule(cl.algorithms.ring_all_reduce(5), "all_reduce", 5, neighbours="ring")
    check_schedule(cl.algorithms.ring_reduce_scatter(6), "reduce_scatter", 6,
                   neighbours=lambda r: [(r + 1) % 6])
    check_schedule(cl.algorithms.direct_all_to_all(4), "all_to_all", 4)
    check_schedule(cl.algorithms.binomial_tree_reduce(5, root=2), "reduce", 5, root=2)
    check_schedule(cl.algorithms.binomial_tree_broadcast(5, root=3), "broadcast", 5, root=3)
    check_schedule(cl.algorithms.recursive_doubling_all_gather(8), "all_gather", 8)
    assert message(check_schedule, cl.algorithms.bidirectional_ring_all_gather(5), "all_gather",
                   5, neighbours="ring").startswith(
        "your schedule: step 0 sends from rank 0 to rank 4 (transfer 1: (0, 4, 1, 1)), which is "
        "not its ring neighbour 1")


# ---- check_schedule: the form of the answer --------------------------------------------------

WHAT = {"what": "ring_all_gather_steps(4)"}


@pytest.mark.parametrize("answer, expected", [
    (None, "ring_all_gather_steps(4) is None, not a list of steps: nothing was returned (did "
           "you forget `return`?)"),
    (3.0, "ring_all_gather_steps(4) is a float (3.0), not a list of steps (each step a list of "
          "(src, dst, src_chunk, dst_chunk) tuples)"),
    (7, "ring_all_gather_steps(4) is an int (7), not a list of steps (each step a list of "
        "(src, dst, src_chunk, dst_chunk) tuples)"),
    ("steps", "ring_all_gather_steps(4) is the string 'steps', not a list of steps (each step a "
              "list of (src, dst, src_chunk, dst_chunk) tuples)"),
    ({0: []}, "ring_all_gather_steps(4) is a dict of 1 item ({0: []}), not a list of steps "
              "(each step a list of (src, dst, src_chunk, dst_chunk) tuples)"),
    ({(0, 1, 0, 0)}, "ring_all_gather_steps(4) is a set; steps happen in order, so return a "
                     "list of steps"),
    (np.zeros((3, 4, 4)), "ring_all_gather_steps(4) is a numpy array of shape (3, 4, 4) and "
                          "dtype float64; return a list of steps, each a list of (src, dst, "
                          "src_chunk, dst_chunk) tuples of ints"),
    ([(0, 1, 0, 0), (1, 2, 1, 1)],
     "ring_all_gather_steps(4): step 0 is (0, 1, 0, 0), which looks like one transfer, not a "
     "step; put the transfers of each step in a list of their own: [[(0, 1, 0, 0), "
     "(1, 2, 1, 1), ...], [...], ...]"),
    ([[(0, 1, 0, 0)], 5], "ring_all_gather_steps(4): step 1 is an int (5); each step must be a "
                          "list of (src, dst, src_chunk, dst_chunk) tuples"),
    ([[(0, 1, 0, 0)], None], "ring_all_gather_steps(4): step 1 is None; each step must be a "
                             "list of (src, dst, src_chunk, dst_chunk) tuples"),
    ([[0, 1, 2]], "ring_all_gather_steps(4): step 0, transfer 0 is an int (0); a transfer "
                  "is a tuple (src, dst, src_chunk, dst_chunk)"),
    ([[(0, 1, 0)]], "ring_all_gather_steps(4): step 0, transfer 0 is (0, 1, 0), with 3 "
                    "fields; a transfer is a tuple (src, dst, src_chunk, dst_chunk)"),
    ([[(0, 1, 0.0, 0)]], "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0.0, 0): "
                         "src_chunk is 0.0, a float; rank and chunk numbers must be ints (use "
                         "// rather than /, or int(...))"),
    ([[(0, 1.5, 0, 0)]], "ring_all_gather_steps(4): step 0, transfer 0 (0, 1.5, 0, 0): dst is "
                         "1.5; expected an integer"),
    ([[(True, 1, 0, 0)]], "ring_all_gather_steps(4): step 0, transfer 0 (True, 1, 0, 0): src "
                          "is True, a bool; expected an integer"),
    ([[(0, "1", 0, 0)]], "ring_all_gather_steps(4): step 0, transfer 0 (0, '1', 0, 0): dst is "
                         "the string '1'; expected an integer"),
    ([[(0, 1, 0, 0, "move")]], "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 0, "
                               "'move'): the fifth field must be 'copy' or 'reduce' (or "
                               "False/True), got 'move'"),
])
def test_bad_forms_get_a_precise_grading_error(answer, expected):
    error = failure(check_schedule, answer, "all_gather", 4, **RING, **WHAT)
    assert isinstance(error, GradingError)
    assert str(error) == expected


def test_a_generator_is_named_as_such():
    text = message(check_schedule, (s for s in ring_steps(4)), "all_gather", 4, **WHAT)
    assert text.startswith("ring_all_gather_steps(4) is a generator (<generator object")
    assert text.endswith("not a list of steps (each step a list of (src, dst, src_chunk, "
                         "dst_chunk) tuples)")


def test_a_schedule_of_the_wrong_shape_is_named():
    assert message(check_schedule, cl.algorithms.bidirectional_ring_all_gather(4), "all_gather",
                   4, n_chunks=4) == ("your schedule is a Schedule with n_chunks=8; expected "
                                      "n_chunks=4")
    assert message(check_schedule, cl.algorithms.ring_all_gather(5), "all_gather", 4) == (
        "your schedule is a Schedule with n_ranks=5; expected n_ranks=4")
    assert message(check_schedule, cl.algorithms.ring_reduce_scatter(4), "all_gather", 4) == (
        "your schedule is a Schedule with collective='reduce_scatter'; expected "
        "collective='all_gather'")


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
    text = message(check_schedule, dual_steps(steps, n, swap=False), "reduce_scatter", n,
                   n_scratch=n, what="dual(staged ring)",
                   reference=cl.transforms.dual(cl.Schedule("all_gather", n, n, steps,
                                                            n_scratch=n, name="staged")))
    first, *hint = text.split("\n")
    assert first == (f"dual(staged ring) does not compute the reduce-scatter: step 0, transfer 0 "
                     f"(reduce rank 0 chunk {n + 1} -> rank 0 chunk 1): rank 0 chunk {n + 1} "
                     "holds nothing yet")
    assert hint[0] == (f"Step by step against the reference dual(staged): after step 0, rank 0 "
                       f"chunk {n + 1} holds nothing; in the reference it holds chunk 1 of rank 0.")


def test_scratch_slots_in_messages():
    steps = staged_ring_steps(4)
    # without n_scratch the scratch slots are out of range
    assert message(check_schedule, steps, "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 4): dst_chunk 4 is not a chunk; "
        "each rank's buffer has chunks 0..3 (did you forget `% n`?)")
    assert message(check_schedule, [[(0, 1, 0, 9)]], "all_gather", 4, n_scratch=4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 0, 9): dst_chunk 9 is not a chunk; "
        "each rank's buffer has chunks 0..7 (chunks 4..7 are scratch)")
    # the first write into an empty scratch slot must be a copy
    assert "holds nothing to add into; copy the first contribution there" in message(
        check_schedule, [[(0, 1, 0, 4, "reduce")]], "reduce_scatter", 4, n_scratch=4)
    schedule = cl.Schedule("all_gather", 4, 4, steps, n_scratch=4)
    assert message(check_schedule, schedule, "all_gather", 4, n_scratch=2) == (
        "your schedule uses 4 scratch slots; this exercise has 2")
    assert message(check_schedule, schedule, "all_gather", 4, n_scratch=0) == (
        "your schedule uses 4 scratch slots; this exercise has none")
    for bad in (-1, 1.5, True):
        assert "n_scratch must be an integer >= 0 (a bug in the test)" in message(
            check_schedule, steps, "all_gather", 4, n_scratch=bad)


def test_recheck_passes_n_scratch():
    steps = staged_ring_steps(3)
    recheck(("check_schedule", (dual_steps(steps, 3), "reduce_scatter", 3), {"n_scratch": 3}))
    with pytest.raises(AssertionError, match="holds nothing yet"):
        recheck(("check_schedule", (dual_steps(steps, 3, swap=False), "reduce_scatter", 3),
                 {"n_scratch": 3}))


# ---- check_schedule: wrong content -----------------------------------------------------------

def test_sending_past_the_last_rank_suggests_modulo():
    assert message(check_schedule, [[(3, 4, 3, 3)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (3, 4, 3, 3): dst 4 is not a rank; the "
        "ranks are 0..3 (did you forget `% n`?)")
    assert message(check_schedule, [[(0, 1, -1, -1)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, -1, -1): src_chunk -1 is not a "
        "chunk; each rank's buffer has chunks 0..3 (did you forget `% n`?)")
    assert message(check_schedule, [[(0, 1, 9, 9)]], "all_gather", 4, **WHAT) == (
        "ring_all_gather_steps(4): step 0, transfer 0 (0, 1, 9, 9): src_chunk 9 is not a "
        "chunk; each rank's buffer has chunks 0..3")


def test_a_send_to_a_rank_that_is_not_the_ring_neighbour():
    steps = ring_steps(4)
    steps[0][2] = (2, 0, 2, 2)
    assert message(check_schedule, steps, "all_gather", 4, **RING, **WHAT) == (
        "ring_all_gather_steps(4): step 0 sends from rank 2 to rank 0 (transfer 2: "
        "(2, 0, 2, 2)), which is not its ring neighbour 3 (on a one-way ring rank r sends "
        "only to rank (r + 1) % n)")


def test_a_wrong_schedule_is_compared_step_by_step_with_the_reference():
    steps = ring_steps(4)
    steps[1] = steps[0]                                  # step 1 repeats step 0
    first, *hint = message(check_schedule, steps, "all_gather", 4, n_steps=3, **RING,
                           **WHAT).split("\n")
    # the first line is cl.verify's own message; the rest compares with the reference
    assert first.startswith("ring_all_gather_steps(4) does not compute the all-gather: ")
    assert "holds nothing" in first
    assert "\n".join(hint) == (
        "Step by step against the reference ring_all_gather: after step 1, rank 0 chunk 2 holds "
        "nothing; in the reference it holds chunk 2 of rank 2.\n"
        "  your step 1:      [(0, 1, 0, 0), (1, 2, 1, 1), (2, 3, 2, 2), (3, 0, 3, 3)]\n"
        "  reference step 1: [(0, 1, 3, 3), (1, 2, 0, 0), (2, 3, 1, 1), (3, 0, 2, 2)]")


def test_a_missing_step_is_named():
    first, *rest = message(check_schedule, ring_steps(4)[:2], "all_gather", 4, n_steps=3,
                           **RING, **WHAT).split("\n")
    assert first.startswith("ring_all_gather_steps(4) does not compute the all-gather: ")
    assert "rank 0 chunk 1 holds nothing" in first                  # cl.verify's words
    assert "\n".join(rest) == (
        "It has 2 steps that move data; this exercise expects 3.\n"
        "Your 2 steps match the first 2 of the reference ring_all_gather, which goes on with "
        "step 2: [(0, 1, 2, 2), (1, 2, 3, 3), (2, 3, 0, 0), (3, 0, 1, 1)]")


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
        "is sent")


def test_two_sends_by_one_rank_in_one_step():
    steps = ring_steps(3)
    steps[1] = steps[1] + [(0, 1, 0, 0)]                 # rank 1 has chunk 0 already
    assert message(check_schedule, steps, "all_gather", 3, n_steps=2, **RING) == (
        "your schedule: in step 1 rank 0 sends 2 chunks ((0, 1, 2, 2), (0, 1, 0, 0)); this "
        "exercise allows 1 per rank per step, so that each link carries one chunk per step as "
        "the cost model assumes")


def test_two_copies_into_one_slot_and_reduces_in_an_all_gather():
    text = message(check_schedule, [[(0, 1, 0, 0), (2, 1, 2, 0)]], "all_gather", 4)
    assert text.startswith("your schedule: step 0: rank 1 chunk 0 is written by 2 transfers")
    assert message(check_schedule, [[(0, 1, 0, 0, "reduce")]], "all_gather", 4) == (
        "your schedule: step 0, transfer 0 (0, 1, 0, 0, 'reduce') is a reduce; all-gather only "
        "copies chunks")


def test_a_reduce_that_counts_a_rank_twice():
    steps = cl.algorithms.ring_reduce_scatter(3).to_lists()
    steps[1].append((2, 0, 1, 1, True))              # rank 2 adds chunk 1 into rank 0 again
    text = message(check_schedule, steps, "reduce_scatter", 3, neighbours="ring")
    assert "does not compute the reduce-scatter" in text
    assert "twice" in text


def test_the_numeric_check_catches_what_a_broken_verify_misses(monkeypatch):
    monkeypatch.setattr(cl, "verify", lambda schedule: None)
    assert message(check_schedule, [[(0, 1, 0, 0)]], "all_gather", 2, **WHAT).startswith(
        "ring_all_gather_steps(4): simulated on numbers, rank 0 ends with [")


def test_bad_arguments_from_the_test_itself():
    assert "a bug in the test" in message(check_schedule, [], "all_gather", 0)
    assert "unknown neighbour rule 'torus'" in message(check_schedule, [], "all_gather", 1,
                                                       neighbours="torus")
    error = failure(check_schedule, [[(0, 0, 1, 1)]], "all_gather", 2,
                    reference="no_such_algorithm")
    assert isinstance(error, GradingError) and "unknown reference algorithm" in str(error)


# ---- step_states and describe_slot -----------------------------------------------------------

def test_step_states_replays_the_ring():
    states = step_states(cl.algorithms.ring_all_gather(3))
    assert len(states) == 3
    assert states[0] == (((0, (0,)), None, None), (None, (1, (1,)), None),
                         (None, None, (2, (2,))))
    assert states[1][1] == ((0, (0,)), (1, (1,)), None)
    assert all(slot == (c, (c,)) for rank in states[2] for c, slot in enumerate(rank))


def test_step_states_continues_past_errors_and_describe_slot_says_why():
    steps = [[(0, 1, 0, 1, True)], [(0, 1, 0, 0, True), (2, 1, 0, 0, True)],
             [(1, 2, 0, 0)]]
    states = step_states(cl.Schedule("reduce_scatter", 3, 3, steps[:2]))
    assert describe_slot(states[1][1][1], 3) == (
        "an invalid sum of different chunks (from ranks 0, 1)")
    assert describe_slot(states[2][1][0], 3) == "chunk 0 summed over all 3 ranks"
    assert describe_slot((0, (0, 1, 1)), 3) == (
        "chunk 0 summed over 2 of 3 ranks (0, 1), with rank 1 counted more than once")
    assert describe_slot((4, (2,)), 3) == "chunk 4 of rank 2"
    assert describe_slot(None, 3) == "nothing"
    with pytest.raises(GradingError, match="step_states needs a collectives.Schedule"):
        step_states(ring_steps(3))


# ---- numbers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [3, 3.0, np.int64(3), np.float32(3), np.float64(3),
                                   Fraction(3), Decimal(3), np.array(3.0)])
def test_check_number_accepts_real_numbers(value):
    assert check_number(value, "x") == 3.0 and type(check_number(value, "x")) is float


@pytest.mark.parametrize("value, expected", [
    (None, "f(2) is None: nothing was returned (did you forget `return`?)"),
    (True, "f(2) is True, a bool; expected a number"),
    ("1.5", "f(2) is the string '1.5'; expected a number"),
    ([1.0], "f(2) is a list of 1 item ([1.0]); expected a number"),
    ((1.0, 2.0), "f(2) is a tuple of 2 items ((1.0, 2.0)); expected a number"),
    (np.array([1.0, 2.0]), "f(2) is a numpy array of shape (2,) and dtype float64; expected a "
                           "single number"),
    (1j, "f(2) is the complex number 1j; expected a real number"),
    ({"a": 1}, "f(2) is a dict of 1 item ({'a': 1}); expected a number"),
    (object, "f(2) is a type (<class 'object'>); expected a number"),
])
def test_check_number_names_what_it_got(value, expected):
    error = failure(check_number, value, "f(2)")
    assert isinstance(error, GradingError) and str(error) == expected


def test_nan_and_infinity_fail_as_answers():
    assert message(check_number, math.nan, "f(2)") == (
        "f(2) is nan (not a number); check for 0/0 or a nan input")
    assert message(check_number, np.float64("inf"), "f(2)") == (
        "f(2) is inf; expected a finite number (a division by zero?)")
    assert check_number(math.inf, "f(2)", finite=False) == math.inf


def test_check_close_tolerance_and_hints():
    check_close(1.0 + 5e-10, 1.0, "x")
    check_close(0.0, 0.0, "x")
    check_close(1e-12, 0.0, "x", abs_tol=1e-9)
    assert message(check_close, 1.0 + 5e-9, 1.0, "x") == (
        "x is 1.000000005, expected 1.0 (relative error 5e-09)")
    assert message(check_close, 8.0, 7.0, "t(8)") == (
        "t(8) is 8.0, expected 7.0; yours is exactly 8/7 times that")
    assert message(check_close, 4.0, 1.0, "x") == (
        "x is 4.0, expected 1.0; yours is exactly 4 times that")
    assert message(check_close, 0.25, 1.0, "x") == (
        "x is 0.25, expected 1.0; yours is exactly 1/4 times that")
    assert message(check_close, 3.3, 1.0, "x") == "x is 3.3, expected 1.0; yours is 3.3 times that"
    assert message(check_close, 8e9, 1e9, "b") == (
        "b is 8000000000.0, expected 1000000000.0; yours is 8 times that: bits versus bytes?")
    assert message(check_close, 2e-6, 2.0, "t").endswith(
        "yours is 1/10**6 of that: a unit prefix (M, micro)?")
    assert message(check_close, 2.0**21, 2.0, "s").endswith(
        "yours is 2**20 times that: MiB versus bytes?")
    assert message(check_close, 1.0, 0.0, "x") == "x is 1.0, expected 0.0"
    assert "a bug in the test" in message(check_close, 1.0, None, "x")
    assert "a bug in the test" in message(check_close, 1.0, math.nan, "x")


def test_check_reference_names_the_function_and_its_arguments():
    n, s, a, b = 8, 2**26, 1e-6, 45e9
    check_reference(cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b), "t", "analytic.ring_all_gather",
                    (n, s), {"alpha": a, "bandwidth": b})
    assert message(check_reference, 2 * cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
                   "ring_all_gather_time(8, 2**26, 1e-6, 45e9)", "analytic.ring_all_gather",
                   (n, s), {"alpha": a, "bandwidth": b}) == (
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0026237891555555555, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, alpha=1e-06, bandwidth="
        "45000000000.0); yours is exactly 2 times that")
    assert message(check_reference, 1.0, "f", "busbw", ("all_gather", 1e9, 2.5e-3, 8)) == (
        "f is 1.0, expected 350000000000.0 = collectives.busbw('all_gather', 1000000000.0, "
        "0.0025, 8); yours is 2.85714e-12 times that")
    for bad, why in (("_private", "must name a public function"),
                     ("analytic._check", "must name a public function"),
                     ("no.such.thing", "collectives has no 'no.such.thing'"),
                     ("__version__", "must name a public function"),
                     ("analytic", "is not a function"), (3, "must be a dotted name")):
        error = failure(check_reference, 1.0, "f", bad)
        assert isinstance(error, GradingError) and why in str(error), bad


# ---- call ------------------------------------------------------------------------------------

def test_call_returns_the_value_and_names_failures():
    assert call(lambda n: n + 1, 2) == 3

    def unsolved(n):
        raise NotImplementedError()

    error = failure(call, unsolved, 4)
    assert str(error) == ("unsolved(4): unsolved is not written yet: replace the line "
                          "`raise NotImplementedError(...)` in its cell with your code")
    assert isinstance(error.__cause__, NotImplementedError)

    def broken(n, nbytes):
        return [0][n]

    error = failure(call, broken, 3, 2**20)
    assert str(error) == "broken(3, 1048576) raised IndexError: list index out of range"
    assert isinstance(error.__cause__, IndexError)
    assert message(call, None, 3, name="ring_all_gather_steps") == (
        "ring_all_gather_steps is None, not a function; define it with "
        "`def ring_all_gather_steps(...):`")
    assert message(call, 5, 3) == "expected a function, got an int (5)"


# ---- schedule_seconds ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 8, 17])
def test_schedule_seconds_agrees_with_the_closed_form(n):
    s, a, b = 3e6 + n, 2e-6, 25e9
    total = schedule_seconds("ring_all_gather", n, s, link_bandwidth=b, hop_latency=a)
    assert math.isclose(total, cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b), rel_tol=1e-12)
    latency = schedule_seconds("ring_all_gather", n, s, part="latency", link_bandwidth=b,
                               hop_latency=a)
    transfer = schedule_seconds("ring_all_gather", n, s, part="transfer", link_bandwidth=b,
                                hop_latency=a)
    assert math.isclose(latency, (n - 1) * a) and math.isclose(latency + transfer, total)


def test_latency_is_half_the_time_at_the_crossover():
    n, a, b = 16, 1e-6, 45e9
    s_star = cl.analytic.ring_crossover_bytes(n, alpha=a, bandwidth=b)
    assert math.isclose(schedule_seconds("ring_all_gather", n, s_star, part="latency_fraction",
                                         link_bandwidth=b, hop_latency=a), 0.5)
    on_switch = schedule_seconds("direct_all_gather", n, s_star, topology="switch",
                                 link_bandwidth=b, hop_latency=a)
    assert math.isclose(on_switch, cl.analytic.direct_all_gather(n, s_star, alpha=2 * a, bandwidth=b))


def test_schedule_seconds_rejects_unknown_names():
    assert "unknown algorithm 'ring'" in message(schedule_seconds, "ring", 4, 1e6,
                                                 link_bandwidth=1e9)
    assert "topology must be one of ring, chain, switch" in message(
        schedule_seconds, "ring_all_gather", 4, 1e6, topology="torus", link_bandwidth=1e9)
    assert "part must be one of" in message(schedule_seconds, "ring_all_gather", 4, 1e6,
                                            part="all", link_bandwidth=1e9)
    assert "takes no time" in message(schedule_seconds, "ring_all_gather", 1, 1e6,
                                      part="latency_fraction", link_bandwidth=1e9)


# ---- recheck: the same verdicts in a fresh interpreter ---------------------------------------

def test_recheck_passes_correct_answers():
    n, s, a, b = 5, 1e6, 1e-6, 1e9
    recheck(("check_schedule", (ring_steps(n), "all_gather", n), {"n_steps": n - 1, **RING}),
            ("check_schedule", (cl.algorithms.ring_all_gather(n), "all_gather", n)),
            ("check_close", (1.0, 1.0, "x")),
            ("check_number", (np.float32(2.5), "y")),
            ("check_reference", (cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b), "t",
                                 "analytic.ring_all_gather", (n, s), {"alpha": a, "bandwidth": b})),
            ("check_reference", (cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b), "t",
                                 "grading.schedule_seconds", ("ring_all_gather", n, s),
                                 {"link_bandwidth": b, "hop_latency": a})))


class Lying(float):
    """A float that claims to equal anything."""

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


BAD_ANSWERS = [
    ("check_schedule", (None, "all_gather", 4), WHAT),
    ("check_schedule", ((s for s in ()), "all_gather", 4), WHAT),
    ("check_schedule", ([[(0, 1, 0.0, 0)]], "all_gather", 4), WHAT),
    ("check_schedule", ([{(0, 1, 0, 0), (1, 2, 1, 1)}], "all_gather", 4), WHAT),
    ("check_schedule", ([[{"src": 0}]], "all_gather", 4), WHAT),
    ("check_schedule", (np.zeros((3, 4, 4)), "all_gather", 4), WHAT),
    ("check_schedule", (ring_steps(4)[:2], "all_gather", 4), {"n_steps": 3, **RING, **WHAT}),
    ("check_schedule", (cl.algorithms.ring_all_gather(5), "all_gather", 4), WHAT),
    ("check_close", (Lying(2.0), 1.0, "x"), {}),
    ("check_close", (np.array([1.0]), 1.0, "x"), {}),
    ("check_close", (object(), 1.0, "x"), {}),
    ("check_number", (Decimal("NaN"), "x"), {}),
    ("check_reference", (Fraction(1, 3), "f", "analytic.ring_crossover_bytes", (4,), {"alpha": 1e-6, "bandwidth": 1e9}),
     {}),
]


@pytest.mark.parametrize("name, args, kwargs", BAD_ANSWERS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_ANSWERS)])
def test_recheck_fails_with_the_in_process_message(name, args, kwargs):
    here = failure(getattr(grading, name), *args, **kwargs)
    there = failure(recheck, (name, args, kwargs))
    assert type(there) is type(here)
    assert str(there) == str(here)


def test_recheck_stops_at_the_first_failure():
    text = message(recheck, ("check_close", (1.0, 1.0, "first")),
                   ("check_close", (2.0, 1.0, "second")), ("check_close", (3.0, 1.0, "third")))
    assert text.startswith("second is 2.0")


def test_recheck_ignores_monkeypatching_in_this_process(monkeypatch):
    """What a learner's cell could do to the kernel: none of it reaches the re-check."""
    def always_pass(*args, **kwargs):
        return None

    monkeypatch.setattr(cl, "verify", always_pass)
    monkeypatch.setattr(cl, "simulate", lambda schedule, inputs: inputs)
    monkeypatch.setattr(cl, "busbw", lambda *args, **kwargs: 42.0)
    monkeypatch.setattr(collectives.analytic, "ring_all_gather", lambda *args: 1.0)
    monkeypatch.setattr(grading, "check_schedule", always_pass)
    monkeypatch.setattr(grading, "check_close", always_pass)
    monkeypatch.setattr(grading.checks, "_compare", always_pass)
    monkeypatch.setattr(math, "isclose", lambda *args, **kwargs: True)

    wrong_steps = [[(r, 0, r, r) for r in range(1, 4)]]
    assert grading.check_schedule(wrong_steps, "all_gather", 4) is None     # fooled here ...
    assert message(recheck, ("check_schedule", (wrong_steps, "all_gather", 4), RING)).startswith(
        "your schedule: step 0 sends from rank 1 to rank 0")                 # ... not there
    assert message(recheck, ("check_reference", (1.0, "t", "analytic.ring_all_gather",
                                                 (4, 1e6), {"alpha": 1e-6, "bandwidth": 1e9}))).startswith(
        "t is 1.0, expected 0.000753")
    assert message(recheck, ("check_reference", (42.0, "b", "busbw",
                                                 ("all_gather", 1e6, 1e-3, 4)))).startswith(
        "b is 42.0, expected 750000000.0")
    assert message(recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")
    recheck(("check_schedule", (ring_steps(4), "all_gather", 4), {"n_steps": 3, **RING}))


def test_reloading_the_package_restores_every_function_of_its_modules():
    """The hidden tests' ``_grading = importlib.reload(collectives.grading)`` undoes a
    notebook's patches inside the package's modules too, and a rebound module attribute."""
    modules = {name: sys.modules[f"collectives.grading.{name}"]
               for name in ("checks", "diagnosis", "recheck")}

    def always_pass(*args, **kwargs):
        return None

    wrong_steps = [[(r, 0, r, r) for r in range(1, 4)]]
    try:
        collectives.grading.diagnosis.check_schedule = always_pass
        collectives.grading.check_schedule = always_pass
        modules["checks"].check_close = always_pass
        modules["checks"]._compare = always_pass
        modules["diagnosis"]._numeric_check = always_pass
        modules["recheck"].recheck = always_pass
        modules["recheck"].RECHECKABLE["check_close"] = always_pass
        collectives.grading.checks = always_pass        # its name starts with "check"
        collectives.grading.recheck = always_pass

        _grading = importlib.reload(collectives.grading)

        assert _grading is grading
        assert _grading.checks is modules["checks"]
        assert _grading.diagnosis is modules["diagnosis"]
        for name in _grading.__all__:
            assert getattr(_grading, name) is not always_pass, name
        for module in modules.values():
            patched = [name for name, value in vars(module).items() if value is always_pass]
            assert not patched, (module.__name__, patched)
        assert _grading.recheck is modules["recheck"].recheck
        assert modules["recheck"].RECHECKABLE["check_close"] is _grading.check_close
        assert message(_grading.check_schedule, wrong_steps, "all_gather", 4,
                       neighbours="ring").startswith("your schedule: step 0 sends from rank 1")
        assert message(_grading.check_close, 2.0, 1.0, "x").startswith("x is 2.0")
        assert message(_grading.recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")
    finally:
        importlib.reload(collectives.grading)


def test_recheck_imports_collectives_from_its_own_directory(tmp_path, monkeypatch):
    """A ``collectives`` package in the working directory or on PYTHONPATH is not used."""
    fake = tmp_path / "collectives"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('the fake collectives was imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    recheck(("check_close", (1.0, 1.0, "x")))
    assert message(recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")


def test_recheck_rejects_a_reply_without_its_nonce(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat > /dev/null\n"
                    "echo 'collectives-grading-result {\"nonce\": \"0\", \"results\": "
                    "[{\"ok\": true}]}'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    error = failure(recheck, ("check_close", (2.0, 1.0, "x")))
    assert isinstance(error, GradingError)
    assert str(error).startswith("the isolated re-check did not run properly (exit status 0)")


def test_recheck_reports_a_crashed_interpreter(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Fatal Python error: something' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    assert message(recheck, ("check_close", (1.0, 1.0, "x"))) == (
        "the isolated re-check did not run properly (exit status 3): Fatal Python error: "
        "something")


def test_recheck_rejects_malformed_requests():
    assert "must be (name, args) or (name, args, kwargs)" in message(recheck, ["check_close"])
    assert "'verify' is not one of" in message(recheck, ("verify", ()))
    assert "the isolated re-check failed: TypeError" in message(recheck, ("check_close", ()))


def test_answers_travel_as_plain_data():
    schedule = cl.algorithms.ring_all_reduce(3)
    value = [1, np.int64(2), 2.5, np.float32(0.5), None, True, "s", (1, (2, 3)), {4, 5},
             np.arange(6, dtype=np.int16).reshape(2, 3), {"k": [1]}, Lying(3.0), schedule,
             object()]
    back = decode(encode(value))
    assert back[:7] == [1, 2, 2.5, 0.5, None, True, "s"]
    assert type(back[1]) is int and type(back[3]) is float
    assert back[7] == (1, (2, 3)) and back[8] == frozenset({4, 5})
    assert back[9].dtype == np.int16 and back[9].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back[10] == {"k": [1]}
    assert type(back[11]) is float and back[11] == 3.0
    assert back[12].to_lists() == schedule.to_lists() and back[12].collective == "all_reduce"
    assert repr(back[13]).startswith("<object object at")
    assert "an object" in message(check_number, back[13], "x")


def test_the_module_docstring_states_its_limits():
    doc = grading.__doc__
    for phrase in ("This defends against", "It does not defend against", "sys.executable -I",
                   "importlib.reload", "input or AST transformers", "container or VM"):
        assert phrase in doc


def test_check_choice_messages_and_isolated_recheck():
    from collectives import grading as g
    assert g.check_choice("ring", "ring", "best") == "ring"
    with pytest.raises(g.GradingError, match="best should be a string \\(a name\\), but it is"):
        g.check_choice(3, "ring", "best")
    with pytest.raises(AssertionError, match="best is 'rng', which is not one of the choices: 'ring', 'tree'"):
        g.check_choice("rng", "ring", "best", options=["ring", "tree"])
    with pytest.raises(AssertionError, match="best is 'tree', but the answer is 'ring'"):
        g.recheck(("check_choice", ("tree", "ring", "best")))
