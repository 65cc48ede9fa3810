"""Mixture-of-experts token routing as a variable all-to-all (``all_to_all_v``).

In expert parallelism each rank hosts some experts. A router sends every token to its
``top_k`` experts, so rank s must send ``counts[s, d]`` tokens to rank d (the *dispatch*)
and get the expert outputs back (the *combine*, the dual with counts transposed). Counts
are uneven: popular experts make hot ranks, whose links become the bottleneck.

A Schedule here uses one chunk per token slot: each rank's send buffer holds ``capacity``
token slots per destination (nbytes = n_ranks * capacity * token bytes), and only the
first ``counts[s, d]`` of each part move. Modelled: token counts from a seeded random
router with a popularity skew, one-step and pairwise schedules, capacity (tokens beyond it
are dropped, as with a capacity factor). Left out: the gating network itself, token order
within a part, the compute of the experts. Taught in chapter "All-to-all".
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .errors import CollectivesError, ScheduleError
from .schedule import Schedule
from .transforms import dual
from .validation import int_array

__all__ = [
    "dispatch_counts",
    "direct_all_to_all_v",
    "pairwise_all_to_all_v",
    "combine",
    "capacity_for",
]


def dispatch_counts(
    n_ranks: int, tokens_per_rank: int, n_experts: int, top_k: int, skew: float = 0.0, seed: int = 0
) -> np.ndarray:
    """``counts[s, d]``: tokens rank s sends to rank d when each of its ``tokens_per_rank``
    tokens picks ``top_k`` distinct experts out of ``n_experts`` (``n_experts / n_ranks``
    consecutive experts per rank). Expert e is picked with probability proportional to
    ``(e + 1) ** -skew`` (0: uniform; 1: Zipf), from a seeded generator."""
    for what, v, low in (
        ("n_ranks", n_ranks, 1),
        ("tokens_per_rank", tokens_per_rank, 0),
        ("n_experts", n_experts, 1),
        ("top_k", top_k, 1),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise CollectivesError(f"{what} must be an integer >= {low}, got {v!r}")
    if n_experts % n_ranks:
        raise CollectivesError(
            f"n_experts ({n_experts}) must be a multiple of n_ranks ({n_ranks}): each rank "
            "hosts the same number of experts"
        )
    if top_k > n_experts:
        raise CollectivesError(f"top_k ({top_k}) cannot exceed n_experts ({n_experts})")
    if not np.isfinite(skew) or skew < 0:
        raise CollectivesError(f"skew must be finite and >= 0, got {skew!r}")
    rng = np.random.default_rng(seed)
    weight = (np.arange(n_experts) + 1.0) ** -float(skew)
    # top_k distinct experts per token: Gumbel-top-k sampling without replacement
    keys = np.log(weight)[None, :] + rng.gumbel(size=(n_ranks * tokens_per_rank, n_experts))
    chosen = np.argpartition(-keys, top_k - 1, axis=1)[:, :top_k]
    source = np.repeat(np.arange(n_ranks), tokens_per_rank)
    dest = chosen // (n_experts // n_ranks)
    counts = np.zeros((n_ranks, n_ranks), dtype=np.int64)
    np.add.at(counts, (np.repeat(source, top_k), dest.ravel()), 1)
    return counts


def capacity_for(counts: ArrayLike, capacity_factor: float | None = None) -> int:
    """Token slots per part: the largest count, or ``capacity_factor`` times the mean."""
    counts = np.asarray(counts)
    if capacity_factor is None:
        return int(counts.max(initial=0))
    return int(np.ceil(capacity_factor * counts.mean()))


def _counts(counts: ArrayLike, capacity: int | None) -> tuple[np.ndarray, int]:
    c = int_array(counts, "counts", ndim=2, minimum=0, error=ScheduleError)
    if c.shape[0] != c.shape[1]:
        raise ScheduleError(f"counts must be a square integer matrix, got shape {c.shape}")
    capacity = capacity_for(c) if capacity is None else int(capacity)
    return np.minimum(c, capacity).astype(np.int64), max(capacity, 1)


def direct_all_to_all_v(counts: ArrayLike, capacity: int | None = None) -> Schedule:
    """Dispatch in one step: rank s sends its ``counts[s, d]`` tokens straight to each d.
    Counts above ``capacity`` are cut to it (dropped tokens)."""
    counts, k = _counts(counts, capacity)
    n = len(counts)
    s, d = np.nonzero(counts * (1 - np.eye(n, dtype=np.int64)))
    per = counts[s, d]
    src, dst = np.repeat(s, per), np.repeat(d, per)
    j = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    return Schedule.from_arrays(
        "all_to_all_v",
        n,
        n * k,
        np.zeros(len(src), np.int64),
        src,
        dst,
        dst * k + j,
        src * k + j,
        n_steps=1 if n > 1 else 0,
        counts=counts,
        name="direct_all_to_all_v",
    )


def pairwise_all_to_all_v(counts: ArrayLike, capacity: int | None = None) -> Schedule:
    """Dispatch by pairwise exchange (partners as in
    :func:`collectives.algorithms.pairwise_all_to_all`): n - 1 exchange steps, each moving
    only the tokens of one pair. When n is not a power of two the tokens land in a receive
    buffer (scratch slots) and a last, local step moves them into place, as the dense
    pairwise exchange does."""
    from .algorithms.alltoall import pairwise_all_to_all

    counts, k = _counts(counts, capacity)
    n = len(counts)
    pairs = pairwise_all_to_all(n)
    remote = pairs.src != pairs.dst
    step, s, d = pairs.step_of_transfer[remote], pairs.src[remote], pairs.dst[remote]
    per = counts[s, d]
    j = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    src, dst, slot = np.repeat(s, per), np.repeat(d, per), np.repeat(s, per) * k + j
    step = np.repeat(step, per)
    if pairs.n_scratch == 0:  # partners swap in place
        return Schedule.from_arrays(
            "all_to_all_v",
            n,
            n * k,
            step,
            src,
            dst,
            dst * k + j,
            slot,
            n_steps=pairs.n_steps,
            counts=counts,
            name="pairwise_all_to_all_v",
        )
    last = np.full(len(src), n - 1)  # receive buffer -> place, locally
    return Schedule.from_arrays(
        "all_to_all_v",
        n,
        n * k,
        np.concatenate([step, last]),
        np.concatenate([src, dst]),
        np.concatenate([dst, dst]),
        np.concatenate([dst * k + j, n * k + slot]),
        np.concatenate([n * k + slot, slot]),
        n_steps=n,
        n_scratch=n * k,
        counts=counts,
        name="pairwise_all_to_all_v",
    )


def combine(dispatch: Schedule) -> Schedule:
    """The combine all-to-all that returns expert outputs: the dual of the dispatch."""
    return dual(dispatch, name=dispatch.name.replace("all_to_all_v", "combine"))
