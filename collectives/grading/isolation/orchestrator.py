"""The isolated re-check: the checks of a hidden test run on plain data in a fresh process.

:func:`recheck` first makes the learner's isolated calls in its checks' arguments
(:func:`.calls.resolve`), converts the arguments to plain data (:func:`.calls.encode`),
starts ``sys.executable -I`` on :func:`isolated_main`, which imports ``collectives`` from the
read-only package copy (:func:`.snapshot.package_copy`), decodes the answers and runs the
checks there (:data:`RECHECKABLE`), and reads the verdict back from the subprocess's stdout,
tagged with a random nonce (:func:`.wire.read_reply`). What this defends against, and what
not, is in the docstring of :mod:`collectives.grading`.
"""

import json
import secrets
import subprocess
import sys

from ...errors import GradingError
from ..checks import (
    check_choice,
    check_close,
    check_estimate,
    check_no_worse,
    check_number,
    check_reference,
    check_shape,
)
from ..diagnosis import check_schedule
from . import wire
from .calls import contains_failure, decode, encode, resolve
from .snapshot import package_copy

__all__ = ["recheck", "RECHECKABLE", "isolated_main"]

#: the checks :func:`recheck` may run in the subprocess, by name
RECHECKABLE = {
    "check_schedule": check_schedule,
    "check_number": check_number,
    "check_close": check_close,
    "check_reference": check_reference,
    "check_choice": check_choice,
    "check_shape": check_shape,
    "check_estimate": check_estimate,
    "check_no_worse": check_no_worse,
}


# the re-check's first lines: nothing but the private copy is added to the import path (``-I``
# keeps the working directory, the script's directory, PYTHON* variables and the user site
# off it), and the package must come from there
_BOOTSTRAP = (
    "import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); "
    "import collectives, os; "
    "os.path.dirname(os.path.dirname(collectives.__file__)) == sys.argv[1] or "
    "sys.exit('collectives was not imported from the grading copy'); "
    "from collectives.grading.isolation.orchestrator import isolated_main; "
    "sys.exit(isolated_main())"
)


def recheck(*checks, timeout=60.0):
    """Run checks in a fresh ``python -I`` that imports ``collectives`` from disk.

    Each check is ``(name, args)`` or ``(name, args, kwargs)`` with ``name`` one of
    :data:`RECHECKABLE` (``check_schedule``, ``check_number``, ``check_close``,
    ``check_reference``, ``check_choice``, ``check_shape``, ``check_estimate``,
    ``check_no_worse``). Arguments are
    converted to plain data first (so learners' answers are read exactly once, as values);
    what cannot be converted reaches the check as an opaque stand-in that fails its type check
    with the same message as in the kernel. Every check runs; if any fails, the first failure
    is raised here as the same ``AssertionError`` or :class:`GradingError` (same message) it
    raised there, followed by the messages of the other failing checks ("This cell has 2 more
    failing checks: ..."), with no frame of the grader's files in its traceback. See
    :mod:`collectives.grading` for what this defends against and what not.

    Learner calls made with ``call(function, *args, isolated=True)`` anywhere in the checks'
    arguments are made first, all in one fresh process where ``collectives`` cannot be imported
    (:func:`.calls.resolve`); a check whose arguments hold a call that
    raised there fails, in its turn, with that call's error.
    """
    __tracebackhide__ = True
    checks = resolve(checks, timeout=timeout)
    calls = []
    for i, check in enumerate(checks):
        if not isinstance(check, tuple) or len(check) not in (2, 3):
            raise GradingError(f"recheck: check {i} must be (name, args) or (name, args, kwargs)")
        name, args = check[0], check[1]
        kwargs = check[2] if len(check) == 3 else {}
        if name not in RECHECKABLE:
            raise GradingError(f"recheck: {name!r} is not one of {', '.join(RECHECKABLE)}")
        calls.append(
            {
                "check": name,
                "args": encode(list(args)),
                "kwargs": {str(k): encode(v) for k, v in dict(kwargs).items()},
            }
        )
    nonce = secrets.token_hex(16)
    payload = json.dumps({"nonce": nonce, "calls": calls})
    copy = package_copy()
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", _BOOTSTRAP, copy],
            cwd=copy,
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise GradingError(f"the isolated re-check took longer than {timeout:g} s") from None
    except OSError as exc:
        raise GradingError(f"the isolated re-check could not start: {exc}") from None
    results = wire.read_reply(proc.stdout, wire.RECHECK_MARK, nonce)
    if proc.returncode != 0 or results is None:
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-5:]
        raise GradingError(
            "the isolated re-check did not run properly (exit status "
            f"{proc.returncode}){': ' + ' | '.join(tail) if tail else ''}"
        )
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
        text += (
            f"\n\nThis cell has {more} more failing check{'s' if more > 1 else ''}:\n"
            + "\n".join(f"- {m}" for m in messages[1:])
        )
    kind = failures[0].get("kind")
    return AssertionError(text) if kind == "AssertionError" else GradingError(text)


# The error is raised from code compiled under this name, not from a file of the package, so
# that the learner's traceback (and feedback) shows none of the grader's paths; the frames of
# recheck itself are hidden from IPython's tracebacks by ``__tracebackhide__``.
_RAISE = compile("raise error", "<the grader's re-check>", "exec")


def _throw(error):
    __tracebackhide__ = True
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
            if failed is not None:  # the learner's call raised in its own process
                raise AssertionError(failed.message)
            RECHECKABLE[name](*args, **kwargs)
        except AssertionError as exc:
            results.append({"ok": False, "kind": "AssertionError", "message": str(exc)})
            continue
        except GradingError as exc:
            results.append({"ok": False, "kind": "GradingError", "message": str(exc)})
            continue
        except Exception as exc:  # a check must never crash silently: report it
            results.append(
                {"ok": False, "kind": "error", "message": f"{type(exc).__name__}: {exc}"}
            )
            continue
        results.append({"ok": True})
    sys.stdout.write(wire.reply_line(wire.RECHECK_MARK, request["nonce"], results))
    return 0
