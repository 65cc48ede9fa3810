"""The checks of the graded notebook on all-to-all (``exercises/source/all_to_all``).

Each check accepts *any* correct answer of the kind the task describes, not one algorithm's
exact transfers: a Bruck all-to-all with its rotations folded into the exchange steps, a
pairwise exchange that receives into rotated slots, a chain schedule in any order. It rejects
answers that compute the all-to-all in another way (more steps, other partners, two parts on
one link) with a message that says what is different. A check is run in the isolated re-check
by name, through :func:`~collectives.grading.check_reference`: ``check_reference(1.0, what,
"grading.collective_tasks.check_bruck_all_to_all", (answer, what, n))`` (the notebook's name,
the compatibility module ``collective_tasks``); it returns 1.0 when the answer passes and
raises ``AssertionError`` (a wrong answer) or :class:`~collectives.GradingError` (one of the
wrong form) otherwise. The MoE dispatch of the notebook is timed by
:func:`~collectives.grading.dispatch_seconds`.
"""

from collections import Counter

from ... import replay
from ...errors import CollectivesError, GradingError, ScheduleError
from ...schedule import Schedule
from ...semantics import collective_spec
from .. import diagnosis
from ..checks import count_text, show
from ..diagnosis import data_steps, rank_count, remote

__all__ = ["check_bruck_all_to_all", "check_pairwise_all_to_all", "check_chain_all_to_all"]


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
    n = rank_count(n)
    schedule = diagnosis.check_schedule(
        answer, "all_to_all", n, reference="bruck_all_to_all", what=what
    )
    k = (n - 1).bit_length()  # ceil(log2 n); 0 for n = 1
    data = data_steps(schedule)
    if len(data) != k:
        raise AssertionError(
            f"{what} computes the all-to-all, but in "
            f"{count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"Bruck's algorithm exchanges in ceil(log2 n) = {k} (local copies do not count)"
        )
    used = {}
    for s, step in data:
        offset = _one_partner(step, n)
        # 2**b ahead first, then 2**b behind (for n = 3, 2 ahead is also 1 behind)
        powers = [b for b in range(k) if offset == (1 << b) % n] + [
            b for b in range(k) if offset == (n - (1 << b)) % n
        ]
        if offset is None or not powers:
            pairs = sorted({(t[0], t[1]) for t in step})[:4]
            shown = ", ".join(f"{a} -> {b}" for a, b in pairs)
            raise AssertionError(
                f"{what}: in step {s} the ranks send to ({shown}, ...); in every exchange "
                "step of Bruck's algorithm each rank r sends to the same r + 2**b (or r - "
                "2**b), modulo n"
            )
        b = next((b for b in powers if b not in used), powers[0])
        if b in used:
            raise AssertionError(
                f"{what}: steps {used[b]} and {s} both send {1 << b} ranks away; Bruck's "
                f"exchange steps use each power of two 1, 2, ..., {1 << (k - 1)} once"
            )
        used[b] = s
        allowed = sum(1 for i in range(n) if i & (1 << b))
        sent = Counter(t[0] for t in step)
        rank, count = max(sent.items(), key=lambda item: (item[1], -item[0]))
        if count > allowed:
            raise AssertionError(
                f"{what}: in step {s} rank {rank} sends {count} parts {1 << b} ranks away; "
                f"Bruck's algorithm sends only the {allowed} parts whose distance i < {n} has "
                f"bit {1 << b} set"
            )
    return 1.0


def check_pairwise_all_to_all(answer, what, n):
    """Any correct pairwise exchange over ``n`` ranks: ``n - 1`` steps that move data between
    ranks, in each of which every rank sends exactly one part to another rank and receives
    exactly one (local copies, free, may sit in any step). Returns 1.0."""
    n = rank_count(n)
    schedule = diagnosis.check_schedule(answer, "all_to_all", n, what=what)
    data = data_steps(schedule)
    if len(data) != n - 1:
        raise AssertionError(
            f"{what} computes the all-to-all, but in "
            f"{count_text(len(data), 'step', 'steps')} that move data between ranks; "
            f"pairwise exchange takes n - 1 = {n - 1} for any n (local copies do not count)"
        )
    for s, step in data:
        for index, role in ((0, "sends"), (1, "receives")):
            counts = Counter(t[index] for t in step)
            for rank in range(n):
                if counts.get(rank, 0) != 1:
                    raise AssertionError(
                        f"{what}: in step {s} rank {rank} {role} "
                        f"{count_text(counts.get(rank, 0), 'part', 'parts')} from or to other "
                        "ranks; in pairwise exchange every rank sends one part and receives "
                        "one in every step"
                    )
    return 1.0


def _chain_schedule(answer, what, n):
    """The learner's list of steps as an all-to-all Schedule with ``n * n`` scratch slots."""
    spec = collective_spec("all_to_all")
    if isinstance(answer, Schedule):
        raise GradingError(f"{what} is a Schedule; return the list of steps")
    steps = diagnosis.steps_of(answer, what, spec, n, n, None)
    diagnosis.check_ranges(steps, what, n, n + n * n)
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
    n = rank_count(n)
    steps, schedule = _chain_schedule(answer, what, n)
    for s, step in enumerate(steps):
        for t, (src, dst, src_chunk, dst_chunk, _) in enumerate(step):
            if src != dst and abs(src - dst) != 1:
                raise AssertionError(
                    f"{what}: step {s} sends from rank {src} to rank {dst} (transfer {t}: "
                    f"{show((src, dst, src_chunk, dst_chunk))}); on a chain a rank sends only "
                    "to its neighbours r - 1 and r + 1"
                )
        links = Counter((t[0], t[1]) for t in remote(step))
        for (src, dst), count in sorted(links.items()):
            if count > 1:
                raise AssertionError(
                    f"{what}: in step {s} the link from rank {src} to rank {dst} carries "
                    f"{count} parts; this exercise allows one part per link and direction per "
                    "step"
                )
    try:
        replay.verify(schedule)
    except ScheduleError as exc:
        raise AssertionError(f"{what} does not compute the all-to-all: {exc}") from None
    diagnosis.numeric_check(schedule, collective_spec("all_to_all"), what)
    used = sum(1 for step in steps if remote(step))
    bound = n * n // 4
    if used != bound:
        raise AssertionError(
            f"{what} computes the all-to-all on the chain, one part per link and direction "
            f"per step, but in {count_text(used, 'step', 'steps')} that move data; the cut "
            f"bound is floor(n**2 / 4) = {bound}: the {bound} parts that cross the middle "
            "link each way need a step each, so that link must carry one at every step"
        )
    return 1.0
