"""Closed-form costs in the alpha-beta model, as the chapters derive them.

Every function takes ``n`` ranks (or a torus ``shape``), ``nbytes`` (nccl-tests' S: the
whole buffer one rank holds when the collective is done) and, by keyword so that the two
quantities of different units cannot be swapped, ``alpha`` (seconds of latency per message)
and ``bandwidth`` (bytes/s per link direction); it returns seconds:
``ring_all_gather(8, 2**26, alpha=1e-6, bandwidth=45e9)``. A message of m bytes
costs ``alpha + m / bandwidth`` (Hockney's model). On a ring or chain topology alpha is
the hop latency; through a switch a message crosses two links, so alpha is twice the
hop latency. :func:`collectives.time` must agree with these on uncontended topologies;
the tests hold it to them. Taught in chapter "Cost models and the ring all-gather".
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .errors import CollectivesError
from .validation import flag, integer, number, per_axis_flags

__all__ = [
    "ring_all_gather",
    "ring_reduce_scatter",
    "ring_all_reduce",
    "bidirectional_ring_all_gather",
    "bidirectional_ring_reduce_scatter",
    "bidirectional_ring_all_reduce",
    "latency_optimal_ring_all_gather",
    "latency_optimal_ring_reduce_scatter",
    "latency_optimal_ring_all_reduce",
    "recursive_doubling_all_gather",
    "recursive_halving_reduce_scatter",
    "direct_all_gather",
    "direct_all_to_all",
    "binomial_tree_broadcast",
    "binomial_tree_reduce",
    "ring_crossover_bytes",
    "chain_all_gather",
    "chain_reduce_scatter",
    "chain_broadcast",
    "rabenseifner_all_reduce",
    "recursive_doubling_all_reduce",
    "ring_all_to_all",
    "bidirectional_ring_all_to_all",
    "chain_all_to_all",
    "chain_farthest_first_all_to_all",
    "pairwise_all_to_all",
    "bruck_all_to_all",
    "torus_all_gather",
    "torus_reduce_scatter",
    "torus_all_reduce",
    "torus_all_to_all",
    "nvls_all_reduce",
    "sharp_all_reduce",
    "nvls_ideal_speedup",
]


def _check(n, nbytes, alpha, bandwidth):
    """The shared arguments, validated like every input of the package."""
    integer(n, "n", minimum=1)
    number(nbytes, "nbytes", unit="bytes")
    number(alpha, "alpha", unit="seconds per message")
    number(bandwidth, "bandwidth", positive=True, unit="bytes/s per link direction")


def _shape(shape: Any) -> tuple[int, ...]:
    """A torus shape as a tuple of ints >= 1, or a CollectivesError."""
    if isinstance(shape, (int,)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise CollectivesError(f"shape must be a tuple of axis sizes, got {shape!r}") from None
    if not shape:
        raise CollectivesError("shape must have at least one axis")
    return tuple(integer(m, "every axis size of shape", minimum=1) for m in shape)


def ring_all_gather(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """(n-1) steps, each moving one shard S/n per link: (n-1)(alpha + S/(n B))."""
    _check(n, nbytes, alpha, bandwidth)
    return (n - 1) * (alpha + nbytes / (n * bandwidth))


def ring_reduce_scatter(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """The mirror of the all-gather: the same (n-1)(alpha + S/(n B))."""
    return ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def ring_all_reduce(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """Reduce-scatter then all-gather: 2(n-1)(alpha + S/(n B))."""
    return 2 * ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def bidirectional_ring_all_gather(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Half of each shard goes each way: (n-1)(alpha + S/(2 n B)).

    With n = 2 both halves share the single link between the two ranks, so there is no
    gain over the unidirectional ring.
    """
    _check(n, nbytes, alpha, bandwidth)
    if n <= 2:
        return ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)
    return (n - 1) * (alpha + nbytes / (2 * n * bandwidth))


def bidirectional_ring_reduce_scatter(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Same as the bidirectional all-gather."""
    return bidirectional_ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def bidirectional_ring_all_reduce(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Twice the bidirectional all-gather."""
    return 2 * bidirectional_ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def latency_optimal_ring_all_gather(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Every shard goes whole both ways, half-way round: floor(n/2) steps and the split
    ring's bandwidth term, floor(n/2) alpha + (n-1) S / (2 n B). Derivation: each step moves
    one shard S/n per link direction, except the last step of an even ring, which moves the
    antipodal shard's halves (S/(2n)); (n/2 - 1) S/n + S/(2n) = (n-1) S/(2n) for even n and
    (n-1)/2 S/n for odd n. The Scaling Book's axis formula counts |X|/2 hops
    ("Sharded matrices", the note on ICI latency).

    With n = 2 both halves share the single link: alpha + S/(2B), the unidirectional ring's.
    """
    _check(n, nbytes, alpha, bandwidth)
    if n <= 2:
        return ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)
    return (n // 2) * alpha + (n - 1) * nbytes / (2 * n * bandwidth)


def latency_optimal_ring_reduce_scatter(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """The dual of the latency-optimal all-gather: the same cost."""
    return latency_optimal_ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def latency_optimal_ring_all_reduce(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Its reduce-scatter then its all-gather: 2 floor(n/2) alpha + (n-1) S / (n B)."""
    return 2 * latency_optimal_ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def recursive_doubling_all_gather(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """log2(n) steps moving 1, 2, 4, ... shards: log2(n) alpha + (n-1) S / (n B)."""
    _check(n, nbytes, alpha, bandwidth)
    return math.log2(n) * alpha + (n - 1) * nbytes / (n * bandwidth)


def recursive_halving_reduce_scatter(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """The mirror of recursive doubling: log2(n) alpha + (n-1) S / (n B)."""
    return recursive_doubling_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def direct_all_gather(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """One step; each rank's link carries n-1 shards: alpha + (n-1) S / (n B)."""
    _check(n, nbytes, alpha, bandwidth)
    return 0.0 if n == 1 else alpha + (n - 1) * nbytes / (n * bandwidth)


def direct_all_to_all(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """One step; each rank sends n-1 parts of S/n: alpha + (n-1) S / (n B)."""
    return direct_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def binomial_tree_broadcast(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """ceil(log2 n) steps of the whole buffer: ceil(log2 n)(alpha + S / B)."""
    _check(n, nbytes, alpha, bandwidth)
    return math.ceil(math.log2(n)) * (alpha + nbytes / bandwidth)


def binomial_tree_reduce(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """The broadcast tree run backwards: the same cost."""
    return binomial_tree_broadcast(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def ring_crossover_bytes(n: int, *, alpha: float, bandwidth: float) -> float:
    """The buffer size S at which a ring step's latency equals its transfer time:
    alpha = S / (n B), so S = n alpha B. Below it the ring is latency-bound."""
    _check(n, 0.0, alpha, bandwidth)
    return n * alpha * bandwidth


# ---- chains ---------------------------------------------------------------------------------


def chain_all_gather(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """Both ways at once, one shard per link direction per step: (n-1)(alpha + S/(n B)),
    twice the bandwidth term of a bidirectional ring (no wraparound to split over)."""
    return ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def chain_reduce_scatter(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """The dual of the chain all-gather: the same cost."""
    return ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def chain_broadcast(
    n: int, nbytes: float, *, alpha: float, bandwidth: float, n_segments: int = 1
) -> float:
    """``n_segments`` = k segments down a line of n ranks: (n - 2 + k)(alpha + S/(k B)); as
    k grows the time tends to S/B, independent of n (pipelining)."""
    _check(n, nbytes, alpha, bandwidth)
    k = integer(n_segments, "n_segments", minimum=1)
    return 0.0 if n == 1 else (n - 2 + k) * (alpha + nbytes / (k * bandwidth))


# ---- all-reduce ----------------------------------------------------------------------------


def rabenseifner_all_reduce(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """Recursive halving then doubling: 2 log2(n) alpha + 2 (n-1) S / (n B)."""
    return 2 * recursive_doubling_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def recursive_doubling_all_reduce(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """log2(n) exchanges of the whole buffer: log2(n)(alpha + S/B)."""
    _check(n, nbytes, alpha, bandwidth)
    return math.log2(n) * (alpha + nbytes / bandwidth)


# ---- all-to-all ----------------------------------------------------------------------------


def ring_all_to_all(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """Step s forwards n-1-s parts of S/n: (n-1) alpha + (n-1) S / (2 B)."""
    _check(n, nbytes, alpha, bandwidth)
    return (n - 1) * alpha + (n - 1) * nbytes / (2 * bandwidth)


def bidirectional_ring_all_to_all(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Shorter way round, floor(n/2) steps: floor(n/2) alpha + n S/(8B) for even n and
    (n^2 - 1) S / (8 n B) for odd n: a quarter of the unidirectional bandwidth term
    for large n (The Scaling Book's V / (4 W) with W = 2B, V = n S). With n = 2 both
    halves share the single link: no gain over the unidirectional ring."""
    _check(n, nbytes, alpha, bandwidth)
    if n <= 2:
        return ring_all_to_all(n, nbytes, alpha=alpha, bandwidth=bandwidth)
    m = n // 2
    bytes_term = n * nbytes / 8 if n % 2 == 0 else (n * n - 1) * nbytes / (8 * n)
    return m * alpha + bytes_term / bandwidth


def chain_all_to_all(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """The chain relay (every part moves at every step): step s, the link next to an end
    carries n-1-s parts: the unidirectional ring's (n-1) alpha + (n-1) S/(2B). A property
    of the relay, not of chains: see :func:`chain_farthest_first_all_to_all`."""
    return ring_all_to_all(n, nbytes, alpha=alpha, bandwidth=bandwidth)


def chain_farthest_first_all_to_all(
    n: int, nbytes: float, *, alpha: float, bandwidth: float
) -> float:
    """Farthest part first, one part (S/n) per link direction per step: the middle link
    carries floor(n^2/4) parts each way, one per step, so floor(n^2/4) (alpha + S/(n B)):
    n^2/4 alpha + n S/(4B) for even n, the cut bound's bandwidth term."""
    _check(n, nbytes, alpha, bandwidth)
    return (n * n // 4) * (alpha + nbytes / (n * bandwidth))


def pairwise_all_to_all(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """One part per step, n - 1 steps for any n (r sends to r + s, or r XOR s when n is a
    power of two): (n-1)(alpha + S/(n B))."""
    _check(n, nbytes, alpha, bandwidth)
    return (n - 1) * (alpha + nbytes / (n * bandwidth))


def bruck_all_to_all(n: int, nbytes: float, *, alpha: float, bandwidth: float) -> float:
    """ceil(log2 n) exchange steps; step b sends the parts at positions with bit b set,
    about n/2 of them: sum over b of (alpha + c_b S/(n B))."""
    _check(n, nbytes, alpha, bandwidth)
    total = 0.0
    for b in range((n - 1).bit_length()):
        c = sum(1 for i in range(n) if (i >> b) & 1)
        total += alpha + c * nbytes / (n * bandwidth)
    return total


# ---- tori ------------------------------------------------------------------------------------


def _torus_stages(shape, nbytes, concurrent):
    """(axis size, 1-D all-gather buffer size) of each stage of a torus all-gather."""
    shape = _shape(shape)
    flag(concurrent, "concurrent")
    axes = [m for m in shape if m > 1]
    n = math.prod(shape)
    if concurrent and len(set(axes)) > 1:
        raise CollectivesError(
            "the concurrent torus all-gather has a closed form only when every axis used has "
            f"the same size; got {tuple(shape)}"
        )
    parts = len(axes) if concurrent and axes else 1
    stages, done = [], 1
    for m in axes:
        stages.append((m, m * (nbytes / parts) * done / n))
        done *= m
    return stages


def torus_all_gather(
    shape: int | Sequence[int],
    nbytes: float,
    *,
    alpha: float,
    bandwidth: float,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> float:
    """A 1-D all-gather along each axis in turn: stage i gathers blocks of
    S prod(earlier sizes) / n over m_i ranks, by a ring where the axis wraps (bidirectional
    if ``bidirectional``: latency-optimal, floor(m/2) steps, if ``latency_optimal``, else
    the split ring's m - 1) and a chain where it does not. With ``concurrent`` (equal axis
    sizes, all wrapping) the axes work at once on 1/len(axes) of the data each: The Scaling
    Book's V / (W x axes)."""
    shape = _shape(shape)
    _check(1, nbytes, alpha, bandwidth)
    if not flag(bidirectional, "bidirectional"):
        one_d = ring_all_gather
    elif flag(latency_optimal, "latency_optimal"):
        one_d = latency_optimal_ring_all_gather
    else:
        one_d = bidirectional_ring_all_gather
    wraps = [w for w, m in zip(_wrap_flags(shape, wraparound), shape) if m > 1]
    if concurrent and not all(wraps):
        raise CollectivesError(
            "the concurrent torus all-gather has a closed form only when "
            "every axis used wraps around"
        )
    return sum(
        (one_d if w else chain_all_gather)(m, s, alpha=alpha, bandwidth=bandwidth)
        for w, (m, s) in zip(wraps, _torus_stages(shape, nbytes, concurrent))
    )


def _wrap_flags(shape, wraparound):
    return per_axis_flags(wraparound, len(shape))


def torus_reduce_scatter(
    shape: int | Sequence[int],
    nbytes: float,
    *,
    alpha: float,
    bandwidth: float,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> float:
    """The dual of the torus all-gather: the same cost."""
    return torus_all_gather(
        shape,
        nbytes,
        alpha=alpha,
        bandwidth=bandwidth,
        bidirectional=bidirectional,
        concurrent=concurrent,
        wraparound=wraparound,
        latency_optimal=latency_optimal,
    )


def torus_all_reduce(
    shape: int | Sequence[int],
    nbytes: float,
    *,
    alpha: float,
    bandwidth: float,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> float:
    """Torus reduce-scatter then all-gather: twice the torus all-gather."""
    return 2 * torus_all_gather(
        shape,
        nbytes,
        alpha=alpha,
        bandwidth=bandwidth,
        bidirectional=bidirectional,
        concurrent=concurrent,
        wraparound=wraparound,
        latency_optimal=latency_optimal,
    )


def torus_all_to_all(
    shape: int | Sequence[int],
    nbytes: float,
    *,
    alpha: float,
    bandwidth: float,
    line: str = "bidirectional_ring",
) -> float:
    """A 1-D all-to-all of the whole buffer along each axis in turn."""
    one_d = {"bidirectional_ring": bidirectional_ring_all_to_all, "ring": ring_all_to_all}.get(line)
    if one_d is None:
        raise CollectivesError(
            f"torus_all_to_all has a closed form for line='bidirectional_ring' or 'ring', "
            f"got {line!r}"
        )
    return sum(one_d(m, nbytes, alpha=alpha, bandwidth=bandwidth) for m in _shape(shape) if m > 1)


# ---- in-network reduction -------------------------------------------------------------------


def _pipelined_steps(phases, k, alpha, bandwidth):
    """Time of ``phases`` (each: bytes up and bytes down per link, whole buffer) cut into
    ``k`` segments, segment j running phase p at step j + p; each step costs alpha plus its
    busier direction."""
    total = 0.0
    for t in range(k + len(phases) - 1):
        active = [ph for p, ph in enumerate(phases) if p <= t <= p + k - 1]
        up = sum(ph[0] for ph in active) / k
        down = sum(ph[1] for ph in active) / k
        total += alpha + max(up, down) / bandwidth
    return total


def nvls_all_reduce(
    n: int, nbytes: float, *, alpha: float, bandwidth: float, n_segments: int = 1
) -> float:
    """NVLink SHARP all-reduce (:func:`collectives.algorithms.nvls_all_reduce`) on one
    switch: four phases per segment (slices reduced in the switch: S up; slice c back to
    GPU c: S/n down; slice c stored: S/n up; multicast: S down), ``n_segments`` pipelined.
    Unpipelined 4 alpha + 2 (1 + 1/n) S/B; as the segments grow it tends to
    (1 + 1/n) S / B, so algbw tends to B n/(n+1). ``alpha``: one GPU-switch link crossing."""
    _check(n, nbytes, alpha, bandwidth)
    k = integer(n_segments, "n_segments", minimum=1)
    s = nbytes
    return _pipelined_steps([(s, 0.0), (0.0, s / n), (s / n, 0.0), (0.0, s)], k, alpha, bandwidth)


def sharp_all_reduce(
    n: int, nbytes: float, *, alpha: float, bandwidth: float, n_segments: int = 1
) -> float:
    """All-reduce in one switch (:func:`collectives.algorithms.sharp_all_reduce`): S up, the
    sum multicast down, ``n_segments`` = k pipelined: (k + 1)(alpha + S/(k B)), tending to
    S/B."""
    _check(n, nbytes, alpha, bandwidth)
    k = integer(n_segments, "n_segments", minimum=1)
    return _pipelined_steps([(nbytes, 0.0), (0.0, nbytes)], k, alpha, bandwidth)


def nvls_ideal_speedup(n: int) -> float:
    """Bandwidth-bound speed-up of NVLS over the ring all-reduce on one switch:
    (2 (n-1)/n) / ((n+1)/n) = 2 (n-1)/(n+1); 1.56 for 8 GPUs. NCCL's maintainers relate NVLS
    bandwidth to link bandwidth this way (nccl-tests issue #212, pull request #239); the
    often-quoted 1.75x assumes S per direction instead of S + S/n, and 8xH100 measure about
    1.3x (nccl-tests #212, NCCL issue #1455)."""
    n = integer(n, "n", minimum=1)
    return 2 * (n - 1) / (n + 1)
