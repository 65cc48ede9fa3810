"""Argument checks shared by the algorithm builders (on top of :mod:`collectives.validation`,
with the builders' own wording: "n (number of ranks) must be ...")."""

from __future__ import annotations

import numpy as np

from ..errors import ScheduleError
from ..validation import integer

__all__ = ["rank_count", "power_of_two", "root_rank", "chunk_count"]


def rank_count(n: int) -> int:
    """``n`` as an int >= 1, or a ScheduleError saying why not."""
    return integer(n, "n (number of ranks)", minimum=1, error=ScheduleError)


def power_of_two(n: int, algorithm: str) -> int:
    """``n`` as an int that is a power of two, for algorithms that pair ranks by bits."""
    n = rank_count(n)
    if n & (n - 1):
        lower, upper = 1 << (n.bit_length() - 1), 1 << n.bit_length()
        raise ScheduleError(
            f"{algorithm} pairs ranks by flipping one bit per step, so n must be a power of "
            f"two; got n={n} (nearest: {lower} or {upper}); use a ring or tree algorithm for "
            "other counts"
        )
    return n


def root_rank(root: int, n: int) -> int:
    """``root`` as a rank of ``0..n-1``, or a ScheduleError."""
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)):
        raise ScheduleError(f"root must be an integer rank, got {root!r}")
    if not 0 <= root < n:
        raise ScheduleError(f"root {root} is not a rank (0..{n - 1})")
    return int(root)


def chunk_count(n_chunks: int, what: str = "n_chunks") -> int:
    """A count of chunks or segments (``what``) as an int >= 1, or a ScheduleError."""
    return integer(n_chunks, what, minimum=1, error=ScheduleError)
