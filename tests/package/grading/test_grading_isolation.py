"""collectives.grading.isolation: a learner's function re-run from its source code in a process
where the collectives package cannot be imported; and the references of the notebook on TPU
slices (collectives.grading.slices).

The learner's functions here live in small modules written to a temporary directory (a module
is what a notebook's namespace is to inspect.getsource); one test runs them in IPython, as in a
notebook. The pipeline test (tests/course/test_grading_pipeline.py -k topology_reasoning) does the same
end to end through nbgrader.
"""

import ast
import os
import re
import shutil
import importlib.util
import itertools
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading import NO_PACKAGE, call, check_shape, recheck, run_isolated
from collectives.grading import isolation, slices
from collectives.grading.recheck import decode, encode

ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
          "that are graded")
_counter = itertools.count()


@pytest.fixture
def learner(tmp_path):
    """``learner(code)``: the module ``code`` defines (a stand-in for a notebook's namespace)."""
    def load(code):
        name = f"learner_module_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(code))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return load


def refusal(text):
    """The error run_isolated raises for a call that used the package."""
    with pytest.raises(AssertionError) as info:
        text()
    return str(info.value)


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


def test_helpers_constants_modules_and_library_objects_travel_with_the_function(learner):
    m = learner("""
        import functools
        import math
        import numpy as np
        from math import comb
        from itertools import product as cartesian

        LINK = 4.5e10
        SIZES = {"full": 16, "axes": [1, 2, 4, 8, 16]}

        def _wraps(size):
            return size == SIZES["full"]

        def axis_seconds(m, nbytes):
            return 0.0 if m == 1 else (m - 1) * (1e-6 + nbytes / m / (2 if _wraps(m) else 1) / LINK)

        @functools.lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        alias = axis_seconds

        def everything(n):
            pairs = list(cartesian(SIZES["axes"], repeat=2))
            return (alias(16, 0.0), axis_seconds(8, 8 * LINK), fib(n), comb(n, 2),
                    float(np.prod([2, 3])), math.floor(2.5), len(pairs))
    """)
    assert run_isolated(m.everything, 10) == pytest.approx(
        (15e-6, 7 * (1e-6 + 1.0), 55, 45, 6.0, 2, 25), rel=1e-12)
    assert run_isolated(m.fib, 20) == 6765                       # decorated, recursive
    assert run_isolated(m.alias, 16, 0.0) == pytest.approx(15e-6)


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


# ---- the package is refused --------------------------------------------------------------

@pytest.mark.parametrize("code, why", [
    ("import collectives as cl\ndef f(n):\n    return cl.measures.diameter(n)",
     "your code uses cl, which is the collectives package"),
    ("import collectives.measures as m\ndef f(n):\n    return m.diameter(n)",
     "your code uses m, which is the module collectives.measures"),
    ("from collectives.measures import diameter\ndef f(n):\n    return diameter(n)",
     "your code uses diameter, which is collectives.measures.diameter"),
    ("from collectives import Topology\ndef f(n):\n    return Topology",
     "your code uses Topology, which is collectives.topology.Topology"),
    ("import collectives as cl\nRING = cl.topology.ring(4, 1.0)\ndef f(n):\n"
     "    return RING.n_ranks", "your code uses RING, a Topology from collectives.topology"),
    ("def f(n):\n    import collectives\n    return collectives.measures",
     "your code imports 'collectives'"),
    ("def f(n):\n    from collectives.measures import hops\n    return hops",
     "your code imports 'collectives'"),
    ("import importlib\ndef f(n):\n    return importlib.import_module('collectives.grading')",
     "your code imports 'collectives'"),
    ("def f(n):\n    return __import__('collectives')", "your code imports 'collectives'"),
])
def test_every_ordinary_way_of_calling_the_package_is_refused(learner, code, why):
    m = learner(code)
    message = refusal(lambda: run_isolated(m.f, 4))
    assert message == f"f(4) raised ImportError: {NO_PACKAGE} ({why}){ADVICE}"


def test_the_learner_process_cannot_see_the_package(learner):
    m = learner("""
        import sys
        import importlib.util

        def look():
            try:
                importlib.util.find_spec("collectives")
                found = "found"
            except ImportError as exc:
                found = str(exc)
            return ([n for n in sys.modules if n.startswith("collectives")],
                    type(sys.meta_path[0]).__name__, found)
    """)
    modules, finder, found = run_isolated(m.look)
    assert modules == [] and finder == "RefuseCollectives" and found.startswith(NO_PACKAGE)


def test_the_learner_process_program_imports_nothing_of_the_package():
    tree = ast.parse(open(isolation.LEARNER_PROCESS).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("collectives")
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("collectives") for a in node.names)


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
        "in its cell with your code")
    assert refusal(lambda: run_isolated(m.broken, 5)) == (
        "broken(5) raised IndexError: list index out of range")
    assert refusal(lambda: run_isolated(m.uses_helper, 1)) == (
        "uses_helper(1) raised NameError: HELPER (Helper) cannot be sent to the graded re-run "
        "of your function: compute it inside the function, or make it plain numbers, strings, "
        "lists, tuples or dicts")
    assert run_isolated(m.ignores_helper, 3) == 3


def test_what_cannot_be_re_run_is_refused_in_the_kernel(learner):
    m = learner("""
        def outer():
            k = 3
            def inner(n):
                return n + k
            return inner
    """)
    with pytest.raises(GradingError, match="is defined inside another function"):
        run_isolated(m.outer(), 1, name="inner")
    with pytest.raises(GradingError, match="not a function written in the notebook"):
        run_isolated(len, [1])
    with pytest.raises(GradingError, match=r"f is an int \(3\), not a function"):
        call(3, 1, name="f", isolated=True)
    namespace = {}
    exec("def made(n):\n    return n", namespace)
    with pytest.raises(GradingError, match="the source code of made cannot be read"):
        run_isolated(namespace["made"], 1)


def test_an_endless_function_times_out(learner):
    m = learner("def forever(n):\n    while True:\n        pass\n")
    with pytest.raises(GradingError, match="took longer than 2 s"):
        run_isolated(m.forever, 1, timeout=2.0)


def test_a_process_that_dies_is_reported(learner):
    m = learner("import os\ndef die(n):\n    os._exit(3)\n")
    with pytest.raises(GradingError, match=r"did not finish properly \(exit status 3\)"):
        run_isolated(m.die, 1)


# ---- inside recheck ----------------------------------------------------------------------

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
    recheck(*[("check_close", (call(m.right, n, isolated=True), 2 * n, f"right({n})"))
              for n in range(5)])
    with pytest.raises(AssertionError) as info:
        recheck(("check_close", (call(m.right, 1, isolated=True), 2, "right(1)")),
                ("check_close", (call(m.wrong, 1, isolated=True), 2, "wrong(1)")),
                ("check_close", (call(m.shortcut, 1, isolated=True), 2, "shortcut(1)")))
    # every failing check is listed, the first one first
    assert str(info.value).startswith("wrong(1) is 3.0, expected 2.0")
    assert str(info.value).endswith("\n\nThis cell has 1 more failing check:\n"
                                    f"- shortcut(1) raised ImportError: {NO_PACKAGE} (your code "
                                    f"uses cl, which is the collectives package){ADVICE}")
    with pytest.raises(AssertionError) as info:
        recheck(("check_close", (call(m.right, 1, isolated=True), 2, "right(1)")),
                ("check_close", (call(m.shortcut, 1, isolated=True), 2, "shortcut(1)")),
                ("check_close", (call(m.wrong, 1, isolated=True), 2, "wrong(1)")))
    assert str(info.value).startswith(f"shortcut(1) raised ImportError: {NO_PACKAGE}")


def test_kernel_tampering_does_not_reach_either_process(learner, monkeypatch):
    m = learner("def wrong(n):\n    return 0\n")
    monkeypatch.setattr(math, "isclose", lambda *args, **kwargs: True)
    monkeypatch.setattr(cl.grading.slices, "slice_diameter", lambda *args: 0)
    with pytest.raises(AssertionError, match=r"wrong\(16\) is 0.0, expected 16.0"):
        recheck(("check_reference", (call(m.wrong, 16, isolated=True), "wrong(16)",
                                     "grading.slice_diameter", ((16, 16), (True, True)))))


def test_failures_survive_the_trip_to_the_re_check():
    failure = isolation.IsolatedFailure("f(1) raised ValueError: no")
    back = decode(encode([failure, 1]))
    assert isinstance(back[0], isolation.IsolatedFailure) and back[0].message == failure.message
    assert isolation.contains_failure({"a": [(1, back[0])]}) is back[0]


def test_functions_defined_in_ipython_cells_are_re_run():
    """As in a notebook: the source comes from IPython's cache of its cells."""
    script = textwrap.dedent('''
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
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == str(8 + 10 + 27)
    assert lines[1].startswith(f"cheat((4,), (True,)) raised ImportError: {NO_PACKAGE}")


# ---- check_shape -------------------------------------------------------------------------

def test_check_shape():
    assert check_shape((8, 16), "s", expected=(8, 16)) == (8, 16)
    assert check_shape([np.int64(1), 16], "s", expected=(1, 16)) == (1, 16)
    assert check_shape(np.array([4, 4]), "s", expected=[4, 4]) == (4, 4)
    for value, text in [((8.0, 16), r"s\[0\] is a float \(8.0\); expected an int \(use // "),
                        ("8x16", "s should be a tuple of ints such as (8, 16), but it is the "
                                 "string '8x16'"),
                        ((True, 16), r"s\[0\] is a bool \(True\); expected an int"),
                        (None, "s should be a tuple of ints")]:
        with pytest.raises(GradingError, match=text.replace("(8, 16)", r"\(8, 16\)")):
            check_shape(value, "s", expected=(8, 16))
    with pytest.raises(AssertionError, match=r"^s is \(4, 4\), but the answer is \(1, 16\)$"):
        check_shape((4, 4), "s", reference="grading.best_v5e_slice_shape", args=(16, 1e8))
    with pytest.raises(AssertionError, match=r"is \(3, 3\), but the answer is \(1, 1\)"):
        recheck(("check_shape", ((3, 3), "s"), {"expected": (1, 1)}))


# ---- the references of the notebook on TPU slices ----------------------------------------

A, B = 1e-6, 4.5e10        # v5e: seconds per step, bytes/s per link direction


def test_slice_references_against_hand_derived_values():
    assert slices.slice_hops((16, 16), (True, True), (0, 0), (15, 15)) == 2     # 1 + 1
    assert slices.slice_hops((16, 16), (False, False), (0, 0), (15, 15)) == 30  # 15 + 15
    assert slices.slice_hops((16, 20, 28), (True,) * 3, (3, 19, 1), (12, 2, 27)) == 7 + 3 + 2
    assert slices.slice_diameter((16, 20, 28), (True, False, True)) == 8 + 19 + 14
    # (16, 12), wraparound on the 16 only: across it 12 lines x 2 links, across the 12 16 x 1
    assert slices.slice_bisection_bandwidth((16, 12), (True, False), 1e9) == 16e9
    # along the 8-chip chain of an 8 x 16 v5e slice: 7 steps of alpha + S/(8B)
    assert slices.v5e_axis_seconds((8, 16), 0, 2**20) == pytest.approx(
        7 * (A + 2**20 / (8 * B)), rel=1e-12)
    # along its 16-chip ring: 15 steps of alpha + S/(32B)
    assert slices.v5e_axis_seconds((8, 16), 1, 2**20) == pytest.approx(
        15 * (A + 2**20 / (32 * B)), rel=1e-12)
    assert slices.v5e_axis_seconds((16, 16), 0, 1e8, "all_reduce") == pytest.approx(
        2 * 15 * (A + 1e8 / (32 * B)), rel=1e-12)


@pytest.mark.parametrize("n, nbytes, shape", [
    # 16 chips: (4, 4) chains: all-gather 3(a + S/(16B)) + 3(a + S/(4B)), doubled: 12a + 1.875 S/B;
    # (1, 16) ring: 2 x 15(a + S/(32B)) = 30a + 0.9375 S/B; (2, 8): 16a + 1.875 S/B.
    # They cross at S = 18a / (0.9375/B) = 864 kB
    (16, 1e4, (4, 4)), (16, 8e5, (4, 4)), (16, 9e5, (1, 16)), (16, 1e8, (1, 16)),
    (1, 1e6, (1, 1)), (8, 1e6, (2, 4)), (256, 1e6, (16, 16)),
])
def test_best_v5e_slice_shape(n, nbytes, shape):
    assert slices.best_v5e_slice_shape(n, nbytes) == shape
    closed = {s: min(2 * (_axis(s[a], nbytes / s[b]) + _axis(s[b], nbytes))
                     for a, b in ((0, 1), (1, 0)))
              for s in slices.V5E_SHAPES if s[0] * s[1] == n}
    assert min(closed, key=closed.get) == shape
    for s, seconds in closed.items():
        assert slices.v5e_all_reduce_seconds(s, nbytes) == pytest.approx(seconds, rel=1e-12)


def _axis(m, nbytes):
    """One v5e axis's all-gather: a bidirectional ring on 16 chips, a chain otherwise."""
    return 0.0 if m == 1 else (m - 1) * (A + nbytes / (m * B * (2 if m == 16 else 1)))


@pytest.mark.parametrize("case, answer", [
    # many small gathers: the 2-chip chain has 1 step where the ring has 15
    ((2, 1e5, 1e4, 100), "data"),
    # one small gather, a small gradient: the gradient's 2 x 15 steps cost more on the ring
    ((2, 1e5, 1e4, 1), "model"),
    ((8, 1e9, 1e8, 4), "data"),
    ((4, 1e7, 1e8, 4), "model"),
])
def test_wrapped_axis_for(case, answer):
    k, grad, gather, n = case
    assert slices.wrapped_axis_for(*case) == answer
    data = 2 * _axis(16, grad) + n * _axis(k, gather)
    model = 2 * _axis(k, grad) + n * _axis(16, gather)
    assert ("data" if data < model else "model") == answer


def test_a_question_without_a_clear_answer_is_a_bug_in_the_test():
    with pytest.raises(GradingError, match="no v5e slice has 24 chips"):
        slices.best_v5e_slice_shape(24, 1e6)
    # (1, 16) and (16, 1) never both appear; (2, 2) alone for 4 chips beats (1, 4): no tie
    assert slices.best_v5e_slice_shape(4, 1e6) == (2, 2)


# ---- part of the package allowed (call(..., allow=..., forbid=...)) ----------------------

TOOLS = ("collectives.Schedule", "collectives.verify", "collectives.topology.ring")
ONLY_TOOLS = ("here you may use only collectives.Schedule, collectives.topology.ring, "
              "collectives.verify; use the rest in scratch cells to check your answers")
RING_SCHEDULE = """
def ring(n):
    return [[(r, (r + 1) % n, (r - k) % n, (r - k) % n, "copy") for r in range(n)]
            for k in range(n - 1)]
"""


def test_the_parts_a_task_allows_work(learner):
    m = learner("import collectives as cl\nfrom collectives.topology import ring as topo\n"
                + RING_SCHEDULE + """
def mine(n):
    schedule = cl.Schedule("all_gather", n, n, ring(n))
    cl.verify(schedule)
    return len(schedule.to_lists()), topo(n, 1e9).n_links

def inner(n):
    import collectives
    from collectives.topology import ring as r
    return collectives.verify(collectives.Schedule("all_gather", n, n, ring(n))), r(n, 1.0).n_ranks
""")
    assert run_isolated(m.mine, 4, allow=TOOLS) == (3, 8)
    assert run_isolated(m.inner, 5, allow=TOOLS) == (None, 5)


@pytest.mark.parametrize("code, forbidden", [
    ("import collectives as cl\ndef f(n):\n    return cl.algorithms.ring_all_gather(n)",
     "collectives.algorithms"),
    ("from collectives.algorithms import ring_all_gather\ndef f(n):\n"
     "    return ring_all_gather(n)",
     "collectives.algorithms.ring.ring_all_gather is forbidden in this task (your code uses "
     "ring_all_gather)"),
    ("def f(n):\n    from collectives.algorithms import ring_all_gather\n"
     "    return ring_all_gather(n)", "collectives.algorithms"),
    ("def f(n):\n    import collectives.analytic\n"
     "    return collectives.analytic.ring_all_gather(n, 1, 1.0, 1.0)", "collectives.analytic"),
    ("import importlib\ndef f(n):\n    return importlib.import_module('collectives.analytic')",
     "collectives.analytic"),
    ("import collectives as cl\ndef f(n):\n    return cl.busbw('all_gather', 1, 1.0, n)",
     "collectives.busbw"),
    ("import collectives as cl\ndef f(n):\n    return cl.grading.schedule_seconds('ring', n, 1)",
     "collectives.grading"),
    ("import collectives as cl\ndef f(n):\n    return cl.topology.torus((n,), 1.0)",
     "collectives.topology.torus"),
    ("def f(n):\n    return __import__('collectives').time", "collectives.time"),
    ("import collectives as cl\ndef f(n):\n    cl.verify = None\n    return 1",
     "collectives.verify"),
])
def test_every_ordinary_way_to_a_forbidden_name_is_refused_and_named(learner, code, forbidden):
    m = learner(code)
    message = refusal(lambda: run_isolated(m.f, 4, allow=TOOLS))
    if "is forbidden" not in forbidden:
        forbidden += " is forbidden in this task"
    assert message == (f"f(4) raised ImportError: {forbidden}: write that part yourself "
                       f"({ONLY_TOOLS})")


def test_forbid_alone_refuses_only_those_names(learner):
    m = learner("import collectives as cl\n" + RING_SCHEDULE + """
def mine(n):
    return cl.busbw("all_gather", 8 * n, 1.0, n), cl.verify(cl.Schedule("all_gather", n, n,
                                                                     ring(n)))

def cheat(n):
    return cl.algorithms.ring_all_gather(n)

def cheat_elsewhere(n):
    from collectives.algorithms.ring import ring_all_gather
    return ring_all_gather(n)
""")
    forbid = ("collectives.algorithms.ring_all_gather",)
    # busbw = algbw (n-1)/n = (8n bytes / 1 s) (n-1)/n = 32 x 3/4 = 24 for n = 4
    assert run_isolated(m.mine, 4, forbid=forbid) == (24.0, None)
    why = ("write that part yourself (the task forbids collectives.algorithms.ring_all_gather; "
           "use them in scratch cells to check your answers)")
    assert refusal(lambda: run_isolated(m.cheat, 4, forbid=forbid)) == (
        "cheat(4) raised ImportError: collectives.algorithms.ring_all_gather is forbidden in "
        f"this task: {why}")
    assert refusal(lambda: run_isolated(m.cheat_elsewhere, 4, forbid=forbid)) == (
        "cheat_elsewhere(4) raised ImportError: collectives.algorithms.ring.ring_all_gather is "
        f"forbidden in this task: {why}")


def test_a_forbidden_name_inside_an_allowed_module_is_refused(learner):
    m = learner("import collectives as cl\ndef f(n):\n    return cl.topology.ring(n, 1.0).n_links"
                "\ndef g(n):\n    return cl.topology.torus((n, n), 1.0).n_links")
    rules = dict(allow=("collectives.topology",), forbid=("collectives.topology.ring",))
    assert run_isolated(m.g, 3, **rules) == 36
    assert "collectives.topology.ring is forbidden" in refusal(lambda: run_isolated(m.f, 3,
                                                                                    **rules))


def test_calls_with_different_rules_in_one_recheck(learner):
    m = learner("import collectives as cl\ndef f(n):\n    return cl.busbw('all_gather', n, 1.0, 2)")
    with pytest.raises(AssertionError) as info:
        recheck(("check_close", (call(m.f, 4, isolated=True, allow=("collectives.busbw",)), 2.0,
                                 "allowed")),
                ("check_close", (call(m.f, 4, isolated=True), 2.0, "whole package refused")))
    assert str(info.value).startswith(f"f(4) raised ImportError: {NO_PACKAGE}")


@pytest.mark.parametrize("rules, message", [
    (dict(allow="collectives.Schedule"), "allow must be a tuple of dotted names"),
    (dict(allow=("Schedule",)), "allow: 'Schedule' is not a dotted name inside collectives"),
    (dict(forbid=("collectives.no_such_thing",)),
     "forbid: collectives has no 'collectives.no_such_thing'"),
])
def test_bad_rules_are_a_bug_in_the_test(learner, rules, message):
    m = learner("def f(n):\n    return n\n")
    with pytest.raises(GradingError, match=re.escape(message)):
        call(m.f, 1, isolated=True, **rules)


def test_rules_need_the_isolated_re_run(learner):
    m = learner("def f(n):\n    return n\n")
    with pytest.raises(GradingError, match=r"needs isolated=True"):
        call(m.f, 1, allow=TOOLS)


# ---- nothing imported from a writable directory -----------------------------------------

PLANTED_NUMPY = '''
import math, os, sys
math.isclose = lambda *args, **kwargs: True          # every wrong answer would pass
with open({marker!r}, "w") as f:
    f.write("planted numpy imported")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(__file__)]
del sys.modules["numpy"]
import numpy                                          # the real one, for what follows
'''


def plant(directory, marker, package=True):
    (directory / "numpy.py").write_text(PLANTED_NUMPY.format(marker=str(marker)))
    if not package:
        return
    fake = directory / "collectives" / "grading"
    fake.mkdir(parents=True, exist_ok=True)
    (directory / "collectives" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('planted collectives imported')\n")
    (fake / "__init__.py").write_text("")


def test_modules_planted_where_the_re_checks_could_look_are_never_imported(
        learner, tmp_path, monkeypatch):
    """A numpy.py (patching math.isclose) and a collectives/ planted in the working
    directory, the notebook's directory and the folder above the package (the repository
    root, in an editable install: a stand-in here, a copy of that layout)."""
    from collectives.grading import recheck as recheck_module   # noqa: F401 (the function)
    module = sys.modules["collectives.grading.recheck"]
    marker = tmp_path / "marker"
    root = tmp_path / "repository"
    root.mkdir()
    shutil.copytree(module.PACKAGE_DIR, root / "collectives",
                    ignore=shutil.ignore_patterns("__pycache__"))
    plant(root, marker, package=False)
    work = tmp_path / "work"
    work.mkdir()
    plant(work, marker)
    monkeypatch.chdir(work)
    monkeypatch.setattr(module, "PACKAGE_DIR", str(root / "collectives"))
    monkeypatch.setattr(module, "_COPIES", {})
    m = learner("import numpy as np\ndef wrong(n):\n    return float(np.float64(n + 1))\n"
                "def where(n):\n    import numpy\n    return numpy.__file__\n")
    plant(tmp_path, marker)                        # the notebook's directory (the learner's)
    with pytest.raises(AssertionError, match=r"wrong\(1\) is 2.0, expected 1.0"):
        recheck(("check_close", (call(m.wrong, 1, isolated=True), 1.0, "wrong(1)")))
    with pytest.raises(AssertionError, match=r"wrong\(1\) is 2.0, expected 1.0"):
        recheck(("check_close", (call(m.wrong, 1, isolated=True, allow=TOOLS), 1.0, "wrong(1)")))
    assert "site-packages" in run_isolated(m.where, 0, allow=TOOLS)
    assert not marker.exists()
    copy = module._COPIES[str(root / "collectives")][0]
    assert os.listdir(copy) == ["collectives"]
    assert os.stat(copy).st_mode & 0o222 == 0                 # read-only (root may still write)


def test_the_grading_copy_is_replaced_when_it_is_changed(tmp_path, monkeypatch):
    module = sys.modules["collectives.grading.recheck"]
    monkeypatch.setattr(module, "_COPIES", {})
    first = module.package_copy()
    target = os.path.join(first, "collectives", "analytic.py")
    os.chmod(os.path.join(first, "collectives"), 0o755)
    os.chmod(target, 0o644)
    with open(target, "a") as f:
        f.write("\nring_all_gather = None\n")
    second = module.package_copy()
    assert second != first and not os.path.exists(first)
    assert module.manifest(os.path.join(second, "collectives"))["analytic.py"] == \
        module.manifest(module.PACKAGE_DIR)["analytic.py"]


def test_failed_rechecks_show_no_grader_file_in_the_traceback():
    """As in a notebook: IPython's traceback of a failing hidden test names none of the
    grader's files (its frames are hidden; the error is raised from compiled code)."""
    script = textwrap.dedent('''
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("import collectives.grading as _grading\\n"
                       "_grading.recheck(('check_close', (1.0, 2.0, 'x')), "
                       "('check_close', (3.0, 2.0, 'y')))")
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    shown = proc.stdout + proc.stderr
    assert "x is 1.0, expected 2.0" in shown and "- y is 3.0, expected 2.0" in shown, shown
    assert "collectives/grading" not in shown and "recheck.py" not in shown, shown


# ---- a wheel install: the package in site-packages beside numpy ---------------------------

@pytest.fixture
def wheel_layout_python(tmp_path):
    """A Python whose site-packages holds the package beside numpy, as ``pip install
    collectives-*.whl`` leaves it (numpy linked in from this environment, the package copied)."""
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    site = site.stdout.strip()
    numpy_dir = os.path.dirname(np.__file__)
    for name in os.listdir(os.path.dirname(numpy_dir)):
        if name == "numpy" or name.startswith("numpy.") or name.startswith("numpy-"):
            os.symlink(os.path.join(os.path.dirname(numpy_dir), name), os.path.join(site, name))
    shutil.copytree(os.path.dirname(cl.__file__), os.path.join(site, "collectives"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(python)


def test_numpy_is_importable_and_the_package_is_not_when_both_are_in_site_packages(
        learner, wheel_layout_python, monkeypatch):
    """The learner's process blocks the package, not the environment: with a wheel install,
    site-packages holds both, and it stays on sys.path (numpy imports) while the package is
    refused by the finder."""
    check = subprocess.run([wheel_layout_python, "-I", "-c",
                            "import collectives, numpy; print(collectives.__file__)"],
                           capture_output=True, text=True, check=True)
    assert "site-packages" in check.stdout          # the layout is what a wheel leaves
    m = learner("""
        import numpy as np

        def total(n):
            return int(np.arange(n).sum()), float(np.random.default_rng(0).random() < 1)

        def cheat(n):
            import collectives
            return collectives.__file__
    """)
    monkeypatch.setattr(sys, "executable", wheel_layout_python)
    assert run_isolated(m.total, 5) == (10, 1.0)
    message = refusal(lambda: run_isolated(m.cheat, 4))
    assert message == f"cheat(4) raised ImportError: {NO_PACKAGE} (your code imports " \
                      f"'collectives'){ADVICE}"
