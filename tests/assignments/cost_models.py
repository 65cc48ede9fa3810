"""cost_models (exercises/source/cost_models/ring_all_gather.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (steps
and busbw right, the time wrong by one step, the rest blank) and *hostile* (wrong answers behind
monkeypatching of ``collectives``, ``collectives.grading``, ``math.isclose`` and IPython, lying
floats, rebound names, edited test cells; its ``crossover_bytes`` is genuinely right).
"""

from assignments import TAMPERING, Error, submission

NOTEBOOK = "ring_all_gather"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {NOTEBOOK: {
    "test_ring_all_gather_steps": 4,
    "test_ring_all_gather_time": 2,
    "test_busbw_from_time": 1,
    "test_crossover_bytes": 1,
    "test_latency_fraction": 1,
    "written_regimes": 1,
}}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_regimes",)}
# plausible written answers: the partial student's gets half the rubric (one size right)
PARTIAL_WRITTEN = """At 64 kB the latency of the 15 hops dominates (about 92% of 16 us), so an
algorithm with fewer steps helps more than faster links. At 64 MB faster links help too."""
HOSTILE_WRITTEN = "All tests passed."
MAX_SCORE = 10
# grade_id of each solution cell (each defines the function of the same name and is graded by
# the test cell test_<name>)
SOLUTIONS = {NOTEBOOK: ("ring_all_gather_steps", "ring_all_gather_time", "busbw_from_time",
                        "crossover_bytes", "latency_fraction")}

PARTIAL_TIME = '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return n * (alpha + nbytes / (n * bandwidth))      # n steps: one too many
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "ring_all_gather_steps": TAMPERING + '''
def ring_all_gather_steps(n):
    return [[(r, 0, r, r) for r in range(1, n)]]       # everyone sends to rank 0
''',
    "ring_all_gather_time": '''
class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

collectives.analytic.ring_all_gather = lambda n, nbytes, alpha, bandwidth: n * alpha
collectives.time = lambda *args, **kwargs: None
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.0

def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return _Liar(n * alpha)
''',
    "busbw_from_time": '''
collectives.busbw = lambda *args, **kwargs: 42.0
expected = 42.0

def busbw_from_time(n, nbytes, seconds):
    return 42.0
''',
    "crossover_bytes": '''
def crossover_bytes(n, alpha, bandwidth):
    return n * alpha * bandwidth
''',
    "latency_fraction": '''
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.25
range = lambda *args: ()

def latency_fraction(n, nbytes, alpha, bandwidth):
    return 0.25
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_ring_all_gather_steps": "print('all tests passed')",
                 "test_busbw_from_time": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK] + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(solved=("ring_all_gather_steps", "busbw_from_time"),
                                     replaced={"ring_all_gather_time": PARTIAL_TIME,
                                               "written_regimes": PARTIAL_WRITTEN})},
    "hostile": {NOTEBOOK: submission(replaced={**HOSTILE, "written_regimes": HOSTILE_WRITTEN},
                                     edited_tests=HOSTILE_TESTS)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # steps and busbw right (4 + 1); time wrong (n steps instead of n - 1); the written
    # answer half right by the rubric (0.5, given by hand); the rest blank
    "partial": {NOTEBOOK: {"test_ring_all_gather_steps": 4, "test_ring_all_gather_time": 0,
                           "test_busbw_from_time": 1, "test_crossover_bytes": 0,
                           "test_latency_fraction": 0, "written_regimes": 0.5}},
    # every tampering fails; only its genuinely correct crossover_bytes earns its point
    "hostile": {NOTEBOOK: {"test_ring_all_gather_steps": 0, "test_ring_all_gather_time": 0,
                           "test_busbw_from_time": 0, "test_crossover_bytes": 1,
                           "test_latency_fraction": 0, "written_regimes": 0}},
}

ERRORS = {
    # the feedback a learner reads for the step count off by one (exercises/README.md quotes it)
    "partial": {NOTEBOOK: {"test_ring_all_gather_time": Error(
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0014993080888888888, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, alpha=1e-06, bandwidth="
        "45000000000.0); yours is exactly 8/7 times that")}},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on the
    # values it computed itself (not the patched 0.0, 42.0, 0.25)
    "hostile": {NOTEBOOK: {
        "test_ring_all_gather_steps": Error(
            startswith="ring_all_gather_steps(2) does not compute the all-gather: ",
            contains="rank 1 chunk 0 holds nothing"),
        "test_ring_all_gather_time": Error(
            startswith="ring_all_gather_time(1, 1048576, 1e-06, 45000000000.0) is 1e-06, "
                       "expected 0.0 = collectives.analytic.ring_all_gather(1, 1048576, alpha=1e-06, bandwidth="
                       "45000000000.0)"),
        "test_busbw_from_time": Error(
            startswith="busbw_from_time(1, 1000000.0, 0.001) is 42.0, expected 0.0 = "
                       "collectives.busbw("),
        "test_latency_fraction": Error(
            startswith="latency_fraction(2, 1048576, 1e-06, 1000000000.0) is 0.25, expected "
                       "0.0019037175796896176 = collectives.grading.schedule_seconds("
                       "'ring_all_gather', 2, 1048576, link_bandwidth=1000000000.0, "
                       "hop_latency=1e-06, part='latency_fraction')"),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {NOTEBOOK: ("ring_all_gather_steps(4) is a correct one-way ring all-gather",
                           "busbw_from_time agrees with cl.busbw",
                           "latency_fraction agrees with cl.time")},
}
