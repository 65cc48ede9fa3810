"""Checks of the schedules and estimates that the graded notebooks on all-reduce
(``exercises/source/all_reduce``) and all-to-all (``exercises/source/all_to_all``) ask for.

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
:func:`collectives.algorithms.two_level_ring_all_reduce`.
"""

import math
from collections import Counter
from functools import lru_cache

from ..errors import CollectivesError, GradingError, ScheduleError
from ..schedule import Schedule
from ..semantics import collective_spec
from . import diagnosis
from .checks import package, show

__all__ = ["check_rabenseifner_all_reduce", "check_hierarchical_all_reduce",
           "hierarchical_busbw", "check_bruck_all_to_all", "check_pairwise_all_to_all",
           "check_chain_all_to_all"]

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
