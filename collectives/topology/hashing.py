"""The one flow hash of the package: every hashed ECMP choice in every fabric reads it.

A switch doing ECMP hashes a packet's header (addresses, ports, the RoCE queue pair) and
takes the hash modulo its number of equal-cost next hops, so a flow keeps its path and
distinct flows collide as balls in bins. Here the header is ``(src, dst, flow)``: the two
endpoints the fabric path joins and a flow label (a queue pair), plus the fabric's
``seed`` (switches can be configured with a hash seed).

:func:`flow_hash` is MurmurHash3's 64-bit finaliser (``fmix64``, a bijection of 64-bit
words) of ``src * 2**32 + dst``, with ``(flow, seed)`` mixed in by xor; for flow 0 and
seed 0 the extra term is 0, so every connection of a cluster hashes as its two endpoints
alone. :func:`hash_digits` reads one hash as digits in a fixed order, one digit per
choice, its base the number of candidates (which spine, which parallel cable, which core,
...), as if each switch tier used its own bits of the header hash: the choices of one
flow are independent of each other (no hash polarisation across tiers) and a choice never
depends on how many other choices the route makes.

Modelled: a deterministic, uniform-looking, seeded per-flow hash. Left out: any vendor's
actual hash function and its field selection, and resilient hashing after failures (a
failure here re-spreads the flows of the failed candidates and keeps the others).
Taught in chapters "Designing the fabric" and "GPU clusters".
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["fmix64", "flow_hash", "hash_digits", "DIGIT_LIMIT"]

_C1 = np.uint64(0xFF51AFD7ED558CCD)  # MurmurHash3 fmix64 multipliers
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_FLOW = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constants to spread flow and seed
_SEED = np.uint64(0xD6E8FEB86659FD93)
#: digits are read while the product of their bases stays below this; beyond it the hash
#: is re-mixed (fmix64 of itself xor the position) so later digits keep enough bits
DIGIT_LIMIT = 2**40


def _u64(value: Any) -> np.ndarray:
    """Two's-complement view as uint64, so negative flow ids or seeds hash too."""
    return np.asarray(value, dtype=np.int64).astype(np.uint64)


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser on a uint64 array: a bijective xorshift-multiply mix
    (0 maps to 0)."""
    h = h ^ (h >> np.uint64(33))
    h = h * _C1
    h = h ^ (h >> np.uint64(33))
    h = h * _C2
    return h ^ (h >> np.uint64(33))


def flow_hash(
    src: ArrayLike, dst: ArrayLike, flow: Optional[ArrayLike] = None, seed: int = 0
) -> np.ndarray:
    """The 64-bit hash of each flow ``(src, dst, flow)`` under ``seed``: a uint64 array.

    ``fmix64((src << 32 | dst) ^ fmix64(flow * F ^ seed * S))`` with fixed odd constants
    F and S; ``flow`` None means flow 0. Ends are endpoint ids below ``2**32``.
    """
    with np.errstate(over="ignore"):
        key = (_u64(src) << np.uint64(32)) | (_u64(dst) & np.uint64(0xFFFFFFFF))
        flow_term = np.zeros(key.shape, np.uint64) if flow is None else _u64(flow) * _FLOW
        extra = fmix64(flow_term ^ (_u64(seed) * _SEED))
        return fmix64(key ^ extra)


def hash_digits(key: np.ndarray, bases: Sequence[int]) -> list[np.ndarray]:
    """Digits of each hash in ``key``, one per base of ``bases``, lowest first: digit ``i``
    is ``key // prod(bases[:i]) % bases[i]`` (an int64 array), re-mixing the hash when the
    product would pass :data:`DIGIT_LIMIT`. A base of 1 gives 0 and uses no bits."""
    out = []
    h = key
    divisor = 1
    for position, base in enumerate(bases):
        base = int(base)
        if base == 1:
            out.append(np.zeros(key.shape, np.int64))
            continue
        if divisor * base > DIGIT_LIMIT:
            with np.errstate(over="ignore"):
                h = fmix64(h ^ (np.uint64(position + 1) * _FLOW))
            divisor = 1
        out.append(((h // np.uint64(divisor)) % np.uint64(base)).astype(np.int64))
        divisor *= base
    return out
