"""The checks of the graded notebook on fabric design (``exercises/source/fabric``): a
leaf-spine fabric timed, sized under a switch budget, its ECMP queue pairs chosen for a
ring, and its most harmful cable found.

Every number here comes from the package: a fabric built by :func:`collectives.fabric.layered`
(routed ``"adaptive"``: every connection spread evenly over its usable equal-cost paths, so
that a learner can compute the same loads by hand), timed with :func:`collectives.time` (the
direct all-to-all) or by its busiest link (:meth:`collectives.fabric.Flows.link_bytes` over the
link speeds, the busiest-link model of :func:`collectives.time`), failed with
:meth:`~collectives.topology.Cluster.fail`; the ECMP efficiency of a ring's racks from
:func:`collectives.fabric.ecmp_efficiency` (its ``groups`` are the racks a step spans).

The decisions are checked by what they do, never by which choice the reference made: a
fabric design passes when it is buildable within the budget and its all-to-all is no slower
than the reference design's (the best one with one cable between each leaf and each spine,
as the chapter cables them: a design with parallel cables can be faster, and passes); a
number of queue pairs when its efficiency reaches the target with no more queue pairs than
needed; a cable when failing it slows the job's step as much as the worst cable does.

Each ``check_*`` runs in the isolated re-check by name, through
:func:`~collectives.grading.check_reference`: ``check_reference(1.0, what,
"grading.tasks.fabric.check_design", (answer, what, ...))``; it returns 1.0 when the answer
passes and raises ``AssertionError`` (a wrong answer) or :class:`~collectives.GradingError`
(one of the wrong form, or a bug in the test) otherwise. The ``*_cases`` functions give the
hidden tests' cases: fixed ones, then cases drawn from the course seed
(:mod:`collectives.grading.cohort`), as plain data.

Left out: the hashed routing of a real fabric (the ECMP task takes its statistics from the
balls-into-bins model instead), queues, latencies and congestion control.
"""

import copy
import functools

import numpy as np

from ... import algorithms, cost
from ...errors import GradingError
from ...fabric.ecmp import ecmp_efficiency
from ...fabric.flows import route_flows
from ...fabric.layered import Tier, layered
from ...measures import bisection_bandwidth
from .. import cohort
from ..checks import count_text, show

__all__ = [
    "LINK_BANDWIDTH",
    "NBYTES",
    "MAX_QPS",
    "leaf_spine",
    "all_to_all_seconds",
    "all_to_all_cases",
    "busiest_cases",
    "design_seconds",
    "check_design_valid",
    "reference_design",
    "check_design",
    "design_cases",
    "ring_racks",
    "ring_efficiency",
    "ring_qps_reference",
    "check_ring_qps",
    "ring_qps_cases",
    "cable_seconds",
    "worst_cable_reference",
    "check_worst_cable",
    "worst_cable_cases",
]

#: every cable's speed in the design and failure tasks: 400 Gb/s, bytes/s per direction
LINK_BANDWIDTH = 50e9
#: the all-to-all send buffer of the design task (nccl-tests' S): 64 MiB per GPU
NBYTES = 2.0**26
#: the most queue pairs per connection the ECMP task allows
MAX_QPS = 16


def _whole(value, what, minimum=0):
    """``value`` as an int >= ``minimum`` (an integer float too), else a GradingError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise GradingError(f"{what} should be an int, but it is {show(value)}")
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise GradingError(f"{what} should be a whole number, but it is {value!r}")
    if value < minimum:
        raise GradingError(f"{what} should be at least {minimum}, but it is {value!r}")
    return int(value)


# ---- a leaf-spine fabric and its all-to-all ------------------------------------------------


@functools.lru_cache(maxsize=64)
def leaf_spine(hosts_per_leaf, leaves, spines, links=1, link_bandwidth=LINK_BANDWIDTH):
    """A two-tier leaf-spine fabric: ``leaves`` leaves of ``hosts_per_leaf`` host ports, each
    with ``links`` parallel cables to each of ``spines`` spines, every cable
    ``link_bandwidth`` bytes/s per direction, routed ``"adaptive"``
    (:func:`collectives.fabric.layered`). Cached: a fabric is never changed in place
    (``fail`` returns a copy)."""
    return layered(
        hosts_per_leaf, link_bandwidth, [Tier(leaves, spines, links)], routing="adaptive"
    )


def all_to_all_seconds(gpus, hosts_per_leaf, spines, links, nbytes, link_bandwidth):
    """:func:`collectives.time` of the direct all-to-all of ``nbytes`` per GPU over ``gpus``
    GPUs placed leaf by leaf (GPU ``g`` on host port ``g``) on :func:`leaf_spine` with
    ``ceil(gpus / hosts_per_leaf)`` leaves."""
    leaves = -(-gpus // hosts_per_leaf)
    fab = leaf_spine(hosts_per_leaf, leaves, spines, links, link_bandwidth)
    return cost.time(
        algorithms.direct_all_to_all(gpus), fab, nbytes, placement=np.arange(gpus)
    ).seconds


def all_to_all_cases(count=3, course_seed=None):
    """The cases of the notebook's all-to-all timing test, ``(gpus, hosts_per_leaf, spines,
    links, nbytes, link_bandwidth)``: fixed ones (both limits, a partly filled last leaf,
    parallel cables, two GPUs), then ``count`` drawn from the course seed."""
    fixed = [
        (32, 8, 4, 1, 2.0**26, 5e10),
        (32, 8, 8, 1, 2.0**26, 5e10),
        (40, 8, 2, 2, 1e8, 5e10),
        (100, 20, 2, 6, 2.0**26, 5e10),
        (10, 4, 1, 3, 1e6, 1e9),
        (96, 24, 3, 1, 1e9, 2.5e10),
        (2, 1, 1, 1, 1e6, 5e10),
        (24, 16, 4, 2, 2.0**20, 5e10),
    ]

    def draw(generator):
        a = int(generator.integers(2, 17))
        gpus = int(generator.integers(a + 1, 8 * a + 1))
        return (
            gpus,
            a,
            int(generator.integers(1, 9)),
            int(generator.integers(1, 4)),
            float(2 ** int(generator.integers(20, 31))),
            5e10,
        )

    return cohort.cases("test_all_to_all_seconds", fixed, draw, count, course_seed)


def busiest_cases(count=3, course_seed=None):
    """The cases of the notebook's simulation test, ``(flows, paths, racks, seed)``: fixed
    ones, then ``count`` drawn from the course seed."""
    fixed = [
        (4, 4, 1, 7),
        (16, 18, 1, 3),
        (16, 18, 8, 5),
        (8, 8, 16, 11),
        (64, 16, 4, 2),
        (1, 9, 3, 4),
        (30, 4, 2, 9),
    ]

    def draw(generator):
        return (
            int(generator.integers(2, 33)),
            int(generator.integers(2, 33)),
            int(generator.integers(1, 17)),
            int(generator.integers(0, 1000)),
        )

    return cohort.cases("test_simulated_busiest", fixed, draw, count, course_seed)


# ---- sizing a fabric under a switch budget -------------------------------------------------


def _design(answer, what):
    """The learner's design as four ints ``(hosts_per_leaf, leaves, spines, links)``."""
    if (
        isinstance(answer, (str, bytes, dict))
        or not isinstance(answer, (tuple, list))
        or len(answer) != 4
    ):
        raise GradingError(
            f"{what} should be a tuple (hosts_per_leaf, leaves, spines, links) "
            f"of four ints, but it is {show(answer)}"
        )
    names = ("hosts_per_leaf", "leaves", "spines", "links")
    return tuple(_whole(v, f"the {name} of {what}", 1) for v, name in zip(answer, names))


def check_design_valid(design, what, gpus, radix, switch_budget):
    """Raise ``AssertionError`` unless ``design`` (four ints) is a buildable leaf-spine of
    ``radix``-port switches that holds ``gpus`` GPUs on at most ``switch_budget`` switches,
    with at least two leaves. Returns the design."""
    a, leaves, spines, links = design
    problems = []
    if leaves < 2:
        problems.append(
            f"it has {count_text(leaves, 'leaf', 'leaves')}; a leaf-spine needs at least two"
        )
    if a * leaves < gpus:
        problems.append(
            f"its {leaves} x {a} = {a * leaves} host ports hold fewer than the {gpus} GPUs"
        )
    if a + spines * links > radix:
        problems.append(
            f"a leaf needs {a} host ports + {spines} x {links} uplinks = "
            f"{a + spines * links} ports, more than the radix {radix}"
        )
    if leaves * links > radix:
        problems.append(
            f"a spine needs {leaves} x {links} = {leaves * links} ports, more than "
            f"the radix {radix}"
        )
    if leaves + spines > switch_budget:
        problems.append(
            f"it uses {leaves} + {spines} = {leaves + spines} switches, more than "
            f"the budget of {switch_budget}"
        )
    if problems:
        raise AssertionError(
            f"{what} = {show(tuple(design))} cannot be built: " + "; ".join(problems)
        )
    return design


def design_seconds(design, gpus):
    """Seconds of the direct all-to-all of :data:`NBYTES` per GPU over ``gpus`` GPUs placed
    leaf by leaf on the design ``(hosts_per_leaf, leaves, spines, links)``
    (:func:`leaf_spine`, :func:`collectives.time`)."""
    a, leaves, spines, links = design
    fab = leaf_spine(a, leaves, spines, links)
    return cost.time(
        algorithms.direct_all_to_all(gpus), fab, NBYTES, placement=np.arange(gpus)
    ).seconds


def _closed_form_seconds(a, leaves, spines, links, gpus):
    """The all-to-all of :func:`design_seconds` in closed form (adaptive spreading): the host
    cable carries ``(gpus - 1) S / gpus``, a leaf's uplinks ``a_i (gpus - a_i) S / gpus``
    shared over ``spines * links`` cables; the busiest decides."""
    worst = gpus - 1
    for i in range(leaves):
        on_leaf = max(0, min(a, gpus - i * a))
        worst = max(worst, on_leaf * (gpus - on_leaf) / (spines * links))
    return NBYTES / gpus / LINK_BANDWIDTH * worst


def reference_design(gpus, radix, switch_budget):
    """The course's reference design: the fastest all-to-all (then the fewest switches) among
    leaf-spines with one cable from each leaf to each spine, ``ceil(gpus / a)`` leaves of
    ``a`` host ports, within the radix and the budget; searched exhaustively on the closed
    form. Raises GradingError when none fits (a bug in the test)."""
    best = None
    for a in range(1, radix):
        leaves = -(-gpus // a)
        if leaves < 2 or leaves > radix:
            continue
        for spines in range(1, min(radix - a, switch_budget - leaves) + 1):
            key = (_closed_form_seconds(a, leaves, spines, 1, gpus), leaves + spines)
            if best is None or key < best[0]:
                best = (key, (a, leaves, spines, 1))
    if best is None:
        raise GradingError(
            f"no leaf-spine of {radix}-port switches holds {gpus} GPUs on "
            f"{switch_budget} switches (a bug in the test)"
        )
    return best[1]


def _describe(design, gpus):
    a, leaves, spines, links = design
    fab = leaf_spine(a, leaves, spines, links)
    return (
        f"{design_seconds(design, gpus) * 1e3:.4g} ms on {leaves + spines} switches "
        f"(bisection {bisection_bandwidth(fab) / 1e9:.4g} GB/s)"
    )


def check_design(answer, what, gpus, radix, switch_budget, *, rel=1e-6):
    """``answer``, a leaf-spine design ``(hosts_per_leaf, leaves, spines, links)`` for
    ``gpus`` GPUs on ``radix``-port switches within ``switch_budget`` switches: buildable
    (:func:`check_design_valid`) and its all-to-all (:func:`design_seconds`) no slower than
    the reference design's (:func:`reference_design`), within ``rel``. Returns 1.0."""
    design = check_design_valid(_design(answer, what), what, gpus, radix, switch_budget)
    best = reference_design(gpus, radix, switch_budget)
    mine, theirs = design_seconds(design, gpus), design_seconds(best, gpus)
    if mine > theirs * (1 + rel):
        raise AssertionError(
            f"{what} = {show(tuple(design))} takes {_describe(design, gpus)} for the "
            f"all-to-all of {NBYTES:.0f} bytes per GPU; the reference design "
            f"{show(best)} takes {_describe(best, gpus)} (cl.time): yours takes "
            f"{mine / theirs:.3g} times as long"
        )
    return 1.0


def design_cases(count=3, course_seed=None):
    """The cases of the notebook's design test, ``(gpus, radix, switch_budget)``: fixed ones
    (a budget that binds, one that does not, one where parallel cables beat the reference),
    then ``count`` drawn from the course seed."""
    fixed = [(96, 32, 7), (96, 32, 12), (128, 16, 24), (200, 64, 6), (64, 16, 10), (40, 8, 9)]

    def draw(generator):
        radix = int((8, 16, 24, 32, 48, 64)[int(generator.integers(0, 6))])
        gpus = int(generator.integers(radix + 1, min(256, radix * radix // 4) + 1))
        fewest = -(-gpus // (radix - 1)) + 1  # the fewest switches of any design
        return (gpus, radix, fewest + int(generator.integers(0, radix // 2 + 1)))

    def feasible(case):
        try:
            reference_design(*case)
        except GradingError:
            return False
        return True

    cases = cohort.cases(
        "test_design_fabric", fixed, lambda g: _retry(draw, feasible, g), count, course_seed
    )
    return cases


def _retry(draw, keep, generator, tries=200):
    """A case ``draw(generator)`` for which ``keep(case)`` holds (drawn again until it does)."""
    for _ in range(tries):
        case = draw(generator)
        if keep(case):
            return case
    raise GradingError("no usable case drawn (a bug in the test)")


# ---- queue pairs for a ring ------------------------------------------------------------------


def ring_racks(gpus, gpus_per_rack):
    """The racks a job of ``gpus`` GPUs on whole racks of ``gpus_per_rack`` spans."""
    return -(-gpus // gpus_per_rack)


def ring_efficiency(qps, gpus, gpus_per_rack, channels, uplinks, qp_entropy):
    """Expected share of link speed of one step of a ring over ``gpus`` GPUs laid out rack by
    rack, ``channels`` rings, each connection split over ``qps`` queue pairs: every rack
    sends ``channels`` connections up its ``uplinks``; hashed per QP when ``qp_entropy``
    (enhanced ECMP, ``channels * qps`` flows), per connection otherwise; the step waits for
    the busiest uplink of all the racks (:func:`collectives.fabric.ecmp_efficiency`). A job
    inside one rack crosses no uplink: 1.0."""
    racks = ring_racks(gpus, gpus_per_rack)
    if racks == 1:
        return 1.0
    flows = channels * qps if qp_entropy else channels
    return ecmp_efficiency(flows, uplinks, groups=racks)


def ring_qps_reference(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    """The fewest queue pairs per connection (1..:data:`MAX_QPS`) whose
    :func:`ring_efficiency` reaches ``target``; None if none does."""
    for q in range(1, MAX_QPS + 1):
        if ring_efficiency(q, gpus, gpus_per_rack, channels, uplinks, qp_entropy) >= target:
            return q
        if not qp_entropy or ring_racks(gpus, gpus_per_rack) == 1:
            return None  # more QPs change nothing
    return None


def check_ring_qps(answer, what, gpus, gpus_per_rack, channels, uplinks, target, qp_entropy):
    """``answer``, a number of queue pairs per connection (or None: none up to
    :data:`MAX_QPS` is enough), judged by its :func:`ring_efficiency`: at least ``target``,
    with no more queue pairs than :func:`ring_qps_reference` needs. Returns 1.0."""
    best = ring_qps_reference(gpus, gpus_per_rack, channels, uplinks, target, qp_entropy)
    args = (gpus, gpus_per_rack, channels, uplinks, qp_entropy)
    if answer is None:
        if best is None:
            return 1.0
        raise AssertionError(
            f"{what} is None, but {count_text(best, 'queue pair', 'queue pairs')} per "
            f"connection reach an efficiency of {ring_efficiency(best, *args):.4f} >= "
            f"{target!r}"
        )
    q = _whole(answer, what, 1)
    if q > MAX_QPS:
        raise AssertionError(
            f"{what} is {q}, more than the {MAX_QPS} queue pairs per connection this task allows"
        )
    mine = ring_efficiency(q, *args)
    if mine < target:
        extra = (
            f"; {best} reach {ring_efficiency(best, *args):.4f}"
            if best is not None
            else f"; no number up to {MAX_QPS} reaches it (the answer is None)"
        )
        raise AssertionError(
            f"{what} is {q}: with {q} queue pairs per connection the ring's step keeps an "
            f"expected {mine:.4f} of link speed, below the target {target!r}{extra}"
        )
    if best is not None and q > best:
        raise AssertionError(
            f"{what} is {q}: that reaches {mine:.4f} >= {target!r}, but "
            f"{count_text(best, 'queue pair', 'queue pairs')} already reach "
            f"{ring_efficiency(best, *args):.4f}; every queue pair costs NIC state, take the "
            "fewest"
        )
    return 1.0


def ring_qps_cases(count=3, course_seed=None):
    """The cases of the notebook's queue-pair test, ``(gpus, gpus_per_rack, channels,
    uplinks, target, qp_entropy)``: fixed ones (one rack, one rack's statistic too
    optimistic, no entropy in the QPs, an unreachable target), then ``count`` drawn from the
    course seed, whose targets lie at least 1 % from the efficiencies of the answer and of
    one queue pair fewer."""
    fixed = [
        (128, 16, 16, 18, 0.4, True),
        (16, 16, 8, 16, 0.9, True),
        (3072, 16, 16, 18, 0.3, True),
        (256, 16, 16, 18, 0.3, False),
        (256, 16, 16, 18, 0.2, False),
        (64, 8, 8, 8, 0.49, True),
        (512, 32, 4, 16, 0.255, True),
        (64, 8, 4, 4, 0.95, True),
    ]

    def draw(generator):
        gpus_per_rack = int((8, 16, 32)[int(generator.integers(0, 3))])
        gpus = gpus_per_rack * int(generator.integers(2, 65))
        channels = int((4, 8, 16)[int(generator.integers(0, 3))])
        uplinks = int(generator.integers(channels, channels + channels // 2 + 3))
        answer = int(generator.integers(2, 7))
        args = (gpus, gpus_per_rack, channels, uplinks, True)
        high = ring_efficiency(answer, *args)
        low = ring_efficiency(answer - 1, *args)
        if high - low < 0.02:
            return None
        target = round(low + (high - low) * float(generator.uniform(0.3, 0.7)), 4)
        return (gpus, gpus_per_rack, channels, uplinks, target, True)

    return cohort.cases(
        "test_ring_qps",
        fixed,
        lambda g: _retry(draw, lambda case: case is not None, g),
        count,
        course_seed,
    )


# ---- the cable whose failure hurts a job most ----------------------------------------------


def _cable_link(fab, leaf, spine):
    """The directed link id of the cable from leaf ``leaf`` up to spine ``spine``."""
    leaves = fab.switches[fab.node_tier[fab.switches] == 1]
    spines = fab.switches[fab.node_tier[fab.switches] == 2]
    hit = np.flatnonzero((fab.link_src == leaves[leaf]) & (fab.link_dst == spines[spine]))
    return int(hit[0])


def _cable(answer, what, leaves, spines):
    if (
        isinstance(answer, (str, bytes, dict))
        or not isinstance(answer, (tuple, list))
        or len(answer) != 2
    ):
        raise GradingError(
            f"{what} should be a pair (leaf, spine) of ints, but it is {show(answer)}"
        )
    leaf = _whole(answer[0], f"the leaf of {what}")
    spine = _whole(answer[1], f"the spine of {what}")
    if leaf >= leaves or spine >= spines:
        raise AssertionError(
            f"{what} is {show(tuple(answer))}, but the fabric has leaves 0 to "
            f"{leaves - 1} and spines 0 to {spines - 1}"
        )
    return leaf, spine


def cable_seconds(cable, leaves, hosts_per_leaf, spines, failed, connections):
    """Seconds of one step of ``connections`` ``[(src host, dst host, bytes), ...]`` on the
    leaf-spine of :func:`leaf_spine` (one cable per leaf and spine, :data:`LINK_BANDWIDTH`)
    with the cables ``failed`` ``[(leaf, spine), ...]`` down, and ``cable`` too (None: no
    more): the busiest link's bytes over its speed, every connection between two leaves
    spread evenly over the spines it can still use (``routing="adaptive"``)."""
    fab = leaf_spine(hosts_per_leaf, leaves, spines)
    down = [_cable_link(fab, leaf, spine) for leaf, spine in failed]
    if cable is not None:
        down.append(_cable_link(fab, *cable))
    if down:
        fab = fab.fail(links=down)
    src, dst, size = (np.array([c[i] for c in connections]) for i in range(3))
    loads = route_flows(fab, src, dst, size.astype(float)).link_bytes()
    return float(np.max(loads / fab.link_bandwidth))


def worst_cable_reference(leaves, hosts_per_leaf, spines, failed, connections):
    """``(seconds, cables)``: the slowest step after one more cable fails
    (:func:`cable_seconds`), over every live leaf-spine cable, and the cables that give it."""
    down = {tuple(c) for c in failed}
    times = {
        (leaf, spine): cable_seconds(
            (leaf, spine), leaves, hosts_per_leaf, spines, failed, connections
        )
        for leaf in range(leaves)
        for spine in range(spines)
        if (leaf, spine) not in down
    }
    worst = max(times.values())
    return worst, sorted(c for c, t in times.items() if t >= worst * (1 - 1e-9))


def check_worst_cable(answer, what, leaves, hosts_per_leaf, spines, failed, connections):
    """``answer``, a live cable ``(leaf, spine)``, judged by what its failure does: the step
    (:func:`cable_seconds`) at least as slow as after the worst cable's failure (within
    1e-9). Returns 1.0."""
    leaf, spine = _cable(answer, what, leaves, spines)
    if (leaf, spine) in {tuple(c) for c in failed}:
        raise AssertionError(f"{what} is {(leaf, spine)}, a cable that is already down")
    case = (leaves, hosts_per_leaf, spines, failed, connections)
    worst, cables = worst_cable_reference(*case)
    mine = cable_seconds((leaf, spine), *case)
    if mine < worst * (1 - 1e-9):
        now = cable_seconds(None, *case)
        raise AssertionError(
            f"{what} is {(leaf, spine)}: with it down the step takes {mine * 1e3:.6g} ms (now "
            f"{now * 1e3:.6g} ms), but losing the cable {cables[0]} makes it {worst * 1e3:.6g} "
            "ms"
        )
    return 1.0


def _draw_failure_case(generator):
    leaves = int(generator.integers(3, 7))
    hosts = int(generator.integers(2, 5))
    spines = int(generator.integers(4, 7))
    broken = generator.choice(leaves, size=int(generator.integers(0, 3)), replace=False)
    failed = [(int(leaf), int(generator.integers(0, spines))) for leaf in sorted(broken)]
    n = leaves * hosts
    # every host sends at most one connection and receives at most one, so that the
    # leaf-spine cables, not the host cables, limit the step
    connections = [
        (int(src), int(dst), float(int(generator.integers(1, 9)) * 1e6))
        for src, dst in zip(generator.permutation(n), generator.permutation(n))
        if src // hosts != dst // hosts
    ]
    case = (leaves, hosts, spines, failed, connections)
    if len(connections) < 3:
        return None
    worst, cables = worst_cable_reference(*case)
    if worst < 1.01 * cable_seconds(None, *case) or len(cables) > 3:
        return None  # no cable matters, or too many tie
    return case


@functools.lru_cache(maxsize=1)
def _fixed_failure_cases():
    fixed = [
        # the notebook's example: leaf 0 sends 4 MB on two spines, one of them down
        (3, 2, 3, [(0, 0)], [(0, 2, 4e6), (1, 4, 2e6), (2, 5, 2e6)]),
    ]
    for number in (1, 2, 3):  # the same in every cohort
        fixed.append(
            _retry(_draw_failure_case, lambda c: c is not None, np.random.default_rng([22, number]))
        )
    return fixed


def worst_cable_cases(count=3, course_seed=None):
    """The cases of the notebook's failure test, ``(leaves, hosts_per_leaf, spines, failed,
    connections)``: fixed ones, then ``count`` drawn from the course seed (in each, the worst
    cable slows the step by at least 1 % and at most three cables tie)."""
    fixed = copy.deepcopy(_fixed_failure_cases())
    return cohort.cases(
        "test_worst_cable",
        fixed,
        lambda g: _retry(_draw_failure_case, lambda c: c is not None, g),
        count,
        course_seed,
    )
