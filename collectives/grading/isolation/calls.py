"""A learner's calls made in the learner's process, and the kernel's side of the wire.

``call(function, *args, isolated=True)`` does not call the function in the kernel: it reads its
source and what it uses (:func:`.reading.bundle`) and returns an :class:`IsolatedCall`.
:func:`resolve` (which :func:`.orchestrator.recheck` calls first) makes every such call in the
checks' arguments in one fresh ``python -I`` process per policy, the *learner's process*
(:mod:`.learner_process`, run by its path from the read-only package copy of
:mod:`.snapshot`), sends the bundles and arguments as plain data (:func:`encode`) and reads
back only the plain values the calls returned (:func:`decode`), or what they raised, which
stands in the checks' arguments as an :class:`IsolatedFailure`. :func:`run_isolated` makes one
call at once (visible tests use it, so that a learner sees the message before grading).

:func:`encode` and :func:`decode` are :mod:`.wire`'s codec with the kernel's own types:
:class:`~collectives.Schedule` (``__schedule__``), :class:`IsolatedFailure` (``__failed__``)
and :class:`~collectives.grading.checks.Opaque` (a value with no plain form, sent on with its
type name and text). What this stops and what it does not: the docstring of
:mod:`collectives.grading`.
"""

import json
import os
import secrets
import subprocess
import sys

from ...errors import GradingError
from ...schedule import Schedule
from ..checks import NOT_WRITTEN, Opaque, in_words, show
from ..cohort import ENV as COHORT_ENV
from . import wire
from .origin import check_origin
from .reading import bundle, policy
from .snapshot import package_copy

__all__ = [
    "call",
    "IsolatedCall",
    "IsolatedFailure",
    "isolated_call",
    "run_calls",
    "run_isolated",
    "resolve",
    "contains_failure",
    "encode",
    "decode",
    "LEARNER_PROCESS",
    "PROGRAM",
]

#: the program of the learner's process (run by its path, never imported by this module)
LEARNER_PROCESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "learner_process.py")
#: where that program is in the read-only package copy, which it runs from
PROGRAM = ("collectives", "grading", "isolation", "learner_process.py")


class IsolatedCall:
    """A learner's call still to be made, in the learner's process: what
    ``call(function, *args, isolated=True)`` returns and :func:`resolve` makes."""

    __slots__ = ("bundle", "args", "label", "key", "policy")

    def __init__(self, bundle, args, label, key, policy=None):
        self.bundle = bundle
        self.args = args
        self.label = label
        self.key = key
        self.policy = policy

    def __repr__(self):
        return f"<{self.label}, to be run without the collectives package>"


class IsolatedFailure:
    """What stands in a check's arguments for a call that raised in the learner's process: the
    check is not run, and the cell fails with ``message`` (an ``AssertionError``)."""

    def __init__(self, message):
        self.message = str(message)

    def __repr__(self):
        return f"<failed: {self.message}>"


# ---- the kernel's side of the wire ---------------------------------------------------------


def _special(value, encode_item):
    if isinstance(value, Schedule):
        return {
            "__schedule__": {
                "collective": value.collective,
                "n_ranks": value.n_ranks,
                "n_chunks": value.n_chunks,
                "n_scratch": value.n_scratch,
                "root": value.root,
                "name": value.name,
                "steps": encode_item(value.to_lists()),
            }
        }
    if isinstance(value, IsolatedFailure):
        return {"__failed__": value.message}
    if isinstance(value, Opaque):
        return {"__opaque__": value.type_name, "repr": value.text}
    return None


def _unspecial(value, decode_item):
    if "__schedule__" in value:
        s = value["__schedule__"]
        return Schedule(
            s["collective"],
            s["n_ranks"],
            s["n_chunks"],
            decode_item(s["steps"]),
            root=s["root"],
            n_scratch=s["n_scratch"],
            name=s["name"],
        )
    if "__failed__" in value:
        return IsolatedFailure(value["__failed__"])
    return Opaque(value.get("__opaque__", "object"), value.get("repr", "<object>"))


def encode(value):
    """``value`` as JSON-ready plain data (:func:`.wire.encode`, with Schedules, failed calls
    and opaque stand-ins); :class:`~collectives.GradingError` if it is too large."""
    try:
        return wire.encode(value, _special)
    except ValueError as exc:
        if str(exc) == wire.TOO_LARGE:
            raise GradingError(wire.TOO_LARGE) from None
        raise


def decode(value):
    """What :func:`encode` (or a learner's process) made, back as values: an
    :class:`~collectives.grading.checks.Opaque` for what had no plain form."""
    return wire.decode(value, _unspecial)


# ---- calling a learner's function ----------------------------------------------------------


def call(function, *args, name=None, isolated=False, allow=None, forbid=None):
    """Call a learner's ``function(*args)`` and return what it returns.

    If it raises, the error is re-raised as an ``AssertionError`` that names the call (the
    learner's own traceback stays attached as the cause). ``NotImplementedError`` says that
    the function is not written yet (its cell still holds nbgrader's placeholder).

    With ``isolated=True`` the function is not called here: its source code is read now and an
    :class:`IsolatedCall` is returned, which :func:`~collectives.grading.recheck` makes in a
    fresh process where ``collectives`` cannot be imported (tasks that must be solved without
    the package; see :mod:`collectives.grading`). Use it only inside the checks given to
    ``recheck``. ``allow`` (dotted names such as ``"collectives.Schedule"``) lets the function
    use those parts of the package, and only those; ``forbid`` refuses names on top (alone:
    only those).
    """
    if isolated:
        return isolated_call(function, *args, name=name, allow=allow, forbid=forbid)
    if allow is not None or forbid is not None:
        raise GradingError(
            "call(..., allow=..., forbid=...) needs isolated=True (a bug in the "
            "test, not in your answer)"
        )
    if not callable(function):
        if name:
            raise GradingError(
                f"{name} is {in_words(function)}, not a function; define it with `def {name}(...):`"
            )
        raise GradingError(f"expected a function, got {in_words(function)}")
    label = name or getattr(function, "__name__", None) or "your function"
    check_origin(function, label)
    text = f"{label}({', '.join(show(a) for a in args)})"
    try:
        return function(*args)
    except NotImplementedError as exc:
        raise AssertionError(f"{text}: {label} is {NOT_WRITTEN}") from exc
    except Exception as exc:
        raise AssertionError(f"{text} raised {type(exc).__name__}: {exc}") from exc


# ---- making the calls --------------------------------------------------------------------


def isolated_call(function, *args, name=None, allow=None, forbid=None):
    """An :class:`IsolatedCall` of ``function(*args)``, for :func:`resolve` to make in the
    learner's process (the source is read now; the call is made there, later). ``allow`` and
    ``forbid``: what of the package the function may use (:func:`.reading.policy`); by default
    nothing."""
    rules = policy(allow, forbid)
    data = bundle(function, name=name, policy=rules)  # first: it refuses the learner's objects
    label = name or getattr(function, "__name__", None) or "your function"
    text = f"{label}({', '.join(show(a) for a in args)})"
    return IsolatedCall(data, tuple(args), text, (id(function), json.dumps(rules)), rules)


def _outcome_error(call, result):
    raised, message = result.get("raised"), str(result.get("message", ""))
    if raised == "NotImplementedError":
        name = call.label.split("(", 1)[0]
        return f"{call.label}: {name} is {NOT_WRITTEN}"
    if raised == "GradingError":
        return f"{call.label}: {message}"
    return f"{call.label} raised {raised}: {message}"


def run_calls(calls, timeout=60.0):
    """Make ``calls`` (:class:`IsolatedCall`) in learner's processes, one for each policy
    (:func:`.reading.policy`). Returns, per call, ``(True, value)`` or ``(False, message)`` (the
    message names the call and what it raised). A process that does not finish in ``timeout``
    seconds, or fails, raises :class:`~collectives.GradingError`."""
    calls = list(calls)
    groups = {}
    for i, call in enumerate(calls):
        groups.setdefault(json.dumps(call.policy), []).append(i)
    outcomes = [None] * len(calls)
    for indices in groups.values():
        group = [calls[i] for i in indices]
        for i, outcome in zip(indices, _run_group(group, group[0].policy, timeout)):
            outcomes[i] = outcome
    return outcomes


def _run_group(calls, rules, timeout):
    """The calls that share one policy, made in one learner's process."""
    bundles, index = [], {}
    for call in calls:
        if call.key not in index:
            index[call.key] = len(bundles)
            bundles.append(call.bundle)
    nonce = secrets.token_hex(16)
    payload = json.dumps(
        {
            "nonce": nonce,
            "bundles": bundles,
            "policy": rules,
            "package": package_copy() if rules is not None else None,
            "calls": [{"bundle": index[c.key], "args": encode(list(c.args))} for c in calls],
        }
    )
    try:
        copy = package_copy()
        program = os.path.join(copy, *PROGRAM)
        proc = subprocess.run(
            [sys.executable, "-I", program],
            input=payload,
            cwd=copy,
            # without the test cell's key to the cohort's cases (collectives.grading.cohort)
            env={k: v for k, v in os.environ.items() if k != COHORT_ENV},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise GradingError(
            f"your functions, re-run for grading without the collectives "
            f"package, took longer than {timeout:g} s (an endless loop, or a "
            "loop over every pair of chips of a big slice?)"
        ) from None
    except OSError as exc:
        raise GradingError(f"the graded re-run of your functions could not start: {exc}") from None
    results = wire.read_reply(proc.stdout, wire.LEARNER_MARK, nonce)
    if proc.returncode != 0 or results is None or len(results) != len(calls):
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
        raise GradingError(
            "the graded re-run of your functions without the collectives "
            f"package did not finish properly (exit status {proc.returncode})"
            f"{': ' + ' | '.join(tail) if tail else ''}"
        )
    outcomes = []
    for call, result in zip(calls, results):
        if isinstance(result, dict) and "value" in result:
            outcomes.append((True, decode(result["value"])))
        elif isinstance(result, dict):
            outcomes.append((False, _outcome_error(call, result)))
        else:
            outcomes.append((False, f"{call.label}: the graded re-run returned no answer"))
    return outcomes


def run_isolated(function, *args, name=None, timeout=60.0, allow=None, forbid=None):
    """``function(*args)`` re-run now from its source in a learner's process, where
    ``collectives`` cannot be imported; returns what it returned (as plain data: tuples,
    lists, numbers, strings, dicts, numpy arrays; other objects as an opaque stand-in).

    If the function raises there (for instance ``ImportError: this task must be solved
    without the collectives package ...``), an ``AssertionError`` names the call and the
    error, as :func:`call` does. ``allow``, ``forbid``: what of the package it may use
    (:func:`.reading.policy`)."""
    ((ok, value),) = run_calls(
        [isolated_call(function, *args, name=name, allow=allow, forbid=forbid)], timeout=timeout
    )
    if not ok:
        raise AssertionError(value)
    return value


def _walk(value, found):
    if isinstance(value, IsolatedCall):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, found)


def _substitute(value, results):
    if isinstance(value, IsolatedCall):
        ok, answer = results[id(value)]
        return answer if ok else IsolatedFailure(answer)
    if isinstance(value, list):
        return [_substitute(v, results) for v in value]
    if isinstance(value, tuple):
        return tuple(_substitute(v, results) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, results) for k, v in value.items()}
    return value


def resolve(items, timeout=60.0):
    """``items`` with every :class:`IsolatedCall` in them (in lists, tuples, dict values)
    replaced by what the call returned in one learner's process, or by an
    :class:`IsolatedFailure` when it raised. Used by :func:`.orchestrator.recheck`."""
    found = []
    for item in items:
        _walk(item, found)
    if not found:
        return list(items)
    outcomes = run_calls(found, timeout=timeout)
    results = {id(call): outcome for call, outcome in zip(found, outcomes)}
    return [_substitute(item, results) for item in items]


def contains_failure(value):
    """The first :class:`IsolatedFailure` in ``value`` (lists, tuples, dict values), or None."""
    if isinstance(value, IsolatedFailure):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            found = contains_failure(v)
            if found is not None:
                return found
    if isinstance(value, dict):
        for v in value.values():
            found = contains_failure(v)
            if found is not None:
                return found
    return None
