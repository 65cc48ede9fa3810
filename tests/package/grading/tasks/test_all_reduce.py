"""collectives.grading.tasks.all_reduce (earlier part of collectives.grading.collective_tasks):
the checks of the all-reduce notebook (exercises/source/all_reduce). Each check must accept
every correct answer of the kind its task describes (the textbook shape and another) and
reject the plausible wrong ones, with a message that says why. The answers are written here
from the algorithms' definitions, not with the package; the expected busbw is derived by hand.
The pipeline test (tests/course/test_grading_pipeline.py -k all_reduce) runs the same checks
end to end through nbgrader.
"""

import importlib

import pytest

from collectives import GradingError
from collectives.grading import collective_tasks, recheck
from collectives.grading.tasks import all_reduce as ct


def rabenseifner_steps(n):
    steps = []
    d = n // 2
    while d >= 1:
        step = []
        for r in range(n):
            partner = r ^ d
            first = (partner // d) * d
            step += [(r, partner, c, c, "reduce") for c in range(first, first + d)]
        steps.append(step)
        d //= 2
    d = 1
    while d < n:
        step = []
        for r in range(n):
            first = (r // d) * d
            step += [(r, r ^ d, c, c, "copy") for c in range(first, first + d)]
        steps.append(step)
        d *= 2
    return steps


def rab_variant(n):
    # halving at distance 1, 2, 4...: chunks split by their low bits
    steps = []
    d = 1
    while d < n:
        step = []
        for r in range(n):
            p = r ^ d
            # rank r holds the chunks c with c % d == r % d; the partner keeps those whose
            # bit d is its own
            step += [
                (r, p, c, c, "reduce") for c in range(n) if c % d == r % d and (c & d) == (p & d)
            ]
        steps.append(step)
        d *= 2
    d = n // 2
    while d >= 1:
        step = []
        for r in range(n):
            p = r ^ d
            step += [(r, p, c, c, "copy") for c in range(n) if c % (2 * d) == r % (2 * d)]
        steps.append(step)
        d //= 2
    return steps


def hierarchical_steps(n_nodes):
    g = 8
    N = n_nodes
    # chunk p * N + j: block p (kept by local p), piece j (for the ring along the rail)
    steps = []

    def block(p):
        return range(p * N, p * N + N)

    for s in range(g - 1):  # ring reduce-scatter inside each node
        step = []
        for node in range(N):
            for local in range(g):
                p = (local - s - 1) % g
                step += [
                    (node * g + local, node * g + (local + 1) % g, c, c, "reduce") for c in block(p)
                ]
        steps.append(step)
    # now GPU `local` of each node holds block `local` summed over its node
    if N > 1:
        for s in range(N - 1):  # ring reduce-scatter along each rail
            step = []
            for local in range(g):
                for node in range(N):
                    j = (node - s - 1) % N
                    c = local * N + j
                    step.append((node * g + local, ((node + 1) % N) * g + local, c, c, "reduce"))
            steps.append(step)
        for s in range(N - 1):  # ring all-gather along each rail
            step = []
            for local in range(g):
                for node in range(N):
                    j = (node - s) % N
                    c = local * N + j
                    step.append((node * g + local, ((node + 1) % N) * g + local, c, c, "copy"))
            steps.append(step)
    for s in range(g - 1):  # ring all-gather inside each node
        step = []
        for node in range(N):
            for local in range(g):
                p = (local - s) % g
                step += [
                    (node * g + local, node * g + (local + 1) % g, c, c, "copy") for c in block(p)
                ]
        steps.append(step)
    return steps


def rab_doubling(n):  # recursive doubling: whole buffer, log n steps
    steps = []
    d = 1
    while d < n:
        steps.append([(r, r ^ d, c, c, "reduce") for r in range(n) for c in range(n)])
        d *= 2
    return steps


def rab_doubling_padded(n):  # recursive doubling then log n harmless copies
    steps = rab_doubling(n)
    d = 1
    while d < n:
        steps.append([(r, r ^ d, c, c, "copy") for r in range(n) for c in range(n)])
        d *= 2
    return steps


def rab_gather_wrong_order(n):
    steps = []
    d = n // 2
    while d >= 1:
        step = []
        for r in range(n):
            partner = r ^ d
            first = (partner // d) * d
            step += [(r, partner, c, c, "reduce") for c in range(first, first + d)]
        steps.append(step)
        d //= 2
    d = n // 2
    while d >= 1:  # doubling from the far distance first
        step = []
        for r in range(n):
            first = (r // d) * d
            step += [(r, r ^ d, c, c, "copy") for c in range(first, first + d)]
        steps.append(step)
        d //= 2
    return steps


def flat_ring(n_nodes):
    n = 8 * n_nodes
    steps = []
    for s in range(n - 1):
        steps.append(
            [(r, (r + 1) % n, (r - s - 1) % n, (r - s - 1) % n, "reduce") for r in range(n)]
        )
    for s in range(n - 1):
        steps.append([(r, (r + 1) % n, (r - s) % n, (r - s) % n, "copy") for r in range(n)])
    return steps


def leader(n_nodes):
    # reduce to local GPU 0 of each node, all-reduce between GPU 0s, broadcast in the node
    N, n = n_nodes, 8 * n_nodes
    steps = [
        [
            (node * 8 + local, node * 8, c, c, "reduce")
            for node in range(N)
            for local in range(1, 8)
            for c in range(n)
        ]
    ]
    for s in range(N - 1):
        steps.append(
            [
                (node * 8, (node + 1) % N * 8, c, c, "reduce")
                for node in range(N)
                for c in range(n)
                if c % N == (node - s - 1) % N
            ]
        )
    for s in range(N - 1):
        steps.append(
            [
                (node * 8, (node + 1) % N * 8, c, c, "copy")
                for node in range(N)
                for c in range(n)
                if c % N == (node - s) % N
            ]
        )
    steps.append(
        [
            (node * 8, node * 8 + local, c, c, "copy")
            for node in range(N)
            for local in range(1, 8)
            for c in range(n)
        ]
    )
    return steps


def _fails(check, answer, *args, match):
    with pytest.raises(AssertionError, match=match):
        check(answer, "answer", *args)


# ---- Rabenseifner -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32])
def test_rabenseifner_accepts_both_halving_orders(n):
    assert ct.check_rabenseifner_all_reduce(rabenseifner_steps(n), "a", n) == 1.0
    assert ct.check_rabenseifner_all_reduce(rab_variant(n), "a", n) == 1.0


@pytest.mark.parametrize("n", [4, 8])
def test_rabenseifner_rejects_wrong_answers(n):
    _fails(
        ct.check_rabenseifner_all_reduce,
        rab_doubling(n),
        n,
        match=r"in \d steps that move data between ranks; Rabenseifner's takes 2 log2",
    )
    # the right step count, by padding recursive doubling: too many bytes
    _fails(
        ct.check_rabenseifner_all_reduce,
        rab_doubling_padded(n),
        n,
        match=rf"rank 0 sends {2 * n * n.bit_length() - 2 * n} chunks in all; .* "
        rf"2\(n - 1\) = {2 * (n - 1)}",
    )
    _fails(
        ct.check_rabenseifner_all_reduce,
        rab_gather_wrong_order(n),
        n,
        match="does not compute the all-reduce",
    )


# ---- the hierarchical all-reduce on DGX H100 nodes ----------------------------------------
@pytest.mark.parametrize("n_nodes", [1, 2, 3, 4])
def test_hierarchical_accepts_the_two_level_ring(n_nodes):
    assert ct.check_hierarchical_all_reduce(hierarchical_steps(n_nodes), "a", n_nodes, 2**30) == 1.0


def test_hierarchical_rejects_slow_correct_all_reduces():
    # a flat ring over 16 GPUs: 30 steps of S/16 through a 50 GB/s NIC = 0.0375 S / 1e9 s
    # against 2 * 7/8 S / 450e9 + 2 * 1/2 * S/8 / 50e9 = 6.389e-12 S: 5.87 times
    _fails(
        ct.check_hierarchical_all_reduce,
        flat_ring(2),
        2,
        2**30,
        match=r"takes 0\.0402653184 s for 1073741824 bytes \(leaf .*\), 5\.87 times the "
        r"0\.006860017208888889 s",
    )
    _fails(ct.check_hierarchical_all_reduce, leader(3), 3, 2**30, match="8 times the")
    _fails(
        ct.check_hierarchical_all_reduce,
        rabenseifner_steps(16)[:4],
        2,
        2**30,
        match="does not compute the all-reduce",
    )


@pytest.mark.parametrize(
    "n_nodes, busbw",
    [
        (1, 450e9),  # NVLink alone
        # t / S = 2 (7/8) / 450e9 + 2 (N-1)/N (1/8) / 50e9; busbw = 2 (8N-1)/(8N) / (t / S)
        (2, 2 * 15 / 16 / (2 * 7 / 8 / 450e9 + 2 * 1 / 2 / 8 / 50e9)),
        (4, 2 * 31 / 32 / (2 * 7 / 8 / 450e9 + 2 * 3 / 4 / 8 / 50e9)),
    ],
)
def test_hierarchical_busbw_by_hand(n_nodes, busbw):
    assert ct.hierarchical_busbw(n_nodes) == pytest.approx(busbw, rel=1e-12)
    assert ct.hierarchical_busbw(n_nodes, 1e6) == pytest.approx(busbw, rel=1e-12)


def test_bad_form_is_a_grading_error():
    with pytest.raises(GradingError, match="not a power of two"):
        ct.check_rabenseifner_all_reduce([], "a", 6)


def test_the_checks_keep_their_earlier_names():
    # the notebook calls "grading.collective_tasks.check_rabenseifner_all_reduce" and imports
    # from collectives.grading.collective_tasks
    # (a reload of collectives.grading leaves the compatibility module as it is: re-executed,
    # as a fresh import in a notebook would, it holds this module's objects)
    old = importlib.reload(collective_tasks)
    for name in ct.__all__:
        assert getattr(old, name) is getattr(ct, name)
    recheck(
        (
            "check_reference",
            (
                1.0,
                "r",
                "grading.collective_tasks.check_rabenseifner_all_reduce",
                (rabenseifner_steps(8), "r", 8),
            ),
        ),
        (
            "check_reference",
            (
                1.0,
                "r",
                "grading.tasks.all_reduce.check_rabenseifner_all_reduce",
                (rab_variant(8), "r", 8),
            ),
        ),
    )
