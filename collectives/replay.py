"""Run a Schedule on data (``simulate``) or on symbols (``verify``).

``simulate`` moves real numbers, vectorised over all transfers of a step; it is how a
chapter shows what a collective does to arrays. ``verify`` replays the schedule on
*symbols*: each slot holds a label (which logical chunk) and the exact set of ranks whose
contributions were summed into it, kept as bitsets. It is independent of floating point
and names the first step, rank and chunk that goes wrong. Both follow the step rules of
:mod:`collectives.schedule` (read-before-write; one copy or several reduces per slot).
Taught in chapter "Cost models and the ring all-gather".
"""

import numpy as np

from .errors import CollectivesError, ScheduleError
from .semantics import collective_spec
from .validation import input_rows, schedule_arg

__all__ = ["simulate", "verify", "trace", "SymbolicState", "VERIFY_MEMORY_LIMIT"]

#: bytes of symbolic state ``verify`` may allocate (n_ranks * n_slots * ceil(n_ranks/64) * 8)
VERIFY_MEMORY_LIMIT = 2 * 1024**3


def _check_schedule(schedule):
    return collective_spec(schedule_arg(schedule).collective)


def simulate(schedule, inputs):
    """Run ``schedule`` on numeric ``inputs`` and return the outputs.

    ``inputs`` has one row per rank (array-like of shape ``(n_ranks, length)``); the
    rows' meaning and the outputs' layout follow NCCL (see :mod:`collectives.semantics`):
    all-gather takes each rank's shard and returns every shard in rank order; reduce-
    scatter takes the full buffer and returns the rank's reduced part; all-reduce returns
    the summed buffer; all-to-all returns the parts received, in source-rank order.
    Reduction is addition in the input dtype. Raises :class:`ScheduleError` if a transfer
    reads a slot that holds nothing yet.
    """
    spec = _check_schedule(schedule)
    data = input_rows(inputs, schedule.n_ranks)
    buffer, filled = spec.place_inputs(data, schedule.n_chunks, schedule.n_slots, schedule.root)
    # rows of a flat (n_ranks * n_slots, chunk_len) view: one fancy index per step
    rows = buffer.reshape(-1, buffer.shape[-1])
    filled = filled.reshape(-1)
    src_row = schedule.src * schedule.n_slots + schedule.src_chunk
    dst_row = schedule.dst * schedule.n_slots + schedule.dst_chunk
    starts, reduce_all = schedule.step_starts, schedule.reduce
    for k in range(schedule.n_steps):
        a, b = starts[k], starts[k + 1]
        if a == b:
            continue
        src, dst, reduce = src_row[a:b], dst_row[a:b], reduce_all[a:b]
        empty = ~filled[src]
        if empty.any():
            i = a + int(np.flatnonzero(empty)[0])
            step, text = schedule.describe_transfer(i)
            raise ScheduleError(
                f"step {step}, {text}: rank {schedule.src[i]} chunk {schedule.src_chunk[i]} "
                "holds nothing yet", step=step, rank=int(schedule.src[i]),
                chunk=int(schedule.src_chunk[i]), holds="nothing")
        values = rows[src]                        # every read happens before any write
        shared = schedule._reduce_targets_shared[k]
        if reduce[0] and reduce.all():
            _add(rows, dst, values, shared)
        elif not reduce.any():
            rows[dst] = values
            filled[dst] = True
        else:
            copy = ~reduce
            rows[dst[copy]] = values[copy]
            filled[dst[copy]] = True
            _add(rows, dst[reduce], values[reduce], shared)
    return spec.take_outputs(buffer, schedule.n_chunks)


def _add(rows, dst, values, shared_targets):
    """rows[dst] += values, summing repeated targets when a step has them."""
    if shared_targets:
        np.add.at(rows, dst, values)
    else:
        np.add(rows[dst], values, out=values)
        rows[dst] = values


# ---- symbolic replay ----------------------------------------------------------------------

def _ranks_of(bits):
    """Rank numbers set in one bitset row (uint64 words, little-endian)."""
    as_bytes = bits.astype("<u8").view(np.uint8)
    return np.flatnonzero(np.unpackbits(as_bytes, bitorder="little")).tolist()


def _describe(label, ranks, n_ranks):
    """A slot's content in words, from its label and the ranks summed into it."""
    if label < 0:
        return "nothing"
    if len(ranks) == 1:
        return f"chunk {label} of rank {ranks[0]}"
    if len(ranks) == n_ranks:
        return f"chunk {label} summed over all {n_ranks} ranks"
    shown = ", ".join(map(str, ranks[:12])) + (", ..." if len(ranks) > 12 else "")
    return f"chunk {label} summed over {len(ranks)} of {n_ranks} ranks ({shown})"


class SymbolicState:
    """Every rank's buffer as symbols: ``label[r, c]`` (the logical chunk, -1 if empty) and
    the ranks whose contributions it holds: ``bits[r, c]``, a bitset of ranks, for
    reducing collectives; ``owner[r, c]``, the one rank, for collectives that only move
    data (a slot there never holds more than one contribution)."""

    def __init__(self, label, bits=None, owner=None):
        self.label, self.bits, self.owner = label, bits, owner

    @property
    def n_ranks(self):
        return self.label.shape[0]

    def contributors(self, rank, chunk):
        """The ranks whose contributions slot ``chunk`` of ``rank`` holds."""
        if self.label[rank, chunk] < 0:
            return []
        if self.bits is None:
            return [int(self.owner[rank, chunk])]
        return _ranks_of(self.bits[rank, chunk])

    def counts(self):
        """Number of contributions per (rank, slot): 0 for an empty slot."""
        if self.bits is None:
            return (self.label >= 0).astype(np.int64)
        return np.bitwise_count(self.bits).sum(axis=-1)

    def describe(self, rank, chunk):
        """Plain words for a slot's content, as used in error messages."""
        return _describe(self.label[rank, chunk], self.contributors(rank, chunk), self.n_ranks)

    def copy(self):
        return SymbolicState(self.label.copy(), None if self.bits is None else self.bits.copy(),
                             None if self.owner is None else self.owner.copy())


def _symbolic_steps(schedule):
    """Replay ``schedule`` on symbols, yielding ``(step, state, last_write)`` after each step.

    The arrays are updated in place between yields. Raises ScheduleError at the first
    transfer that reads an empty slot, mixes chunks or counts a contribution twice.
    """
    spec = _check_schedule(schedule)
    n, slots = schedule.n_ranks, schedule.n_slots
    label, owner = spec.initial(n, schedule.n_chunks, slots, schedule.root)
    if spec.reducing:
        words = (n + 63) // 64
        need = n * slots * words * 8
        if need > VERIFY_MEMORY_LIMIT:
            raise CollectivesError(
                f"verify would need {need / 2**30:.1f} GiB of symbolic state for {n} ranks x "
                f"{slots} slots; verify a smaller instance of the same algorithm")
        bits = np.zeros((n, slots, words), dtype=np.uint64)
        r_idx, c_idx = np.nonzero(owner >= 0)
        o = owner[r_idx, c_idx]
        bits[r_idx, c_idx, o // 64] = np.left_shift(np.uint64(1), (o % 64).astype(np.uint64))
        state = SymbolicState(label, bits=bits)
        content = bits
    else:
        state = SymbolicState(label, owner=owner)
        content = owner
    last_write = np.full((n, slots), -1, dtype=np.int64)
    yield -1, state, last_write

    s, d, sc, dc, red = (schedule.src, schedule.dst, schedule.src_chunk, schedule.dst_chunk,
                         schedule.reduce)
    for k in range(schedule.n_steps):
        a, b = schedule.step_starts[k], schedule.step_starts[k + 1]
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
                f"step {step}, {text}: rank {s[i]} chunk {sc[i]} holds nothing yet",
                step=step, rank=int(s[i]), chunk=int(sc[i]), holds="nothing")
        src_content = content[src, src_chunk]
        if reduce.any():
            _symbolic_reduce(schedule, k, a, reduce, label, bits, src_label, src_content)
        copy = ~reduce
        label[dst[copy], dst_chunk[copy]] = src_label[copy]
        content[dst[copy], dst_chunk[copy]] = src_content[copy]
        last_write[dst, dst_chunk] = k
        yield k, state, last_write


def trace(schedule):
    """Symbolic states before step 0 and after every step: a list of ``n_steps + 1``
    :class:`SymbolicState` copies, for figures and step-by-step feedback.

    Raises ScheduleError like :func:`verify` for a transfer that can never be right, but
    does not check the final result.
    """
    return [st.copy() for _, st, _ in _symbolic_steps(schedule)]


def verify(schedule):
    """Check symbolically that ``schedule`` computes its collective; return ``None``.

    Raises :class:`ScheduleError` naming the first problem: a transfer that reads an
    empty slot, a reduce of two different chunks, a contribution counted twice (each at
    the step it happens), or, after the last step, the first rank and chunk whose content
    differs from the collective's result, with what it holds and what it should hold.
    The symbolic state takes ``n_ranks * n_slots * 8`` bytes for collectives that only move
    data, and ``n_ranks * n_slots * ceil(n_ranks / 64) * 8`` (a bitset of ranks per slot)
    for reductions.
    """
    spec = _check_schedule(schedule)
    for _, state, last_write in _symbolic_steps(schedule):
        pass
    n = schedule.n_ranks
    ranks, chunk_slots, want_label, want_owner = spec.expected(n, schedule.n_chunks,
                                                               schedule.root, schedule.counts)
    got_label = state.label[ranks, chunk_slots]
    if state.bits is None:                      # one contribution per slot
        wrong = (got_label != want_label) | (state.owner[ranks, chunk_slots] != want_owner)
    else:
        words = state.bits.shape[-1]
        want_bits = np.zeros((len(ranks), words), dtype=np.uint64)
        single = want_owner >= 0
        want_bits[np.flatnonzero(single), want_owner[single] // 64] = np.left_shift(
            np.uint64(1), (want_owner[single] % 64).astype(np.uint64))
        want_bits[~single] = _full_bitset(n, words)
        wrong = (got_label != want_label) | np.any(state.bits[ranks, chunk_slots] != want_bits,
                                                   axis=1)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        r, c = int(ranks[i]), int(chunk_slots[i])
        holds = state.describe(r, c)
        want = [int(want_owner[i])] if want_owner[i] >= 0 else list(range(n))
        expected = _describe(want_label[i], want, n)
        when = (f"last written at step {last_write[r, c]}" if last_write[r, c] >= 0
                else "never written")
        raise ScheduleError(
            f"after the last step, rank {r} chunk {c} holds {holds}; {schedule.collective} "
            f"needs {expected} there ({when})",
            step=schedule.n_steps, rank=r, chunk=c, holds=holds, expected=expected)


def _full_bitset(n, words):
    full = np.zeros(words, dtype=np.uint64)
    full[: n // 64] = np.uint64(0xFFFFFFFFFFFFFFFF)
    if n % 64:
        full[n // 64] = np.uint64((1 << (n % 64)) - 1)
    return full


def _symbolic_reduce(schedule, k, a, reduce, label, bits, src_label, src_bits):
    """Add the reduce transfers of step ``k`` into ``label``/``bits``, checking each one."""
    idx = np.flatnonzero(reduce)
    dst, dst_chunk = schedule.dst[a + idx], schedule.dst_chunk[a + idx]
    s_label, s_bits = src_label[idx], src_bits[idx]
    # group the reduces by target slot so that several reduces into one slot are summed
    key = dst * schedule.n_slots + dst_chunk
    order = np.argsort(key, kind="stable")
    key, dst, dst_chunk, s_label, s_bits, idx = (x[order] for x in
                                                 (key, dst, dst_chunk, s_label, s_bits, idx))
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    t_label = label[dst[starts], dst_chunk[starts]]
    t_bits = bits[dst[starts], dst_chunk[starts]]
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(key))))

    def fail(pos, message, **details):
        i = a + int(idx[pos])
        step, text = schedule.describe_transfer(i)
        raise ScheduleError(f"step {step}, {text}: {message}", step=step,
                            rank=int(schedule.dst[i]), chunk=int(schedule.dst_chunk[i]),
                            **details)

    empty_target = t_label[group] < 0
    if empty_target.any():
        p = int(np.flatnonzero(empty_target)[0])
        fail(p, f"rank {dst[p]} chunk {dst_chunk[p]} holds nothing to add into; copy "
                "the first contribution there instead of reducing it", holds="nothing")
    mixed = s_label != t_label[group]
    if mixed.any():
        p = int(np.flatnonzero(mixed)[0])
        g = group[p]
        holds = _describe(t_label[g], _ranks_of(t_bits[g]), schedule.n_ranks)
        fail(p, f"adds chunk {s_label[p]} into a slot that holds {holds}; only the same "
                "chunk of different ranks may be summed", holds=holds)
    summed = np.bitwise_or.reduceat(s_bits, starts, axis=0) | t_bits
    per_group = (np.add.reduceat(np.bitwise_count(s_bits).sum(axis=1), starts)
                 + np.bitwise_count(t_bits).sum(axis=1))
    twice = per_group != np.bitwise_count(summed).sum(axis=1)
    if twice.any():
        g = int(np.flatnonzero(twice)[0])
        members = np.flatnonzero(group == g)
        seen = t_bits[g].copy()
        for p in members:                     # only on the error path: find the culprit
            overlap = seen & s_bits[p]
            if overlap.any():
                dup = _ranks_of(overlap)
                holds = _describe(t_label[g], _ranks_of(t_bits[g]), schedule.n_ranks)
                adding = _describe(s_label[p], _ranks_of(s_bits[p]), schedule.n_ranks)
                fail(p, f"rank {dst[p]} chunk {dst_chunk[p]} holds {holds}; adding "
                        f"{adding} would count "
                        f"rank{'s' if len(dup) > 1 else ''} {', '.join(map(str, dup))} twice",
                     holds=holds)
            seen |= s_bits[p]
    bits[dst[starts], dst_chunk[starts]] = summed
