"""collectives.grading.isolation.learner_process: the learner's process, where the package cannot
be imported, or only the parts a task allows; a program that imports nothing of the package.

The learner's functions here live in small modules written to a temporary directory (a module
is what a notebook's namespace is to inspect.getsource). The pipeline test
(tests/course/test_grading_pipeline.py -k topology_reasoning) does the same end to end through
nbgrader.
"""

import ast
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import collectives as cl
import collectives.analytic
import collectives.grading
from collectives.grading import NO_PACKAGE, isolation, run_isolated

from ..helpers import ADVICE, ONLY_TOOLS, TOOLS, refusal


# ---- the package is refused --------------------------------------------------------------
@pytest.mark.parametrize(
    "code, why",
    [
        (
            "import collectives as cl\ndef f(n):\n    return cl.measures.diameter(n)",
            "your code uses cl, which is the collectives package",
        ),
        (
            "import collectives.measures as m\ndef f(n):\n    return m.diameter(n)",
            "your code uses m, which is the module collectives.measures",
        ),
        (
            "from collectives.measures import diameter\ndef f(n):\n    return diameter(n)",
            "your code uses diameter, which is collectives.measures.diameter",
        ),
        (
            "from collectives import Topology\ndef f(n):\n    return Topology",
            "your code uses Topology, which is collectives.topology.Topology",
        ),
        (
            "import collectives as cl\nRING = cl.topology.ring(4, 1.0)\ndef f(n):\n"
            "    return RING.n_ranks",
            "your code uses RING, a Topology from collectives.topology",
        ),
        (
            "def f(n):\n    import collectives\n    return collectives.measures",
            "your code imports 'collectives'",
        ),
        (
            "def f(n):\n    from collectives.measures import hops\n    return hops",
            "your code imports 'collectives'",
        ),
        (
            "import importlib\n"
            "def f(n):\n"
            "    return importlib.import_module('collectives.grading')",
            "your code imports 'collectives'",
        ),
        ("def f(n):\n    return __import__('collectives')", "your code imports 'collectives'"),
    ],
)
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
    # nor does the wire codec it loads by its path (tests/package/grading/isolation/test_wire.py)
    for path in (
        isolation.LEARNER_PROCESS,
        os.path.join(os.path.dirname(isolation.LEARNER_PROCESS), "wire.py"),
    ):
        tree = ast.parse(open(path).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and not (node.module or "").startswith("collectives")
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("collectives") for a in node.names)
    # the program runs from the package copy, and loads the wire beside it there
    from collectives.grading.isolation import calls, learner_process

    assert isolation.LEARNER_PROCESS.endswith(os.path.join(*calls.PROGRAM))
    assert os.path.dirname(learner_process.wire.__file__) == os.path.dirname(
        isolation.LEARNER_PROCESS
    )
    assert learner_process.wire.__name__ == "collectives_grading_wire"


RING_SCHEDULE = """
def ring(n):
    return [[(r, (r + 1) % n, (r - k) % n, (r - k) % n, "copy") for r in range(n)]
            for k in range(n - 1)]
"""


def test_the_parts_a_task_allows_work(learner):
    m = learner(
        "import collectives as cl\nfrom collectives.topology import ring as topo\n"
        + RING_SCHEDULE
        + """
def mine(n):
    schedule = cl.Schedule("all_gather", n, n, ring(n))
    cl.verify(schedule)
    return len(schedule.to_lists()), topo(n, 1e9).n_links

def inner(n):
    import collectives
    from collectives.topology import ring as r
    return collectives.verify(collectives.Schedule("all_gather", n, n, ring(n))), r(n, 1.0).n_ranks
"""
    )
    assert run_isolated(m.mine, 4, allow=TOOLS) == (3, 8)
    assert run_isolated(m.inner, 5, allow=TOOLS) == (None, 5)


@pytest.mark.parametrize(
    "code, forbidden",
    [
        (
            "import collectives as cl\ndef f(n):\n    return cl.algorithms.ring_all_gather(n)",
            "collectives.algorithms",
        ),
        (
            "from collectives.algorithms import ring_all_gather\ndef f(n):\n"
            "    return ring_all_gather(n)",
            "collectives.algorithms.ring.ring_all_gather is forbidden in this task (your code uses "
            "ring_all_gather)",
        ),
        (
            "def f(n):\n    from collectives.algorithms import ring_all_gather\n"
            "    return ring_all_gather(n)",
            "collectives.algorithms",
        ),
        (
            "def f(n):\n    import collectives.analytic\n"
            "    return collectives.analytic.ring_all_gather(n, 1, 1.0, 1.0)",
            "collectives.analytic",
        ),
        (
            "import importlib\n"
            "def f(n):\n"
            "    return importlib.import_module('collectives.analytic')",
            "collectives.analytic",
        ),
        (
            "import collectives as cl\ndef f(n):\n    return cl.busbw('all_gather', 1, 1.0, n)",
            "collectives.busbw",
        ),
        (
            "import collectives as cl\n"
            "def f(n):\n"
            "    return cl.grading.schedule_seconds('ring', n, 1)",
            "collectives.grading",
        ),
        (
            "import collectives as cl\ndef f(n):\n    return cl.topology.torus((n,), 1.0)",
            "collectives.topology.torus",
        ),
        ("def f(n):\n    return __import__('collectives').time", "collectives.time"),
        (
            "import collectives as cl\ndef f(n):\n    cl.verify = None\n    return 1",
            "collectives.verify",
        ),
    ],
)
def test_every_ordinary_way_to_a_forbidden_name_is_refused_and_named(learner, code, forbidden):
    m = learner(code)
    message = refusal(lambda: run_isolated(m.f, 4, allow=TOOLS))
    if "is forbidden" not in forbidden:
        forbidden += " is forbidden in this task"
    assert message == (
        f"f(4) raised ImportError: {forbidden}: write that part yourself ({ONLY_TOOLS})"
    )


def test_forbid_alone_refuses_only_those_names(learner):
    m = learner(
        "import collectives as cl\n"
        + RING_SCHEDULE
        + """
def mine(n):
    return cl.busbw("all_gather", 8 * n, 1.0, n), cl.verify(cl.Schedule("all_gather", n, n,
                                                                     ring(n)))

def cheat(n):
    return cl.algorithms.ring_all_gather(n)

def cheat_elsewhere(n):
    from collectives.algorithms.ring import ring_all_gather
    return ring_all_gather(n)
"""
    )
    forbid = ("collectives.algorithms.ring_all_gather",)
    # busbw = algbw (n-1)/n = (8n bytes / 1 s) (n-1)/n = 32 x 3/4 = 24 for n = 4
    assert run_isolated(m.mine, 4, forbid=forbid) == (24.0, None)
    why = (
        "write that part yourself (the task forbids collectives.algorithms.ring_all_gather; "
        "use them in scratch cells to check your answers)"
    )
    assert refusal(lambda: run_isolated(m.cheat, 4, forbid=forbid)) == (
        "cheat(4) raised ImportError: collectives.algorithms.ring_all_gather is forbidden in "
        f"this task: {why}"
    )
    assert refusal(lambda: run_isolated(m.cheat_elsewhere, 4, forbid=forbid)) == (
        "cheat_elsewhere(4) raised ImportError: collectives.algorithms.ring.ring_all_gather is "
        f"forbidden in this task: {why}"
    )


def test_a_forbidden_name_inside_an_allowed_module_is_refused(learner):
    m = learner(
        "import collectives as cl\ndef f(n):\n    return cl.topology.ring(n, 1.0).n_links"
        "\ndef g(n):\n    return cl.topology.torus((n, n), 1.0).n_links"
    )
    rules = dict(allow=("collectives.topology",), forbid=("collectives.topology.ring",))
    assert run_isolated(m.g, 3, **rules) == 36
    assert "collectives.topology.ring is forbidden" in refusal(
        lambda: run_isolated(m.f, 3, **rules)
    )


# ---- a wheel install: the package in site-packages beside numpy ---------------------------
@pytest.fixture
def wheel_layout_python(tmp_path):
    """A Python whose site-packages holds the package beside numpy, as ``pip install
    collectives-*.whl`` leaves it (numpy linked in from this environment, the package copied)."""
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    site = site.stdout.strip()
    numpy_dir = os.path.dirname(np.__file__)
    for name in os.listdir(os.path.dirname(numpy_dir)):
        if name == "numpy" or name.startswith("numpy.") or name.startswith("numpy-"):
            os.symlink(os.path.join(os.path.dirname(numpy_dir), name), os.path.join(site, name))
    shutil.copytree(
        os.path.dirname(cl.__file__),
        os.path.join(site, "collectives"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return str(python)


def test_numpy_is_importable_and_the_package_is_not_when_both_are_in_site_packages(
    learner, wheel_layout_python, monkeypatch
):
    """The learner's process blocks the package, not the environment: with a wheel install,
    site-packages holds both, and it stays on sys.path (numpy imports) while the package is
    refused by the finder."""
    check = subprocess.run(
        [wheel_layout_python, "-I", "-c", "import collectives, numpy; print(collectives.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "site-packages" in check.stdout  # the layout is what a wheel leaves
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
    assert (
        message == f"cheat(4) raised ImportError: {NO_PACKAGE} (your code imports "
        f"'collectives'){ADVICE}"
    )
