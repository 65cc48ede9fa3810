"""all_gather_reduce_scatter (exercises/source/all_gather_reduce_scatter/rings_and_duality.ipynb,
10 points): what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (the
bidirectional ring and the torus time right, a ``dual`` that forgets to reverse the order of the
steps, the choice blank), *visible_only* (answers that pass every visible test but fail hidden
ones: a torus time that treats axes of size 1 like axes of size 2, a choice by a fixed size
threshold) and *hostile* (wrong answers behind monkeypatching of ``collectives``,
``collectives.grading``, ``math.isclose``, builtins the visible tests use and IPython, lying floats,
edited test cells; its choice of algorithm is genuinely right).
"""

from assignments import Error, submission

NOTEBOOK = "rings_and_duality"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {NOTEBOOK: {
    "test_bidirectional_ring_all_gather_steps": 3,
    "test_dual": 3,
    "test_torus_all_gather_time": 2,
    "test_faster_all_gather_on_ring": 2,
}}
MAX_SCORE = 10
# each solution cell defines the function of its name, graded by the test cell test_<name>
SOLUTIONS = {NOTEBOOK: ("bidirectional_ring_all_gather_steps", "dual", "torus_all_gather_time",
                        "faster_all_gather_on_ring")}

# Reversed transfers, but the steps in their original order: the partial sums start moving
# before they have been formed.
PARTIAL_DUAL = '''
def dual(steps):
    return [[(dst, src, dst_chunk, src_chunk, "reduce") for src, dst, src_chunk, dst_chunk in step]
            for step in steps]
'''

# Right for every shape the visible tests use, wrong for axes of size 1 (treated like size 2).
VISIBLE_ONLY_TORUS = '''
def torus_all_gather_time(shape, nbytes, alpha, bandwidth):
    n = 1
    for m in shape:
        n *= m
    seconds, gathered = 0.0, 1
    for m in shape:
        gathered *= m
        buffer = nbytes * gathered / n
        if m <= 2:
            seconds += alpha + buffer / (2 * bandwidth)
        else:
            seconds += (m - 1) * (alpha + buffer / (2 * m * bandwidth))
    return seconds
'''

# A rule of thumb instead of the two costs: right for 8 chips, wrong for 3.
VISIBLE_ONLY_CHOICE = '''
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    return "direct_all_gather" if nbytes < 1e6 else "bidirectional_ring_all_gather"
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "bidirectional_ring_all_gather_steps": '''
import builtins
import math
import sys
import types
import collectives
import collectives.analytic
import collectives.grading
import collectives.transforms

def _always_pass(*args, **kwargs):
    return None

class _Equal(list):
    def __eq__(self, other):
        return True

_real_time = collectives.time

def _tamper():
    """Disable every check in reach (again: each hidden test reloads collectives.grading)."""
    global check_schedule, check_close, check_reference, check_choice
    collectives.verify = _always_pass
    collectives.simulate = lambda schedule, inputs: inputs
    collectives.transforms.dual = lambda schedule, **kwargs: schedule
    collectives.analytic.torus_all_gather = lambda *args, **kwargs: 1.0
    # cl.time says 1 s on every torus (and tells the truth elsewhere)
    collectives.time = lambda schedule, topology, nbytes: (
        types.SimpleNamespace(seconds=1.0) if topology.kind == "torus"
        else _real_time(schedule, topology, nbytes))
    for module in [collectives.grading] + [m for key, m in list(sys.modules.items())
                                           if key.startswith("collectives.grading.")]:
        for name in dir(module):
            if name.startswith("check") or name in ("recheck", "call", "_compare"):
                setattr(module, name, _always_pass)
    check_schedule = check_close = check_reference = check_choice = _always_pass
    math.isclose = lambda *args, **kwargs: True

_tamper()
sorted = lambda *args, **kwargs: _Equal()     # the visible direction check compares sorted(...)
get_ipython().showtraceback = lambda *args, **kwargs: None
get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)

def bidirectional_ring_all_gather_steps(n):
    # a correct all-gather, but both halves travel forward: one direction of every link idles
    return [[(r, (r + 1) % n, 2 * ((r - s) % n) + h, 2 * ((r - s) % n) + h)
             for r in range(n) for h in (0, 1)] for s in range(n - 1)]
''',
    "dual": '''
_tamper()

def dual(steps):
    # copies instead of additions: every copy overwrites the receiver's contribution
    return [[(dst, src, dst_chunk, src_chunk, "copy") for src, dst, src_chunk, dst_chunk, *_ in step]
            for step in reversed(steps)]
''',
    "torus_all_gather_time": '''
_tamper()

class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

range = lambda *args: ()
expected = 1.0

def torus_all_gather_time(shape, nbytes, alpha, bandwidth):
    return _Liar(1.0)
''',
    "faster_all_gather_on_ring": '''
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    ring = (n - 1) * (alpha + nbytes / (2 * n * bandwidth))
    busiest = n * (n + 2) / 8 if n % 2 == 0 else (n * n - 1) / 8
    direct = (n // 2) * alpha + busiest * nbytes / (n * bandwidth)
    return "direct_all_gather" if direct < ring else "bidirectional_ring_all_gather"
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_bidirectional_ring_all_gather_steps": "print('all tests passed')",
                 "test_torus_all_gather_time": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(
        solved=("bidirectional_ring_all_gather_steps", "torus_all_gather_time"),
        replaced={"dual": PARTIAL_DUAL})},
    "visible_only": {NOTEBOOK: submission(
        solved=("bidirectional_ring_all_gather_steps", "dual"),
        replaced={"torus_all_gather_time": VISIBLE_ONLY_TORUS,
                  "faster_all_gather_on_ring": VISIBLE_ONLY_CHOICE})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # ring and torus right (3 + 2); dual wrong; the choice blank
    "partial": {NOTEBOOK: {"test_bidirectional_ring_all_gather_steps": 3, "test_dual": 0,
                           "test_torus_all_gather_time": 2,
                           "test_faster_all_gather_on_ring": 0}},
    # ring and dual right (3 + 3); the other two pass their visible tests only
    "visible_only": {NOTEBOOK: {"test_bidirectional_ring_all_gather_steps": 3, "test_dual": 3,
                                "test_torus_all_gather_time": 0,
                                "test_faster_all_gather_on_ring": 0}},
    # every tampering fails; only its genuinely right choice earns its 2 points
    "hostile": {NOTEBOOK: {"test_bidirectional_ring_all_gather_steps": 0, "test_dual": 0,
                           "test_torus_all_gather_time": 0,
                           "test_faster_all_gather_on_ring": 2}},
}

ERRORS = {
    # the visible test explains the unreversed dual step by step against the correct one
    "partial": {NOTEBOOK: {"test_dual": Error(
        startswith="dual(ring all-gather of 4 ranks) does not compute the reduce-scatter: after "
                   "the last step, rank 0 chunk 0 holds chunk 0 summed over 2 of 4 ranks (0, 1); ",
        contains="Step by step against the reference dual(ring_all_gather): after step 0, rank 0 "
                 "chunk 0 holds chunk 0 summed over 2 of 4 ranks (0, 1); in the reference it "
                 "holds chunk 0 of rank 0.")}},
    "visible_only": {NOTEBOOK: {
        "test_torus_all_gather_time": Error(
            "torus_all_gather_time((1, 1), 1048576, 1e-06, 45000000000.0) is "
            "2.530168888888889e-05, expected 0.0 = collectives.analytic.torus_all_gather((1, 1), "
            "1048576, alpha=1e-06, bandwidth=45000000000.0)"),
        # (in fragments without quotes: the feedback HTML shows quotes unescaped)
        "test_faster_all_gather_on_ring": Error(
            startswith="faster_all_gather_on_ring(3, 1000000000.0, 1e-06, 45000000000.0) is ",
            contains=("bidirectional_ring_all_gather", ", but the answer is ",
                      "direct_all_gather")),
    }},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts
    "hostile": {NOTEBOOK: {
        "test_bidirectional_ring_all_gather_steps": Error(
            startswith="bidirectional_ring_all_gather_steps(3) (odd slots, which must travel "
                       "backward, one per rank and step; checked as a forward ring after "
                       "renaming rank r to (n - r) % n and slot 2c + 1 to (n - c) % n): step 0 "
                       "sends from rank 0 to rank 2"),
        "test_dual": Error(
            "dual(ring all-gather of 2 ranks) does not compute the reduce-scatter: after the last "
            "step, rank 0 chunk 0 holds chunk 0 of rank 1; reduce_scatter needs chunk 0 summed "
            "over all 2 ranks there (last written at step 0)"),
        "test_torus_all_gather_time": Error(
            startswith="torus_all_gather_time((1, 1), 1048576, 1e-06, 45000000000.0) is 1.0, "
                       "expected 0.0 = collectives.analytic.torus_all_gather("),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {NOTEBOOK: (
        "bidirectional_ring_all_gather_steps is a correct bidirectional ring all-gather",
        "dual turns the ring and recursive-doubling all-gathers into correct reduce-scatters.",
        "torus_all_gather_time agrees with cl.time and the closed form.",
    )},
}
