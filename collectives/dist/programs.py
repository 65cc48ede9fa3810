"""Each rank's part of a Schedule, and all ranks' parts run inside this process.

:func:`rank_program` turns a :class:`~collectives.Schedule` into what one rank does in each
step (:class:`RankStep`): the chunks it sends to each peer, what it receives from each, its
local copies, and where each write lands. Every step a rank first snapshots what it sends
(read-before-write), then exchanges messages, then applies the writes in the schedule's
transfer order, so the data and its rounding are exactly :func:`collectives.simulate`'s.
:func:`run_rank` runs one rank's program with a given message exchange (a worker of
:mod:`collectives.dist` passes one over torch.distributed); :func:`run_local` runs every
rank's program here, messages through an in-memory mailbox. No torch, no processes.

The hot path of a step whose slots are each written once (every step of the catalogue's
rings): a message that only overwrites consecutive slots the step does not send from is
received straight into them (no inbox, no copy), and a message may arrive in ``n_segments``
pieces, each combined into its slots as soon as it lands while later pieces are still on
the wire (the pipelining of gloo's ring all-reduce, gloo/allreduce.cc). Every element still
goes through the same steps with the same operands, so the result is bit for bit the
same for any ``n_segments``. (``n_segments`` is the package's one name for a pipelining
depth; the old keyword ``segments`` is still accepted.)
"""

from typing import NamedTuple

import numpy as np

from ..errors import DistError, ScheduleError
from ..schedule import schedule_arg
from ..semantics import REDUCTION_OPS, collective_spec
from ..validation import input_rows, renamed_arg

__all__ = [
    "RankStep",
    "rank_program",
    "Message",
    "messages",
    "prepare",
    "run_rank",
    "run_local",
    "pieces",
    "MAX_SEGMENTS",
    "check_segments",
]

#: the most pieces one message may be split into (``n_segments``)
MAX_SEGMENTS = 1024


def check_segments(n_segments, segments=None):
    """``n_segments`` (pieces per message) as an int in 1..:data:`MAX_SEGMENTS`, or a clear
    error naming the keyword the caller used (``segments``: its old name, still accepted)."""
    value, what = renamed_arg(n_segments, 1, segments, "n_segments", "segments", error=DistError)
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not 1 <= value <= MAX_SEGMENTS
    ):
        raise DistError(
            f"{what} must be an integer from 1 to {MAX_SEGMENTS} (pieces per "
            f"message), got {value!r}"
        )
    return int(value)


def pieces(n_elements, n_segments):
    """``[(lo, hi), ...]``: a message of ``n_elements`` elements cut into ``n_segments``
    nearly equal consecutive pieces (empty ones dropped); sender and receiver cut alike. A
    message of the wrong size is cut differently: the receiver aborts on a piece of the wrong
    size, or the sender waits forever for a receive of a surplus piece (a hang, named as
    such)."""
    cuts = [n_elements * j // n_segments for j in range(n_segments + 1)]
    return [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


class RankStep(NamedTuple):
    """What one rank does in one step. Positions index the step's writes into this rank."""

    read_index: np.ndarray  # global transfer indices this rank reads for (src == rank)
    read_slots: np.ndarray  # their source slots
    sends: tuple  # ((peer, source slots), ...), peers ascending
    recvs: tuple  # ((peer, positions), ...), peers ascending
    local_pos: np.ndarray  # positions filled by local copies (src == dst == rank)
    local_slots: np.ndarray  # their source slots
    write_slots: np.ndarray  # destination slot of every write, in transfer order
    write_reduce: np.ndarray  # combine (True) or overwrite (False)
    combine: np.ufunc  # the schedule's reduction (np.add or np.maximum)
    distinct: bool  # no slot is written twice in the step (order is irrelevant)
    direct: tuple = ()  # per recv peer: (first, last + 1) slots it lands in, or None
    send_copy: bool = True  # a send reads a slot the step writes: send a copy, not a view


def rank_program(schedule, rank):
    """The steps of ``schedule`` as seen by ``rank``: its sends, receives, local copies."""
    src, dst, sc, dc, red = (
        schedule.src,
        schedule.dst,
        schedule.src_chunk,
        schedule.dst_chunk,
        schedule.reduce,
    )
    starts = schedule.step_starts
    steps = []
    for k in range(schedule.n_steps):
        a, b = int(starts[k]), int(starts[k + 1])
        s, d = src[a:b], dst[a:b]
        reads = np.flatnonzero(s == rank)
        writes = np.flatnonzero(d == rank)
        out = reads[d[reads] != rank]
        sends = tuple((int(p), sc[a + out[d[out] == p]]) for p in np.unique(d[out]))
        from_ = s[writes]
        recvs = tuple((int(p), np.flatnonzero(from_ == p)) for p in np.unique(from_[from_ != rank]))
        local_pos = np.flatnonzero(from_ == rank)
        write_slots, write_reduce = dc[a + writes], red[a + writes]
        distinct = len(np.unique(write_slots)) == len(writes)
        sent = set(sc[a + out].tolist())
        steps.append(
            RankStep(
                read_index=a + reads,
                read_slots=sc[a + reads],
                sends=sends,
                recvs=recvs,
                local_pos=local_pos,
                local_slots=sc[a + writes[local_pos]],
                write_slots=write_slots,
                write_reduce=write_reduce,
                combine=REDUCTION_OPS[schedule.op],
                distinct=distinct,
                direct=tuple(
                    _direct(write_slots[pos], write_reduce[pos], sent, distinct) for _, pos in recvs
                ),
                send_copy=bool(sent & set(write_slots.tolist())),
            )
        )
    return steps


class Message(NamedTuple):
    """One message of one step, as the processes exchange it: from rank ``src`` to rank
    ``dst``, the sender's ``src_chunks`` packed together, landing in the receiver's
    ``dst_chunks``, each added (``reduce`` True) or overwriting (False)."""

    src: int
    dst: int
    src_chunks: tuple
    dst_chunks: tuple
    reduce: tuple


def messages(schedule, step, programs=None) -> tuple:
    """The messages of step ``step`` of ``schedule``, one per (sender, receiver) pair, as
    each rank's program (:func:`rank_program`) sends and receives them: the sender's
    chunks for one peer packed into one message, which the receiver writes as its program
    says. ``programs`` (one :func:`rank_program` per rank) avoids rebuilding them. Local
    copies (``src == dst``) send nothing and are not listed."""
    schedule = schedule_arg(schedule)
    if (
        isinstance(step, bool)
        or not isinstance(step, (int, np.integer))
        or not (0 <= step < schedule.n_steps)
    ):
        raise ScheduleError(
            f"step must be one of 0..{schedule.n_steps - 1} of {schedule.name}, got {step!r}"
        )
    if programs is None:
        programs = [rank_program(schedule, r) for r in range(schedule.n_ranks)]
    out = []
    for src in range(schedule.n_ranks):
        for dst, slots in programs[src][step].sends:
            mine = programs[dst][step]
            positions = dict(mine.recvs)[src]
            out.append(
                Message(
                    src,
                    int(dst),
                    tuple(int(c) for c in slots),
                    tuple(int(c) for c in mine.write_slots[positions]),
                    tuple(bool(x) for x in mine.write_reduce[positions]),
                )
            )
    return tuple(out)


def _direct(slots, reduce, sent, distinct):
    """``(first, last + 1)`` when a message can be received straight into the buffer: it
    only overwrites consecutive slots, in order, that nothing else in the step writes and
    no send of the step reads. Else None (it lands in an inbox)."""
    if not distinct or reduce.any() or sent & set(slots.tolist()):
        return None
    first = int(slots[0])
    if not np.array_equal(slots, np.arange(first, first + len(slots))):
        return None
    return first, first + len(slots)


def _first_empty_read(rs, filled):
    """Global index of the first transfer this rank would read from an empty slot, or None."""
    if rs.read_slots.size:
        empty = ~filled[rs.read_slots]
        if empty.any():
            return int(rs.read_index[np.argmax(empty)])
    return None


def _empty_read_error(schedule, i):
    """simulate's :class:`~collectives.ScheduleError` for transfer ``i``, which reads an empty
    slot."""
    step, text = schedule.describe_transfer(i)
    s, c = int(schedule.src[i]), int(schedule.src_chunk[i])
    error = ScheduleError(
        f"step {step}, {text}: rank {s} chunk {c} holds nothing yet",
        step=step,
        rank=s,
        chunk=c,
        holds="nothing",
    )
    error.transfer_index = i  # lets the launcher name the first one across ranks
    return error


def _rows(buffer, slots):
    """``buffer[slots]`` as a view when the slots are consecutive (no copy), else a copy."""
    if (
        len(slots)
        and slots[-1] - slots[0] == len(slots) - 1
        and (len(slots) == 1 or bool(np.all(np.diff(slots) == 1)))
    ):
        return buffer[int(slots[0]) : int(slots[-1]) + 1]
    return buffer[slots]


def _snapshot(rs, buffer, copy=True):
    """What this rank sends and copies locally, read before anything is written.

    ``copy=False`` sends views of consecutive slots (no copy): safe when no write of the
    step lands in a slot the step sends (``RankStep.send_copy`` is False), as
    :func:`run_rank` checks; local copies are always copied."""
    sends = [(p, buffer[slots] if copy else _rows(buffer, slots)) for p, slots in rs.sends]
    return sends, buffer[rs.local_slots]


def _apply_writes(rs, buffer, filled, incoming, local):
    """Apply the step's writes into this rank's buffer, in transfer order."""
    if not len(rs.write_slots):
        return
    if rs.distinct:
        # each slot written once: straight from the messages, row by row, no staging copy
        sources = [(rs.local_pos, local)] + [(pos, incoming[p]) for p, pos in rs.recvs]
        for positions, rows in sources:
            for position, row in zip(positions, rows):
                slot = rs.write_slots[position]
                if rs.write_reduce[position]:
                    rs.combine(buffer[slot], row, out=buffer[slot])
                else:
                    buffer[slot] = row
                    filled[slot] = True
        return
    values = np.empty((len(rs.write_slots),) + buffer.shape[1:], dtype=buffer.dtype)
    values[rs.local_pos] = local
    for p, pos in rs.recvs:
        values[pos] = incoming[p]
    copy = ~rs.write_reduce
    if copy.any():
        buffer[rs.write_slots[copy]] = values[copy]
        filled[rs.write_slots[copy]] = True
    if rs.write_reduce.any():
        # sequential, in transfer order: the same additions, in the same order, as simulate
        rs.combine.at(buffer, rs.write_slots[rs.write_reduce], values[rs.write_reduce])


def prepare(schedule, inputs, precheck=True):
    """Validate like simulate, lay the rows out in working buffers, and (``precheck``) find
    a read of an empty slot before any process starts, with simulate's own error.

    Returns ``(spec, buffer, filled)``: the collective's spec and, per rank, its working
    buffer (slots x elements) and which slots hold data."""
    from ..replay import simulate

    spec = collective_spec(schedule_arg(schedule).collective)
    if schedule.n_switches:
        raise DistError(
            f"{schedule.name} reduces inside {schedule.n_switches} switch(es); dist runs one "
            "process per rank and has no process for a switch (in-network reduction is "
            "modelled by simulate and time only)"
        )
    data = input_rows(inputs, schedule.n_ranks)
    buffer, filled = spec.place_inputs(
        data, schedule.groups, schedule.n_chunks, schedule.n_slots, schedule.root, schedule.n_ranks
    )
    if precheck:  # a replay with one int8 per chunk: cheap next to the real run
        k_in = spec.input_chunks(schedule.group_size, schedule.n_chunks)
        simulate(schedule, np.zeros((schedule.n_ranks, k_in), dtype=np.int8))
    return spec, buffer, filled


def run_local(schedule, inputs, n_segments=1, *, segments=None):
    """Run each rank's program of :func:`collectives.dist.run` inside this process; no torch,
    no processes.

    Every step, each rank snapshots the chunks it sends (read-before-write), the messages
    go through an in-memory mailbox (each delivered in ``n_segments`` pieces, as
    :func:`~collectives.dist.run` would; ``segments``: the old name, still accepted), and
    each rank applies what it received with the same code as a worker process. Returns
    exactly what :func:`collectives.simulate` returns, whatever ``n_segments``. It loops over
    ranks in Python, so it is for understanding and testing the per-rank view, not for speed. A
    read of an empty slot is found by the ranks themselves (the first one in the step, over all
    ranks) and raises simulate's :class:`~collectives.ScheduleError`.
    """
    n_segments = check_segments(n_segments, segments)
    spec, buffer, filled = prepare(schedule, inputs, precheck=False)
    n = schedule.n_ranks
    programs = [rank_program(schedule, r) for r in range(n)]
    for k in range(schedule.n_steps):
        steps = [programs[r][k] for r in range(n)]
        bad = [i for r in range(n) if (i := _first_empty_read(steps[r], filled[r])) is not None]
        if bad:
            raise _empty_read_error(schedule, min(bad))
        reads = [_snapshot(steps[r], buffer[r]) for r in range(n)]  # every rank reads first
        mailbox = {(r, p): payload for r in range(n) for p, payload in reads[r][0]}
        for r in range(n):
            _write_step(
                steps[r],
                buffer[r],
                filled[r],
                _Mailbox(mailbox, r, n_segments),
                reads[r][0],
                reads[r][1],
            )
    return spec.take_outputs(buffer, schedule.groups, schedule.n_chunks)


class _Mailbox:
    """:func:`run_local`'s exchange for one rank: the messages the other ranks snapshotted,
    delivered as a worker's :class:`~.torch_ops.Exchange` delivers them (into the buffer
    where asked, piece by piece)."""

    def __init__(self, mailbox, rank, n_segments):
        self.mailbox, self.rank, self.n_segments = mailbox, rank, n_segments

    def __call__(self, sends, recvs, row_shape, dtype, into=None, on_piece=None):
        into = into or {}
        got = {}
        for p, _ in recvs:
            message = self.mailbox[(p, self.rank)]
            got[p] = into[p] if p in into else message.copy()
        for p, _ in recvs:
            source = self.mailbox[(p, self.rank)].reshape(-1)
            for lo, hi in pieces(source.size, self.n_segments):
                if p in into:
                    got[p].flat[lo:hi] = source[lo:hi]
                if on_piece is not None:
                    on_piece(p, got[p], lo, hi)
        return got


def _apply_piece(rs, buffer, positions, rows, lo, hi):
    """Apply elements ``lo:hi`` of a message's writes: ``rows`` (one per position, the
    buffer's row width) flattened, as the message travels."""
    width = buffer.shape[1]
    for i in range(lo // width, (hi - 1) // width + 1):
        a, b = max(lo - i * width, 0), min(hi - i * width, width)
        slot = rs.write_slots[positions[i]]
        target, part = buffer[slot, a:b], rows[i, a:b]
        if rs.write_reduce[positions[i]]:
            rs.combine(target, part, out=target)
        else:
            target[...] = part


def _write_step(rs, buffer, filled, exchange, sends, local):
    """Exchange one step's messages and apply its writes: piece by piece as they land when
    every slot is written once, else all together in transfer order."""
    recvs = [(p, len(pos)) for p, pos in rs.recvs]
    if not rs.distinct:
        incoming = exchange(sends, recvs, buffer.shape[1:], buffer.dtype)
        _apply_writes(rs, buffer, filled, incoming, local)
        return
    into = {
        p: buffer[span[0] : span[1]]
        for (p, _), span in zip(rs.recvs, rs.direct)
        if span is not None
    }
    inbound = {p: pos for (p, pos), span in zip(rs.recvs, rs.direct) if span is None}

    def on_piece(p, rows, lo, hi):
        if p in inbound:
            _apply_piece(rs, buffer, inbound[p], rows, lo, hi)

    exchange(sends, recvs, buffer.shape[1:], buffer.dtype, into=into, on_piece=on_piece)
    if local.size:
        _apply_piece(rs, buffer, rs.local_pos, local, 0, local.size)
    filled[rs.write_slots[~rs.write_reduce]] = True


def run_rank(schedule, rank, buffer, filled, exchange, *, program=None, on_step=None):
    """Run ``rank``'s program of ``schedule`` on its working ``buffer`` (slots x elements) and
    ``filled`` mask, in place, and return the buffer.

    ``exchange(sends, recvs, row_shape, dtype, into=None, on_piece=None)`` moves one step's
    messages: ``sends`` is ``[(peer, rows), ...]``, ``recvs`` is ``[(peer, number of rows),
    ...]``; a message from a peer in ``into`` is received straight into that view of the
    buffer, and ``on_piece(peer, rows, lo, hi)`` is called when elements ``lo:hi`` of a
    peer's (flattened) message have arrived; it returns ``{peer: rows}`` once every message
    has been sent and received (over torch.distributed in a worker:
    :class:`~.torch_ops.Exchange`). Rows sent may be views of the buffer: a step that
    writes a slot it also sends sends a copy. ``program`` is :func:`rank_program`'s result,
    when the caller runs the schedule many times (a timing loop); ``on_step(k)`` is called
    before step k (a worker records its progress there). A read of an empty slot raises
    simulate's :class:`~collectives.ScheduleError`.
    """
    program = rank_program(schedule, rank) if program is None else program
    for k, rs in enumerate(program):
        if on_step is not None:
            on_step(k)
        bad = _first_empty_read(rs, filled)
        if bad is not None:
            raise _empty_read_error(schedule, bad)
        sends, local = _snapshot(rs, buffer, copy=rs.send_copy)  # read before any write
        _write_step(rs, buffer, filled, exchange, sends, local)
    return buffer
