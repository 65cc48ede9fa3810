"""All-to-all algorithms: every rank sends a different part of its buffer to every rank.

Relays (ring, bidirectional ring, chain) forward parts hop by hop: at each step a rank
passes on every part still travelling, keeping the one addressed to it. The
farthest-first chain schedule instead sends one part per link direction per step, the one
with the farthest destination, and so reaches the chain's cut bound. Parts in transit
wait in scratch slots (one per destination), delivered parts land in the slot of their
source. Pairwise exchange pairs ranks so that each pair swaps its two parts in one step.
Bruck's algorithm needs only ceil(log2 n) steps by sending, at step b, every part whose
relative destination has bit b set, at the price of moving each part several times.
Nothing can be reduced on the way: each part has exactly one destination.
Taught in chapter "All-to-all".
"""

from __future__ import annotations

import heapq

import numpy as np

from ..schedule import Schedule
from .checks import rank_count

__all__ = [
    "ring_all_to_all",
    "bidirectional_ring_all_to_all",
    "chain_all_to_all",
    "chain_farthest_first_all_to_all",
    "pairwise_all_to_all",
    "bruck_all_to_all",
]


def _relay(n, halves, classes, wrap):
    """Hop-by-hop relay of all-to-all parts.

    ``classes``: (direction +1/-1, half, reach) where ``reach(source)`` is how far (in
    hops) that half of a source's parts travel in that direction: parts for the ranks
    1..reach hops away go this way. Data slot of part (d, half) is ``halves * d + half``;
    scratch slot ``halves * (n + d) + half``.
    """
    steps, srcs, dsts, src_slots, dst_slots = [], [], [], [], []
    ranks = np.arange(n)
    for direction, half, reach in classes:
        for s in range(n - 1):
            source = ranks - direction * s  # whose parts rank r holds at step s
            if wrap:
                source %= n
                ok = np.ones(n, dtype=bool)
            else:
                ok = (source >= 0) & (source < n)
            left = np.where(ok, reach(np.clip(source, 0, n - 1)) - s, 0).clip(min=0)
            if not left.any():
                continue
            r = np.repeat(ranks, left)
            i = np.arange(left.sum()) - np.repeat(np.cumsum(left) - left, left) + 1
            d = r + direction * i  # destination of each part
            src0 = np.repeat(source, left)
            if wrap:
                d %= n
            from_slot = np.where(s == 0, halves * d, halves * (n + d)) + half
            arrive = i == 1
            to_slot = np.where(arrive, halves * src0, halves * (n + d)) + half
            steps.append(np.full(len(r), s))
            srcs.append(r)
            dsts.append((r + direction) % n)
            src_slots.append(from_slot)
            dst_slots.append(to_slot)
    if not steps:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e, e
    step = np.concatenate(steps)
    order = np.argsort(step, kind="stable")
    return tuple(np.concatenate(x)[order] for x in (steps, srcs, dsts, src_slots, dst_slots))


def ring_all_to_all(n: int) -> Schedule:
    """Unidirectional ring all-to-all: every part travels forward to its destination.

    At step s rank r forwards the n - 1 - s parts it holds from rank r - s; n - 1 steps.
    """
    n = rank_count(n)
    cols = _relay(n, 1, [(+1, 0, lambda src: np.full_like(src, n - 1))], wrap=True)
    return Schedule.from_arrays(
        "all_to_all", n, n, *cols, n_steps=n - 1, n_scratch=n, name="ring_all_to_all"
    )


def bidirectional_ring_all_to_all(n: int) -> Schedule:
    """Bidirectional ring all-to-all: each part goes the shorter way round; for the rank
    exactly opposite (n even) one half goes each way. floor(n/2) steps; parts are split
    in two halves (2n chunks)."""
    n = rank_count(n)
    far, near = n // 2, (n - 1) // 2
    classes = [
        (+1, 0, lambda src: np.full_like(src, far)),
        (+1, 1, lambda src: np.full_like(src, near)),
        (-1, 0, lambda src: np.full_like(src, near)),
        (-1, 1, lambda src: np.full_like(src, far)),
    ]
    cols = _relay(n, 2, classes, wrap=True)
    return Schedule.from_arrays(
        "all_to_all",
        n,
        2 * n,
        *cols,
        n_steps=n // 2,
        n_scratch=2 * n,
        name="bidirectional_ring_all_to_all",
    )


def chain_all_to_all(n: int) -> Schedule:
    """All-to-all on a chain (no wraparound): parts for higher ranks travel right, for
    lower ranks left. n - 1 steps; the links next to the ends carry the most."""
    n = rank_count(n)
    classes = [(+1, 0, lambda src: n - 1 - src), (-1, 0, lambda src: src)]
    cols = _relay(n, 1, classes, wrap=False)
    return Schedule.from_arrays(
        "all_to_all", n, n, *cols, n_steps=n - 1, n_scratch=n, name="chain_all_to_all"
    )


def _farthest_first_right(n):
    """Rightward half of the farthest-first chain all-to-all: (step, rank, source, dest)
    of every hop. At each step every link r -> r + 1 forwards, of the parts waiting at r
    to go right, the one with the farthest destination (ties: the lower source)."""
    waiting = [[(-j, r) for j in range(r + 1, n)] for r in range(n)]  # heaps
    for h in waiting:
        heapq.heapify(h)
    hops, step = [], 0
    while any(waiting):
        moves = [(r, heapq.heappop(waiting[r])) for r in range(n - 1) if waiting[r]]
        for r, (neg_dst, src) in moves:
            hops.append((step, r, src, -neg_dst))
            if -neg_dst != r + 1:
                heapq.heappush(waiting[r + 1], (neg_dst, src))
        step += 1
    return hops


def chain_farthest_first_all_to_all(n: int) -> Schedule:
    """All-to-all on a chain at the cut bound: parts for higher ranks travel right, for
    lower ranks left, and every link direction forwards one part per step, the waiting part
    with the farthest destination first. The middle link then carries a part at every step,
    floor(n^2/4) parts each way, and nothing else waits longer: floor(n^2/4) steps of one
    part (S/n), the cut bound. Parts in transit wait in scratch slot n + n * source + dest;
    a rank whose own part for s is still waiting when s's part arrives first copies it
    there (a local copy, free)."""
    n = rank_count(n)
    right = np.array(_farthest_first_right(n), dtype=np.int64).reshape(-1, 4)
    step, r, src, dst = right.T
    # the leftward half is the mirror image: rank r <-> n - 1 - r
    step = np.concatenate([step, step])
    rank = np.concatenate([r, n - 1 - r])
    to = np.concatenate([r + 1, n - 2 - r])
    source = np.concatenate([src, n - 1 - src])
    dest = np.concatenate([dst, n - 1 - dst])
    scratch = n + n * source + dest
    # rank r's own part for s leaves its data slot s at step `leave`; the part from s lands
    # there at step `land`. If it lands first, r copies its own part to its scratch slot
    # for it in that step (a free local copy that reads the slot before the write).
    first, last = rank == source, to == dest
    leave = np.full((n, n), -1)
    land = np.full((n, n), -1)
    leave[source[first], dest[first]] = step[first]
    land[dest[last], source[last]] = step[last]
    park = np.argwhere(land < leave)  # (r, s) pairs
    from_slot = np.where(
        first & (land[source, dest] < leave[source, dest]), scratch, np.where(first, dest, scratch)
    )
    to_slot = np.where(last, source, scratch)
    step = np.concatenate([step, land[park[:, 0], park[:, 1]]])
    rank = np.concatenate([rank, park[:, 0]])
    to = np.concatenate([to, park[:, 0]])
    from_slot = np.concatenate([from_slot, park[:, 1]])
    to_slot = np.concatenate([to_slot, n + n * park[:, 0] + park[:, 1]])
    order = np.argsort(step, kind="stable")
    cols = (step[order], rank[order], to[order], from_slot[order], to_slot[order])
    return Schedule.from_arrays(
        "all_to_all",
        n,
        n,
        *cols,
        n_steps=n * n // 4,
        n_scratch=n * n,
        name="chain_farthest_first_all_to_all",
    )


def pairwise_all_to_all(n: int) -> Schedule:
    """Pairwise exchange in n - 1 exchange steps, for any n (MPICH's pairwise exchange:
    Thakur, Rabenseifner and Gropp 2005), one message per rank per step.

    For n a power of two, partners swap in pairs: at step s - 1 (s = 1 .. n-1) rank r
    exchanges with r XOR s, each receiving into the slot it has just sent from. Otherwise
    rank r sends its part for r + s to r + s and receives from r - s; MPI receives into a
    separate buffer, and so does this schedule: the parts land in scratch slots and a last,
    local step (free in the cost model) moves them into place.
    """
    n = rank_count(n)
    r = np.tile(np.arange(n), n - 1)
    s = np.repeat(np.arange(1, n), n)
    if n & (n - 1) == 0:
        partner = r ^ s
        return Schedule.from_arrays(
            "all_to_all",
            n,
            n,
            s - 1,
            r,
            partner,
            partner,
            r,
            n_steps=n - 1,
            name="pairwise_all_to_all",
        )
    dst = (r + s) % n
    # exchange: the part for dst goes to dst's receive slot n + r; then every rank moves its
    # received parts (all but its own) from slot n + j to slot j
    ranks = np.repeat(np.arange(n), n)
    slots = np.tile(np.arange(n), n)
    moved = slots != ranks
    step = np.concatenate([s - 1, np.full(int(moved.sum()), n - 1)])
    src = np.concatenate([r, ranks[moved]])
    dest = np.concatenate([dst, ranks[moved]])
    src_chunk = np.concatenate([dst, n + slots[moved]])
    dst_chunk = np.concatenate([n + r, slots[moved]])
    return Schedule.from_arrays(
        "all_to_all",
        n,
        n,
        step,
        src,
        dest,
        src_chunk,
        dst_chunk,
        n_steps=n,
        n_scratch=n,
        name="pairwise_all_to_all",
    )


def bruck_all_to_all(n: int) -> Schedule:
    """Bruck's all-to-all in ceil(log2 n) exchange steps, for any n.

    Step 0 (local): rank r rotates its parts so that position i holds the part for r + i.
    Exchange step b: rank r sends every position with bit b set to rank r + 2^b, which
    keeps it at the same position. Last step (local): position i, now holding the part
    from r - i, moves to slot r - i. Local steps cost nothing in the cost model.
    """
    n = rank_count(n)
    log_n = (n - 1).bit_length()
    ranks = np.arange(n)
    pos = np.arange(n)
    rr, ii = np.repeat(ranks, n), np.tile(pos, n)
    steps = []
    rotate = (rr + ii) % n != ii  # skip moves onto themselves
    steps.append((rr[rotate], rr[rotate], ((rr + ii) % n)[rotate], ii[rotate]))
    for b in range(log_n):
        has_bit = (ii >> b) & 1 == 1
        r, i = rr[has_bit], ii[has_bit]
        steps.append((r, (r + (1 << b)) % n, i, i))
    back = (rr - ii) % n != ii
    steps.append((rr[back], rr[back], ii[back], ((rr - ii) % n)[back]))
    step = np.concatenate([np.full(len(s[0]), k) for k, s in enumerate(steps)])
    cols = [np.concatenate([s[j] for s in steps]) for j in range(4)]
    return Schedule.from_arrays(
        "all_to_all", n, n, step, *cols, n_steps=len(steps) if n > 1 else 0, name="bruck_all_to_all"
    )
