"""What each collective means: its buffers before (precondition) and after (postcondition).

A rank's working buffer is ``n_chunks`` data slots (the nccl-tests buffer ``S`` cut into
equal chunks) followed by ``n_scratch`` scratch slots that start empty. Where the data
starts and where the result must end is fixed per collective (NCCL's semantics):

==============  ==========================================  ======================================
collective      before (rank r)                             after (rank r)
==============  ==========================================  ======================================
all_gather      its shard in slots [r*k, (r+1)*k)           every shard, in rank order
reduce_scatter  the full buffer                             slots [r*k, (r+1)*k) summed over ranks
all_reduce      the full buffer                             the full buffer summed over ranks
all_to_all      part d (k slots) goes to rank d             part s received from rank s, in order
all_to_all_v    as all_to_all; only the first counts[r, d]  as all_to_all, for those slots only
                slots of part d hold data
broadcast       root: the buffer; others empty              the root's buffer
reduce          the full buffer                             root: the buffer summed over ranks
gather          its shard in slots [r*k, (r+1)*k)           root: every shard, in rank order
permute         the full buffer                             rank peers[p]: the buffer of rank p
scatter         root: the full buffer; others empty         slots [r*k, (r+1)*k) of root's buffer
==============  ==========================================  ======================================

with ``k = n_chunks / m`` for the partitioned collectives, ``m`` ranks per group. A
collective may run over **groups** (a partition of the ranks into equal groups: a
communicator split, a mesh axis): ``r`` above is then the rank's *position* in its group,
the sums run over the group's ranks, and every group does the same at once. Symbolically a
slot holds a *label* (which chunk of the logical buffer it is) and the *set of ranks* whose
contributions have been combined into it; ``verify`` tracks these exactly.

Each :class:`Collective` owns everything that depends on which collective it is: the layout
rules, the dual, nccl-tests' bus-bandwidth factor and the torch.distributed equivalent, so
that no other module compares collective names.
Taught in chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollectivesError, ScheduleError
from .validation import integer

__all__ = ["Collective", "COLLECTIVES", "collective_spec", "REDUCTION_OPS"]

#: the element type of the numeric buffers simulate moves (any numeric dtype, or bool)
_Value = TypeVar("_Value", bound=np.generic)

#: reduction operators a reducing Schedule may use, with their numpy ufunc
REDUCTION_OPS: dict[str, np.ufunc] = {"sum": np.add, "max": np.maximum}

#: the four flat int arrays of a local layout: (position, slot, label, owner position)
_Layout = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def _ring_factor(n: int) -> float:
    return (n - 1) / n


def _all_reduce_factor(n: int) -> float:
    return 2 * (n - 1) / n


def _one(n: int) -> float:
    return 1.0


@dataclass(frozen=True)
class Collective:
    """One collective: its layout rules (below), ``dual`` (the collective its schedules run
    backwards compute), ``bus_factor(n)`` (nccl-tests' busbw / algbw, doc/PERFORMANCE.md)
    and ``torch_name`` (the torch.distributed function that computes it).

    ``partitioned``: the buffer splits into one part per group member; ``input`` and
    ``output``: ``"full"`` or ``"part"``, what one rank's input and output rows hold;
    ``source``: which ranks start with data (``"all"``, ``"root"``); ``result``: where the
    result is checked (``"all"``, ``"root"``, ``"own part"``).
    """

    name: str
    reducing: bool
    partitioned: bool
    rooted: bool
    dual: str
    bus_factor: Callable[[int], float]
    torch_name: Optional[str]
    input: str = "full"
    output: str = "full"

    # ---- shape rules -------------------------------------------------------------------
    def check_chunks(self, group_size: int, n_chunks: int) -> None:
        if self.partitioned and n_chunks % group_size:
            raise CollectivesError(
                f"{self.name} over {group_size} ranks needs n_chunks divisible by {group_size} "
                f"(one equal part per rank); got n_chunks={n_chunks}"
            )

    def input_chunks(self, group_size: int, n_chunks: int) -> int:
        """Chunks in one rank's input row (the all-gather and gather input is one shard)."""
        return n_chunks // group_size if self.input == "part" else n_chunks

    def output_chunks(self, group_size: int, n_chunks: int) -> int:
        """Chunks in one rank's output row."""
        return n_chunks // group_size if self.output == "part" else n_chunks

    def check_peers(
        self, group_size: int, peers: Optional[ArrayLike]
    ) -> Optional[NDArray[np.int64]]:
        """The permute ``peers`` array (position p's buffer goes to ``peers[p]``, -1: to
        nobody) as a read-only int array, or None for other collectives."""
        if self.name != "permute":
            if peers is not None:
                raise ScheduleError(f"peers are only for permute, not {self.name}")
            return None
        if peers is None:
            raise ScheduleError(
                "permute needs peers[p]: the rank that receives rank p's buffer (-1 for none)"
            )
        try:
            p = np.asarray(peers)
        except ValueError:
            raise ScheduleError("peers must be a list of ranks, one per rank") from None
        if p.shape != (group_size,) or not (p.size == 0 or np.issubdtype(p.dtype, np.integer)):
            raise ScheduleError(f"peers must be {group_size} integers (one per rank), got {p!r}")
        if p.min(initial=0) < -1 or p.max(initial=0) >= group_size:
            raise ScheduleError(
                f"peers must name ranks 0..{group_size - 1} or -1, got {p.tolist()}"
            )
        targets = p[p >= 0]
        if len(np.unique(targets)) != len(targets):
            twice = int(np.flatnonzero(np.bincount(targets) > 1)[0])
            raise ScheduleError(
                f"peers sends two buffers to rank {twice}; a permute delivers at "
                "most one buffer to each rank"
            )
        checked = p.astype(np.int64)
        checked.flags.writeable = False
        return checked

    def check_counts(
        self, group_size: int, n_chunks: int, counts: Optional[ArrayLike]
    ) -> Optional[NDArray[np.int64]]:
        """The all_to_all_v ``counts`` matrix as a read-only int array (None otherwise)."""
        if self.name != "all_to_all_v":
            if counts is not None:
                raise ScheduleError(f"counts are only for all_to_all_v, not {self.name}")
            return None
        if counts is None:
            raise ScheduleError("all_to_all_v needs counts[s, d]: the chunks rank s sends to d")
        try:
            c = np.asarray(counts)
        except ValueError:
            raise ScheduleError("counts must be an n_ranks x n_ranks array of integers") from None
        k = n_chunks // group_size
        if c.shape != (group_size, group_size) or not np.issubdtype(c.dtype, np.integer):
            raise ScheduleError(
                f"counts must be an integer array of shape ({group_size}, {group_size}), got "
                f"{c.dtype} of shape {c.shape}"
            )
        if c.min(initial=0) < 0 or c.max(initial=0) > k:
            raise ScheduleError(
                f"counts must lie in 0..{k} (the slots of one part); got {c.min()}..{c.max()}"
            )
        checked = c.astype(np.int64)
        checked.flags.writeable = False
        return checked

    def _root_position(self, group_size: int, root: Optional[int]) -> int:
        """``root`` checked for this collective: a position ``0..group_size-1`` in each
        group (a ScheduleError if it is missing or out of range). Only rooted collectives
        read it."""
        if root is None:
            raise ScheduleError(f"{self.name} needs a root (a position in each group)")
        return integer(root, "root", minimum=0, maximum=group_size - 1, error=ScheduleError)

    # ---- symbolic precondition and postcondition (one group of m ranks) --------------------
    def _local_initial(self, m: int, n_chunks: int, root: Optional[int]) -> _Layout:
        """(position, slot, label, owner position) of every filled slot at the start."""
        k = n_chunks // m if self.partitioned else n_chunks
        if self.input == "part":
            pos = np.repeat(np.arange(m), k)
            slot = pos * k + np.tile(np.arange(k), m)
            return pos, slot, slot, pos
        if self.name in ("broadcast", "scatter"):
            slot = np.arange(n_chunks)
            at_root = np.full(n_chunks, self._root_position(m, root), dtype=np.int64)
            return at_root, slot, slot, at_root
        pos = np.repeat(np.arange(m), n_chunks)
        slot = np.tile(np.arange(n_chunks), m)
        return pos, slot, slot, pos

    def _local_expected(
        self,
        m: int,
        n_chunks: int,
        root: Optional[int],
        counts: Optional[NDArray[np.int64]],
        peers: Optional[NDArray[np.int64]] = None,
    ) -> _Layout:
        """(position, slot, label, owner position or -1 for "combined over the group")."""
        everyone = -1
        k = n_chunks // m if self.partitioned else n_chunks
        if self.name in ("all_gather", "all_reduce", "broadcast", "gather", "reduce"):
            where = (
                np.arange(m)
                if self.name not in ("gather", "reduce")
                else np.array([self._root_position(m, root)], dtype=np.int64)
            )
            pos = np.repeat(where, n_chunks)
            slot = np.tile(np.arange(n_chunks), len(where))
            if self.name in ("all_gather", "gather"):
                owner = slot // k
            elif self.name == "broadcast":
                owner = np.full_like(slot, self._root_position(m, root))
            else:
                owner = np.full_like(slot, everyone)
            return pos, slot, slot.copy(), owner
        if self.name in ("reduce_scatter", "scatter"):
            pos = np.repeat(np.arange(m), k)
            slot = pos * k + np.tile(np.arange(k), m)
            owner = np.full_like(slot, everyone if self.reducing else self._root_position(m, root))
            return pos, slot, slot.copy(), owner
        if self.name == "permute":  # rank peers[p] holds p's buffer
            if peers is None:
                raise ScheduleError(
                    "permute needs peers[p]: the rank that receives rank p's buffer (-1 for none)"
                )
            src = np.flatnonzero(peers >= 0)
            pos = np.repeat(peers[src], n_chunks)
            slot = np.tile(np.arange(n_chunks), len(src))
            return pos, slot, slot.copy(), np.repeat(src, n_chunks)
        # all_to_all, all_to_all_v
        pos = np.repeat(np.arange(m), n_chunks)
        slot = np.tile(np.arange(n_chunks), m)
        owner = slot // k  # slot s*k+j of rank p comes from rank s ...
        label = pos * k + slot % k  # ... and was part p (piece j) of its input
        if counts is not None:  # only the slots that carry data
            keep = slot % k < counts[owner, pos]
            pos, slot, owner, label = pos[keep], slot[keep], owner[keep], label[keep]
        return pos, slot, label, owner

    def initial(
        self,
        groups: NDArray[np.int64],
        n_chunks: int,
        n_slots: int,
        root: Optional[int],
        n_participants: int,
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Symbolic starting state: ``(label, owner)``, int arrays (n_participants, n_slots).

        ``label[r, c]`` is the logical chunk held (-1: empty); ``owner[r, c]`` the one rank
        whose contribution it is. ``groups`` is (G, m): the ranks of each group, in position
        order. Participants past the ranks (switches) start empty.
        """
        label = np.full((n_participants, n_slots), -1, dtype=np.int64)
        owner = np.full((n_participants, n_slots), -1, dtype=np.int64)
        pos, slot, lab, own = self._local_initial(groups.shape[1], n_chunks, root)
        label[groups[:, pos], slot] = lab
        owner[groups[:, pos], slot] = groups[:, own]
        return label, owner

    def expected(
        self,
        groups: NDArray[np.int64],
        n_chunks: int,
        root: Optional[int],
        counts: Optional[NDArray[np.int64]] = None,
        peers: Optional[NDArray[np.int64]] = None,
    ) -> _Layout:
        """Symbolic postcondition on the checked slots.

        Returns ``(ranks, slots, label, owner)``: flat arrays of the checked (rank, slot)
        pairs, the label each must hold, and its single owner rank, or -1 for "combined over
        every rank of its group".
        """
        pos, slot, lab, own = self._local_expected(groups.shape[1], n_chunks, root, counts, peers)
        g = len(groups)
        ranks = groups[:, pos].ravel()
        owner = np.where(own >= 0, groups[:, np.maximum(own, 0)], -1).ravel()
        return ranks, np.tile(slot, g), np.tile(lab, g), owner

    # ---- numeric buffers for simulate -----------------------------------------------------
    def place_inputs(
        self,
        inputs: NDArray[_Value],
        groups: NDArray[np.int64],
        n_chunks: int,
        n_slots: int,
        root: Optional[int],
        n_participants: int,
    ) -> tuple[NDArray[_Value], NDArray[np.bool_]]:
        """Lay rank rows out in working buffers: ``(buffer, filled)`` of shape
        (n_participants, n_slots, chunk length)."""
        n_ranks, row = inputs.shape
        k_in = self.input_chunks(groups.shape[1], n_chunks)
        if row % k_in:
            raise CollectivesError(
                f"{self.name} input rows have {row} elements, which do not split into "
                f"{k_in} equal chunks"
            )
        chunk_len = row // k_in
        buffer = np.zeros((n_participants, n_slots, chunk_len), dtype=inputs.dtype)
        filled = np.zeros((n_participants, n_slots), dtype=bool)
        pieces = inputs.reshape(n_ranks, k_in, chunk_len)
        if self.input == "part":  # rank at position p: slots [p*k, (p+1)*k)
            position = np.empty(n_ranks, dtype=np.int64)
            position[groups] = np.arange(groups.shape[1])
            rows = np.arange(n_ranks)[:, None]
            slots = position[:, None] * k_in + np.arange(k_in)[None, :]
            buffer[rows, slots] = pieces
            filled[rows, slots] = True
        elif self.name in ("broadcast", "scatter"):  # only each group's root has data
            roots = groups[:, self._root_position(groups.shape[1], root)]
            buffer[roots, :n_chunks] = pieces[roots]
            filled[roots, :n_chunks] = True
        else:  # every rank holds its whole buffer
            buffer[:n_ranks, :n_chunks] = pieces
            filled[:n_ranks, :n_chunks] = True
        return buffer, filled

    def take_outputs(
        self, buffer: NDArray[_Value], groups: NDArray[np.int64], n_chunks: int
    ) -> NDArray[_Value]:
        """One output row per rank from the working buffers (NCCL's output layout).

        For ``reduce`` and ``gather`` only the root's row is the result; other rows are
        whatever those ranks hold (NCCL leaves them unspecified).
        """
        m = groups.shape[1]
        n_ranks = groups.size
        if self.output == "part":
            k = n_chunks // m
            position = np.empty(n_ranks, dtype=np.int64)
            position[groups] = np.arange(m)
            slots = position[:, None] * k + np.arange(k)[None, :]
            out: NDArray[_Value] = buffer[np.arange(n_ranks)[:, None], slots]
        else:
            out = buffer[:n_ranks, :n_chunks]
        return out.reshape(n_ranks, -1)


COLLECTIVES = {
    c.name: c
    for c in (
        Collective(
            "all_gather",
            False,
            True,
            False,
            "reduce_scatter",
            _ring_factor,
            "all_gather_into_tensor",
            input="part",
        ),
        Collective(
            "reduce_scatter",
            True,
            True,
            False,
            "all_gather",
            _ring_factor,
            "reduce_scatter_tensor",
            output="part",
        ),
        Collective(
            "all_reduce", True, False, False, "all_reduce", _all_reduce_factor, "all_reduce"
        ),
        Collective(
            "all_to_all", False, True, False, "all_to_all", _ring_factor, "all_to_all_single"
        ),
        Collective(
            "all_to_all_v", False, True, False, "all_to_all_v", _ring_factor, "all_to_all_single"
        ),
        Collective("broadcast", False, False, True, "reduce", _one, "broadcast"),
        Collective("reduce", True, False, True, "broadcast", _one, "reduce"),
        # nccl-tests gather_perf / scatter_perf: busbw factor (n-1)/n (src/gather.cu,
        # src/scatter.cu)
        Collective("gather", False, True, True, "scatter", _ring_factor, "gather", input="part"),
        Collective("scatter", False, True, True, "gather", _ring_factor, "scatter", output="part"),
        # point-to-point: nccl-tests sendrecv_perf reports busbw = algbw (src/sendrecv.cu);
        # torch runs it as batch_isend_irecv
        Collective("permute", False, False, False, "permute", _one, "batch_isend_irecv"),
    )
}


def collective_spec(name: str) -> Collective:
    """The :class:`Collective` called ``name`` (``"all_gather"``, ``"all-gather"`` both work)."""
    key = str(name).replace("-", "_").lower()
    if key not in COLLECTIVES:
        raise CollectivesError(
            f"unknown collective {name!r}; expected one of {', '.join(COLLECTIVES)}"
        )
    return COLLECTIVES[key]
