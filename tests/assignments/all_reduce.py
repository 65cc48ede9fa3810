"""all_reduce (exercises/source/all_reduce/rabenseifner_all_reduce.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``), and the schedules are judged by
``collectives.grading.collective_tasks``, which accepts any correct answer of the kind a task
asks. Submissions, besides the four every spec has:

- *correct* (every solution), *blank* (the release as handed out);
- *partial*: Rabenseifner's steps and the hierarchical all-reduce right, the chooser wrong
  (it lets the recursive algorithms run on any n), the busbw blank, the written answer half
  right by its rubric (3 + 3 + 0.5 = 6.5);
- *hostile*: wrong answers behind monkeypatching of ``collectives``, ``collectives.grading``
  (``collective_tasks`` too), ``math.isclose`` and IPython, rebound names, edited test cells;
  its ``hierarchical_busbw`` is genuinely right (1), its written answer "All tests passed." (0);
- *wrong* and *wrong2*: two plausible wrong answers per task (the all-gather's distances in
  the halving order, or recursive doubling padded to 2 log2 n steps; one leader GPU per node
  talking across nodes, or a flat ring over all GPUs; the recursive algorithms for every n, or
  recursive doubling charged one chunk per step; the NICs carrying the whole buffer, or algbw
  for busbw), written answers left untouched: 0;
- *variant*: every answer right but written differently (halving at distance 1 first with
  chunks split by their low bits; one-step direct phases with chunks numbered piece-major;
  a chooser that walks through the steps; busbw from the steps' times; a terser written
  answer that meets the rubric): 10;
- *shortcut*: every answer computed by calling the package (the notebook's ``cl``, ``from
  collectives... import``, ``import collectives`` inside the function, ``importlib``): 0,
  each cell failing with "this task must be solved without the collectives package".
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "rabenseifner_all_reduce"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_rabenseifner_steps": 3,
        "test_hierarchical_steps": 3,
        "test_fastest_all_reduce": 2,
        "test_hierarchical_busbw": 1,
        "written_busbw": 1,
    }
}
# the written answer, graded by hand in the formgrader (its rubric is in the source notebook)
MANUAL = {NOTEBOOK: ("written_busbw",)}
# plausible written answers: the partial student's earns half the rubric (the first part)
PARTIAL_WRITTEN = """It is not wrong: busbw multiplies S/t by 2(n-1)/n over all 32 GPUs, and each
NIC only carries the eighth of the buffer its GPU owns; NVLink carries the rest. Faster NICs
would help most, since the network is always the bottleneck."""
HOSTILE_WRITTEN = "All tests passed."
VARIANT_WRITTEN = """Plausible: each GPU's NIC carries only S/8 (one eighth, the shard that GPU
owns after the in-node reduce-scatter), while busbw is computed as if all 32 GPUs' links carried
2(n-1)/n S. For S = 1 GB: in-node phases 2 x 0.875 GB / 450 GB/s = 3.9 ms; rail phase
2 x 0.75 x 0.125 GB / 50 GB/s = 3.75 ms. They are about equal, so 2x NICs -> 7.64 / 5.76 =
1.33x, 2x NVLink -> 7.64 / 5.69 = 1.34x: about the same small gain either way."""
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {
    NOTEBOOK: (
        "rabenseifner_steps",
        "hierarchical_steps",
        "fastest_all_reduce",
        "hierarchical_busbw",
    )
}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

# ---- wrong answers (each also serves the partial and hostile students) ----------------------

GATHER_WRONG_ORDER = """
def rabenseifner_steps(n):
    steps = []
    d = n // 2
    while d >= 1:                          # recursive halving: right
        step = []
        for r in range(n):
            partner = r ^ d
            first = (partner // d) * d
            step += [(r, partner, c, c, "reduce") for c in range(first, first + d)]
        steps.append(step)
        d //= 2
    d = n // 2
    while d >= 1:                          # doubling from the far end: the blocks do not grow
        step = []
        for r in range(n):
            first = (r // d) * d
            step += [(r, r ^ d, c, c, "copy") for c in range(first, first + d)]
        steps.append(step)
        d //= 2
    return steps
"""
DOUBLING_PADDED = """
def rabenseifner_steps(n):
    # recursive doubling (the whole buffer each step), then as many steps again that copy
    steps = []
    d = 1
    while d < n:
        steps.append([(r, r ^ d, c, c, "reduce") for r in range(n) for c in range(n)])
        d *= 2
    d = 1
    while d < n:
        steps.append([(r, r ^ d, c, c, "copy") for r in range(n) for c in range(n)])
        d *= 2
    return steps
"""
LEADER = """
def hierarchical_steps(n_nodes):
    # reduce onto GPU 0 of each node, a ring all-reduce between the GPU 0s, then broadcast
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
"""
FLAT_RING = """
def hierarchical_steps(n_nodes):
    # one ring over all 8 N GPUs: correct, but it crosses each node boundary through one NIC
    n = 8 * n_nodes
    steps = []
    for s in range(n - 1):
        steps.append([(r, (r + 1) % n, (r - s - 1) % n, (r - s - 1) % n, "reduce")
                      for r in range(n)])
    for s in range(n - 1):
        steps.append([(r, (r + 1) % n, (r - s) % n, (r - s) % n, "copy") for r in range(n)])
    return steps
"""
ANY_N = """
import math

def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    # the recursive algorithms costed for every n, as if n were a power of two
    log_n = math.log2(n)
    times = {
        "ring_all_reduce": 2 * (n - 1) * (alpha + nbytes / (n * bandwidth)),
        "rabenseifner_all_reduce": 2 * (log_n * alpha + (n - 1) * nbytes / (n * bandwidth)),
        "recursive_doubling_all_reduce": log_n * (alpha + nbytes / bandwidth),
    }
    return min(times, key=times.get)
"""
DOUBLING_CHUNK = """
def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    times = {"ring_all_reduce": 2 * (n - 1) * (alpha + nbytes / (n * bandwidth))}
    if n & (n - 1) == 0:
        log_n = n.bit_length() - 1
        times["rabenseifner_all_reduce"] = 2 * (log_n * alpha + (n - 1) * nbytes / (n * bandwidth))
        # one chunk per step, not the whole buffer
        times["recursive_doubling_all_reduce"] = log_n * (alpha + nbytes / (n * bandwidth))
    return min(times, key=times.get)
"""
WHOLE_BUFFER_ON_NIC = """
def hierarchical_busbw(n_nodes):
    n = 8 * n_nodes
    # the rail ring all-reduces the whole buffer, not each GPU's eighth of it
    per_byte = 2 * 7 / 8 / 450e9 + 2 * (n_nodes - 1) / n_nodes / 50e9
    return 2 * (n - 1) / n / per_byte
"""
ALGBW = """
def hierarchical_busbw(n_nodes):
    # S / t: nccl-tests' algbw, without the bus factor 2 (n - 1) / n
    return 1 / (2 * 7 / 8 / 450e9 + 2 * (n_nodes - 1) / n_nodes / 8 / 50e9)
"""

WRONG = {
    "rabenseifner_steps": GATHER_WRONG_ORDER,
    "hierarchical_steps": LEADER,
    "fastest_all_reduce": ANY_N,
    "hierarchical_busbw": WHOLE_BUFFER_ON_NIC,
}
WRONG2 = {
    "rabenseifner_steps": DOUBLING_PADDED,
    "hierarchical_steps": FLAT_RING,
    "fastest_all_reduce": DOUBLING_CHUNK,
    "hierarchical_busbw": ALGBW,
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "rabenseifner_steps": """
def rabenseifner_steps(n):
    # halving at distance 1, 2, 4, ...: rank r keeps the chunks whose low bits match its own
    steps = []
    d = 1
    while d < n:
        steps.append([(r, r ^ d, c, c, "reduce") for r in range(n) for c in range(n)
                      if c % d == r % d and c & d == (r ^ d) & d])
        d *= 2
    d = n // 2
    while d >= 1:
        steps.append([(r, r ^ d, c, c, "copy") for r in range(n) for c in range(n)
                      if c % (2 * d) == r % (2 * d)])
        d //= 2
    return steps
""",
    "hierarchical_steps": """
GPUS = 8

def hierarchical_steps(n_nodes):
    # each phase in one step (direct exchanges); chunk j * 8 + p is piece j of GPU p's eighth
    g, N = GPUS, n_nodes
    steps = [[(node * g + l, node * g + p, j * g + p, j * g + p, "reduce")
              for node in range(N) for l in range(g) for p in range(g) if p != l
              for j in range(N)]]
    if N > 1:
        steps.append([(a * g + p, b * g + p, b * g + p, b * g + p, "reduce")
                      for p in range(g) for a in range(N) for b in range(N) if a != b])
        steps.append([(a * g + p, b * g + p, a * g + p, a * g + p, "copy")
                      for p in range(g) for a in range(N) for b in range(N) if a != b])
    steps.append([(node * g + p, node * g + l, j * g + p, j * g + p, "copy")
                  for node in range(N) for p in range(g) for l in range(g) if l != p
                  for j in range(N)])
    return steps
""",
    "fastest_all_reduce": '''
def _seconds(messages, alpha, bandwidth):
    """A schedule's time from the bytes one rank sends in each of its steps."""
    return sum(alpha + m / bandwidth for m in messages)

def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    best = ("ring_all_reduce", _seconds([nbytes / n] * (2 * (n - 1)), alpha, bandwidth))
    if bin(n).count("1") == 1:
        halving = []
        block = nbytes
        while block > nbytes / n:
            block /= 2
            halving.append(block)
        for name, messages in (("rabenseifner_all_reduce", halving + halving[::-1]),
                               ("recursive_doubling_all_reduce", [nbytes] * len(halving))):
            seconds = _seconds(messages, alpha, bandwidth)
            if seconds < best[1]:
                best = (name, seconds)
    return best[0]
''',
    "hierarchical_busbw": """
NVLINK_BANDWIDTH = 450e9     # bytes/s per GPU and direction (18 NVLink 4 links of 25 GB/s)
NIC_BANDWIDTH = 400e9 / 8    # a 400 Gb/s ConnectX-7, in bytes/s

def hierarchical_busbw(n_nodes):
    size = 1.0               # any buffer: no latencies
    ring_in_node = 7 * (size / 8) / NVLINK_BANDWIDTH                 # 7 steps of S/8
    ring_on_rail = (n_nodes - 1) * (size / 8 / n_nodes) / NIC_BANDWIDTH
    seconds = 2 * ring_in_node + 2 * ring_on_rail
    gpus = 8 * n_nodes
    return size / seconds * 2 * (gpus - 1) / gpus
""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "rabenseifner_steps": """
def rabenseifner_steps(n):
    return cl.algorithms.rabenseifner_all_reduce(n).to_lists()
""",
    "hierarchical_steps": """
from collectives.algorithms import two_level_ring_all_reduce

def hierarchical_steps(n_nodes):
    return two_level_ring_all_reduce(n_nodes, 8).to_lists()
""",
    "fastest_all_reduce": """
def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    import collectives
    names = ["ring_all_reduce", "rabenseifner_all_reduce", "recursive_doubling_all_reduce"]
    topology = collectives.topology.switch(n, bandwidth, alpha / 2)
    return collectives.algorithms.fastest("all_reduce", topology, nbytes, candidates=names).name
""",
    "hierarchical_busbw": """
import importlib

def hierarchical_busbw(n_nodes):
    tasks = importlib.import_module("collectives.grading.collective_tasks")
    return tasks.hierarchical_busbw(n_nodes)
""",
}

# ---- hostile ---------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "rabenseifner_steps": "import collectives.grading.collective_tasks\n"
    + TAMPERING
    + DOUBLING_PADDED,
    # (the visible test's own check stays patched: collective_tasks is not reloaded in the
    # kernel; the hidden re-check imports it afresh)
    "hierarchical_steps": """
target = _target = 0.0
"""
    + FLAT_RING,
    "fastest_all_reduce": """
class _Choice:
    name = "ring_all_reduce"

collectives.algorithms.fastest = lambda *args, **kwargs: _Choice()
range = lambda *args: ()
expected = _expected = "ring_all_reduce"

def fastest_all_reduce(n, nbytes, alpha, bandwidth):
    return "ring_all_reduce"
""",
    # genuinely right, in a way of its own
    "hierarchical_busbw": VARIANT["hierarchical_busbw"],
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {
    "test_rabenseifner_steps": "print('all tests passed')",
    "test_fastest_all_reduce": "pass",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("rabenseifner_steps", "hierarchical_steps"),
            replaced={"fastest_all_reduce": ANY_N, "written_busbw": PARTIAL_WRITTEN},
        )
    },
    "hostile": {
        NOTEBOOK: submission(
            replaced={**HOSTILE, "written_busbw": HOSTILE_WRITTEN}, edited_tests=HOSTILE_TESTS
        )
    },
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong2": {NOTEBOOK: submission(replaced=WRONG2)},
    "variant": {NOTEBOOK: submission(replaced={**VARIANT, "written_busbw": VARIANT_WRITTEN})},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    # the written answer half right by the rubric (0.5, given by hand)
    "partial": {
        NOTEBOOK: {
            **ZERO,
            "test_rabenseifner_steps": 3,
            "test_hierarchical_steps": 3,
            "written_busbw": 0.5,
        }
    },
    # every tampering fails; only its genuinely correct hierarchical_busbw earns its points
    "hostile": {NOTEBOOK: {**ZERO, "test_hierarchical_busbw": 1}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "wrong2": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too)."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    "partial": {
        NOTEBOOK: {
            "test_fastest_all_reduce": Error(
                "fastest_all_reduce(6, 1000.0, 2e-06, 450000000000.0) is "
                "'recursive_doubling_all_reduce', but the answer is 'ring_all_reduce'"
            )
        }
    },
    "hostile": {
        NOTEBOOK: {
            "test_rabenseifner_steps": Error(
                startswith="rabenseifner_steps(2) computes the all-reduce in 2 steps, but rank 0 "
                "sends 4 chunks in all; Rabenseifner's algorithm sends 2(n - 1) = 2 (n - 1 while "
                "halving, n - 1 while doubling): halve the block a rank is responsible for at "
                "every step of the reduce-scatter"
            ),
            "test_hierarchical_steps": Error(
                startswith="hierarchical_steps(2) computes the all-reduce, but on "
                "cl.hardware.preset('dgx-h100', nodes=2) it takes 0.0402653184 s for "
                "1073741824 bytes (leaf 0.0402653 s), 5.87 times the "
                "0.006860017208888889 s of the hierarchical all-reduce"
            ),
            "test_fastest_all_reduce": Error(
                startswith="fastest_all_reduce(2, 1000000000.0, 2e-06, 450000000000.0) is "
                "'ring_all_reduce', but the answer is 'recursive_doubling_all_reduce'"
            ),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_rabenseifner_steps": Error(
                startswith="rabenseifner_steps(4) does not compute the all-reduce: after the last "
                "step, rank 0 chunk 3 holds chunk 3 summed over 2 of 4 ranks (0, 2)"
            ),
            "test_hierarchical_steps": Error(
                startswith="hierarchical_steps(1) computes the all-reduce, but on "
                "cl.hardware.preset('dgx-h100', nodes=1) it takes 0.03340530119111111 s",
                contains="8 times the 0.004175662648888889 s",
            ),
            "test_hierarchical_busbw": Error(
                startswith="hierarchical_busbw(2) is 78488372093.02327, expected "
                "293478260869.56525 = collectives.grading.collective_tasks."
                "hierarchical_busbw(2)"
            ),
        }
    },
    "wrong2": {
        NOTEBOOK: {
            "test_fastest_all_reduce": Error(
                "fastest_all_reduce(8, 100000000.0, 2e-06, 450000000000.0) is "
                "'recursive_doubling_all_reduce', but the answer is 'rabenseifner_all_reduce'"
            ),
            "test_hierarchical_busbw": Error(
                startswith="hierarchical_busbw(1) is 257142857142.85715, expected 450000000000.0",
                contains="(relative error 0.429)",
            ),
        }
    },
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {
        NOTEBOOK: {
            "test_rabenseifner_steps": refused(
                "rabenseifner_steps(4)", "your code uses cl, which is the collectives package"
            ),
            "test_hierarchical_steps": refused(
                "hierarchical_steps(1)",
                "your code uses two_level_ring_all_reduce, which is "
                "collectives.algorithms.hierarchical.two_level_ring_all_reduce",
            ),
            "test_fastest_all_reduce": refused(
                "fastest_all_reduce(8, 1000.0, 2e-06, 450000000000.0)",
                "your code imports 'collectives'",
            ),
            "test_hierarchical_busbw": refused(
                "hierarchical_busbw(1)", "your code imports 'collectives'"
            ),
        }
    },
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {
        NOTEBOOK: (
            "rabenseifner_steps(4) and rabenseifner_steps(8) are correct all-reduces in 2 log2(n) "
            "steps.",
            "hierarchical_steps(1) and hierarchical_steps(2) are all-reduces as fast as the "
            "course's best.",
            "fastest_all_reduce picks what cl.algorithms.fastest picks.",
        )
    },
    # what a learner's right answers, written their own way, are told
    "variant": {
        NOTEBOOK: (
            "2 node(s): the target for 1 GiB is 6.860 ms",
            "hierarchical_busbw agrees with cl.busbw and cl.time on 1 and 2 nodes.",
        )
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack("all_reduce", SOLUTIONS)
