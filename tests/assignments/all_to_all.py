"""all_to_all (exercises/source/all_to_all/bruck_all_to_all.ipynb, 10 points): what the pipeline
test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (Bruck's
steps and the Bruck-or-pairwise choice right, the dispatch time wrong by counting only what
ranks send, the bidirectional ring blank) and *hostile* (wrong answers behind monkeypatching of
``collectives``, ``collectives.grading``, ``math.isclose`` and IPython, lying floats, rebound
names, edited test cells; its ``bruck_or_pairwise`` is genuinely right).
"""

from assignments import TAMPERING, Error, submission

NOTEBOOK = "bruck_all_to_all"

# grade_id of each autograded test cell -> its points
POINTS = {NOTEBOOK: {
    "test_bruck_steps": 4,
    "test_bidirectional_ring_a2a_time": 2,
    "test_dispatch_time": 2,
    "test_bruck_or_pairwise": 2,
}}
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {NOTEBOOK: ("bruck_steps", "bidirectional_ring_a2a_time", "dispatch_time",
                        "bruck_or_pairwise")}

PARTIAL_DISPATCH = '''
def dispatch_time(counts, token_bytes, alpha, bandwidth):
    n = len(counts)
    sent = [sum(counts[s][d] for d in range(n) if d != s) for s in range(n)]
    if max(sent) == 0:
        return 0.0
    return alpha + max(sent) * token_bytes / bandwidth   # forgets what the ranks receive
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "bruck_steps": TAMPERING + '''
def bruck_steps(n):
    # a correct all-to-all, but the direct one: a single step, not Bruck's three phases
    return [[(s, d, d, s) for s in range(n) for d in range(n) if s != d]]
''',
    "bidirectional_ring_a2a_time": '''
class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

collectives.analytic.bidirectional_ring_all_to_all = collectives.analytic.ring_all_to_all
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.0

def bidirectional_ring_a2a_time(n, nbytes, alpha, bandwidth):
    # the one-way ring's time
    return _Liar((n - 1) * alpha + (n - 1) * nbytes / (2 * bandwidth))
''',
    "dispatch_time": '''
import types

collectives.time = lambda *args, **kwargs: types.SimpleNamespace(seconds=1e-6)
range = lambda *args: ()
_expected = expected = 1e-6

def dispatch_time(counts, token_bytes, alpha, bandwidth):
    return _Liar(1e-6)
''',
    # genuinely right, in a way of its own (without range, which the cell above rebinds)
    "bruck_or_pairwise": '''
def bruck_or_pairwise(n, nbytes, alpha, bandwidth):
    part = nbytes / n
    bruck, bit = 0.0, 1
    while bit < n:
        # slots i < n with this bit set: bit of every whole block of 2 * bit, plus the tail's
        sent = (n // (2 * bit)) * bit + max(0, n % (2 * bit) - bit)
        bruck += alpha + sent * part / bandwidth
        bit *= 2
    pairwise = (n - 1) * (alpha + part / bandwidth)
    return "bruck_all_to_all" if bruck < pairwise else "pairwise_all_to_all"
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_bruck_steps": "print('all tests passed')",
                 "test_dispatch_time": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(solved=("bruck_steps", "bruck_or_pairwise"),
                                     replaced={"dispatch_time": PARTIAL_DISPATCH})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # Bruck's steps and the choice right (4 + 2); the dispatch wrong; the ring blank
    "partial": {NOTEBOOK: {"test_bruck_steps": 4, "test_bidirectional_ring_a2a_time": 0,
                           "test_dispatch_time": 0, "test_bruck_or_pairwise": 2}},
    # every tampering fails; only its genuinely correct bruck_or_pairwise earns its points
    "hostile": {NOTEBOOK: {"test_bruck_steps": 0, "test_bidirectional_ring_a2a_time": 0,
                           "test_dispatch_time": 0, "test_bruck_or_pairwise": 2}},
}

ERRORS = {
    "partial": {NOTEBOOK: {"test_dispatch_time": Error(
        startswith="dispatch_time([[10, 3, 2, 1], [40, 5, 1, 2], [35, 4, 6, 0], [50, 2, 2, 3]], "
                   "8192, 2e-06, 450000000000.0) is ")}},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts
    "hostile": {NOTEBOOK: {
        "test_bruck_steps": Error(
            "bruck_steps(2) computes the all-to-all, but in 1 step that moves data; this "
            "exercise expects 3"),
        "test_bidirectional_ring_a2a_time": Error(
            startswith="bidirectional_ring_a2a_time(3, 3000000.0, 2e-06, 25000000000.0) is "),
        "test_dispatch_time": Error(
            startswith="dispatch_time([[62, 29, 24, 13], [69, 23, 23, 13], [61, 36, 19, 12], "
                       "[70, 25, 21, 12]], 8192, 2e-06, 450000000000.0) is 1e-06, expected "),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {NOTEBOOK: (
        "bruck_steps(4) and bruck_steps(5) are correct all-to-alls",
        "bidirectional_ring_a2a_time agrees with the closed form and with cl.time.",
        "dispatch_time agrees with cl.time.",
    )},
}
