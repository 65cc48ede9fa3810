"""collectives.grading.isolation.orchestrator: ``recheck``, the checks in a fresh interpreter.

The re-check is held to the same messages as the in-process checks, and shown to ignore
monkeypatching of this process; the learner's isolated calls in its arguments are made first.
"""

import math
import subprocess
import sys
import textwrap
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import collectives as cl
import collectives.analytic
import collectives.grading
import collectives.grading as grading
from collectives import GradingError
from collectives.grading import NO_PACKAGE, call, isolation, recheck
from collectives.grading.isolation.calls import decode, encode

from ..helpers import ADVICE, RING, WHAT, Lying, failure, message, ring_steps


# ---- recheck: the same verdicts in a fresh interpreter ---------------------------------------
def test_recheck_passes_correct_answers():
    n, s, a, b = 5, 1e6, 1e-6, 1e9
    recheck(
        ("check_schedule", (ring_steps(n), "all_gather", n), {"n_steps": n - 1, **RING}),
        ("check_schedule", (cl.algorithms.ring_all_gather(n), "all_gather", n)),
        ("check_close", (1.0, 1.0, "x")),
        ("check_number", (np.float32(2.5), "y")),
        (
            "check_reference",
            (
                cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
                "t",
                "analytic.ring_all_gather",
                (n, s),
                {"alpha": a, "bandwidth": b},
            ),
        ),
        (
            "check_reference",
            (
                cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
                "t",
                "grading.schedule_seconds",
                ("ring_all_gather", n, s),
                {"link_bandwidth": b, "hop_latency": a},
            ),
        ),
    )


BAD_ANSWERS = [
    ("check_schedule", (None, "all_gather", 4), WHAT),
    ("check_schedule", ((s for s in ()), "all_gather", 4), WHAT),
    ("check_schedule", ([[(0, 1, 0.0, 0)]], "all_gather", 4), WHAT),
    ("check_schedule", ([{(0, 1, 0, 0), (1, 2, 1, 1)}], "all_gather", 4), WHAT),
    ("check_schedule", ([[{"src": 0}]], "all_gather", 4), WHAT),
    ("check_schedule", (np.zeros((3, 4, 4)), "all_gather", 4), WHAT),
    ("check_schedule", (ring_steps(4)[:2], "all_gather", 4), {"n_steps": 3, **RING, **WHAT}),
    ("check_schedule", (cl.algorithms.ring_all_gather(5), "all_gather", 4), WHAT),
    ("check_close", (Lying(2.0), 1.0, "x"), {}),
    ("check_close", (np.array([1.0]), 1.0, "x"), {}),
    ("check_close", (object(), 1.0, "x"), {}),
    ("check_number", (Decimal("NaN"), "x"), {}),
    (
        "check_reference",
        (
            Fraction(1, 3),
            "f",
            "analytic.ring_crossover_bytes",
            (4,),
            {"alpha": 1e-6, "bandwidth": 1e9},
        ),
        {},
    ),
]


@pytest.mark.parametrize(
    "name, args, kwargs", BAD_ANSWERS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_ANSWERS)]
)
def test_recheck_fails_with_the_in_process_message(name, args, kwargs):
    here = failure(getattr(grading, name), *args, **kwargs)
    there = failure(recheck, (name, args, kwargs))
    assert type(there) is type(here)
    assert str(there) == str(here)


def test_recheck_stops_at_the_first_failure():
    text = message(
        recheck,
        ("check_close", (1.0, 1.0, "first")),
        ("check_close", (2.0, 1.0, "second")),
        ("check_close", (3.0, 1.0, "third")),
    )
    assert text.startswith("second is 2.0")


@pytest.mark.slow  # starts the isolated re-check's process
def test_recheck_ignores_monkeypatching_in_this_process(monkeypatch):
    """What a learner's cell could do to the kernel: none of it reaches the re-check."""

    def always_pass(*args, **kwargs):
        return None

    monkeypatch.setattr(cl, "verify", always_pass)
    monkeypatch.setattr(cl, "simulate", lambda schedule, inputs: inputs)
    monkeypatch.setattr(cl, "busbw", lambda *args, **kwargs: 42.0)
    monkeypatch.setattr(collectives.analytic, "ring_all_gather", lambda *args: 1.0)
    monkeypatch.setattr(grading, "check_schedule", always_pass)
    monkeypatch.setattr(grading, "check_close", always_pass)
    monkeypatch.setattr(grading.checks, "_compare", always_pass)
    monkeypatch.setattr(math, "isclose", lambda *args, **kwargs: True)

    wrong_steps = [[(r, 0, r, r) for r in range(1, 4)]]
    assert grading.check_schedule(wrong_steps, "all_gather", 4) is None  # fooled here ...
    assert message(recheck, ("check_schedule", (wrong_steps, "all_gather", 4), RING)).startswith(
        "your schedule: step 0 sends from rank 1 to rank 0"
    )  # ... not there
    assert message(
        recheck,
        (
            "check_reference",
            (1.0, "t", "analytic.ring_all_gather", (4, 1e6), {"alpha": 1e-6, "bandwidth": 1e9}),
        ),
    ).startswith("t is 1.0, expected 0.000753")
    assert message(
        recheck, ("check_reference", (42.0, "b", "busbw", ("all_gather", 1e6, 1e-3, 4)))
    ).startswith("b is 42.0, expected 750000000.0")
    assert message(recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")
    recheck(("check_schedule", (ring_steps(4), "all_gather", 4), {"n_steps": 3, **RING}))


def test_recheck_imports_collectives_from_its_own_directory(tmp_path, monkeypatch):
    """A ``collectives`` package in the working directory or on PYTHONPATH is not used."""
    fake = tmp_path / "collectives"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('the fake collectives was imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    recheck(("check_close", (1.0, 1.0, "x")))
    assert message(recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")


def test_recheck_rejects_a_reply_without_its_nonce(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\ncat > /dev/null\n"
        'echo \'collectives-grading-result {"nonce": "0", "results": '
        '[{"ok": true}]}\'\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    error = failure(recheck, ("check_close", (2.0, 1.0, "x")))
    assert isinstance(error, GradingError)
    assert str(error).startswith("the isolated re-check did not run properly (exit status 0)")


def test_recheck_reports_a_crashed_interpreter(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Fatal Python error: something' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    assert message(recheck, ("check_close", (1.0, 1.0, "x"))) == (
        "the isolated re-check did not run properly (exit status 3): Fatal Python error: something"
    )


def test_recheck_rejects_malformed_requests():
    assert "must be (name, args) or (name, args, kwargs)" in message(recheck, ["check_close"])
    assert "'verify' is not one of" in message(recheck, ("verify", ()))
    assert "the isolated re-check failed: TypeError" in message(recheck, ("check_close", ()))


# ---- inside recheck ----------------------------------------------------------------------
@pytest.mark.slow  # starts the isolated re-check's process
def test_recheck_makes_the_calls_first_and_fails_in_the_order_of_the_checks(learner):
    m = learner("""
        import collectives as cl

        def right(n):
            return 2 * n

        def wrong(n):
            return 2 * n + 1

        def shortcut(n):
            return cl.measures.diameter(n)
    """)
    recheck(
        *[
            ("check_close", (call(m.right, n, isolated=True), 2 * n, f"right({n})"))
            for n in range(5)
        ]
    )
    with pytest.raises(AssertionError) as info:
        recheck(
            ("check_close", (call(m.right, 1, isolated=True), 2, "right(1)")),
            ("check_close", (call(m.wrong, 1, isolated=True), 2, "wrong(1)")),
            ("check_close", (call(m.shortcut, 1, isolated=True), 2, "shortcut(1)")),
        )
    # every failing check is listed, the first one first
    assert str(info.value).startswith("wrong(1) is 3.0, expected 2.0")
    assert str(info.value).endswith(
        "\n\nThis cell has 1 more failing check:\n"
        f"- shortcut(1) raised ImportError: {NO_PACKAGE} (your code "
        f"uses cl, which is the collectives package){ADVICE}"
    )
    with pytest.raises(AssertionError) as info:
        recheck(
            ("check_close", (call(m.right, 1, isolated=True), 2, "right(1)")),
            ("check_close", (call(m.shortcut, 1, isolated=True), 2, "shortcut(1)")),
            ("check_close", (call(m.wrong, 1, isolated=True), 2, "wrong(1)")),
        )
    assert str(info.value).startswith(f"shortcut(1) raised ImportError: {NO_PACKAGE}")


def test_kernel_tampering_does_not_reach_either_process(learner, monkeypatch):
    m = learner("def wrong(n):\n    return 0\n")
    monkeypatch.setattr(math, "isclose", lambda *args, **kwargs: True)
    monkeypatch.setattr(cl.grading.slices, "slice_diameter", lambda *args: 0)
    with pytest.raises(AssertionError, match=r"wrong\(16\) is 0.0, expected 16.0"):
        recheck(
            (
                "check_reference",
                (
                    call(m.wrong, 16, isolated=True),
                    "wrong(16)",
                    "grading.slice_diameter",
                    ((16, 16), (True, True)),
                ),
            )
        )


def test_failures_survive_the_trip_to_the_re_check():
    failure = isolation.IsolatedFailure("f(1) raised ValueError: no")
    back = decode(encode([failure, 1]))
    assert isinstance(back[0], isolation.IsolatedFailure) and back[0].message == failure.message
    assert isolation.contains_failure({"a": [(1, back[0])]}) is back[0]


def test_calls_with_different_rules_in_one_recheck(learner):
    m = learner("import collectives as cl\ndef f(n):\n    return cl.busbw('all_gather', n, 1.0, 2)")
    with pytest.raises(AssertionError) as info:
        recheck(
            (
                "check_close",
                (call(m.f, 4, isolated=True, allow=("collectives.busbw",)), 2.0, "allowed"),
            ),
            ("check_close", (call(m.f, 4, isolated=True), 2.0, "whole package refused")),
        )
    assert str(info.value).startswith(f"f(4) raised ImportError: {NO_PACKAGE}")


@pytest.mark.slow  # starts the isolated re-check's process
def test_failed_rechecks_show_no_grader_file_in_the_traceback():
    """As in a notebook: IPython's traceback of a failing hidden test names none of the
    grader's files (its frames are hidden; the error is raised from compiled code)."""
    script = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("import collectives.grading as _grading\\n"
                       "_grading.recheck(('check_close', (1.0, 2.0, 'x')), "
                       "('check_close', (3.0, 2.0, 'y')))")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    shown = proc.stdout + proc.stderr
    assert "x is 1.0, expected 2.0" in shown and "- y is 3.0, expected 2.0" in shown, shown
    assert "collectives/grading" not in shown and "recheck.py" not in shown, shown
    assert "orchestrator.py" not in shown and "calls.py" not in shown, shown
