"""The isolated re-check: run the checks on plain data in a fresh ``python -I`` process.

:func:`recheck` converts a learner's answers to plain data (JSON of ints, floats, strings,
lists and tagged dicts: :func:`encode`), starts ``sys.executable -I`` on
:func:`isolated_main`, which imports ``collectives`` from the directory this package is in,
decodes the answers (:func:`decode`) and runs the checks there, and reads the verdict back from
the subprocess's stdout, tagged with a random nonce. What this defends against, and what not,
is in the docstring of :mod:`collectives.grading`.
"""

import atexit
import compileall
import hashlib
import json
import numbers
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from decimal import Decimal

import numpy as np

from ..errors import GradingError
from ..schedule import Schedule
from .checks import (MAX_ITEMS, Opaque, check_choice, check_close, check_number, check_reference,
                     check_shape, last_marked_json, show, type_name)
from .diagnosis import check_schedule
from .isolation import IsolatedFailure, contains_failure, resolve

__all__ = ["recheck", "RECHECKABLE", "encode", "decode", "isolated_main", "package_copy",
           "manifest"]

#: the ``collectives`` package this module belongs to (its directory)
PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
_COPIES = {}                 # package directory -> (private copy's parent, its manifest)
#: the checks :func:`recheck` may run in the subprocess, by name
RECHECKABLE = {"check_schedule": check_schedule, "check_number": check_number,
               "check_close": check_close, "check_reference": check_reference,
               "check_choice": check_choice, "check_shape": check_shape}
_RESULT_MARK = "collectives-grading-result "


def encode(value, depth=0, budget=None):
    """``value`` as JSON-ready plain data (ints, floats, strings, lists, tagged dicts)."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise GradingError("the answer is too large to check")
    if depth > 12:
        return {"__opaque__": type_name(value), "repr": "a structure nested too deeply"}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [encode(v, depth + 1, budget) for v in list(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, depth + 1, budget) for v in tuple(value)]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(v, depth + 1, budget) for v in list(value)]}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"__ndarray__": encode(value.tolist(), depth + 1, budget),
                "dtype": value.dtype.str}
    if isinstance(value, Schedule):
        return {"__schedule__": {
            "collective": value.collective, "n_ranks": value.n_ranks,
            "n_chunks": value.n_chunks, "n_scratch": value.n_scratch, "root": value.root,
            "name": value.name, "steps": encode(value.to_lists(), depth + 1, budget)}}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode(v, depth + 1, budget) for k, v in value.items()}}
    if isinstance(value, IsolatedFailure):
        return {"__failed__": value.message}
    if isinstance(value, (numbers.Real, Decimal)) and not isinstance(value, complex):
        return float(value)
    return {"__opaque__": type_name(value), "repr": show(value)}


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def decode(value):
    """What :func:`encode` made, back as values (an :class:`Opaque` for what had no plain form)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__set__" in value:
        return frozenset(_hashable(decode(v)) for v in value["__set__"])
    if "__ndarray__" in value:
        return np.array(decode(value["__ndarray__"]), dtype=np.dtype(value["dtype"]))
    if "__schedule__" in value:
        s = value["__schedule__"]
        return Schedule(s["collective"], s["n_ranks"], s["n_chunks"], decode(s["steps"]),
                        root=s["root"], n_scratch=s["n_scratch"], name=s["name"])
    if "__dict__" in value:
        return {k: decode(v) for k, v in value["__dict__"].items()}
    if "__failed__" in value:
        return IsolatedFailure(value["__failed__"])
    return Opaque(value.get("__opaque__", "object"), value.get("repr", "<object>"))


def manifest(directory):
    """{relative path: sha256} of every file under ``directory`` (compiled files included)."""
    found = {}
    for folder, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = hashlib.sha256(f.read()).hexdigest()
    return found


def _sources(directory):
    """The manifest of the package's own files (no compiled files)."""
    return {k: v for k, v in manifest(directory).items()
            if "__pycache__" not in k.split(os.sep) and not k.endswith(".pyc")}


def _remove(parent):
    for folder, _, _ in os.walk(parent):
        os.chmod(folder, stat.S_IRWXU)
    shutil.rmtree(parent, ignore_errors=True)


def package_copy(package_dir=None):
    """The directory that holds a private, read-only copy of the ``collectives`` package (and
    nothing else), from which the re-check and the learner's process import it.

    The copy is made once per process in a new temporary directory, compiled, and made
    read-only; before each use its files are hashed and compared with the package's sources
    and with the copy as it was made, and a fresh copy replaces it if anything differs. So the
    re-check never imports from the package's own folder, its parent (the repository root, in
    an editable install) or any other directory a learner's code could have written a module
    into. ``package_dir`` (tests): another package folder to copy instead of this one."""
    source = os.path.abspath(package_dir or PACKAGE_DIR)
    expected = _sources(source)
    cached = _COPIES.get(source)
    if cached is not None:
        parent, made = cached
        copy = os.path.join(parent, "collectives")
        if (os.path.isdir(parent) and os.listdir(parent) == ["collectives"]
                and manifest(copy) == made and _sources(copy) == expected):
            return parent
        _COPIES.pop(source, None)
        _remove(parent)
    parent = tempfile.mkdtemp(prefix="collectives-grading-")
    atexit.register(_remove, parent)
    copy = os.path.join(parent, "collectives")
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    compileall.compile_dir(copy, quiet=2)
    for folder, _, files in os.walk(copy):
        for name in files:
            os.chmod(os.path.join(folder, name), stat.S_IRUSR | stat.S_IRGRP)
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    os.chmod(parent, stat.S_IRUSR | stat.S_IXUSR)
    if _sources(copy) != expected:
        raise GradingError("the grading copy of the collectives package differs from the "
                           "package: it changed while being copied")
    _COPIES[source] = (parent, manifest(copy))
    return parent


# the re-check's first lines: nothing but the private copy is added to the import path (``-I``
# keeps the working directory, the script's directory, PYTHON* variables and the user site
# off it), and the package must come from there
_BOOTSTRAP = ("import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); "
              "import collectives, os; "
              "os.path.dirname(os.path.dirname(collectives.__file__)) == sys.argv[1] or "
              "sys.exit('collectives was not imported from the grading copy'); "
              "from collectives.grading.recheck import isolated_main; sys.exit(isolated_main())")


def recheck(*checks, timeout=60.0):
    """Run checks in a fresh ``python -I`` that imports ``collectives`` from disk.

    Each check is ``(name, args)`` or ``(name, args, kwargs)`` with ``name`` one of
    :data:`RECHECKABLE` (``check_schedule``, ``check_number``, ``check_close``,
    ``check_reference``, ``check_choice``, ``check_shape``). Arguments are
    converted to plain data first (so learners' answers are read exactly once, as values);
    what cannot be converted reaches the check as an opaque stand-in that fails its type check
    with the same message as in the kernel. Every check runs; if any fails, the first failure
    is raised here as the same ``AssertionError`` or :class:`GradingError` (same message) it
    raised there, followed by the messages of the other failing checks ("This cell has 2 more
    failing checks: ..."), with no frame of the grader's files in its traceback. See :mod:`collectives.grading` for what this defends against and what not.

    Learner calls made with ``call(function, *args, isolated=True)`` anywhere in the checks'
    arguments are made first, all in one fresh process where ``collectives`` cannot be imported
    (:func:`collectives.grading.isolation.resolve`); a check whose arguments hold a call that
    raised there fails, in its turn, with that call's error.
    """
    __tracebackhide__ = True  # noqa: F841 (read by IPython: the learner sees no grader frame)
    checks = resolve(checks, timeout=timeout)
    calls = []
    for i, check in enumerate(checks):
        if not isinstance(check, tuple) or len(check) not in (2, 3):
            raise GradingError(f"recheck: check {i} must be (name, args) or (name, args, kwargs)")
        name, args = check[0], check[1]
        kwargs = check[2] if len(check) == 3 else {}
        if name not in RECHECKABLE:
            raise GradingError(f"recheck: {name!r} is not one of {', '.join(RECHECKABLE)}")
        calls.append({"check": name, "args": encode(list(args)),
                      "kwargs": {str(k): encode(v) for k, v in dict(kwargs).items()}})
    nonce = secrets.token_hex(16)
    payload = json.dumps({"nonce": nonce, "calls": calls})
    copy = package_copy()
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", _BOOTSTRAP, copy], cwd=copy,
                              input=payload, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GradingError(f"the isolated re-check took longer than {timeout:g} s") from None
    except OSError as exc:
        raise GradingError(f"the isolated re-check could not start: {exc}") from None
    reply = last_marked_json(proc.stdout, _RESULT_MARK)
    if (proc.returncode != 0 or not isinstance(reply, dict) or reply.get("nonce") != nonce
            or not isinstance(reply.get("results"), list)):
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
        raise GradingError("the isolated re-check did not run properly (exit status "
                           f"{proc.returncode}){': ' + ' | '.join(tail) if tail else ''}")
    results = reply["results"]
    if len(results) != len(calls):
        raise GradingError("the isolated re-check returned an incomplete answer")
    failures = [r for r in results if r.get("ok") is not True]
    if failures:
        _throw(_failure(failures))


def _failure(failures):
    """One error for every failing check: the first one's kind and message, then the other
    messages (each once), so that the feedback lists all that is wrong in the cell."""
    messages = []
    for result in failures:
        message = str(result.get("message", ""))
        if result.get("kind") not in ("AssertionError", "GradingError"):
            message = f"the isolated re-check failed: {message}"
        if message not in messages:
            messages.append(message)
    text = messages[0]
    if len(messages) > 1:
        more = len(messages) - 1
        text += (f"\n\nThis cell has {more} more failing check{'s' if more > 1 else ''}:\n"
                 + "\n".join(f"- {m}" for m in messages[1:]))
    kind = failures[0].get("kind")
    return AssertionError(text) if kind == "AssertionError" else GradingError(text)


# The error is raised from code compiled under this name, not from a file of the package, so
# that the learner's traceback (and feedback) shows none of the grader's paths; the frames of
# recheck itself are hidden from IPython's tracebacks by ``__tracebackhide__``.
_RAISE = compile("raise error", "<the grader's re-check>", "exec")


def _throw(error):
    __tracebackhide__ = True  # noqa: F841 (read by IPython)
    exec(_RAISE, {"error": error})


def isolated_main():
    """Entry point of the :func:`recheck` subprocess: JSON request on stdin, verdict on stdout."""
    request = json.loads(sys.stdin.read())
    results = []
    for item in request["calls"]:
        name = item["check"]
        try:
            if name not in RECHECKABLE:
                raise GradingError(f"{name!r} is not a check")
            args = decode(item["args"])
            kwargs = {k: decode(v) for k, v in item["kwargs"].items()}
            failed = contains_failure([args, kwargs])
            if failed is not None:          # the learner's call raised in its own process
                raise AssertionError(failed.message)
            RECHECKABLE[name](*args, **kwargs)
        except AssertionError as exc:
            results.append({"ok": False, "kind": "AssertionError", "message": str(exc)})
            continue
        except GradingError as exc:
            results.append({"ok": False, "kind": "GradingError", "message": str(exc)})
            continue
        except Exception as exc:        # a check must never crash silently: report it
            results.append({"ok": False, "kind": "error",
                            "message": f"{type(exc).__name__}: {exc}"})
            continue
        results.append({"ok": True})
    sys.stdout.write(_RESULT_MARK + json.dumps({"nonce": request["nonce"],
                                                "results": results}) + "\n")
    return 0
