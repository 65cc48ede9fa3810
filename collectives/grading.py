"""Checks for the exercises' test cells: precise messages for learners, re-checked in isolation.

The graded notebooks in ``exercises/`` (nbgrader) call these functions in their test cells.
Every check first looks at the *form* of a learner's answer (a list where steps are expected,
integers where ranks are expected, one number where seconds are expected) and raises
:class:`~collectives.GradingError` with a message that says what was found instead ("... is
None: did you forget `return`?"); then it checks the *content* against the package or against
first principles and raises ``AssertionError`` naming the first thing that is wrong ("after the
last step, rank 3 chunk 1 holds nothing; ..."). nbgrader gives 0 points to a test cell that
raises anything, so both kinds simply fail the cell, with a message the learner can act on.

Checks and helpers
------------------
``check_schedule(answer, collective, n, ...)``
    a schedule (a list of steps, or a :class:`~collectives.Schedule`): form, ranks and chunks
    in range, an optional neighbour rule ("ring": rank r sends only to r + 1), ``verify`` plus a
    numeric :func:`~collectives.simulate` against first principles, step count, sends per step.
    When it is wrong, a reference algorithm is replayed beside it to say after which step and
    on which rank and chunk the two first differ.
``check_number``, ``check_close``, ``check_reference``
    one real number; the same within a relative tolerance of a value; of the value a function
    of the package returns (``"analytic.ring_all_gather"``, ``"busbw"``, ...).
``call(function, *args)``
    call a learner's function, naming the call if it raises.
``step_states(schedule)``, ``describe_slot(content, n_ranks)``
    the symbolic content of every slot before and after each step, in words.
``schedule_seconds(algorithm, n, nbytes, ...)``
    :func:`collectives.time` of a catalogue algorithm on a ring, chain or switch.
``recheck(*checks)``
    run checks in a fresh ``python -I`` process (below).

Tamper resistance, and its limits
---------------------------------
A learner's code runs in the same kernel as the tests, before them. The hidden tests of the
course's notebooks therefore (1) re-load this module from disk with ``importlib.reload``, which
restores every function defined here, and (2) hand the learner's answers to :func:`recheck`,
which converts them to plain data (JSON of ints, floats, strings and lists) and runs the checks
in a new interpreter started with ``sys.executable -I`` that imports ``collectives`` from the
directory this file is in. The verdict comes back on the subprocess's stdout, tagged with a
random nonce.

This defends against:

- rebinding or monkeypatching anything in ``collectives`` from a notebook cell (``cl.verify``,
  ``cl.simulate``, ``cl.time``, ``cl.busbw``, ``cl.analytic.*``, ``cl.algorithms.*``,
  ``cl.Schedule``, ``collectives.grading.*``), or in what the checks compute with
  (``math.isclose``, numpy): none of it reaches the subprocess, and the reload undoes it for
  this module;
- answers that only pretend to be data (objects with a lying ``__eq__``, lists that change when
  read twice): the subprocess sees the plain values they converted to, once;
- names the notebook defines (its own ``check_close``, constants with the tests' names, a
  ``range`` or ``dict`` of its own): the hidden tests read no name they do not bind themselves,
  besides the learner's functions, and define their own constants and expected values;
- edits to the test cells themselves: ``nbgrader autograde`` restores them from the gradebook;
- a ``collectives.py`` or ``numpy.py`` written next to the notebook: ``-I`` keeps the working
  directory (and ``PYTHON*`` variables, and the user site) off the subprocess's ``sys.path``;
- exceptions hidden by IPython hooks (``showtraceback``, ``set_custom_exc``): nbgrader 0.9
  marks the cell failed from the kernel's execute reply.

It does not defend against (real sandboxing is a later issue):

- patching, in the kernel, what the hidden tests themselves run on: the standard library
  (``importlib.reload``, ``subprocess.run``, ``json``, ``sys.executable``, ``builtins``), the
  interpreter or IPython (input or AST transformers that rewrite or drop later cells, patched
  kernel methods), or a thread that re-patches this module between the reload and its use;
- reading or writing files the autograding account can reach (the source notebook with the
  hidden tests, the gradebook);
- a function that returns the right answer by calling the package's own solution
  (``cl.algorithms.ring_all_gather``, ``cl.analytic.ring_all_gather``) or that detects the grader;
- exhausting memory or CPU (nbgrader's per-cell timeout bounds the time only).

Autograde untrusted submissions in a disposable container or VM. The module never prints.
"""

import importlib
import json
import math
import numbers
import os
import reprlib
import secrets
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .errors import CollectivesError, GradingError, ScheduleError
from .schedule import Schedule
from .replay import INVALID, describe_content, trace
from .semantics import collective_spec

__all__ = [
    "check_schedule", "check_number", "check_close", "check_reference", "check_choice",
    "call", "fastest_name", "dispatch_seconds", "step_states", "describe_slot",
    "schedule_seconds", "recheck", "NEIGHBOUR_RULES",
]

#: the directory that holds the ``collectives`` package this module belongs to
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: checks :func:`recheck` may run (by name) in the subprocess
_RECHECKABLE = ("check_schedule", "check_number", "check_close", "check_reference",
                "check_choice")
_RESULT_MARK = "collectives-grading-result "
_FIELDS = ("src", "dst", "src_chunk", "dst_chunk")
#: step_states() is not used for hints above this size: slots x (steps + 1)
_REPLAY_LIMIT = 2_000_000
_MAX_ITEMS = 5_000_000

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxset = _short.maxdict = 8
_short.maxlevel = 3


# ---- describing learners' values -------------------------------------------------------------

class _Opaque:
    """Stands in (in the re-check subprocess) for a value that has no plain-data form."""

    def __init__(self, type_name, text):
        self.type_name = type_name
        self.text = text

    def __repr__(self):
        return self.text


def _type_name(value):
    if isinstance(value, _Opaque):
        return value.type_name
    kind = type(value)
    module = kind.__module__
    if module == "numpy":
        return f"numpy.{kind.__name__}"
    return kind.__name__


def _show(value):
    """A short repr that never raises (learners' objects may have broken ``__repr__``)."""
    if isinstance(value, _Opaque):
        return value.text
    try:
        return _short.repr(value)
    except Exception:           # a learner's __repr__ may raise anything
        return f"<{_type_name(value)} object>"


def _a(value):
    """``value`` in words for a message: ``an int (3)``, ``the string '3'``, ``None``."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the string {_show(value)}"
    name = _type_name(value)
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items = f"{len(value)} item{'' if len(value) == 1 else 's'}"
        return f"{article} {name} of {items} ({_show(value)})"
    return f"{article} {name} ({_show(value)})"


# ---- calling learners' functions -------------------------------------------------------------

def call(function, *args, name=None):
    """Call a learner's ``function(*args)`` and return what it returns.

    If it raises, the error is re-raised as an ``AssertionError`` that names the call (the
    learner's own traceback stays attached as the cause). ``NotImplementedError`` gets a note
    that the exercise cell still holds nbgrader's placeholder.
    """
    if not callable(function):
        if name:
            raise GradingError(f"{name} is {_a(function)}, not a function; define it with "
                               f"`def {name}(...):`")
        raise GradingError(f"expected a function, got {_a(function)}")
    label = name or getattr(function, "__name__", None) or "your function"
    text = f"{label}({', '.join(_show(a) for a in args)})"
    try:
        return function(*args)
    except NotImplementedError as exc:
        raise AssertionError(f"{text} raised NotImplementedError: replace the line "
                             "`raise NotImplementedError()` with your code") from exc
    except Exception as exc:
        raise AssertionError(f"{text} raised {type(exc).__name__}: {exc}") from exc


# ---- numbers ---------------------------------------------------------------------------------

def check_number(value, what, *, finite=True):
    """``value`` as a float, if it is one real number; else a :class:`GradingError`.

    Accepts Python and numpy ints and floats, fractions, decimals and 0-d numeric arrays.
    With ``finite`` (the default) nan and infinity fail with an ``AssertionError``.
    """
    if value is None:
        raise GradingError(f"{what} is None: nothing was returned (did you forget `return`?)")
    if isinstance(value, (bool, np.bool_)):
        raise GradingError(f"{what} is {value!r}, a bool; expected a number")
    if isinstance(value, np.ndarray):
        if value.ndim == 0 and value.dtype.kind in "iuf":
            value = value[()]
        else:
            raise GradingError(f"{what} is {_a(value)}; expected a single number")
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        raise GradingError(f"{what} is the complex number {value!r}; expected a real number")
    if not isinstance(value, (numbers.Real, Decimal)):
        raise GradingError(f"{what} is {_a(value)}; expected a number")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise GradingError(f"{what} is {_show(value)}, which is not a usable number ({exc})") \
            from None
    if finite and math.isnan(number):
        raise AssertionError(f"{what} is nan (not a number); check for 0/0 or a nan input")
    if finite and math.isinf(number):
        raise AssertionError(f"{what} is {number!r}; expected a finite number "
                             "(a division by zero?)")
    return number


_UNIT_FACTORS = ((8, "8", "bits versus bytes?"), (1e3, "1000", "a unit prefix (k, milli)?"),
                 (1e6, "10**6", "a unit prefix (M, micro)?"),
                 (1e9, "10**9", "a unit prefix (G, nano)?"),
                 (1024, "1024", "KiB versus kB or bytes?"), (2**20, "2**20", "MiB versus bytes?"),
                 (2**30, "2**30", "GiB versus bytes?"))


def _ratio_hint(got, want):
    """A hint from ``got / want``: a unit factor, a simple fraction (8/7), or the error."""
    if want == 0 or got == 0 or not (math.isfinite(got) and math.isfinite(want)):
        return ""
    ratio = got / want
    for factor, shown, text in _UNIT_FACTORS:
        if math.isclose(ratio, factor, rel_tol=1e-6):
            return f"; yours is {shown} times that: {text}"
        if math.isclose(ratio, 1 / factor, rel_tol=1e-6):
            return f"; yours is 1/{shown} of that: {text}"
    simple = Fraction(ratio).limit_denominator(64)
    p, q = abs(simple.numerator), simple.denominator
    telling = p <= 64 and (q == 1 or p == 1 or abs(p - q) == 1)    # n, 1/n, n/(n-1), ...
    if simple != 1 and telling and math.isclose(float(simple), ratio, rel_tol=1e-9):
        return f"; yours is exactly {simple} times that"
    if 0.5 < ratio < 2:
        return f" (relative error {abs(got - want) / abs(want):.3g})"
    return f"; yours is {ratio:.6g} times that"


def _compare(got, want, what, rel, abs_tol, source=None):
    if math.isclose(got, want, rel_tol=rel, abs_tol=abs_tol):
        return
    origin = f" = {source}" if source else ""
    raise AssertionError(f"{what} is {got!r}, expected {want!r}{origin}{_ratio_hint(got, want)}")


def _expected_number(expected, where):
    if isinstance(expected, (bool, np.bool_)) or not isinstance(expected,
                                                              (numbers.Real, Decimal)):
        raise GradingError(f"the test's expected value {where} is {_a(expected)}, not a number "
                           "(a bug in the test, not in your answer)")
    value = float(expected)
    if not math.isfinite(value):
        raise GradingError(f"the test's expected value {where} is {value!r} "
                           "(a bug in the test, not in your answer)")
    return value


def check_close(value, expected, what, *, rel=1e-9, abs_tol=0.0):
    """Check that ``value`` is one number within ``rel`` (relative) or ``abs_tol`` of
    ``expected``; return it as a float. The message gives both values and, when it is
    telling, their ratio ("exactly 8/7 times", "8 times: bits versus bytes?")."""
    got = check_number(value, what)
    _compare(got, _expected_number(expected, f"for {what}"), what, rel, abs_tol)
    return got


def check_choice(value, expected, what, *, options=None, reference=None, args=(),
                 kwargs=None):
    """Check that ``value`` is the string ``expected`` (e.g. the name of the algorithm that
    wins); with ``options``, first that it is one of them (so a typo gets its own message).
    With ``reference`` (a dotted name inside ``collectives``, e.g.
    ``"grading.fastest_name"``), ``expected`` is ignored and computed as
    ``reference(*args, **kwargs)`` by the package itself."""
    if not isinstance(value, str):
        raise GradingError(f"{what} should be a string (a name), but it is {_a(value)}")
    if options is not None and value not in options:
        raise AssertionError(f"{what} is {value!r}, which is not one of the choices: "
                             f"{', '.join(map(repr, options))}")
    if reference is not None:
        expected = _resolve(reference)(*args, **dict(kwargs or {}))
    if value != expected:
        raise AssertionError(f"{what} is {value!r}, but the answer is {expected!r}")
    return value


def _package():
    """The ``collectives`` package as imported in this interpreter (public names at call time)."""
    return importlib.import_module("collectives")


def _resolve(reference):
    """The function ``collectives.<reference>`` (a dotted name inside the package)."""
    if not isinstance(reference, str) or not reference:
        raise GradingError(f"reference must be a dotted name inside collectives such as "
                           f"'analytic.ring_all_gather', got {reference!r}")
    parts = reference.split(".")
    if any(not p.isidentifier() or p.startswith("_") for p in parts):
        raise GradingError(f"reference {reference!r} must name a public function of collectives")
    target = _package()
    for i, part in enumerate(parts):
        try:
            target = getattr(target, part)
        except AttributeError:
            try:
                target = importlib.import_module("collectives." + ".".join(parts[: i + 1]))
            except ImportError:
                raise GradingError(f"collectives has no {reference!r}") from None
    if not callable(target):
        raise GradingError(f"collectives.{reference} is not a function")
    return target


def check_reference(value, what, reference, args=(), kwargs=None, *, rel=1e-9, abs_tol=0.0):
    """Check ``value`` against ``collectives.<reference>(*args, **kwargs)``.

    ``reference`` is a dotted name inside the package, e.g. ``"analytic.ring_all_gather"``,
    ``"busbw"`` or ``"grading.schedule_seconds"``; it is looked up when the check runs, so in
    :func:`recheck` it is the copy freshly imported from disk. Returns ``value`` as a float.
    """
    got = check_number(value, what)
    kwargs = dict(kwargs or {})
    function = _resolve(reference)
    shown = ", ".join([_show(a) for a in args] + [f"{k}={_show(v)}" for k, v in kwargs.items()])
    source = f"collectives.{reference}({shown})"
    want = _expected_number(function(*args, **kwargs), f"{source}")
    _compare(got, want, what, rel, abs_tol, source=source)
    return got


# ---- timing helper ---------------------------------------------------------------------------

_TOPOLOGIES = ("ring", "chain", "switch")
_PARTS = ("total", "latency", "transfer", "latency_fraction")


def schedule_seconds(algorithm, n, nbytes, *, topology="ring", part="total", **topology_options):
    """:func:`collectives.time` of catalogue ``algorithm`` over ``n`` ranks on a topology.

    ``topology`` is ``"ring"``, ``"chain"`` or ``"switch"``, built with
    ``collectives.topology.<topology>(n, **topology_options)`` (e.g. ``link_bandwidth=45e9,
    hop_latency=1e-6``). ``part`` selects the total seconds, the sum of the steps' latency
    terms, the sum of their transfer terms, or ``"latency_fraction"`` (latency / total).
    """
    from . import algorithms, cost
    from . import topology as topologies

    entry = algorithms.CATALOG.get(algorithm)
    if entry is None:
        raise GradingError(f"unknown algorithm {algorithm!r}; expected one of "
                           f"{', '.join(algorithms.CATALOG)}")
    if topology not in _TOPOLOGIES:
        raise GradingError(f"topology must be one of {', '.join(_TOPOLOGIES)}, got {topology!r}")
    if part not in _PARTS:
        raise GradingError(f"part must be one of {', '.join(_PARTS)}, got {part!r}")
    timing = cost.time(entry.build(n), getattr(topologies, topology)(n, **topology_options),
                       nbytes)
    latency = float(np.sum(timing.step_latency))
    if part == "total":
        return timing.seconds
    if part == "latency":
        return latency
    if part == "transfer":
        return float(np.sum(timing.step_transfer))
    if timing.seconds <= 0:
        raise GradingError(f"{algorithm} over {n} ranks takes no time, so it has no latency "
                           "fraction")
    return latency / timing.seconds


def fastest_name(collective, n, nbytes, *, topology="switch", candidates=None,
                 **topology_options):
    """The name :func:`collectives.algorithms.fastest` picks for ``collective`` over ``n``
    ranks on ``collectives.topology.<topology>(n, **topology_options)`` at ``nbytes``."""
    from . import algorithms
    from . import topology as topologies

    if topology not in _TOPOLOGIES:
        raise GradingError(f"topology must be one of {', '.join(_TOPOLOGIES)}, got {topology!r}")
    topo = getattr(topologies, topology)(n, **topology_options)
    return algorithms.fastest(collective, topo, nbytes, candidates=candidates).name


def dispatch_seconds(counts, token_bytes, *, link_bandwidth, hop_latency=0.0):
    """:func:`collectives.time` of the direct MoE dispatch of ``counts`` (tokens rank s sends
    to rank d) on one switch, each token ``token_bytes`` bytes."""
    from . import cost, moe
    from . import topology as topologies

    schedule = moe.direct_all_to_all_v(np.asarray(counts, dtype=np.int64))
    n = schedule.n_ranks
    topo = topologies.switch(n, link_bandwidth, hop_latency)
    return cost.time(schedule, topo, n * (schedule.n_chunks // n) * token_bytes).seconds


# ---- schedules: form -------------------------------------------------------------------------

def _as_int(value, where):
    if isinstance(value, (bool, np.bool_)):
        raise GradingError(f"{where} is {value!r}, a bool; expected an integer")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if math.isfinite(value) and float(value).is_integer():
            raise GradingError(f"{where} is {value!r}, a float; rank and chunk numbers must be "
                               "ints (use // rather than /, or int(...))")
        raise GradingError(f"{where} is {value!r}; expected an integer")
    raise GradingError(f"{where} is {_a(value)}; expected an integer")


def _is_int_like(value):
    return isinstance(value, (int, np.integer, float, np.floating)) and not isinstance(
        value, (bool, np.bool_))


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
    return sum(len(s) if isinstance(s, (list, tuple, set, frozenset, np.ndarray)) else 1
               for s in steps)


def _steps_of(answer, what, spec, n, n_chunks, root):
    """The learner's answer as ``[[(src, dst, src_chunk, dst_chunk, reduce), ...], ...]``."""
    if isinstance(answer, Schedule):
        for attr, want in (("collective", spec.name), ("n_ranks", n), ("n_chunks", n_chunks),
                           ("root", root)):
            if getattr(answer, attr) != want:
                raise AssertionError(f"{what} is a Schedule with {attr}={getattr(answer, attr)!r}; "
                                     f"expected {attr}={want!r}")
        if answer.n_scratch:
            raise AssertionError(f"{what} uses {answer.n_scratch} scratch slots; this exercise "
                                 "has none")
        return [list(step) for step in answer.to_lists()]
    if answer is None:
        raise GradingError(f"{what} is None, not a list of steps: nothing was returned "
                           "(did you forget `return`?)")
    if isinstance(answer, np.ndarray):
        if answer.dtype.kind not in "iu":
            raise GradingError(f"{what} is {_a(answer)}; return a list of steps, each a list "
                               "of (src, dst, src_chunk, dst_chunk) tuples of ints")
        answer = answer.tolist()
    if isinstance(answer, (set, frozenset)):
        raise GradingError(f"{what} is a set; steps happen in order, so return a list of steps")
    if not isinstance(answer, (list, tuple)):
        raise GradingError(f"{what} is {_a(answer)}, not a list of steps (each step a list of "
                           "(src, dst, src_chunk, dst_chunk) tuples)")
    if _count_items(answer) > _MAX_ITEMS:
        raise GradingError(f"{what} has more than {_MAX_ITEMS} transfers; that is not a "
                           "schedule for this exercise")
    steps = []
    for s, step in enumerate(answer):
        if isinstance(step, np.ndarray):
            step = step.tolist()
        if isinstance(step, (list, tuple)) and len(step) in (4, 5) and all(
                _is_int_like(v) for v in step[:4]):
            raise GradingError(
                f"{what}: step {s} is {_show(step)}, which looks like one transfer, not a "
                "step; put the transfers of each step in a list of their own: "
                "[[(0, 1, 0, 0), (1, 2, 1, 1), ...], [...], ...]")
        if not isinstance(step, (list, tuple, set, frozenset)):
            raise GradingError(f"{what}: step {s} is {_a(step)}; each step must be a list of "
                               "(src, dst, src_chunk, dst_chunk) tuples")
        transfers = []
        for t, transfer in enumerate(_as_list(step)):
            transfers.append(_transfer_of(transfer, f"{what}: step {s}, transfer {t}", spec))
        steps.append(transfers)
    return steps


def _transfer_of(transfer, where, spec):
    if isinstance(transfer, np.ndarray):
        transfer = transfer.tolist()
    if not isinstance(transfer, (tuple, list)):
        raise GradingError(f"{where} is {_a(transfer)}; a transfer is a tuple "
                           "(src, dst, src_chunk, dst_chunk)")
    if len(transfer) not in (4, 5):
        raise GradingError(f"{where} is {_show(transfer)}, with {len(transfer)} fields; a "
                           "transfer is a tuple (src, dst, src_chunk, dst_chunk)")
    values = [_as_int(v, f"{where} {_show(transfer)}: {name}")
              for name, v in zip(_FIELDS, transfer[:4])]
    reduce = False
    if len(transfer) == 5:
        flag = transfer[4]
        if isinstance(flag, (bool, np.bool_)):
            reduce = bool(flag)
        elif flag in ("copy", "reduce"):
            reduce = flag == "reduce"
        else:
            raise GradingError(f"{where} {_show(transfer)}: the fifth field must be 'copy' or "
                               f"'reduce' (or False/True), got {_show(flag)}")
        if reduce and not spec.reducing:
            raise AssertionError(f"{where} {_show(transfer)} is a reduce; {_text(spec)} only "
                                 "copies chunks")
    return (*values, reduce)


def _text(spec):
    return spec.name.replace("_", "-")


def _steps_text(count):
    """``1 step that moves data``, ``3 steps that move data``."""
    return f"{count} step that moves data" if count == 1 else f"{count} steps that move data"


def _check_ranges(steps, what, n, n_slots):
    for s, step in enumerate(steps):
        for t, (src, dst, src_chunk, dst_chunk, _) in enumerate(step):
            where = f"{what}: step {s}, transfer {t} {_show((src, dst, src_chunk, dst_chunk))}"
            for name, value, limit, kind in (("src", src, n, "rank"), ("dst", dst, n, "rank"),
                                             ("src_chunk", src_chunk, n_slots, "chunk"),
                                             ("dst_chunk", dst_chunk, n_slots, "chunk")):
                if not 0 <= value < limit:
                    span = (f"the ranks are 0..{n - 1}" if kind == "rank"
                            else f"each rank's buffer has chunks 0..{n_slots - 1}")
                    hint = " (did you forget `% n`?)" if value in (limit, -1) else ""
                    raise AssertionError(f"{where}: {name} {value} is not a {kind}; "
                                         f"{span}{hint}")


# ---- neighbour rules -------------------------------------------------------------------------

def _ring_rule(src, n):
    nxt = (src + 1) % n
    return {nxt}, (f"ring neighbour {nxt} (on a one-way ring rank r sends only to rank "
                   "(r + 1) % n)")


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
            raise GradingError(f"unknown neighbour rule {neighbours!r}; expected one of "
                               f"{', '.join(NEIGHBOUR_RULES)} or a function rank -> ranks")
        rule = NEIGHBOUR_RULES[neighbours]
        return lambda src: rule(src, n)
    if callable(neighbours):
        def custom(src):
            allowed = {int(r) for r in neighbours(src)}
            return allowed, f"allowed destinations ({', '.join(map(str, sorted(allowed)))})"
        return custom
    raise GradingError(f"neighbours must be a rule name or a function, got {_a(neighbours)}")


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
        raise GradingError(f"step_states needs a collectives.Schedule, got {_a(schedule)}")
    out = []
    for state in trace(schedule, stop_at_error=False):
        rows = []
        for r in range(schedule.n_ranks):
            row = []
            for c in range(schedule.n_slots):
                label = int(state.label[r, c])
                row.append(None if label == -1 else
                           (-1 if label == INVALID else label, tuple(state.contributors(r, c))))
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
    shown = [f"({t.src}, {t.dst}, {t.src_chunk}, {t.dst_chunk}{', reduce' if t.reduce else ''})"
             for t in items[:limit]]
    if len(items) > limit:
        shown.append(f"... {len(items) - limit} more")
    return "[" + ", ".join(shown) + "]"


def _reference_schedule(reference, spec, n, n_chunks):
    if reference is None:
        return None
    if isinstance(reference, str):
        from . import algorithms

        entry = algorithms.CATALOG.get(reference)
        if entry is None:
            raise GradingError(f"unknown reference algorithm {reference!r}; expected one of "
                               f"{', '.join(algorithms.CATALOG)}")
        reference = entry.build(n)
    elif callable(reference) and not isinstance(reference, Schedule):
        reference = reference(n)
    if not isinstance(reference, Schedule):
        raise GradingError(f"reference must be a Schedule, an algorithm name or a function "
                           f"n -> Schedule, got {_a(reference)}")
    if (reference.collective, reference.n_ranks, reference.n_chunks) != (spec.name, n, n_chunks):
        return None                         # not comparable slot by slot: no hint
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
        return (f"Step by step against the reference {reference.name}: after step {k}, rank {r} "
                f"chunk {c} holds {describe_slot(a[r][c], n)}; in the reference it holds "
                f"{describe_slot(b[r][c], n)}.\n"
                f"  your step {k}:      {_format_step(mine.step(k))}\n"
                f"  reference step {k}: {_format_step(reference.step(k))}")
    if mine.n_steps < reference.n_steps:
        k = mine.n_steps
        return (f"Your {k} step{'' if k == 1 else 's'} match the first {k} of the reference "
                f"{reference.name}, which goes on with step {k}: "
                f"{_format_step(reference.step(k))}")
    return ""


# ---- numeric cross-check from first principles -----------------------------------------------

#: collectives whose result :func:`_first_principles` computes
_FIRST_PRINCIPLES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast",
                     "reduce")


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
        parts = inputs.reshape(n, n, -1)               # [source, destination, piece]
        out = parts.transpose(1, 0, 2).reshape(n, -1)  # row d: part d of every source, in order
    elif spec.name == "broadcast":
        out = np.tile(inputs[root], (n, 1))
    elif spec.name == "reduce":                        # only the root's row is specified
        out = np.tile(total, (n, 1))
        checked[:] = False
        checked[root] = True
    else:
        return None
    return out, checked


def _numeric_check(schedule, spec, what):
    """Run ``schedule`` on random integers with :func:`collectives.simulate` and compare
    every specified output row with the collective's definition, computed here."""
    if spec.name not in _FIRST_PRINCIPLES:
        return
    simulate = _package().simulate
    n = schedule.n_ranks
    row = spec.input_chunks(n, schedule.n_chunks) * 2          # two elements per chunk
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
        raise AssertionError(f"{what}: simulated on numbers, rank {r} ends with "
                             f"{_show(outputs[r].tolist())} where the {_text(spec)} of the "
                             f"inputs is {_show(expected[r].tolist())}")


# ---- the schedule check ----------------------------------------------------------------------

def check_schedule(answer, collective, n, *, n_chunks=None, root=None, neighbours=None,
                   reference=None, n_steps=None, max_sends_per_step=None, what="your schedule"):
    """Check that ``answer`` is a schedule computing ``collective`` over ``n`` ranks.

    ``answer`` is a :class:`~collectives.Schedule` or a list of steps, each a list of
    ``(src, dst, src_chunk, dst_chunk)`` tuples (a fifth field ``'copy'``/``'reduce'`` is
    allowed), wrapped here as ``Schedule(collective, n, n_chunks, steps)``; ``n_chunks``
    defaults to the Schedule's own, or to ``n`` for a list of steps; ``root`` (broadcast and
    reduce) to 0. In order, it checks:

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
    verify = _package().verify
    spec = collective_spec(collective)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise GradingError(f"n must be an integer >= 1 (a bug in the test), got {n!r}")
    n = int(n)
    if n_chunks is None:
        n_chunks = answer.n_chunks if isinstance(answer, Schedule) else n
    n_chunks = int(n_chunks)
    root = (0 if root is None else int(root)) if spec.rooted else None
    steps = _steps_of(answer, what, spec, n, n_chunks, root)
    _check_ranges(steps, what, n, n_chunks)
    try:
        schedule = Schedule(spec.name, n, n_chunks, steps, root=root, name=what)
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
                        f"{_show((src, dst, src_chunk, dst_chunk))}), which is not its "
                        f"{description}")

    used = sum(1 for step in steps if step)
    step_note = ""
    if n_steps is not None and used != n_steps:
        step_note = (f"It has {_steps_text(used)}; this exercise expects "
                     f"{n_steps}.")
    try:
        verify(schedule)
    except ScheduleError as exc:
        ref = _reference_schedule(reference, spec, n, n_chunks)
        parts = [f"{what} does not compute the {_text(spec)}: {exc}", step_note,
                 _reference_hint(schedule, ref)]
        raise AssertionError("\n".join(p for p in parts if p)) from None
    _numeric_check(schedule, spec, what)

    if n_steps is not None and used != n_steps:
        message = (f"{what} computes the {_text(spec)}, but in {_steps_text(used)}; this "
                   f"exercise expects {n_steps}")
        if used > n_steps and not _too_big(schedule):
            states = step_states(schedule)
            idle = [k for k in range(schedule.n_steps)
                    if steps[k] and states[k + 1] == states[k]]
            if idle:
                message += (f". Step {idle[0]} changes nothing: every chunk it sends is already "
                            "where it is sent")
        raise AssertionError(message)

    if max_sends_per_step is not None:
        for s, step in enumerate(steps):
            senders = Counter(t[0] for t in step)
            src, count = max(senders.items(), key=lambda item: (item[1], -item[0]),
                             default=(None, 0))
            if count > max_sends_per_step:
                sent = [t for t in step if t[0] == src]
                raise AssertionError(
                    f"{what}: in step {s} rank {src} sends {count} chunks "
                    f"({', '.join(_show(t[:4]) for t in sent[:6])}); this exercise allows "
                    f"{max_sends_per_step} per rank per step, so that each link carries one "
                    "chunk per step as the cost model assumes")
    return schedule


# ---- re-checking in a fresh interpreter ------------------------------------------------------

def _encode(value, depth=0, budget=None):
    """``value`` as JSON-ready plain data (ints, floats, strings, lists, tagged dicts)."""
    budget = budget if budget is not None else [_MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise GradingError("the answer is too large to check")
    if depth > 12:
        return {"__opaque__": _type_name(value), "repr": "a structure nested too deeply"}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [_encode(v, depth + 1, budget) for v in list(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, depth + 1, budget) for v in tuple(value)]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [_encode(v, depth + 1, budget) for v in list(value)]}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"__ndarray__": _encode(value.tolist(), depth + 1, budget),
                "dtype": value.dtype.str}
    if isinstance(value, Schedule):
        return {"__schedule__": {
            "collective": value.collective, "n_ranks": value.n_ranks,
            "n_chunks": value.n_chunks, "n_scratch": value.n_scratch, "root": value.root,
            "name": value.name, "steps": _encode(value.to_lists(), depth + 1, budget)}}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode(v, depth + 1, budget) for k, v in value.items()}}
    if isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, complex):
        return float(value)
    return {"__opaque__": _type_name(value), "repr": _show(value)}


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__set__" in value:
        return frozenset(_hashable(_decode(v)) for v in value["__set__"])
    if "__ndarray__" in value:
        return np.array(_decode(value["__ndarray__"]), dtype=np.dtype(value["dtype"]))
    if "__schedule__" in value:
        s = value["__schedule__"]
        return Schedule(s["collective"], s["n_ranks"], s["n_chunks"], _decode(s["steps"]),
                        root=s["root"], n_scratch=s["n_scratch"], name=s["name"])
    if "__dict__" in value:
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    return _Opaque(value.get("__opaque__", "object"), value.get("repr", "<object>"))


_BOOTSTRAP = ("import sys; sys.path.insert(0, sys.argv[1]); "
              "import collectives.grading as g; sys.exit(g._isolated_main())")


def recheck(*checks, timeout=60.0):
    """Run checks in a fresh ``python -I`` that imports ``collectives`` from disk.

    Each check is ``(name, args)`` or ``(name, args, kwargs)`` with ``name`` one of
    ``check_schedule``, ``check_number``, ``check_close``, ``check_reference``. Arguments are
    converted to plain data first (so learners' answers are read exactly once, as values);
    what cannot be converted reaches the check as an opaque stand-in that fails its type check
    with the same message as in the kernel. The checks run in order and the first failure is
    raised here as the same ``AssertionError`` or :class:`GradingError` (same message) it
    raised there. See the module docstring for what this defends against and what not.
    """
    calls = []
    for i, check in enumerate(checks):
        if not isinstance(check, tuple) or len(check) not in (2, 3):
            raise GradingError(f"recheck: check {i} must be (name, args) or (name, args, kwargs)")
        name, args = check[0], check[1]
        kwargs = check[2] if len(check) == 3 else {}
        if name not in _RECHECKABLE:
            raise GradingError(f"recheck: {name!r} is not one of {', '.join(_RECHECKABLE)}")
        calls.append({"check": name, "args": _encode(list(args)),
                      "kwargs": {str(k): _encode(v) for k, v in dict(kwargs).items()}})
    nonce = secrets.token_hex(16)
    payload = json.dumps({"nonce": nonce, "calls": calls})
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", _BOOTSTRAP, _PACKAGE_PARENT],
                              input=payload, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GradingError(f"the isolated re-check took longer than {timeout:g} s") from None
    except OSError as exc:
        raise GradingError(f"the isolated re-check could not start: {exc}") from None
    reply = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT_MARK):
            try:
                reply = json.loads(line[len(_RESULT_MARK):])
            except ValueError:
                reply = None
            break
    if (proc.returncode != 0 or not isinstance(reply, dict) or reply.get("nonce") != nonce
            or not isinstance(reply.get("results"), list)):
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
        raise GradingError("the isolated re-check did not run properly (exit status "
                           f"{proc.returncode}){': ' + ' | '.join(tail) if tail else ''}")
    results = reply["results"]
    for result in results:
        if result.get("ok") is True:
            continue
        kind, message = result.get("kind"), str(result.get("message", ""))
        if kind == "AssertionError":
            raise AssertionError(message)
        if kind == "GradingError":
            raise GradingError(message)
        raise GradingError(f"the isolated re-check failed: {message}")
    if len(results) != len(calls):
        raise GradingError("the isolated re-check returned an incomplete answer")


def _isolated_main():
    """Entry point of the :func:`recheck` subprocess: JSON request on stdin, verdict on stdout."""
    request = json.loads(sys.stdin.read())
    results = []
    for item in request["calls"]:
        name = item["check"]
        try:
            if name not in _RECHECKABLE:
                raise GradingError(f"{name!r} is not a check")
            args = _decode(item["args"])
            kwargs = {k: _decode(v) for k, v in item["kwargs"].items()}
            globals()[name](*args, **kwargs)
        except AssertionError as exc:
            results.append({"ok": False, "kind": "AssertionError", "message": str(exc)})
            break
        except GradingError as exc:
            results.append({"ok": False, "kind": "GradingError", "message": str(exc)})
            break
        except Exception as exc:        # a check must never crash silently: report it
            results.append({"ok": False, "kind": "error",
                            "message": f"{type(exc).__name__}: {exc}"})
            break
        results.append({"ok": True})
    sys.stdout.write(_RESULT_MARK + json.dumps({"nonce": request["nonce"],
                                                "results": results}) + "\n")
    return 0
