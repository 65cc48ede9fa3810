"""Diagnosis of a learner's schedule: what is wrong with it, and where it first goes wrong.

:func:`check_schedule` takes a schedule written as a list of steps (or a
:class:`~collectives.Schedule`) and checks, in order: its form (lists of integer tuples),
ranks and chunks in range, an optional neighbour rule (:data:`NEIGHBOUR_RULES`), that it
computes the collective (:func:`collectives.verify`, then :func:`collectives.simulate` on
random integers against the collective's definition, computed here from first principles),
its step count and its sends per rank per step. When it is wrong, a reference algorithm is
replayed symbolically beside it (:func:`step_states`) to say after which step, on which rank
and chunk, the two first differ (:func:`describe_slot` puts a slot's content in words), with
the learner's own step beside it: never the reference's steps, which would give the answer
away.

The parts of the check (:func:`steps_of`, :func:`check_ranges`, :func:`numeric_check`) and
the readers of a checked schedule (:func:`data_steps`, :func:`remote`) serve the checks of
assignments that accept any schedule of a kind (``tasks/all_reduce.py``,
``tasks/all_to_all.py``).
"""

import math
from collections import Counter

import numpy as np

from .. import replay
from ..errors import CollectivesError, GradingError, ScheduleError
from ..replay import INVALID, describe_content, trace
from ..schedule import Schedule
from ..semantics import collective_spec
from .checks import MAX_ITEMS, in_words, show

__all__ = [
    "check_schedule",
    "NEIGHBOUR_RULES",
    "step_states",
    "describe_slot",
    "steps_of",
    "check_ranges",
    "numeric_check",
    "rank_count",
    "remote",
    "data_steps",
]

_FIELDS = ("src", "dst", "src_chunk", "dst_chunk")
#: step_states() is not used for hints above this size: slots x (steps + 1)
_REPLAY_LIMIT = 2_000_000


# ---- schedules: form -------------------------------------------------------------------------


def _as_int(value, where):
    if isinstance(value, (bool, np.bool_)):
        raise GradingError(f"{where} is {value!r}, a bool; expected an integer")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if math.isfinite(value) and float(value).is_integer():
            raise GradingError(
                f"{where} is {value!r}, a float; rank and chunk numbers must be "
                "ints (use // rather than /, or int(...))"
            )
        raise GradingError(f"{where} is {value!r}; expected an integer")
    raise GradingError(f"{where} is {in_words(value)}; expected an integer")


def _is_int_like(value):
    return isinstance(value, (int, np.integer, float, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _as_list(value):
    """A list from a list, tuple or (sorted if possible) set; ndarray rows via tolist()."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    return list(value)


def _count_items(steps):
    return sum(
        len(s) if isinstance(s, (list, tuple, set, frozenset, np.ndarray)) else 1 for s in steps
    )


def steps_of(answer, what, spec, n, n_chunks, root, n_scratch=0):
    """The learner's ``answer`` (a Schedule of ``spec``'s collective or a list of steps) as
    ``[[(src, dst, src_chunk, dst_chunk, reduce), ...], ...]``; a
    :class:`~collectives.GradingError` for an answer of the wrong form, an ``AssertionError``
    for a Schedule of another shape."""
    if isinstance(answer, Schedule):
        for attr, want in (
            ("collective", spec.name),
            ("n_ranks", n),
            ("n_chunks", n_chunks),
            ("root", root),
        ):
            if getattr(answer, attr) != want:
                raise AssertionError(
                    f"{what} is a Schedule with {attr}={getattr(answer, attr)!r}; "
                    f"expected {attr}={want!r}"
                )
        if answer.n_scratch != n_scratch:
            has = "has none" if not n_scratch else f"has {n_scratch}"
            raise AssertionError(
                f"{what} uses {answer.n_scratch} scratch slots; this exercise {has}"
            )
        return [list(step) for step in answer.to_lists()]
    if answer is None:
        raise GradingError(
            f"{what} is None, not a list of steps: nothing was returned (did you forget `return`?)"
        )
    if isinstance(answer, np.ndarray):
        if answer.dtype.kind not in "iu":
            raise GradingError(
                f"{what} is {in_words(answer)}; return a list of steps, each a "
                "list of (src, dst, src_chunk, dst_chunk) tuples of ints"
            )
        answer = answer.tolist()
    if isinstance(answer, (set, frozenset)):
        raise GradingError(f"{what} is a set; steps happen in order, so return a list of steps")
    if not isinstance(answer, (list, tuple)):
        raise GradingError(
            f"{what} is {in_words(answer)}, not a list of steps (each step a "
            "list of (src, dst, src_chunk, dst_chunk) tuples)"
        )
    if _count_items(answer) > MAX_ITEMS:
        raise GradingError(
            f"{what} has more than {MAX_ITEMS} transfers; that is not a schedule for this exercise"
        )
    steps = []
    for s, step in enumerate(answer):
        if isinstance(step, np.ndarray):
            step = step.tolist()
        if (
            isinstance(step, (list, tuple))
            and len(step) in (4, 5)
            and all(_is_int_like(v) for v in step[:4])
        ):
            raise GradingError(
                f"{what}: step {s} is {show(step)}, which looks like one transfer, not a "
                "step; put the transfers of each step in a list of their own: "
                "[[(0, 1, 0, 0), (1, 2, 1, 1), ...], [...], ...]"
            )
        if not isinstance(step, (list, tuple, set, frozenset)):
            raise GradingError(
                f"{what}: step {s} is {in_words(step)}; each step must be a "
                "list of (src, dst, src_chunk, dst_chunk) tuples"
            )
        transfers = []
        for t, transfer in enumerate(_as_list(step)):
            transfers.append(_transfer_of(transfer, f"{what}: step {s}, transfer {t}", spec))
        steps.append(transfers)
    return steps


def _transfer_of(transfer, where, spec):
    if isinstance(transfer, np.ndarray):
        transfer = transfer.tolist()
    if not isinstance(transfer, (tuple, list)):
        raise GradingError(
            f"{where} is {in_words(transfer)}; a transfer is a tuple "
            "(src, dst, src_chunk, dst_chunk)"
        )
    if len(transfer) not in (4, 5):
        raise GradingError(
            f"{where} is {show(transfer)}, with {len(transfer)} fields; a "
            "transfer is a tuple (src, dst, src_chunk, dst_chunk)"
        )
    values = [
        _as_int(v, f"{where} {show(transfer)}: {name}") for name, v in zip(_FIELDS, transfer[:4])
    ]
    reduce = False
    if len(transfer) == 5:
        flag = transfer[4]
        if isinstance(flag, (bool, np.bool_)):
            reduce = bool(flag)
        elif flag in ("copy", "reduce"):
            reduce = flag == "reduce"
        else:
            raise GradingError(
                f"{where} {show(transfer)}: the fifth field must be 'copy' or "
                f"'reduce' (or False/True), got {show(flag)}"
            )
        if reduce and not spec.reducing:
            raise AssertionError(
                f"{where} {show(transfer)} is a reduce; {_text(spec)} only copies chunks"
            )
    return (*values, reduce)


def _text(spec):
    return spec.name.replace("_", "-")


def _steps_text(count):
    """``1 step that moves data``, ``3 steps that move data``."""
    return f"{count} step that moves data" if count == 1 else f"{count} steps that move data"


def check_ranges(steps, what, n, n_slots, n_chunks=None):
    """An ``AssertionError`` for the first rank outside ``0..n-1`` or slot outside
    ``0..n_slots-1`` in ``steps`` (from :func:`steps_of`); slots from ``n_chunks`` on are
    named as scratch."""
    data = n_slots if n_chunks is None else n_chunks
    for s, step in enumerate(steps):
        for t, (src, dst, src_chunk, dst_chunk, _) in enumerate(step):
            where = f"{what}: step {s}, transfer {t} {show((src, dst, src_chunk, dst_chunk))}"
            for name, value, limit, kind in (
                ("src", src, n, "rank"),
                ("dst", dst, n, "rank"),
                ("src_chunk", src_chunk, n_slots, "chunk"),
                ("dst_chunk", dst_chunk, n_slots, "chunk"),
            ):
                if not 0 <= value < limit:
                    scratch = (
                        f" (chunks {data}..{n_slots - 1} are scratch)" if data < n_slots else ""
                    )
                    span = (
                        f"the ranks are 0..{n - 1}"
                        if kind == "rank"
                        else f"each rank's buffer has chunks 0..{n_slots - 1}{scratch}"
                    )
                    hint = " (did you forget `% n`?)" if value in (limit, -1) else ""
                    raise AssertionError(f"{where}: {name} {value} is not a {kind}; {span}{hint}")


# ---- neighbour rules -------------------------------------------------------------------------


def _ring_rule(src, n):
    nxt = (src + 1) % n
    return {nxt}, (
        f"ring neighbour {nxt} (on a one-way ring rank r sends only to rank (r + 1) % n)"
    )


def _bidirectional_rule(src, n):
    allowed = {(src + 1) % n, (src - 1) % n}
    shown = " and ".join(str(r) for r in sorted(allowed))
    return allowed, f"ring neighbours ({shown})"


#: named neighbour rules for :func:`check_schedule` (usable in :func:`recheck`)
NEIGHBOUR_RULES = {"ring": _ring_rule, "bidirectional_ring": _bidirectional_rule}


def _neighbour_rule(neighbours, n):
    if neighbours is None:
        return None
    if isinstance(neighbours, str):
        if neighbours not in NEIGHBOUR_RULES:
            raise GradingError(
                f"unknown neighbour rule {neighbours!r}; expected one of "
                f"{', '.join(NEIGHBOUR_RULES)} or a function rank -> ranks"
            )
        rule = NEIGHBOUR_RULES[neighbours]
        return lambda src: rule(src, n)
    if callable(neighbours):

        def custom(src):
            allowed = {int(r) for r in neighbours(src)}
            return allowed, f"allowed destinations ({', '.join(map(str, sorted(allowed)))})"

        return custom
    raise GradingError(f"neighbours must be a rule name or a function, got {in_words(neighbours)}")


# ---- symbolic replay -------------------------------------------------------------------------


def step_states(schedule):
    """The symbolic state of every buffer slot before the first step and after each step.

    Returns a list of ``n_steps + 1`` states; ``states[0]`` is the precondition and
    ``states[k + 1]`` the state after step ``k``. A state is a tuple (one entry per rank) of
    tuples (one per slot) holding ``None`` (empty) or ``(label, ranks)``: the logical chunk and
    the sorted tuple of the ranks whose contributions it sums (a rank counted twice appears
    twice; label ``-1`` marks an invalid sum of different chunks). It is
    :func:`collectives.trace` with ``stop_at_error=False`` in plain tuples: unlike
    :func:`collectives.verify` it never stops at an error, so two schedules can be compared
    step by step. Meant for the small instances of exercises.
    """
    if not isinstance(schedule, Schedule):
        raise GradingError(f"step_states needs a collectives.Schedule, got {in_words(schedule)}")
    out = []
    for state in trace(schedule, stop_at_error=False):
        rows = []
        for r in range(schedule.n_ranks):
            row = []
            for c in range(schedule.n_slots):
                label = int(state.label[r, c])
                row.append(
                    None
                    if label == -1
                    else (-1 if label == INVALID else label, tuple(state.contributors(r, c)))
                )
            rows.append(tuple(row))
        out.append(tuple(rows))
    return out


def describe_slot(content, n_ranks):
    """One slot of a :func:`step_states` state in words, exactly as :func:`collectives.verify`
    words it."""
    if content is None:
        return describe_content(-1, (), n_ranks)
    label, ranks = content
    return describe_content(INVALID if label < 0 else label, tuple(ranks), n_ranks)


def _format_step(step, limit=8):
    items = list(step)
    shown = [
        f"({t.src}, {t.dst}, {t.src_chunk}, {t.dst_chunk}{', reduce' if t.reduce else ''})"
        for t in items[:limit]
    ]
    if len(items) > limit:
        shown.append(f"... {len(items) - limit} more")
    return "[" + ", ".join(shown) + "]"


def _reference_schedule(reference, spec, n, n_chunks, n_scratch=0):
    if reference is None:
        return None
    if isinstance(reference, str):
        from .. import algorithms

        entry = algorithms.CATALOG.get(reference)
        if entry is None:
            raise GradingError(
                f"unknown reference algorithm {reference!r}; expected one of "
                f"{', '.join(algorithms.CATALOG)}"
            )
        reference = entry.build(n)
    elif callable(reference) and not isinstance(reference, Schedule):
        reference = reference(n)
    if not isinstance(reference, Schedule):
        raise GradingError(
            f"reference must be a Schedule, an algorithm name or a function "
            f"n -> Schedule, got {in_words(reference)}"
        )
    if (reference.collective, reference.n_ranks, reference.n_chunks, reference.n_scratch) != (
        spec.name,
        n,
        n_chunks,
        n_scratch,
    ):
        return None  # not comparable slot by slot: no hint
    return reference


def _too_big(schedule):
    return schedule.n_ranks * schedule.n_slots * (schedule.n_steps + 1) > _REPLAY_LIMIT


def _reference_hint(mine, reference):
    """Where ``mine`` first departs from ``reference``, after which step, on which slot."""
    if reference is None or _too_big(mine) or _too_big(reference):
        return ""
    ours, theirs = step_states(mine), step_states(reference)
    n = mine.n_ranks
    for k in range(min(mine.n_steps, reference.n_steps)):
        a, b = ours[k + 1], theirs[k + 1]
        if a == b:
            continue
        r, c = next((r, c) for r in range(n) for c in range(mine.n_slots) if a[r][c] != b[r][c])
        return (
            f"Step by step against the reference {reference.name}: after step {k}, rank {r} "
            f"chunk {c} holds {describe_slot(a[r][c], n)}; in the reference it holds "
            f"{describe_slot(b[r][c], n)}.\n"
            f"  your step {k}: {_format_step(mine.step(k))}"
        )
    if mine.n_steps < reference.n_steps:
        k, more = mine.n_steps, reference.n_steps - mine.n_steps
        return (
            f"Your {k} step{'' if k == 1 else 's'} match the first {k} of the reference "
            f"{reference.name}, which goes on for {more} more step{'' if more == 1 else 's'}"
        )
    return ""


# ---- numeric cross-check from first principles -----------------------------------------------

#: collectives whose result :func:`_first_principles` computes
_FIRST_PRINCIPLES = (
    "all_gather",
    "reduce_scatter",
    "all_reduce",
    "all_to_all",
    "broadcast",
    "reduce",
)


def _first_principles(spec, inputs, n_chunks, root):
    """Each rank's expected output row, and which ranks' rows are specified; ``None`` for a
    collective this function does not know (then only ``verify`` decides)."""
    n = inputs.shape[0]
    total = inputs.sum(axis=0)
    checked = np.ones(n, dtype=bool)
    if spec.name == "all_gather":
        out = np.tile(inputs.reshape(-1), (n, 1))
    elif spec.name == "reduce_scatter":
        out = total.reshape(n, -1)
    elif spec.name == "all_reduce":
        out = np.tile(total, (n, 1))
    elif spec.name == "all_to_all":
        parts = inputs.reshape(n, n, -1)  # [source, destination, piece]
        out = parts.transpose(1, 0, 2).reshape(n, -1)  # row d: part d of every source, in order
    elif spec.name == "broadcast":
        out = np.tile(inputs[root], (n, 1))
    elif spec.name == "reduce":  # only the root's row is specified
        out = np.tile(total, (n, 1))
        checked[:] = False
        checked[root] = True
    else:
        return None
    return out, checked


def numeric_check(schedule, spec, what):
    """Run ``schedule`` on random integers with :func:`collectives.simulate` and compare
    every specified output row with the collective's definition, computed here; an
    ``AssertionError`` names the first rank that differs."""
    if spec.name not in _FIRST_PRINCIPLES:
        return
    simulate = replay.simulate
    n = schedule.n_ranks
    row = spec.input_chunks(n, schedule.n_chunks) * 2  # two elements per chunk
    rng = np.random.default_rng(20240917)
    inputs = rng.integers(1, 2**20, size=(n, row), dtype=np.int64)
    try:
        outputs = simulate(schedule, inputs)
    except ScheduleError as exc:
        raise AssertionError(f"{what}: {exc}") from None
    expected, checked = _first_principles(spec, inputs, schedule.n_chunks, schedule.root)
    bad = np.flatnonzero(checked & np.any(outputs != expected, axis=1))
    if bad.size:
        r = int(bad[0])
        raise AssertionError(
            f"{what}: simulated on numbers, rank {r} ends with "
            f"{show(outputs[r].tolist())} where the {_text(spec)} of the "
            f"inputs is {show(expected[r].tolist())}"
        )


# ---- reading a checked schedule -------------------------------------------------------------


def rank_count(n, what="n"):
    """``n``, a test's number of ranks (an int >= 1), or a :class:`~collectives.GradingError`
    (a bug in the test)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise GradingError(f"{what} must be an int >= 1, got {n!r} (a bug in the test)")
    return n


def remote(step):
    """The transfers of a step (tuples from ``Schedule.to_lists``) that leave their rank
    (local copies are free)."""
    return [t for t in step if t[0] != t[1]]


def data_steps(schedule):
    """``(index, remote transfers)`` of every step of ``schedule`` that moves data between
    ranks."""
    steps = [list(step) for step in schedule.to_lists()]
    return [(s, remote(step)) for s, step in enumerate(steps) if remote(step)]


# ---- the schedule check ----------------------------------------------------------------------


def check_schedule(
    answer,
    collective,
    n,
    *,
    n_chunks=None,
    n_scratch=None,
    root=None,
    neighbours=None,
    reference=None,
    n_steps=None,
    max_sends_per_step=None,
    what="your schedule",
):
    """Check that ``answer`` is a schedule computing ``collective`` over ``n`` ranks.

    ``answer`` is a :class:`~collectives.Schedule` or a list of steps, each a list of
    ``(src, dst, src_chunk, dst_chunk)`` tuples (a fifth field ``'copy'``/``'reduce'`` is
    allowed), wrapped here as ``Schedule(collective, n, n_chunks, steps)``; ``n_chunks``
    defaults to the Schedule's own, or to ``n`` for a list of steps; ``n_scratch`` (slots
    ``n_chunks`` and up, empty at the start, as in :class:`~collectives.Schedule`) to the
    Schedule's own, or to 0; ``root`` (broadcast and reduce) to 0. In order, it checks:

    1. the form (types, nesting, integers) -> :class:`GradingError`;
    2. ranks and chunks in range, at most one copy into a slot per step -> ``AssertionError``;
    3. ``neighbours``: a rule name from :data:`NEIGHBOUR_RULES` (``"ring"``: rank r sends only
       to r + 1) or a function ``rank -> allowed destination ranks``;
    4. :func:`collectives.verify`, then :func:`collectives.simulate` on integers against the
       collective's definition. On failure, if ``reference`` is given (a Schedule, a catalogue
       name such as ``"ring_all_gather"``, or a function ``n -> Schedule``), the message adds
       the first step after which the answer's buffers differ from the reference's. Any
       correct schedule passes: the reference only explains failures;
    5. ``n_steps``: the number of steps that move data (empty steps are not counted);
    6. ``max_sends_per_step``: transfers any one rank may send in one step.

    ``what`` names the answer in messages, e.g. ``"ring_all_gather_steps(4)"``.
    Returns the :class:`~collectives.Schedule`.
    """
    verify = replay.verify
    spec = collective_spec(collective)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise GradingError(f"n must be an integer >= 1 (a bug in the test), got {n!r}")
    n = int(n)
    if n_chunks is None:
        n_chunks = answer.n_chunks if isinstance(answer, Schedule) else n
    n_chunks = int(n_chunks)
    if n_scratch is None:
        n_scratch = answer.n_scratch if isinstance(answer, Schedule) else 0
    if (
        isinstance(n_scratch, (bool, np.bool_))
        or not isinstance(n_scratch, (int, np.integer))
        or n_scratch < 0
    ):
        raise GradingError(
            f"n_scratch must be an integer >= 0 (a bug in the test), got {n_scratch!r}"
        )
    n_scratch = int(n_scratch)
    root = (0 if root is None else int(root)) if spec.rooted else None
    steps = steps_of(answer, what, spec, n, n_chunks, root, n_scratch)
    check_ranges(steps, what, n, n_chunks + n_scratch, n_chunks)
    try:
        schedule = Schedule(
            spec.name, n, n_chunks, steps, root=root, n_scratch=n_scratch, name=what
        )
    except CollectivesError as exc:
        raise AssertionError(f"{what}: {exc}") from None

    allowed = _neighbour_rule(neighbours, n)
    if allowed is not None:
        for s, step in enumerate(steps):
            for t, (src, dst, src_chunk, dst_chunk, _) in enumerate(step):
                ranks, description = allowed(src)
                if dst not in ranks:
                    raise AssertionError(
                        f"{what}: step {s} sends from rank {src} to rank {dst} (transfer {t}: "
                        f"{show((src, dst, src_chunk, dst_chunk))}), which is not its "
                        f"{description}"
                    )

    used = sum(1 for step in steps if step)
    step_note = ""
    if n_steps is not None and used != n_steps:
        step_note = f"It has {_steps_text(used)}; this exercise expects {n_steps}."
    try:
        verify(schedule)
    except ScheduleError as exc:
        ref = _reference_schedule(reference, spec, n, n_chunks, n_scratch)
        parts = [
            f"{what} does not compute the {_text(spec)}: {exc}",
            step_note,
            _reference_hint(schedule, ref),
        ]
        raise AssertionError("\n".join(p for p in parts if p)) from None
    numeric_check(schedule, spec, what)

    if n_steps is not None and used != n_steps:
        message = (
            f"{what} computes the {_text(spec)}, but in {_steps_text(used)}; this "
            f"exercise expects {n_steps}"
        )
        if used > n_steps and not _too_big(schedule):
            states = step_states(schedule)
            idle = [k for k in range(schedule.n_steps) if steps[k] and states[k + 1] == states[k]]
            if idle:
                message += (
                    f". Step {idle[0]} changes nothing: every chunk it sends is already "
                    "where it is sent"
                )
        raise AssertionError(message)

    if max_sends_per_step is not None:
        for s, step in enumerate(steps):
            senders = Counter(t[0] for t in step)
            src, count = max(
                senders.items(), key=lambda item: (item[1], -item[0]), default=(None, 0)
            )
            if count > max_sends_per_step:
                sent = [t for t in step if t[0] == src]
                raise AssertionError(
                    f"{what}: in step {s} rank {src} sends {count} chunks "
                    f"({', '.join(show(t[:4]) for t in sent[:6])}); this exercise allows "
                    f"{max_sends_per_step} per rank per step, so that each link carries one "
                    "chunk per step as the cost model assumes"
                )
    return schedule
