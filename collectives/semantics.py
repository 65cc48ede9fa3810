"""What each collective means: its buffers before (precondition) and after (postcondition).

A rank's working buffer is ``n_chunks`` data slots (the nccl-tests buffer ``S`` cut into
equal chunks) followed by ``n_scratch`` scratch slots that start empty. Where the data
starts and where the result must end is fixed per collective (NCCL's semantics):

==============  ==========================================  =========================================
collective      before (rank r)                             after (rank r)
==============  ==========================================  =========================================
all_gather      its shard in slots [r*k, (r+1)*k)           every shard, in rank order
reduce_scatter  the full buffer                             slots [r*k, (r+1)*k) summed over ranks
all_reduce      the full buffer                             the full buffer summed over ranks
all_to_all      part d (k slots) goes to rank d             part s received from rank s, in order
all_to_all_v    as all_to_all; only the first counts[r, d]  as all_to_all, for those slots only
                slots of part d hold data
broadcast       root: the buffer; others empty              the root's buffer
reduce          the full buffer                             root: the buffer summed over ranks
==============  ==========================================  =========================================

with ``k = n_chunks / n_ranks`` for the partitioned collectives. Symbolically a slot holds
a *label* (which chunk of the logical buffer it is) and the *set of ranks* whose
contributions have been summed into it; ``verify`` tracks these exactly.
Taught in chapter "Cost models and the ring all-gather".
"""

from dataclasses import dataclass

import numpy as np

from .errors import CollectivesError, ScheduleError

__all__ = ["Collective", "COLLECTIVES", "collective_spec"]


@dataclass(frozen=True)
class Collective:
    """One collective's layout rules. ``partitioned``: the buffer splits into one part per rank."""

    name: str
    reducing: bool
    partitioned: bool
    rooted: bool

    # ---- shape rules -------------------------------------------------------------------
    def check_chunks(self, n_ranks, n_chunks):
        if self.partitioned and n_chunks % n_ranks:
            raise CollectivesError(
                f"{self.name} over {n_ranks} ranks needs n_chunks divisible by {n_ranks} "
                f"(one equal part per rank); got n_chunks={n_chunks}"
            )

    def input_chunks(self, n_ranks, n_chunks):
        """Chunks in one rank's input row (the all-gather input is one shard)."""
        return n_chunks // n_ranks if self.name == "all_gather" else n_chunks

    def output_chunks(self, n_ranks, n_chunks):
        """Chunks in one rank's output row."""
        return n_chunks // n_ranks if self.name == "reduce_scatter" else n_chunks

    def check_counts(self, n_ranks, n_chunks, counts):
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
        k = n_chunks // n_ranks
        if c.shape != (n_ranks, n_ranks) or not np.issubdtype(c.dtype, np.integer):
            raise ScheduleError(
                f"counts must be an integer array of shape ({n_ranks}, {n_ranks}), got "
                f"{c.dtype} of shape {c.shape}")
        if c.min(initial=0) < 0 or c.max(initial=0) > k:
            raise ScheduleError(
                f"counts must lie in 0..{k} (the slots of one part); got {c.min()}..{c.max()}")
        c = c.astype(np.int64)
        c.flags.writeable = False
        return c

    # ---- symbolic precondition and postcondition ----------------------------------------
    def initial(self, n_ranks, n_chunks, n_slots, root):
        """Symbolic starting state: ``(label, owner)``, int arrays of shape (n_ranks, n_slots).

        ``label[r, c]`` is the logical chunk held (-1: empty); ``owner[r, c]`` the one rank
        whose contribution it is (every slot starts with a single contribution).
        """
        label = np.full((n_ranks, n_slots), -1, dtype=np.int64)
        owner = np.full((n_ranks, n_slots), -1, dtype=np.int64)
        ranks = np.arange(n_ranks)[:, None]
        if self.name == "all_gather":
            k = n_chunks // n_ranks
            slots = ranks * k + np.arange(k)[None, :]
            np.put_along_axis(label, slots, slots, axis=1)
            np.put_along_axis(owner, slots, np.broadcast_to(ranks, slots.shape), axis=1)
        elif self.name == "broadcast":
            label[root, :n_chunks] = np.arange(n_chunks)
            owner[root, :n_chunks] = root
        else:
            label[:, :n_chunks] = np.arange(n_chunks)[None, :]
            owner[:, :n_chunks] = ranks
        return label, owner

    def expected(self, n_ranks, n_chunks, root, counts=None):
        """Symbolic postcondition on the checked slots.

        Returns ``(ranks, slots, label, owner)``: flat arrays of the checked (rank, slot)
        pairs, the label each must hold, and its single owner rank, or -1 for "summed
        over all ranks".
        """
        all_ranks = -1
        if self.name in ("all_gather", "all_reduce", "broadcast"):
            ranks = np.repeat(np.arange(n_ranks), n_chunks)
            slots = np.tile(np.arange(n_chunks), n_ranks)
            label = slots.copy()
            if self.name == "all_gather":
                owner = slots // (n_chunks // n_ranks)
            elif self.name == "broadcast":
                owner = np.full_like(slots, root)
            else:
                owner = np.full_like(slots, all_ranks)
        elif self.name == "reduce_scatter":
            k = n_chunks // n_ranks
            ranks = np.repeat(np.arange(n_ranks), k)
            slots = ranks * k + np.tile(np.arange(k), n_ranks)
            label, owner = slots.copy(), np.full_like(slots, all_ranks)
        elif self.name in ("all_to_all", "all_to_all_v"):
            k = n_chunks // n_ranks
            ranks = np.repeat(np.arange(n_ranks), n_chunks)
            slots = np.tile(np.arange(n_chunks), n_ranks)
            owner = slots // k                      # slot s*k+j of rank r comes from rank s ...
            label = ranks * k + slots % k           # ... and was part r (piece j) of its input
            if counts is not None:                  # only the slots that carry data
                keep = slots % k < counts[owner, ranks]
                ranks, slots, owner, label = ranks[keep], slots[keep], owner[keep], label[keep]
        else:  # reduce
            ranks = np.full(n_chunks, root)
            slots = np.arange(n_chunks)
            label, owner = slots.copy(), np.full_like(slots, all_ranks)
        return ranks, slots, label, owner

    # ---- numeric buffers for simulate -----------------------------------------------------
    def place_inputs(self, inputs, n_chunks, n_slots, root):
        """Lay rank rows out in working buffers: ``(buffer, filled)`` of shape (n, n_slots, len)."""
        n_ranks, row = inputs.shape
        k_in = self.input_chunks(n_ranks, n_chunks)
        if row % k_in:
            raise CollectivesError(
                f"{self.name} input rows have {row} elements, which do not split into "
                f"{k_in} equal chunks"
            )
        chunk_len = row // k_in
        buffer = np.zeros((n_ranks, n_slots, chunk_len), dtype=inputs.dtype)
        filled = np.zeros((n_ranks, n_slots), dtype=bool)
        pieces = inputs.reshape(n_ranks, k_in, chunk_len)
        if self.name == "all_gather":
            slots = np.arange(n_ranks)[:, None] * k_in + np.arange(k_in)[None, :]
            buffer[np.arange(n_ranks)[:, None], slots] = pieces
            filled[np.arange(n_ranks)[:, None], slots] = True
        elif self.name == "broadcast":
            buffer[root, :n_chunks] = pieces[root]
            filled[root, :n_chunks] = True
        else:
            buffer[:, :n_chunks] = pieces
            filled[:, :n_chunks] = True
        return buffer, filled

    def take_outputs(self, buffer, n_chunks):
        """One output row per rank from the working buffers (NCCL's output layout).

        For ``reduce`` only the root's row is the result; other rows are whatever partial
        sums those ranks hold (NCCL leaves them unspecified).
        """
        n_ranks, _, chunk_len = buffer.shape
        if self.name == "reduce_scatter":
            k = n_chunks // n_ranks
            slots = np.arange(n_ranks)[:, None] * k + np.arange(k)[None, :]
            out = buffer[np.arange(n_ranks)[:, None], slots]
        else:
            out = buffer[:, :n_chunks]
        return out.reshape(n_ranks, -1)


COLLECTIVES = {
    c.name: c
    for c in (
        Collective("all_gather", reducing=False, partitioned=True, rooted=False),
        Collective("reduce_scatter", reducing=True, partitioned=True, rooted=False),
        Collective("all_reduce", reducing=True, partitioned=False, rooted=False),
        Collective("all_to_all", reducing=False, partitioned=True, rooted=False),
        Collective("all_to_all_v", reducing=False, partitioned=True, rooted=False),
        Collective("broadcast", reducing=False, partitioned=False, rooted=True),
        Collective("reduce", reducing=True, partitioned=False, rooted=True),
    )
}


def collective_spec(name):
    """The :class:`Collective` called ``name`` (``"all_gather"``, ``"all-gather"`` both work)."""
    key = str(name).replace("-", "_").lower()
    if key not in COLLECTIVES:
        raise CollectivesError(
            f"unknown collective {name!r}; expected one of {', '.join(COLLECTIVES)}"
        )
    return COLLECTIVES[key]
