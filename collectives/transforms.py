"""Transforms that make new Schedules from old ones, so each algorithm is written once.

* :func:`dual`: reverse a schedule and swap copies for reductions. The dual of an
  all-gather is a reduce-scatter, of a broadcast a reduce (FSDP's forward all-gather and
  backward reduce-scatter are duals).
* :func:`pipelined`: cut every chunk into ``n_segments`` segments and start segment ``j``
  one step after segment ``j - 1``, so consecutive steps overlap.
* :func:`parallel`: run schedules on disjoint slots at the same time (step i of each
  together).
* :func:`embed`: run a small schedule on groups of ranks of a bigger one (every line of a
  torus, every node of a cluster), its chunks standing for blocks of the big buffer.
* :func:`grouped`: run a collective inside every group of a partition of the ranks at once
  (a communicator split, a mesh axis): the result *is* a collective over groups.

Each transform also transforms the schedule's :class:`~collectives.traffic.Traffic`, so a
schedule built from regular parts is costed at any scale without listing its transfers;
the transfers are listed (and checked) when first needed.

:func:`collectives.compose` (sequence) lives with the Schedule. Taught in the chapters on
reduce-scatter (duality), all-reduce (pipelining) and the torus algorithms (embedding).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .errors import ScheduleError
from .schedule import Schedule, schedule_arg
from .semantics import collective_spec
from .validation import int_array, integer, renamed_arg

__all__ = ["dual", "pipelined", "parallel", "embed", "grouped"]

_FIELDS = ("src", "dst", "src_chunk", "dst_chunk", "reduce")


def _options(schedule, **changes):
    """The keyword options that carry a schedule's layout over to a derived one."""
    options = dict(
        root=schedule.root,
        n_scratch=schedule.n_scratch,
        counts=schedule.counts,
        peers=schedule.peers,
        groups=None if schedule.n_groups == 1 else schedule.groups,
        n_switches=schedule.n_switches,
        op=schedule.op,
    )
    options.update(changes)
    return options


def _build(collective, n_ranks, n_chunks, traffic, listing, eager, **options):
    """An explicit Schedule now (``eager``) or one listed on demand."""
    if eager:
        a = listing()
        return Schedule.from_arrays(
            collective,
            n_ranks,
            n_chunks,
            a["step"],
            a["src"],
            a["dst"],
            a["src_chunk"],
            a["dst_chunk"],
            a["reduce"],
            n_steps=traffic.n_steps,
            **options,
        )
    return Schedule.from_traffic(collective, n_ranks, n_chunks, traffic, listing, **options)


def dual(schedule: Schedule, *, name: str | None = None) -> Schedule:
    """The schedule run backwards with every transfer reversed.

    Copies become reductions and reductions copies, except in a collective that only moves
    data both ways (an all-to-all's dual is the inverse permutation, again an all-to-all).
    A reduction that would land in a scratch slot still empty at that point becomes a copy.
    The dual of a permute is the inverse permute (the backward pass of a pipeline stage).
    The dual of a correct all-gather in which every rank receives every chunk once is a
    correct reduce-scatter (and vice versa); check with :func:`collectives.verify`. The dual
    of a variable all-to-all (MoE dispatch) is the return trip (MoE combine), with the
    counts transposed.
    """
    schedule = schedule_arg(schedule, "dual()'s schedule")
    spec = collective_spec(schedule.collective)
    target = collective_spec(spec.dual)
    if schedule.n_switches and not target.reducing:
        raise ScheduleError(
            "the dual of an in-network reduction is not a schedule of switches "
            "that only copy; build the multicast directly"
        )

    def listing():
        a = schedule.transfer_arrays()
        step = schedule.n_steps - 1 - a["step"]
        order = np.argsort(step, kind="stable")  # steps reversed, each kept in order
        out = {
            "step": step[order],
            "src": a["dst"][order],
            "dst": a["src"][order],
            "src_chunk": a["dst_chunk"][order],
            "dst_chunk": a["src_chunk"][order],
        }
        if not target.reducing:
            out["reduce"] = np.zeros(len(order), dtype=bool)
            return out
        reduce = ~a["reduce"][order]
        # scratch slots start empty: the first write into each must be a copy
        scratch = out["dst_chunk"] >= schedule.n_chunks
        if scratch.any():
            key = out["dst"] * schedule.n_slots + out["dst_chunk"]
            idx = np.flatnonzero(scratch)
            _, first = np.unique(key[idx], return_index=True)
            reduce[idx[first]] = False
        out["reduce"] = reduce
        return out

    return _build(
        target.name,
        schedule.n_ranks,
        schedule.n_chunks,
        schedule.traffic.reversed(),
        listing,
        schedule.is_listed,
        **_options(
            schedule,
            name=name or f"dual({schedule.name})",
            counts=None if schedule.counts is None else schedule.counts.T,
            peers=None if schedule.peers is None else _inverse(schedule.peers),
        ),
    )


def _inverse(peers):
    """The permutation that undoes ``peers`` (-1 where nobody sends to that position)."""
    out = np.full(len(peers), -1, dtype=np.int64)
    src = np.flatnonzero(peers >= 0)
    out[peers[src]] = src
    return out


def pipelined(
    schedule: Schedule,
    n_segments: int | None = None,
    *,
    name: str | None = None,
    k: int | None = None,
) -> Schedule:
    """Cut every chunk into ``n_segments`` segments (``k`` below) and pipeline them: segment
    ``j`` runs step ``s`` of ``schedule`` at step ``s + j``. ``n_steps + k - 1`` steps, each
    moving 1/k of the bytes per transfer; segments never share a slot, so the result is
    correct whenever ``schedule`` is. Segment ``j`` of chunk ``c`` is slot ``c * k + j``.
    ``n_segments`` is the current name (the package's one spelling of a pipelining depth);
    the old keyword ``k`` is still accepted.
    """
    schedule = schedule_arg(schedule, "pipelined()'s schedule")
    k, what = renamed_arg(n_segments, None, k, "n_segments", "k", error=ScheduleError)
    if k is None:
        raise ScheduleError("pipelined() needs n_segments, the number of pipeline segments")
    k = integer(k, f"{what} (number of pipeline segments)", minimum=1, error=ScheduleError)

    def listing():
        a = schedule.transfer_arrays()
        t = len(a["src"])
        seg = np.repeat(np.arange(k), t)
        base = np.tile(np.arange(t), k)
        step = a["step"][base] + seg
        order = np.argsort(step, kind="stable")
        seg, base, step = seg[order], base[order], step[order]
        return {
            "step": step,
            "src": a["src"][base],
            "dst": a["dst"][base],
            "src_chunk": a["src_chunk"][base] * k + seg,
            "dst_chunk": a["dst_chunk"][base] * k + seg,
            "reduce": a["reduce"][base],
        }

    return _build(
        schedule.collective,
        schedule.n_ranks,
        schedule.n_chunks * k,
        schedule.traffic.pipelined(k),
        listing,
        schedule.is_listed,
        **_options(
            schedule,
            n_scratch=schedule.n_scratch * k,
            name=name or f"pipelined({schedule.name}, {k})",
            counts=None if schedule.counts is None else schedule.counts * k,
        ),
    )


def parallel(
    *schedules: Schedule, collective: str | None = None, name: str | None = None
) -> Schedule:
    """Run several schedules at once, step ``i`` of each in step ``i`` of the result.

    They must agree on ranks, chunks, groups and collective (unless ``collective`` is given)
    and should work on disjoint slots (e.g. two halves of the buffer); a slot written by two
    of them in one step is refused by the Schedule's own checks.
    """
    if not schedules:
        raise ScheduleError("parallel() needs at least one schedule")
    first = schedule_arg(schedules[0])
    for s in schedules[1:]:
        s = schedule_arg(s)
        if (s.n_ranks, s.n_chunks) != (first.n_ranks, first.n_chunks):
            raise ScheduleError(
                f"parallel schedules must share n_ranks and n_chunks: ({first.n_ranks}, "
                f"{first.n_chunks}) vs ({s.n_ranks}, {s.n_chunks})"
            )
        if not np.array_equal(s.groups, first.groups):
            raise ScheduleError("parallel schedules must run over the same groups")
        if collective is None and s.collective != first.collective:
            raise ScheduleError(
                f"parallel schedules compute {first.collective} and {s.collective}; pass "
                "collective=... to say what they compute together"
            )

    def listing():
        parts = [s.transfer_arrays() for s in schedules]
        cat = {f: np.concatenate([p[f] for p in parts]) for f in _FIELDS}
        step = np.concatenate([p["step"] for p in parts])
        order = np.argsort(step, kind="stable")
        out = {f: v[order] for f, v in cat.items()}
        out["step"] = step[order]
        return out

    traffic = first.traffic.together(*(s.traffic for s in schedules[1:]))
    return _build(
        collective or first.collective,
        first.n_ranks,
        first.n_chunks,
        traffic,
        listing,
        all(s.is_listed for s in schedules),
        **_options(
            first,
            n_scratch=max(s.n_scratch for s in schedules),
            n_switches=max(s.n_switches for s in schedules),
            name=name or " | ".join(s.name for s in schedules),
        ),
    )


def embed(
    schedule: Schedule,
    groups: ArrayLike,
    blocks: ArrayLike | Callable[[], ArrayLike],
    *,
    collective: str,
    n_ranks: int,
    n_chunks: int,
    n_scratch: int = 0,
    root: int | None = None,
    name: str | None = None,
    counts: ArrayLike | None = None,
    block_length: int | None = None,
) -> Schedule:
    """Run ``schedule`` (over ``m`` ranks) on every group of a bigger schedule at once.

    ``groups``: int array (G, m), the big ranks playing small ranks 0..m-1 in each group.
    ``blocks``: int array (G, small slots, L), or a function returning it (built only when
    the transfers are listed; then give ``block_length`` L): small slot c of group g stands
    for the L big slots ``blocks[g, c]``; a small transfer of slot a to slot b moves
    ``blocks[g, a, i]`` to ``blocks[g, b, i]`` for every i. Steps are kept. The result's
    collective, size and root are given by the caller (an embedded stage is usually one part
    of an algorithm that :func:`collectives.compose` assembles).
    """
    schedule = schedule_arg(schedule, "embed()'s schedule")
    groups = int_array(
        groups, "groups", shape=(None, schedule.n_ranks), minimum=0, error=ScheduleError
    )
    if schedule.n_switches:
        raise ScheduleError("embed() takes schedules without switch participants; use grouped()")
    if callable(blocks):
        length = integer(block_length, "block_length", minimum=1, error=ScheduleError)
        make_blocks = blocks
    else:
        fixed = int_array(blocks, "blocks", ndim=3, error=ScheduleError)
        if fixed.shape[:2] != (groups.shape[0], schedule.n_slots):
            raise ScheduleError(
                f"blocks must have shape ({groups.shape[0]}, {schedule.n_slots}, L), got "
                f"{fixed.shape}"
            )
        length = fixed.shape[2]

        def make_blocks():
            return fixed

    def listing():
        b = make_blocks()
        a = schedule.transfer_arrays()
        g_count = groups.shape[0]
        t = np.arange(len(a["src"]))
        # every (transfer, group, block element), transfer-major so steps stay sorted
        ti, gi, li = (
            x.ravel() for x in np.meshgrid(t, np.arange(g_count), np.arange(length), indexing="ij")
        )
        return {
            "step": a["step"][ti],
            "src": groups[gi, a["src"][ti]],
            "dst": groups[gi, a["dst"][ti]],
            "src_chunk": b[gi, a["src_chunk"][ti], li],
            "dst_chunk": b[gi, a["dst_chunk"][ti], li],
            "reduce": a["reduce"][ti],
        }

    return Schedule.from_traffic(
        collective,
        n_ranks,
        n_chunks,
        schedule.traffic.embedded(groups, length),
        listing,
        root=root,
        n_scratch=n_scratch,
        name=name or f"embed({schedule.name})",
        counts=counts,
        op=schedule.op,
    )


def grouped(schedule: Schedule, groups: ArrayLike, *, name: str | None = None) -> Schedule:
    """``schedule`` (a collective over ``m`` ranks) run inside every group at once.

    ``groups``: int array (G, m) partitioning ranks ``0 .. G*m-1``; row g lists the ranks
    that play positions 0..m-1 of group g (a mesh axis gives them:
    :meth:`collectives.mesh.Mesh.groups`). The result is a collective over groups: its
    ``nbytes`` is still the buffer one rank holds in its own group's collective. A schedule
    with switch participants gets its own switches in every group (switch s of group g is
    participant ``G*m + g*S + s``), as every node of a cluster has its own NVSwitch.
    """
    schedule = schedule_arg(schedule, "grouped()'s schedule")
    if schedule.n_groups != 1:
        raise ScheduleError("grouped() takes a schedule over one group of ranks")
    groups = int_array(
        groups, "groups", shape=(None, schedule.n_ranks), minimum=0, error=ScheduleError
    )
    g_count, m = groups.shape
    n = g_count * m
    s_count = schedule.n_switches
    switch_ids = n + np.arange(g_count * s_count).reshape(g_count, s_count)
    table = np.concatenate([groups, switch_ids], axis=1)  # (G, participants)

    def listing():
        a = schedule.transfer_arrays()
        t = np.arange(len(a["src"]))
        ti, gi = (x.ravel() for x in np.meshgrid(t, np.arange(g_count), indexing="ij"))
        return {
            "step": a["step"][ti],
            "src": table[gi, a["src"][ti]],
            "dst": table[gi, a["dst"][ti]],
            "src_chunk": a["src_chunk"][ti],
            "dst_chunk": a["dst_chunk"][ti],
            "reduce": a["reduce"][ti],
        }

    traffic = schedule.traffic.embedded(groups, 1, switch_ids)
    return Schedule.from_traffic(
        schedule.collective,
        n,
        schedule.n_chunks,
        traffic,
        listing,
        root=schedule.root,
        n_scratch=schedule.n_scratch,
        name=name or schedule.name,
        counts=schedule.counts,
        peers=schedule.peers,
        groups=groups,
        n_switches=g_count * s_count,
        op=schedule.op,
    )
