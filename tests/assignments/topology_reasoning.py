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
  of the Task 3 function): 10. (Its Task 3 and Task 5 counted m - 1 steps on the 16-chip ring,
  the split bidirectional ring, which was the reference's schedule; they now count m / 2, as
  the reference does, since the slower count is no longer right: 10 as before);
- *faster*: the latency-optimal ring, found by a learner when the reference still ran the
  split ring (m - 1 steps): every shard whole both ways, half-way round, m / 2 steps, worked
  step by step; its Task 4 and Task 5 built on it. Graded by cost (no slower than the package's
  schedule, no faster than the lower bound; a choice no costlier than the best) it scores 10;
  the grading before, which held every answer to the split ring's times and choices, gave it 4;
- *split_halves*: the earlier reference solution, the split bidirectional ring's m - 1 steps
  on the 16-chip ring, and Tasks 4 and 5 built on it: Task 3 is slower than the package's
  schedule ("a faster schedule exists"), and its choices cost more than the best at 32 chips and
  100 kB (Task 4) and on (8, 16) with 50 gathers of 200 kB (Task 5): 4;
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
collectives.grading.v5e_slice_all_reduce_seconds = lambda *args: 0.0

def best_v5e_slice_shape(n_chips, nbytes):
    class _Shape(tuple):               # equal to every shape
        def __eq__(self, other):
            return True
        __hash__ = tuple.__hash__
    return _Shape((3, 3))
''',
    "wrapped_axis_for": '''
collectives.grading.wrapped_axis_for = lambda *args: "neither"
collectives.grading.check_no_worse = lambda *args, **kwargs: None

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
    # the farthest shard is m // 2 hops away round a ring, m - 1 along a chain; every chip
    # receives the m - 1 other shards through its `directions` links
    hops = m // 2 if directions == 2 else m - 1
    return hops * V5E_HOP_LATENCY + (m - 1) * nbytes / m / directions / V5E_LINK_BANDWIDTH
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
    def ring_16(s):                        # bidirectional ring of 16 chips: 8 hops
        return 8 * alpha + 15 * s / (2 * 16 * bandwidth)
    def chain(s):                          # chain of k chips
        return (k - 1) * (alpha + s / (k * bandwidth)) if k > 1 else 0.0
    data_wrapped = 2 * ring_16(grad_bytes) + n_gathers * chain(gather_bytes)
    model_wrapped = 2 * chain(grad_bytes) + n_gathers * ring_16(gather_bytes)
    return "data" if data_wrapped < model_wrapped else "model"
''',
}

# ---- faster: the schedule the earlier reference missed --------------------------------------

FASTER = {
    "v5e_axis_all_gather_seconds": '''
def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    # step by step. Along a ring every shard goes whole both ways and stops half-way round:
    # m // 2 steps, each moving one shard per link direction, except that on an even ring the
    # last step moves only half of the shard opposite (its other half comes the other way).
    # Along a chain, m - 1 steps of a whole shard over the busiest link.
    B, alpha = 4.5e10, 1e-6
    m = shape[axis]
    shard = nbytes / m
    if m != 16:
        return sum(alpha + shard / B for _ in range(m - 1))
    seconds = 0.0
    for step in range(m // 2):
        last = step == m // 2 - 1 and m % 2 == 0
        seconds += alpha + (shard / 2 if last else shard) / B
    return seconds
''',
    "best_v5e_slice_shape": '''
def best_v5e_slice_shape(n_chips, nbytes):
    def all_reduce(shape):
        # reduce-scatter and all-gather cost the same; try both orders of the axes
        return 2 * min(v5e_axis_all_gather_seconds(shape, a, nbytes / shape[b])
                       + v5e_axis_all_gather_seconds(shape, b, nbytes) for a, b in ((0, 1), (1, 0)))
    shapes = [(r, n_chips // r) for r in (1, 2, 4, 8, 16)
              if n_chips % r == 0 and r <= n_chips // r <= 16]
    return min(shapes, key=all_reduce)
''',
    "wrapped_axis_for": '''
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    def step(data_axis, model_axis):
        shape = (k, 16)
        return (2 * v5e_axis_all_gather_seconds(shape, data_axis, grad_bytes)
                + n_gathers * v5e_axis_all_gather_seconds(shape, model_axis, gather_bytes))
    return "data" if step(1, 0) <= step(0, 1) else "model"
''',
}

# ---- split_halves: the earlier reference solution (m - 1 steps on the ring) -------------------

SPLIT_HALVES = {
    "v5e_axis_all_gather_seconds": '''
def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    bandwidth, alpha = 4.5e10, 1e-6
    m = shape[axis]
    if m == 1:
        return 0.0
    wraps = m == 16
    # m - 1 steps; the split bidirectional ring sends half of a shard each way per step
    shard = nbytes / m
    return (m - 1) * (alpha + (shard / 2 if wraps else shard) / bandwidth)
''',
    "best_v5e_slice_shape": '''
def best_v5e_slice_shape(n_chips, nbytes):
    best = None
    for rows in (1, 2, 4, 8, 16):
        cols = n_chips // rows
        if rows * cols != n_chips or not rows <= cols <= 16:
            continue
        shape = (rows, cols)
        seconds = min(
            2 * (v5e_axis_all_gather_seconds(shape, first, nbytes / shape[second])
                 + v5e_axis_all_gather_seconds(shape, second, nbytes))
            for first, second in ((0, 1), (1, 0)))
        if best is None or seconds < best[0]:
            best = (seconds, shape)
    return best[1]
''',
    "wrapped_axis_for": '''
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    shape = (k, 16)
    seconds = {}
    for logical, data_axis, model_axis in (("data", 1, 0), ("model", 0, 1)):
        all_reduce = 2 * v5e_axis_all_gather_seconds(shape, data_axis, grad_bytes)
        gathers = n_gathers * v5e_axis_all_gather_seconds(shape, model_axis, gather_bytes)
        seconds[logical] = all_reduce + gathers
    return min(seconds, key=seconds.get)
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
    "faster": {NOTEBOOK: submission(
        solved=("slice_hops", "slice_diameter", "slice_bisection_bandwidth"),
        replaced=FASTER)},
    "split_halves": {NOTEBOOK: submission(
        solved=("slice_hops", "slice_diameter", "slice_bisection_bandwidth"),
        replaced=SPLIT_HALVES)},
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
    # full marks for the faster schedule (4 under the grading that held it to the split ring)
    "faster": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "split_halves": {NOTEBOOK: {"test_slice_hops": 1, "test_slice_diameter": 1,
                                "test_slice_bisection_bandwidth": 2,
                                "test_v5e_axis_all_gather_seconds": 0,
                                "test_best_v5e_slice_shape": 0, "test_wrapped_axis_for": 0}},
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
            "best_v5e_slice_shape(1, 1000000.0) is (3, 3): (3, 3) is not a v5e slice of 1 chips: "
            "two axes of 1, 2, 4, 8 or 16 chips, rows <= cols"),
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
            startswith="v5e_axis_all_gather_seconds((8, 16), 0, 67108864) is "
                       "0.0006594472888888889, below 0.0013118945777777777 = "
                       "collectives.grading.v5e_axis_lower_bound("),
    }},
    # the split ring's estimate is slower than the package's schedule; its choices cost more
    "split_halves": {NOTEBOOK: {
        "test_v5e_axis_all_gather_seconds": Error(
            "v5e_axis_all_gather_seconds((8, 16), 1, 67108864) is 0.0007140506666666666, slower "
            "than 0.0007070506666666667 = collectives.grading.v5e_axis_seconds((8, 16), 1, "
            "67108864), the time of a schedule the wiring allows: a faster schedule exists "
            "(relative error 0.0099)"),
        "test_best_v5e_slice_shape": Error(
            startswith="best_v5e_slice_shape(32, 100000.0) is (4, 8), which costs 2.43056e-05 "
                       "(collectives.grading.v5e_slice_all_reduce_seconds((4, 8), 32, "
                       "100000.0)), more than the 2.02222e-05 of (2, 16)"),
        "test_wrapped_axis_for": Error(
            startswith="wrapped_axis_for(8, 100000.0, 200000.0, 50) is 'data', which costs "
                       "0.000562528"),
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
