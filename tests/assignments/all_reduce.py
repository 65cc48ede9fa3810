"""all_reduce (exercises/source/all_reduce/rabenseifner_all_reduce.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial*
(Rabenseifner's steps and time right, recursive doubling's time wrong by sending a chunk
instead of the whole buffer, the crossover and the chooser blank) and *hostile* (wrong answers
behind monkeypatching of ``collectives``, ``collectives.grading``, ``math.isclose`` and IPython,
lying floats, rebound names, edited test cells; its ``recursive_doubling_time`` is genuinely
right).
"""

from assignments import TAMPERING, Error, submission

NOTEBOOK = "rabenseifner_all_reduce"

# grade_id of each autograded test cell -> its points
POINTS = {NOTEBOOK: {
    "test_rabenseifner_steps": 4,
    "test_rabenseifner_time": 2,
    "test_recursive_doubling_time": 1,
    "test_crossover_bytes": 1,
    "test_fastest_all_reduce": 2,
}}
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {NOTEBOOK: ("rabenseifner_steps", "rabenseifner_time", "recursive_doubling_time",
                        "crossover_bytes", "fastest_all_reduce")}

PARTIAL_RD_TIME = '''
def recursive_doubling_time(n, nbytes, alpha, bandwidth):
    log_n = n.bit_length() - 1
    return log_n * (alpha + nbytes / (n * bandwidth))   # one chunk per step, not the buffer
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "rabenseifner_steps": TAMPERING + '''
def rabenseifner_steps(n):
    # one step in which every rank adds its buffer into its right neighbour's
    return [[(r, (r + 1) % n, c, c, "reduce") for r in range(n) for c in range(n)]]
''',
    "rabenseifner_time": '''
class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

collectives.analytic.rabenseifner_all_reduce = lambda n, nbytes, alpha, bandwidth: n * alpha
collectives.time = lambda *args, **kwargs: None
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.0

def rabenseifner_time(n, nbytes, alpha, bandwidth):
    return _Liar(n * alpha)
''',
    # genuinely right, in a way of its own
    "recursive_doubling_time": '''
import math

def recursive_doubling_time(n, nbytes, alpha, bandwidth):
    steps = round(math.log(n, 2)) if n > 1 else 0
    return steps * alpha + steps * nbytes / bandwidth
''',
    "crossover_bytes": '''
collectives.analytic.recursive_doubling_all_reduce = collectives.analytic.rabenseifner_all_reduce
_expected = expected = 42.0

def crossover_bytes(n, alpha, bandwidth):
    return 42.0
''',
    "fastest_all_reduce": '''
class _Choice:
    name = "ring_all_reduce"

collectives.algorithms.fastest = lambda *args, **kwargs: _Choice()
range = lambda *args: ()

def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    return "ring_all_reduce"
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_rabenseifner_steps": "print('all tests passed')",
                 "test_fastest_all_reduce": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(solved=("rabenseifner_steps", "rabenseifner_time"),
                                     replaced={"recursive_doubling_time": PARTIAL_RD_TIME})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # steps and Rabenseifner's time right (4 + 2); recursive doubling's time wrong; rest blank
    "partial": {NOTEBOOK: {"test_rabenseifner_steps": 4, "test_rabenseifner_time": 2,
                           "test_recursive_doubling_time": 0, "test_crossover_bytes": 0,
                           "test_fastest_all_reduce": 0}},
    # every tampering fails; only its genuinely correct recursive_doubling_time earns its point
    "hostile": {NOTEBOOK: {"test_rabenseifner_steps": 0, "test_rabenseifner_time": 0,
                           "test_recursive_doubling_time": 1, "test_crossover_bytes": 0,
                           "test_fastest_all_reduce": 0}},
}

ERRORS = {
    # 3 steps of 2 us plus 1000 bytes (one chunk) instead of 8000 (the buffer) over 450 GB/s
    "partial": {NOTEBOOK: {"test_recursive_doubling_time": Error(
        startswith="recursive_doubling_time(8, 8e3, 2e-6, 450e9) is 6.006666666666666e-06, "
                   "expected 6.053333333333333e-06 = collectives.grading.schedule_seconds(",
        contains=("8, 8000.0, topology=", "(relative error 0.00771)"))}},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts
    "hostile": {NOTEBOOK: {
        "test_rabenseifner_steps": Error(
            startswith="rabenseifner_steps(1) does not compute the all-reduce: ",
            contains="would count rank 0 twice"),
        "test_rabenseifner_time": Error(
            startswith="rabenseifner_time(1, 1048576, 1e-06, 45000000000.0) is 1e-06, expected "
                       "0.0 = collectives.analytic.rabenseifner_all_reduce(1, 1048576, alpha=1e-06, bandwidth="
                       "45000000000.0)"),
        "test_crossover_bytes": Error(
            "crossover_bytes(4, 2e-06, 450000000000.0) is 42.0, expected 3600000.0; yours is "
            "1.16667e-05 times that"),
        "test_fastest_all_reduce": Error(
            "fastest_all_reduce(2, 1000000000.0, 2e-06, 450000000000.0) is 'ring_all_reduce', "
            "but the answer is 'recursive_doubling_all_reduce'"),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {NOTEBOOK: (
        "rabenseifner_steps(4) and rabenseifner_steps(8) are correct all-reduces",
        "rabenseifner_time agrees with the closed form and with cl.time.",
        "both algorithms take the same time.",
        "fastest_all_reduce picks what cl.algorithms.fastest picks.",
    )},
}
