"""collectives.grading.tasks.all_to_all (earlier part of collectives.grading.collective_tasks):
the checks of the all-to-all notebook (exercises/source/all_to_all). Each check must accept
every correct answer of the kind its task describes (the textbook shape and another) and
reject the plausible wrong ones, with a message that says why. The answers are written here
from the algorithms' definitions, not with the package. The pipeline test
(tests/course/test_grading_pipeline.py -k all_to_all) runs the same checks end to end through
nbgrader.
"""

import importlib

import pytest

from collectives import GradingError
from collectives.grading import check_reference, collective_tasks, recheck
from collectives.grading.tasks import all_to_all as ct


def bruck_steps(n):
    if n == 1:
        return []
    rotate = [(r, r, (r + i) % n, i) for r in range(n) for i in range(n) if (r + i) % n != i]
    steps = [rotate]
    b = 0
    while (1 << b) < n:
        steps.append(
            [(r, (r + (1 << b)) % n, i, i) for r in range(n) for i in range(n) if i & (1 << b)]
        )
        b += 1
    steps.append([(r, r, i, (r - i) % n) for r in range(n) for i in range(n) if (r - i) % n != i])
    return steps


def bruck_folded(n):
    # rotations folded into the first and last exchange: slot (r + i) % n holds offset i
    k = (n - 1).bit_length()
    steps = []
    for b in range(k):
        step = []
        for r in range(n):
            q = (r + (1 << b)) % n
            for i in range(n):
                src_slot = (r + i) % n if b == 0 else i
                if i & (1 << b):
                    dst_slot = (q - i) % n if b == k - 1 else i
                    step.append((r, q, src_slot, dst_slot))
                else:
                    if b == 0 and b == k - 1:
                        dst = (r - i) % n
                    elif b == 0:
                        dst = i
                    elif b == k - 1:
                        dst = (r - i) % n
                    else:
                        continue
                    if src_slot != dst:
                        step.append((r, r, src_slot, dst))
        steps.append(step)
    return steps


def pairwise_steps(n):
    steps = []
    for s in range(1, n):
        steps.append([(r, (r + s) % n, (r + s) % n, (r + 2 * s) % n) for r in range(n)])
    # slot (r + s) now holds the part from r - s: move it to slot r - s
    steps.append(
        [
            (r, r, (r + s) % n, (r - s) % n)
            for r in range(n)
            for s in range(1, n)
            if (r + s) % n != (r - s) % n
        ]
    )
    return [step for step in steps if step]


def chain_steps(n):
    def slot(s, d):
        return n + n * s + d

    steps = []
    # where each part waits: waiting[r] = list of (s, d) at rank r still travelling
    waiting = [[(r, d) for d in range(n) if d != r] for r in range(n)]
    while any(waiting):
        step = []
        arrived = [[] for _ in range(n)]
        for r in range(n):
            for direction in (+1, -1):
                ahead = [(s, d) for s, d in waiting[r] if (d - r) * direction > 0]
                if not ahead:
                    continue
                s, d = max(ahead, key=lambda p: ((p[1] - r) * direction, -p[0]))
                waiting[r].remove((s, d))
                src_slot = d if s == r else slot(s, d)
                step.append((r, r + direction, src_slot, slot(s, d)))
                if d != r + direction:
                    arrived[r + direction].append((s, d))
        for r in range(n):
            waiting[r] += arrived[r]
        steps.append(step)
    steps.append([(d, d, slot(s, d), s) for d in range(n) for s in range(n) if s != d])
    return steps


def direct_a2a(n):
    return [[(s, d, d, s) for s in range(n) for d in range(n) if s != d]] if n > 1 else []


def pairwise_slot_r(n):  # receive straight into slot r: overwritten before it is sent
    return [[(r, (r + s) % n, (r + s) % n, r) for r in range(n)] for s in range(1, n)]


def pairwise_xor(n):
    return [[(r, r ^ s, r ^ s, r) for r in range(n)] for s in range(1, n)]


def chain_nearest(n):
    def slot(s, d):
        return n + n * s + d

    steps = []
    waiting = [[(r, d) for d in range(n) if d != r] for r in range(n)]
    while any(waiting):
        step = []
        arrived = [[] for _ in range(n)]
        for r in range(n):
            for direction in (+1, -1):
                ahead = [(s, d) for s, d in waiting[r] if (d - r) * direction > 0]
                if not ahead:
                    continue
                s, d = min(ahead, key=lambda p: ((p[1] - r) * direction, p[0]))
                waiting[r].remove((s, d))
                src_slot = d if s == r else slot(s, d)
                step.append((r, r + direction, src_slot, slot(s, d)))
                if d != r + direction:
                    arrived[r + direction].append((s, d))
        for r in range(n):
            waiting[r] += arrived[r]
        steps.append(step)
    steps.append([(d, d, slot(s, d), s) for d in range(n) for s in range(n) if s != d])
    return steps


def chain_fifo(n):
    def slot(s, d):
        return n + n * s + d

    steps = []
    waiting = [[(r, d) for d in range(n) if d != r] for r in range(n)]
    while any(waiting):
        step = []
        arrived = [[] for _ in range(n)]
        for r in range(n):
            for direction in (+1, -1):
                ahead = [(s, d) for s, d in waiting[r] if (d - r) * direction > 0]
                if not ahead:
                    continue
                s, d = ahead[0]
                waiting[r].remove((s, d))
                src_slot = d if s == r else slot(s, d)
                step.append((r, r + direction, src_slot, slot(s, d)))
                if d != r + direction:
                    arrived[r + direction].append((s, d))
        for r in range(n):
            waiting[r] += arrived[r]
        steps.append(step)
    steps.append([(d, d, slot(s, d), s) for d in range(n) for s in range(n) if s != d])
    return steps


def _fails(check, answer, *args, match):
    with pytest.raises(AssertionError, match=match):
        check(answer, "answer", *args)


# ---- all-to-all ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 13, 16])
def test_bruck_accepts_rotations_apart_or_folded(n):
    assert ct.check_bruck_all_to_all(bruck_steps(n), "a", n) == 1.0
    assert ct.check_bruck_all_to_all(bruck_folded(n), "a", n) == 1.0


def bruck_backwards(n):
    # sends 2**b ranks behind, although slot i holds the part for i ranks ahead
    steps = bruck_steps(n)
    return (
        [steps[0]]
        + [[(r, (2 * r - d) % n, a, b) for r, d, a, b in step] for step in steps[1:-1]]
        + [steps[-1]]
    )


def test_bruck_rejects_other_all_to_alls():
    _fails(
        ct.check_bruck_all_to_all, bruck_backwards(5), 5, match="does not compute the all-to-all"
    )
    _fails(
        ct.check_bruck_all_to_all,
        direct_a2a(5),
        5,
        match=r"in 1 step that move data between ranks; Bruck's algorithm exchanges in "
        r"ceil\(log2 n\) = 3",
    )
    # pairwise for n = 4 has 3 steps; Bruck's 2
    _fails(ct.check_bruck_all_to_all, pairwise_steps(4), 4, match=r"in 3 steps")
    # two steps of distance 1 on 3 ranks (a relay): the second power of two is missing
    relay = [
        [(r, r, (r + i) % 3, i) for r in range(3) for i in range(3) if (r + i) % 3 != i],
        [(r, (r + 1) % 3, i, i) for r in range(3) for i in (1, 2)],
        [(r, (r + 1) % 3, 2, 2) for r in range(3)],
        [(r, r, i, (r - i) % 3) for r in range(3) for i in range(3) if (r - i) % 3 != i],
    ]
    _fails(ct.check_bruck_all_to_all, relay, 3, match="rank 0 sends 2 parts 1 ranks away")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12])
def test_pairwise_accepts_any_n_in_n_minus_1_steps(n):
    assert ct.check_pairwise_all_to_all(pairwise_steps(n), "a", n) == 1.0
    if n & (n - 1) == 0:
        assert ct.check_pairwise_all_to_all(pairwise_xor(n), "a", n) == 1.0


def test_pairwise_rejects_wrong_answers():
    _fails(
        ct.check_pairwise_all_to_all, pairwise_slot_r(5), 5, match="does not compute the all-to-all"
    )
    _fails(ct.check_pairwise_all_to_all, pairwise_xor(6), 6, match="is not a rank")
    _fails(
        ct.check_pairwise_all_to_all,
        direct_a2a(4),
        4,
        match=r"in 1 step that move data between ranks; pairwise exchange takes n - 1 = 3",
    )
    _fails(ct.check_pairwise_all_to_all, bruck_steps(8), 8, match=r"in 3 steps")


@pytest.mark.parametrize("n", range(1, 12))
def test_chain_accepts_farthest_first(n):
    assert ct.check_chain_all_to_all(chain_steps(n), "a", n) == 1.0


def test_chain_rejects_wrong_answers():
    _fails(
        ct.check_chain_all_to_all,
        chain_nearest(6),
        6,
        match=r"in 11 steps that move data; the cut bound is floor\(n\*\*2 / 4\) = 9",
    )
    _fails(ct.check_chain_all_to_all, chain_fifo(8), 8, match=r"in 19 steps")
    # the relay: every waiting part moves at once
    _fails(
        ct.check_chain_all_to_all,
        direct_a2a(3),
        3,
        match="sends from rank 0 to rank 2 .* only to its neighbours",
    )
    two_parts = [[(0, 1, 1, 3 + 3 * 0 + 1), (0, 1, 2, 3 + 3 * 0 + 2)]]
    _fails(
        ct.check_chain_all_to_all,
        two_parts,
        3,
        match="the link from rank 0 to rank 1 carries 2 parts",
    )


def test_bad_form_is_a_grading_error():
    with pytest.raises(GradingError, match="is None"):
        ct.check_chain_all_to_all(None, "chain_steps(4)", 4)
    with pytest.raises(GradingError, match="n must be an int >= 1"):
        ct.check_bruck_all_to_all([], "a", 0)


@pytest.mark.slow  # starts the isolated re-check's process
def test_runs_by_name_in_the_recheck():
    recheck(
        (
            "check_reference",
            (
                1.0,
                "a",
                "grading.collective_tasks.check_bruck_all_to_all",
                (bruck_folded(6), "a", 6),
            ),
        )
    )
    with pytest.raises(AssertionError, match="in 1 step"):
        recheck(
            (
                "check_reference",
                (
                    1.0,
                    "d",
                    "grading.collective_tasks.check_bruck_all_to_all",
                    (direct_a2a(6), "d", 6),
                ),
            )
        )
    check_reference(
        1.0, "a", "grading.collective_tasks.check_chain_all_to_all", (chain_steps(5), "a", 5)
    )
    # the module's own name, and the earlier one's objects
    check_reference(
        1.0, "a", "grading.tasks.all_to_all.check_pairwise_all_to_all", (pairwise_steps(5), "a", 5)
    )
    # (a reload of collectives.grading leaves the compatibility module as it is: re-executed,
    # as a fresh import in a notebook would, it holds this module's objects)
    old = importlib.reload(collective_tasks)
    for name in ct.__all__:
        assert getattr(old, name) is getattr(ct, name)
