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

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollectivesError, ScheduleError
from .semantics import REDUCTION_OPS, Collective, collective_spec
from .validation import choice, int_array, integer

if TYPE_CHECKING:
    from .traffic import Traffic

__all__ = [
    "Transfer",
    "Step",
    "Schedule",
    "TransferArrays",
    "compose",
    "schedule_arg",
    "LIST_LIMIT",
]

_FIELDS = ("src", "dst", "src_chunk", "dst_chunk")

_Scalar = TypeVar("_Scalar", bound=np.generic)
_Item = TypeVar("_Item")


class Transfer(NamedTuple):
    """One chunk moved from ``src`` to ``dst`` (added into the target when ``reduce``)."""

    src: int
    dst: int
    src_chunk: int
    dst_chunk: int
    reduce: bool = False


class TransferArrays(TypedDict):
    """A Schedule's transfers as flat arrays, one entry per transfer, sorted by ``step``
    (what :meth:`Schedule.transfer_arrays` returns)."""

    step: NDArray[np.int64]
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    src_chunk: NDArray[np.int64]
    dst_chunk: NDArray[np.int64]
    reduce: NDArray[np.bool_]


class _Listed(TransferArrays):
    """The checked, read-only arrays of a listed Schedule: its transfers, where each step
    starts (``n_steps + 1`` entries) and, per step, whether two reduces share a target."""

    step_starts: NDArray[np.int64]
    shared_reduce: NDArray[np.bool_]


def _frozen(array: ArrayLike, dtype: type[_Scalar]) -> NDArray[_Scalar]:
    out = np.ascontiguousarray(array, dtype=dtype)
    if out is array:
        out = out.copy()
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Step:
    """The transfers of one synchronous step, as read-only parallel arrays."""

    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    src_chunk: NDArray[np.int64]
    dst_chunk: NDArray[np.int64]
    reduce: NDArray[np.bool_]

    @classmethod
    def from_transfers(cls, transfers: Iterable[Any], *, step_index: int | None = None) -> Step:
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
        src, dst, src_chunk, dst_chunk, reduce = zip(*rows)
        return cls(
            np.array(src, dtype=np.int64),
            np.array(dst, dtype=np.int64),
            np.array(src_chunk, dtype=np.int64),
            np.array(dst_chunk, dtype=np.int64),
            np.array(reduce, dtype=bool),
        )

    def __post_init__(self) -> None:
        for name in _FIELDS:
            object.__setattr__(self, name, _frozen(getattr(self, name), np.int64))
        object.__setattr__(self, "reduce", _frozen(self.reduce, np.bool_))

    def __len__(self) -> int:
        return len(self.src)

    def __iter__(self) -> Iterator[Transfer]:
        for row in zip(*(getattr(self, f).tolist() for f in _FIELDS), self.reduce.tolist()):
            yield Transfer(*row)

    def __repr__(self) -> str:
        return f"Step({list(self)!r})"


def _parse_transfer(t: Any, where: str, step_index: int | None) -> tuple[int, int, int, int, bool]:
    """One transfer (a tuple or a :class:`Transfer`: it is a tuple too, checked the same way,
    since a NamedTuple checks nothing itself) as ``(src, dst, src_chunk, dst_chunk, reduce)``."""
    try:
        fields = tuple(t)
    except TypeError:
        raise ScheduleError(
            f"{where}: expected a tuple (src, dst, src_chunk, dst_chunk[, reduce]), got {t!r}",
            step=step_index,
        ) from None
    if len(fields) not in (4, 5):
        raise ScheduleError(
            f"{where}: expected 4 or 5 fields (src, dst, src_chunk, dst_chunk[, reduce]), "
            f"got {len(fields)}: {t!r}",
            step=step_index,
        )
    ints: list[int] = []
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
    src, dst, src_chunk, dst_chunk = ints
    return src, dst, src_chunk, dst_chunk, bool(flag)


#: a Schedule lists its transfers (for verify, simulate, viz, dist) only up to this many;
#: larger ones (a 32k-rank ring) are costed from their Traffic alone
LIST_LIMIT = 50_000_000

#: what ``Schedule.from_traffic`` calls to list the transfers: flat arrays by field name
_Listing = Callable[[], Mapping[str, ArrayLike]]


class Schedule:
    """A collective as synchronous steps of chunk transfers.

    Parameters: ``collective`` (a name from :data:`collectives.semantics.COLLECTIVES`),
    ``n_ranks``, ``n_chunks`` (data chunks in the full buffer ``S`` of one rank's own
    collective; each transfer moves ``S / n_chunks`` bytes), ``steps`` (a list of
    :class:`Step` or of lists of transfer tuples), ``root`` (rooted collectives: a position
    in each group), ``n_scratch`` (extra empty slots per rank), a ``name``, ``counts``
    (all_to_all_v: ``counts[s, d]`` of the ``n_chunks / m`` slots of the part for d hold
    data), ``groups`` (an int array (G, m): the collective runs inside every group at once,
    group members in position order; default one group of all ranks), ``n_switches``
    (switch participants, numbered ``n_ranks ..``, that receive, reduce and multicast:
    in-network reduction; they start empty and have no postcondition), ``op`` (the
    reduction, "sum" or "max") and, for ``"permute"``, ``peers`` (``peers[p]``: the position
    that receives position p's buffer, -1 for none; send/recv is a permute of one pair).

    Construction checks shape only (participants and chunks in range, no slot written twice
    in a step, no reduce in a copy-only collective, no transfer between two groups);
    :func:`collectives.verify` checks that the schedule computes its collective. A Schedule
    cannot be changed once built (:meth:`renamed` gives a copy under another name).

    Every Schedule has a :attr:`traffic` (who sends how many chunks to whom in each step,
    see :mod:`collectives.traffic`); regular algorithms at cluster scale are built from
    their traffic and list their transfers only when asked (and only up to
    :data:`LIST_LIMIT`).
    """

    collective: str
    n_ranks: int
    n_chunks: int
    n_scratch: int
    n_switches: int
    groups: NDArray[np.int64]
    op: str
    root: int | None
    name: str
    counts: NDArray[np.int64] | None
    peers: NDArray[np.int64] | None
    _n_steps: int
    _traffic: Traffic | None
    _listing: _Listing | None
    _arrays: _Listed | None

    def __init__(
        self,
        collective: str,
        n_ranks: int,
        n_chunks: int,
        steps: Iterable[Step | Iterable[Any]] = (),
        *,
        root: int | None = None,
        n_scratch: int = 0,
        name: str | None = None,
        counts: ArrayLike | None = None,
        groups: ArrayLike | None = None,
        n_switches: int = 0,
        op: str = "sum",
        peers: ArrayLike | None = None,
    ) -> None:
        parsed = [
            s if isinstance(s, Step) else Step.from_transfers(s, step_index=i)
            for i, s in enumerate(_as_list(steps, "steps"))
        ]
        per_step = np.array([len(s) for s in parsed], dtype=np.int64)
        arrays: dict[str, NDArray[np.int64] | NDArray[np.bool_]] = {
            f: np.concatenate([getattr(s, f) for s in parsed]) if parsed else np.zeros(0, np.int64)
            for f in _FIELDS
        }
        arrays["reduce"] = (
            np.concatenate([s.reduce for s in parsed]) if parsed else np.zeros(0, bool)
        )
        arrays["step"] = np.repeat(np.arange(len(parsed)), per_step)
        self._init(
            collective,
            n_ranks,
            n_chunks,
            len(parsed),
            root,
            n_scratch,
            name,
            counts,
            groups,
            n_switches,
            op,
            arrays=arrays,
            peers=peers,
        )

    @classmethod
    def from_arrays(
        cls,
        collective: str,
        n_ranks: int,
        n_chunks: int,
        step: ArrayLike,
        src: ArrayLike,
        dst: ArrayLike,
        src_chunk: ArrayLike,
        dst_chunk: ArrayLike,
        reduce: ArrayLike = False,
        *,
        n_steps: int | None = None,
        root: int | None = None,
        n_scratch: int = 0,
        name: str | None = None,
        counts: ArrayLike | None = None,
        groups: ArrayLike | None = None,
        n_switches: int = 0,
        op: str = "sum",
        peers: ArrayLike | None = None,
    ) -> Schedule:
        """Fast constructor for builders: flat per-transfer arrays plus each one's ``step``.

        ``step`` must be non-decreasing; ``n_steps`` allows trailing empty steps.
        """
        steps = np.asarray(step, dtype=np.int64)
        if steps.size and np.any(np.diff(steps) < 0):
            raise ScheduleError("from_arrays: transfers must be sorted by step")
        if steps.size and steps[0] < 0:
            raise ScheduleError("from_arrays: step indices must be >= 0")
        n_steps = int(steps[-1]) + 1 if n_steps is None and steps.size else int(n_steps or 0)
        if steps.size and steps[-1] >= n_steps:
            raise ScheduleError(f"from_arrays: a transfer has step >= n_steps={n_steps}")
        arrays: dict[str, ArrayLike] = dict(
            zip(_FIELDS + ("step",), np.broadcast_arrays(src, dst, src_chunk, dst_chunk, steps))
        )
        arrays["reduce"] = np.broadcast_to(np.asarray(reduce, dtype=bool), steps.shape)
        obj = cls.__new__(cls)
        obj._init(
            collective,
            n_ranks,
            n_chunks,
            n_steps,
            root,
            n_scratch,
            name,
            counts,
            groups,
            n_switches,
            op,
            arrays=arrays,
            peers=peers,
        )
        return obj

    @classmethod
    def from_traffic(
        cls,
        collective: str,
        n_ranks: int,
        n_chunks: int,
        traffic: Traffic,
        listing: _Listing,
        *,
        root: int | None = None,
        n_scratch: int = 0,
        name: str | None = None,
        counts: ArrayLike | None = None,
        groups: ArrayLike | None = None,
        n_switches: int = 0,
        op: str = "sum",
        peers: ArrayLike | None = None,
    ) -> Schedule:
        """A Schedule known by its :class:`~collectives.traffic.Traffic`, listed on demand.

        ``listing()`` returns the explicit transfers as a dict of flat arrays ``step``,
        ``src``, ``dst``, ``src_chunk``, ``dst_chunk``, ``reduce`` (as for
        :meth:`from_arrays`); it is called the first time they are needed (verify, simulate,
        viz) and the result is checked like any Schedule's.
        """
        obj = cls.__new__(cls)
        obj._init(
            collective,
            n_ranks,
            n_chunks,
            traffic.n_steps,
            root,
            n_scratch,
            name,
            counts,
            groups,
            n_switches,
            op,
            traffic=traffic,
            listing=listing,
            peers=peers,
        )
        return obj

    def _init(
        self,
        collective: str,
        n_ranks: int,
        n_chunks: int,
        n_steps: int,
        root: int | None,
        n_scratch: int,
        name: str | None,
        counts: ArrayLike | None,
        groups: ArrayLike | None,
        n_switches: int,
        op: str,
        *,
        arrays: Mapping[str, ArrayLike] | None = None,
        traffic: Traffic | None = None,
        listing: _Listing | None = None,
        peers: ArrayLike | None = None,
    ) -> None:
        set_ = partial(object.__setattr__, self)
        try:
            spec = collective_spec(collective)
        except CollectivesError as e:
            raise ScheduleError(str(e)) from None
        set_("collective", spec.name)
        set_("n_ranks", integer(n_ranks, "n_ranks", minimum=1, error=ScheduleError))
        set_("n_chunks", integer(n_chunks, "n_chunks", minimum=1, error=ScheduleError))
        set_("n_scratch", integer(n_scratch, "n_scratch", minimum=0, error=ScheduleError))
        set_("n_switches", integer(n_switches, "n_switches", minimum=0, error=ScheduleError))
        set_("groups", _check_groups(groups, self.n_ranks))
        choice(op, "op", tuple(REDUCTION_OPS), error=ScheduleError)
        set_("op", op)
        try:
            spec.check_chunks(self.group_size, self.n_chunks)
        except CollectivesError as e:
            raise ScheduleError(str(e)) from None
        if spec.rooted:
            if root is None:
                raise ScheduleError(f"{spec.name} needs a root rank")
            checked_root = integer(root, "root", minimum=0, error=ScheduleError)
            set_("root", checked_root)
            if checked_root >= self.group_size:
                raise ScheduleError(f"root {checked_root} is not a rank (0..{self.group_size - 1})")
        else:
            set_("root", None)
        set_("name", str(name or spec.name))
        set_("counts", spec.check_counts(self.group_size, self.n_chunks, counts))
        set_("peers", spec.check_peers(self.group_size, peers))
        set_("_n_steps", int(n_steps))
        set_("_traffic", traffic)
        set_("_listing", listing)
        set_("_arrays", None)
        if traffic is not None:
            try:
                traffic.check_participants(self.n_participants, self.name)
            except CollectivesError as e:
                raise ScheduleError(str(e)) from None
        if arrays is not None:
            self._set_arrays(arrays, spec)

    def __setattr__(self, key: str, value: object) -> None:
        raise ScheduleError(
            f"a Schedule cannot be changed once built (tried to set {key!r}); build a new one "
            "(renamed() gives a copy under another name)"
        )

    def __getstate__(self) -> dict[str, object]:
        """Pickled (to run on other processes) with its transfers listed, not the function
        that lists them."""
        self._listed()
        return {k: v for k, v in vars(self).items() if k != "_listing"} | {"_listing": None}

    def __setstate__(self, state: Mapping[str, object]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)

    def renamed(self, name: str) -> Schedule:
        """The same schedule under another ``name`` (shares its arrays)."""
        other = object.__new__(type(self))
        for key, value in vars(self).items():
            object.__setattr__(other, key, value)
        object.__setattr__(other, "name", str(name))
        return other

    # ---- groups and participants -----------------------------------------------------------
    @property
    def group_size(self) -> int:
        """Ranks per group (``m``): all ranks unless the schedule runs over groups."""
        return int(self.groups.shape[1])

    @property
    def n_groups(self) -> int:
        return int(self.groups.shape[0])

    @property
    def n_participants(self) -> int:
        """Ranks plus switch participants: the rows of the working buffers."""
        return self.n_ranks + self.n_switches

    @property
    def group_of(self) -> NDArray[np.int64]:
        """For every rank, the index of its group."""
        out = np.empty(self.n_ranks, dtype=np.int64)
        out[self.groups] = np.arange(self.n_groups)[:, None]
        return out

    @property
    def position(self) -> NDArray[np.int64]:
        """For every rank, its position in its group (its rank in the group's collective)."""
        out = np.empty(self.n_ranks, dtype=np.int64)
        out[self.groups] = np.arange(self.group_size)[None, :]
        return out

    def where(self, rank: int) -> str:
        """Words for a participant in messages: "rank 5" or "rank 5 (group 1, position 1)"
        or "switch 0"."""
        rank = int(rank)
        if self.n_ranks <= rank < self.n_participants:
            return f"switch {rank - self.n_ranks}"
        if self.n_groups == 1 or not 0 <= rank < self.n_ranks:
            return f"rank {rank}"
        return (
            f"rank {rank} (group {int(self.group_of[rank])}, position {int(self.position[rank])})"
        )

    # ---- traffic and the listed transfers ----------------------------------------------------
    @property
    def traffic(self) -> Traffic:
        """Who sends how many chunks to whom in each step
        (:class:`~collectives.traffic.Traffic`)."""
        if self._traffic is None:
            from .traffic import Traffic

            a = self._listed()
            traffic = Traffic.from_transfers(a["step"], a["src"], a["dst"], self.n_steps)
            object.__setattr__(self, "_traffic", traffic)
            return traffic
        return self._traffic

    @property
    def is_listed(self) -> bool:
        """Whether the explicit transfers exist (without building them)."""
        return self._arrays is not None

    def _listed(self) -> _Listed:
        if self._arrays is None:
            return self._set_arrays(self._list(), collective_spec(self.collective))
        return self._arrays

    def _list(self) -> Mapping[str, ArrayLike]:
        """The arrays of the listing function (a Schedule built from its traffic), once its
        size is checked against :data:`LIST_LIMIT`."""
        if self._listing is None or self._traffic is None:  # from_traffic sets both
            raise CollectivesError(
                f"{self.name} has neither listed transfers nor a listing (internal error)"
            )
        total = self._traffic.n_transfers
        if total > LIST_LIMIT:
            raise CollectivesError(
                f"{self.name} over {self.n_ranks} ranks has {total:,} transfers, more than "
                f"the {LIST_LIMIT:,} a Schedule lists; collectives.time costs it from its "
                "traffic pattern, and verify, simulate and viz take a smaller instance of "
                "the same algorithm"
            )
        return self._listing()

    def transfer_arrays(self) -> TransferArrays:
        """The flat transfer arrays (``step``, ``src``, ``dst``, ``src_chunk``, ``dst_chunk``,
        ``reduce``): the checked ones if the schedule is listed, else freshly built ones,
        neither checked nor kept (transforms build their own listing from them, which is
        then checked once)."""
        if self._arrays is not None:
            a = self._arrays
            return {
                "step": a["step"],
                "src": a["src"],
                "dst": a["dst"],
                "src_chunk": a["src_chunk"],
                "dst_chunk": a["dst_chunk"],
                "reduce": a["reduce"],
            }
        raw = self._list()
        src = np.asarray(raw["src"], dtype=np.int64)
        return {
            "step": np.asarray(raw["step"], dtype=np.int64),
            "src": src,
            "dst": np.asarray(raw["dst"], dtype=np.int64),
            "src_chunk": np.asarray(raw["src_chunk"], dtype=np.int64),
            "dst_chunk": np.asarray(raw["dst_chunk"], dtype=np.int64),
            "reduce": np.broadcast_to(np.asarray(raw["reduce"], dtype=bool), src.shape),
        }

    def _set_arrays(self, arrays: Mapping[str, ArrayLike], spec: Collective) -> _Listed:
        """Check and keep ``arrays`` (flat transfer arrays by field name) as the listed
        transfers; on a ScheduleError nothing is kept."""
        src = _frozen(arrays["src"], np.int64)
        step = np.asarray(arrays["step"], dtype=np.int64)
        per_step = np.bincount(step, minlength=self._n_steps).astype(np.int64)
        listed: _Listed = {
            "step": _frozen(step, np.int64),
            "src": src,
            "dst": _frozen(arrays["dst"], np.int64),
            "src_chunk": _frozen(arrays["src_chunk"], np.int64),
            "dst_chunk": _frozen(arrays["dst_chunk"], np.int64),
            "reduce": _frozen(
                np.broadcast_to(np.asarray(arrays["reduce"], dtype=bool), src.shape), np.bool_
            ),
            "step_starts": _frozen(np.concatenate([[0], np.cumsum(per_step)]), np.int64),
            # replaced below by what _check_shape finds (which steps share a reduce target)
            "shared_reduce": _frozen(np.zeros(self._n_steps, dtype=bool), np.bool_),
        }
        object.__setattr__(self, "_arrays", listed)  # the messages of _check_shape read it
        try:
            listed["shared_reduce"] = self._check_shape(listed, spec)
        except ScheduleError:
            object.__setattr__(self, "_arrays", None)
            raise
        return listed

    @property
    def src(self) -> NDArray[np.int64]:
        """Source participant per transfer."""
        return self._listed()["src"]

    @property
    def dst(self) -> NDArray[np.int64]:
        """Destination per transfer."""
        return self._listed()["dst"]

    @property
    def src_chunk(self) -> NDArray[np.int64]:
        """Slot read per transfer."""
        return self._listed()["src_chunk"]

    @property
    def dst_chunk(self) -> NDArray[np.int64]:
        """Slot written."""
        return self._listed()["dst_chunk"]

    @property
    def reduce(self) -> NDArray[np.bool_]:
        """True where a transfer reduces."""
        return self._listed()["reduce"]

    @property
    def step_starts(self) -> NDArray[np.int64]:
        """Index of each step's first transfer (n_steps + 1 entries)."""
        return self._listed()["step_starts"]

    @property
    def step_of_transfer(self) -> NDArray[np.int64]:
        """The step index of every transfer (flat array)."""
        return self._listed()["step"]

    @property
    def shared_reduce_steps(self) -> NDArray[np.bool_]:
        """Per step: whether two reduces of that step target the same slot (simulate then
        sums them with ``ufunc.at``)."""
        return self._listed()["shared_reduce"]

    # ---- derived sizes ------------------------------------------------------------------
    @property
    def n_steps(self) -> int:
        return self._n_steps

    @property
    def n_transfers(self) -> int:
        if self._arrays is not None:
            return len(self._arrays["src"])
        return self.traffic.n_transfers

    @property
    def n_slots(self) -> int:
        """Buffer slots per rank: data chunks plus scratch."""
        return self.n_chunks + self.n_scratch

    def step(self, i: int) -> Step:
        """Step ``i`` as a :class:`Step` of read-only views."""
        if not -self.n_steps <= i < self.n_steps:
            raise IndexError(f"step {i} out of range: the schedule has {self.n_steps} steps")
        i %= self.n_steps
        a, b = self.step_starts[i], self.step_starts[i + 1]
        return Step(
            self.src[a:b], self.dst[a:b], self.src_chunk[a:b], self.dst_chunk[a:b], self.reduce[a:b]
        )

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self.step(i) for i in range(self.n_steps))

    def to_lists(self) -> list[list[tuple[int, ...]]]:
        """Plain nested lists ``[[(src, dst, src_chunk, dst_chunk, reduce), ...], ...]``."""
        return [[tuple(t) for t in s] for s in self.steps]

    def __repr__(self) -> str:
        root = "" if self.root is None else f", root={self.root}"
        groups = "" if self.n_groups == 1 else f", {self.n_groups} groups of {self.group_size}"
        switches = "" if not self.n_switches else f", {self.n_switches} switches"
        op = "" if self.op == "sum" else f", op={self.op}"
        return (
            f"Schedule({self.name!r}: {self.collective}, n_ranks={self.n_ranks}, "
            f"n_chunks={self.n_chunks}{root}{groups}{switches}{op}, {self.n_steps} steps, "
            f"{self.n_transfers} transfers)"
        )

    # ---- shape validation ----------------------------------------------------------------
    def _check_shape(self, a: _Listed, spec: Collective) -> NDArray[np.bool_]:
        """Raise a ScheduleError if the listed transfers ``a`` break a shape rule, else
        return, per step, whether two of its reduces target the same slot."""
        step_of = a["step"]
        n_part = self.n_participants
        limits = (
            ("src", a["src"], n_part),
            ("dst", a["dst"], n_part),
            ("src_chunk", a["src_chunk"], self.n_slots),
            ("dst_chunk", a["dst_chunk"], self.n_slots),
        )
        for f, values, limit in limits:
            bad = np.flatnonzero((values < 0) | (values >= limit))
            if bad.size:
                i = bad[0]
                what = (
                    "rank" + (" or switch" if self.n_switches else "")
                    if f in ("src", "dst")
                    else "chunk slot"
                )
                raise ScheduleError(
                    f"step {step_of[i]}, {self._transfer_text(i)}: {f} {values[i]} "
                    f"is not a {what} (0..{limit - 1})",
                    step=int(step_of[i]),
                )
        if not spec.reducing and a["reduce"].any():
            i = np.flatnonzero(a["reduce"])[0]
            raise ScheduleError(
                f"step {step_of[i]}, {self._transfer_text(i)}: {spec.name} only "
                f"moves data; a reduce transfer has no place in it",
                step=int(step_of[i]),
            )
        if self.n_groups > 1:
            both_ranks = (a["src"] < self.n_ranks) & (a["dst"] < self.n_ranks)
            group_of = self.group_of
            across = np.flatnonzero(both_ranks)
            across = across[group_of[a["src"][across]] != group_of[a["dst"][across]]]
            if across.size:
                i = across[0]
                raise ScheduleError(
                    f"step {step_of[i]}, {self._transfer_text(i)}: it goes from "
                    f"{self.where(a['src'][i])} to {self.where(a['dst'][i])}; a collective "
                    "over groups moves data only inside each group",
                    step=int(step_of[i]),
                    rank=int(a["src"][i]),
                    group=int(group_of[a["src"][i]]),
                )
        # one copy, or any number of reduces, into each (step, participant, slot)
        key = (step_of * n_part + a["dst"]) * self.n_slots + a["dst_chunk"]
        uniq, first, inverse, count = np.unique(
            key, return_index=True, return_inverse=True, return_counts=True
        )
        copies = np.bincount(inverse, weights=~a["reduce"], minlength=len(uniq))
        clash = np.flatnonzero((count > 1) & (copies > 0))
        if clash.size:
            i = first[clash[0]]
            writers = np.flatnonzero(key == key[i]).tolist()
            raise ScheduleError(
                f"step {step_of[i]}: {self.where(a['dst'][i])} chunk {a['dst_chunk'][i]} is "
                f"written by {len(writers)} transfers "
                f"({', '.join(self._transfer_text(j) for j in writers)}); "
                f"a slot takes one copy, or only reduces, per step",
                step=int(step_of[i]),
                rank=int(a["dst"][i]),
                chunk=int(a["dst_chunk"][i]),
            )
        shared = np.zeros(self.n_steps, dtype=bool)
        shared[step_of[first[count > 1]]] = True
        return _frozen(shared, np.bool_)

    def describe_transfer(self, i: int) -> tuple[int, str]:
        """``(step, text)`` for flat transfer ``i``: its step and its words in error messages,
        "transfer 2 (copy rank 0 chunk 3 -> rank 1 chunk 3)"."""
        step = int(self.step_of_transfer[i])
        return step, self._transfer_text(i)

    def _transfer_text(self, i: int) -> str:
        a = self._listed()
        j = i - a["step_starts"][int(a["step"][i])]  # its index within its step
        kind = "reduce" if a["reduce"][i] else "copy"
        return (
            f"transfer {j} ({kind} {self.where(a['src'][i])} chunk {a['src_chunk'][i]} -> "
            f"{self.where(a['dst'][i])} chunk {a['dst_chunk'][i]})"
        )


def _check_groups(groups: ArrayLike | None, n_ranks: int) -> NDArray[np.int64]:
    """``groups`` as a read-only (G, m) array that partitions ``0..n_ranks-1``."""
    if groups is None:
        return _frozen(np.arange(n_ranks)[None, :], np.int64)
    g = int_array(groups, "groups", ndim=2, minimum=0, maximum=n_ranks - 1, error=ScheduleError)
    if g.size != n_ranks or len(np.unique(g)) != n_ranks:
        seen = np.bincount(g.ravel(), minlength=n_ranks)
        missing = np.flatnonzero(seen == 0)
        twice = np.flatnonzero(seen > 1)
        detail = (
            f"rank {twice[0]} is in {seen[twice[0]]} groups"
            if twice.size
            else f"rank {missing[0]} is in no group"
        )
        raise ScheduleError(
            f"groups must partition the {n_ranks} ranks into equal groups; {detail}"
        )
    return _frozen(g, np.int64)


def _as_list(value: Iterable[_Item], what: str) -> list[_Item]:
    if isinstance(value, (str, bytes)):
        raise ScheduleError(f"{what} must be a list, got a string")
    try:
        return list(value)
    except TypeError:
        raise ScheduleError(f"{what} must be a list, got {type(value).__name__}") from None


def schedule_arg(value: Any, what: str = "schedule") -> Schedule:
    """``value`` if it is a :class:`Schedule`, else a ScheduleError saying how to make one
    (the argument check of every function that takes a Schedule)."""
    if not isinstance(value, Schedule):
        raise ScheduleError(
            f"{what} must be a collectives.Schedule, got {type(value).__name__}; build one with "
            "collectives.Schedule(collective, n_ranks, n_chunks, steps)"
        )
    return value


# (first collective, second collective) -> what running one after the other computes
_COMPOSITIONS = {
    ("reduce_scatter", "all_gather"): "all_reduce",
    ("reduce", "broadcast"): "all_reduce",
}


def compose(
    first: Schedule, second: Schedule, *, collective: str | None = None, name: str | None = None
) -> Schedule:
    """Run ``first`` then ``second`` on the same buffers, as one Schedule.

    The result's collective is inferred for the known pairs (reduce-scatter then
    all-gather is an all-reduce; reduce then broadcast from the same root is an
    all-reduce) or given by ``collective``. Use :func:`collectives.verify` to check it.
    """
    for s in (first, second):
        if not isinstance(s, Schedule):
            raise ScheduleError(f"compose() takes Schedules, got {type(s).__name__}")
    if first.n_ranks != second.n_ranks:
        raise ScheduleError(
            f"cannot compose schedules over {first.n_ranks} and {second.n_ranks} ranks"
        )
    if first.n_chunks != second.n_chunks:
        raise ScheduleError(
            f"cannot compose schedules with {first.n_chunks} and {second.n_chunks} chunks; "
            "split both buffers the same way"
        )
    if not np.array_equal(first.groups, second.groups):
        raise ScheduleError("cannot compose schedules over different groups")
    if collective is None:
        collective = _COMPOSITIONS.get((first.collective, second.collective))
        if collective is None or (first.root is not None and first.root != second.root):
            raise ScheduleError(
                f"composing {first.collective} then {second.collective} is not a known "
                "collective; pass collective=... to say what it computes"
            )
    spec = collective_spec(collective)
    root = first.root if first.root is not None else second.root
    options: dict[str, Any] = dict(
        root=root if spec.rooted else None,
        n_scratch=max(first.n_scratch, second.n_scratch),
        name=name or f"{first.name} + {second.name}",
        counts=first.counts if spec.name == "all_to_all_v" else None,
        peers=first.peers if spec.name == "permute" else None,
        groups=None if first.n_groups == 1 else first.groups,
        n_switches=max(first.n_switches, second.n_switches),
        op=first.op,
    )

    def listing() -> Mapping[str, ArrayLike]:
        a, b = first.transfer_arrays(), second.transfer_arrays()
        return {
            "step": np.concatenate([a["step"], b["step"] + first.n_steps]),
            "src": np.concatenate([a["src"], b["src"]]),
            "dst": np.concatenate([a["dst"], b["dst"]]),
            "src_chunk": np.concatenate([a["src_chunk"], b["src_chunk"]]),
            "dst_chunk": np.concatenate([a["dst_chunk"], b["dst_chunk"]]),
            "reduce": np.concatenate([a["reduce"], b["reduce"]]),
        }

    if first.is_listed and second.is_listed:
        f = listing()
        return Schedule.from_arrays(
            spec.name,
            first.n_ranks,
            first.n_chunks,
            f["step"],
            f["src"],
            f["dst"],
            f["src_chunk"],
            f["dst_chunk"],
            f["reduce"],
            n_steps=first.n_steps + second.n_steps,
            **options,
        )
    return Schedule.from_traffic(
        spec.name,
        first.n_ranks,
        first.n_chunks,
        first.traffic.then(second.traffic),
        listing,
        **options,
    )
