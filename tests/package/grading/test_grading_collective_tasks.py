"""collectives.grading.collective_tasks: the checks of the all-reduce, all-to-all and cost-model
notebooks (exercises/source/all_reduce, exercises/source/all_to_all,
exercises/source/cost_models). Each check must accept every
correct answer of the kind its task describes (the textbook shape and another) and reject the
plausible wrong ones, with a message that says why. The answers are written here from the
algorithms' definitions, not with the package; the expected busbw is derived by hand.
The pipeline test (tests/course/test_grading_pipeline.py -k all_reduce / -k all_to_all) runs the
same checks end to end through nbgrader.
"""

import pytest

from collectives import GradingError
from collectives.grading import check_reference, collective_tasks as ct, recheck

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
            step += [(r, p, c, c, "reduce") for c in range(n)
                     if c % d == r % d and (c & d) == (p & d)]
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
    n = g * N
    # chunk p * N + j: block p (kept by local p), piece j (for the ring along the rail)
    steps = []
    def block(p):
        return range(p * N, p * N + N)
    for s in range(g - 1):       # ring reduce-scatter inside each node
        step = []
        for node in range(N):
            for l in range(g):
                p = (l - s - 1) % g
                step += [(node * g + l, node * g + (l + 1) % g, c, c, "reduce") for c in block(p)]
        steps.append(step)
    # now local l holds block l summed over its node
    if N > 1:
        for s in range(N - 1):   # ring reduce-scatter along each rail
            step = []
            for l in range(g):
                for node in range(N):
                    j = (node - s - 1) % N
                    c = l * N + j
                    step.append((node * g + l, ((node + 1) % N) * g + l, c, c, "reduce"))
            steps.append(step)
        for s in range(N - 1):   # ring all-gather along each rail
            step = []
            for l in range(g):
                for node in range(N):
                    j = (node - s) % N
                    c = l * N + j
                    step.append((node * g + l, ((node + 1) % N) * g + l, c, c, "copy"))
            steps.append(step)
    for s in range(g - 1):       # ring all-gather inside each node
        step = []
        for node in range(N):
            for l in range(g):
                p = (l - s) % g
                step += [(node * g + l, node * g + (l + 1) % g, c, c, "copy") for c in block(p)]
        steps.append(step)
    return steps

def bruck_steps(n):
    if n == 1:
        return []
    rotate = [(r, r, (r + i) % n, i) for r in range(n) for i in range(n) if (r + i) % n != i]
    steps = [rotate]
    b = 0
    while (1 << b) < n:
        steps.append([(r, (r + (1 << b)) % n, i, i) for r in range(n) for i in range(n)
                      if i & (1 << b)])
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
    steps.append([(r, r, (r + s) % n, (r - s) % n) for r in range(n) for s in range(1, n)
                  if (r + s) % n != (r - s) % n])
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


def rab_doubling(n):   # recursive doubling: whole buffer, log n steps
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
    while d >= 1:     # doubling from the far distance first
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
        steps.append([(r, (r + 1) % n, (r - s - 1) % n, (r - s - 1) % n, "reduce")
                      for r in range(n)])
    for s in range(n - 1):
        steps.append([(r, (r + 1) % n, (r - s) % n, (r - s) % n, "copy") for r in range(n)])
    return steps

def leader(n_nodes):
    # reduce to local GPU 0 of each node, all-reduce between GPU 0s, broadcast in the node
    N, n = n_nodes, 8 * n_nodes
    steps = [[(node * 8 + l, node * 8, c, c, "reduce")
              for node in range(N) for l in range(1, 8) for c in range(n)]]
    for s in range(N - 1):
        steps.append([(node * 8, (node + 1) % N * 8, c, c, "reduce") for node in range(N)
                      for c in range(n) if c % N == (node - s - 1) % N])
    for s in range(N - 1):
        steps.append([(node * 8, (node + 1) % N * 8, c, c, "copy") for node in range(N)
                      for c in range(n) if c % N == (node - s) % N])
    steps.append([(node * 8, node * 8 + l, c, c, "copy")
                  for node in range(N) for l in range(1, 8) for c in range(n)])
    return steps

def direct_a2a(n):
    return [[(s, d, d, s) for s in range(n) for d in range(n) if s != d]] if n > 1 else []


def pairwise_slot_r(n):   # receive straight into slot r: overwritten before it is sent
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


# ---- Rabenseifner -------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32])
def test_rabenseifner_accepts_both_halving_orders(n):
    assert ct.check_rabenseifner_all_reduce(rabenseifner_steps(n), "a", n) == 1.0
    assert ct.check_rabenseifner_all_reduce(rab_variant(n), "a", n) == 1.0


@pytest.mark.parametrize("n", [4, 8])
def test_rabenseifner_rejects_wrong_answers(n):
    _fails(ct.check_rabenseifner_all_reduce, rab_doubling(n), n,
           match=r"in \d steps that move data between ranks; Rabenseifner's takes 2 log2")
    # the right step count, by padding recursive doubling: too many bytes
    _fails(ct.check_rabenseifner_all_reduce, rab_doubling_padded(n), n,
           match=rf"rank 0 sends {2 * n * n.bit_length() - 2 * n} chunks in all; .* "
                 rf"2\(n - 1\) = {2 * (n - 1)}")
    _fails(ct.check_rabenseifner_all_reduce, rab_gather_wrong_order(n), n,
           match="does not compute the all-reduce")


# ---- the hierarchical all-reduce on DGX H100 nodes ----------------------------------------

@pytest.mark.parametrize("n_nodes", [1, 2, 3, 4])
def test_hierarchical_accepts_the_two_level_ring(n_nodes):
    assert ct.check_hierarchical_all_reduce(hierarchical_steps(n_nodes), "a", n_nodes,
                                            2**30) == 1.0


def test_hierarchical_rejects_slow_correct_all_reduces():
    # a flat ring over 16 GPUs: 30 steps of S/16 through a 50 GB/s NIC = 0.0375 S / 1e9 s
    # against 2 * 7/8 S / 450e9 + 2 * 1/2 * S/8 / 50e9 = 6.389e-12 S: 5.87 times
    _fails(ct.check_hierarchical_all_reduce, flat_ring(2), 2, 2**30,
           match=r"takes 0\.0402653184 s for 1073741824 bytes \(leaf .*\), 5\.87 times the "
                 r"0\.006860017208888889 s")
    _fails(ct.check_hierarchical_all_reduce, leader(3), 3, 2**30, match="8 times the")
    _fails(ct.check_hierarchical_all_reduce, rabenseifner_steps(16)[:4], 2, 2**30,
           match="does not compute the all-reduce")


@pytest.mark.parametrize("n_nodes, busbw", [
    (1, 450e9),                                                   # NVLink alone
    # t / S = 2 (7/8) / 450e9 + 2 (N-1)/N (1/8) / 50e9; busbw = 2 (8N-1)/(8N) / (t / S)
    (2, 2 * 15 / 16 / (2 * 7 / 8 / 450e9 + 2 * 1 / 2 / 8 / 50e9)),
    (4, 2 * 31 / 32 / (2 * 7 / 8 / 450e9 + 2 * 3 / 4 / 8 / 50e9)),
])
def test_hierarchical_busbw_by_hand(n_nodes, busbw):
    assert ct.hierarchical_busbw(n_nodes) == pytest.approx(busbw, rel=1e-12)
    assert ct.hierarchical_busbw(n_nodes, 1e6) == pytest.approx(busbw, rel=1e-12)


# ---- all-to-all ----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 13, 16])
def test_bruck_accepts_rotations_apart_or_folded(n):
    assert ct.check_bruck_all_to_all(bruck_steps(n), "a", n) == 1.0
    assert ct.check_bruck_all_to_all(bruck_folded(n), "a", n) == 1.0


def bruck_backwards(n):
    # sends 2**b ranks behind, although slot i holds the part for i ranks ahead
    steps = bruck_steps(n)
    return [steps[0]] + [[(r, (2 * r - d) % n, a, b) for r, d, a, b in step]
                         for step in steps[1:-1]] + [steps[-1]]


def test_bruck_rejects_other_all_to_alls():
    _fails(ct.check_bruck_all_to_all, bruck_backwards(5), 5,
           match="does not compute the all-to-all")
    _fails(ct.check_bruck_all_to_all, direct_a2a(5), 5,
           match=r"in 1 step that move data between ranks; Bruck's algorithm exchanges in "
                 r"ceil\(log2 n\) = 3")
    # pairwise for n = 4 has 3 steps; Bruck's 2
    _fails(ct.check_bruck_all_to_all, pairwise_steps(4), 4, match=r"in 3 steps")
    # two steps of distance 1 on 3 ranks (a relay): the second power of two is missing
    relay = [[(r, r, (r + i) % 3, i) for r in range(3) for i in range(3) if (r + i) % 3 != i],
             [(r, (r + 1) % 3, i, i) for r in range(3) for i in (1, 2)],
             [(r, (r + 1) % 3, 2, 2) for r in range(3)],
             [(r, r, i, (r - i) % 3) for r in range(3) for i in range(3) if (r - i) % 3 != i]]
    _fails(ct.check_bruck_all_to_all, relay, 3, match="rank 0 sends 2 parts 1 ranks away")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12])
def test_pairwise_accepts_any_n_in_n_minus_1_steps(n):
    assert ct.check_pairwise_all_to_all(pairwise_steps(n), "a", n) == 1.0
    if n & (n - 1) == 0:
        assert ct.check_pairwise_all_to_all(pairwise_xor(n), "a", n) == 1.0


def test_pairwise_rejects_wrong_answers():
    _fails(ct.check_pairwise_all_to_all, pairwise_slot_r(5), 5,
           match="does not compute the all-to-all")
    _fails(ct.check_pairwise_all_to_all, pairwise_xor(6), 6, match="is not a rank")
    _fails(ct.check_pairwise_all_to_all, direct_a2a(4), 4,
           match=r"in 1 step that move data between ranks; pairwise exchange takes n - 1 = 3")
    _fails(ct.check_pairwise_all_to_all, bruck_steps(8), 8, match=r"in 3 steps")


@pytest.mark.parametrize("n", range(1, 12))
def test_chain_accepts_farthest_first(n):
    assert ct.check_chain_all_to_all(chain_steps(n), "a", n) == 1.0


def test_chain_rejects_wrong_answers():
    _fails(ct.check_chain_all_to_all, chain_nearest(6), 6,
           match=r"in 11 steps that move data; the cut bound is floor\(n\*\*2 / 4\) = 9")
    _fails(ct.check_chain_all_to_all, chain_fifo(8), 8, match=r"in 19 steps")
    # the relay: every waiting part moves at once
    _fails(ct.check_chain_all_to_all, direct_a2a(3), 3,
           match="sends from rank 0 to rank 2 .* only to its neighbours")
    two_parts = [[(0, 1, 1, 3 + 3 * 0 + 1), (0, 1, 2, 3 + 3 * 0 + 2)]]
    _fails(ct.check_chain_all_to_all, two_parts, 3,
           match="the link from rank 0 to rank 1 carries 2 parts")


def test_bad_form_is_a_grading_error():
    with pytest.raises(GradingError, match="is None"):
        ct.check_chain_all_to_all(None, "chain_steps(4)", 4)
    with pytest.raises(GradingError, match="n must be an int >= 1"):
        ct.check_bruck_all_to_all([], "a", 0)
    with pytest.raises(GradingError, match="not a power of two"):
        ct.check_rabenseifner_all_reduce([], "a", 6)


def test_runs_by_name_in_the_recheck():
    recheck(("check_reference", (1.0, "a", "grading.collective_tasks.check_bruck_all_to_all",
                                 (bruck_folded(6), "a", 6))))
    with pytest.raises(AssertionError, match="in 1 step"):
        recheck(("check_reference", (1.0, "d", "grading.collective_tasks.check_bruck_all_to_all",
                                     (direct_a2a(6), "d", 6))))
    check_reference(1.0, "a", "grading.collective_tasks.check_chain_all_to_all",
                    (chain_steps(5), "a", 5))


# ---- cost models: fit, largest ring, better upgrade (exercises/source/cost_models) ----------

# Two nccl-tests rows (size, us) of a ring all-gather over 4 ranks, 2 us per step, 1e9 B/s, by
# hand from (n - 1)(alpha + S / (n B)): S = 4e3 -> 3 (2e-6 + 1e-6) = 9 us; S = 4e6 ->
# 3 (2e-6 + 1e-3) = 3006 us.
ROWS = [(4e3, 9.0), (4e6, 3006.0)]


def test_ring_fit_accepts_the_ring_it_was_timed_on():
    assert ct.check_ring_fit((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9) == 1.0
    assert ct.check_ring_fit([2e-6 * (1 + 1e-8), 1e9], "fit", 4, ROWS[::-1], 2e-6, 1e9) == 1.0
    # one DGX H100 node, 1 us a link: a step crosses two, 2 us; S = 8e3 -> 7 (2e-6 + 1e3 / 450e9)
    rows = [(s, 7 * (2e-6 + s / 8 / 450e9) * 1e6) for s in (8e3, 8e8)]
    assert ct.check_ring_fit((2e-6, 450e9), "fit", 8, rows, 2e-6, 450e9, system="dgx-h100") == 1.0


def test_ring_fit_names_the_slip():
    # the whole intercept 3 alpha for alpha; algbw's 1 / slope = n B / (n - 1); microseconds
    for answer, text in (((6e-6, 1e9), "the alpha of fit is 6e-06 s, expected 2e-06 s (the "
                                       "latency of one step of the ring these rows were timed "
                                       "on by cl.time); yours is exactly 3 times that"),
                         ((2e-6, 4e9 / 3), "the bandwidth of fit is 1333333333.3333333 B/s, "
                                           "expected 1000000000.0 B/s (the bytes/s of one link "
                                           "of the ring these rows were timed on by cl.time); "
                                           "yours is exactly 4/3 times that"),
                         ((2.0, 1e3), "yours is 10**6 times that: a unit prefix (M, micro)?")):
        with pytest.raises(AssertionError) as info:
            ct.check_ring_fit(answer, "fit", 4, ROWS, 2e-6, 1e9)
        assert text in str(info.value)


def test_ring_fit_form_and_test_bugs():
    for answer in (2e-6, (2e-6,), "2e-6, 1e9", None):
        with pytest.raises(GradingError, match=r"should be a pair \(alpha, bandwidth\)"):
            ct.check_ring_fit(answer, "fit", 4, ROWS, 2e-6, 1e9)
    with pytest.raises(GradingError, match="is not cl.time's"):
        ct.check_ring_fit((2e-6, 1e9), "fit", 4, [(4e3, 9.5), (4e6, 3006.0)], 2e-6, 1e9)
    with pytest.raises(GradingError, match="a DGX H100 node has 8 GPUs"):
        ct.check_ring_fit((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9, system="dgx-h100")


# By hand, (n - 1) alpha + (S / B)(n - 1) / n <= t: no bytes, 1 us a step, 7.5 us -> 8 ranks;
# 2 GB at 1 GB/s in 1 s: two ranks already take 1 s + 1 us -> 1 rank; 1 MB at 1 GB/s, 10 us a
# step, 1.1 ms: 16 ranks take 150 us + 937.5 us = 1.0875 ms, 17 take 160 + 941.2 = 1101.2 us.
@pytest.mark.parametrize("case, n", [((0.0, 1e-6, 1e9, 7.5e-6), 8), ((2e9, 1e-6, 1e9, 1.0), 1),
                                     ((1e6, 1e-5, 1e9, 1.1e-3), 16)])
def test_largest_ring_by_hand(case, n):
    assert ct.largest_ring_within(*case) == n
    assert ct.check_largest_ring(n, "r", *case) == 1.0
    with pytest.raises(AssertionError, match=rf"^r is {n + 1}, but the answer is {n}: a ring "
                                             rf"all-gather over {n + 1} ranks takes .* more than"):
        ct.check_largest_ring(n + 1, "r", *case)


def test_largest_ring_form_and_test_bugs():
    with pytest.raises(GradingError, match=r"should be an int >= 1 .* \(use // or int\(...\)\)"):
        ct.check_largest_ring(16.0, "r", 1e6, 1e-5, 1e9, 1.1e-3)
    for answer in (True, 0, None):
        with pytest.raises(GradingError, match="should be an int >= 1"):
            ct.check_largest_ring(answer, "r", 1e6, 1e-5, 1e9, 1.1e-3)
    with pytest.raises(GradingError, match="may grow forever"):
        ct.largest_ring_within(1e6, 0.0, 1e9, 1e-3)


# By hand, on 2 ranks, 1 us a step, 1e9 B/s, x2 each: hops save 0.5 us; links save
# S / (2B) / 2, 0.25 us at 1 kB, 2.5 us at 10 kB, 0.5 us at 2 kB (a tie). With hops x10 and
# links x1.1 at 10 kB: 0.9 us against 5 us x (1 - 1/1.1) = 0.45 us.
@pytest.mark.parametrize("case, answer", [((2, 1e3, 1e-6, 1e9, 2, 2), "latency"),
                                          ((2, 1e4, 1e-6, 1e9, 2, 2), "bandwidth"),
                                          ((2, 1e4, 1e-6, 1e9, 10, 1.1), "latency")])
def test_better_upgrade_by_hand(case, answer):
    assert ct.better_upgrade(*case) == answer
    assert ct.check_better_upgrade(answer, "u", *case) == 1.0
    other = "latency" if answer == "bandwidth" else "bandwidth"
    with pytest.raises(AssertionError, match=rf"^u is '{other}', but the answer is '{answer}': "
                                             r"by cl.time the ring all-gather takes "):
        ct.check_better_upgrade(other, "u", *case)


def test_better_upgrade_form_and_ties():
    with pytest.raises(GradingError, match="a tie"):
        ct.better_upgrade(2, 2e3, 1e-6, 1e9, 2, 2)
    with pytest.raises(GradingError, match="should be a string"):
        ct.check_better_upgrade(None, "u", 2, 1e3, 1e-6, 1e9, 2, 2)
    with pytest.raises(AssertionError, match="not one of the choices"):
        ct.check_better_upgrade("hops", "u", 2, 1e3, 1e-6, 1e9, 2, 2)


def test_cost_model_checks_run_by_name_in_the_recheck():
    recheck(("check_reference", (1.0, "fit", "grading.collective_tasks.check_ring_fit",
                                 ((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9))),
            ("check_reference", (1.0, "r", "grading.collective_tasks.check_largest_ring",
                                 (16, "r", 1e6, 1e-5, 1e9, 1.1e-3))))
    with pytest.raises(AssertionError, match="but the answer is 'latency'"):
        recheck(("check_reference", (1.0, "u", "grading.collective_tasks.check_better_upgrade",
                                     ("bandwidth", "u", 2, 1e3, 1e-6, 1e9, 2, 2))))
