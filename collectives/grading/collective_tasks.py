"""Checks of the schedules and estimates that the graded notebooks on all-reduce
(``exercises/source/all_reduce``), all-to-all (``exercises/source/all_to_all``) and cost models
(``exercises/source/cost_models``) ask for.

Each check accepts *any* correct answer of the kind the task describes, not one algorithm's
exact transfers: a Rabenseifner all-reduce whose halving runs in another order, a Bruck
all-to-all with its rotations folded into the exchange steps, a pairwise exchange that
receives into rotated slots. It rejects answers that compute the collective in another way
(more steps, more bytes, other partners) with a message that says what is different.

A check is run in the isolated re-check by name, through
:func:`~collectives.grading.check_reference`:
``check_reference(1.0, what, "grading.collective_tasks.check_bruck_all_to_all", (answer,
what, n))``. It returns 1.0 when the answer passes and raises ``AssertionError`` (a wrong
answer) or :class:`~collectives.GradingError` (one of the wrong form) otherwise.

Costs come from the package's model: :func:`collectives.time` on
:func:`collectives.hardware.preset` ``("dgx-h100", nodes=N)`` (latencies 0), against
:func:`collectives.algorithms.two_level_ring_all_reduce`; for the cost-model estimates,
:func:`collectives.time` of :func:`collectives.algorithms.ring_all_gather` on
:func:`collectives.topology.ring` (or one DGX H100 node), with
:func:`collectives.analytic.ring_all_gather` where many ring sizes are tried.
"""

import math
from collections import Counter
from functools import lru_cache

from ..errors import CollectivesError, GradingError, ScheduleError
from ..schedule import Schedule
from ..semantics import collective_spec
from . import diagnosis
from .checks import _ratio_hint, check_number, package, show

__all__ = ["check_rabenseifner_all_reduce", "check_hierarchical_all_reduce",
           "hierarchical_busbw", "check_bruck_all_to_all", "check_pairwise_all_to_all",
           "check_chain_all_to_all", "ring_gather_seconds", "check_ring_fit",
           "largest_ring_within", "check_largest_ring", "better_upgrade", "check_better_upgrade"]

GPUS_PER_NODE = 8


def _rank_count(n, what="n"):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise GradingError(f"{what} must be an int >= 1, got {n!r} (a bug in the test)")
    return n


def _remote(step):
    """The transfers of a step that leave their rank (local copies are free)."""
    return [t for t in step if t[0] != t[1]]


def _data_steps(schedule):
    """``(index, remote transfers)`` of every step that moves data between ranks."""
    steps = [list(step) for step in schedule.to_lists()]
    return [(s, _remote(step)) for s, step in enumerate(steps) if _remote(step)]


def _count_text(count, one, many):
    return f"{count} {one if count == 1 else many}"


# ---- all-reduce --------------------------------------------------------------------------

def check_rabenseifner_all_reduce(answer, what, n):
    """Any correct all-reduce over ``n`` ranks (a power of two) in ``2 log2 n`` steps that move
    data, in which no rank sends more than ``2 (n - 1)`` chunks in all: the latency of
    recursive doubling with the bytes of the ring. Returns 1.0."""
    n = _rank_count(n)
    if n & (n - 1):
        raise GradingError(f"n = {n} is not a power of two (a bug in the test)")
    schedule = diagnosis.check_schedule(answer, "all_reduce", n,
                                        reference="rabenseifner_all_reduce", what=what)
    log_n = n.bit_length() - 1
    data = _data_steps(schedule)
    if len(data) != 2 * log_n:
        raise AssertionError(
            f"{what} computes the all-reduce, but in "
            f"{_count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"Rabenseifner's takes 2 log2(n) = {2 * log_n}: log2(n) of recursive halving, "
            "then log2(n) of recursive doubling")
    sent = Counter(t[0] for _, step in data for t in step)
    if sent:
        rank, count = max(sent.items(), key=lambda item: (item[1], -item[0]))
        if count > 2 * (n - 1):
            raise AssertionError(
                f"{what} computes the all-reduce in {2 * log_n} steps, but rank {rank} sends "
                f"{count} chunks in all; Rabenseifner's algorithm sends 2(n - 1) = "
                f"{2 * (n - 1)} (n - 1 while halving, n - 1 while doubling): halve the block "
                "a rank is responsible for at every step of the reduce-scatter")
    return 1.0


@lru_cache(maxsize=16)
def _dgx(n_nodes):
    return package().hardware.preset("dgx-h100", nodes=n_nodes)


def _levels_text(timing):
    levels = timing.level_seconds()
    return ", ".join(f"{name} {seconds:.6g} s" for name, seconds in sorted(levels.items())
                     if seconds > 0) or "no time at all"


def check_hierarchical_all_reduce(answer, what, n_nodes, nbytes, *, rel=1e-9):
    """A correct all-reduce over the ``8 n_nodes`` GPUs of ``n_nodes`` DGX H100 nodes (GPU
    ``node * 8 + local`` is rank ``node * 8 + local``, ``8 n_nodes`` chunks) that takes, by
    :func:`collectives.time` on ``preset("dgx-h100", nodes=n_nodes)`` with an ``nbytes``
    buffer, no longer than the hierarchical ring all-reduce
    (:func:`collectives.algorithms.two_level_ring_all_reduce`), within ``rel``. Returns 1.0."""
    n_nodes = _rank_count(n_nodes, "n_nodes")
    n = GPUS_PER_NODE * n_nodes
    cl = package()
    schedule = diagnosis.check_schedule(
        answer, "all_reduce", n, n_chunks=n, what=what,
        reference=lambda _n: cl.algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE))
    topology = _dgx(n_nodes)
    mine = cl.time(schedule, topology, nbytes)
    best = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE), topology,
                   nbytes)
    if mine.seconds <= best.seconds * (1 + rel):
        return 1.0
    raise AssertionError(
        f"{what} computes the all-reduce, but on cl.hardware.preset('dgx-h100', "
        f"nodes={n_nodes}) it takes {mine.seconds!r} s for {show(nbytes)} bytes "
        f"({_levels_text(mine)}), {mine.seconds / best.seconds:.4g} times the "
        f"{best.seconds!r} s of the hierarchical all-reduce ({_levels_text(best)}): only an "
        "eighth of the buffer needs to cross each GPU's NIC, in both directions at once")


def hierarchical_busbw(n_nodes, nbytes=2**30):
    """nccl-tests' bus bandwidth (bytes/s) of the hierarchical ring all-reduce
    (:func:`collectives.algorithms.two_level_ring_all_reduce`) over ``n_nodes`` DGX H100 nodes:
    :func:`collectives.busbw` of :func:`collectives.time` on ``preset("dgx-h100",
    nodes=n_nodes)``, latencies 0 (so the same for every ``nbytes``)."""
    n_nodes = _rank_count(n_nodes, "n_nodes")
    cl = package()
    seconds = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE),
                      _dgx(n_nodes), nbytes).seconds
    return cl.busbw("all_reduce", nbytes, seconds, GPUS_PER_NODE * n_nodes)


# ---- all-to-all --------------------------------------------------------------------------

def _one_partner(step, n):
    """The one offset ``(dst - src) % n`` of every remote transfer of a step, or None."""
    offsets = {(t[1] - t[0]) % n for t in step}
    return offsets.pop() if len(offsets) == 1 else None


def check_bruck_all_to_all(answer, what, n):
    """Any correct Bruck all-to-all over ``n`` ranks: ``ceil(log2 n)`` steps that move data
    between ranks (local copies, free, may sit in any step, also the exchange steps); in each,
    every rank sends the same power of two ``2**b`` ranks ahead, or behind, each power once;
    and no rank sends more parts in it than there are slots ``i < n`` with bit ``b`` set.
    Returns 1.0."""
    n = _rank_count(n)
    schedule = diagnosis.check_schedule(answer, "all_to_all", n, reference="bruck_all_to_all",
                                        what=what)
    k = (n - 1).bit_length()                    # ceil(log2 n); 0 for n = 1
    data = _data_steps(schedule)
    if len(data) != k:
        raise AssertionError(
            f"{what} computes the all-to-all, but in "
            f"{_count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"Bruck's algorithm exchanges in ceil(log2 n) = {k} (local copies do not count)")
    used = {}
    for s, step in data:
        offset = _one_partner(step, n)
        # 2**b ahead first, then 2**b behind (for n = 3, 2 ahead is also 1 behind)
        powers = ([b for b in range(k) if offset == (1 << b) % n]
                  + [b for b in range(k) if offset == (n - (1 << b)) % n])
        if offset is None or not powers:
            pairs = sorted({(t[0], t[1]) for t in step})[:4]
            shown = ", ".join(f"{a} -> {b}" for a, b in pairs)
            raise AssertionError(
                f"{what}: in step {s} the ranks send to ({shown}, ...); in every exchange "
                "step of Bruck's algorithm each rank r sends to the same r + 2**b (or r - "
                "2**b), modulo n")
        b = next((b for b in powers if b not in used), powers[0])
        if b in used:
            raise AssertionError(
                f"{what}: steps {used[b]} and {s} both send {1 << b} ranks away; Bruck's "
                f"exchange steps use each power of two 1, 2, ..., {1 << (k - 1)} once")
        used[b] = s
        allowed = sum(1 for i in range(n) if i & (1 << b))
        sent = Counter(t[0] for t in step)
        rank, count = max(sent.items(), key=lambda item: (item[1], -item[0]))
        if count > allowed:
            raise AssertionError(
                f"{what}: in step {s} rank {rank} sends {count} parts {1 << b} ranks away; "
                f"Bruck's algorithm sends only the {allowed} parts whose distance i < {n} has "
                f"bit {1 << b} set")
    return 1.0


def check_pairwise_all_to_all(answer, what, n):
    """Any correct pairwise exchange over ``n`` ranks: ``n - 1`` steps that move data between
    ranks, in each of which every rank sends exactly one part to another rank and receives
    exactly one (local copies, free, may sit in any step). Returns 1.0."""
    n = _rank_count(n)
    schedule = diagnosis.check_schedule(answer, "all_to_all", n, what=what)
    data = _data_steps(schedule)
    if len(data) != n - 1:
        raise AssertionError(
            f"{what} computes the all-to-all, but in "
            f"{_count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"pairwise exchange takes n - 1 = {n - 1} for any n (local copies do not count)")
    for s, step in data:
        for index, role in ((0, "sends"), (1, "receives")):
            counts = Counter(t[index] for t in step)
            for rank in range(n):
                if counts.get(rank, 0) != 1:
                    raise AssertionError(
                        f"{what}: in step {s} rank {rank} {role} "
                        f"{_count_text(counts.get(rank, 0), 'part', 'parts')} from or to other "
                        "ranks; in pairwise exchange every rank sends one part and receives "
                        "one in every step")
    return 1.0


def _chain_schedule(answer, what, n):
    """The learner's list of steps as an all-to-all Schedule with ``n * n`` scratch slots."""
    spec = collective_spec("all_to_all")
    if isinstance(answer, Schedule):
        raise GradingError(f"{what} is a Schedule; return the list of steps")
    steps = diagnosis._steps_of(answer, what, spec, n, n, None)
    diagnosis._check_ranges(steps, what, n, n + n * n)
    try:
        schedule = Schedule("all_to_all", n, n, steps, n_scratch=n * n, name=what)
    except CollectivesError as exc:
        raise AssertionError(f"{what}: {exc}") from None
    return steps, schedule


def check_chain_all_to_all(answer, what, n):
    """A correct all-to-all over a chain of ``n`` ranks (links between ``r`` and ``r + 1``
    only, no wraparound) with ``n * n`` scratch slots per rank (slots ``n .. n + n*n - 1``),
    in which every link carries at most one part per direction per step, in ``floor(n**2 /
    4)`` steps that move data: the cut bound. Returns 1.0."""
    n = _rank_count(n)
    steps, schedule = _chain_schedule(answer, what, n)
    for s, step in enumerate(steps):
        for t, (src, dst, src_chunk, dst_chunk, _) in enumerate(step):
            if src != dst and abs(src - dst) != 1:
                raise AssertionError(
                    f"{what}: step {s} sends from rank {src} to rank {dst} (transfer {t}: "
                    f"{show((src, dst, src_chunk, dst_chunk))}); on a chain a rank sends only "
                    "to its neighbours r - 1 and r + 1")
        links = Counter((t[0], t[1]) for t in _remote(step))
        for (src, dst), count in sorted(links.items()):
            if count > 1:
                raise AssertionError(
                    f"{what}: in step {s} the link from rank {src} to rank {dst} carries "
                    f"{count} parts; this exercise allows one part per link and direction per "
                    "step")
    try:
        package().verify(schedule)
    except ScheduleError as exc:
        raise AssertionError(f"{what} does not compute the all-to-all: {exc}") from None
    diagnosis._numeric_check(schedule, collective_spec("all_to_all"), what)
    used = sum(1 for step in steps if _remote(step))
    bound = n * n // 4
    if used != bound:
        raise AssertionError(
            f"{what} computes the all-to-all on the chain, one part per link and direction "
            f"per step, but in {_count_text(used, 'step', 'steps')} that move data; the cut "
            f"bound is floor(n**2 / 4) = {bound}: the {bound} parts that cross the middle "
            "link each way need a step each, so that link must carry one at every step")
    return 1.0


# ---- cost models: the ring all-gather read back, sized and upgraded ----------------------

#: the ring sizes :func:`largest_ring_within` tries, at most
_MAX_RING = 10**6


def _ring_topology(n, alpha, bandwidth, system):
    """The topology a ring all-gather over ``n`` ranks runs on: ``"ring"`` (a ring of links of
    ``bandwidth`` and ``alpha`` per hop) or ``"dgx-h100"`` (one DGX H100 node, 450 GB/s
    NVLink; a step crosses two links, so ``alpha`` per step is two hop latencies)."""
    cl = package()
    if system == "ring":
        return cl.topology.ring(n, bandwidth, hop_latency=alpha)
    if system == "dgx-h100":
        topology = cl.hardware.preset("dgx-h100", hop_latency=alpha / 2)
        if n != topology.n_ranks or bandwidth != cl.hardware.spec("dgx-h100").link_bandwidth:
            raise GradingError(f"a DGX H100 node has {topology.n_ranks} GPUs and "
                               f"{cl.hardware.spec('dgx-h100').link_bandwidth!r} B/s links, not "
                               f"n = {n!r} and {bandwidth!r} (a bug in the test)")
        return topology
    raise GradingError(f"unknown system {system!r}; expected 'ring' or 'dgx-h100' (a bug in "
                       "the test)")


def ring_gather_seconds(n, nbytes, alpha, bandwidth, system="ring"):
    """:func:`collectives.time` of the one-way ring all-gather over ``n`` ranks of an
    ``nbytes`` buffer, ``alpha`` seconds per step and ``bandwidth`` bytes/s per link, on
    ``system`` (``"ring"`` or ``"dgx-h100"``, see :func:`_ring_topology`)."""
    cl = package()
    topology = _ring_topology(_rank_count(n), alpha, bandwidth, system)
    return cl.time(cl.algorithms.ring_all_gather(n), topology, nbytes).seconds


def _pair(answer, what, names):
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (tuple, list)) or len(
            answer) != len(names):
        raise GradingError(f"{what} should be a pair ({', '.join(names)}), but it is "
                           f"{show(answer)}")
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
            raise GradingError(f"the row ({size!r}, {time_us!r}) is not cl.time's {modelled!r} "
                               "us (a bug in the test, not in your answer)")
    got_alpha, got_bandwidth = _pair(answer, what, ("alpha", "bandwidth"))
    for name, got, want, unit, meaning in (
            ("alpha", got_alpha, alpha, "s", "the latency of one step"),
            ("bandwidth", got_bandwidth, bandwidth, "B/s", "the bytes/s of one link")):
        if not math.isclose(got, want, rel_tol=rel, abs_tol=1e-15):
            raise AssertionError(
                f"the {name} of {what} is {got!r} {unit}, expected {want!r} {unit} ({meaning} "
                f"of the ring these rows were timed on by cl.time){_ratio_hint(got, want)}")
    return 1.0


def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    """The most ranks ``n`` whose ring all-gather of an ``nbytes`` buffer takes at most
    ``seconds`` (``alpha`` > 0): the time grows with ``n``, so the last ``n`` from 1 up whose
    :func:`collectives.analytic.ring_all_gather` is within it (:data:`_MAX_RING` at most)."""
    cl = package()
    if not alpha > 0:
        raise GradingError(f"alpha = {alpha!r}: with no latency the ring may grow forever (a bug "
                           "in the test)")
    n = 1
    while cl.analytic.ring_all_gather(n + 1, nbytes, alpha=alpha, bandwidth=bandwidth) <= seconds:
        n += 1
        if n >= _MAX_RING:
            raise GradingError(f"more than {_MAX_RING} ranks fit in {seconds!r} s (a bug in the "
                               "test)")
    return n


def check_largest_ring(value, what, nbytes, alpha, bandwidth, seconds):
    """``value``, the most ranks whose ring all-gather fits in ``seconds``, against
    :func:`largest_ring_within`, confirmed with :func:`collectives.time` at that size and one
    rank more (rings up to 4096 ranks). Returns 1.0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        hint = " (use // or int(...))" if isinstance(value, float) else ""
        raise GradingError(f"{what} should be an int >= 1 (a number of ranks), but it is "
                           f"{show(value)}{hint}")
    want = largest_ring_within(nbytes, alpha, bandwidth, seconds)
    if want <= 4096:
        fits = ring_gather_seconds(want, nbytes, alpha, bandwidth)
        over = ring_gather_seconds(want + 1, nbytes, alpha, bandwidth)
        if not fits <= seconds < over:
            raise GradingError(f"cl.time does not confirm {want} ranks (a bug in the test)")
    if value == want:
        return 1.0
    analytic = package().analytic.ring_all_gather

    def taken(k):                        # cl.time where the ring is small enough to build
        if k <= 4096:
            return ring_gather_seconds(max(k, 1), nbytes, alpha, bandwidth)
        return analytic(k, nbytes, alpha=alpha, bandwidth=bandwidth)
    verdict = ("more than" if value > want else "within")
    raise AssertionError(
        f"{what} is {value}, but the answer is {want}: a ring all-gather over {value} ranks "
        f"takes {taken(value)!r} s, {verdict} the {seconds!r} s; over {want} ranks it takes "
        f"{taken(want)!r} s and over {want + 1}, {taken(want + 1)!r} s (cl.time)")


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


def check_better_upgrade(value, what, n, nbytes, alpha, bandwidth, latency_gain,
                         bandwidth_gain):
    """``value`` (``"latency"`` or ``"bandwidth"``) against :func:`better_upgrade`, with the
    times of both upgrades in the message. Returns 1.0."""
    if not isinstance(value, str):
        raise GradingError(f"{what} should be a string, 'latency' or 'bandwidth', but it is "
                           f"{show(value)}")
    if value not in _UPGRADES:
        raise AssertionError(f"{what} is {value!r}, which is not one of the choices: "
                             "'latency', 'bandwidth'")
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
        f"{bandwidth_gain:g}")
