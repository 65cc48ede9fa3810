"""Check primitives: one number, a number close to a reference, a choice, a shape, and an
answer graded by what it costs (an estimate no slower than the best schedule's time and no
faster than any schedule can be; a choice that costs no more than the best one).

Each check first looks at the *form* of the answer (one real number where seconds are
expected, a string where a name is expected) and raises :class:`~collectives.GradingError`
saying what was found instead ("... is None: did you forget `return`?"); then it compares the
*content* and raises ``AssertionError`` with both values and, when it is telling, their ratio
("8 times that: bits versus bytes?": :func:`ratio_hint`). Also here: the helpers that describe
a learner's value in words (used by every check's messages, in every module of the grading
package), and the package computations several assignments compare with
(:func:`schedule_seconds`, :func:`fastest_name`, :func:`dispatch_seconds`). Checks of
schedules are in :mod:`.diagnosis`; the checks of one assignment in ``tasks/<assignment>.py``;
calling a learner's function (``call``) and the isolated re-check in :mod:`.isolation`.

This module is the bottom of the grading package: it imports nothing of it.
"""

import importlib
import math
import numbers
import reprlib
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..errors import GradingError

__all__ = [
    "check_number",
    "check_close",
    "check_choice",
    "check_reference",
    "check_shape",
    "check_estimate",
    "check_no_worse",
    "schedule_seconds",
    "fastest_name",
    "dispatch_seconds",
    "ratio_hint",
    "count_text",
    "Opaque",
    "type_name",
    "show",
    "in_words",
    "TOP_LEVEL",
    "MAX_ITEMS",
    "NOT_WRITTEN",
]

#: what the feedback says of a function whose cell still holds nbgrader's placeholder
NOT_WRITTEN = (
    "not written yet: replace the line `raise NotImplementedError(...)` in its cell with your code"
)
#: the most items a learner's answer may hold (transfers of a schedule, values to re-check)
MAX_ITEMS = 5_000_000

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxset = _short.maxdict = 8
_short.maxlevel = 3


# ---- describing learners' values -------------------------------------------------------------


class Opaque:
    """Stands in (in the re-check subprocess) for a value that has no plain-data form."""

    def __init__(self, type_name, text):
        self.type_name = type_name
        self.text = text

    def __repr__(self):
        return self.text


def type_name(value):
    """The name of ``value``'s type as a learner knows it: ``int``, ``numpy.int64``."""
    if isinstance(value, Opaque):
        return value.type_name
    kind = type(value)
    module = kind.__module__
    if module == "numpy":
        return f"numpy.{kind.__name__}"
    return kind.__name__


def show(value):
    """A short repr that never raises (learners' objects may have broken ``__repr__``)."""
    if isinstance(value, Opaque):
        return value.text
    try:
        return _short.repr(value)
    except Exception:  # a learner's __repr__ may raise anything
        return f"<{type_name(value)} object>"


def in_words(value):
    """``value`` in words for a message: ``an int (3)``, ``the string '3'``, ``None``."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the string {show(value)}"
    name = type_name(value)
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items = f"{len(value)} item{'' if len(value) == 1 else 's'}"
        return f"{article} {name} of {items} ({show(value)})"
    return f"{article} {name} ({show(value)})"


def count_text(count, one, many):
    """``1 step``, ``3 steps``: ``count`` and the word for one or for many."""
    return f"{count} {one if count == 1 else many}"


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
            raise GradingError(f"{what} is {in_words(value)}; expected a single number")
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        raise GradingError(f"{what} is the complex number {value!r}; expected a real number")
    if not isinstance(value, (numbers.Real, Decimal)):
        raise GradingError(f"{what} is {in_words(value)}; expected a number")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise GradingError(
            f"{what} is {show(value)}, which is not a usable number ({exc})"
        ) from None
    if finite and math.isnan(number):
        raise AssertionError(f"{what} is nan (not a number); check for 0/0 or a nan input")
    if finite and math.isinf(number):
        raise AssertionError(
            f"{what} is {number!r}; expected a finite number (a division by zero?)"
        )
    return number


_UNIT_FACTORS = (
    (8, "8", "bits versus bytes?"),
    (1e3, "1000", "a unit prefix (k, milli)?"),
    (1e6, "10**6", "a unit prefix (M, micro)?"),
    (1e9, "10**9", "a unit prefix (G, nano)?"),
    (1024, "1024", "KiB versus kB or bytes?"),
    (2**20, "2**20", "MiB versus bytes?"),
    (2**30, "2**30", "GiB versus bytes?"),
)


def ratio_hint(got, want):
    """A hint from ``got / want`` for a message that gives both: a unit factor ("; yours is 8
    times that: bits versus bytes?"), a simple fraction (8/7), or the relative error; "" when
    the ratio says nothing (a zero, an infinity)."""
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
    telling = p <= 64 and (q == 1 or p == 1 or abs(p - q) == 1)  # n, 1/n, n/(n-1), ...
    if simple != 1 and telling and math.isclose(float(simple), ratio, rel_tol=1e-9):
        return f"; yours is exactly {simple} times that"
    if 0.5 < ratio < 2:
        return f" (relative error {abs(got - want) / abs(want):.3g})"
    return f"; yours is {ratio:.6g} times that"


def _compare(got, want, what, rel, abs_tol, source=None):
    if math.isclose(got, want, rel_tol=rel, abs_tol=abs_tol):
        return
    origin = f" = {source}" if source else ""
    raise AssertionError(f"{what} is {got!r}, expected {want!r}{origin}{ratio_hint(got, want)}")


def _expected_number(expected, where):
    if isinstance(expected, (bool, np.bool_)) or not isinstance(expected, (numbers.Real, Decimal)):
        raise GradingError(
            f"the test's expected value {where} is {in_words(expected)}, not a "
            "number (a bug in the test, not in your answer)"
        )
    value = float(expected)
    if not math.isfinite(value):
        raise GradingError(
            f"the test's expected value {where} is {value!r} "
            "(a bug in the test, not in your answer)"
        )
    return value


def check_close(value, expected, what, *, rel=1e-9, abs_tol=0.0):
    """Check that ``value`` is one number within ``rel`` (relative) or ``abs_tol`` of
    ``expected``; return it as a float. The message gives both values and, when it is
    telling, their ratio ("exactly 8/7 times", "8 times: bits versus bytes?")."""
    got = check_number(value, what)
    _compare(got, _expected_number(expected, f"for {what}"), what, rel, abs_tol)
    return got


def check_choice(value, expected, what, *, options=None, reference=None, args=(), kwargs=None):
    """Check that ``value`` is the string ``expected`` (e.g. the name of the algorithm that
    wins); with ``options``, first that it is one of them (so a typo gets its own message).
    With ``reference`` (a dotted name inside ``collectives``, e.g.
    ``"grading.fastest_name"``), ``expected`` is ignored and computed as
    ``reference(*args, **kwargs)`` by the package itself."""
    if not isinstance(value, str):
        raise GradingError(f"{what} should be a string (a name), but it is {in_words(value)}")
    if options is not None and value not in options:
        raise AssertionError(
            f"{what} is {value!r}, which is not one of the choices: {', '.join(map(repr, options))}"
        )
    if reference is not None:
        expected = _resolve(reference)(*args, **dict(kwargs or {}))
    if value != expected:
        raise AssertionError(f"{what} is {value!r}, but the answer is {expected!r}")
    return value


def check_shape(value, what, *, expected=None, reference=None, args=(), kwargs=None):
    """Check that ``value`` is a tuple (or list) of positive ints equal to ``expected`` (a
    slice shape such as ``(8, 16)``); with ``reference`` (a dotted name inside
    ``collectives``, e.g. ``"grading.best_v5e_slice_shape"``), ``expected`` is computed as
    ``reference(*args, **kwargs)`` by the package itself. Returns the value as a tuple."""
    sizes = _shape_sizes(value, what)
    if reference is not None:
        expected = _resolve(reference)(*args, **dict(kwargs or {}))
    if expected is None:
        raise GradingError(
            f"the test gives no expected shape for {what} (a bug in the test, not in your answer)"
        )
    expected = tuple(int(s) for s in expected)
    if tuple(sizes) != expected:
        raise AssertionError(f"{what} is {tuple(sizes)}, but the answer is {expected}")
    return tuple(sizes)


def _shape_sizes(value, what):
    """``value`` as a list of ints, if it is a tuple or list of ints; else a GradingError."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (tuple, list)):
        raise GradingError(
            f"{what} should be a tuple of ints such as (8, 16), but it is {in_words(value)}"
        )
    sizes = []
    for i, size in enumerate(value):
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
            hint = (
                " (use // rather than /, or int(...))"
                if isinstance(size, (float, np.floating))
                else ""
            )
            raise GradingError(f"{what}[{i}] is {in_words(size)}; expected an int{hint}")
        sizes.append(int(size))
    return sizes


#: the functions the package's top level re-exports, by the module that defines them: a
#: reference may name them either way ("busbw" or "cost.busbw"). The checks never import the
#: top level itself (it imports this package: a cycle); tests/package/grading/test_checks.py
#: holds this table to ``collectives.__init__``.
TOP_LEVEL = {
    "algbw": "cost",
    "busbw": "cost",
    "bus_factor": "cost",
    "time": "cost",
    "time_concurrent": "cost",
    "simulate": "replay",
    "verify": "replay",
    "trace": "replay",
    "compose": "schedule",
    "grouped": "transforms",
}


def _resolve(reference):
    """The function ``collectives.<reference>`` (a dotted name inside the package: a module
    path and a name in it, or a name of :data:`TOP_LEVEL`)."""
    if not isinstance(reference, str) or not reference:
        raise GradingError(
            f"reference must be a dotted name inside collectives such as "
            f"'analytic.ring_all_gather', got {reference!r}"
        )
    parts = reference.split(".")
    if any(not p.isidentifier() or p.startswith("_") for p in parts):
        raise GradingError(f"reference {reference!r} must name a public function of collectives")
    if len(parts) == 1 and parts[0] in TOP_LEVEL:
        parts = [TOP_LEVEL[parts[0]], parts[0]]
    try:
        target = importlib.import_module(f"collectives.{parts[0]}")
    except ImportError:
        raise GradingError(f"collectives has no {reference!r}") from None
    for i, part in enumerate(parts[1:], start=2):
        try:
            target = getattr(target, part)
        except AttributeError:
            try:
                target = importlib.import_module("collectives." + ".".join(parts[:i]))
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
    shown = ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])
    source = f"collectives.{reference}({shown})"
    want = _expected_number(function(*args, **kwargs), f"{source}")
    _compare(got, want, what, rel, abs_tol, source=source)
    return got


def _called(reference, args, kwargs):
    """``collectives.<reference>(*args, **kwargs)`` and the text that names the call."""
    shown = ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])
    return _resolve(reference)(*args, **kwargs), f"collectives.{reference}({shown})"


def check_estimate(value, what, reference, args=(), kwargs=None, *, bound, rel=1e-9, abs_tol=0.0):
    """Check an estimate (seconds, say) by what it claims: no slower than
    ``collectives.<reference>(*args, **kwargs)``, the time of a schedule the package builds,
    and no faster than ``collectives.<bound>(*args, **kwargs)``, a lower bound no schedule can
    beat, both within ``rel`` (relative) or ``abs_tol``. So a learner who finds a schedule
    faster than the package's passes, and one who claims the impossible does not; where the
    package's schedule reaches the bound, the two agree and the estimate must match it.
    Returns ``value`` as a float."""
    got = check_number(value, what)
    kwargs = dict(kwargs or {})
    ceiling, source = _called(reference, args, kwargs)
    floor_, bound_source = _called(bound, args, kwargs)
    ceiling = _expected_number(ceiling, source)
    floor_ = _expected_number(floor_, bound_source)
    if got > ceiling * (1 + rel) + abs_tol:
        raise AssertionError(
            f"{what} is {got!r}, slower than {ceiling!r} = {source}, the time of a schedule "
            f"the wiring allows: a faster schedule exists{ratio_hint(got, ceiling)}"
        )
    if got < floor_ * (1 - rel) - abs_tol:
        raise AssertionError(
            f"{what} is {got!r}, below {floor_!r} = {bound_source}, less than any schedule can "
            f"take{ratio_hint(got, floor_)}"
        )
    return got


def check_no_worse(value, what, *, cost, reference, args=(), kwargs=None, options=None, rel=1e-6):
    """Check a choice by what it costs, never by which one the package picks: the learner's
    ``value`` passes when ``collectives.<cost>(value, *args, **kwargs)`` is no more than
    ``rel`` (relative) above the cost of ``collectives.<reference>(*args, **kwargs)``, the
    package's best choice. A tie, or a choice as good as the reference's by another route,
    passes. ``value`` is a name (with ``options``: one of them, as in :func:`check_choice`) or
    a shape (a tuple or list of ints, as in :func:`check_shape`); the cost function raises a
    :class:`GradingError` for a value that is not a candidate. Returns the value (a shape as
    a tuple)."""
    if options is not None:
        if not isinstance(value, str):
            raise GradingError(f"{what} should be a string (a name), but it is {in_words(value)}")
        if value not in options:
            raise AssertionError(
                f"{what} is {value!r}, which is not one of the choices: "
                f"{', '.join(map(repr, options))}"
            )
    else:
        value = tuple(_shape_sizes(value, what))
    kwargs = dict(kwargs or {})
    best = _resolve(reference)(*args, **kwargs)
    best = best if isinstance(best, str) else tuple(best)
    price = _resolve(cost)
    shown = ", ".join(
        [show(a) for a in (value,) + tuple(args)] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    )
    source = f"collectives.{cost}({shown})"
    try:
        mine = price(value, *args, **kwargs)
    except GradingError as exc:  # not a candidate: the learner's error
        raise AssertionError(f"{what} is {show(value)}: {exc}") from None
    theirs = price(best, *args, **kwargs)
    mine = _expected_number(mine, source)
    theirs = _expected_number(theirs, f"collectives.{cost} of {show(best)}")
    if mine > theirs * (1 + rel):
        raise AssertionError(
            f"{what} is {show(value)}, which costs {mine:.6g} ({source}), more than the "
            f"{theirs:.6g} of {show(best)}{ratio_hint(mine, theirs)}"
        )
    return value


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
    from .. import algorithms, cost
    from .. import topology as topologies

    entry = algorithms.CATALOG.get(algorithm)
    if entry is None:
        raise GradingError(
            f"unknown algorithm {algorithm!r}; expected one of {', '.join(algorithms.CATALOG)}"
        )
    if topology not in _TOPOLOGIES:
        raise GradingError(f"topology must be one of {', '.join(_TOPOLOGIES)}, got {topology!r}")
    if part not in _PARTS:
        raise GradingError(f"part must be one of {', '.join(_PARTS)}, got {part!r}")
    timing = cost.time(entry.build(n), getattr(topologies, topology)(n, **topology_options), nbytes)
    latency = float(np.sum(timing.step_latency))
    if part == "total":
        return timing.seconds
    if part == "latency":
        return latency
    if part == "transfer":
        return float(np.sum(timing.step_transfer))
    if timing.seconds <= 0:
        raise GradingError(
            f"{algorithm} over {n} ranks takes no time, so it has no latency fraction"
        )
    return latency / timing.seconds


def fastest_name(collective, n, nbytes, *, topology="switch", candidates=None, **topology_options):
    """The name :func:`collectives.algorithms.fastest` picks for ``collective`` over ``n``
    ranks on ``collectives.topology.<topology>(n, **topology_options)`` at ``nbytes``."""
    from .. import algorithms
    from .. import topology as topologies

    if topology not in _TOPOLOGIES:
        raise GradingError(f"topology must be one of {', '.join(_TOPOLOGIES)}, got {topology!r}")
    topo = getattr(topologies, topology)(n, **topology_options)
    return algorithms.fastest(collective, topo, nbytes, candidates=candidates).name


def dispatch_seconds(counts, token_bytes, *, link_bandwidth, hop_latency=0.0):
    """:func:`collectives.time` of the direct MoE dispatch of ``counts`` (tokens rank s sends
    to rank d) on one switch, each token ``token_bytes`` bytes."""
    from .. import cost, moe
    from .. import topology as topologies

    schedule = moe.direct_all_to_all_v(np.asarray(counts, dtype=np.int64))
    n = schedule.n_ranks
    topo = topologies.switch(n, link_bandwidth, hop_latency)
    return cost.time(schedule, topo, n * (schedule.n_chunks // n) * token_bytes).seconds
