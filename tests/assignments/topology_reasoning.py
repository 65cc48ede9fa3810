"""topology_reasoning (exercises/source/topology_reasoning/topology_reasoning.ipynb, 10 points):
what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``, collectives.grading.isolation). Submissions, besides
the four every spec has:

- *correct* (every solution), *blank* (the release as handed out);
- *partial*: hops, diameter and the v5e all-gather right, the bisection without the factor 2
  of wraparound, the rest blank (1 + 1 + 2 = 4);
- *hostile*: wrong answers behind monkeypatching of ``collectives``, ``collectives.grading``
  (its references and ``run_isolated`` included: each cell patches what its own visible test
  reads, since every hidden test before it reloads the package), ``math.isclose`` and
  IPython, lying ints, tuples and strings, rebound names, edited test cells, and a package
  shortcut whose visible test it fools; its ``slice_hops`` is genuinely right (1);
- *wrong*: one plausible wrong answer per task (wraparound forgotten, a chain's length counted
  in chips, the cut always across the longest axis, every v5e axis taken to wrap, the squarest
  slice, the heavier traffic on the wraparound): 0;
- *variant*: every answer right but written differently (numpy instead of loops, the farthest
  chip from chip 0, helpers and constants of its own, a list for a shape, closed forms instead
  of the Task 3 function): 10;
- *shortcut*: every answer computed by calling the package, in each way a learner might (the
  notebook's ``cl``, ``from collectives... import``, ``import collectives`` inside the
  function, ``importlib``, the package's own grading reference): 0, each cell failing with
  "this task must be solved without the collectives package".
"""

from assignments import TAMPERING, Error, submission, origin_attack

NOTEBOOK = "topology_reasoning"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {NOTEBOOK: {
    "test_slice_hops": 1,
    "test_slice_diameter": 1,
    "test_slice_bisection_bandwidth": 2,
    "test_v5e_axis_all_gather_seconds": 2,
    "test_best_v5e_slice_shape": 2,
    "test_wrapped_axis_for": 2,
}}
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {NOTEBOOK: ("slice_hops", "slice_diameter", "slice_bisection_bandwidth",
                        "v5e_axis_all_gather_seconds", "best_v5e_slice_shape",
                        "wrapped_axis_for")}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
          "that are graded")

# ---- partial ---------------------------------------------------------------------------------

PARTIAL_BISECTION = '''
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    chips = 1
    for size in shape:
        chips *= size
    # the cut across the longest axis crosses one link per line: the wraparound is forgotten
    return chips // max(shape) * link_bandwidth
'''

# ---- hostile ---------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    # genuinely right, with numpy, in the cell that disables every check in the kernel
    "slice_hops": TAMPERING + '''
import numpy as np

def slice_hops(shape, wraparound, a, b):
    d = np.abs(np.subtract(b, a))
    return int(np.where(wraparound, np.minimum(d, np.subtract(shape, d)), d).sum())
''',
    "slice_diameter": '''
import collectives.measures
collectives.measures.diameter = lambda topology: 0
collectives.grading.slice_diameter = lambda *args: 0

def slice_diameter(shape, wraparound):
    class _Liar(int):                  # equal to everything
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    return _Liar(0)
''',
    "slice_bisection_bandwidth": '''
range = lambda *args: ()
_checks = expected = _case = []
collectives.grading.slice_bisection_bandwidth = lambda *args: 1.0

def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    return 1.0
''',
    # the package's own answer: right in the kernel, so the visible test (its run_isolated
    # patched away) passes; the hidden re-run refuses the package
    "v5e_axis_all_gather_seconds": '''
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
collectives.grading.isolation.run_isolated = collectives.grading.run_isolated

def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    topo = cl.hardware.preset("tpu-v5e", shape=shape)
    schedule = cl.algorithms.torus_all_gather(shape, axes=(axis,), wraparound=topo.wraparound)
    return cl.time(schedule, topo, nbytes).seconds
''',
    "best_v5e_slice_shape": '''
collectives.grading.best_v5e_slice_shape = lambda *args: (3, 3)

def best_v5e_slice_shape(n_chips, nbytes):
    class _Shape(tuple):               # equal to every shape
        def __eq__(self, other):
            return True
        __hash__ = tuple.__hash__
    return _Shape((3, 3))
''',
    "wrapped_axis_for": '''
collectives.grading.wrapped_axis_for = lambda *args: "neither"
collectives.grading.check_choice = lambda *args, **kwargs: None

def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    class _Name(str):                  # equal to every name
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    return _Name("neither")
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_slice_hops": "print('all tests passed')",
                 "test_v5e_axis_all_gather_seconds": "pass"}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "slice_hops": '''
def slice_hops(shape, wraparound, a, b):
    return sum(abs(x - y) for x, y in zip(a, b))           # wraparound forgotten
''',
    "slice_diameter": '''
def slice_diameter(shape, wraparound):
    # a chain of n chips counted as n hops (it has n - 1 links)
    return sum(size // 2 if wraps else size for size, wraps in zip(shape, wraparound))
''',
    "slice_bisection_bandwidth": '''
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    # always the cut across the longest axis (right when every axis wraps, or none)
    axis = max(range(len(shape)), key=lambda a: shape[a])
    chips = 1
    for size in shape:
        chips *= size
    per_line = 2 if wraparound[axis] and shape[axis] > 2 else 1
    return chips // shape[axis] * per_line * link_bandwidth
''',
    "v5e_axis_all_gather_seconds": '''
def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    m = shape[axis]
    # every axis taken to wrap around: a bidirectional ring even along 8 chips
    return (m - 1) * (1e-6 + nbytes / (2 * m * 4.5e10))
''',
    "best_v5e_slice_shape": '''
def best_v5e_slice_shape(n_chips, nbytes):
    # the squarest slice, whatever the buffer
    rows = 1
    while rows * rows * 4 <= n_chips:
        rows *= 2
    return (rows, n_chips // rows)
''',
    "wrapped_axis_for": '''
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    # the axis with more bytes per step gets the wraparound (latency forgotten)
    return "data" if grad_bytes >= n_gathers * gather_bytes else "model"
''',
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "slice_hops": '''
import numpy as np

def slice_hops(shape, wraparound, a, b):
    d = np.abs(np.array(b) - np.array(a))
    return int(np.where(wraparound, np.minimum(d, np.array(shape) - d), d).sum())
''',
    "slice_diameter": '''
def slice_diameter(shape, wraparound):
    # the farthest chip from chip 0 (a torus looks the same from every chip, and a chain's
    # far end is as far as it gets), found among all chips with numpy
    coords = np.indices(shape).reshape(len(shape), -1)
    size = np.array(shape)[:, None]
    wraps = np.array(wraparound)[:, None]
    return int(np.where(wraps, np.minimum(coords, size - coords), coords).sum(axis=0).max())
''',
    "slice_bisection_bandwidth": '''
import math

def _links_across(shape, wraparound, axis):
    lines = math.prod(shape) // shape[axis]
    return lines * (2 if wraparound[axis] and shape[axis] > 2 else 1)

def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    axes = [axis for axis, size in enumerate(shape) if size > 1]
    return link_bandwidth * min(_links_across(shape, wraparound, axis) for axis in axes)
''',
    "v5e_axis_all_gather_seconds": '''
V5E_LINK_BANDWIDTH = 4.5e10       # bytes/s per link direction
V5E_HOP_LATENCY = 1e-6            # seconds per step
V5E = {"full_axis": 16}

def _v5e_wraps(size):
    return size == V5E["full_axis"]

def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    m = shape[axis]
    directions = 2 if _v5e_wraps(m) else 1
    seconds = 0.0
    for step in range(m - 1):
        seconds += V5E_HOP_LATENCY + nbytes / m / directions / V5E_LINK_BANDWIDTH
    return seconds
''',
    "best_v5e_slice_shape": '''
import itertools

def best_v5e_slice_shape(n_chips, nbytes):
    timed = []
    for rows, cols in itertools.product((1, 2, 4, 8, 16), repeat=2):
        if rows * cols != n_chips or rows > cols:
            continue
        shape = (rows, cols)
        orders = [(0, 1), (1, 0)]
        gathers = [v5e_axis_all_gather_seconds(shape, a, nbytes / shape[b])
                   + v5e_axis_all_gather_seconds(shape, b, nbytes) for a, b in orders]
        timed.append((2 * min(gathers), [rows, cols]))
    return min(timed)[1]                  # a list: [rows, cols]
''',
    "wrapped_axis_for": '''
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    alpha, bandwidth = 1e-6, 4.5e10
    def ring_16(s):                        # bidirectional ring of 16 chips
        return 15 * (alpha + s / (2 * 16 * bandwidth))
    def chain(s):                          # chain of k chips
        return (k - 1) * (alpha + s / (k * bandwidth)) if k > 1 else 0.0
    data_wrapped = 2 * ring_16(grad_bytes) + n_gathers * chain(gather_bytes)
    model_wrapped = 2 * chain(grad_bytes) + n_gathers * ring_16(gather_bytes)
    return "data" if data_wrapped < model_wrapped else "model"
''',
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "slice_hops": '''
import numpy as np

def slice_hops(shape, wraparound, a, b):
    topology = cl.topology.torus(shape, 1.0, wraparound=wraparound)
    return int(cl.measures.hops(topology, int(np.ravel_multi_index(a, shape)),
                                int(np.ravel_multi_index(b, shape))))
''',
    "slice_diameter": '''
from collectives.measures import diameter
from collectives.topology import torus

def slice_diameter(shape, wraparound):
    return diameter(torus(shape, 1.0, wraparound=wraparound))
''',
    "slice_bisection_bandwidth": '''
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    import collectives
    topology = collectives.topology.torus(shape, link_bandwidth, wraparound=wraparound)
    return collectives.measures.bisection_bandwidth(topology)
''',
    "v5e_axis_all_gather_seconds": '''
def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    topo = cl.hardware.preset("tpu-v5e", shape=shape)
    schedule = cl.algorithms.torus_all_gather(shape, axes=(axis,), wraparound=topo.wraparound)
    return cl.time(schedule, topo, nbytes).seconds
''',
    "best_v5e_slice_shape": '''
def best_v5e_slice_shape(n_chips, nbytes):
    return cl.grading.best_v5e_slice_shape(n_chips, nbytes)
''',
    "wrapped_axis_for": '''
import importlib

def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    grading = importlib.import_module("collectives.grading")
    return grading.wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers)
''',
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(
        solved=("slice_hops", "slice_diameter", "v5e_axis_all_gather_seconds"),
        replaced={"slice_bisection_bandwidth": PARTIAL_BISECTION})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "partial": {NOTEBOOK: {"test_slice_hops": 1, "test_slice_diameter": 1,
                           "test_slice_bisection_bandwidth": 0,
                           "test_v5e_axis_all_gather_seconds": 2,
                           "test_best_v5e_slice_shape": 0, "test_wrapped_axis_for": 0}},
    # every tampering fails; only its genuinely correct slice_hops earns its point
    "hostile": {NOTEBOOK: {**dict.fromkeys(POINTS[NOTEBOOK], 0), "test_slice_hops": 1}},
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too)."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    # the feedback a learner reads for the forgotten factor 2
    "partial": {NOTEBOOK: {"test_slice_bisection_bandwidth": Error(
        "slice_bisection_bandwidth((16, 16), (True, True), 45000000000.0) is 720000000000.0, "
        "expected 1440000000000.0 = collectives.grading.slice_bisection_bandwidth((16, 16), "
        "(True, True), 45000000000.0); yours is exactly 1/2 times that")}},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on
    # the values the learner's process returned (not the lying objects)
    "hostile": {NOTEBOOK: {
        "test_slice_diameter": Error(
            "slice_diameter((16, 16), (True, True)) is 0.0, expected 16.0 = "
            "collectives.grading.slice_diameter((16, 16), (True, True))"),
        "test_slice_bisection_bandwidth": Error(
            startswith="slice_bisection_bandwidth((16, 16), (True, True), 45000000000.0) is "
                       "1.0, expected 1440000000000.0 = "),
        "test_v5e_axis_all_gather_seconds": refused(
            "v5e_axis_all_gather_seconds((8, 16), 0, 1048576)",
            "your code uses cl, which is the collectives package"),
        "test_best_v5e_slice_shape": Error(
            "best_v5e_slice_shape(1, 1000000.0) is (3, 3), but the answer is (1, 1)"),
        "test_wrapped_axis_for": Error(
            "wrapped_axis_for(2, 100000.0, 10000.0, 1) is 'neither', which is not one of the "
            "choices: 'data', 'model'"),
    }},
    "wrong": {NOTEBOOK: {
        "test_slice_hops": Error(
            "slice_hops((16, 16), (True, True), (0, 0), (15, 15)) is 30.0, expected 2.0 = "
            "collectives.grading.slice_hops((16, 16), (True, True), (0, 0), (15, 15)); yours "
            "is exactly 15 times that"),
        "test_slice_bisection_bandwidth": Error(
            startswith="slice_bisection_bandwidth((16, 12), (True, False), 1000000000.0) is "
                       "24000000000.0, expected 16000000000.0 = "),
        "test_v5e_axis_all_gather_seconds": Error(
            startswith="v5e_axis_all_gather_seconds((8, 16), 0, 67108864) is "),
    }},
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {NOTEBOOK: {
        "test_slice_hops": refused(
            "slice_hops((16, 16), (True, True), (0, 0), (15, 15))",
            "your code uses cl, which is the collectives package"),
        "test_slice_diameter": refused(
            "slice_diameter((16, 16), (True, True))",
            "your code uses torus, which is collectives.topology.torus"),
        "test_slice_bisection_bandwidth": refused(
            "slice_bisection_bandwidth((4, 4), (False, False), 45000000000.0)",
            "your code imports 'collectives'"),
        "test_v5e_axis_all_gather_seconds": refused(
            "v5e_axis_all_gather_seconds((8, 16), 0, 67108864)",
            "your code uses cl, which is the collectives package"),
        "test_best_v5e_slice_shape": refused(
            "best_v5e_slice_shape(16, 64000000.0)",
            "your code uses cl, which is the collectives package"),
        "test_wrapped_axis_for": refused(
            "wrapped_axis_for(8, 1000000000.0, 1000000.0, 10)",
            "your code imports 'collectives'"),
    }},
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line (the
    # package shortcut's too, once run_isolated was patched away)
    "hostile": {NOTEBOOK: (
        "slice_diameter agrees with cl.measures.diameter on a 16 x 16 slice.",
        "slice_bisection_bandwidth agrees with cl.measures.bisection_bandwidth.",
        "v5e_axis_all_gather_seconds agrees with cl.time on both axes of a v5e 8 x 16 slice.",
        "best_v5e_slice_shape(16, 64e6) is the fastest shape by cl.time.",
        "wrapped_axis_for agrees with cl.time on both examples.",
    )},
    # what a learner's right answers, written their own way, are told
    "variant": {NOTEBOOK: ("slice_diameter agrees with cl.measures.diameter on a 16 x 16 "
                           "slice.",)},
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack('topology_reasoning', SOLUTIONS)
