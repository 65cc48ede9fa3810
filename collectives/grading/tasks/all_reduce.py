"""The checks of the graded notebook on all-reduce (``exercises/source/all_reduce``).

Each check accepts *any* correct answer of the kind the task describes, not one algorithm's
exact transfers (a Rabenseifner all-reduce whose halving runs in another order), and rejects
answers that compute the all-reduce in another way (more steps, more bytes) with a message
that says what is different. A check is run in the isolated re-check by name, through
:func:`~collectives.grading.check_reference`: ``check_reference(1.0, what,
"grading.collective_tasks.check_rabenseifner_all_reduce", (answer, what, n))`` (the notebook's
name, the compatibility module ``collective_tasks``); it returns 1.0 when the answer passes
and raises ``AssertionError`` (a wrong answer) or :class:`~collectives.GradingError` (one of
the wrong form) otherwise.

Costs come from the package's model: :func:`collectives.time` on
:func:`collectives.hardware.preset` ``("dgx-h100", nodes=N)`` (latencies 0), against
:func:`collectives.algorithms.two_level_ring_all_reduce`. The notebook's other answers are
checked with the primitives (:func:`~collectives.grading.fastest_name`, ``check_close``).
"""

from collections import Counter
from functools import lru_cache

from ... import algorithms, cost, hardware
from ...errors import GradingError
from .. import diagnosis
from ..checks import count_text, show
from ..diagnosis import data_steps, rank_count

__all__ = [
    "check_rabenseifner_all_reduce",
    "check_hierarchical_all_reduce",
    "hierarchical_busbw",
    "GPUS_PER_NODE",
]

#: GPUs of one DGX H100 node
GPUS_PER_NODE = 8


# ---- all-reduce --------------------------------------------------------------------------


def check_rabenseifner_all_reduce(answer, what, n):
    """Any correct all-reduce over ``n`` ranks (a power of two) in ``2 log2 n`` steps that move
    data, in which no rank sends more than ``2 (n - 1)`` chunks in all: the latency of
    recursive doubling with the bytes of the ring. Returns 1.0."""
    n = rank_count(n)
    if n & (n - 1):
        raise GradingError(f"n = {n} is not a power of two (a bug in the test)")
    schedule = diagnosis.check_schedule(
        answer, "all_reduce", n, reference="rabenseifner_all_reduce", what=what
    )
    log_n = n.bit_length() - 1
    data = data_steps(schedule)
    if len(data) != 2 * log_n:
        raise AssertionError(
            f"{what} computes the all-reduce, but in "
            f"{count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"Rabenseifner's takes 2 log2(n) = {2 * log_n}: log2(n) of recursive halving, "
            "then log2(n) of recursive doubling"
        )
    sent = Counter(t[0] for _, step in data for t in step)
    if sent:
        rank, count = max(sent.items(), key=lambda item: (item[1], -item[0]))
        if count > 2 * (n - 1):
            raise AssertionError(
                f"{what} computes the all-reduce in {2 * log_n} steps, but rank {rank} sends "
                f"{count} chunks in all; Rabenseifner's algorithm sends 2(n - 1) = "
                f"{2 * (n - 1)} (n - 1 while halving, n - 1 while doubling): halve the block "
                "a rank is responsible for at every step of the reduce-scatter"
            )
    return 1.0


@lru_cache(maxsize=16)
def _dgx(n_nodes):
    return hardware.preset("dgx-h100", nodes=n_nodes)


def _levels_text(timing):
    levels = timing.level_seconds()
    return (
        ", ".join(
            f"{name} {seconds:.6g} s" for name, seconds in sorted(levels.items()) if seconds > 0
        )
        or "no time at all"
    )


def check_hierarchical_all_reduce(answer, what, n_nodes, nbytes, *, rel=1e-9):
    """A correct all-reduce over the ``8 n_nodes`` GPUs of ``n_nodes`` DGX H100 nodes (GPU
    ``node * 8 + local`` is rank ``node * 8 + local``, ``8 n_nodes`` chunks) that takes, by
    :func:`collectives.time` on ``preset("dgx-h100", nodes=n_nodes)`` with an ``nbytes``
    buffer, no longer than the hierarchical ring all-reduce
    (:func:`collectives.algorithms.two_level_ring_all_reduce`), within ``rel``. Returns 1.0."""
    n_nodes = rank_count(n_nodes, "n_nodes")
    n = GPUS_PER_NODE * n_nodes
    schedule = diagnosis.check_schedule(
        answer,
        "all_reduce",
        n,
        n_chunks=n,
        what=what,
        reference=lambda _n: algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE),
    )
    topology = _dgx(n_nodes)
    mine = cost.time(schedule, topology, nbytes)
    best = cost.time(algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE), topology, nbytes)
    if mine.seconds <= best.seconds * (1 + rel):
        return 1.0
    raise AssertionError(
        f"{what} computes the all-reduce, but on cl.hardware.preset('dgx-h100', "
        f"nodes={n_nodes}) it takes {mine.seconds!r} s for {show(nbytes)} bytes "
        f"({_levels_text(mine)}), {mine.seconds / best.seconds:.4g} times the "
        f"{best.seconds!r} s of the hierarchical all-reduce ({_levels_text(best)}): only an "
        "eighth of the buffer needs to cross each GPU's NIC, in both directions at once"
    )


def hierarchical_busbw(n_nodes, nbytes=2**30):
    """nccl-tests' bus bandwidth (bytes/s) of the hierarchical ring all-reduce
    (:func:`collectives.algorithms.two_level_ring_all_reduce`) over ``n_nodes`` DGX H100 nodes:
    :func:`collectives.busbw` of :func:`collectives.time` on ``preset("dgx-h100",
    nodes=n_nodes)``, latencies 0 (so the same for every ``nbytes``)."""
    n_nodes = rank_count(n_nodes, "n_nodes")
    seconds = cost.time(
        algorithms.two_level_ring_all_reduce(n_nodes, GPUS_PER_NODE), _dgx(n_nodes), nbytes
    ).seconds
    return cost.busbw("all_reduce", nbytes, seconds, GPUS_PER_NODE * n_nodes)
