"""Direct (one-shot) algorithms: every rank sends straight to every other rank in one step.

Natural on a non-blocking switch (an NVSwitch node), where each rank's link to the switch
carries its n - 1 outgoing pieces at once: one latency term, and the bytes of a ring.
On a ring or torus the same schedule piles many transfers onto shared links.
Taught in chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from .checks import rank_count

__all__ = ["direct_all_gather", "direct_all_to_all"]


def _all_pairs(n):
    src = np.repeat(np.arange(n), n)
    dst = np.tile(np.arange(n), n)
    keep = src != dst
    return src[keep], dst[keep]


def direct_all_gather(n: int) -> Schedule:
    """All-gather in one step: rank r sends its shard to each of the other n - 1 ranks."""
    n = rank_count(n)
    src, dst = _all_pairs(n)
    return Schedule.from_arrays(
        "all_gather",
        n,
        n,
        np.zeros(len(src), np.int64),
        src,
        dst,
        src,
        src,
        n_steps=1 if n > 1 else 0,
        name="direct_all_gather",
    )


def direct_all_to_all(n: int) -> Schedule:
    """All-to-all in one step: rank r sends part d to rank d, which stores it as part r."""
    n = rank_count(n)
    src, dst = _all_pairs(n)
    return Schedule.from_arrays(
        "all_to_all",
        n,
        n,
        np.zeros(len(src), np.int64),
        src,
        dst,
        dst,
        src,
        n_steps=1 if n > 1 else 0,
        name="direct_all_to_all",
    )
