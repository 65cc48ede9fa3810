"""Schedules: a collective written as synchronous steps of chunk transfers.

A :class:`Schedule` is the one object every part of the package works on. Each step is a
set of transfers ``(src rank, dst rank, src chunk, dst chunk, reduce?)`` over per-rank
buffers of chunk slots (layout in :mod:`collectives.semantics`). Within a step every
transfer reads the buffers as they were when the step began (read-before-write); a copy
overwrites its destination slot, a reduce adds into it. A slot may receive one copy, or
any number of reduces, per step, never both.

Storage is flat numpy arrays (one entry per transfer, sorted by step) so that simulation
and costing vectorise over ranks and transfers. Steps are numbered from 0, as in
``schedule.steps[i]``. Taught in chapter "Cost models and the ring all-gather".
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import CollectivesError, ScheduleError
from .semantics import collective_spec

__all__ = ["Transfer", "Step", "Schedule", "compose"]

_FIELDS = ("src", "dst", "src_chunk", "dst_chunk")


class Transfer(NamedTuple):
    """One chunk moved from ``src`` to ``dst`` (added into the target when ``reduce``)."""

    src: int
    dst: int
    src_chunk: int
    dst_chunk: int
    reduce: bool = False


def _frozen(array, dtype):
    out = np.ascontiguousarray(array, dtype=dtype)
    if out is array:
        out = out.copy()
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Step:
    """The transfers of one synchronous step, as read-only parallel arrays."""

    src: np.ndarray
    dst: np.ndarray
    src_chunk: np.ndarray
    dst_chunk: np.ndarray
    reduce: np.ndarray

    @classmethod
    def from_transfers(cls, transfers, *, step_index=None):
        """Build a step from ``(src, dst, src_chunk, dst_chunk[, reduce])`` tuples.

        ``reduce`` may be a bool or the words ``"copy"`` / ``"reduce"``.
        """
        where = "" if step_index is None else f"step {step_index}, "
        rows = []
        try:
            items = list(transfers)
        except TypeError:
            raise ScheduleError(
                f"{where}expected a list of transfers, got {type(transfers).__name__}",
                step=step_index,
            ) from None
        for i, t in enumerate(items):
            rows.append(_parse_transfer(t, f"{where}transfer {i}", step_index))
        if not rows:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, empty, np.zeros(0, dtype=bool))
        cols = list(zip(*rows))
        return cls(*(np.array(c, dtype=np.int64) for c in cols[:4]), np.array(cols[4], dtype=bool))

    def __post_init__(self):
        for name in _FIELDS:
            object.__setattr__(self, name, _frozen(getattr(self, name), np.int64))
        object.__setattr__(self, "reduce", _frozen(self.reduce, bool))

    def __len__(self):
        return len(self.src)

    def __iter__(self):
        for row in zip(*(getattr(self, f).tolist() for f in _FIELDS), self.reduce.tolist()):
            yield Transfer(*row)

    def __repr__(self):
        return f"Step({list(self)!r})"


def _parse_transfer(t, where, step_index):
    if isinstance(t, Transfer):
        return tuple(t)
    try:
        fields = tuple(t)
    except TypeError:
        raise ScheduleError(
            f"{where}: expected a tuple (src, dst, src_chunk, dst_chunk[, reduce]), "
            f"got {t!r}",
            step=step_index,
        ) from None
    if len(fields) not in (4, 5):
        raise ScheduleError(
            f"{where}: expected 4 or 5 fields (src, dst, src_chunk, dst_chunk[, reduce]), "
            f"got {len(fields)}: {t!r}",
            step=step_index,
        )
    ints = []
    for name, value in zip(_FIELDS, fields[:4]):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ScheduleError(
                f"{where}: {name} must be an integer, got {value!r}", step=step_index
            )
        ints.append(int(value))
    flag = fields[4] if len(fields) == 5 else False
    if isinstance(flag, str):
        if flag not in ("copy", "reduce"):
            raise ScheduleError(
                f"{where}: the fifth field must be 'copy' or 'reduce', got {flag!r}",
                step=step_index,
            )
        flag = flag == "reduce"
    elif not isinstance(flag, (bool, np.bool_)):
        raise ScheduleError(
            f"{where}: the fifth field must be True/False or 'copy'/'reduce', got {flag!r}",
            step=step_index,
        )
    return (*ints, bool(flag))


class Schedule:
    """A collective as synchronous steps of chunk transfers.

    Parameters: ``collective`` (``"all_gather"``, ``"reduce_scatter"``, ``"all_reduce"``,
    ``"all_to_all"``, ``"broadcast"``, ``"reduce"``), ``n_ranks``, ``n_chunks`` (data chunks
    in the full buffer ``S``; each transfer moves ``S / n_chunks`` bytes), ``steps`` (a list
    of :class:`Step` or of lists of transfer tuples), ``root`` (broadcast and reduce),
    ``n_scratch`` (extra empty slots per rank), a ``name``, and for ``"all_to_all_v"``
    the ``counts`` matrix: ``counts[s, d]`` of the ``n_chunks / n_ranks`` slots of rank s's
    part for rank d hold data (the rest is padding that need not move).

    Construction checks shape only (ranks and chunks in range, no slot written twice in a
    step, no reduce in a copy-only collective); :func:`collectives.verify` checks that the
    schedule computes its collective.
    """

    def __init__(self, collective, n_ranks, n_chunks, steps=(), *, root=None, n_scratch=0,
                 name=None, counts=None):
        parsed = [
            s if isinstance(s, Step) else Step.from_transfers(s, step_index=i)
            for i, s in enumerate(_as_list(steps, "steps"))
        ]
        per_step = np.array([len(s) for s in parsed], dtype=np.int64)
        arrays = {
            f: np.concatenate([getattr(s, f) for s in parsed]) if parsed else np.zeros(0, np.int64)
            for f in _FIELDS
        }
        reduce = np.concatenate([s.reduce for s in parsed]) if parsed else np.zeros(0, bool)
        self._init(collective, n_ranks, n_chunks, per_step, arrays, reduce, root, n_scratch, name,
                   counts)

    @classmethod
    def from_arrays(cls, collective, n_ranks, n_chunks, step, src, dst, src_chunk, dst_chunk,
                    reduce=False, *, n_steps=None, root=None, n_scratch=0, name=None,
                    counts=None):
        """Fast constructor for builders: flat per-transfer arrays plus each one's ``step``.

        ``step`` must be non-decreasing; ``n_steps`` allows trailing empty steps.
        """
        step = np.asarray(step, dtype=np.int64)
        if step.size and np.any(np.diff(step) < 0):
            raise ScheduleError("from_arrays: transfers must be sorted by step")
        if step.size and step[0] < 0:
            raise ScheduleError("from_arrays: step indices must be >= 0")
        n_steps = int(step[-1]) + 1 if n_steps is None and step.size else int(n_steps or 0)
        per_step = np.bincount(step, minlength=n_steps).astype(np.int64)
        if len(per_step) > n_steps:
            raise ScheduleError(f"from_arrays: a transfer has step >= n_steps={n_steps}")
        arrays = dict(zip(_FIELDS, np.broadcast_arrays(src, dst, src_chunk, dst_chunk, step)))
        reduce = np.broadcast_to(np.asarray(reduce, dtype=bool), step.shape)
        obj = cls.__new__(cls)
        obj._init(collective, n_ranks, n_chunks, per_step, arrays, reduce, root, n_scratch, name,
                  counts)
        return obj

    def _init(self, collective, n_ranks, n_chunks, per_step, arrays, reduce, root, n_scratch, name,
              counts=None):
        try:
            spec = collective_spec(collective)
        except CollectivesError as e:
            raise ScheduleError(str(e)) from None
        self.collective = spec.name
        self.n_ranks = _positive_int(n_ranks, "n_ranks")
        self.n_chunks = _positive_int(n_chunks, "n_chunks")
        self.n_scratch = _positive_int(n_scratch, "n_scratch", minimum=0)
        try:
            spec.check_chunks(self.n_ranks, self.n_chunks)
        except CollectivesError as e:
            raise ScheduleError(str(e)) from None
        if spec.rooted:
            if root is None:
                raise ScheduleError(f"{spec.name} needs a root rank")
            self.root = _positive_int(root, "root", minimum=0)
            if self.root >= self.n_ranks:
                raise ScheduleError(f"root {self.root} is not a rank (0..{self.n_ranks - 1})")
        else:
            self.root = None
        self.name = name or spec.name
        self.counts = spec.check_counts(self.n_ranks, self.n_chunks, counts)
        self.step_starts = _frozen(np.concatenate([[0], np.cumsum(per_step)]), np.int64)
        for f in _FIELDS:
            setattr(self, f, _frozen(arrays[f], np.int64))
        self.reduce = _frozen(reduce, bool)
        self._check_shape(spec)

    # ---- derived sizes ------------------------------------------------------------------
    @property
    def n_steps(self):
        return len(self.step_starts) - 1

    @property
    def n_transfers(self):
        return len(self.src)

    @property
    def n_slots(self):
        """Buffer slots per rank: data chunks plus scratch."""
        return self.n_chunks + self.n_scratch

    @property
    def step_of_transfer(self):
        """The step index of every transfer (flat array)."""
        return np.repeat(np.arange(self.n_steps), np.diff(self.step_starts))

    def step(self, i):
        """Step ``i`` as a :class:`Step` of read-only views."""
        if not -self.n_steps <= i < self.n_steps:
            raise IndexError(f"step {i} out of range: the schedule has {self.n_steps} steps")
        i %= self.n_steps
        a, b = self.step_starts[i], self.step_starts[i + 1]
        return Step(self.src[a:b], self.dst[a:b], self.src_chunk[a:b], self.dst_chunk[a:b],
                    self.reduce[a:b])

    @property
    def steps(self):
        return tuple(self.step(i) for i in range(self.n_steps))

    def to_lists(self):
        """Plain nested lists ``[[(src, dst, src_chunk, dst_chunk, reduce), ...], ...]``."""
        return [[tuple(t) for t in s] for s in self.steps]

    def __repr__(self):
        root = "" if self.root is None else f", root={self.root}"
        return (f"Schedule({self.name!r}: {self.collective}, n_ranks={self.n_ranks}, "
                f"n_chunks={self.n_chunks}{root}, {self.n_steps} steps, "
                f"{self.n_transfers} transfers)")

    # ---- shape validation ----------------------------------------------------------------
    def _check_shape(self, spec):
        step_of = self.step_of_transfer
        limits = {"src": self.n_ranks, "dst": self.n_ranks,
                  "src_chunk": self.n_slots, "dst_chunk": self.n_slots}
        for f, limit in limits.items():
            values = getattr(self, f)
            bad = np.flatnonzero((values < 0) | (values >= limit))
            if bad.size:
                i = bad[0]
                what = "rank" if f in ("src", "dst") else "chunk slot"
                raise ScheduleError(
                    f"step {step_of[i]}, {self._transfer_text(i, step_of)}: {f} {values[i]} "
                    f"is not a {what} (0..{limit - 1})", step=int(step_of[i]))
        if not spec.reducing and self.reduce.any():
            i = np.flatnonzero(self.reduce)[0]
            raise ScheduleError(
                f"step {step_of[i]}, {self._transfer_text(i, step_of)}: {spec.name} only "
                f"moves data; a reduce transfer has no place in it", step=int(step_of[i]))
        # one copy, or any number of reduces, into each (step, rank, slot)
        key = (step_of * self.n_ranks + self.dst) * self.n_slots + self.dst_chunk
        uniq, first, inverse, count = np.unique(key, return_index=True, return_inverse=True,
                                                return_counts=True)
        copies = np.bincount(inverse, weights=~self.reduce, minlength=len(uniq))
        clash = np.flatnonzero((count > 1) & (copies > 0))
        if clash.size:
            i = first[clash[0]]
            writers = np.flatnonzero(key == key[i]).tolist()
            raise ScheduleError(
                f"step {step_of[i]}: rank {self.dst[i]} chunk {self.dst_chunk[i]} is written by "
                f"{len(writers)} transfers ({', '.join(self._transfer_text(j, step_of) for j in writers)}); "
                f"a slot takes one copy, or only reduces, per step",
                step=int(step_of[i]), rank=int(self.dst[i]), chunk=int(self.dst_chunk[i]))
        # per step: are the reduce targets distinct? (lets simulate use a fast path)
        shared = np.zeros(self.n_steps, dtype=bool)
        shared[step_of[first[count > 1]]] = True
        self._reduce_targets_shared = _frozen(shared, bool)

    def describe_transfer(self, i):
        """``(step, text)`` for flat transfer ``i``: its step and its words in error messages,
        "transfer 2 (copy rank 0 chunk 3 -> rank 1 chunk 3)"."""
        step = int(np.searchsorted(self.step_starts, i, side="right") - 1)
        return step, self._transfer_text(i, None)

    def _transfer_text(self, i, step_of):
        step = (int(np.searchsorted(self.step_starts, i, side="right") - 1) if step_of is None
                else step_of[i])
        j = i - self.step_starts[step]
        kind = "reduce" if self.reduce[i] else "copy"
        return (f"transfer {j} ({kind} rank {self.src[i]} chunk {self.src_chunk[i]} -> "
                f"rank {self.dst[i]} chunk {self.dst_chunk[i]})")


def _as_list(value, what):
    if isinstance(value, (str, bytes)):
        raise ScheduleError(f"{what} must be a list, got a string")
    try:
        return list(value)
    except TypeError:
        raise ScheduleError(f"{what} must be a list, got {type(value).__name__}") from None


def _positive_int(value, what, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ScheduleError(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise ScheduleError(f"{what} must be >= {minimum}, got {value}")
    return int(value)


# (first collective, second collective) -> what running one after the other computes
_COMPOSITIONS = {
    ("reduce_scatter", "all_gather"): "all_reduce",
    ("reduce", "broadcast"): "all_reduce",
}


def compose(first, second, *, collective=None, name=None):
    """Run ``first`` then ``second`` on the same buffers, as one Schedule.

    The result's collective is inferred for the known pairs (reduce-scatter then
    all-gather is an all-reduce; reduce then broadcast from the same root is an
    all-reduce) or given by ``collective``. Use :func:`collectives.verify` to check it.
    """
    if first.n_ranks != second.n_ranks:
        raise ScheduleError(
            f"cannot compose schedules over {first.n_ranks} and {second.n_ranks} ranks")
    if first.n_chunks != second.n_chunks:
        raise ScheduleError(
            f"cannot compose schedules with {first.n_chunks} and {second.n_chunks} chunks; "
            "split both buffers the same way")
    if collective is None:
        collective = _COMPOSITIONS.get((first.collective, second.collective))
        if collective is None or (first.root is not None and first.root != second.root):
            raise ScheduleError(
                f"composing {first.collective} then {second.collective} is not a known "
                "collective; pass collective=... to say what it computes")
    spec = collective_spec(collective)
    root = first.root if first.root is not None else second.root
    fields = {f: np.concatenate([getattr(first, f), getattr(second, f)]) for f in _FIELDS}
    step = np.concatenate([first.step_of_transfer, second.step_of_transfer + first.n_steps])
    return Schedule.from_arrays(
        spec.name, first.n_ranks, first.n_chunks, step, fields["src"], fields["dst"],
        fields["src_chunk"], fields["dst_chunk"], np.concatenate([first.reduce, second.reduce]),
        n_steps=first.n_steps + second.n_steps, root=root if spec.rooted else None,
        n_scratch=max(first.n_scratch, second.n_scratch),
        name=name or f"{first.name} + {second.name}",
        counts=first.counts if spec.name == "all_to_all_v" else None)
