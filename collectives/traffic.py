"""Traffic: what a Schedule puts on the wire, step by step, without listing its chunks.

Costing a step needs who sends how many chunks to whom, not which chunks. Regular
algorithms repeat one pattern for many steps (a ring all-reduce sends r -> r+1 in each of
its 2(n-1) steps), so a :class:`Traffic` is a sequence of :class:`Run` s: ``repeat``
consecutive steps, each sending ``chunks[i]`` chunks from participant ``src[i]`` to
``dst[i]``. A 32,768-rank ring all-reduce is one run of 32,768 pairs, where the list of its
transfers would have 2.1e9 entries; :func:`collectives.time` works from this form only.

The transforms of :mod:`collectives.transforms` have a counterpart here (``then`` for
compose, ``reversed`` for dual, ``together`` for parallel, ``pipelined``, ``embedded`` for
embed and groups, ``placed`` for placement on a bigger topology), so a Schedule built from
regular parts keeps a compact Traffic. Tests hold every compact Traffic equal to the one
derived from the Schedule's explicit transfers wherever both can be built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollectivesError
from .validation import integer, renamed_arg

__all__ = ["Run", "Traffic"]

_Scalar = TypeVar("_Scalar", bound=np.generic)

#: one step's pairs: (src, dst, chunks) flat arrays of one length
_Pairs = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]


def _readonly(array: ArrayLike, dtype: type[_Scalar]) -> NDArray[_Scalar]:
    out = np.array(array, dtype=dtype)  # a private copy
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Run:
    """``repeat`` consecutive steps, each sending ``chunks[i]`` chunks ``src[i] -> dst[i]``.

    A pair may appear more than once in a run (the traffic of listed transfers is not
    merged); costs add its entries up. ``src == dst`` pairs (local copies) cost nothing.
    ``chunks`` is a float array: whole chunk counts for a Schedule's traffic, and scaled
    amounts when the traffic of jobs with different chunk sizes is combined.
    """

    repeat: int
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    chunks: NDArray[np.float64]

    def __post_init__(self) -> None:
        for name in ("src", "dst"):
            object.__setattr__(self, name, _readonly(getattr(self, name), np.int64))
        object.__setattr__(self, "chunks", _readonly(self.chunks, np.float64))

    @property
    def n_pairs(self) -> int:
        return len(self.src)

    def same_pattern(self, other: "Run") -> bool:
        return (
            self.n_pairs == other.n_pairs
            and np.array_equal(self.src, other.src)
            and np.array_equal(self.dst, other.dst)
            and np.array_equal(self.chunks, other.chunks)
        )


def _canonical(src: ArrayLike, dst: ArrayLike, chunks: ArrayLike) -> _Pairs:
    """Merge repeated (src, dst) pairs, sorted by pair: the canonical form of one step."""
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    c = np.broadcast_to(np.asarray(chunks, dtype=np.float64), s.shape)
    if not s.size:
        return s, d, c
    width = int(max(s.max(), d.max())) + 1
    key = s * width + d
    uniq, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=c, minlength=len(uniq)).astype(np.float64, copy=False)
    return uniq // width, uniq % width, total


class Traffic:
    """A sequence of :class:`Run` s: the per-step traffic of a Schedule."""

    runs: tuple[Run, ...]

    def __init__(self, runs: Iterable[Run] = ()) -> None:
        merged: list[Run] = []
        for run in runs:
            if run.repeat <= 0:
                continue
            if merged and merged[-1].same_pattern(run):
                last = merged.pop()
                run = Run(last.repeat + run.repeat, last.src, last.dst, last.chunks)
            merged.append(run)
        self.runs = tuple(merged)

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def run(cls, repeat: int, src: ArrayLike, dst: ArrayLike, chunks: ArrayLike = 1) -> "Traffic":
        """One run (pairs canonicalised: repeated pairs merged)."""
        return cls([Run(int(repeat), *_canonical(src, dst, chunks))])

    @classmethod
    def from_transfers(
        cls, step: ArrayLike, src: ArrayLike, dst: ArrayLike, n_steps: int
    ) -> "Traffic":
        """The traffic of explicit transfers (``step`` sorted, one entry per chunk moved):
        one run per step, its pairs as listed (repeated pairs are not merged: nothing is
        sorted, and costs add them up the same)."""
        step = np.asarray(step, dtype=np.int64)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if not step.size:
            return cls([Run(n_steps, src[:0], dst[:0], src[:0])]) if n_steps else cls()
        bounds = np.searchsorted(step, np.arange(n_steps + 1))
        ones = np.ones(len(src))
        return cls(
            [
                Run(1, src[a:b], dst[a:b], ones[a:b])
                for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
            ]
        )

    # ---- sizes -------------------------------------------------------------------------
    @property
    def n_steps(self) -> int:
        return sum(r.repeat for r in self.runs)

    @property
    def n_transfers(self) -> int:
        """Chunk transfers over all steps (what the explicit Schedule would list)."""
        return int(round(sum(r.repeat * float(r.chunks.sum()) for r in self.runs)))

    def max_participant(self) -> int:
        return max((int(max(r.src.max(), r.dst.max())) for r in self.runs if r.n_pairs), default=-1)

    def per_step(self) -> list[dict[tuple[int, int], float]]:
        """``[{(src, dst): chunks}, ...]``, one dict per step (for tests on small cases)."""
        out: list[dict[tuple[int, int], float]] = []
        for run in self.runs:
            step: dict[tuple[int, int], float] = {}
            for pair, c in zip(zip(run.src.tolist(), run.dst.tolist()), run.chunks.tolist()):
                step[pair] = step.get(pair, 0) + c
            step = {k: round(v) if float(v).is_integer() else v for k, v in step.items()}
            out.extend(dict(step) for _ in range(run.repeat))
        return out

    def run_of_step(self) -> NDArray[np.int64]:
        """For every step, the index of the run it belongs to."""
        return np.repeat(np.arange(len(self.runs)), [r.repeat for r in self.runs])

    # ---- the transforms' counterparts ---------------------------------------------------
    def then(self, other: "Traffic") -> "Traffic":
        """This traffic, then ``other`` (compose)."""
        return Traffic(self.runs + other.runs)

    def reversed(self) -> "Traffic":
        """Steps in reverse order, every transfer reversed (dual)."""
        return Traffic(
            [Run(r.repeat, *_canonical(r.dst, r.src, r.chunks)) for r in reversed(self.runs)]
        )

    def scaled(self, factor: float) -> "Traffic":
        """Every pair moves ``factor`` times as much (chunks counted in another unit)."""
        return Traffic([Run(r.repeat, r.src, r.dst, r.chunks * float(factor)) for r in self.runs])

    def placed(self, mapping: ArrayLike) -> "Traffic":
        """Participants renamed through ``mapping`` (participant -> node, one-to-one): a
        placement. The identity mapping returns this traffic itself."""
        mapping = np.asarray(mapping, dtype=np.int64)
        if np.array_equal(mapping, np.arange(len(mapping))):
            return self
        # one-to-one: pairs stay distinct, so nothing needs merging
        return Traffic([Run(r.repeat, mapping[r.src], mapping[r.dst], r.chunks) for r in self.runs])

    def embedded(
        self, groups: ArrayLike, block_length: int = 1, switch_map: ArrayLike | None = None
    ) -> "Traffic":
        """The traffic of this (small) schedule run in every group at once: participant p
        of group g is ``groups[g, p]`` (switch participants through ``switch_map[g, s]``),
        and each chunk stands for ``block_length`` chunks of the big buffer."""
        groups = np.asarray(groups, dtype=np.int64)
        if switch_map is not None:
            groups = np.concatenate([groups, np.asarray(switch_map, dtype=np.int64)], axis=1)
        runs: list[Run] = []
        for r in self.runs:
            src = groups[:, r.src].ravel()
            dst = groups[:, r.dst].ravel()
            chunks = np.tile(r.chunks * float(block_length), len(groups))
            runs.append(Run(r.repeat, *_canonical(src, dst, chunks)))
        return Traffic(runs)

    def together(self, *others: "Traffic") -> "Traffic":
        """Step i of every traffic in step i of the result (parallel; lockstep concurrency)."""
        parts = (self,) + others
        part_ends = [np.cumsum([r.repeat for r in t.runs], dtype=np.int64) for t in parts]
        ends = sorted({0}.union(*(set(e.tolist()) for e in part_ends)))
        runs: list[Run] = []
        for a, b in zip(ends[:-1], ends[1:]):
            src: list[NDArray[np.int64]] = []
            dst: list[NDArray[np.int64]] = []
            chunks: list[NDArray[np.float64]] = []
            for t, t_ends in zip(parts, part_ends):
                i = int(np.searchsorted(t_ends, a, side="right"))  # the run holding step a
                if i < len(t.runs):
                    run = t.runs[i]
                    src.append(run.src)
                    dst.append(run.dst)
                    chunks.append(run.chunks)
            runs.append(
                Run(
                    b - a,
                    *_canonical(np.concatenate(src), np.concatenate(dst), np.concatenate(chunks)),
                )
            )
        return Traffic(runs)

    def pipelined(self, n_segments: int | None = None, *, k: int | None = None) -> "Traffic":
        """Segment j of every chunk runs step s at step s + j (``transforms.pipelined``):
        with ``k = n_segments`` segments, step t carries the transfers of steps t-k+1 .. t,
        each moving one segment. (``k``: the old keyword, still accepted.)"""
        k, what = renamed_arg(n_segments, None, k, "n_segments", "k")
        k = integer(k, f"{what} (number of pipeline segments)", minimum=1)
        n = self.n_steps
        if n == 0:
            return Traffic()
        starts = np.concatenate([[0], np.cumsum([r.repeat for r in self.runs])])
        # the window [t-k+1, t] meets the same runs, equally, only while it lies inside one
        # run: every step where it straddles a run boundary (and every step of the fill and
        # the drain) is a segment of its own
        cut_set = {n + k - 1}
        for start in starts.tolist():
            cut_set.update(range(start, start + k))
        cuts = sorted(c for c in cut_set if 0 <= c <= n + k - 1)
        runs: list[Run] = []
        for a, b in zip(cuts[:-1], cuts[1:]):
            lo, hi = max(0, a - k + 1), min(a, n - 1)  # window of step a
            src: list[NDArray[np.int64]] = []
            dst: list[NDArray[np.int64]] = []
            chunks: list[NDArray[np.float64]] = []
            first = int(np.searchsorted(starts, lo, side="right")) - 1
            last = int(np.searchsorted(starts, hi, side="right")) - 1
            for i in range(first, last + 1):
                run = self.runs[i]
                overlap = min(hi + 1, starts[i + 1]) - max(lo, starts[i])
                if overlap > 0 and run.n_pairs:
                    src.append(run.src)
                    dst.append(run.dst)
                    chunks.append(run.chunks * float(overlap))
            if src:
                runs.append(
                    Run(
                        b - a,
                        *_canonical(
                            np.concatenate(src), np.concatenate(dst), np.concatenate(chunks)
                        ),
                    )
                )
            else:
                runs.append(Run(b - a, *_canonical([], [], [])))
        return Traffic(runs)

    def check_participants(self, n_participants: int, what: str = "schedule") -> None:
        """Raise if a pair names a participant outside ``0..n_participants-1``."""
        top = self.max_participant()
        low = min((int(min(r.src.min(), r.dst.min())) for r in self.runs if r.n_pairs), default=0)
        if top >= n_participants or low < 0:
            raise CollectivesError(
                f"{what}: its traffic names participant {top if top >= n_participants else low}"
                f", outside 0..{n_participants - 1}"
            )

    def __repr__(self) -> str:
        return (
            f"Traffic({self.n_steps} steps in {len(self.runs)} runs, {self.n_transfers} transfers)"
        )
