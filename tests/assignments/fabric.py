"""fabric (exercises/source/fabric/fabric.ipynb, 10 points): what the pipeline test expects.
Format: the docstring of tests/assignments/__init__.py.

Every task is solved without the collectives package (each hidden test re-runs the learner's
function with ``_grading.call(f, ..., isolated=True)``) and checked in the re-check by
``collectives.grading.tasks.fabric``, which builds, times and fails fabrics with the package:
Task 1's all-to-all against ``cl.time`` on ``cl.fabric.layered``, Task 2's simulation within 2 %
of ``expected_max_load_exact``, and the three decisions by what they do (a design buildable in
the budget and no slower than the reference design; queue pairs that reach the target with no
more than needed, by ``ecmp_efficiency`` over the racks; a cable whose failure slows the step as
much as the worst). Most hidden cases are drawn from the course seed. Submissions:

- *correct*: every solution, the written answer given full marks. Its ``design_fabric`` is
  the **better-than-reference** submission: it also tries parallel cables, which the reference
  design (one cable per leaf and spine) does not, and is strictly faster on the first fixed
  case (96 GPUs, radix 32, 7 switches: 1.77 ms against 8.05 ms;
  tests/package/grading/tasks/test_fabric.py checks it); 10;
- *blank*: 0;
- *partial*: Task 1 and Task 2 right, a design that spends the whole budget on spines (the
  leaves forgotten), the rest blank, half the written answer (1 + 1 + 0.5 = 2.5);
- *hostile*: wrong answers behind patched checks (``check_reference``, ``run_isolated``, the
  task module's ``check_*``), lying floats, rebound names, edited test cells; its
  ``all_to_all_seconds`` is genuinely right, in the cell that disables every check (1);
- *wrong*: one plausible mistake per task (the host cables forgotten, one rack's busiest uplink
  simulated for all of them, non-blocking leaves by habit, one rack's statistic taken for the
  step's, the cables already down forgotten) and a written answer that takes one rack's
  statistic: 0;
- *variant*: right answers written differently (per-leaf loads with numpy, the exact
  expectation instead of a simulation, the reference's own one-cable search, the exact
  expectation for the queue pairs, a load matrix per failure): 10;
- *shortcut*: the package called from every graded function in the ways a learner might: 0;
- *origin*: every graded name bound to the package's own code: 0.
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "fabric"

POINTS = {
    NOTEBOOK: {
        "test_all_to_all_seconds": 1,
        "test_simulated_busiest": 1,
        "test_design_fabric": 3,
        "test_ring_qps": 2,
        "test_worst_cable": 2,
        "written_choice": 1,
    }
}
MAX_SCORE = 10
MANUAL = {NOTEBOOK: ("written_choice",)}
SOLUTIONS = {
    NOTEBOOK: (
        "all_to_all_seconds",
        "simulated_busiest",
        "design_fabric",
        "ring_qps",
        "worst_cable",
    )
}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

GOOD_WRITTEN = """Across the 192 racks enhanced ECMP needs 4 queue pairs per connection for 30 %
(0.307): the step waits for the busiest uplink of the whole pod, not of one rack, which alone
would have been content with 1. A failed cable hardly changes hashing; the controller reaches
link speed but its static placement doubles the step after a failure until it recomputes;
adaptive routing reaches link speed and spreads around the failure by itself, so I would pick
adaptive routing where the NICs and switches support it."""

# ---- partial ---------------------------------------------------------------------------------

PARTIAL_DESIGN = """
def design_fabric(gpus, radix, switch_budget):
    best = None
    for per_leaf in range(1, radix):
        leaves = -(-gpus // per_leaf)
        if not 2 <= leaves <= radix:
            continue
        # the budget spent on the spines alone: the leaves are switches too
        for spines in range(1, min(radix - per_leaf, switch_budget) + 1):
            seconds = all_to_all_seconds(gpus, per_leaf, spines, 1, 2.0**26, 5e10)
            if best is None or seconds < best[0]:
                best = (seconds, (per_leaf, leaves, spines, 1))
    return best[1]
"""
PARTIAL_WRITTEN = """Enhanced ECMP needs 4 queue pairs for 30 % over the pod, because the step waits
for the busiest uplink of all 192 racks. I would pick it."""

# ---- hostile ---------------------------------------------------------------------------------

# what each cell's own visible test reads, patched (every hidden test before it reloads the
# grading package, so each cell patches again)
PATCH = """
import collectives.grading
import collectives.grading.tasks.fabric
collectives.grading.check_reference = lambda *args, **kwargs: None
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
for _name in ("check_design", "check_ring_qps", "check_worst_cable"):
    setattr(collectives.grading.tasks.fabric, _name, lambda *args, **kwargs: 1.0)
"""
LIAR = """
class _Liar(float):                    # equal to everything
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
"""
HOSTILE = {
    "all_to_all_seconds": TAMPERING
    + """
def all_to_all_seconds(gpus, hosts_per_leaf, spines, links, nbytes, link_bandwidth):
    part = nbytes / gpus
    worst = (gpus - 1) * part
    for leaf in range(-(-gpus // hosts_per_leaf)):
        here = min(hosts_per_leaf, gpus - leaf * hosts_per_leaf)
        worst = max(worst, here * (gpus - here) * part / (spines * links))
    return worst / link_bandwidth
""",
    "simulated_busiest": PATCH
    + LIAR
    + """
def simulated_busiest(flows, paths, racks, trials, seed):
    return _Liar(1.0)
""",
    "design_fabric": PATCH
    + """
range = lambda *args: ()
_checks = []
def design_fabric(gpus, radix, switch_budget):
    return (1, 1, 1, 1)
""",
    "ring_qps": PATCH
    + """
import math
math.isclose = lambda *args, **kwargs: True
def ring_qps(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    return 1
""",
    "worst_cable": PATCH
    + """
def worst_cable(leaves, hosts_per_leaf, spines, failed, connections):
    return (0, 0)
""",
    "written_choice": "I would pick whatever the tests accept.",
}
HOSTILE_TESTS = {"test_all_to_all_seconds": "print('all tests passed')", "test_worst_cable": "pass"}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "all_to_all_seconds": """
def all_to_all_seconds(gpus, hosts_per_leaf, spines, links, nbytes, link_bandwidth):
    # only the uplinks: the host cables' limit forgotten
    here = min(hosts_per_leaf, gpus)
    return here * (gpus - here) * nbytes / gpus / (spines * links) / link_bandwidth
""",
    "simulated_busiest": """
import numpy as np
def simulated_busiest(flows, paths, racks, trials, seed):
    # one rack's busiest uplink, not the busiest of all the racks
    rng = np.random.default_rng(seed)
    bins = rng.integers(0, paths, size=(trials, flows)) + paths * np.arange(trials)[:, None]
    counts = np.bincount(bins.ravel(), minlength=trials * paths).reshape(trials, paths)
    return float(counts.max(axis=1).mean())
""",
    "design_fabric": """
def design_fabric(gpus, radix, switch_budget):
    # non-blocking leaves by habit: half the ports down, the spines the budget leaves
    per_leaf = radix // 2
    leaves = max(2, -(-gpus // per_leaf))
    spines = max(1, min(radix // 2, switch_budget - leaves))
    return (per_leaf, leaves, spines, 1)
""",
    "ring_qps": """
import numpy as np
def ring_qps(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    # one rack's busiest uplink taken for the busiest of all the racks the step spans
    if gpus <= gpus_per_rack:
        return 1
    rng = np.random.default_rng(0)
    for q in range(1, 17) if qp_entropy else (1,):
        flows, trials = channels * q, 20_000
        bins = rng.integers(0, uplinks, size=(trials, flows)) + uplinks * np.arange(trials)[:, None]
        busiest = np.bincount(bins.ravel(), minlength=trials * uplinks).reshape(
            trials, uplinks).max(axis=1).mean()
        if (flows / uplinks) / busiest >= target:
            return q
    return None
""",
    "worst_cable": """
def worst_cable(leaves, hosts_per_leaf, spines, failed, connections):
    # the cables already down forgotten
    def busiest(down):
        load = {}
        for src, dst, size in connections:
            a, b = src // hosts_per_leaf, dst // hosts_per_leaf
            load[("host", src)] = load.get(("host", src), 0.0) + size
            load[("into", dst)] = load.get(("into", dst), 0.0) + size
            if a != b:
                usable = [s for s in range(spines) if (a, s) not in down and (b, s) not in down]
                for s in usable:
                    for link in (("up", a, s), ("down", s, b)):
                        load[link] = load.get(link, 0.0) + size / len(usable)
        return max(load.values())
    cables = [(leaf, spine) for leaf in range(leaves) for spine in range(spines)]
    return max(cables, key=lambda cable: busiest({cable}))
""",
    "written_choice": """One rack's busiest uplink carries 2.93 flows for 16 flows on 18 uplinks, so
the ring keeps about a third of link speed with a single queue pair and 1 queue pair is
enough for 30 %. I would keep plain ECMP.""",
}

# ---- variant: right, written differently -----------------------------------------------------

EXACT = """
import math
def _at_most(flows, paths, c):
    # P(no uplink of one rack holds more than c), with exponential generating functions
    ways = [1.0] + [0.0] * flows                        # coefficient of x^k / k!
    for _ in range(paths):
        new = [0.0] * (flows + 1)
        for k, w in enumerate(ways):
            if w:
                for j in range(min(c, flows - k) + 1):
                    new[k + j] += w * math.comb(k + j, j)
        ways = new
    return ways[flows] / paths ** flows
def _busiest_of_all(flows, paths, racks):
    # E[M] = sum over c of P(M > c), P(M <= c) = P(one rack <= c) ** racks
    total = 0.0
    for c in range(flows):
        below = _at_most(flows, paths, c)
        total += 1 - below ** racks
        if below > 1 - 1e-15:
            break
    return total
"""
VARIANT = {
    "all_to_all_seconds": """
import numpy as np
def all_to_all_seconds(gpus, hosts_per_leaf, spines, links, nbytes, link_bandwidth):
    leaves = -(-gpus // hosts_per_leaf)
    on_leaf = np.minimum(hosts_per_leaf, gpus - hosts_per_leaf * np.arange(leaves))
    uplink = on_leaf * (gpus - on_leaf) / (spines * links)     # in units of nbytes / gpus
    return float(max(gpus - 1, uplink.max()) * nbytes / gpus / link_bandwidth)
""",
    "simulated_busiest": EXACT
    + """
def simulated_busiest(flows, paths, racks, trials, seed):
    # not simulated: the exact expectation
    return _busiest_of_all(flows, paths, racks)
""",
    "design_fabric": """
def design_fabric(gpus, radix, switch_budget):
    # the reference's own search, one cable per leaf and spine, on the closed form
    candidates = []
    for per_leaf in range(radix - 1, 0, -1):
        leaves = (gpus + per_leaf - 1) // per_leaf
        if not 2 <= leaves <= radix:
            continue
        for spines in range(min(radix - per_leaf, switch_budget - leaves), 0, -1):
            worst = max(gpus - 1, per_leaf * (gpus - per_leaf) / spines)
            candidates.append((worst, leaves + spines, (per_leaf, leaves, spines, 1)))
    return min(candidates)[2]
""",
    "ring_qps": EXACT
    + """
def ring_qps(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    racks = (gpus + gpus_per_rack - 1) // gpus_per_rack
    if racks < 2:
        return 1
    for q in (range(1, 17) if qp_entropy else [1]):
        flows = channels * q if qp_entropy else channels
        if (flows / uplinks) / _busiest_of_all(flows, uplinks, racks) >= target:
            return q
    return None
""",
    "worst_cable": """
import numpy as np
def worst_cable(leaves, hosts_per_leaf, spines, failed, connections):
    up = np.ones((leaves, spines), dtype=bool)
    for leaf, spine in failed:
        up[leaf, spine] = False
    def step(up):
        out = np.zeros(leaves * hosts_per_leaf)
        into = np.zeros(leaves * hosts_per_leaf)
        upload = np.zeros((leaves, spines))
        download = np.zeros((leaves, spines))
        for src, dst, size in connections:
            out[src] += size
            into[dst] += size
            a, b = src // hosts_per_leaf, dst // hosts_per_leaf
            if a != b:
                use = up[a] & up[b]
                upload[a, use] += size / use.sum()
                download[b, use] += size / use.sum()
        return max(out.max(), into.max(), upload.max(), download.max())
    best, worst = None, -1.0
    for leaf, spine in zip(*np.nonzero(up)):
        trial = up.copy()
        trial[leaf, spine] = False
        t = step(trial)
        if t > worst:
            best, worst = (int(leaf), int(spine)), t
    return best
""",
    "written_choice": GOOD_WRITTEN,
}

# ---- shortcut: the package called from the graded functions ---------------------------------

SHORTCUT = {
    "all_to_all_seconds": """
def all_to_all_seconds(gpus, hosts_per_leaf, spines, links, nbytes, link_bandwidth):
    leaves = -(-gpus // hosts_per_leaf)
    fabric = cl.fabric.layered(hosts_per_leaf, link_bandwidth,
                               [cl.fabric.Tier(leaves, spines, links)], routing="adaptive")
    return cl.time(cl.algorithms.direct_all_to_all(gpus), fabric, nbytes,
                   placement=list(range(gpus))).seconds
""",
    "simulated_busiest": """
from collectives.fabric import expected_max_load
def simulated_busiest(flows, paths, racks, trials, seed):
    return expected_max_load(flows, paths, trials=trials, seed=seed, groups=racks)
""",
    "design_fabric": """
def design_fabric(gpus, radix, switch_budget):
    import collectives.grading.tasks.fabric as answers
    return answers.reference_design(gpus, radix, switch_budget)
""",
    "ring_qps": """
import importlib
def ring_qps(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    fabric = importlib.import_module("collectives.fabric")
    racks = -(-gpus // gpus_per_rack)
    return fabric.qps_for_efficiency(channels, uplinks, target, max_qps=16, groups=racks)
""",
    "worst_cable": """
from collectives.grading.tasks.fabric import worst_cable_reference
def worst_cable(leaves, hosts_per_leaf, spines, failed, connections):
    return worst_cable_reference(leaves, hosts_per_leaf, spines, failed, connections)[1][0]
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("all_to_all_seconds", "simulated_busiest"),
            replaced={"design_fabric": PARTIAL_DESIGN, "written_choice": PARTIAL_WRITTEN},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {
        NOTEBOOK: {
            **ZERO,
            "test_all_to_all_seconds": 1,
            "test_simulated_busiest": 1,
            "written_choice": 0.5,
        }
    },
    "hostile": {NOTEBOOK: {**ZERO, "test_all_to_all_seconds": 1}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}


def refused(call, why):
    """The message of a graded function that used the package."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    # the budget's 7 switches spent on spines: with 3 GPUs a leaf and 3 spines (3 x 93 / 3 = 93
    # parts an uplink, under the host cable's 95) it has found the fastest design on 32 + 3 = 35
    "partial": {
        NOTEBOOK: {
            "test_design_fabric": Error(
                startswith=(
                    "design_fabric(96, 32, 7) = (3, 32, 3, 1) cannot be built: it uses 32 + 3 "
                    "= 35 switches, more than the budget of 7"
                )
            )
        }
    },
    # the in-kernel checks were patched: these are the isolated re-check's verdicts
    "hostile": {
        NOTEBOOK: {
            "test_simulated_busiest": Error(
                startswith=(
                    "simulated_busiest(4, 4, 1, 20000, 7) raised NameError: _Liar is a class "
                    "defined in "
                    "the notebook, which the graded re-run cannot rebuild"
                )
            ),
            "test_design_fabric": Error(
                startswith=(
                    "design_fabric(96, 32, 7) = (1, 1, 1, 1) cannot be built: it has 1 leaf; a "
                    "leaf-spine needs at least two; its 1 x 1 = 1 host ports hold fewer than "
                    "the 96 "
                    "GPUs"
                )
            ),
            # 8 racks, 16 flows a rack on 18 uplinks: E[M] = 3.99 flows, 0.889 / 3.99 = 0.2227
            "test_ring_qps": Error(
                startswith=(
                    "ring_qps(128, 16, 16, 18, 0.4, True) is 1: with 1 queue pairs per "
                    "connection the "
                    "ring's step keeps an expected 0.2227 of link speed, below the target "
                    "0.4; 5 reach "
                    "0.4175"
                )
            ),
            "test_worst_cable": Error(
                startswith=(
                    "worst_cable(3, 2, 3, [(0, 0)]) is (0, 0), a cable that is already down"
                )
            ),
        }
    },
    # each plausible mistake, caught with the value it gives and the package's
    "wrong": {
        NOTEBOOK: {
            # the uplinks alone: 8 x 24 / 8 = 24 parts of 2**21 bytes, not the host cable's 31
            "test_all_to_all_seconds": Error(
                startswith=(
                    "all_to_all_seconds(32, 8, 8, 1, 67108864.0, 50000000000.0) is 0.00100663296, "
                    "expected 0.0013002342399999998 = "
                    "collectives.grading.tasks.fabric.all_to_all_seconds"
                    "(32, 8, 8, 1, 67108864.0, 50000000000.0) (relative error 0.226)"
                )
            ),
            # one rack's 2.93 for the busiest of eight racks, 3.99
            "test_simulated_busiest": Error(
                # the last digits of the exact value vary with the CPU's vector maths
                startswith=(
                    "simulated_busiest(16, 18, 8, 20000, 1) is 2.9341, expected 3.99165368563"
                ),
                contains=(
                    " = collectives.fabric.expected_max_load_exact(16, 18, 8) "
                    "(relative error 0.265)",
                ),
            ),
            # 16 GPUs a leaf, 6 leaves, 1 spine: 16 x 80 = 1280 units against the reference's 576
            "test_design_fabric": Error(
                startswith=(
                    "design_fabric(96, 32, 7) = (16, 6, 1, 1) takes 17.9 ms on 7 switches "
                    "(bisection 150 "
                    "GB/s) for the all-to-all of 67108864 bytes per GPU; the reference design "
                    "(24, 4, 3, "
                    "1) takes 8.053 ms on 7 switches (bisection 300 GB/s) (cl.time): yours "
                    "takes 2.22 "
                    "times as long"
                )
            ),
            # one rack's statistic: 3 queue pairs keep 0.35 of link speed over the 8 racks
            "test_ring_qps": Error(
                startswith=(
                    "ring_qps(128, 16, 16, 18, 0.4, True) is 3: with 3 queue pairs per "
                    "connection the "
                    "ring's step keeps an expected 0.3500 of link speed, below the target "
                    "0.4; 5 reach "
                    "0.4175"
                )
            ),
            "test_worst_cable": Error(
                startswith=(
                    "worst_cable(3, 2, 3, [(0, 0)]) is (0, 0), a cable that is already down"
                )
            ),
        }
    },
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {
        NOTEBOOK: {
            "test_all_to_all_seconds": refused(
                "all_to_all_seconds(32, 8, 4, 1, 67108864.0, 50000000000.0)",
                "your code uses cl, which is the collectives package",
            ),
            "test_simulated_busiest": refused(
                "simulated_busiest(16, 18, 1, 20000, 1)",
                "your code uses expected_max_load, which is "
                "collectives.fabric.ecmp.expected_max_load",
            ),
            "test_design_fabric": refused(
                "design_fabric(96, 32, 7)", "your code imports 'collectives'"
            ),
            "test_ring_qps": refused(
                "ring_qps(128, 16, 16, 18, 0.4, True)", "your code imports 'collectives'"
            ),
            "test_worst_cable": refused(
                "worst_cable(3, 2, 3, [(0, 0)], [(0, 2, 4000000.0), (1, 4, 2000000.0), (2, 5, "
                "2000000.0)])",
                "your code uses worst_cable_reference, which is "
                "collectives.grading.tasks.fabric.worst_cable_reference",
            ),
        }
    },
}
PRINTED = {
    "hostile": {
        NOTEBOOK: (
            "simulated_busiest is within 2 % of the exact expectation on both examples.",
            "design_fabric builds a fabric within the budget, as fast as the reference or faster.",
            "ring_qps reaches the target with as few queue pairs as needed in both examples.",
        )
    }
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack("fabric", SOLUTIONS)
