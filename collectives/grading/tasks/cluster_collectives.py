"""The package's answers to the questions of the graded notebook on GPU clusters
(``exercises/source/cluster_collectives``), computed from plain arguments so that
:func:`~collectives.grading.check_reference` and :func:`~collectives.grading.check_choice` can
call them by name in the isolated re-check (``"grading.pipelined_hierarchical_seconds"``);
and :func:`check_placement`, the check of a learner's placement of a mesh, which
``check_reference`` runs by name too (``recheck`` runs only its own checks).

Every answer comes from the package's models, not from a formula written again here:
:func:`collectives.time` on :func:`collectives.hardware.preset` ``("dgx-h100", nodes=N)``
(N nodes of 8 H100 GPUs, GPU ``node * 8 + local``, latencies 0 unless given) of
:func:`collectives.algorithms.two_level_ring_all_reduce`, of that schedule pipelined with
:func:`collectives.transforms.pipelined`, of ring all-reduces in the groups of a
:class:`collectives.Mesh`, and of :func:`collectives.algorithms.sharp_all_reduce` in the rail
leaves; and :func:`collectives.hardware.superpod_plan`. Routes are the preset's default,
hashed ECMP; no expected value depends on that, since every schedule and layout the tasks
cost keeps its traffic inside nodes or on one rail's leaf (within one scalable unit), where
``routing="dmodk"`` and ``"adaptive"`` give the same times; only the times that
:func:`check_placement` reports for a wrong placement can differ. Levels are named as the
notebook names them: ``"nvlink"`` and ``"nic"`` (the package's ``"leaf"``: NIC to rail leaf
switch). A question without a clear answer (two choices within a hair of each other, a case on the
boundary) raises :class:`~collectives.GradingError`: a bug in the test, not in the answer.
"""

import math
from functools import lru_cache

import numpy as np

from ...errors import GradingError
from ..checks import in_words, show

__all__ = [
    "hierarchical_level_seconds",
    "hierarchical_bottleneck",
    "pipelined_hierarchical_seconds",
    "hierarchical_segments_needed",
    "mesh_step_seconds",
    "rail_placement",
    "placement_slowdown",
    "check_placement",
    "misplacement_ratio",
    "rail_all_reduce_seconds",
    "sharp_or_ring",
    "superpod_count",
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


# ---- Task 1: the levels of the hierarchical all-reduce ---------------------------------------


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


# ---- Task 2: pipelining ----------------------------------------------------------------------


def pipelined_hierarchical_seconds(n_nodes, nbytes, n_segments):
    """:func:`collectives.time` of the hierarchical all-reduce of ``nbytes`` on ``n_nodes``
    DGX H100 nodes, pipelined in ``n_segments`` segments
    (:func:`collectives.transforms.pipelined`)."""
    from ...cost import time
    from ...transforms import pipelined

    return time(pipelined(_hierarchical(n_nodes), int(n_segments)), _dgx(n_nodes), nbytes).seconds


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


# ---- Task 3: placing a mesh ------------------------------------------------------------------


def mesh_step_seconds(axes, placement, n_nodes, n_tp, tp_bytes, dp_bytes):
    """One training step's communication on ``n_nodes`` DGX H100 nodes, by
    :func:`collectives.time`: ``n_tp`` ring all-reduces of ``tp_bytes`` in every group of mesh
    axis ``"tp"`` at once, then one ring all-reduce of ``dp_bytes`` in every group of axis
    ``"dp"`` at once; the mesh ``axes`` (name -> size, row-major) laid out by ``placement``
    (mesh rank -> GPU). Other axes (``"pp"``) are not costed."""
    from ...algorithms import ring_all_reduce
    from ...cost import time
    from ...mesh import Mesh

    mesh = Mesh(dict(axes), devices=list(placement))
    topology = _dgx(n_nodes)
    seconds = 0.0
    for axis, count, nbytes in (("tp", n_tp, tp_bytes), ("dp", 1, dp_bytes)):
        size = mesh.axis_size(axis)
        if size > 1:
            ring = mesh.collective(ring_all_reduce(size), axis)
            seconds += count * time(ring, topology, nbytes, placement=mesh.placement).seconds
    return seconds


def rail_placement(axes):
    """The placement (mesh rank -> GPU) that puts TP group ``g`` of
    :meth:`collectives.Mesh.groups` ``("tp")`` on node ``g``, its member of TP index ``j`` on
    local GPU ``j``: every TP group in one node, every DP group on one rail (rail ``j``)."""
    from ...mesh import Mesh

    groups = Mesh(dict(axes)).groups("tp")
    if groups.shape[1] > GPUS_PER_NODE:
        raise GradingError(
            f"a TP group of {groups.shape[1]} GPUs does not fit in a node (a bug in the test)"
        )
    placement = np.empty(groups.size, dtype=np.int64)
    for node, group in enumerate(groups):
        placement[group] = node * GPUS_PER_NODE + np.arange(len(group))
    return placement.tolist()


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


# ---- Task 4: SHARP or a ring along the rails -------------------------------------------------


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


# ---- Task 5: a SuperPOD's switches and cables ------------------------------------------------


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
