"""cluster_collectives (exercises/source/cluster_collectives/cluster_collectives.ipynb, 10
points): what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Every task is solved without the collectives package (each hidden test re-runs the learner's
function with ``_grading.call(f, ..., isolated=True)``) and checked in the re-check by
``collectives.grading.tasks.cluster_collectives``, which times everything with ``cl.time`` on
the DGX H100 preset: the two tools (the levels of the hierarchical all-reduce; it pipelined,
with a latency per InfiniBand cable) against the package's numbers, and the three decisions by
what they do (a number of segments, a placement of a mesh, the ring or SHARP along the rails,
each no slower than the course's reference choice). Every hidden test adds cases drawn from the
course seed. Submissions:

- *correct*: every solution. It is also the **better-than-reference** submission: its
  ``choose_segments`` tries every count (the reference only powers of two: 68 segments, 4.7374
  ms, against 64 and 4.7383 ms on 4 nodes, 1 GiB, 2 us), its ``mesh_placement`` packs a mesh
  whose TP and DP groups fit in one node (``{"tp": 2, "dp": 4}``: 1.04 ms against the
  reference's 2.24 ms) and its ``rail_plan`` tries every count of SHARP segments (50: 2601.0 us
  against 64: 2604.06 us on 8 nodes, 1 GB, 1 us); tests/package/grading/tasks/
  test_cluster_collectives.py checks all three by hand; 10;
- *blank*: 0;
- *partial*: the two tools right, the chapter's layout (TP in the nodes) for every job, the
  rest blank: 1 + 2 = 3;
- *hostile*: wrong answers behind patched checks (``check_close``, ``run_isolated``, the task
  module's ``check_*``), a lying float, rebound names, edited test cells; its ``rail_plan`` is
  genuinely right, in a shape of its own (2);
- *wrong*: one plausible mistake per task (NVLink's "900 GB/s", every step charged the rails'
  latency, the segments chosen without the latency, the layout chosen by the bytes of one
  all-reduce of each axis with the TP count forgotten, SHARP with the most segments because
  latency was forgotten): 0;
- *variant*: right answers written differently (loops, numpy, the reference's own powers of
  two, the placement built from the mesh's index arrays, SHARP's best count from its closed
  form): 10;
- *shortcut*: the package called from every graded function in the ways a learner might: 0;
- *origin*: every graded name bound to the package's own code: 0;
- *computed_table*: ``level_seconds`` a lookup in a table the notebook computes while it is
  graded, from the hidden test's own case generator and the package's answers (the other
  tasks solved): its table is of the practice cases, since the kernel never holds the course
  seed, and misses the drawn ones: 9 (10 while the seed was in the kernel's environment);
- *filled_while_read*: the same table, as a dict subclass whose ``items()`` computes it when
  the grader reads the function's globals (after the cell's key is set): refused without
  being touched (the visible test fails too): 9 (10 before, found by the review of the key).
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "cluster_collectives"

POINTS = {
    NOTEBOOK: {
        "test_level_seconds": 1,
        "test_pipelined_seconds": 2,
        "test_choose_segments": 2,
        "test_mesh_placement": 3,
        "test_rail_plan": 2,
    }
}
MAX_SCORE = 10
SOLUTIONS = {
    NOTEBOOK: (
        "level_seconds",
        "pipelined_seconds",
        "choose_segments",
        "mesh_placement",
        "rail_plan",
    )
}
ALL_TESTS = tuple(POINTS[NOTEBOOK])

# ---- partial ----------------------------------------------------------------------------------

PARTIAL_PLACEMENT = """
def mesh_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    # the chapter's layout for every job: TP group g on node g, TP index j on local GPU j
    names = list(axes)
    placement = []
    for rank in range(math.prod(axes.values())):
        coords, rest = {}, rank
        for name in reversed(names):
            coords[name], rest = rest % axes[name], rest // axes[name]
        node = 0
        for name in names:
            if name != "tp":
                node = node * axes[name] + coords[name]
        placement.append(node * GPUS_PER_NODE + coords["tp"])
    return placement
"""

# ---- wrong: one plausible mistake per task ----------------------------------------------------

WRONG = {
    "level_seconds": """
def level_seconds(n_nodes, nbytes, level):
    if level == "nvlink":
        return 2 * 7 / 8 * nbytes / 900e9          # NVLink's "900 GB/s" (both directions)
    return 2 * (n_nodes - 1) / n_nodes * nbytes / 8 / NIC_BANDWIDTH
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments, link_latency):
    g, k = GPUS_PER_NODE, n_segments
    rs, ar = g - 1, 2 * (n_nodes - 1)
    n = rs + ar + rs
    nvlink_step = nbytes / g / k / NVLINK_BANDWIDTH
    nic_step = nbytes / (g * n_nodes) / k / NIC_BANDWIDTH
    total = 0.0
    for t in range(n + k - 1):
        lo, hi = max(0, t - k + 1), min(t, n - 1)
        on_nics = max(0, min(hi, rs + ar - 1) - max(lo, rs) + 1)
        on_nvlink = hi - lo + 1 - on_nics
        # every step charged the rails' two cables, NVLink-only steps too
        total += 2 * link_latency + max(on_nvlink * nvlink_step, on_nics * nic_step)
    return total
""",
    "choose_segments": """
def choose_segments(n_nodes, nbytes, link_latency):
    # the latency forgotten: more segments always look better
    return min(range(1, 257), key=lambda k: pipelined_seconds(n_nodes, nbytes, k, 0.0))
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    # NVLink for the axis with the larger buffer: the n_tp all-reduces counted once
    inside = "tp" if tp_bytes >= dp_bytes else "dp"
    names = list(axes)
    placement = []
    for rank in range(math.prod(axes.values())):
        coords, rest = {}, rank
        for name in reversed(names):
            coords[name], rest = rest % axes[name], rest // axes[name]
        node = 0
        for name in names:
            if name != inside:
                node = node * axes[name] + coords[name]
        placement.append(node * GPUS_PER_NODE + coords[inside])
    return placement
""",
    "rail_plan": """
def rail_plan(n_nodes, nbytes, link_latency):
    # without latency SHARP's time falls with every segment: the most segments
    shard = nbytes / GPUS_PER_NODE
    ring = 2 * (n_nodes - 1) / n_nodes * shard / NIC_BANDWIDTH
    sharp = 257 / 256 * shard / NIC_BANDWIDTH
    return ("ring", 1) if ring <= sharp else ("sharp", 256)
""",
}

# ---- variant: right, written differently ------------------------------------------------------

VARIANT = {
    "level_seconds": """
def level_seconds(n_nodes, nbytes, level):
    seconds = 0.0
    if level == "nvlink":
        for phase in ("reduce-scatter", "all-gather"):
            for step in range(GPUS_PER_NODE - 1):
                seconds += nbytes / GPUS_PER_NODE / NVLINK_BANDWIDTH
    elif level == "nic":
        piece = nbytes / GPUS_PER_NODE / n_nodes
        for step in range(2 * (n_nodes - 1)):
            seconds += piece / NIC_BANDWIDTH
    return seconds
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments, link_latency):
    g, k = GPUS_PER_NODE, n_segments
    on_nics = np.array([0] * (g - 1) + [1] * (2 * (n_nodes - 1)) + [0] * (g - 1))
    per_step = np.where(on_nics == 1, nbytes / (g * n_nodes) / NIC_BANDWIDTH,
                        nbytes / g / NVLINK_BANDWIDTH) / k
    nvlink = np.concatenate([[0.0], np.cumsum(np.where(on_nics == 0, per_step, 0.0))])
    nics = np.concatenate([[0.0], np.cumsum(np.where(on_nics == 1, per_step, 0.0))])
    rails = np.concatenate([[0], np.cumsum(on_nics)])
    t = np.arange(len(on_nics) + k - 1)
    lo, hi = np.maximum(0, t - k + 1), np.minimum(t, len(on_nics) - 1) + 1
    latency = 2 * link_latency * (rails[hi] - rails[lo] > 0)
    return float((np.maximum(nvlink[hi] - nvlink[lo], nics[hi] - nics[lo]) + latency).sum())
""",
    "choose_segments": """
def choose_segments(n_nodes, nbytes, link_latency):
    # the reference's own search: the powers of two
    times = {2 ** j: pipelined_seconds(n_nodes, nbytes, 2 ** j, link_latency) for j in range(9)}
    return min(sorted(times), key=times.get)
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    names = list(axes)
    tp, dp = axes["tp"], axes["dp"]
    ranks = np.arange(math.prod(axes.values())).reshape(tuple(axes.values()))
    sent = lambda n, s: 2 * (n - 1) / n * s
    tp_sent, dp_sent = n_tp * sent(tp, tp_bytes), sent(dp, dp_bytes)
    tp_on_nvlink = (tp_sent / NVLINK_BANDWIDTH + dp_sent / NIC_BANDWIDTH
                    <= tp_sent / NIC_BANDWIDTH + dp_sent / NVLINK_BANDWIDTH)
    inside = ["dp", "tp"] if tp * dp <= 8 else (["tp"] if tp_on_nvlink else ["dp"])
    order = [names.index(n) for n in names if n not in inside] + [names.index(n) for n in inside]
    width = math.prod(axes[n] for n in inside)
    blocks = ranks.transpose(order).reshape(-1, width)      # one row per node's block
    placement = np.zeros(ranks.size, dtype=int)
    for node, block in enumerate(blocks[::-1]):             # the nodes in the other order
        placement[block] = node * GPUS_PER_NODE + np.arange(width)
    return placement.tolist()
""",
    "rail_plan": """
def rail_plan(n_nodes, nbytes, link_latency):
    x = nbytes / 8 / NIC_BANDWIDTH                   # the shard's time through one NIC
    ring = 2 * (n_nodes - 1) * 2 * link_latency + 2 * (n_nodes - 1) / n_nodes * x
    # (k + 1)(L + x / k) is least near k = sqrt(x / L): try the integers either side
    best = math.sqrt(x / link_latency)
    candidates = {min(256, max(1, int(c))) for c in (math.floor(best), math.ceil(best))}
    sharp = {k: (k + 1) * (link_latency + x / k) for k in candidates}
    k = min(sharp, key=sharp.get)
    return ("sharp", k) if sharp[k] < ring else ("ring", 1)
""",
}

# ---- shortcut: the package called from the graded functions -----------------------------------

SHORTCUT = {
    "level_seconds": """
def level_seconds(n_nodes, nbytes, level):
    timing = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                     cl.hardware.preset("dgx-h100", nodes=n_nodes), nbytes)
    return timing.level_seconds().get({"nvlink": "nvlink", "nic": "leaf"}[level], 0.0)
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments, link_latency):
    schedule = cl.transforms.pipelined(cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                                       n_segments)
    topology = cl.hardware.preset("dgx-h100", nodes=n_nodes, network_latency=link_latency)
    return cl.time(schedule, topology, nbytes).seconds
""",
    "choose_segments": """
from collectives.grading.tasks.cluster_collectives import reference_segments


def choose_segments(n_nodes, nbytes, link_latency):
    return reference_segments(n_nodes, nbytes, link_latency)[0]
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    mesh = cl.Mesh(axes)
    placement = [0] * mesh.n_ranks
    for node, group in enumerate(mesh.groups("tp").tolist()):
        for local, rank in enumerate(group):
            placement[rank] = node * 8 + local
    return placement
""",
    "rail_plan": """
import importlib


def rail_plan(n_nodes, nbytes, link_latency):
    tasks = importlib.import_module("collectives.grading.tasks.cluster_collectives")
    return tasks.reference_rail_plan(n_nodes, nbytes, link_latency)[0]
""",
}

# ---- hostile: wrong answers behind tampering; rail_plan genuinely right -----------------------

# what each cell's own visible test reads, patched (every hidden test before it reloads the
# grading package, so each cell patches again)
PATCH = """
import collectives.grading
import collectives.grading.tasks.cluster_collectives
collectives.grading.check_close = lambda value, *args, **kwargs: value
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
for _name in ("check_segments", "check_mesh_placement", "check_rail_plan"):
    setattr(collectives.grading.tasks.cluster_collectives, _name, lambda *args, **kwargs: 1.0)
"""
HOSTILE = {
    "level_seconds": TAMPERING
    + """
def level_seconds(n_nodes, nbytes, level):
    if level == "nvlink":
        return 2 * 7 / 8 * nbytes / 900e9
    return 2 * (n_nodes - 1) / n_nodes * nbytes / 8 / 50e9
""",
    "pipelined_seconds": PATCH
    + """
class _Liar(float):                    # equal to everything
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__


def pipelined_seconds(n_nodes, nbytes, n_segments, link_latency):
    return _Liar(n_nodes * 1e-3)
""",
    "choose_segments": PATCH
    + """
expected = _expected = 64


def choose_segments(n_nodes, nbytes, link_latency):
    return 1
""",
    "mesh_placement": PATCH
    + """
import collectives.grading.isolation
# what the hidden test would get from the graded re-run, and its reference
collectives.grading.isolation.run_calls = lambda calls, timeout=60.0: [
    (True, list(range(64)))] * len(calls)
collectives.grading.tasks.cluster_collectives.reference_placement = (
    lambda *args, **kwargs: (1.0, "anything", list(range(64))))
_what = "mesh_placement({'dp': 8, 'tp': 8}, 8, 128, 33554432.0, 1750000000.0)"


def mesh_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    return list(range(math.prod(axes.values())))    # rank order, whatever the mesh
""",
    # genuinely right, in a shape of its own (and it rebinds range, which no test may read)
    "rail_plan": """
range = lambda *args: ()


def rail_plan(n_nodes, nbytes, link_latency):
    x = nbytes / 8 / NIC_BANDWIDTH
    ring = 4 * (n_nodes - 1) * link_latency + 2 * (n_nodes - 1) / n_nodes * x
    best, k = None, 1
    while k <= 256:
        seconds = (k + 1) * (link_latency + x / k)
        if best is None or seconds < best[0]:
            best = (seconds, k)
        k += 1
    return ("ring", 1) if ring <= best[0] else ("sharp", best[1])
""",
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_level_seconds": "print('all tests passed')", "test_choose_segments": "pass"}

# The computed table: a notebook that, while it is graded, draws the hidden test's cases with
# the public task module (from the course seed, had the kernel got it), computes their answers
# with the package, and leaves them in a plain global that its function reads (the isolated
# re-run carries plain globals over). The kernel holds no seed: its table is of the practice
# cases, the visible ones included, and misses the cohort's drawn cases.
COMPUTED_TABLE = """
import collectives.grading.tasks.cluster_collectives as tasks_module

TABLE = {}
for n, s in [*tasks_module.level_cases(3), (4, 2**30), (8, 2**30)]:
    for level in ("nvlink", "nic"):
        TABLE[repr((int(n), float(s), level))] = tasks_module.hierarchical_level_seconds(
            n, s, level
        )


def level_seconds(n_nodes, nbytes, level):
    return TABLE[repr((int(n_nodes), float(nbytes), level))]
"""

# The table filled while the grader reads it (review of 2026-12-03): a dict subclass whose
# items() draws the cases of the key then set and computes their answers with the package.
# The grader no longer touches an object of the learner's class: refused, its items() unrun.
FILLED_WHILE_READ = """
import collectives.grading.tasks.cluster_collectives as tasks_module


class Answers(dict):
    def items(self):
        for n, s in [*tasks_module.level_cases(3), (4, 2**30), (8, 2**30)]:
            for level in ("nvlink", "nic"):
                self[repr((int(n), float(s), level))] = tasks_module.hierarchical_level_seconds(
                    n, s, level
                )
        return super().items()


TABLE = Answers()


def level_seconds(n_nodes, nbytes, level):
    return TABLE[repr((int(n_nodes), float(nbytes), level))]
"""

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
    "filled_while_read": {
        NOTEBOOK: submission(
            solved=SOLUTIONS[NOTEBOOK][1:], replaced={"level_seconds": FILLED_WHILE_READ}
        )
    },
    "computed_table": {
        NOTEBOOK: submission(
            solved=SOLUTIONS[NOTEBOOK][1:], replaced={"level_seconds": COMPUTED_TABLE}
        )
    },
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("level_seconds", "pipelined_seconds"),
            replaced={"mesh_placement": PARTIAL_PLACEMENT},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(ALL_TESTS, 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    # full marks before the seed stayed out of the kernel (2026-12-03)
    "computed_table": {NOTEBOOK: {**POINTS[NOTEBOOK], "test_level_seconds": 0}},
    # full marks before the grader stopped touching the learner's objects (2026-12-03)
    "filled_while_read": {NOTEBOOK: {**POINTS[NOTEBOOK], "test_level_seconds": 0}},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {NOTEBOOK: {**ZERO, "test_level_seconds": 1, "test_pipelined_seconds": 2}},
    # every tampering fails; only its genuinely right rail_plan earns its points
    "hostile": {NOTEBOOK: {**ZERO, "test_rail_plan": 2}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)


def refused(call, why):
    """The message of a graded function that used the package."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    # the chapter's layout for a job whose DP all-reduce outweighs its TP ones (visible test)
    "partial": {
        NOTEBOOK: {
            "test_mesh_placement": Error(
                "mesh_placement({'tp': 8, 'dp': 4}, 8, 8, 1048576.0, 1073741824.0): by cl.time "
                "its step (8 TP all-reduces of 1048576.0 bytes, one DP all-reduce of "
                "1073741824.0 bytes) takes 0.03224487708444444 s (TP 3.26224e-05 s, DP "
                "0.0322123 s; its first TP group is on GPUs [0, 1, 2, 3, 4, 5, 6, 7], its first "
                "DP group on GPUs [0, 8, 16, 24]), 8.32611 times the 0.0038727406933333334 s "
                "(TP 0.000293601 s, DP 0.00357914 s) with every DP group inside a node and every "
                "TP group along a rail (TP group [0, 8, 16, 24, 32, 40, 48, 56], DP group [0, 1, "
                "2, 3])"
            )
        }
    },
    # the in-kernel checks were disabled or fooled: these are the hidden verdicts, on what the
    # functions returned when re-run without the package
    "hostile": {
        NOTEBOOK: {
            "test_level_seconds": Error(
                startswith='level_seconds(1, 1073741824.0, "nvlink") is 0.0020878313244444445, '
                "expected 0.00417566264888889 = collectives.grading.hierarchical_level_seconds(1, "
                "1073741824.0, 'nvlink'); yours is exactly 1/2 times that"
            ),
            "test_pipelined_seconds": Error(
                startswith="pipelined_seconds(1, 1073741824.0, 4, 1e-06) raised NameError: _Liar "
                "is a class defined in the notebook"
            ),
            # one segment: nothing overlaps, 8.226 ms against 4.738 ms with 64
            "test_choose_segments": Error(
                "choose_segments(4, 1073741824.0, 2e-06) is 1: pipelined in 1 segment the "
                "all-reduce takes 8.22619 ms by cl.time, 1.73612 times the 4.73827 ms with 64 "
                "segments (with fewer segments more of the faster level is left outside the "
                "overlap"
                "; if your pipelined_seconds agrees with cl.time, take the count it makes "
                "fastest, trying every one)"
            ),
            # rank order with tp listed first: each TP ring changes rail between nodes, through
            # the spines' hashed paths
            "test_mesh_placement": Error(
                "mesh_placement({'tp': 8, 'dp': 4}, 8, 8, 1048576.0, 1073741824.0): by cl.time "
                "its step (8 TP all-reduces of 1048576.0 bytes, one DP all-reduce of "
                "1073741824.0 bytes) takes 0.004166341973333334 s (TP 0.000587203 s, DP "
                "0.00357914 s; its first TP group is on GPUs [0, 4, 8, 12, 16, 20, 24, 28], its "
                "first DP group on GPUs [0, 1, 2, 3]), 1.07581 times the 0.0038727406933333334 s "
                "(TP 0.000293601 s, DP 0.00357914 s) with every DP group inside a node and every "
                "TP group along a rail (TP group [0, 8, 16, 24, 32, 40, 48, 56], DP group [0, 1, "
                "2, 3])"
            ),
        }
    },
    # each plausible mistake, caught by the visible tests already, with the message a learner
    # reads
    "wrong": {
        NOTEBOOK: {
            "test_level_seconds": Error(  # NVLink's "900 GB/s" counts both directions
                'level_seconds(4, 2**30, "nvlink") is 0.0020878313244444445, expected '
                "0.00417566264888889; yours is exactly 1/2 times that"
            ),
            # 20 steps charged 4 us instead of the rails' 6: 56 us too much
            "test_pipelined_seconds": Error(
                "pipelined_seconds(4, 2**30, 1, 2e-06) is 0.008282194488888889, expected "
                "0.008226194488888889 (relative error 0.00681)"
            ),
            "test_choose_segments": Error(
                "choose_segments(4, 1073741824.0, 2e-06) is 256: pipelined in 256 segments the "
                "all-reduce takes 5.29132 ms by cl.time, 1.11672 times the 4.73827 ms with 64 "
                "segments (every segment is one more step, and every step on the rails pays the "
                "latency"
                "; if your pipelined_seconds agrees with cl.time, take the count it makes "
                "fastest, trying every one)"
            ),
            # 1.75 GB > 32 MiB, so DP got NVLink: the 128 TP all-reduces went to the NICs
            "test_mesh_placement": Error(
                "mesh_placement({'dp': 8, 'tp': 8}, 8, 128, 33554432.0, 1750000000.0): by "
                "cl.time its step (128 TP all-reduces of 33554432.0 bytes, one DP all-reduce of "
                "1750000000.0 bytes) takes 0.15712941091555555 s (TP 0.150324 s, DP 0.00680556 "
                "s; its first TP group is on GPUs [0, 8, 16, 24, 32, 40, 48, 56], its first DP "
                "group on GPUs [0, 1, 2, 3, 4, 5, 6, 7]), 2.0157 times the 0.07795265059555556 s "
                "(TP 0.0167027 s, DP 0.06125 s) with every TP group inside a node and every DP "
                "group along a rail (TP group [0, 1, 2, 3, 4, 5, 6, 7], DP group [0, 8, 16, 24, "
                "32, 40, 48, 56])"
            ),
            # 257 steps of 1 us: 163 us more than SHARP in 64 segments
            "test_rail_plan": Error(
                "rail_plan(8, 1000000000.0, 1e-06) is ('sharp', 256): the all-reduce along the "
                "rails takes 2766.77 us by cl.time, 1.06248 times the 2604.06 us of ('sharp', "
                "64) (ring 4403 us, SHARP in one segment 5002 us)"
            ),
        }
    },
    # right in the kernel, refused by the re-run without the package (the visible tests make it
    # too, with run_isolated, so a learner reads this before submitting)
    "shortcut": {
        NOTEBOOK: {
            "test_level_seconds": refused(
                "level_seconds(4, 1073741824, 'nvlink')",
                "your code uses cl, which is the collectives package",
            ),
            "test_pipelined_seconds": refused(
                "pipelined_seconds(4, 1073741824, 1, 0.0)",
                "your code uses cl, which is the collectives package",
            ),
            "test_choose_segments": refused(
                "choose_segments(4, 1073741824.0, 2e-06)",
                "your code uses reference_segments, which is "
                "collectives.grading.tasks.cluster_collectives.reference_segments",
            ),
            "test_mesh_placement": refused(
                "mesh_placement({'dp': 8, 'tp': 8}, 8, 128, 33554432.0, 1750000000.0)",
                "your code uses cl, which is the collectives package",
            ),
            "test_rail_plan": refused(
                "rail_plan(8, 1000000000.0, 1e-06)", "your code imports 'collectives'"
            ),
        }
    },
}
PRINTED = {
    "hostile": {
        NOTEBOOK: (
            "pipelined_seconds agrees with cl.time.",
            "mesh_placement makes the step as fast as the reference or faster.",
            "rail_plan finishes the rails' all-reduce as soon as the reference or sooner.",
        )
    }
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "cluster_collectives", SOLUTIONS
)
