"""The checks of the graded notebook on cost models (``exercises/source/cost_models``): the
ring all-gather read back from measurements, sized to a time budget and upgraded.

Each ``check_*`` is run in the isolated re-check by name, through
:func:`~collectives.grading.check_reference`: ``check_reference(1.0, what,
"grading.collective_tasks.check_ring_fit", (answer, what, ...))`` (the notebook's name, the
compatibility module ``collective_tasks``); it returns 1.0 when the answer passes and raises
``AssertionError`` (a wrong answer) or :class:`~collectives.GradingError` (one of the wrong
form, or a bug in the test) otherwise.

Times come from the package's model: :func:`collectives.time` of
:func:`collectives.algorithms.ring_all_gather` on :func:`collectives.topology.ring` (or one
DGX H100 node), with :func:`collectives.analytic.ring_all_gather` where many ring sizes are
tried. The notebook's schedule task is checked with ``check_schedule``
(:mod:`~collectives.grading.diagnosis`).
"""

import math

from ... import algorithms, analytic, cost, hardware
from ... import topology as topologies
from ...errors import GradingError
from ..checks import check_number, ratio_hint, show
from ..diagnosis import rank_count

__all__ = [
    "ring_gather_seconds",
    "check_ring_fit",
    "largest_ring_within",
    "check_largest_ring",
    "better_upgrade",
    "check_better_upgrade",
]


# ---- cost models: the ring all-gather read back, sized and upgraded ----------------------

#: the ring sizes :func:`largest_ring_within` tries, at most
_MAX_RING = 10**6


def _ring_topology(n, alpha, bandwidth, system):
    """The topology a ring all-gather over ``n`` ranks runs on: ``"ring"`` (a ring of links of
    ``bandwidth`` and ``alpha`` per hop) or ``"dgx-h100"`` (one DGX H100 node, 450 GB/s
    NVLink; a step crosses two links, so ``alpha`` per step is two hop latencies)."""
    if system == "ring":
        return topologies.ring(n, bandwidth, hop_latency=alpha)
    if system == "dgx-h100":
        topology = hardware.preset("dgx-h100", hop_latency=alpha / 2)
        if n != topology.n_ranks or bandwidth != hardware.spec("dgx-h100").link_bandwidth:
            raise GradingError(
                f"a DGX H100 node has {topology.n_ranks} GPUs and "
                f"{hardware.spec('dgx-h100').link_bandwidth!r} B/s links, not "
                f"n = {n!r} and {bandwidth!r} (a bug in the test)"
            )
        return topology
    raise GradingError(
        f"unknown system {system!r}; expected 'ring' or 'dgx-h100' (a bug in the test)"
    )


def ring_gather_seconds(n, nbytes, alpha, bandwidth, system="ring"):
    """:func:`collectives.time` of the one-way ring all-gather over ``n`` ranks of an
    ``nbytes`` buffer, ``alpha`` seconds per step and ``bandwidth`` bytes/s per link, on
    ``system`` (``"ring"`` or ``"dgx-h100"``, see :func:`_ring_topology`)."""
    topology = _ring_topology(rank_count(n), alpha, bandwidth, system)
    return cost.time(algorithms.ring_all_gather(n), topology, nbytes).seconds


def _pair(answer, what, names):
    if (
        isinstance(answer, (str, bytes))
        or not isinstance(answer, (tuple, list))
        or len(answer) != len(names)
    ):
        raise GradingError(
            f"{what} should be a pair ({', '.join(names)}), but it is {show(answer)}"
        )
    return [check_number(value, f"the {name} of {what}") for value, name in zip(answer, names)]


def check_ring_fit(answer, what, n, rows, alpha, bandwidth, *, system="ring", rel=1e-6):
    """``answer``, a pair ``(alpha, bandwidth)`` fitted to nccl-tests rows ``[(size in bytes,
    time in us), ...]`` of a ring all-gather over ``n`` ranks, against the ``alpha`` (seconds
    per step) and ``bandwidth`` (bytes/s per link) of the ring the rows were timed on. The rows
    are first held to :func:`collectives.time` on that ring (:func:`ring_gather_seconds`),
    so the test's data are the package's. Returns 1.0."""
    for size, time_us in rows:
        modelled = ring_gather_seconds(n, size, alpha, bandwidth, system) * 1e6
        if not math.isclose(time_us, modelled, rel_tol=1e-12, abs_tol=1e-12):
            raise GradingError(
                f"the row ({size!r}, {time_us!r}) is not cl.time's {modelled!r} "
                "us (a bug in the test, not in your answer)"
            )
    got_alpha, got_bandwidth = _pair(answer, what, ("alpha", "bandwidth"))
    for name, got, want, unit, meaning in (
        ("alpha", got_alpha, alpha, "s", "the latency of one step"),
        ("bandwidth", got_bandwidth, bandwidth, "B/s", "the bytes/s of one link"),
    ):
        if not math.isclose(got, want, rel_tol=rel, abs_tol=1e-15):
            raise AssertionError(
                f"the {name} of {what} is {got!r} {unit}, expected {want!r} {unit} ({meaning} "
                f"of the ring these rows were timed on by cl.time){ratio_hint(got, want)}"
            )
    return 1.0


def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    """The most ranks ``n`` whose ring all-gather of an ``nbytes`` buffer takes at most
    ``seconds`` (``alpha`` > 0): the time grows with ``n``, so the last ``n`` from 1 up whose
    :func:`collectives.analytic.ring_all_gather` is within it (:data:`_MAX_RING` at most)."""
    if not alpha > 0:
        raise GradingError(
            f"alpha = {alpha!r}: with no latency the ring may grow forever (a bug in the test)"
        )
    n = 1
    while analytic.ring_all_gather(n + 1, nbytes, alpha=alpha, bandwidth=bandwidth) <= seconds:
        n += 1
        if n >= _MAX_RING:
            raise GradingError(
                f"more than {_MAX_RING} ranks fit in {seconds!r} s (a bug in the test)"
            )
    return n


def check_largest_ring(value, what, nbytes, alpha, bandwidth, seconds):
    """``value``, the most ranks whose ring all-gather fits in ``seconds``, against
    :func:`largest_ring_within`, confirmed with :func:`collectives.time` at that size and one
    rank more (rings up to 4096 ranks). Returns 1.0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        hint = " (use // or int(...))" if isinstance(value, float) else ""
        raise GradingError(
            f"{what} should be an int >= 1 (a number of ranks), but it is {show(value)}{hint}"
        )
    want = largest_ring_within(nbytes, alpha, bandwidth, seconds)
    if want <= 4096:
        fits = ring_gather_seconds(want, nbytes, alpha, bandwidth)
        over = ring_gather_seconds(want + 1, nbytes, alpha, bandwidth)
        if not fits <= seconds < over:
            raise GradingError(f"cl.time does not confirm {want} ranks (a bug in the test)")
    if value == want:
        return 1.0
    closed_form = analytic.ring_all_gather

    def taken(k):  # cl.time where the ring is small enough to build
        if k <= 4096:
            return ring_gather_seconds(max(k, 1), nbytes, alpha, bandwidth)
        return closed_form(k, nbytes, alpha=alpha, bandwidth=bandwidth)

    verdict = "more than" if value > want else "within"
    raise AssertionError(
        f"{what} is {value}, but the answer is {want}: a ring all-gather over {value} ranks "
        f"takes {taken(value)!r} s, {verdict} the {seconds!r} s; over {want} ranks it takes "
        f"{taken(want)!r} s and over {want + 1}, {taken(want + 1)!r} s (cl.time)"
    )


_UPGRADES = ("latency", "bandwidth")


def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    """``"latency"`` if dividing the per-hop latency by ``latency_gain`` makes the ring
    all-gather on :func:`collectives.topology.ring` faster than multiplying the link bandwidth
    by ``bandwidth_gain``, else ``"bandwidth"`` (by :func:`collectives.time`); a tie within
    1e-9 is a :class:`GradingError` (tests avoid them)."""
    faster_hops = ring_gather_seconds(n, nbytes, alpha / latency_gain, bandwidth)
    faster_links = ring_gather_seconds(n, nbytes, alpha, bandwidth * bandwidth_gain)
    if math.isclose(faster_hops, faster_links, rel_tol=1e-9):
        raise GradingError(f"both upgrades give {faster_hops!r} s (a tie: a bug in the test)")
    return "latency" if faster_hops < faster_links else "bandwidth"


def check_better_upgrade(value, what, n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    """``value`` (``"latency"`` or ``"bandwidth"``) against :func:`better_upgrade`, with the
    times of both upgrades in the message. Returns 1.0."""
    if not isinstance(value, str):
        raise GradingError(
            f"{what} should be a string, 'latency' or 'bandwidth', but it is {show(value)}"
        )
    if value not in _UPGRADES:
        raise AssertionError(
            f"{what} is {value!r}, which is not one of the choices: 'latency', 'bandwidth'"
        )
    want = better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain)
    if value == want:
        return 1.0
    before = ring_gather_seconds(n, nbytes, alpha, bandwidth)
    faster_hops = ring_gather_seconds(n, nbytes, alpha / latency_gain, bandwidth)
    faster_links = ring_gather_seconds(n, nbytes, alpha, bandwidth * bandwidth_gain)
    raise AssertionError(
        f"{what} is {value!r}, but the answer is {want!r}: by cl.time the ring all-gather takes "
        f"{before * 1e6:.6g} us now, {faster_hops * 1e6:.6g} us with the latency divided by "
        f"{latency_gain:g} and {faster_links * 1e6:.6g} us with the bandwidth multiplied by "
        f"{bandwidth_gain:g}"
    )
