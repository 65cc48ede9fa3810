"""The checks and answers of the graded notebook on GPU clusters
(``exercises/source/cluster_collectives``).

The notebook has two tools and three decisions. The tools are checked against the package's
numbers, called by name in the isolated re-check (``check_reference(answer, what,
"grading.tasks.cluster_collectives.hierarchical_level_seconds", args)``): the seconds of each
level of the hierarchical all-reduce (:func:`hierarchical_level_seconds`) and of it pipelined,
with a latency per InfiniBand cable (:func:`pipelined_hierarchical_seconds`). The decisions are
checked by what they do, never by which choice the reference made, each by a ``check_*`` that
returns 1.0 when the answer passes (``check_reference(1.0, what, "grading.tasks
.cluster_collectives.check_segments", (answer, what, ...))``) and raises ``AssertionError``
(a slower choice) or :class:`~collectives.GradingError` (an answer of the wrong form)
otherwise:

- a number of pipeline segments (:func:`check_segments`): the pipelined all-reduce's time by
  :func:`collectives.time` no slower than with the reference's count, the best power of two
  (:func:`reference_segments`); trying every count beats it, and passes;
- a placement of a mesh on the GPUs for a given step (:func:`check_mesh_placement`): the
  step's time by :func:`collectives.time` no slower than the better of the two layouts the
  chapter compares, TP inside the nodes and DP along the rails or the other way round
  (:func:`reference_placement`); packing a small mesh's TP and DP groups into one node beats
  both, and passes;
- the algorithm of the all-reduce along the rails (:func:`check_rail_plan`): the ring, or
  SHARP in the rail's leaf switch with a number of segments, no slower than the reference's
  plan (the ring or SHARP with the best power of two, :func:`reference_rail_plan`).

The ``*_cases`` functions give the hidden tests' cases: fixed ones, then cases drawn from the
course seed (:mod:`collectives.grading.cohort`), as plain data.

Every number comes from the package's models, not from a formula written again here:
:func:`collectives.time` on :func:`collectives.hardware.preset` ``("dgx-h100", nodes=N)``
(N nodes of 8 H100 GPUs, GPU ``node * 8 + local``, latencies 0 unless given) of
:func:`collectives.algorithms.two_level_ring_all_reduce`, of that schedule pipelined with
:func:`collectives.transforms.pipelined`, of ring all-reduces in the groups of a
:class:`collectives.Mesh`, and of :func:`collectives.algorithms.sharp_all_reduce` in the rail
leaves. Routes are the preset's default, hashed ECMP; no reference depends on that, since
every schedule and layout the references cost keeps its traffic inside nodes or on one rail's
leaf (within one scalable unit), where ``routing="dmodk"`` and ``"adaptive"`` give the same
times; a learner's placement that sends traffic through the spines is costed with the hash's
collisions. Levels are named as the notebook names them: ``"nvlink"`` and ``"nic"`` (the
package's ``"leaf"``: NIC to rail leaf switch).

The earlier notebook's answers stay, for released copies of it: the level that bounds the
all-reduce, the fewest segments within a bound, the placement by the chapter's two rules
(:func:`check_placement`), the misplacement ratio, SHARP or the ring with a given number of
segments, and the SuperPOD counts of :func:`collectives.hardware.superpod_plan`. A question
without a clear answer (two choices within a hair of each other, a case on the boundary)
raises :class:`~collectives.GradingError`: a bug in the test, not in the answer.

Left out: NVLS (NVLink SHARP) inside the node, SHARP trees beyond one scalable unit, the
latencies of NVLink and PCIe (0 in the preset) and anything that the step-synchronous model of
:func:`collectives.time` does not cost (streaming between the levels, congestion control).
"""

import math
from functools import lru_cache

import numpy as np

from ...errors import GradingError
from .. import cohort
from ..checks import count_text, in_words, show

__all__ = [
    "hierarchical_level_seconds",
    "hierarchical_bottleneck",
    "pipelined_hierarchical_seconds",
    "hierarchical_segments_needed",
    "mesh_step_parts",
    "mesh_step_seconds",
    "rail_placement",
    "placement_slowdown",
    "check_placement",
    "misplacement_ratio",
    "rail_all_reduce_seconds",
    "sharp_or_ring",
    "superpod_count",
    "MAX_SEGMENTS",
    "level_cases",
    "pipelined_cases",
    "reference_segments",
    "check_segments",
    "segments_cases",
    "in_node_placement",
    "packed_placement",
    "reference_placement",
    "check_mesh_placement",
    "placement_cases",
    "rail_plan_seconds",
    "reference_rail_plan",
    "check_rail_plan",
    "rail_plan_cases",
]

GPUS_PER_NODE = 8
#: the notebook's level names -> the package's
_LEVELS = {"nvlink": "nvlink", "nic": "leaf"}
#: a clear answer: the two sides of a choice, or a time and its bound, differ by more
_TIE = 1e-6


@lru_cache(maxsize=32)
def _dgx(n_nodes, network_latency=0.0):
    from ...hardware import preset

    return preset("dgx-h100", nodes=int(n_nodes), network_latency=float(network_latency))


def _hierarchical(n_nodes):
    from ...algorithms import two_level_ring_all_reduce

    return two_level_ring_all_reduce(int(n_nodes), GPUS_PER_NODE)


def _levels(n_nodes, nbytes):
    from ...cost import time

    seconds = time(_hierarchical(n_nodes), _dgx(n_nodes), nbytes).level_seconds()
    return {name: seconds.get(level, 0.0) for name, level in _LEVELS.items()}


# ---- the levels of the hierarchical all-reduce ----------------------------------------------


def hierarchical_level_seconds(n_nodes, nbytes, level):
    """Transfer seconds of the steps of the hierarchical all-reduce of ``nbytes`` on
    ``n_nodes`` DGX H100 nodes that ``level`` bounds (``"nvlink"``: the reduce-scatter and
    all-gather inside the nodes; ``"nic"``: the all-reduce along the rails), by
    :meth:`collectives.Timing.level_seconds`; 0 for a level that bounds no step."""
    if level not in _LEVELS:
        raise GradingError(f"level must be 'nvlink' or 'nic', got {level!r} (a bug in the test)")
    return _levels(n_nodes, nbytes)[level]


def hierarchical_bottleneck(n_nodes, nbytes):
    """``"nvlink"`` or ``"nic"``: the level of :func:`hierarchical_level_seconds` that takes
    longer. Levels within 1e-6 (relative) of each other raise."""
    levels = _levels(n_nodes, nbytes)
    if math.isclose(levels["nvlink"], levels["nic"], rel_tol=_TIE):
        raise GradingError(
            f"both levels take {levels['nic']!r} s for {n_nodes} nodes and "
            f"{nbytes!r} bytes (a bug in the test)"
        )
    return max(levels, key=levels.get)


# ---- pipelining -----------------------------------------------------------------------------


def pipelined_hierarchical_seconds(n_nodes, nbytes, n_segments, link_latency=0.0):
    """:func:`collectives.time` of the hierarchical all-reduce of ``nbytes`` on ``n_nodes``
    DGX H100 nodes, pipelined in ``n_segments`` segments
    (:func:`collectives.transforms.pipelined`), on the preset with
    ``network_latency=link_latency`` (seconds per InfiniBand cable a message crosses; NVLink
    and PCIe have none)."""
    from ...cost import time
    from ...transforms import pipelined

    schedule = pipelined(_hierarchical(n_nodes), int(n_segments))
    return time(schedule, _dgx(n_nodes, link_latency), nbytes).seconds


def hierarchical_segments_needed(n_nodes, nbytes, within, limit=1000):
    """The fewest segments with which :func:`pipelined_hierarchical_seconds` is at most
    ``(1 + within)`` times the slower level's :func:`hierarchical_level_seconds` (every count
    from 1 tried in turn). Raises if a count tried lies within 1e-6 (relative) of that bound,
    or if more than ``limit`` segments would be needed."""
    bound = (1 + within) * max(_levels(n_nodes, nbytes).values())
    for k in range(1, int(limit) + 1):
        seconds = pipelined_hierarchical_seconds(n_nodes, nbytes, k)
        if math.isclose(seconds, bound, rel_tol=_TIE):
            raise GradingError(
                f"{k} segments take {seconds!r} s, at the bound {bound!r} s (a bug in the test)"
            )
        if seconds <= bound:
            return k
    raise GradingError(f"more than {limit} segments needed (a bug in the test)")


# ---- placing a mesh -------------------------------------------------------------------------


def mesh_step_parts(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes):
    """``(tp_seconds, dp_seconds)`` of :func:`mesh_step_seconds`: the ``n_tp`` TP all-reduces
    together, and the DP all-reduce."""
    from ...algorithms import ring_all_reduce
    from ...cost import time
    from ...mesh import Mesh

    mesh = Mesh(dict(axes), devices=list(placement))
    topology = _dgx(n_nodes)
    parts = []
    for axis, count, nbytes in (("tp", n_tp, tp_bytes), ("dp", 1, dp_bytes)):
        size = mesh.axis_size(axis)
        seconds = 0.0
        if size > 1:
            ring = mesh.collective(ring_all_reduce(size), axis)
            seconds = count * time(ring, topology, nbytes, placement=mesh.placement).seconds
        parts.append(seconds)
    return tuple(parts)


def mesh_step_seconds(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes):
    """One training step's communication on ``n_nodes`` DGX H100 nodes, by
    :func:`collectives.time`: ``n_tp`` ring all-reduces of ``tp_bytes`` in every group of mesh
    axis ``"tp"`` at once, then one ring all-reduce of ``dp_bytes`` in every group of axis
    ``"dp"`` at once; the mesh ``axes`` (name -> size, row-major) laid out by ``placement``
    (mesh rank -> GPU). Other axes (``"pp"``) are not costed."""
    return sum(mesh_step_parts(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes))


def in_node_placement(axes, axis):
    """The placement (mesh rank -> GPU) that puts group ``g`` of :meth:`collectives.Mesh.groups`
    ``(axis)`` on node ``g``, its member of index ``j`` along ``axis`` on local GPU ``j``:
    every group of ``axis`` in one node, and the groups of every other axis on one rail each
    (their members share the index along ``axis``, so the local GPU)."""
    from ...mesh import Mesh

    groups = Mesh(dict(axes)).groups(axis)
    if groups.shape[1] > GPUS_PER_NODE:
        raise GradingError(
            f"a {axis.upper()} group of {groups.shape[1]} GPUs does not fit in a node "
            "(a bug in the test)"
        )
    placement = np.empty(groups.size, dtype=np.int64)
    for node, group in enumerate(groups):
        placement[group] = node * GPUS_PER_NODE + np.arange(len(group))
    return placement.tolist()


def rail_placement(axes):
    """The placement (mesh rank -> GPU) that puts TP group ``g`` of
    :meth:`collectives.Mesh.groups` ``("tp")`` on node ``g``, its member of TP index ``j`` on
    local GPU ``j``: every TP group in one node, every DP group on one rail (rail ``j``);
    :func:`in_node_placement` of ``"tp"``."""
    return in_node_placement(axes, "tp")


def placement_slowdown(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes):
    """:func:`mesh_step_seconds` of ``placement`` over that of :func:`rail_placement` (1.0
    for a placement as good as it)."""
    return mesh_step_seconds(
        axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes
    ) / mesh_step_seconds(axes, rail_placement(axes), n_nodes, n_tp, tp_bytes, dp_bytes)


def _placement_list(value, what, n_ranks, n_gpus):
    """``value`` as a list of ``n_ranks`` distinct GPUs below ``n_gpus``, or a GradingError
    saying what it is instead."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise GradingError(
            f"{what} should be a list of GPUs (ints), one per mesh rank, but it "
            f"is {in_words(value)}"
        )
    if len(value) != n_ranks:
        raise GradingError(f"{what} is a list of {len(value)} GPUs; the mesh has {n_ranks} ranks")
    owner = {}
    for rank, gpu in enumerate(value):
        if isinstance(gpu, (bool, np.bool_)) or not isinstance(gpu, (int, np.integer)):
            hint = (
                " (use // rather than /, or int(...))"
                if isinstance(gpu, (float, np.floating))
                else ""
            )
            raise GradingError(
                f"{what}[{rank}] is {in_words(gpu)}; expected an int, the GPU "
                f"node * 8 + local{hint}"
            )
        gpu = int(gpu)
        if not 0 <= gpu < n_gpus:
            raise AssertionError(
                f"{what} puts mesh rank {rank} on {gpu}, which is not a GPU "
                f"of the {n_gpus // GPUS_PER_NODE} nodes (0 to {n_gpus - 1})"
            )
        if gpu in owner:
            raise AssertionError(f"{what} puts mesh ranks {owner[gpu]} and {rank} on GPU {gpu}")
        owner[gpu] = rank
    return [int(gpu) for gpu in value]


def _broken_rule(axes, placement):
    """The first TP group off one node or DP group off one rail, in words ('' if none)."""
    from ...mesh import Mesh

    mesh = Mesh(dict(axes), devices=placement)
    for axis, where, of in (
        ("tp", "nodes", lambda gpu: gpu // GPUS_PER_NODE),
        ("dp", "rails", lambda gpu: gpu % GPUS_PER_NODE),
    ):
        for ranks, gpus in zip(mesh.groups(axis).tolist(), mesh.device_groups(axis).tolist()):
            spread = sorted({of(gpu) for gpu in gpus})
            if len(spread) > 1:
                return (
                    f"the {axis.upper()} group of mesh ranks {ranks} is on GPUs {gpus}, "
                    f"which span {where} {spread}"
                )
    return ""


def check_placement(placement, what, axes, n_nodes, n_tp, tp_bytes, dp_bytes, *, rel=1e-9):
    """Check a learner's ``placement`` (mesh rank -> GPU) of the mesh ``axes`` on ``n_nodes``
    DGX H100 nodes: its form (a list of ints, one per mesh rank; else a
    :class:`~collectives.GradingError`); then that every GPU is used once, that every TP group
    is in one node and every DP group on one rail (:meth:`collectives.Mesh.device_groups`) and
    that the step of :func:`mesh_step_seconds` is as fast as with :func:`rail_placement`,
    within ``rel``; else an ``AssertionError`` that names the first broken rule and gives both
    times. A passing placement returns its :func:`placement_slowdown` (1.0 up to ``rel``; 1.0
    if it is faster still), so that the re-check, which runs only its own checks, runs this
    one as ``check_reference(1.0, what, "grading.check_placement", (placement, what, axes,
    n_nodes, n_tp, tp_bytes, dp_bytes))``."""
    n_ranks = math.prod(int(size) for size in dict(axes).values())
    placement = _placement_list(placement, what, n_ranks, GPUS_PER_NODE * int(n_nodes))
    broken = _broken_rule(axes, placement)
    seconds = mesh_step_seconds(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes)
    best = mesh_step_seconds(axes, rail_placement(axes), n_nodes, n_tp, tp_bytes, dp_bytes)
    slowdown = seconds / best
    if not broken and slowdown <= 1 + rel:
        return max(slowdown, 1.0)
    if math.isclose(seconds, best, rel_tol=rel):
        cost = "its step is as fast, by cl.time, but the task asks for both rules"
    else:
        cost = (
            f"by cl.time its step ({n_tp} TP all-reduces of {show(tp_bytes)} bytes, one DP "
            f"all-reduce of {show(dp_bytes)} bytes) takes {seconds!r} s, {slowdown:.6g} "
            f"times the {best!r} s with every TP group in one node and every DP group on "
            "one rail"
        )
    rules = broken or "every TP group is in one node and every DP group on one rail"
    raise AssertionError(f"{what}: {rules}; {cost}")


def misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes):
    """:func:`mesh_step_seconds` of the mesh ``{"dp": dp, "tp": tp}`` with TP along the rails
    and DP inside the nodes (GPU ``8 t + d``) over that with TP inside the nodes and DP along
    the rails (GPU ``8 d + t``), on ``max(dp, tp)`` nodes."""
    dp, tp = int(dp), int(tp)
    axes = {"dp": dp, "tp": tp}
    nodes = max(dp, tp)
    swapped = [GPUS_PER_NODE * t + d for d in range(dp) for t in range(tp)]
    right = [GPUS_PER_NODE * d + t for d in range(dp) for t in range(tp)]
    return mesh_step_seconds(axes, swapped, nodes, n_tp, tp_bytes, dp_bytes) / mesh_step_seconds(
        axes, right, nodes, n_tp, tp_bytes, dp_bytes
    )


# ---- SHARP or a ring along the rails ----------------------------------------------------------


def rail_all_reduce_seconds(n_nodes, nbytes, link_latency, algorithm, n_segments=1):
    """:func:`collectives.time` of the all-reduce, along every rail of ``n_nodes`` DGX H100
    nodes at once, of each GPU's shard ``nbytes / 8`` (phase 2 of the hierarchical
    all-reduce), on the preset with ``network_latency=link_latency``: ``algorithm`` ``"ring"``
    (a ring over the rail's GPUs) or ``"sharp"`` (:func:`collectives.algorithms
    .sharp_all_reduce` in ``n_segments`` segments, reduced in the rail's leaf switch, found
    on the route between the rail's GPUs of nodes 0 and 1). One scalable unit at most (2 to
    32 nodes), where a rail has one leaf."""
    from ...algorithms import ring_all_reduce, sharp_all_reduce
    from ...cost import time
    from ...mesh import Mesh

    n = int(n_nodes)
    if not 2 <= n <= 32:
        raise GradingError(
            f"{n} nodes: the rails of 2 to 32 nodes (one scalable unit) have "
            "one leaf each (a bug in the test)"
        )
    topology = _dgx(n, link_latency)
    rails = Mesh({"node": n, "gpu": GPUS_PER_NODE})  # the "node" groups are the rails
    if algorithm == "ring":
        return time(
            rails.collective(ring_all_reduce(n), "node"), topology, nbytes / GPUS_PER_NODE
        ).seconds
    if algorithm != "sharp":
        raise GradingError(
            f"algorithm must be 'ring' or 'sharp', got {algorithm!r} (a bug in the test)"
        )
    leaf = topology.info.levels.index("leaf")
    leaves = []
    for rail in range(GPUS_PER_NODE):
        up = [
            link
            for link in topology.route(rail, GPUS_PER_NODE + rail)
            if topology.link_level[link] == leaf
        ][0]  # NIC -> the rail's leaf
        leaves.append(int(topology.link_dst[up]))
    return time(
        rails.collective(sharp_all_reduce(n, int(n_segments)), "node"),
        topology,
        nbytes / GPUS_PER_NODE,
        switch_placement=leaves,
    ).seconds


def sharp_or_ring(n_nodes, nbytes, link_latency, n_segments):
    """``"sharp"`` if SHARP in ``n_segments`` segments finishes the all-reduce along the rails
    sooner than the ring (:func:`rail_all_reduce_seconds`), else ``"ring"``. Two times within
    0.1 % of each other raise (the notebook promises a clear winner)."""
    ring = rail_all_reduce_seconds(n_nodes, nbytes, link_latency, "ring")
    sharp = rail_all_reduce_seconds(n_nodes, nbytes, link_latency, "sharp", n_segments)
    if math.isclose(ring, sharp, rel_tol=1e-3):
        raise GradingError(f"ring and SHARP take {ring!r} and {sharp!r} s (a bug in the test)")
    return "sharp" if sharp < ring else "ring"


# ---- a SuperPOD's switches and cables (the earlier notebook's Task 5) -------------------------


def superpod_count(units, what):
    """``"leaves"``, ``"spines"``, ``"cores"`` or ``"cables"`` (node to leaf, leaf to spine
    and spine to core, all together) of :func:`collectives.hardware.superpod_plan`
    ``(units)``."""
    from ...hardware import superpod_plan

    plan = superpod_plan(int(units))
    counts = {
        "leaves": plan.leaves,
        "spines": plan.spines,
        "cores": plan.cores,
        "cables": plan.node_leaf_cables + plan.leaf_spine_cables + plan.spine_core_cables,
    }
    if what not in counts:
        raise GradingError(
            f"what must be one of {', '.join(counts)}, got {what!r} (a bug in the test)"
        )
    return counts[what]


# ==== the redesigned notebook: drawn cases and decisions ======================================

#: the most pipeline segments a decision may use; the references try the powers of two up to it
MAX_SEGMENTS = 256
#: the powers of two the references try
_POWERS = tuple(2**j for j in range(MAX_SEGMENTS.bit_length()) if 2**j <= MAX_SEGMENTS)


def _log_uniform(generator, low, high, digits=3):
    """A float between ``low`` and ``high``, uniform in its logarithm, rounded to ``digits``
    significant digits (cases that read well in messages)."""
    value = math.exp(generator.uniform(math.log(low), math.log(high)))
    return float(f"{value:.{digits}g}")


def _pick(generator, options):
    return options[int(generator.integers(len(options)))]


def _retry(draw, generator, tries=200):
    """``draw(generator)`` again until it is not None (a case the test cannot use)."""
    for _ in range(tries):
        case = draw(generator)
        if case is not None:
            return case
    raise GradingError("no usable case drawn (a bug in the test)")


def _count(value, what, low, high):
    """``value`` as an int from ``low`` to ``high`` (an integer float too): a GradingError for
    another type, an AssertionError outside the range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, np.integer, float, np.floating)
    ):
        raise GradingError(f"{what} should be an int, but it is {in_words(value)}")
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise GradingError(f"{what} should be a whole number, but it is {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise AssertionError(f"{what} is {value}, outside {low} to {high}")
    return value


# ---- the tools: the levels, and the pipelined all-reduce with latency ------------------------


def level_cases(count=3, course_seed=None):
    """The cases of the notebook's level test, ``(n_nodes, nbytes)``: fixed ones (one node, the
    crossover between 4 and 5 nodes, a thousand nodes), then ``count`` drawn from the course
    seed."""
    fixed = [(1, 2.0**30), (2, 2.0**30), (4, 2.0**27), (5, 1e9), (16, 123456789.0), (1000, 1e10)]

    def draw(generator):
        return (int(generator.integers(1, 65)), _log_uniform(generator, 1e6, 1e10))

    return cohort.cases("test_level_seconds", fixed, draw, count, course_seed)


def pipelined_cases(count=3, course_seed=None):
    """The cases of the notebook's pipelining test, ``(n_nodes, nbytes, n_segments,
    link_latency)``: fixed ones (one node, one segment, with and without latency, up to 256
    segments), then ``count`` drawn from the course seed."""
    fixed = [
        (1, 2.0**30, 4, 1e-6),
        (2, 2.0**30, 1, 0.0),
        (2, 2.0**30, 3, 1e-6),
        (3, 123456789.0, 17, 2e-6),
        (4, 1e9, 64, 0.0),
        (8, 2.0**28, 5, 5e-6),
        (16, 1e9, 100, 1e-6),
        (32, 2.0**30, 256, 1e-6),
    ]

    def draw(generator):
        return (
            int(generator.integers(1, 33)),
            _log_uniform(generator, 1e6, 1e10),
            int(generator.integers(1, 201)),
            _pick(generator, (0.0, 1e-6, 2e-6, 5e-6)),
        )

    return cohort.cases("test_pipelined_seconds", fixed, draw, count, course_seed)


# ---- decision 1: how many segments -----------------------------------------------------------


@lru_cache(maxsize=64)
def reference_segments(n_nodes, nbytes, link_latency):
    """``(n_segments, seconds)``: the course's reference choice, the power of two up to
    :data:`MAX_SEGMENTS` whose :func:`pipelined_hierarchical_seconds` (``cl.time``, with
    ``link_latency`` per InfiniBand cable) is the least (the fewest segments on a tie), and
    that time. Trying every count can do better."""
    times = {k: pipelined_hierarchical_seconds(n_nodes, nbytes, k, link_latency) for k in _POWERS}
    best = min(times, key=lambda k: (times[k], k))
    return best, times[best]


#: how much slower than the reference's a count of segments may be and still score: the best
#: count is a flat minimum (on 4 nodes, 1 GiB, 2 us, 68 segments are 0.018 % faster than the
#: reference's 64 and 72 are 0.003 % slower), so a count within 0.1 % of the reference is as
#: good a decision; a wrong model is off by whole percents
SEGMENTS_TOLERANCE = 1e-3


def check_segments(answer, what, n_nodes, nbytes, link_latency, *, rel=SEGMENTS_TOLERANCE):
    """``answer``, a number of segments (1 to :data:`MAX_SEGMENTS`) for the hierarchical
    all-reduce of ``nbytes`` on ``n_nodes`` DGX H100 nodes with ``link_latency`` per
    InfiniBand cable, judged by what it does: its :func:`pipelined_hierarchical_seconds` no
    slower than the reference's (:func:`reference_segments`), within ``rel``
    (:data:`SEGMENTS_TOLERANCE`). Returns 1.0."""
    k = _count(answer, what, 1, MAX_SEGMENTS)
    mine = pipelined_hierarchical_seconds(n_nodes, nbytes, k, link_latency)
    best_k, best = reference_segments(n_nodes, nbytes, link_latency)
    if mine > best * (1 + rel):
        why = (
            "every segment is one more step, and every step on the rails pays the latency"
            if k > best_k
            else "with fewer segments more of the faster level is left outside the overlap"
        )
        raise AssertionError(
            f"{what} is {k}: pipelined in {count_text(k, 'segment', 'segments')} the all-reduce "
            f"takes {mine * 1e3:.6g} ms "
            f"by cl.time, {mine / best:.6g} times the {best * 1e3:.6g} ms with {best_k} "
            f"segments ({why}; if your pipelined_seconds agrees with cl.time, take the count "
            "it makes fastest, trying every one)"
        )
    return 1.0


def segments_cases(count=3, course_seed=None):
    """The cases of the notebook's segments test, ``(n_nodes, nbytes, link_latency)``: fixed
    ones, then ``count`` drawn from the course seed; in every case the reference's choice
    lies strictly between 1 and :data:`MAX_SEGMENTS` segments, and both of those take at
    least 1 % longer than it."""
    fixed = [(4, 2.0**30, 2e-6), (2, 1e9, 1e-6), (8, 2.0**28, 5e-6), (16, 2.0**30, 1e-6)]

    def draw(generator):
        case = (
            int(generator.integers(2, 17)),
            _log_uniform(generator, 3e7, 1e10),
            _pick(generator, (1e-6, 2e-6, 5e-6)),
        )
        k, best = reference_segments(*case)
        ends = [pipelined_hierarchical_seconds(*case[:2], j, case[2]) for j in (1, MAX_SEGMENTS)]
        if not 1 < k < MAX_SEGMENTS or min(ends) < 1.01 * best:
            return None
        return case

    return cohort.cases(
        "test_choose_segments", fixed, lambda g: _retry(draw, g), count, course_seed
    )


# ---- decision 2: where the ranks go ----------------------------------------------------------


def packed_placement(axes):
    """A placement that puts every TP group and every DP group of a mesh with ``tp * dp <= 8``
    inside one node: mesh rank with TP index ``t`` and DP index ``d`` on local GPU
    ``d * tp + t`` of the node numbered by its indices along the other axes (``"pp"``), so
    that both all-reduces run on NVLink."""
    names = list(axes)
    sizes = [int(axes[name]) for name in names]
    tp, dp = int(axes["tp"]), int(axes["dp"])
    if tp * dp > GPUS_PER_NODE:
        raise GradingError(f"tp x dp = {tp * dp} GPUs do not fit in a node (a bug in the test)")
    coords = dict(zip(names, np.indices(sizes).reshape(len(sizes), -1)))  # rank order
    node = np.zeros(math.prod(sizes), dtype=np.int64)
    for name in names:
        if name not in ("tp", "dp"):
            node = node * int(axes[name]) + coords[name]
    return (node * GPUS_PER_NODE + coords["dp"] * tp + coords["tp"]).tolist()


#: the two layouts the reference compares: the axis whose groups go inside the nodes
_LAYOUTS = {
    "tp": "every TP group inside a node and every DP group along a rail",
    "dp": "every DP group inside a node and every TP group along a rail",
}


def reference_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes):
    """``(seconds, layout, placement)``: the course's reference, the faster by
    :func:`mesh_step_seconds` of :func:`in_node_placement` of ``"tp"`` (TP groups in the
    nodes, DP groups on the rails) and of ``"dp"`` (the other way round), among those that
    fit on ``n_nodes`` nodes; ``layout`` says which, in words. Packing both axes into a node,
    where they fit, beats both."""
    found = []
    for axis, layout in _LAYOUTS.items():
        others = math.prod(int(size) for name, size in dict(axes).items() if name != axis)
        if int(dict(axes)[axis]) <= GPUS_PER_NODE and others <= int(n_nodes):
            placement = in_node_placement(axes, axis)
            seconds = mesh_step_seconds(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes)
            found.append((seconds, layout, placement))
    if not found:
        raise GradingError(
            f"neither layout of {dict(axes)} fits on {n_nodes} nodes (a bug in the test)"
        )
    return min(found, key=lambda item: item[0])


def check_mesh_placement(answer, what, axes, n_nodes, n_tp, tp_bytes, dp_bytes, *, rel=1e-9):
    """``answer``, a placement (mesh rank -> GPU ``node * 8 + local``) of the mesh ``axes`` on
    ``n_nodes`` DGX H100 nodes, judged by what it does: a list of ints, one per mesh rank,
    each GPU once (else a :class:`~collectives.GradingError` or an ``AssertionError``), whose
    step (:func:`mesh_step_seconds`: ``n_tp`` TP all-reduces of ``tp_bytes``, one DP
    all-reduce of ``dp_bytes``) is no slower than the reference's
    (:func:`reference_placement`), within ``rel``. Returns 1.0."""
    from ...mesh import Mesh

    n_ranks = math.prod(int(size) for size in dict(axes).values())
    placement = _placement_list(answer, what, n_ranks, GPUS_PER_NODE * int(n_nodes))
    tp_seconds, dp_seconds = mesh_step_parts(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes)
    mine = tp_seconds + dp_seconds
    best, layout, reference = reference_placement(axes, n_nodes, n_tp, tp_bytes, dp_bytes)
    if mine > best * (1 + rel):
        mesh, theirs = Mesh(dict(axes), devices=placement), Mesh(dict(axes), devices=reference)
        ref_tp, ref_dp = mesh_step_parts(axes, reference, n_nodes, n_tp, tp_bytes, dp_bytes)
        raise AssertionError(
            f"{what}: by cl.time its step ({n_tp} TP all-reduces of {show(tp_bytes)} bytes, one "
            f"DP all-reduce of {show(dp_bytes)} bytes) takes {mine!r} s (TP {tp_seconds:.6g} s, "
            f"DP {dp_seconds:.6g} s; its first TP group is on GPUs "
            f"{mesh.device_groups('tp')[0].tolist()}, its first DP group on GPUs "
            f"{mesh.device_groups('dp')[0].tolist()}), {mine / best:.6g} times the {best!r} s "
            f"(TP {ref_tp:.6g} s, DP {ref_dp:.6g} s) with {layout} (TP group "
            f"{theirs.device_groups('tp')[0].tolist()}, DP group "
            f"{theirs.device_groups('dp')[0].tolist()})"
        )
    return 1.0


def placement_cases(count=3, course_seed=None):
    """The cases of the notebook's placement test, ``(axes, n_nodes, n_tp, tp_bytes,
    dp_bytes)``, on ``n_nodes = pp x max(tp, dp)`` nodes, where both layouts of
    :func:`reference_placement` fit: fixed ones (TP's traffic the larger, DP's the larger, a
    pipeline axis, a mesh small enough to pack into a node, the axes in every order), then
    ``count`` drawn from the course seed, in each of which one layout is at least 2 % faster
    than the other."""
    fixed = [
        ({"dp": 8, "tp": 8}, 8, 128, 2.0**25, 1.75e9),
        ({"tp": 8, "dp": 4}, 8, 8, 2.0**20, 2.0**30),
        ({"pp": 2, "tp": 4, "dp": 4}, 8, 64, 2.0**24, 1e9),
        ({"tp": 2, "dp": 4}, 4, 16, 2.0**22, 2.0**28),
        ({"dp": 2, "pp": 2, "tp": 8}, 16, 1, 1e6, 4e9),
        ({"tp": 4, "pp": 2, "dp": 8}, 16, 128, 2.0**25, 2.0**30),
        # decided by the rings' factor 2(n-1)/n: 10 x 70 MB > 1 GB, yet DP's ring sends more
        ({"tp": 8, "dp": 2}, 8, 10, 7e7, 1e9),
    ]

    def draw(generator):
        axes = {"tp": _pick(generator, (2, 4, 8)), "dp": _pick(generator, (2, 4, 8))}
        if generator.integers(2):
            axes["pp"] = 2
        names = list(axes)
        generator.shuffle(names)
        axes = {name: axes[name] for name in names}
        n_nodes = axes.get("pp", 1) * max(axes["tp"], axes["dp"])
        case = (
            axes,
            n_nodes,
            int(generator.integers(1, 129)),
            _log_uniform(generator, 1e5, 1e8),
            _log_uniform(generator, 1e7, 1e10),
        )
        times = sorted(
            mesh_step_seconds(axes, in_node_placement(axes, axis), *case[1:]) for axis in _LAYOUTS
        )
        return case if times[1] > 1.02 * times[0] else None

    return cohort.cases("test_mesh_placement", fixed, lambda g: _retry(draw, g), count, course_seed)


# ---- decision 3: the algorithm along the rails -----------------------------------------------


def _rail_plan(answer, what):
    """The learner's plan as ``(algorithm, n_segments)``: ``("ring", 1)`` or ``("sharp", k)``."""
    if (
        isinstance(answer, (str, bytes, dict))
        or not isinstance(answer, (tuple, list))
        or len(answer) != 2
    ):
        raise GradingError(
            f"{what} should be a pair (algorithm, n_segments), ('ring', 1) or ('sharp', k), "
            f"but it is {in_words(answer)}"
        )
    algorithm, segments = answer
    if algorithm not in ("ring", "sharp"):
        raise AssertionError(
            f"the algorithm of {what} is {show(algorithm)}, which is not 'ring' or 'sharp'"
        )
    k = _count(segments, f"the n_segments of {what}", 1, MAX_SEGMENTS)
    if algorithm == "ring" and k != 1:
        raise AssertionError(
            f"{what} is {show(tuple(answer))}: the ring has no segments; write ('ring', 1)"
        )
    return algorithm, k


def rail_plan_seconds(plan, n_nodes, nbytes, link_latency):
    """:func:`rail_all_reduce_seconds` of ``plan``, ``("ring", 1)`` or ``("sharp", k)``."""
    algorithm, k = plan
    return rail_all_reduce_seconds(n_nodes, nbytes, link_latency, algorithm, k)


@lru_cache(maxsize=64)
def reference_rail_plan(n_nodes, nbytes, link_latency):
    """``(plan, seconds)``: the course's reference plan for the all-reduce along the rails, the
    faster (:func:`rail_all_reduce_seconds`, by ``cl.time``) of the ring and SHARP in the
    rail's leaf with a power of two of segments up to :data:`MAX_SEGMENTS` (the fewest
    segments, then the ring, on a tie). Trying every count of segments can do better."""
    plans = [("ring", 1)] + [("sharp", k) for k in _POWERS]
    times = {plan: rail_plan_seconds(plan, n_nodes, nbytes, link_latency) for plan in plans}
    best = min(plans, key=lambda plan: (times[plan], plan[1], plan[0] != "ring"))
    return best, times[best]


def check_rail_plan(answer, what, n_nodes, nbytes, link_latency, *, rel=1e-9):
    """``answer``, a plan ``("ring", 1)`` or ``("sharp", n_segments)`` for the all-reduce of
    each GPU's shard ``nbytes / 8`` along the rails of ``n_nodes`` DGX H100 nodes (2 to 32)
    with ``link_latency`` per InfiniBand cable, judged by what it does: its
    :func:`rail_plan_seconds` no slower than the reference plan's
    (:func:`reference_rail_plan`), within ``rel``. Returns 1.0."""
    plan = _rail_plan(answer, what)
    mine = rail_plan_seconds(plan, n_nodes, nbytes, link_latency)
    best_plan, best = reference_rail_plan(n_nodes, nbytes, link_latency)
    if mine > best * (1 + rel):
        raise AssertionError(
            f"{what} is {plan}: the all-reduce along the rails takes {mine * 1e6:.6g} us by "
            f"cl.time, {mine / best:.6g} times the {best * 1e6:.6g} us of {best_plan} (ring "
            f"{rail_plan_seconds(('ring', 1), n_nodes, nbytes, link_latency) * 1e6:.6g} us, "
            f"SHARP in one segment "
            f"{rail_plan_seconds(('sharp', 1), n_nodes, nbytes, link_latency) * 1e6:.6g} us)"
        )
    return 1.0


def rail_plan_cases(count=3, course_seed=None):
    """The cases of the notebook's rail test, ``(n_nodes, nbytes, link_latency)``, 2 to 32
    nodes (one scalable unit): fixed ones (the ring the best on two nodes, SHARP in one
    segment for a small buffer, SHARP streamed for a large one), then ``count`` drawn from
    the course seed."""
    fixed = [
        (8, 1e7, 1e-6),
        (8, 1e9, 1e-6),
        (2, 2.0**30, 1e-6),
        (2, 1e4, 3e-6),
        (32, 2.0**26, 1e-6),
        (16, 1e9, 5e-6),
    ]

    def draw(generator):
        return (
            int(generator.integers(2, 33)),
            _log_uniform(generator, 1e5, 1e10),
            _pick(generator, (1e-6, 2e-6, 5e-6)),
        )

    return cohort.cases("test_rail_plan", fixed, draw, count, course_seed)
