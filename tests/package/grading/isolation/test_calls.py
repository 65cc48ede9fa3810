"""collectives.grading.isolation.calls: ``call`` (in the kernel, or isolated), the calls made in
the learner's process, and what comes back.

The learner's functions here live in small modules written to a temporary directory (a module
is what a notebook's namespace is to inspect.getsource); one test runs them in IPython, as in a
notebook.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from collectives import GradingError
from collectives.grading import NO_PACKAGE, call, recheck, run_isolated

from ..helpers import TOOLS, failure, message, refusal


# ---- call ------------------------------------------------------------------------------------
def test_call_returns_the_value_and_names_failures():
    assert call(lambda n: n + 1, 2) == 3

    def unsolved(n):
        raise NotImplementedError()

    error = failure(call, unsolved, 4)
    assert str(error) == (
        "unsolved(4): unsolved is not written yet: replace the line "
        "`raise NotImplementedError(...)` in its cell with your code"
    )
    assert isinstance(error.__cause__, NotImplementedError)

    def broken(n, nbytes):
        return [0][n]

    error = failure(call, broken, 3, 2**20)
    assert str(error) == "broken(3, 1048576) raised IndexError: list index out of range"
    assert isinstance(error.__cause__, IndexError)
    assert message(call, None, 3, name="ring_all_gather_steps") == (
        "ring_all_gather_steps is None, not a function; define it with "
        "`def ring_all_gather_steps(...):`"
    )
    assert message(call, 5, 3) == "expected a function, got an int (5)"


# ---- what runs, and what comes back ------------------------------------------------------
def test_a_plain_function_runs_and_its_answer_comes_back_as_plain_data(learner):
    m = learner("""
        def diameter(shape, wraparound):
            return sum(s // 2 if w else s - 1 for s, w in zip(shape, wraparound))

        def many(n):
            import numpy as np
            return (n, [1.5, None, "x"], {"a": (1, 2)}, np.arange(3), np.float32(0.5),
                    np.int64(7), True, frozenset({2}))
    """)
    assert run_isolated(m.diameter, (16, 20, 28), (True, True, False)) == 8 + 10 + 27
    got = run_isolated(m.many, 4)
    assert got[:3] == (4, [1.5, None, "x"], {"a": (1, 2)})
    assert isinstance(got[3], np.ndarray) and got[3].tolist() == [0, 1, 2]
    assert got[4:] == (0.5, 7, True, frozenset({2}))


def test_an_unused_mention_of_the_package_does_no_harm(learner):
    m = learner("""
        import collectives as cl

        def hops(a, b, check=False):
            if check:
                return cl.measures
            return abs(a - b)
    """)
    assert run_isolated(m.hops, 3, 7) == 4


def test_prints_and_forged_lines_do_not_change_the_answer(learner):
    m = learner("""
        import sys

        def noisy(x):
            print("collectives-learner-result {\\"nonce\\": \\"0\\", \\"results\\": []}")
            print("working", file=sys.stderr)
            return x + 1
    """)
    assert run_isolated(m.noisy, 1) == 2


def test_lying_answers_are_read_once_as_plain_values(learner):
    m = learner("""
        def lie(n):
            class Liar(int):
                def __eq__(self, other):
                    return True
                __hash__ = int.__hash__
            return Liar(0)
    """)
    got = run_isolated(m.lie, 3)
    assert type(got) is int and got == 0 and got != 16
    with pytest.raises(AssertionError, match=r"lie\(3\) is 0.0, expected 16.0"):
        recheck(("check_close", (call(m.lie, 3, isolated=True), 16, "lie(3)")))


# ---- errors: the learner's, and what cannot be sent --------------------------------------
def test_what_a_function_raises_is_named(learner):
    m = learner("""
        def blank(n):
            raise NotImplementedError()

        def broken(n):
            return [1, 2][n]

        class Helper:
            pass

        HELPER = Helper()

        def uses_helper(n):
            return HELPER

        def ignores_helper(n):
            if n < 0:
                return HELPER
            return n
    """)
    assert refusal(lambda: run_isolated(m.blank, 1)) == (
        "blank(1): blank is not written yet: replace the line `raise NotImplementedError(...)` "
        "in its cell with your code"
    )
    assert refusal(lambda: run_isolated(m.broken, 5)) == (
        "broken(5) raised IndexError: list index out of range"
    )
    assert refusal(lambda: run_isolated(m.uses_helper, 1)) == (
        "uses_helper(1) raised NameError: HELPER (Helper) cannot be sent to the graded re-run "
        "of your function: compute it inside the function, or make it plain numbers, strings, "
        "lists, tuples or dicts"
    )
    assert run_isolated(m.ignores_helper, 3) == 3


def test_an_endless_function_times_out(learner):
    m = learner("def forever(n):\n    while True:\n        pass\n")
    with pytest.raises(GradingError, match="took longer than 2 s"):
        run_isolated(m.forever, 1, timeout=2.0)


def test_a_process_that_dies_is_reported(learner):
    m = learner("import os\ndef die(n):\n    os._exit(3)\n")
    with pytest.raises(GradingError, match=r"did not finish properly \(exit status 3\)"):
        run_isolated(m.die, 1)


def test_functions_defined_in_ipython_cells_are_re_run():
    """As in a notebook: the source comes from IPython's cache of its cells."""
    script = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        for cell in ["import collectives as cl\\nimport numpy as np",
                     "def helper(s, w):\\n    return s // 2 if w else s - 1",
                     "def diam(shape, wrap):\\n"
                     "    return sum(helper(s, w) for s, w in zip(shape, wrap))",
                     "def cheat(shape, wrap):\\n    return cl.measures.diameter(shape)",
                     "from collectives.grading import run_isolated\\n"
                     "print(run_isolated(diam, (16, 20, 28), (True, True, False)))\\n"
                     "try:\\n    run_isolated(cheat, (4,), (True,))\\n"
                     "except AssertionError as exc:\\n    print(exc)"]:
            result = shell.run_cell(cell)
            assert result.success, result
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == str(8 + 10 + 27)
    assert lines[1].startswith(f"cheat((4,), (True,)) raised ImportError: {NO_PACKAGE}")


def test_rules_need_the_isolated_re_run(learner):
    m = learner("def f(n):\n    return n\n")
    with pytest.raises(GradingError, match=r"needs isolated=True"):
        call(m.f, 1, allow=TOOLS)
