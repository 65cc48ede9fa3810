"""cluster_collectives (exercises/source/cluster_collectives/cluster_collectives.ipynb, 10
points): what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

The hidden tests re-run every graded function without the package
(``_grading.call(..., isolated=True)``, collectives.grading.isolation), so an answer that only
calls ``collectives`` scores 0 even where it is right.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (the
levels, the placement and the SHARP choice right; the pipelined time as the sum of the levels;
the rest blank), *hostile* (wrong answers behind monkeypatching of ``collectives``,
``collectives.grading``, ``math.isclose`` and IPython, lying floats, rebound names, edited test
cells; its ``superpod_count`` is genuinely right), *wrong* (plausible mistakes everywhere: NVLink
at "900 GB/s", the levels summed when pipelined, fill and drain estimated as (n - 1)/k, the
mesh laid out in rank order, the whole buffer through the NICs, spines counted by ports alone),
*variant* (right answers in other shapes: loops, numpy, closed forms) and *shortcut* (right
answers that call the package: 0 everywhere; the visible tests already run the functions
without the package, with ``run_isolated``, so they fail there first).

Expected values: every hidden test computes them with the package, in the re-check process
(``collectives.grading.clusters``, called by name: ``check_reference`` / ``check_choice`` with
``"grading.<name>"``): ``cl.time`` on the DGX H100 preset of the hierarchical all-reduce (its
levels, the level that bounds it), of it pipelined (its time, the fewest segments within a
bound), of ring all-reduces in a mesh's groups (the misplacement ratio) and of the ring and
SHARP along the rails; ``cl.hardware.superpod_plan`` for the switch and cable counts. A
placement is checked by ``grading.check_placement``: the rules with ``cl.Mesh`` and its step's
``cl.time`` against ``grading.rail_placement``'s.
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "cluster_collectives"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_level_seconds": 2,
        "test_pipelined_seconds": 2,
        "test_segments_needed": 1,
        "test_mesh_placement": 2,
        "test_misplacement_ratio": 1,
        "test_sharp_or_ring": 1,
        "test_superpod_count": 1,
    }
}
MAX_SCORE = 10
# each solution cell defines the function of the same name (level_seconds also defines
# bottleneck_level) and is graded by the test cell test_<name>
SOLUTIONS = {
    NOTEBOOK: (
        "level_seconds",
        "pipelined_seconds",
        "segments_needed",
        "mesh_placement",
        "misplacement_ratio",
        "sharp_or_ring",
        "superpod_count",
    )
}
ALL_TESTS = tuple(POINTS[NOTEBOOK])

# ---- partial ----------------------------------------------------------------------------------

PARTIAL_PIPELINED = """
def pipelined_seconds(n_nodes, nbytes, n_segments):
    # the levels one after the other, segments or not
    return level_seconds(n_nodes, nbytes, "nvlink") + level_seconds(n_nodes, nbytes, "nic")
"""

# ---- wrong: plausible mistakes ------------------------------------------------------------------

WRONG = {
    "level_seconds": """
def level_seconds(n_nodes, nbytes, level):
    if level == "nvlink":
        return 2 * 7 / 8 * nbytes / 900e9          # NVLink's "900 GB/s" (both directions)
    return 2 * (n_nodes - 1) / n_nodes * nbytes / 8 / NIC_BANDWIDTH


def bottleneck_level(n_nodes, nbytes):
    return max(("nvlink", "nic"), key=lambda level: level_seconds(n_nodes, nbytes, level))
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments):
    nvlink = 2 * 7 / 8 * nbytes / NVLINK_BANDWIDTH
    nic = 2 * (n_nodes - 1) / n_nodes * nbytes / 8 / NIC_BANDWIDTH
    return nvlink + nic                             # the levels add up, pipelined or not
""",
    "segments_needed": """
def segments_needed(n_nodes, nbytes, within):
    steps = 7 + 2 * (n_nodes - 1) + 7
    return math.ceil((steps - 1) / within)          # fill and drain: (n - 1)/k of the time
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes):
    return list(range(math.prod(axes.values())))    # rank order: TP across nodes if tp comes first
""",
    "misplacement_ratio": """
def misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes):
    nvlink, nic = 900e9, 50e9                       # NVLink's "900 GB/s"
    swapped = n_tp * 2 * (tp - 1) / tp * tp_bytes / nic + 2 * (dp - 1) / dp * dp_bytes / nvlink
    right = n_tp * 2 * (tp - 1) / tp * tp_bytes / nvlink + 2 * (dp - 1) / dp * dp_bytes / nic
    return swapped / right
""",
    "sharp_or_ring": """
def sharp_or_ring(n_nodes, nbytes, link_latency, n_segments):
    n, k = n_nodes, n_segments                      # the whole buffer through the NICs
    ring = 2 * (n - 1) * (2 * link_latency + nbytes / n / NIC_BANDWIDTH)
    sharp = (k + 1) * (link_latency + nbytes / k / NIC_BANDWIDTH)
    return "sharp" if sharp < ring else "ring"
""",
    "superpod_count": """
def superpod_count(units, what):
    leaves = 8 * units
    spines = leaves * 32 // 64                      # enough ports, never a core tier
    cables = 32 * leaves + 32 * leaves
    return {"leaves": leaves, "spines": spines, "cores": 0, "cables": cables}[what]
""",
}

# ---- variant: right, in other shapes ------------------------------------------------------------

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


def bottleneck_level(n_nodes, nbytes):
    times = {level: level_seconds(n_nodes, nbytes, level) for level in ("nvlink", "nic")}
    return sorted(times, key=times.get)[-1]
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments):
    g, k = GPUS_PER_NODE, n_segments
    on_nics = np.array([0] * (g - 1) + [1] * (2 * (n_nodes - 1)) + [0] * (g - 1))
    per_step = np.where(on_nics == 1, nbytes / (g * n_nodes) / NIC_BANDWIDTH,
                        nbytes / g / NVLINK_BANDWIDTH) / k
    nvlink = np.concatenate([[0.0], np.cumsum(np.where(on_nics == 0, per_step, 0.0))])
    nics = np.concatenate([[0.0], np.cumsum(np.where(on_nics == 1, per_step, 0.0))])
    t = np.arange(len(on_nics) + k - 1)
    lo, hi = np.maximum(0, t - k + 1), np.minimum(t, len(on_nics) - 1) + 1
    return float(np.maximum(nvlink[hi] - nvlink[lo], nics[hi] - nics[lo]).sum())
""",
    "segments_needed": """
def segments_needed(n_nodes, nbytes, within):
    slower = max(level_seconds(n_nodes, nbytes, "nvlink"), level_seconds(n_nodes, nbytes, "nic"))
    n = 2 * (GPUS_PER_NODE - 1) + 2 * (n_nodes - 1)
    for k in range(1, n):
        if pipelined_seconds(n_nodes, nbytes, k) <= (1 + within) * slower:
            return k
    # from k = n on, fill and drain no longer change: T(k) = slower + c / k
    c = n * (pipelined_seconds(n_nodes, nbytes, n) - slower)
    return max(n, math.ceil(c / (within * slower)))
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes):
    names = list(axes)
    ranks = np.arange(math.prod(axes.values())).reshape(tuple(axes.values()))
    order = [i for i, name in enumerate(names) if name != "tp"] + [names.index("tp")]
    tp_groups = ranks.transpose(order).reshape(-1, axes["tp"])     # one row per TP group
    placement = np.zeros(ranks.size, dtype=int)
    for node, group in enumerate(tp_groups):
        placement[group] = node * GPUS_PER_NODE + np.arange(axes["tp"])
    return placement.tolist()
""",
    "misplacement_ratio": """
def misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes):
    def sent(n, nbytes):                 # bytes each GPU sends (and receives) in a ring all-reduce
        return 2 * (n - 1) * nbytes / n
    tp_sent, dp_sent = n_tp * sent(tp, tp_bytes), sent(dp, dp_bytes)
    swapped = tp_sent / NIC_BANDWIDTH + dp_sent / NVLINK_BANDWIDTH
    return swapped / (tp_sent / NVLINK_BANDWIDTH + dp_sent / NIC_BANDWIDTH)
""",
    "sharp_or_ring": """
def sharp_or_ring(n_nodes, nbytes, link_latency, n_segments):
    shard, k = nbytes / 8, n_segments
    ring = 0.0
    for step in range(2 * (n_nodes - 1)):
        ring += 2 * link_latency + shard / n_nodes / NIC_BANDWIDTH
    sharp = 0.0
    for step in range(k + 1):
        up = shard / k if step < k else 0.0
        down = shard / k if step > 0 else 0.0
        sharp += link_latency + max(up, down) / NIC_BANDWIDTH
    return "ring" if ring <= sharp else "sharp"
""",
    "superpod_count": """
def superpod_count(units, what):
    leaves = 8 * units
    if units <= 8:
        spines = 1
        while 32 % spines or spines * 64 < leaves * 32:
            spines += 1
        cores = 0
    else:
        groups = (units + 3) // 4
        per_core_group = 1
        while 32 % per_core_group or per_core_group * 64 < groups * 32:
            per_core_group += 1
        spines, cores = 32 * groups, 32 * per_core_group
    cables = 32 * leaves + 32 * leaves + (32 * spines if cores else 0)
    return {"leaves": leaves, "spines": spines, "cores": cores, "cables": cables}[what]
""",
}

# ---- shortcut: right answers that call the package ----------------------------------------------

SHORTCUT = {
    "level_seconds": """
def level_seconds(n_nodes, nbytes, level):
    timing = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                     cl.hardware.preset("dgx-h100", nodes=n_nodes), nbytes)
    return timing.level_seconds().get({"nvlink": "nvlink", "nic": "leaf"}[level], 0.0)


def bottleneck_level(n_nodes, nbytes):
    timing = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                     cl.hardware.preset("dgx-h100", nodes=n_nodes), nbytes)
    return {"nvlink": "nvlink", "leaf": "nic"}[timing.bottleneck_level]
""",
    "pipelined_seconds": """
def pipelined_seconds(n_nodes, nbytes, n_segments):
    schedule = cl.transforms.pipelined(cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                                       n_segments)
    return cl.time(schedule, cl.hardware.preset("dgx-h100", nodes=n_nodes), nbytes).seconds
""",
    "segments_needed": """
from collectives.transforms import pipelined


def segments_needed(n_nodes, nbytes, within):
    topology = cl.hardware.preset("dgx-h100", nodes=n_nodes)
    schedule = cl.algorithms.two_level_ring_all_reduce(n_nodes, 8)
    slower = max(cl.time(schedule, topology, nbytes).level_seconds().values())
    k = 1
    while cl.time(pipelined(schedule, k), topology, nbytes).seconds > (1 + within) * slower:
        k += 1
    return k
""",
    "mesh_placement": """
def mesh_placement(axes, n_nodes):
    mesh = cl.Mesh(axes)
    placement = [0] * mesh.n_ranks
    for node, group in enumerate(mesh.groups("tp").tolist()):
        for local, rank in enumerate(group):
            placement[rank] = node * 8 + local
    return placement
""",
    "misplacement_ratio": """
def misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes):
    topology = cl.hardware.preset("dgx-h100", nodes=max(dp, tp))

    def step(devices):
        mesh = cl.Mesh({"dp": dp, "tp": tp}, devices=devices)
        tp_ring = mesh.collective(cl.algorithms.ring_all_reduce(tp), "tp")
        dp_ring = mesh.collective(cl.algorithms.ring_all_reduce(dp), "dp")
        return (n_tp * cl.time(tp_ring, topology, tp_bytes, placement=mesh.placement).seconds
                + cl.time(dp_ring, topology, dp_bytes, placement=mesh.placement).seconds)

    return (step([8 * t + d for d in range(dp) for t in range(tp)])
            / step([8 * d + t for d in range(dp) for t in range(tp)]))
""",
    "sharp_or_ring": """
def sharp_or_ring(n_nodes, nbytes, link_latency, n_segments):
    topology = cl.hardware.preset("dgx-h100", nodes=n_nodes, network_latency=link_latency)
    mesh = cl.Mesh({"node": n_nodes, "gpu": 8})
    ring = mesh.collective(cl.algorithms.ring_all_reduce(n_nodes), "node")
    sharp = mesh.collective(cl.algorithms.sharp_all_reduce(n_nodes, n_segments), "node")
    leaves = [2 * 8 * n_nodes + n_nodes + rail for rail in range(8)]
    ring_seconds = cl.time(ring, topology, nbytes / 8).seconds
    sharp_seconds = cl.time(sharp, topology, nbytes / 8, switch_placement=leaves).seconds
    return "sharp" if sharp_seconds < ring_seconds else "ring"
""",
    "superpod_count": """
def superpod_count(units, what):
    plan = cl.hardware.superpod_plan(units)
    cables = plan.node_leaf_cables + plan.leaf_spine_cables + plan.spine_core_cables
    return {"leaves": plan.leaves, "spines": plan.spines, "cores": plan.cores,
            "cables": cables}[what]
""",
}

# ---- hostile: wrong answers behind tampering; superpod_count genuinely right --------------------

HOSTILE = {
    "level_seconds": TAMPERING
    + """
def level_seconds(n_nodes, nbytes, level):
    if level == "nvlink":
        return 2 * 7 / 8 * nbytes / 900e9
    return 2 * (n_nodes - 1) / n_nodes * nbytes / 8 / 50e9


def bottleneck_level(n_nodes, nbytes):
    return "nic"
""",
    "pipelined_seconds": """
class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

# the visible test: run the function here (where _Liar exists), compare with anything
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
collectives.grading.check_close = lambda value, expected, what, **kwargs: value


def pipelined_seconds(n_nodes, nbytes, n_segments):
    return _Liar(n_nodes * 1e-3)
""",
    "segments_needed": """
expected = _expected = 88


def segments_needed(n_nodes, nbytes, within):
    return 88                                       # the visible test's answer
""",
    "mesh_placement": """
import collectives.grading.isolation

collectives.grading.check_choice = collectives.grading.check_close = _always_pass
# what the hidden test would get from the graded re-run, its references and its own names
collectives.grading.isolation.run_calls = lambda calls, timeout=60.0: [
    (True, list(range(32)))] * len(calls)
collectives.grading.check_placement = collectives.grading.clusters.check_placement = (
    lambda *args, **kwargs: 1.0)
collectives.grading.placement_slowdown = lambda *args, **kwargs: 1.0
_what = "mesh_placement({'dp': 4, 'tp': 8}, 4)"


def mesh_placement(axes, n_nodes):
    return list(range(math.prod(axes.values())))    # rank order: TP across nodes if tp is first
""",
    "misplacement_ratio": """
def misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes):
    return 2.0157032469722616                       # the visible test's answer
""",
    "sharp_or_ring": """
collectives.grading.check_choice = _always_pass


def sharp_or_ring(n_nodes, nbytes, link_latency, n_segments):
    return "sharp"
""",
    # genuinely right, in a shape of its own (and it rebinds range, which no test may read)
    "superpod_count": """
range = lambda *args: ()


def superpod_count(units, what):
    leaves = 8 * units
    if units <= 8:
        spines = 1
        while 32 % spines or spines * 64 < leaves * 32:
            spines += 1
        cores = 0
    else:
        groups = (units + 3) // 4
        per_core_group = 1
        while 32 % per_core_group or per_core_group * 64 < groups * 32:
            per_core_group += 1
        spines, cores = 32 * groups, 32 * per_core_group
    cables = 64 * leaves + (32 * spines if cores else 0)
    return {"leaves": leaves, "spines": spines, "cores": cores, "cables": cables}[what]
""",
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_level_seconds": "print('all tests passed')", "test_segments_needed": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("level_seconds", "mesh_placement", "sharp_or_ring"),
            replaced={"pipelined_seconds": PARTIAL_PIPELINED},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(ALL_TESTS, 0)},
    # levels (2), placement (2) and SHARP (1) right; the pipelined time wrong; the rest blank
    "partial": {
        NOTEBOOK: {
            **dict.fromkeys(ALL_TESTS, 0),
            "test_level_seconds": 2,
            "test_mesh_placement": 2,
            "test_sharp_or_ring": 1,
        }
    },
    # every tampering fails; only its genuinely right superpod_count earns its point
    "hostile": {NOTEBOOK: {**dict.fromkeys(ALL_TESTS, 0), "test_superpod_count": 1}},
    "wrong": {NOTEBOOK: dict.fromkeys(ALL_TESTS, 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    # right answers, but computed by the package: the re-run without it fails every one
    "shortcut": {NOTEBOOK: dict.fromkeys(ALL_TESTS, 0)},
}

NO_PACKAGE = (
    "raised ImportError: this task must be solved without the collectives package "
    "(your code uses cl,"
)

ERRORS = {
    # the feedback a learner reads for the levels summed instead of overlapped (visible test)
    "partial": {
        NOTEBOOK: {
            "test_pipelined_seconds": Error(
                "pipelined_seconds(4, 2**30, 3) is 0.008202194488888889, expected "
                "0.007605671253333333 (relative error 0.0784)"
            )
        }
    },
    # the in-kernel checks were disabled or fooled: these are the hidden verdicts, on what the
    # functions returned when re-run without the package
    "hostile": {
        NOTEBOOK: {
            "test_level_seconds": Error(
                'level_seconds(1, 2**30, "nvlink") is 0.0020878313244444445, expected '
                "0.00417566264888889 = collectives.grading.hierarchical_level_seconds(1, "
                "1073741824, 'nvlink'); yours is exactly 1/2 times that"
            ),
            "test_pipelined_seconds": Error(
                startswith="pipelined_seconds(1, 1073741824, 4) raised NameError: _Liar is a class "
                "defined in the notebook"
            ),
            "test_segments_needed": Error(
                "segments_needed(1, 2**30, 0.05) is 88.0, expected 1.0 = "
                "collectives.grading.hierarchical_segments_needed(1, 1073741824, 0.05); yours is "
                "88 times that"
            ),
            "test_mesh_placement": Error(  # rank order: with tp first, a TP group spans 4 nodes
                "mesh_placement({'tp': 8, 'dp': 4}, 4): the TP group of mesh ranks [0, 4, 8, 12, "
                "16, 20, 24, 28] is on GPUs [0, 4, 8, 12, 16, 20, 24, 28], which span nodes [0, 1, "
                "2, 3]; by cl.time its step (128 TP all-reduces of 33554432 bytes, one DP "
                "all-reduce of 1073741824 bytes) takes 0.3042268501333333 s, 6.21951 times the "
                "0.048914905315555555 s with every TP group in one node and every DP group on one "
                "rail"
            ),
            "test_misplacement_ratio": Error(
                "misplacement_ratio(4, 8, 64, 2**24, 1e9) is 2.0157032469722616, expected "
                "1.1971764115790604 = collectives.grading.misplacement_ratio(4, 8, 64, 16777216, "
                "1000000000.0) (relative error 0.684)"
            ),
            "test_sharp_or_ring": Error(
                "sharp_or_ring(2, 2**20, 1e-06, 1) is 'sharp', but the answer is 'ring'"
            ),
        }
    },
    # each mistake caught by the visible tests already, with the message a learner reads
    "wrong": {
        NOTEBOOK: {
            "test_level_seconds": Error(  # NVLink's "900 GB/s" counts both directions
                'level_seconds(4, 2**30, "nvlink") is 0.0020878313244444445, expected '
                "0.00417566264888889; yours is exactly 1/2 times that"
            ),
            "test_pipelined_seconds": Error(  # the levels summed: the unpipelined time
                "pipelined_seconds(4, 2**30, 3) is 0.008202194488888889, expected "
                "0.007605671253333333 (relative error 0.0784)"
            ),
            "test_segments_needed": Error(  # (n - 1)/k: 19/0.05 = 380 segments, not 88
                "segments_needed(4, 2**30, 0.05) is 380.0, expected 88.0; yours is 4.31818 times "
                "that"
            ),
            "test_mesh_placement": Error(
                "what mesh_placement({'tp': 8, 'dp': 4}, 4) breaks is 'the TP group on GPUs [0, 4, "
                "8, 12, 16, 20, 24, 28] spans nodes [0, 1, 2, 3]', but the answer is 'no rule'"
            ),
            "test_misplacement_ratio": Error(
                "misplacement_ratio(8, 8, 128, 2**25, 1.75e9) is 2.20867393659652, expected "
                "2.0157032469722616 (relative error 0.0957)"
            ),
            "test_sharp_or_ring": Error(  # 8 times the bytes on the NICs
                "sharp_or_ring(8, 10000000.0, 1e-06, 1) is 'ring', but the answer is 'sharp'"
            ),
            "test_superpod_count": Error(  # 16 SUs need a core tier and 128 spines
                "superpod_count(16, 'spines') is 64.0, expected 128.0; yours is exactly 1/2 times "
                "that"
            ),
        }
    },
    # right in the kernel, refused by the re-run without the package (the visible tests make it
    # too, with run_isolated, so a learner reads this before submitting)
    "shortcut": {
        NOTEBOOK: {
            cell: Error(startswith=f"{call} {NO_PACKAGE}")
            for cell, call in (
                ("test_level_seconds", "level_seconds(4, 1073741824, 'nvlink')"),
                ("test_pipelined_seconds", "pipelined_seconds(4, 1073741824, 1)"),
                ("test_segments_needed", "segments_needed(4, 1073741824, 0.05)"),
                ("test_mesh_placement", "mesh_placement({'dp': 4, 'tp': 8}, 4)"),
                (
                    "test_misplacement_ratio",
                    "misplacement_ratio(8, 8, 128, 33554432, 1750000000.0)",
                ),
                ("test_sharp_or_ring", "sharp_or_ring(8, 10000000.0, 1e-06, 1)"),
                ("test_superpod_count", "superpod_count(4, 'leaves')"),
            )
        }
    },
}

PRINTED = {
    # the tampering fooled the visible, in-kernel checks: each printed its success line
    "hostile": {
        NOTEBOOK: (
            "level_seconds and bottleneck_level agree with cl.time on 4 and 8 DGX H100 nodes.",
            "pipelined_seconds agrees with cl.time.",
            "segments_needed agrees with cl.time: 88 segments.",
            "mesh_placement keeps TP in the nodes and DP on the rails, and its step costs what the "
            "rules give.",
            "misplacement_ratio agrees with cl.time: 2.016.",
            "sharp_or_ring picks what cl.time picks.",
        )
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "cluster_collectives", SOLUTIONS
)
