"""Transforms that make new Schedules from old ones, so each algorithm is written once.

* :func:`dual`: reverse a schedule and swap copies for reductions. The dual of an
  all-gather is a reduce-scatter, of a broadcast a reduce (FSDP's forward all-gather and
  backward reduce-scatter are duals).
* :func:`pipelined`: cut every chunk into ``k`` segments and start segment ``j`` one step
  after segment ``j - 1``, so consecutive steps overlap.
* :func:`parallel`: run schedules on disjoint slots at the same time (step i of each
  together).
* :func:`embed`: run a small schedule on groups of ranks of a bigger one (every line of a
  torus, every node of a cluster), its chunks standing for blocks of the big buffer.

:func:`collectives.compose` (sequence) lives with the Schedule. Taught in the chapters on
reduce-scatter (duality), all-reduce (pipelining) and the torus algorithms (embedding).
"""

import numpy as np

from .errors import ScheduleError
from .schedule import Schedule

__all__ = ["dual", "pipelined", "parallel", "embed"]

_DUALS = {"all_gather": "reduce_scatter", "reduce_scatter": "all_gather",
          "broadcast": "reduce", "reduce": "broadcast", "all_reduce": "all_reduce",
          "all_to_all": "all_to_all", "all_to_all_v": "all_to_all_v"}


def dual(schedule, *, name=None):
    """The schedule run backwards with every transfer reversed.

    Copies become reductions and reductions copies, except in an all-to-all, which only
    moves data (its dual is the inverse permutation, again an all-to-all). A reduction
    that would land in a scratch slot still empty at that point becomes a copy. The dual
    of a correct all-gather in which every rank receives every chunk once is a correct
    reduce-scatter (and vice versa); check with :func:`collectives.verify`. The dual of a
    variable all-to-all (MoE dispatch) is the return trip (MoE combine), with the counts
    transposed.
    """
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"dual() takes a Schedule, got {type(schedule).__name__}")
    collective = _DUALS[schedule.collective]
    order = np.concatenate([np.arange(schedule.step_starts[k], schedule.step_starts[k + 1])
                            for k in reversed(range(schedule.n_steps))] or [np.zeros(0, int)])
    order = order.astype(np.int64)
    step = (schedule.n_steps - 1 - schedule.step_of_transfer)[order]
    src, dst = schedule.dst[order], schedule.src[order]
    src_chunk, dst_chunk = schedule.dst_chunk[order], schedule.src_chunk[order]
    if collective in ("all_to_all", "all_to_all_v"):
        reduce = np.zeros(len(order), dtype=bool)
    else:
        reduce = ~schedule.reduce[order]
        # scratch slots start empty: the first write into each must be a copy
        scratch = dst_chunk >= schedule.n_chunks
        if scratch.any():
            key = dst * schedule.n_slots + dst_chunk
            idx = np.flatnonzero(scratch)
            _, first = np.unique(key[idx], return_index=True)
            reduce[idx[first]] = False
    return Schedule.from_arrays(collective, schedule.n_ranks, schedule.n_chunks, step, src, dst,
                                src_chunk, dst_chunk, reduce, n_steps=schedule.n_steps,
                                root=schedule.root, n_scratch=schedule.n_scratch,
                                name=name or f"dual({schedule.name})",
                                counts=None if schedule.counts is None else schedule.counts.T)


def pipelined(schedule, k, *, name=None):
    """Cut every chunk into ``k`` segments and pipeline them: segment ``j`` runs step ``s``
    of ``schedule`` at step ``s + j``. ``n_steps + k - 1`` steps, each moving 1/k of the
    bytes per transfer; segments never share a slot, so the result is correct whenever
    ``schedule`` is. Segment ``j`` of chunk ``c`` is slot ``c * k + j``.
    """
    if not isinstance(schedule, Schedule):
        raise ScheduleError(f"pipelined() takes a Schedule, got {type(schedule).__name__}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ScheduleError(f"k (number of pipeline segments) must be an integer >= 1, got {k!r}")
    k = int(k)
    t = schedule.n_transfers
    seg = np.repeat(np.arange(k), t)
    base = np.tile(np.arange(t), k)
    step = schedule.step_of_transfer[base] + seg
    order = np.argsort(step, kind="stable")
    seg, base, step = seg[order], base[order], step[order]

    def slot(chunks):
        return chunks[base] * k + seg

    return Schedule.from_arrays(
        schedule.collective, schedule.n_ranks, schedule.n_chunks * k, step,
        schedule.src[base], schedule.dst[base], slot(schedule.src_chunk),
        slot(schedule.dst_chunk), schedule.reduce[base],
        n_steps=schedule.n_steps + k - 1 if schedule.n_steps else 0, root=schedule.root,
        n_scratch=schedule.n_scratch * k, name=name or f"pipelined({schedule.name}, {k})",
        counts=None if schedule.counts is None else schedule.counts * k)


def parallel(*schedules, collective=None, name=None):
    """Run several schedules at once, step ``i`` of each in step ``i`` of the result.

    They must agree on ranks, chunks and collective (unless ``collective`` is given) and
    should work on disjoint slots (e.g. two halves of the buffer); a slot written by two of
    them in one step is refused by the Schedule's own checks.
    """
    if not schedules:
        raise ScheduleError("parallel() needs at least one schedule")
    first = schedules[0]
    for s in schedules[1:]:
        if (s.n_ranks, s.n_chunks) != (first.n_ranks, first.n_chunks):
            raise ScheduleError(
                f"parallel schedules must share n_ranks and n_chunks: ({first.n_ranks}, "
                f"{first.n_chunks}) vs ({s.n_ranks}, {s.n_chunks})")
        if collective is None and s.collective != first.collective:
            raise ScheduleError(
                f"parallel schedules compute {first.collective} and {s.collective}; pass "
                "collective=... to say what they compute together")
    fields = ("src", "dst", "src_chunk", "dst_chunk", "reduce")
    cat = {f: np.concatenate([getattr(s, f) for s in schedules]) for f in fields}
    step = np.concatenate([s.step_of_transfer for s in schedules])
    order = np.argsort(step, kind="stable")
    return Schedule.from_arrays(
        collective or first.collective, first.n_ranks, first.n_chunks, step[order],
        *(cat[f][order] for f in fields), n_steps=max(s.n_steps for s in schedules),
        root=first.root, n_scratch=max(s.n_scratch for s in schedules),
        name=name or " | ".join(s.name for s in schedules), counts=first.counts)


def embed(schedule, groups, blocks, *, collective, n_ranks, n_chunks, n_scratch=0, root=None,
          name=None, counts=None):
    """Run ``schedule`` (over ``m`` ranks) on every group of a bigger schedule at once.

    ``groups``: int array (G, m), the big ranks playing small ranks 0..m-1 in each group.
    ``blocks``: int array (G, small slots, L): small slot c of group g stands for the L big
    slots ``blocks[g, c]``; a small transfer of slot a to slot b moves ``blocks[g, a, i]``
    to ``blocks[g, b, i]`` for every i. Steps are kept. The result's collective, size and
    root are given by the caller (an embedded stage is usually one part of an algorithm
    that :func:`collectives.compose` assembles).
    """
    groups = np.asarray(groups, dtype=np.int64)
    blocks = np.asarray(blocks, dtype=np.int64)
    if groups.ndim != 2 or groups.shape[1] != schedule.n_ranks:
        raise ScheduleError(
            f"groups must have shape (G, {schedule.n_ranks}), got {groups.shape}")
    if blocks.ndim != 3 or blocks.shape[:2] != (groups.shape[0], schedule.n_slots):
        raise ScheduleError(
            f"blocks must have shape ({groups.shape[0]}, {schedule.n_slots}, L), got {blocks.shape}")
    g_count, length = groups.shape[0], blocks.shape[2]
    t = np.arange(schedule.n_transfers)
    # every (transfer, group, block element), transfer-major so steps stay sorted
    ti, gi, li = (a.ravel() for a in np.meshgrid(t, np.arange(g_count), np.arange(length),
                                                 indexing="ij"))
    return Schedule.from_arrays(
        collective, n_ranks, n_chunks, schedule.step_of_transfer[ti],
        groups[gi, schedule.src[ti]], groups[gi, schedule.dst[ti]],
        blocks[gi, schedule.src_chunk[ti], li], blocks[gi, schedule.dst_chunk[ti], li],
        schedule.reduce[ti], n_steps=schedule.n_steps, root=root, n_scratch=n_scratch,
        name=name or f"embed({schedule.name})", counts=counts)
