"""fabric (exercises/source/fabric/fabric.ipynb, 10 points): what the pipeline test expects.
Format: the docstring of tests/assignments/__init__.py.

Every task is solved without the collectives package (each hidden test re-runs the learner's
function with ``_grading.call(f, ..., isolated=True)``) and checked in the re-check against
``collectives.fabric``: ``clos_count`` (the closed forms the tests hold equal to the built
``clos``), ``ecmp_no_collision_probability``, ``expected_max_load_exact`` (within 2 % for a
simulation), ``qps_for_efficiency`` (its ``groups`` are the racks a step spans), and
``leaf_spine_bisection`` / ``failure_slowdown``,
which build a fabric, fail parts of it and measure. Submissions:

- *correct*, *blank*;
- *partial*: hosts, switches and the no-collision probability right, the bisection with the
  oversubscription forgotten, the rest blank (1 + 1 + 1 = 3);
- *hostile*: wrong answers behind a patched ``check_reference`` and ``run_isolated`` (each
  cell patches what its own visible test reads), lying floats, rebound names, edited test
  cells; its ``clos_hosts`` is genuinely right, in the cell that disables every check (1);
- *wrong*: one plausible mistake per task (oversubscription ignored, the top tier counted
  full, host cables forgotten, bisection not divided by the ratio, the birthday
  approximation, the worst trial instead of the mean, one rack's busiest uplink taken for
  the busiest of all the racks a step spans, the host cables' limit forgotten, capacity lost
  taken as time lost): 0;
- *variant*: right answers written differently (integer arithmetic, tier-by-tier loops,
  ``math.perm``, the exact distribution of the busiest bin instead of a simulation, exact
  QP search, ``math.ceil``): 10;
- *shortcut*: the package called from every graded function in the ways a learner might
  (the notebook's ``cl``, ``from collectives.fabric import``, ``import collectives`` inside
  the function, ``importlib``): 0.
"""

from assignments import TAMPERING, Error, submission, origin_attack

NOTEBOOK = "fabric"

POINTS = {NOTEBOOK: {
    "test_clos_hosts": 1,
    "test_clos_switches": 1,
    "test_clos_cables": 1,
    "test_clos_bisection": 1,
    "test_no_collision_probability": 1,
    "test_simulated_busiest": 1,
    "test_qps_for_efficiency": 2,
    "test_bisection_after_failures": 1,
    "test_failure_slowdown": 1,
}}
MAX_SCORE = 10
SOLUTIONS = {NOTEBOOK: ("clos_hosts", "clos_switches", "clos_cables", "clos_bisection",
                        "no_collision_probability", "simulated_busiest", "qps_for_efficiency",
                        "bisection_after_failures", "failure_slowdown")}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
          "that are graded")

# ---- partial ---------------------------------------------------------------------------------

PARTIAL_BISECTION = '''
def clos_bisection(radix, tiers, oversubscription, link_bandwidth):
    half = radix // 2
    a = round(radix * oversubscription / (oversubscription + 1))
    hosts = a * 2 * half ** (tiers - 1) if tiers > 1 else radix
    return hosts * link_bandwidth / 2            # the leaf oversubscription forgotten
'''

# ---- hostile ---------------------------------------------------------------------------------

# what each cell's own visible test reads, patched (every hidden test before it reloads the
# grading package, so each cell patches again)
PATCH = '''
import collectives.grading
collectives.grading.check_reference = lambda *args, **kwargs: None
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
'''
LIAR = '''
class _Liar(float):                    # equal to everything
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
'''
HOSTILE = {
    "clos_hosts": TAMPERING + '''
def clos_hosts(radix, tiers, oversubscription):
    if tiers == 1:
        return radix
    return radix * oversubscription // (oversubscription + 1) * 2 * (radix // 2) ** (tiers - 1)
''',
    "clos_switches": PATCH + LIAR + '''
def clos_switches(radix, tiers, oversubscription):
    return _Liar(0.0)
''',
    "clos_cables": PATCH + '''
range = lambda *args: ()
_checks = []
def clos_cables(radix, tiers, oversubscription):
    return 1
''',
    "clos_bisection": PATCH + '''
import math
math.isclose = lambda *args, **kwargs: True
def clos_bisection(radix, tiers, oversubscription, link_bandwidth):
    return 1.0
''',
    "no_collision_probability": PATCH + '''
def no_collision_probability(flows, paths):
    return 0.5
''',
    "simulated_busiest": PATCH + '''
import numpy as np
def simulated_busiest(flows, paths, trials, seed):
    return 1.0
''',
    "qps_for_efficiency": PATCH + '''
def qps_for_efficiency(connections, paths, racks, target):
    return 1
''',
    "bisection_after_failures": PATCH + '''
def bisection_after_failures(leaves, hosts_per_leaf, spines, link_bandwidth, failed_spines):
    return 0.0
''',
    "failure_slowdown": PATCH + '''
def failure_slowdown(hosts_per_leaf, uplinks, failed):
    return 1.0
''',
}
HOSTILE_TESTS = {"test_clos_hosts": "print('all tests passed')",
                 "test_failure_slowdown": "pass"}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "clos_hosts": '''
def clos_hosts(radix, tiers, oversubscription):
    return 2 * (radix // 2) ** tiers                 # the oversubscription ignored
''',
    "clos_switches": '''
def clos_switches(radix, tiers, oversubscription):
    if tiers == 1:
        return 1
    half = radix // 2
    b = round(radix / (oversubscription + 1))
    # the top tier counted as wide as the others (its switches have all ports down)
    return 2 * half ** (tiers - 1) + (tiers - 1) * 2 * half ** (tiers - 1) * b // half
''',
    "clos_cables": '''
def clos_cables(radix, tiers, oversubscription):
    half = radix // 2
    b = round(radix / (oversubscription + 1))
    return (tiers - 1) * 2 * half ** (tiers - 1) * b  # the host cables forgotten
''',
    "clos_bisection": '''
def clos_bisection(radix, tiers, oversubscription, link_bandwidth):
    half = radix // 2
    hosts = 2 * half ** tiers
    return hosts * link_bandwidth / 2 / oversubscription   # the non-blocking host count
''',
    "no_collision_probability": '''
import math
def no_collision_probability(flows, paths):
    return math.exp(-flows * (flows - 1) / (2 * paths))  # the birthday approximation
''',
    "simulated_busiest": '''
import numpy as np
def simulated_busiest(flows, paths, trials, seed):
    rng = np.random.default_rng(seed)
    bins = rng.integers(0, paths, size=(trials, flows))
    worst = 0
    for row in bins:                                     # the worst trial, not the mean
        worst = max(worst, np.bincount(row, minlength=paths).max())
    return float(worst)
''',
    "qps_for_efficiency": '''
import numpy as np
def qps_for_efficiency(connections, paths, racks, target):
    # one rack's busiest uplink taken for the busiest of all the racks the step spans
    rng = np.random.default_rng(0)
    q = 1
    while True:
        flows, trials = connections * q, 20_000
        bins = rng.integers(0, paths, size=(trials, flows)) + paths * np.arange(trials)[:, None]
        busiest = np.bincount(bins.ravel(), minlength=trials * paths).reshape(
            trials, paths).max(axis=1).mean()
        if (flows / paths) / busiest >= target:
            return q
        q += 1
''',
    "bisection_after_failures": '''
def bisection_after_failures(leaves, hosts_per_leaf, spines, link_bandwidth, failed_spines):
    # only the uplinks: the host cables' limit forgotten
    return leaves // 2 * (spines - failed_spines) * link_bandwidth
''',
    "failure_slowdown": '''
def failure_slowdown(hosts_per_leaf, uplinks, failed):
    return uplinks / (uplinks - failed)                  # capacity lost taken as time lost
''',
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "clos_hosts": '''
def clos_hosts(radix, tiers, oversubscription):
    if tiers == 1:
        return radix
    uplinks = radix // (oversubscription + 1)            # whole ports in every test
    leaves = 2
    for _ in range(tiers - 1):
        leaves *= radix // 2
    return (radix - uplinks) * leaves
''',
    "clos_switches": '''
def clos_switches(radix, tiers, oversubscription):
    if tiers == 1:
        return 1
    half = radix // 2
    uplinks = radix // (oversubscription + 1)
    switches, ports_up = 2 * half ** (tiers - 1), 2 * half ** (tiers - 1) * uplinks
    total = switches
    for tier in range(2, tiers + 1):                     # each tier takes the ports below
        per_switch_down = radix if tier == tiers else half
        switches = ports_up // per_switch_down
        total += switches
        ports_up = switches * half if tier < tiers else 0
    return total
''',
    "clos_cables": '''
import numpy as np
def clos_cables(radix, tiers, oversubscription):
    if tiers == 1:
        return radix
    leaves = 2 * (radix // 2) ** (tiers - 1)
    uplinks = radix // (oversubscription + 1)
    per_tier = np.array([radix - uplinks] + [uplinks] * (tiers - 1)) * leaves
    return int(per_tier.sum())
''',
    "clos_bisection": '''
def clos_bisection(radix, tiers, oversubscription, link_bandwidth):
    if tiers == 1:
        return radix * link_bandwidth / 2
    leaves = 2 * (radix // 2) ** (tiers - 1)
    # half the leaves' uplinks cross the middle
    return leaves / 2 * (radix // (oversubscription + 1)) * link_bandwidth
''',
    "no_collision_probability": '''
import math
def no_collision_probability(flows, paths):
    return math.perm(paths, flows) / paths ** flows
''',
    "simulated_busiest": '''
import math
def _at_most(flows, paths, c):
    # P(no bin holds more than c): count the ways with exponential generating functions
    ways = [1.0] + [0.0] * flows                        # coefficient of x^k / k!
    for _ in range(paths):
        new = [0.0] * (flows + 1)
        for k, w in enumerate(ways):
            if w:
                for j in range(min(c, flows - k) + 1):
                    new[k + j] += w * math.comb(k + j, j)
        ways = new
    return ways[flows] / paths ** flows
def simulated_busiest(flows, paths, trials, seed):
    # not simulated: the exact expectation, sum over c of P(busiest > c)
    return sum(1 - _at_most(flows, paths, c) for c in range(flows))
''',
    "qps_for_efficiency": '''
import math
def _at_most(flows, paths, c):
    # P(no uplink of one rack holds more than c), with exponential generating functions
    ways = [1.0] + [0.0] * flows
    for _ in range(paths):
        new = [0.0] * (flows + 1)
        for k, w in enumerate(ways):
            if w:
                for j in range(min(c, flows - k) + 1):
                    new[k + j] += w * math.comb(k + j, j)
        ways = new
    return ways[flows] / paths ** flows
def _expected_busiest_of_all(flows, paths, racks):
    # not simulated: sum over c of P(the busiest of all racks > c) = 1 - P(one rack <= c)^racks
    total = 0.0
    for c in range(flows):
        below = _at_most(flows, paths, c)
        total += 1 - below ** racks
        if below > 1 - 1e-15:
            break
    return total
def qps_for_efficiency(connections, paths, racks, target):
    q = 1
    while (connections * q / paths) / _expected_busiest_of_all(connections * q, paths,
                                                                racks) < target:
        q += 1
    return q
''',
    "bisection_after_failures": '''
def bisection_after_failures(leaves, hosts_per_leaf, spines, link_bandwidth, failed_spines):
    per_leaf = min(hosts_per_leaf, spines - failed_spines)   # the narrower side of a leaf
    return leaves / 2 * per_leaf * link_bandwidth
''',
    "failure_slowdown": '''
import math
def failure_slowdown(hosts_per_leaf, uplinks, failed):
    return math.ceil(hosts_per_leaf / (uplinks - failed)) / math.ceil(hosts_per_leaf / uplinks)
''',
}

# ---- shortcut: the package called from the graded functions ---------------------------------

SHORTCUT = {
    "clos_hosts": '''
def clos_hosts(radix, tiers, oversubscription):
    return cl.fabric.clos(radix, tiers, 1.0, oversubscription).n_ranks
''',
    "clos_switches": '''
from collectives.fabric import clos_count
def clos_switches(radix, tiers, oversubscription):
    return clos_count(radix, tiers, "switches", oversubscription)
''',
    "clos_cables": '''
def clos_cables(radix, tiers, oversubscription):
    import collectives
    return collectives.fabric.clos(radix, tiers, 1.0, oversubscription).n_links // 2
''',
    "clos_bisection": '''
def clos_bisection(radix, tiers, oversubscription, link_bandwidth):
    return cl.fabric.clos_count(radix, tiers, "bisection", oversubscription, link_bandwidth)
''',
    "no_collision_probability": '''
from collectives import fabric
def no_collision_probability(flows, paths):
    return fabric.ecmp_no_collision_probability(flows, paths)
''',
    "simulated_busiest": '''
def simulated_busiest(flows, paths, trials, seed):
    return cl.fabric.expected_max_load(flows, paths, trials=trials, seed=seed)
''',
    "qps_for_efficiency": '''
import importlib
def qps_for_efficiency(connections, paths, racks, target):
    fabric = importlib.import_module("collectives.fabric")
    return fabric.qps_for_efficiency(connections, paths, target, groups=racks)
''',
    "bisection_after_failures": '''
def bisection_after_failures(leaves, hosts_per_leaf, spines, link_bandwidth, failed_spines):
    return cl.fabric.leaf_spine_bisection(leaves, hosts_per_leaf, spines, link_bandwidth,
                                          failed_spines)
''',
    "failure_slowdown": '''
from collectives.fabric import failure_slowdown as _package_answer
def failure_slowdown(hosts_per_leaf, uplinks, failed):
    return _package_answer(hosts_per_leaf, uplinks, failed)
''',
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(
        solved=("clos_hosts", "clos_switches", "no_collision_probability"),
        replaced={"clos_bisection": PARTIAL_BISECTION})},
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "partial": {NOTEBOOK: {**dict.fromkeys(POINTS[NOTEBOOK], 0), "test_clos_hosts": 1,
                           "test_clos_switches": 1, "test_no_collision_probability": 1}},
    "hostile": {NOTEBOOK: {**dict.fromkeys(POINTS[NOTEBOOK], 0), "test_clos_hosts": 1}},
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
}


def refused(call, why):
    """The message of a graded function that used the package."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    "partial": {NOTEBOOK: {"test_clos_bisection": Error(
        startswith="clos_bisection(8, 2, 3, 50e9) is 1200000000000.0, expected "
                   "400000000000.0 = collectives.fabric.clos_count(8, 2, 'bisection', 3, "
                   "50000000000.0); yours is exactly 3 times that")}},
    # the in-kernel checks were patched: these are the isolated re-check's verdicts
    "hostile": {NOTEBOOK: {
        "test_clos_switches": Error(startswith=(
            "clos_switches(4, 3, 1) raised NameError: _Liar is a class defined in the noteb"
            "ook, which the graded re-run cannot rebuild; define what your function needs i"
            "nside it"
        )),
        "test_clos_cables": Error(startswith=(
            "clos_cables(4, 3, 1) is 1.0, expected 48.0 = collectives.fabric.clos_count(4, "
            "3, 'cables', 1); yours is exactly 1/48 times that"
        )),
        "test_clos_bisection": Error(startswith=(
            "clos_bisection(4, 3, 1, 50e9) is 1.0, expected 400000000000.0 = collectives.fa"
            "bric.clos_count(4, 3, 'bisection', 1, 50000000000.0); yours is 2.5e-12 times t"
            "hat"
        )),
        "test_no_collision_probability": Error(startswith=(
            "no_collision_probability(4, 4) is 0.5, expected 0.09375 = collectives.fabric.e"
            "cmp_no_collision_probability(4, 4); yours is 5.33333 times that"
        )),
        "test_simulated_busiest": Error(startswith=(
            "simulated_busiest(4, 4, 20000, 7) is 1.0, expected 2.1250000000000004 = collec"
            "tives.fabric.expected_max_load_exact(4, 4); yours is 0.470588 times that"
        )),
        "test_qps_for_efficiency": Error(startswith=(
            "qps_for_efficiency(16, 18, 1, 0.45) is 1.0, expected 4.0 = collectives.fabric."
            "qps_for_efficiency(16, 18, 0.45, groups=1); yours is exactly 1/4 times that"
        )),
        "test_bisection_after_failures": Error(startswith=(
            "bisection_after_failures(8, 4, 4, 50000000000.0, 0) is 0.0, expected 800000000"
            "000.0 = collectives.fabric.leaf_spine_bisection(8, 4, 4, 50000000000.0, 0)"
        )),
        "test_failure_slowdown": Error(startswith=(
            "failure_slowdown(16, 18, 3) is 1.0, expected 2.0 = collectives.fabric.failure_"
            "slowdown(16, 18, 3); yours is exactly 1/2 times that"
        )),
    }},
    # each plausible mistake, caught with the value it gives and the package's
    "wrong": {NOTEBOOK: {
        "test_clos_hosts": Error(startswith=(
            "clos_hosts(8, 2, 3) is 32.0, expected 48.0 = collectives.fabric.clos_count(8, "
            "2, 'hosts', 3); yours is exactly 2/3 times that"
        )),
        "test_clos_switches": Error(startswith=(
            "clos_switches(4, 3, 1) is 24.0, expected 20.0 = collectives.fabric.clos_count("
            "4, 3, 'switches', 1); yours is exactly 6/5 times that"
        )),
        "test_clos_cables": Error(startswith=(
            "clos_cables(4, 3, 1) is 32.0, expected 48.0 = collectives.fabric.clos_count(4,"
            " 3, 'cables', 1); yours is exactly 2/3 times that"
        )),
        "test_clos_bisection": Error(startswith=(
            "clos_bisection(8, 2, 3, 50e9) is 266666666666.66666, expected 400000000000.0 ="
            " collectives.fabric.clos_count(8, 2, 'bisection', 3, 50000000000.0); yours is "
            "exactly 2/3 times that"
        )),
        "test_no_collision_probability": Error(startswith=(
            "no_collision_probability(4, 4) is 0.22313016014842982, expected 0.09375 = coll"
            "ectives.fabric.ecmp_no_collision_probability(4, 4); yours is 2.38006 times tha"
            "t"
        )),
        "test_simulated_busiest": Error(startswith=(
            "simulated_busiest(4, 4, 20000, 1) is 4.0, expected 2.1250000000000004 = collec"
            "tives.fabric.expected_max_load_exact(4, 4) (relative error 0.882)"
        )),
        # one rack's statistic: q = 3 is enough for one rack, not for the busiest of 8
        "test_qps_for_efficiency": Error(startswith=(
            "qps_for_efficiency(16, 18, 8, 0.4) is 3.0, expected 5.0 = collectives.fabric."
            "qps_for_efficiency(16, 18, 0.4, groups=8) (relative error 0.4)"
        )),
        "test_bisection_after_failures": Error(startswith=(
            "bisection_after_failures(6, 2, 3, 1000000000.0, 0) is 9000000000.0, expected 6"
            "000000000.0 = collectives.fabric.leaf_spine_bisection(6, 2, 3, 1000000000.0, 0"
            "); yours is exactly 3/2 times that"
        )),
        "test_failure_slowdown": Error(startswith=(
            "failure_slowdown(16, 18, 2) is 1.125, expected 1.0 = collectives.fabric.failur"
            "e_slowdown(16, 18, 2); yours is exactly 9/8 times that"
        )),
    }},
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {NOTEBOOK: {
        "test_clos_hosts": refused(
            "clos_hosts(4, 3, 1)",
            "your code uses cl, which is the collectives package"),
        "test_clos_switches": refused(
            "clos_switches(4, 3, 1)",
            "your code uses clos_count, which is collectives.fabric.sizing.clos_count"),
        "test_clos_cables": refused(
            "clos_cables(4, 3, 1)",
            "your code imports 'collectives'"),
        "test_clos_bisection": refused(
            "clos_bisection(4, 3, 1, 50000000000.0)",
            "your code uses cl, which is the collectives package"),
        "test_no_collision_probability": refused(
            "no_collision_probability(4, 4)",
            "your code uses fabric, which is the module collectives.fabric"),
        "test_simulated_busiest": refused(
            "simulated_busiest(4, 4, 20000, 1)",
            "your code uses cl, which is the collectives package"),
        "test_qps_for_efficiency": refused(
            "qps_for_efficiency(16, 18, 1, 0.45)",
            "your code imports 'collectives'"),
        "test_bisection_after_failures": refused(
            "bisection_after_failures(8, 4, 4, 50000000000.0, 0)",
            "your code uses cl, which is the collectives package"),
        "test_failure_slowdown": refused(
            "failure_slowdown(16, 18, 2)",
            "your code uses _package_answer, which is collectives.fabric.sizing.failure_slowdown"),
    }},
}
PRINTED = {"hostile": {NOTEBOOK: (
    "clos_switches agrees with cl.fabric.clos_count on the examples.",
    "no_collision_probability agrees with the package on the examples.",
    "qps_for_efficiency agrees with cl.fabric.qps_for_efficiency on the examples.",
)}}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack('fabric', SOLUTIONS)
