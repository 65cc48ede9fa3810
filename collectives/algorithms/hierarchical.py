"""Hierarchical collectives: the slow level (across nodes) carries only the node's share.

All-reduce: reduce-scatter inside each node, all-reduce across nodes, all-gather inside each
node. All-gather: across nodes first (each rank gathers, along its rail, the shards of the
ranks with its local index: 1/g of the result), then inside the node (NVLink carries the
rest). Reduce-scatter: the dual, inside the node first, then across. All-to-all: inside the
node first (every rank hands each local peer what goes to that peer's rail), then along the
rails: each rank sends N-1 large messages across the network instead of N*g-1 small ones.

Ranks are numbered node-major: rank ``node * g + local`` for ``N`` nodes of ``g`` ranks (GPUs
of a DGX node, chips of a TPU slice). The inner reduce-scatter leaves local rank ``p`` of
every node with shard ``p`` summed over its node; the outer all-reduce then sums shard ``p``
across the nodes, among the ranks with the same local index (one NIC rail, or the same chip
of every slice over DCN); the inner all-gather gives every rank the whole result. Only 1/g of
the buffer crosses the slow level, which is why NCCL and multislice TPU training reduce this
way (The Scaling Book, "How to Think About TPUs", multislice: ICI reduce-scatter, DCN
all-reduce, ICI all-gather).

The three phases run one after the other. :func:`collectives.transforms.pipelined` overlaps
them segment by segment, so that a long buffer costs about the slower level instead of the
sum (the chapter shows both with :func:`collectives.time`). This is the reduce-scatter /
all-reduce / all-gather form; NCCL's own schedules (rings that cross nodes through the rails,
a Tree that chains the GPUs of a node) are in :mod:`collectives.algorithms.nccl`.
"""

from __future__ import annotations

import numpy as np

from ..errors import ScheduleError
from ..schedule import Schedule, compose, schedule_arg
from ..transforms import dual, embed
from . import ring
from .checks import rank_count

__all__ = [
    "hierarchical_all_reduce",
    "two_level_ring_all_reduce",
    "multislice_all_reduce",
    "hierarchical_all_gather",
    "hierarchical_reduce_scatter",
    "hierarchical_all_to_all",
]


def _check_part(schedule, collective, what):
    schedule = schedule_arg(schedule, what)
    if schedule.collective != collective:
        raise ScheduleError(f"{what} must compute {collective}, not {schedule.collective}")
    if schedule.n_groups != 1 or schedule.n_switches or schedule.n_scratch:
        raise ScheduleError(
            f"{what} must be a plain collective over one group of ranks, with "
            "no switch participants or scratch slots"
        )
    return schedule


def hierarchical_all_reduce(
    inner_reduce_scatter: Schedule,
    outer_all_reduce: Schedule,
    inner_all_gather: Schedule | None = None,
    *,
    name: str = "hierarchical_all_reduce",
) -> Schedule:
    """All-reduce over ``N * g`` ranks from an inner reduce-scatter over ``g`` ranks (each
    node), an outer all-reduce over ``N`` ranks (each rail) and an inner all-gather (default:
    the dual of the reduce-scatter).

    Chunks: the buffer is cut into ``C_in * C_out`` slots, ``C_in`` and ``C_out`` the inner
    and outer schedules' chunk counts; inner chunk ``c`` is slots ``[c * C_out, (c+1) * C_out)``
    and outer chunk ``j`` of rail ``p`` is slot ``j`` of every inner chunk of shard ``p``.
    """
    rs = _check_part(inner_reduce_scatter, "reduce_scatter", "inner_reduce_scatter")
    ar = _check_part(outer_all_reduce, "all_reduce", "outer_all_reduce")
    ag = (
        dual(rs)
        if inner_all_gather is None
        else _check_part(inner_all_gather, "all_gather", "inner_all_gather")
    )
    if ag.n_ranks != rs.n_ranks or ag.n_chunks != rs.n_chunks:
        raise ScheduleError(
            "inner_all_gather must use the ranks and chunks of inner_reduce_scatter"
        )
    g, n_nodes = rs.n_ranks, ar.n_ranks
    c_in, c_out = rs.n_chunks, ar.n_chunks
    k = c_in // g  # inner chunks in one shard
    n, n_chunks = n_nodes * g, c_in * c_out
    nodes = np.arange(n).reshape(n_nodes, g)  # row i: the ranks of node i
    rails = nodes.T  # row p: local rank p of every node
    inner = np.arange(n_chunks).reshape(c_in, c_out)  # inner chunk c -> its C_out slots

    def inner_blocks():
        return np.broadcast_to(inner, (n_nodes, c_in, c_out))

    def outer_blocks():
        # rail p, outer chunk j -> slot j of each inner chunk of shard p (k slots)
        shard = inner.reshape(g, k, c_out)  # [p, a, j]
        return shard.transpose(0, 2, 1)  # [p, j, a]

    def stage(small, groups, blocks, length):
        return embed(
            small,
            groups,
            blocks,
            collective="all_reduce",
            n_ranks=n,
            n_chunks=n_chunks,
            block_length=length,
        )

    result = compose(
        stage(rs, nodes, inner_blocks, c_out),
        stage(ar, rails, outer_blocks, k),
        collective="all_reduce",
    )
    result = compose(result, stage(ag, nodes, inner_blocks, c_out), collective="all_reduce")
    return result.renamed(name)


def two_level_ring_all_reduce(
    n_nodes: int, gpus_per_node: int, *, bidirectional: bool = False
) -> Schedule:
    """The hierarchical all-reduce with rings at both levels: a ring reduce-scatter and
    all-gather inside every node (NVLink), a ring all-reduce across the nodes of every rail
    (one NIC per GPU). ``bidirectional``: both directions of every ring."""
    n_nodes, g = rank_count(n_nodes), rank_count(gpus_per_node)
    if bidirectional:
        inner = ring.bidirectional_ring_reduce_scatter(g)
        outer = ring.bidirectional_ring_all_reduce(n_nodes)
    else:
        inner, outer = ring.ring_reduce_scatter(g), ring.ring_all_reduce(n_nodes)
    return hierarchical_all_reduce(inner, outer, name="two_level_ring_all_reduce")


def multislice_all_reduce(
    slice_shape,
    n_slices: int,
    *,
    wraparound: bool | tuple[bool, ...] = True,
    concurrent: bool = True,
) -> Schedule:
    """All-reduce over ``n_slices`` TPU slices of ``slice_shape`` joined by the data-center
    network, as multislice training reduces gradients (The Scaling Book, "How to Think About
    TPUs", 2026-07): a reduce-scatter over the slice's ICI torus, a ring all-reduce over DCN
    among the chips with the same position in every slice (1/chips of the buffer each), and
    the ICI all-gather. ``wraparound``: the slice's (one bool, or one per axis, as
    :func:`collectives.hardware.tpu_wraparound` gives; chains where an axis does not wrap).
    ``concurrent``: the ICI phases use every axis at once (The Scaling Book's
    V / (W x axes)); otherwise one axis after another. Ranks ``slice * chips + chip``, as in
    ``cl.hardware.preset(name, shape=slice_shape, slices=n_slices)``."""
    from .torus import torus_all_gather, torus_reduce_scatter

    rs = torus_reduce_scatter(slice_shape, concurrent=concurrent, wraparound=wraparound)
    ag = torus_all_gather(slice_shape, concurrent=concurrent, wraparound=wraparound)
    return hierarchical_all_reduce(
        rs, ring.ring_all_reduce(rank_count(n_slices)), ag, name="multislice_all_reduce"
    )


def _gather_layout(outer, inner):
    """Chunk layout of the two-level all-gather of ``N * g`` ranks: part ``r`` (rank r's shard)
    has ``u = k_out * k_in`` slots; outer chunk ``(j, b)`` of rail ``p`` is sub-block ``b`` of
    part ``j*g + p``; inner shard ``q`` is parts ``{j*g + q}``, split into ``k_in`` chunks."""
    n_nodes, g = outer.n_ranks, inner.n_ranks
    k_out, k_in = outer.n_chunks // n_nodes, inner.n_chunks // g
    u = k_out * k_in
    parts = np.arange(n_nodes * g * u).reshape(n_nodes, g, u)  # [node j, local p, slot]

    def outer_blocks():
        # rail p, outer slot j*k_out + b -> part (j, p), slots [b*k_in, (b+1)*k_in)
        blocks = parts.reshape(n_nodes, g, k_out, k_in).transpose(1, 0, 2, 3)
        return blocks.reshape(g, n_nodes * k_out, k_in)

    def inner_blocks():
        # inner slot q*k_in + a -> slots a*N*k_out ... of the parts {(j, q)}, j-major
        shard = parts.transpose(1, 0, 2).reshape(g, k_in, n_nodes * k_out)
        return np.broadcast_to(
            shard.reshape(g * k_in, n_nodes * k_out), (n_nodes, g * k_in, n_nodes * k_out)
        )

    return n_nodes * g, n_nodes * g * u, outer_blocks, inner_blocks, k_in, n_nodes * k_out


def hierarchical_all_gather(
    outer_all_gather: Schedule, inner_all_gather: Schedule, *, name: str = "hierarchical_all_gather"
) -> Schedule:
    """All-gather over ``N * g`` ranks (rank ``node * g + local``): ``outer_all_gather`` (over
    ``N`` ranks) along every rail first, so that only ``1/g`` of the result crosses the
    slow level, then ``inner_all_gather`` (over ``g`` ranks) inside every node."""
    outer = _check_part(outer_all_gather, "all_gather", "outer_all_gather")
    inner = _check_part(inner_all_gather, "all_gather", "inner_all_gather")
    n_nodes, g = outer.n_ranks, inner.n_ranks
    n, n_chunks, outer_blocks, inner_blocks, l_out, l_in = _gather_layout(outer, inner)
    nodes = np.arange(n).reshape(n_nodes, g)
    first = embed(
        outer,
        nodes.T,
        outer_blocks,
        collective="all_gather",
        n_ranks=n,
        n_chunks=n_chunks,
        block_length=l_out,
    )
    second = embed(
        inner,
        nodes,
        inner_blocks,
        collective="all_gather",
        n_ranks=n,
        n_chunks=n_chunks,
        block_length=l_in,
    )
    return compose(first, second, collective="all_gather", name=name)


def hierarchical_reduce_scatter(
    inner_reduce_scatter: Schedule,
    outer_reduce_scatter: Schedule,
    *,
    name: str = "hierarchical_reduce_scatter",
) -> Schedule:
    """Reduce-scatter over ``N * g`` ranks: ``inner_reduce_scatter`` inside every node first
    (NVLink carries the whole buffer), then ``outer_reduce_scatter`` along every rail on the
    ``1/g`` each rank keeps: the dual of :func:`hierarchical_all_gather`."""
    inner = _check_part(inner_reduce_scatter, "reduce_scatter", "inner_reduce_scatter")
    outer = _check_part(outer_reduce_scatter, "reduce_scatter", "outer_reduce_scatter")
    return dual(hierarchical_all_gather(dual(outer), dual(inner)), name=name)


def hierarchical_all_to_all(n_nodes: int, gpus_per_node: int, *, line: str = "direct") -> Schedule:
    """All-to-all over ``N * g`` ranks: a 1-D all-to-all inside every node (rank ``p`` hands
    local rank ``q`` every part bound for a rank with local index ``q``), then one along every
    rail (each part reaches its node). ``line``: the 1-D algorithm at both levels ("direct",
    "ring" or "bidirectional_ring"). It is the torus all-to-all of shape ``(N, g)`` with the
    local axis first (:func:`collectives.algorithms.torus_all_to_all`)."""
    from .torus import torus_all_to_all

    n_nodes, g = rank_count(n_nodes), rank_count(gpus_per_node)
    return torus_all_to_all((n_nodes, g), axes=(1, 0), line=line).renamed("hierarchical_all_to_all")
