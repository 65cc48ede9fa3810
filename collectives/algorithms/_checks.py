"""Argument checks shared by the algorithm builders."""

from __future__ import annotations

import numpy as np

from ..errors import ScheduleError

__all__ = ["rank_count", "power_of_two", "root_rank", "chunk_count"]


def rank_count(n: int) -> int:
    """``n`` as an int >= 1, or a ScheduleError saying why not."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise ScheduleError(f"n (number of ranks) must be an integer, got {n!r}")
    if n < 1:
        raise ScheduleError(f"n (number of ranks) must be >= 1, got {n}")
    return int(n)


def power_of_two(n: int, algorithm: str) -> int:
    """``n`` as an int that is a power of two, for algorithms that pair ranks by bits."""
    n = rank_count(n)
    if n & (n - 1):
        lower, upper = 1 << (n.bit_length() - 1), 1 << n.bit_length()
        raise ScheduleError(
            f"{algorithm} pairs ranks by flipping one bit per step, so n must be a power of "
            f"two; got n={n} (nearest: {lower} or {upper}); use a ring or tree algorithm for "
            "other counts")
    return n


def root_rank(root: int, n: int) -> int:
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)):
        raise ScheduleError(f"root must be an integer rank, got {root!r}")
    if not 0 <= root < n:
        raise ScheduleError(f"root {root} is not a rank (0..{n - 1})")
    return int(root)


def chunk_count(n_chunks: int) -> int:
    if isinstance(n_chunks, (bool, np.bool_)) or not isinstance(n_chunks, (int, np.integer)) \
            or n_chunks < 1:
        raise ScheduleError(f"n_chunks must be an integer >= 1, got {n_chunks!r}")
    return int(n_chunks)
