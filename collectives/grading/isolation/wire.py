"""The wire between the grading processes: values as plain JSON, the reply line, the refusals.

Three processes take part in grading a hidden test: the kernel (the notebook, where the test
runs), the *learner's process* (the learner's functions re-run from their source, without the
package: :mod:`.learner_process`) and the *re-check process* (the checks, with the package:
:mod:`.orchestrator`). They exchange values as JSON of ints, floats, strings, lists and
tagged dicts, so that no object of one process (an answer with a lying ``__eq__``, a list that
changes when read twice) reaches another; :func:`encode` reads a value once and :func:`decode`
builds it again:

- ``{"__tuple__": [...]}``, ``{"__set__": [...]}`` (decoded as a frozenset),
  ``{"__dict__": {...}}`` (string keys), ``{"__ndarray__": [...], "dtype": "<i8"}`` (numeric
  numpy arrays);
- ``{"__opaque__": type name, "repr": short text}`` for a value with no plain form;
- what one side adds with ``special`` (the kernel's Schedules and failed calls:
  :func:`collectives.grading.isolation.calls.encode`).

A process writes its reply as one line of stdout that starts with a mark and holds the JSON
and the request's random nonce (:func:`reply_line`); the reader takes the last such line
(:func:`read_reply`), so that lines a learner's code prints cannot forge it.

This file is standalone: it imports only the standard library (numpy only when it is imported
already, to encode its values, or when an array is decoded) and nothing of ``collectives``, so
that the learner's process, in which the package cannot be imported, loads it by its path.
"""

import json
import numbers
import reprlib
import sys
from decimal import Decimal

__all__ = [
    "encode",
    "decode",
    "type_name",
    "show",
    "reply_line",
    "read_reply",
    "MAX_ITEMS",
    "MAX_DEPTH",
    "TOO_LARGE",
    "NO_PACKAGE",
    "FORBIDDEN",
    "ADVICE",
    "LEARNER_MARK",
    "RECHECK_MARK",
]

#: the most values one message may hold (items of lists, entries of arrays, ...)
MAX_ITEMS = 5_000_000
#: deeper structures are sent as opaque values
MAX_DEPTH = 12
#: the message of the ``ValueError`` :func:`encode` raises past :data:`MAX_ITEMS`
TOO_LARGE = "the answer is too large to check"
#: the marks of the reply lines of the learner's process and of the re-check process
LEARNER_MARK = "collectives-learner-result "
RECHECK_MARK = "collectives-grading-result "
#: the start of the message a learner reads when a graded function uses the package
NO_PACKAGE = "this task must be solved without the collectives package"
#: what the message says of a name of the package a task forbids ("collectives.busbw is
#: forbidden in this task ...")
FORBIDDEN = "is forbidden in this task"
#: the end of a refusal of the package
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxset = _short.maxdict = 8
_short.maxlevel = 3


def type_name(value):
    """The name of ``value``'s type as a learner knows it: ``int``, ``numpy.int64``."""
    kind = type(value)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


def show(value):
    """A short repr that never raises (learners' objects may have broken ``__repr__``)."""
    try:
        return _short.repr(value)
    except Exception:  # a learner's __repr__ may raise anything
        return f"<{type_name(value)} object>"


def _opaque(value, text=None):
    return {"__opaque__": type_name(value), "repr": show(value) if text is None else text}


def encode(value, special=None, *, depth=0, budget=None):
    """``value`` as JSON-ready plain data (module docstring).

    ``special(value, encode_item)``, if given, is asked first about every value: it returns the
    tagged dict of a type of its own (encoding what it holds with ``encode_item``) or None.
    Raises ``ValueError`` (:data:`TOO_LARGE`) past :data:`MAX_ITEMS` values."""
    budget = [MAX_ITEMS] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError(TOO_LARGE)

    def item(v):
        return encode(v, special, depth=depth + 1, budget=budget)

    if special is not None:
        tagged = special(value, item)
        if tagged is not None:
            return tagged
    if depth > MAX_DEPTH:
        return _opaque(value, "a structure nested too deeply")
    np = sys.modules.get("numpy")
    if value is None:
        return None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return bool(value)
    if isinstance(value, int) or (np is not None and isinstance(value, np.integer)):
        return int(value)
    if isinstance(value, float) or (np is not None and isinstance(value, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [item(v) for v in list(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [item(v) for v in tuple(value)]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [item(v) for v in list(value)]}
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"__ndarray__": item(value.tolist()), "dtype": value.dtype.str}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {str(k): item(v) for k, v in value.items()}}
    if isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, complex):
        try:
            return float(value)
        except Exception:  # a learner's number whose float() raises
            pass
    return _opaque(value)


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def decode(value, special=None):
    """What :func:`encode` made, back as values.

    A tagged dict this module does not know goes to ``special(tagged, decode_item)``; without
    ``special`` it is a ``ValueError``."""
    if isinstance(value, list):
        return [decode(v, special) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode(v, special) for v in value["__tuple__"])
    if "__set__" in value:
        return frozenset(_hashable(decode(v, special)) for v in value["__set__"])
    if "__dict__" in value:
        return {k: decode(v, special) for k, v in value["__dict__"].items()}
    if "__ndarray__" in value:
        import numpy

        return numpy.array(decode(value["__ndarray__"], special), dtype=numpy.dtype(value["dtype"]))
    if special is not None:
        return special(value, lambda v: decode(v, special))
    raise ValueError(f"cannot decode {value!r}")


def reply_line(mark, nonce, results):
    """The line a process writes last on its stdout: ``mark`` and the JSON of the nonce of the
    request it answers and its ``results``."""
    return mark + json.dumps({"nonce": nonce, "results": results}) + "\n"


def read_reply(stdout, mark, nonce):
    """The results of the last line of ``stdout`` that starts with ``mark``, if it parses and
    answers the request with ``nonce``; else None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(mark):
            try:
                reply = json.loads(line[len(mark) :])
            except ValueError:
                return None
            if not isinstance(reply, dict) or reply.get("nonce") != nonce:
                return None
            results = reply.get("results")
            return results if isinstance(results, list) else None
    return None
