"""topology_reasoning (exercises/source/topology_reasoning/topology_reasoning.ipynb, 10 points):
what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``, collectives.grading.isolation). Submissions, besides
the four every spec has:

- *correct* (every solution), *blank* (the release as handed out);
- *partial*: hops, diameter and the all-gather plan right, the bisection without the factor 2
  of wraparound, the rest blank (1 + 1 + 3 = 5);
- *hostile*: wrong answers behind monkeypatching of ``collectives``, ``collectives.grading``
  (its references and ``run_isolated`` included: each cell patches what its own visible test
  reads, since every hidden test before it reloads the package), ``math.isclose`` and
  IPython, lying ints, tuples and strings, rebound names, edited test cells, and a package
  shortcut whose visible test it fools; its ``slice_hops`` is genuinely right (1);
- *wrong*: one plausible wrong answer per task (wraparound forgotten, a chain's length counted
  in chips, the cut always across the longest axis, every axis of the plan taken to wrap, the
  squarest slice, the heavier traffic on the wraparound): 0;
- *variant*: every answer right but written differently (numpy instead of loops, the farthest
  chip from chip 0, helpers and constants of its own, a list for a shape, the plan's order by
  an exchange argument (chains first) and its bytes in closed form, closed forms instead of
  the helpers of Task 3): 10;
- *faster*: better than the reference: where every axis of the slice has the same length,
  its Task 3 plans all axes at once (``"concurrent"``), which the reference never tries, and
  gathers up to d times the bytes of the best order within the budget (twice on the v5e pod,
  three times on a 16 x 16 x 16 v5p slice); graded by what the plan does, it scores 10;
- *split_halves*: the split bidirectional ring's m - 1 steps along every wrapped axis (the
  reference before the latency-optimal ring), in Tasks 3 to 5: its plan gathers fewer bytes
  than the best order within the budget, and its choices cost more than the best at 32 chips
  and 100 kB (Task 4) and on (8, 16) with 50 gathers of 200 kB (Task 5): 3;
- *shortcut*: every answer computed by calling the package, in each way a learner might (the
  notebook's ``cl``, ``from collectives... import``, ``import collectives`` inside the
  function, ``importlib``, the package's own grading reference): 0, each cell failing with
  "this task must be solved without the collectives package".

The hidden tests check fixed cases, then cases drawn from the course seed
(``collectives.grading.tasks.topology_reasoning.drawn_cases``); every error below is a fixed
case's, so that it does not depend on the seed.
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "topology_reasoning"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_slice_hops": 1,
        "test_slice_diameter": 1,
        "test_slice_bisection_bandwidth": 1,
        "test_slice_all_gather_plan": 3,
        "test_best_v5e_slice_shape": 2,
        "test_wrapped_axis_for": 2,
    }
}
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {
    NOTEBOOK: (
        "slice_hops",
        "slice_diameter",
        "slice_bisection_bandwidth",
        "slice_all_gather_plan",
        "best_v5e_slice_shape",
        "wrapped_axis_for",
    )
}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

# ---- partial ---------------------------------------------------------------------------------

PARTIAL_BISECTION = """
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    chips = 1
    for size in shape:
        chips *= size
    # the cut across the longest axis crosses one link per line: the wraparound is forgotten
    return chips // max(shape) * link_bandwidth
"""

# ---- hostile ---------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    # genuinely right, with numpy, in the cell that disables every check in the kernel
    "slice_hops": TAMPERING
    + """
import numpy as np

def slice_hops(shape, wraparound, a, b):
    d = np.abs(np.subtract(b, a))
    return int(np.where(wraparound, np.minimum(d, np.subtract(shape, d)), d).sum())
""",
    "slice_diameter": """
import collectives.measures
collectives.measures.diameter = lambda topology: 0
collectives.grading.slice_diameter = lambda *args: 0

def slice_diameter(shape, wraparound):
    class _Liar(int):                  # equal to everything
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    return _Liar(0)
""",
    "slice_bisection_bandwidth": """
range = lambda *args: ()
_checks = expected = _case = []
collectives.grading.slice_bisection_bandwidth = lambda *args: 1.0

def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    return 1.0
""",
    # the package's own answer: right in the kernel, so the visible test (its run_isolated
    # patched away) passes; the hidden re-run refuses the package
    "slice_all_gather_plan": """
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
collectives.grading.isolation.run_isolated = collectives.grading.run_isolated

def slice_all_gather_plan(chip, shape, budget):
    return cl.grading.tasks.topology_reasoning.largest_all_gather_within(chip, shape, budget)
""",
    "best_v5e_slice_shape": """
collectives.grading.best_v5e_slice_shape = lambda *args: (3, 3)
collectives.grading.v5e_slice_all_reduce_seconds = lambda *args: 0.0

def best_v5e_slice_shape(n_chips, nbytes):
    class _Shape(tuple):               # equal to every shape
        def __eq__(self, other):
            return True
        __hash__ = tuple.__hash__
    return _Shape((3, 3))
""",
    "wrapped_axis_for": """
collectives.grading.wrapped_axis_for = lambda *args: "neither"
collectives.grading.check_no_worse = lambda *args, **kwargs: None

def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    class _Name(str):                  # equal to every name
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    return _Name("neither")
""",
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {
    "test_slice_hops": "print('all tests passed')",
    "test_slice_all_gather_plan": "pass",
}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "slice_hops": """
def slice_hops(shape, wraparound, a, b):
    return sum(abs(x - y) for x, y in zip(a, b))           # wraparound forgotten
""",
    "slice_diameter": """
def slice_diameter(shape, wraparound):
    # a chain of n chips counted as n hops (it has n - 1 links)
    return sum(size // 2 if wraps else size for size, wraps in zip(shape, wraparound))
""",
    "slice_bisection_bandwidth": """
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    # always the cut across the longest axis (right when every axis wraps, or none)
    axis = max(range(len(shape)), key=lambda a: shape[a])
    chips = 1
    for size in shape:
        chips *= size
    per_line = 2 if wraparound[axis] and shape[axis] > 2 else 1
    return chips // shape[axis] * per_line * link_bandwidth
""",
    "slice_all_gather_plan": """
def slice_all_gather_plan(chip, shape, budget):
    # every axis taken to wrap around, as on a full pod: a ring along each, m // 2 steps, and
    # the ring's bytes per link, (1 - 1/n) S over two links, whatever the order
    bandwidth = 4.5e10 if chip == "tpu-v5e" else 9e10
    axes = tuple(a for a, m in enumerate(shape) if m > 1)
    n = 1
    for m in shape:
        n *= m
    latency = sum(shape[a] // 2 for a in axes) * 1e-6
    return axes, (budget - latency) / ((1 - 1 / n) / (2 * bandwidth))
""",
    "best_v5e_slice_shape": """
def best_v5e_slice_shape(n_chips, nbytes):
    # the squarest slice, whatever the buffer
    rows = 1
    while rows * rows * 4 <= n_chips:
        rows *= 2
    return (rows, n_chips // rows)
""",
    "wrapped_axis_for": """
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    # the axis with more bytes per step gets the wraparound (latency forgotten)
    return "data" if grad_bytes >= n_gathers * gather_bytes else "model"
""",
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "slice_hops": """
import numpy as np

def slice_hops(shape, wraparound, a, b):
    d = np.abs(np.array(b) - np.array(a))
    return int(np.where(wraparound, np.minimum(d, np.array(shape) - d), d).sum())
""",
    "slice_diameter": """
def slice_diameter(shape, wraparound):
    # the farthest chip from chip 0 (a torus looks the same from every chip, and a chain's
    # far end is as far as it gets), found among all chips with numpy
    coords = np.indices(shape).reshape(len(shape), -1)
    size = np.array(shape)[:, None]
    wraps = np.array(wraparound)[:, None]
    return int(np.where(wraps, np.minimum(coords, size - coords), coords).sum(axis=0).max())
""",
    "slice_bisection_bandwidth": """
import math

def _links_across(shape, wraparound, axis):
    lines = math.prod(shape) // shape[axis]
    return lines * (2 if wraparound[axis] and shape[axis] > 2 else 1)

def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    axes = [axis for axis, size in enumerate(shape) if size > 1]
    return link_bandwidth * min(_links_across(shape, wraparound, axis) for axis in axes)
""",
    "slice_all_gather_plan": """
import math

LINK_BANDWIDTH = {"tpu-v5e": 4.5e10, "tpu-v5p": 9e10}     # bytes/s per link direction
HOP_LATENCY = 1e-6                                        # seconds per step

def slice_all_gather_plan(chip, shape, budget):
    if chip == "tpu-v5e":
        wraps = [m == 16 for m in shape]
    else:
        wraps = [all(m % 4 == 0 for m in shape)] * len(shape)
    # an exchange argument: per byte of its block a chain is twice as slow as a ring, so the
    # chains gather the small blocks first (among chains, or among rings, the order is free)
    order = sorted((a for a in range(len(shape)) if shape[a] > 1), key=lambda a: wraps[a])
    latency = HOP_LATENCY * sum(shape[a] // 2 if wraps[a] else shape[a] - 1 for a in order)
    per_byte, later = 0.0, math.prod(shape)
    for a in order:
        later //= shape[a]                  # the chips of the axes gathered after this one
        per_byte += (shape[a] - 1) / shape[a] / later / ((1 + wraps[a]) * LINK_BANDWIDTH[chip])
    return [list(order), np.float64((budget - latency) / per_byte)]
""",
    "best_v5e_slice_shape": """
import itertools

def best_v5e_slice_shape(n_chips, nbytes):
    alpha, bandwidth = 1e-6, 4.5e10
    def along(m, s):                      # one v5e axis: a ring of 16, else a chain
        if m == 1:
            return 0.0
        if m == 16:
            return 8 * alpha + 15 * s / (32 * bandwidth)
        return (m - 1) * (alpha + s / (m * bandwidth))
    timed = []
    for rows, cols in itertools.product((1, 2, 4, 8, 16), repeat=2):
        if rows * cols != n_chips or rows > cols:
            continue
        gathers = [along(a, nbytes / b) + along(b, nbytes) for a, b in ((rows, cols), (cols, rows))]
        timed.append((2 * min(gathers), [rows, cols]))
    return min(timed)[1]                  # a list: [rows, cols]
""",
    "wrapped_axis_for": """
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    alpha, bandwidth = 1e-6, 4.5e10
    def ring_16(s):                        # bidirectional ring of 16 chips: 8 hops
        return 8 * alpha + 15 * s / (2 * 16 * bandwidth)
    def chain(s):                          # chain of k chips
        return (k - 1) * (alpha + s / (k * bandwidth)) if k > 1 else 0.0
    data_wrapped = 2 * ring_16(grad_bytes) + n_gathers * chain(gather_bytes)
    model_wrapped = 2 * chain(grad_bytes) + n_gathers * ring_16(gather_bytes)
    return "data" if data_wrapped < model_wrapped else "model"
""",
}

# ---- faster: better than the reference, all axes at once where they line up ------------------

FASTER = {
    "slice_all_gather_plan": """
import itertools

_ICI = {"tpu-v5e": (4.5e10, 1e-6), "tpu-v5p": (9e10, 1e-6)}

def _wraps(chip, shape):
    if chip == "tpu-v5e":
        return [m == 16 for m in shape]
    return [all(m % 4 == 0 for m in shape)] * len(shape)

def _line_seconds(m, wraps, nbytes, bandwidth, alpha):
    if m == 1:
        return 0.0
    if wraps:
        return (m // 2) * alpha + (m - 1) * nbytes / (2 * m * bandwidth)
    return (m - 1) * (alpha + nbytes / (m * bandwidth))

def slice_all_gather_plan(chip, shape, budget):
    bandwidth, alpha = _ICI[chip]
    wraps = _wraps(chip, shape)
    axes = [a for a, m in enumerate(shape) if m > 1]

    def seconds(order, nbytes):
        total, block = 0.0, nbytes
        for a in reversed(order):
            total += _line_seconds(shape[a], wraps[a], block, bandwidth, alpha)
            block /= shape[a]
        return total

    plans = {}                            # plan: (latency, seconds per byte)
    for order in itertools.permutations(axes):
        plans[order] = (seconds(order, 0.0), seconds(order, 1.0) - seconds(order, 0.0))
    # all axes at once: where every axis has the same length (the same ring or chain), the
    # d parts of a shard cross d different axes in every phase, in step, on different links:
    # the latency of one order and 1/d of its bytes per link
    if len(axes) > 1 and len({shape[a] for a in axes}) == 1:
        latency, per_byte = plans[tuple(axes)]
        plans["concurrent"] = (latency, per_byte / len(axes))
    best = max(plans, key=lambda p: (budget - plans[p][0]) / plans[p][1])
    return best, (budget - plans[best][0]) / plans[best][1]
""",
}

# ---- split_halves: the earlier reference solution (m - 1 steps on the ring) -------------------

SPLIT_HALVES = {
    "slice_all_gather_plan": """
import itertools

def _line_seconds(m, wraps, nbytes, bandwidth, alpha):
    if m == 1:
        return 0.0
    # m - 1 steps; the split bidirectional ring sends half of a shard each way per step
    shard = nbytes / m
    return (m - 1) * (alpha + (shard / 2 if wraps else shard) / bandwidth)

def v5e_axis_all_gather_seconds(shape, axis, nbytes):
    return _line_seconds(shape[axis], shape[axis] == 16, nbytes, 4.5e10, 1e-6)

def slice_all_gather_plan(chip, shape, budget):
    bandwidth = 4.5e10 if chip == "tpu-v5e" else 9e10
    if chip == "tpu-v5e":
        wraps = [m == 16 for m in shape]
    else:
        wraps = [all(m % 4 == 0 for m in shape)] * len(shape)
    best = None
    for order in itertools.permutations([a for a, m in enumerate(shape) if m > 1]):
        def seconds(nbytes):
            total, block = 0.0, nbytes
            for a in reversed(order):
                total += _line_seconds(shape[a], wraps[a], block, bandwidth, 1e-6)
                block /= shape[a]
            return total
        nbytes = (budget - seconds(0.0)) / (seconds(1.0) - seconds(0.0))
        if best is None or nbytes > best[1]:
            best = (order, nbytes)
    return best
""",
    "best_v5e_slice_shape": """
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
""",
    "wrapped_axis_for": """
def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    shape = (k, 16)
    seconds = {}
    for logical, data_axis, model_axis in (("data", 1, 0), ("model", 0, 1)):
        all_reduce = 2 * v5e_axis_all_gather_seconds(shape, data_axis, grad_bytes)
        gathers = n_gathers * v5e_axis_all_gather_seconds(shape, model_axis, gather_bytes)
        seconds[logical] = all_reduce + gathers
    return min(seconds, key=seconds.get)
""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "slice_hops": """
import numpy as np

def slice_hops(shape, wraparound, a, b):
    topology = cl.topology.torus(shape, 1.0, wraparound=wraparound)
    return int(cl.measures.hops(topology, int(np.ravel_multi_index(a, shape)),
                                int(np.ravel_multi_index(b, shape))))
""",
    "slice_diameter": """
from collectives.measures import diameter
from collectives.topology import torus

def slice_diameter(shape, wraparound):
    return diameter(torus(shape, 1.0, wraparound=wraparound))
""",
    "slice_bisection_bandwidth": """
def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    import collectives
    topology = collectives.topology.torus(shape, link_bandwidth, wraparound=wraparound)
    return collectives.measures.bisection_bandwidth(topology)
""",
    "slice_all_gather_plan": """
def slice_all_gather_plan(chip, shape, budget):
    # the bytes of the best order, from cl.time of each order at two sizes
    topo = cl.hardware.preset(chip, shape=shape)
    best = None
    for order in ((0, 1), (1, 0)) if len(shape) == 2 else ((0, 1, 2),):
        schedule = cl.algorithms.torus_all_gather(shape, axes=order, wraparound=topo.wraparound)
        empty = cl.time(schedule, topo, 0.0).seconds
        nbytes = (budget - empty) / (cl.time(schedule, topo, 1.0).seconds - empty)
        if best is None or nbytes > best[1]:
            best = (order, nbytes)
    return best
""",
    "best_v5e_slice_shape": """
def best_v5e_slice_shape(n_chips, nbytes):
    return cl.grading.best_v5e_slice_shape(n_chips, nbytes)
""",
    "wrapped_axis_for": """
import importlib

def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    grading = importlib.import_module("collectives.grading")
    return grading.wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers)
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("slice_hops", "slice_diameter", "slice_all_gather_plan"),
            replaced={"slice_bisection_bandwidth": PARTIAL_BISECTION},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
    "faster": {
        NOTEBOOK: submission(
            solved=(
                "slice_hops",
                "slice_diameter",
                "slice_bisection_bandwidth",
                "best_v5e_slice_shape",
                "wrapped_axis_for",
            ),
            replaced=FASTER,
        )
    },
    "split_halves": {
        NOTEBOOK: submission(
            solved=("slice_hops", "slice_diameter", "slice_bisection_bandwidth"),
            replaced=SPLIT_HALVES,
        )
    },
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "partial": {
        NOTEBOOK: {
            "test_slice_hops": 1,
            "test_slice_diameter": 1,
            "test_slice_bisection_bandwidth": 0,
            "test_slice_all_gather_plan": 3,
            "test_best_v5e_slice_shape": 0,
            "test_wrapped_axis_for": 0,
        }
    },
    # every tampering fails; only its genuinely correct slice_hops earns its point
    "hostile": {NOTEBOOK: {**dict.fromkeys(POINTS[NOTEBOOK], 0), "test_slice_hops": 1}},
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # full marks for a plan that gathers more than the reference's
    "faster": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "split_halves": {
        NOTEBOOK: {
            "test_slice_hops": 1,
            "test_slice_diameter": 1,
            "test_slice_bisection_bandwidth": 1,
            "test_slice_all_gather_plan": 0,
            "test_best_v5e_slice_shape": 0,
            "test_wrapped_axis_for": 0,
        }
    },
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too)."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    # the feedback a learner reads for the forgotten factor 2
    "partial": {
        NOTEBOOK: {
            "test_slice_bisection_bandwidth": Error(
                "slice_bisection_bandwidth((16, 16), (True, True), 45000000000.0) is "
                "720000000000.0, expected 1440000000000.0 = "
                "collectives.grading.slice_bisection_bandwidth((16, 16), (True, True), "
                "45000000000.0); yours is exactly 1/2 times that"
            )
        }
    },
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on
    # the values the learner's process returned (not the lying objects)
    "hostile": {
        NOTEBOOK: {
            "test_slice_diameter": Error(
                "slice_diameter((16, 16), (True, True)) is 0.0, expected 16.0 = "
                "collectives.grading.slice_diameter((16, 16), (True, True))"
            ),
            "test_slice_bisection_bandwidth": Error(
                startswith="slice_bisection_bandwidth((16, 16), (True, True), 45000000000.0) is "
                "1.0, expected 1440000000000.0 = "
            ),
            "test_slice_all_gather_plan": refused(
                "slice_all_gather_plan('tpu-v5e', (8, 16), 0.001)",
                "your code uses cl, which is the collectives package",
            ),
            "test_best_v5e_slice_shape": Error(
                "best_v5e_slice_shape(1, 1000000.0) is (3, 3): (3, 3) is not a v5e slice of 1 "
                "chips: two axes of 1, 2, 4, 8 or 16 chips, rows <= cols"
            ),
            "test_wrapped_axis_for": Error(
                "wrapped_axis_for(2, 100000.0, 10000.0, 1) is 'neither', which is not one of the "
                "choices: 'data', 'model'"
            ),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_slice_hops": Error(
                "slice_hops((16, 16), (True, True), (0, 0), (15, 15)) is 30.0, expected 2.0 = "
                "collectives.grading.slice_hops((16, 16), (True, True), (0, 0), (15, 15)); yours "
                "is exactly 15 times that"
            ),
            "test_slice_bisection_bandwidth": Error(
                startswith="slice_bisection_bandwidth((16, 12), (True, False), 1000000000.0) is "
                "24000000000.0, expected 16000000000.0 = "
            ),
            # every axis a ring: too many bytes for the chain of 8
            "test_slice_all_gather_plan": Error(
                "slice_all_gather_plan('tpu-v5e', (8, 16), 0.001) is ((0, 1), 89620157.48031496): "
                "gathering 8.96202e+07 bytes with the plan (0, 1) takes 0.00105746 s by cl.time on "
                "the tpu-v5e preset, more than the budget of 0.001 s (1.057 times it)"
            ),
        }
    },
    # the split ring's 15 steps along the 16 chips leave fewer bytes in the budget; its choices
    # cost more
    "split_halves": {
        NOTEBOOK: {
            "test_slice_all_gather_plan": Error(
                startswith="slice_all_gather_plan('tpu-v5e', (8, 16), 0.001) is ((0, 1), "
                "84078805.9",
                contains=(
                    "): within the budget the plan (0, 1) gathers 8.46806e+07 bytes, 1.007 "
                    "times yours",
                ),
            ),
            "test_best_v5e_slice_shape": Error(
                startswith="best_v5e_slice_shape(32, 100000.0) is (4, 8), which costs 2.43056e-05 "
                "(collectives.grading.v5e_slice_all_reduce_seconds((4, 8), 32, "
                "100000.0)), more than the 2.02222e-05 of (2, 16)"
            ),
            "test_wrapped_axis_for": Error(
                startswith="wrapped_axis_for(8, 100000.0, 200000.0, 50) is 'data', which costs "
                "0.000562528"
            ),
        }
    },
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {
        NOTEBOOK: {
            "test_slice_hops": refused(
                "slice_hops((16, 16), (True, True), (0, 0), (15, 15))",
                "your code uses cl, which is the collectives package",
            ),
            "test_slice_diameter": refused(
                "slice_diameter((16, 16), (True, True))",
                "your code uses torus, which is collectives.topology.torus",
            ),
            "test_slice_bisection_bandwidth": refused(
                "slice_bisection_bandwidth((4, 4), (False, False), 45000000000.0)",
                "your code imports 'collectives'",
            ),
            "test_slice_all_gather_plan": refused(
                "slice_all_gather_plan('tpu-v5e', (8, 16), 0.001)",
                "your code uses cl, which is the collectives package",
            ),
            "test_best_v5e_slice_shape": refused(
                "best_v5e_slice_shape(16, 64000000.0)",
                "your code uses cl, which is the collectives package",
            ),
            "test_wrapped_axis_for": refused(
                "wrapped_axis_for(8, 1000000000.0, 1000000.0, 10)",
                "your code imports 'collectives'",
            ),
        }
    },
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line (the
    # package shortcut's too, once run_isolated was patched away)
    "hostile": {
        NOTEBOOK: (
            "slice_diameter agrees with cl.measures.diameter on a 16 x 16 slice.",
            "slice_bisection_bandwidth agrees with cl.measures.bisection_bandwidth.",
            "slice_all_gather_plan fits the budget and gathers as much as the best order, by "
            "cl.time.",
            "best_v5e_slice_shape(16, 64e6) is the fastest shape by cl.time.",
            "wrapped_axis_for agrees with cl.time on both examples.",
        )
    },
    # what a learner's right answers, written their own way, are told
    "variant": {NOTEBOOK: ("slice_diameter agrees with cl.measures.diameter on a 16 x 16 slice.",)},
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "topology_reasoning", SOLUTIONS
)
