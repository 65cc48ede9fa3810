"""Run a Schedule on data (``simulate``) or on symbols (``verify``).

``simulate`` moves real numbers, vectorised over all transfers of a step; it is how a
chapter shows what a collective does to arrays. ``verify`` replays the schedule on
*symbols*: each slot holds a label (which logical chunk) and the exact set of ranks whose
contributions were summed into it, kept as bitsets. It is independent of floating point
and names the first step, rank and chunk that goes wrong. Both follow the step rules of
:mod:`collectives.schedule` (read-before-write; one copy or several reduces per slot).
Taught in chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Optional, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollectivesError, ScheduleError
from .schedule import schedule_arg
from .semantics import REDUCTION_OPS, Collective, collective_spec
from .validation import input_rows

if TYPE_CHECKING:
    from .schedule import Schedule

__all__ = [
    "simulate",
    "verify",
    "trace",
    "SymbolicState",
    "VERIFY_MEMORY_LIMIT",
    "INVALID",
    "describe_content",
    "step_rows",
]

#: bytes of symbolic state ``verify`` may allocate (n_ranks * n_slots * ceil(n_ranks/64) * 8)
VERIFY_MEMORY_LIMIT = 2 * 1024**3
#: the label of a slot that holds a sum of different chunks (only in a tolerant trace)
INVALID = -2

_Value = TypeVar("_Value", bound=np.generic)

#: one step of :func:`step_rows`: (step, source rows, destination rows, reduce flags)
_StepRows = tuple[int, NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]


def _check_schedule(schedule: object) -> Collective:
    return collective_spec(schedule_arg(schedule).collective)


def simulate(schedule: Schedule, inputs: ArrayLike) -> NDArray[np.generic]:
    """Run ``schedule`` on numeric ``inputs`` and return the outputs.

    ``inputs`` has one row per rank (array-like of shape ``(n_ranks, length)``); the
    rows' meaning and the outputs' layout follow NCCL (see :mod:`collectives.semantics`):
    all-gather takes each rank's shard and returns every shard in rank order; reduce-
    scatter takes the full buffer and returns the rank's reduced part; all-reduce returns
    the summed buffer; all-to-all returns the parts received, in source-rank order.
    Reduction is the schedule's ``op`` (addition or maximum) in the input dtype. Raises
    :class:`ScheduleError` if a transfer reads a slot that holds nothing yet.
    """
    spec = _check_schedule(schedule)
    data = input_rows(inputs, schedule.n_ranks)
    buffer, filled = spec.place_inputs(
        data,
        schedule.groups,
        schedule.n_chunks,
        schedule.n_slots,
        schedule.root,
        schedule.n_participants,
    )
    ufunc = REDUCTION_OPS[schedule.op]
    buffer[schedule.n_ranks :] = _identity(ufunc, buffer.dtype)  # switches' accumulators
    # rows of a flat (n_ranks * n_slots, chunk_len) view: one fancy index per step
    rows = buffer.reshape(-1, buffer.shape[-1])
    filled = filled.reshape(-1)
    for k, src, dst, reduce in step_rows(schedule, filled):
        values = rows[src]  # every read happens before any write
        shared = schedule.shared_reduce_steps[k]
        if reduce[0] and reduce.all():
            _combine(ufunc, rows, dst, values, shared)
        elif not reduce.any():
            rows[dst] = values
        else:
            copy = ~reduce
            rows[dst[copy]] = values[copy]
            _combine(ufunc, rows, dst[reduce], values[reduce], shared)
        filled[dst] = True
    return spec.take_outputs(buffer, schedule.groups, schedule.n_chunks)


def step_rows(schedule: Schedule, filled: NDArray[np.bool_]) -> Iterator[_StepRows]:
    """The steps of ``schedule`` that move data, as ``(step, src rows, dst rows, reduce)``
    in the flat ``participant * n_slots + slot`` view of the buffers. Before yielding a step
    it checks that every source row holds data (``filled``, a flat bool array the caller
    updates as it writes) and raises ScheduleError naming the first transfer that reads an
    empty slot. The numeric replays (:func:`simulate`, the FP8 all-reduce) share it."""
    src_row = schedule.src * schedule.n_slots + schedule.src_chunk
    dst_row = schedule.dst * schedule.n_slots + schedule.dst_chunk
    starts, reduce_all = schedule.step_starts, schedule.reduce
    for k in range(schedule.n_steps):
        a, b = starts[k], starts[k + 1]
        if a == b:
            continue
        src = src_row[a:b]
        empty = ~filled[src]
        if empty.any():
            i = a + int(np.flatnonzero(empty)[0])
            step, text = schedule.describe_transfer(i)
            raise ScheduleError(
                f"step {step}, {text}: {schedule.where(schedule.src[i])} chunk "
                f"{schedule.src_chunk[i]} holds nothing yet",
                step=step,
                rank=int(schedule.src[i]),
                chunk=int(schedule.src_chunk[i]),
                holds="nothing",
            )
        yield k, src, dst_row[a:b], reduce_all[a:b]


def _identity(ufunc: np.ufunc, dtype: np.dtype[Any]) -> float:
    """The value a switch's accumulator starts from: 0 for a sum, the lowest value for max."""
    if ufunc is np.add or np.issubdtype(dtype, np.bool_):
        return 0
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _combine(
    ufunc: np.ufunc,
    rows: NDArray[_Value],
    dst: NDArray[np.int64],
    values: NDArray[_Value],
    shared_targets: bool | np.bool_,
) -> None:
    """rows[dst] = ufunc(rows[dst], values), combining repeated targets when a step has them."""
    if shared_targets:
        ufunc.at(rows, dst, values)
    else:
        ufunc(rows[dst], values, out=values)
        rows[dst] = values


# ---- symbolic replay ----------------------------------------------------------------------


def _ranks_of(bits: NDArray[np.uint64]) -> list[int]:
    """Rank numbers set in one bitset row (uint64 words, little-endian)."""
    as_bytes = bits.astype("<u8").view(np.uint8)
    ranks: list[int] = np.flatnonzero(np.unpackbits(as_bytes, bitorder="little")).tolist()
    return ranks


def describe_content(
    label: int,
    ranks: Sequence[int],
    n_ranks: int,
    group_size: int | None = None,
    verb: str = "summed",
) -> str:
    """A slot's content in words, from its label and the ranks combined into it (a rank
    listed twice was counted twice). ``group_size``: for a collective over groups, where
    "all ranks" means all ranks of one group."""
    if label == INVALID:
        return (
            f"an invalid sum of different chunks (from ranks "
            f"{', '.join(map(str, sorted(set(ranks))))})"
        )
    if label < 0:
        return "nothing"
    distinct = sorted(set(ranks))
    twice = [r for r in distinct if list(ranks).count(r) > 1] if len(distinct) < len(ranks) else []
    if len(ranks) == 1:
        return f"chunk {label} of rank {ranks[0]}"
    shown = ", ".join(map(str, distinct[:12])) + (", ..." if len(distinct) > 12 else "")
    if group_size is None and len(distinct) == n_ranks:
        text = f"chunk {label} {verb} over all {n_ranks} ranks"
    elif group_size is not None and len(distinct) == group_size:
        text = f"chunk {label} {verb} over the {group_size} ranks of a group ({shown})"
    else:
        text = (
            f"chunk {label} {verb} over {len(distinct)} of {group_size or n_ranks} ranks ({shown})"
        )
    if twice:
        text += (
            f", with rank{'s' if len(twice) > 1 else ''} "
            f"{', '.join(map(str, twice))} counted more than once"
        )
    return text


class SymbolicState:
    """Every participant's buffer as symbols: ``label[r, c]`` (the logical chunk, -1 if
    empty, :data:`INVALID` for a sum of different chunks) and the ranks whose contributions
    it holds, in one of three forms: ``bits[r, c]``, a bitset of ranks (reducing
    collectives); ``owner[r, c]``, the one rank (collectives that only move data: a slot
    there never holds more than one contribution); ``times[r, c, q]``, how many times rank
    q's contribution was combined in (a tolerant :func:`trace`). ``group_size`` is set for a
    collective over groups."""

    label: NDArray[np.int64]
    bits: Optional[NDArray[np.uint64]]
    owner: Optional[NDArray[np.int64]]
    times: Optional[NDArray[np.int64]]
    group_size: Optional[int]

    def __init__(
        self,
        label: NDArray[np.int64],
        bits: Optional[NDArray[np.uint64]] = None,
        owner: Optional[NDArray[np.int64]] = None,
        times: Optional[NDArray[np.int64]] = None,
        *,
        n_ranks: Optional[int] = None,
        group_size: Optional[int] = None,
    ) -> None:
        self.label, self.bits, self.owner, self.times = label, bits, owner, times
        self._n_ranks = int(label.shape[0]) if n_ranks is None else n_ranks
        self.group_size = group_size

    @property
    def n_ranks(self) -> int:
        return self._n_ranks

    def contributors(self, rank: int, chunk: int) -> list[int]:
        """The ranks whose contributions slot ``chunk`` of ``rank`` holds (a rank counted
        twice is listed twice)."""
        if self.label[rank, chunk] == -1:
            return []
        if self.times is not None:
            counted: list[int] = np.repeat(
                np.arange(self.times.shape[-1]), self.times[rank, chunk]
            ).tolist()
            return counted
        if self.bits is not None:
            return _ranks_of(self.bits[rank, chunk])
        return [int(self._owners()[rank, chunk])]

    def _owners(self) -> NDArray[np.int64]:
        """``owner``: the state of a collective that only moves data (a CollectivesError for
        a state built with none of ``bits``, ``owner`` and ``times``)."""
        if self.owner is None:
            raise CollectivesError(
                "this SymbolicState records no contributions; build it with bits, owner or times"
            )
        return self.owner

    def counts(self) -> NDArray[np.int64]:
        """Number of contributions per (rank, slot): 0 for an empty slot."""
        if self.times is not None:
            counted: NDArray[np.int64] = self.times.sum(axis=-1) * (self.label != -1)
        elif self.bits is None:
            counted = (self.label >= 0).astype(np.int64)
        else:
            counted = np.bitwise_count(self.bits).sum(axis=-1, dtype=np.int64)
        return counted

    def describe(self, rank: int, chunk: int) -> str:
        """Plain words for a slot's content, as used in error messages."""
        return describe_content(
            int(self.label[rank, chunk]),
            self.contributors(rank, chunk),
            self.n_ranks,
            self.group_size,
        )

    def copy(self) -> SymbolicState:
        return SymbolicState(
            self.label.copy(),
            _copy(self.bits),
            _copy(self.owner),
            _copy(self.times),
            n_ranks=self._n_ranks,
            group_size=self.group_size,
        )


def _copy(a: Optional[NDArray[_Value]]) -> Optional[NDArray[_Value]]:
    return None if a is None else a.copy()


def _set_bit(
    bits: NDArray[np.uint64], where: tuple[NDArray[np.int64], ...], ranks: NDArray[np.int64]
) -> None:
    """Set bit ``ranks[i]`` in the bitset ``bits[where[0][i], ...]`` (rows of uint64 words),
    writing only the one word each bit lives in."""
    word = (*where, ranks // 64)
    bits[word] = np.left_shift(np.uint64(1), (ranks % 64).astype(np.uint64))


def _bitsets(ranks: NDArray[np.int64], words: int) -> NDArray[np.uint64]:
    """One bitset row (uint64 words) per entry of ``ranks``."""
    bits = np.zeros((len(ranks), words), dtype=np.uint64)
    _set_bit(bits, (np.arange(len(ranks)),), ranks)
    return bits


def _symbolic_steps(schedule: Schedule) -> Iterator[tuple[int, SymbolicState, NDArray[np.int64]]]:
    """Replay ``schedule`` on symbols, yielding ``(step, state, last_write)`` after each step.

    The arrays are updated in place between yields. Raises ScheduleError at the first
    transfer that reads an empty slot, mixes chunks or counts a contribution twice.
    """
    spec = _check_schedule(schedule)
    _ = schedule.step_starts  # lists the transfers (or says it cannot) first
    n, slots = schedule.n_participants, schedule.n_slots
    words = (schedule.n_ranks + 63) // 64 if spec.reducing else 0
    need = n * slots * (words + 3) * 8
    if need > VERIFY_MEMORY_LIMIT:
        raise CollectivesError(
            f"verify would need {need / 2**30:.1f} GiB of symbolic state for {n} ranks x "
            f"{slots} slots; verify a smaller instance of the same algorithm"
        )
    label, owner = spec.initial(schedule.groups, schedule.n_chunks, slots, schedule.root, n)
    content: NDArray[np.uint64] | NDArray[np.int64]  # bitsets of ranks, or the one owner
    if spec.reducing:
        bits = np.zeros((n, slots, words), dtype=np.uint64)
        r_idx, c_idx = np.nonzero(owner >= 0)
        _set_bit(bits, (r_idx, c_idx), owner[r_idx, c_idx])
        state = SymbolicState(
            label, bits=bits, n_ranks=schedule.n_ranks, group_size=_group_size(schedule)
        )
        content = bits
    else:
        state = SymbolicState(
            label, owner=owner, n_ranks=schedule.n_ranks, group_size=_group_size(schedule)
        )
        content = owner
    last_write = np.full((n, slots), -1, dtype=np.int64)
    yield -1, state, last_write

    s, d, sc, dc, red = (
        schedule.src,
        schedule.dst,
        schedule.src_chunk,
        schedule.dst_chunk,
        schedule.reduce,
    )
    starts = schedule.step_starts.tolist()
    for k in range(schedule.n_steps):
        a, b = starts[k], starts[k + 1]
        if a == b:
            yield k, state, last_write
            continue
        src, dst, src_chunk, dst_chunk, reduce = s[a:b], d[a:b], sc[a:b], dc[a:b], red[a:b]
        src_label = label[src, src_chunk]
        empty = src_label < 0
        if empty.any():
            i = a + int(np.flatnonzero(empty)[0])
            step, text = schedule.describe_transfer(i)
            raise ScheduleError(
                f"step {step}, {text}: {schedule.where(s[i])} chunk {sc[i]} holds nothing yet",
                step=step,
                rank=int(s[i]),
                chunk=int(sc[i]),
                holds="nothing",
                group=_group(schedule, s[i]),
            )
        copy = ~reduce
        copied = content[src[copy], src_chunk[copy]]  # every read happens before any write
        if reduce.any():  # only in a reducing collective: ``bits`` is set
            _symbolic_reduce(schedule, k, a, reduce, label, bits, src_label, src, src_chunk)
        label[dst[copy], dst_chunk[copy]] = src_label[copy]
        content[dst[copy], dst_chunk[copy]] = copied
        last_write[dst, dst_chunk] = k
        yield k, state, last_write


def _group(schedule: Schedule, rank: int) -> Optional[int]:
    """The group of ``rank`` for error attributes (None for a switch or a single group)."""
    if rank >= schedule.n_ranks or schedule.n_groups == 1:
        return None
    return int(schedule.group_of[rank])


def trace(schedule: Schedule, *, stop_at_error: bool = True) -> list[SymbolicState]:
    """Symbolic states before step 0 and after every step: a list of ``n_steps + 1``
    :class:`SymbolicState` copies, for figures and step-by-step feedback.

    With ``stop_at_error`` (the default) it raises ScheduleError like :func:`verify` for a
    transfer that can never be right, but does not check the final result. With
    ``stop_at_error=False`` it never stops: a slot keeps *how many times* each rank's
    contribution was combined into it (so "rank 2 counted twice" can be said) and a sum of
    different chunks is marked invalid, so that a wrong schedule can be compared step by step
    with a right one; the states then word slots exactly as :func:`verify` does.
    """
    if stop_at_error:
        return [st.copy() for _, st, _ in _symbolic_steps(schedule)]
    return _tolerant_trace(schedule)


def _tolerant_trace(schedule: Schedule) -> list[SymbolicState]:
    spec = _check_schedule(schedule)
    n, slots = schedule.n_participants, schedule.n_slots
    label, owner = spec.initial(schedule.groups, schedule.n_chunks, slots, schedule.root, n)
    times = np.zeros((n, slots, schedule.n_ranks), dtype=np.int64)
    r_idx, c_idx = np.nonzero(owner >= 0)
    times[r_idx, c_idx, owner[r_idx, c_idx]] = 1
    states = [
        SymbolicState(
            label.copy(),
            times=times.copy(),
            n_ranks=schedule.n_ranks,
            group_size=_group_size(schedule),
        )
    ]
    for k in range(schedule.n_steps):
        a, b = schedule.step_starts[k], schedule.step_starts[k + 1]
        src, dst = schedule.src[a:b], schedule.dst[a:b]
        sc, dc, reduce = schedule.src_chunk[a:b], schedule.dst_chunk[a:b], schedule.reduce[a:b]
        read_label, read_times = label[src, sc], times[src, sc]  # reads before writes
        copy = ~reduce
        label[dst[copy], dc[copy]] = read_label[copy]
        times[dst[copy], dc[copy]] = read_times[copy]
        for i in np.flatnonzero(reduce & (read_label != -1)):  # small instances only
            t_label = label[dst[i], dc[i]]
            if t_label == -1:
                label[dst[i], dc[i]] = read_label[i]
            elif t_label != read_label[i]:
                label[dst[i], dc[i]] = INVALID
            times[dst[i], dc[i]] += read_times[i]
        states.append(
            SymbolicState(
                label.copy(),
                times=times.copy(),
                n_ranks=schedule.n_ranks,
                group_size=_group_size(schedule),
            )
        )
    return states


def verify(schedule: Schedule) -> None:
    """Check symbolically that ``schedule`` computes its collective; return ``None``.

    Raises :class:`ScheduleError` naming the first problem: a transfer that reads an
    empty slot, a reduce of two different chunks, a contribution counted twice (each at
    the step it happens; a maximum may see a contribution twice), or, after the last step,
    the first rank and chunk whose content differs from the collective's result, with what
    it holds and what it should hold. For a collective over groups, messages also name the
    rank's group and position. The symbolic state takes ``participants * n_slots * 8`` bytes
    for collectives that only move data, and ``participants * n_slots * ceil(n_ranks / 64)
    * 8`` (a bitset of ranks per slot) for reductions.
    """
    spec = _check_schedule(schedule)
    # replay to the end: the state after the last step is the one checked
    _, state, last_write = deque(_symbolic_steps(schedule), maxlen=1)[0]
    ranks, chunk_slots, want_label, want_owner = spec.expected(
        schedule.groups, schedule.n_chunks, schedule.root, schedule.counts, schedule.peers
    )
    got_label = state.label[ranks, chunk_slots]
    if state.bits is None:  # one contribution per slot
        wrong = (got_label != want_label) | (state._owners()[ranks, chunk_slots] != want_owner)
    else:
        words = state.bits.shape[-1]
        single = want_owner >= 0
        want_bits = np.zeros((len(ranks), words), dtype=np.uint64)
        _set_bit(want_bits, (np.flatnonzero(single),), want_owner[single])
        group_bits = np.zeros((schedule.n_groups, words), dtype=np.uint64)
        np.bitwise_or.at(
            group_bits,
            np.arange(schedule.n_groups)[:, None].repeat(schedule.group_size, axis=1).ravel(),
            _bitsets(schedule.groups.ravel(), words),
        )
        if schedule.n_groups == 1:
            want_bits[~single] = group_bits[0]
        else:
            want_bits[~single] = group_bits[schedule.group_of[ranks[~single]]]
        wrong = (got_label != want_label) | np.any(
            state.bits[ranks, chunk_slots] != want_bits, axis=1
        )
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        r, c = int(ranks[i]), int(chunk_slots[i])
        holds = state.describe(r, c)
        if want_owner[i] >= 0:
            want = [int(want_owner[i])]
        else:
            want = schedule.groups[schedule.group_of[r]].tolist()
        expected = describe_content(
            int(want_label[i]), want, schedule.n_ranks, _group_size(schedule)
        )
        when = (
            f"last written at step {last_write[r, c]}" if last_write[r, c] >= 0 else "never written"
        )
        raise ScheduleError(
            f"after the last step, {schedule.where(r)} chunk {c} holds {holds}; "
            f"{schedule.collective} needs {expected} there ({when})",
            step=schedule.n_steps,
            rank=r,
            chunk=c,
            holds=holds,
            expected=expected,
            group=_group(schedule, r),
        )


def _group_size(schedule: Schedule) -> Optional[int]:
    return schedule.group_size if schedule.n_groups > 1 else None


def _symbolic_reduce(
    schedule: Schedule,
    k: int,
    a: int,
    reduce: NDArray[np.bool_],
    label: NDArray[np.int64],
    bits: NDArray[np.uint64],
    src_label: NDArray[np.int64],
    src: NDArray[np.int64],
    src_chunk: NDArray[np.int64],
) -> None:
    """Combine the reduce transfers of step ``k`` (its transfers ``a ..``: ``src``,
    ``src_chunk``, the ``src_label`` they read) into ``label``/``bits``, checking each one;
    it reads all its sources before it writes."""
    idx = np.flatnonzero(reduce)
    dst, dst_chunk = schedule.dst[a + idx], schedule.dst_chunk[a + idx]
    s_label, s_bits = src_label[idx], bits[src[idx], src_chunk[idx]]
    # group the reduces by target slot so that several reduces into one slot are combined
    key = dst * schedule.n_slots + dst_chunk
    order = np.argsort(key, kind="stable")
    key, dst, dst_chunk, idx = key[order], dst[order], dst_chunk[order], idx[order]
    s_label, s_bits = s_label[order], s_bits[order]
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    t_label = label[dst[starts], dst_chunk[starts]].copy()
    t_bits = bits[dst[starts], dst_chunk[starts]]
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(key))))
    n = schedule.n_ranks

    def fail(pos: int, message: str, holds: str) -> NoReturn:
        i = a + int(idx[pos])
        step, text = schedule.describe_transfer(i)
        raise ScheduleError(
            f"step {step}, {text}: {message}",
            step=step,
            rank=int(schedule.dst[i]),
            chunk=int(schedule.dst_chunk[i]),
            group=_group(schedule, int(schedule.dst[i])),
            holds=holds,
        )

    # a switch's accumulator starts empty and takes the first contribution as it comes
    at_switch = dst[starts] >= n
    fresh = at_switch & (t_label < 0)
    t_label[fresh] = s_label[starts[fresh]]
    empty_target = t_label[group] < 0
    if empty_target.any():
        p = int(np.flatnonzero(empty_target)[0])
        fail(
            p,
            f"{schedule.where(dst[p])} chunk {dst_chunk[p]} holds nothing to add into; "
            "copy the first contribution there instead of reducing it",
            holds="nothing",
        )
    mixed = s_label != t_label[group]
    if mixed.any():
        p = int(np.flatnonzero(mixed)[0])
        g = int(group[p])
        holds = describe_content(int(t_label[g]), _ranks_of(t_bits[g]), n, _group_size(schedule))
        fail(
            p,
            f"adds chunk {s_label[p]} into a slot that holds {holds}; only the same "
            "chunk of different ranks may be combined",
            holds=holds,
        )
    summed = np.bitwise_or.reduceat(s_bits, starts, axis=0) | t_bits
    per_group = np.add.reduceat(np.bitwise_count(s_bits).sum(axis=1), starts) + np.bitwise_count(
        t_bits
    ).sum(axis=1)
    twice = per_group != np.bitwise_count(summed).sum(axis=1)
    if schedule.op == "sum" and twice.any():  # a maximum may see a value twice
        g = int(np.flatnonzero(twice)[0])
        members = np.flatnonzero(group == g)
        seen = t_bits[g].copy()
        size = _group_size(schedule)
        for q in members.tolist():  # only on the error path: find the culprit
            overlap = seen & s_bits[q]
            if overlap.any():
                dup = _ranks_of(overlap)
                holds = describe_content(int(t_label[g]), _ranks_of(t_bits[g]), n, size)
                adding = describe_content(int(s_label[q]), _ranks_of(s_bits[q]), n, size)
                fail(
                    q,
                    f"{schedule.where(dst[q])} chunk {dst_chunk[q]} holds {holds}; adding "
                    f"{adding} would count "
                    f"rank{'s' if len(dup) > 1 else ''} {', '.join(map(str, dup))} twice",
                    holds=holds,
                )
            seen |= s_bits[q]
    bits[dst[starts], dst_chunk[starts]] = summed
    label[dst[starts], dst_chunk[starts]] = t_label
