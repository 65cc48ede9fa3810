"""collectives.grading (its __init__): the names the notebooks call, the map of the package, and
the tamper resistance of ``importlib.reload(collectives.grading)``.
"""

import ast
import importlib
import inspect
import subprocess
import sys
import types
from pathlib import Path

import collectives.grading
import collectives.grading as grading

from .helpers import message

GRADING_DIR = Path(grading.__file__).parent
#: the modules of the grading package a reload does not execute again (MODULES says why)
NOT_RELOADED = {
    "isolation.learner_process",
    "learner_process",
    "sandbox",
    "classroom",
    "precheck",
    "collective_tasks",
    "processes",
    # the learner's self-check command and its model answers: never imported by a
    # notebook's cells or the package (python -m collectives.grading.selfcheck)
    "selfcheck",
    "model_answers",
}


def test_reloading_the_package_restores_every_function_of_its_modules():
    """The hidden tests' ``_grading = importlib.reload(collectives.grading)`` undoes a
    notebook's patches inside the package's modules too, and a rebound module attribute."""
    modules = {
        name: sys.modules[f"collectives.grading.{name}"]
        for name in ("checks", "diagnosis", "recheck")
    }

    def always_pass(*args, **kwargs):
        return None

    wrong_steps = [[(r, 0, r, r) for r in range(1, 4)]]
    try:
        collectives.grading.diagnosis.check_schedule = always_pass
        collectives.grading.check_schedule = always_pass
        modules["checks"].check_close = always_pass
        modules["checks"]._compare = always_pass
        modules["diagnosis"].numeric_check = always_pass
        modules["recheck"].recheck = always_pass
        modules["recheck"].RECHECKABLE["check_close"] = always_pass
        collectives.grading.checks = always_pass  # its name starts with "check"
        collectives.grading.recheck = always_pass

        _grading = importlib.reload(collectives.grading)

        assert _grading is grading
        assert _grading.checks is modules["checks"]
        assert _grading.diagnosis is modules["diagnosis"]
        for name in _grading.__all__:
            assert getattr(_grading, name) is not always_pass, name
        for module in modules.values():
            patched = [name for name, value in vars(module).items() if value is always_pass]
            assert not patched, (module.__name__, patched)
        assert _grading.recheck is modules["recheck"].recheck
        assert modules["recheck"].RECHECKABLE["check_close"] is _grading.check_close
        assert message(
            _grading.check_schedule, wrong_steps, "all_gather", 4, neighbours="ring"
        ).startswith("your schedule: step 0 sends from rank 1")
        assert message(_grading.check_close, 2.0, 1.0, "x").startswith("x is 2.0")
        assert message(_grading.recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")
    finally:
        importlib.reload(collectives.grading)


def test_the_module_docstring_states_its_limits():
    doc = grading.__doc__
    for phrase in (
        "This defends against",
        "It does not defend against",
        "sys.executable -I",
        "importlib.reload",
        "input or AST transformers",
        "container or VM",
    ):
        assert phrase in doc


def _module_names():
    """Every module of the grading package, as ``MODULES`` names them (``"isolation.calls"``)."""
    names = []
    for path in sorted(GRADING_DIR.rglob("*.py")):
        parts = path.relative_to(GRADING_DIR).with_suffix("").parts
        if parts == ("__init__",):
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_of_the_package_is_reloaded_after_those_it_imports():
    """A new module must be listed in MODULES (or it would keep a notebook's patches across the
    hidden tests' reload), after every module of the package it imports."""
    found = set(_module_names())
    assert found == set(grading.MODULES) | NOT_RELOADED, (
        sorted(found - set(grading.MODULES) - NOT_RELOADED),
        sorted(set(grading.MODULES) - found),
    )
    order = {name: i for i, name in enumerate(grading.MODULES)}
    for name in grading.MODULES:
        path = GRADING_DIR.joinpath(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        package = ("collectives.grading." + name).rsplit(
            ".", 0 if path.name == "__init__.py" else 1
        )[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            targets = (
                [f"{base}.{node.module}"]
                if node.module
                else [f"{base}.{a.name}" for a in node.names]
            )
            for target in targets:
                inner = target.removeprefix("collectives.grading.")
                if target.startswith("collectives.grading.") and inner in order:
                    assert order[inner] < order[name], (name, "imports", inner)


def test_a_reload_restores_every_function_and_class_of_every_module():
    """As a notebook could: every function and class of every module of the package (the new
    modules and the compatibility ones), and every module's binding in its package, rebound;
    one reload undoes all of it."""

    def always_pass(*args, **kwargs):
        return None

    modules = {name: sys.modules[f"collectives.grading.{name}"] for name in grading.MODULES}
    patched = []
    try:
        for name, module in modules.items():
            for attr, value in list(vars(module).items()):
                if (inspect.isfunction(value) or inspect.isclass(value)) and not attr.startswith(
                    "__"
                ):
                    setattr(module, attr, always_pass)
                    patched.append((name, attr))
            parent, _, last = f"collectives.grading.{name}".rpartition(".")
            setattr(sys.modules[parent], last, always_pass)
        assert len(patched) > 300  # the test reaches every module

        _grading = importlib.reload(collectives.grading)

        for name, module in modules.items():
            assert sys.modules[f"collectives.grading.{name}"] is module
            parent, _, last = f"collectives.grading.{name}".rpartition(".")
            if name != "recheck":  # the package's recheck is the function
                assert getattr(sys.modules[parent], last) is module, name
            left = [attr for attr, value in vars(module).items() if value is always_pass]
            assert not left, (name, left)
        for name in _grading.__all__:
            assert getattr(_grading, name) is not always_pass, name
        # the old names are the new modules' objects again
        assert (
            _grading.clusters.check_placement is _grading.tasks.cluster_collectives.check_placement
        )
        assert _grading.isolation.resolve is _grading.isolation.calls.resolve
        assert sys.modules["collectives.grading.recheck"].encode is _grading.isolation.calls.encode
        assert _grading.recheck is _grading.isolation.orchestrator.recheck
        assert message(_grading.recheck, ("check_close", (2.0, 1.0, "x"))).startswith("x is 2.0")
    finally:
        importlib.reload(collectives.grading)


def test_the_old_module_paths_still_work():
    """Released notebooks import these; each is the new module's objects under the old name."""
    import collectives.grading.learner_process as old_learner_process

    # a reload of the package leaves these two as they are (MODULES): fresh, as a notebook
    # importing them gets them, they hold the task modules' objects
    collective_tasks, processes = (
        importlib.reload(importlib.import_module(f"collectives.grading.{name}"))
        for name in ("collective_tasks", "processes")
    )
    from collectives.grading import clusters, fp8_tasks, isolation, plan_tasks, slices, tasks

    pairs = [
        (slices, tasks.topology_reasoning),
        (clusters, tasks.cluster_collectives),
        (fp8_tasks, tasks.fp8),
        (plan_tasks, tasks.planning),
        (processes, tasks.real_processes),
        (old_learner_process, isolation.learner_process),
    ]
    for old, new in pairs:
        assert old.__all__ == new.__all__, old.__name__
        for name in new.__all__:
            assert getattr(old, name) is getattr(new, name), (old.__name__, name)
    for new in (tasks.all_reduce, tasks.all_to_all, tasks.cost_models):
        for name in new.__all__:
            assert getattr(collective_tasks, name) is getattr(new, name), name
    recheck_module = sys.modules["collectives.grading.recheck"]  # the attribute: the function
    for name in ("recheck", "RECHECKABLE", "isolated_main"):
        assert getattr(recheck_module, name) is getattr(isolation.orchestrator, name)
    for name in ("encode", "decode"):
        assert getattr(recheck_module, name) is getattr(isolation.calls, name)
    for name in ("package_copy", "manifest", "PACKAGE_DIR"):
        assert getattr(recheck_module, name) is getattr(isolation.snapshot, name)
    for name in (
        "NO_PACKAGE",
        "FORBIDDEN",
        "SCHEDULE_TOOLS",
        "IsolatedCall",
        "IsolatedFailure",
        "bundle",
        "isolated_call",
        "run_calls",
        "run_isolated",
        "resolve",
        "policy",
        "LEARNER_PROCESS",
        "contains_failure",
    ):
        assert hasattr(isolation, name), name
    assert grading.call is isolation.calls.call and grading.recheck is isolation.recheck


def test_the_package_never_imports_the_instructors_tools():
    """collectives.grading, and every module it loads, imports no collectives_grader (nor
    jupyter_client or nbgrader): graded code's copy of the package does not hold them."""
    code = (
        "import sys, collectives, collectives.grading; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('collectives_grader', 'jupyter_client', 'nbgrader')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
    loaded = set(grading.MODULES)
    assert not loaded & {"sandbox", "classroom", "precheck"}


def test_every_module_says_what_it_is_for_and_lists_its_names():
    for name in ["", *_module_names()]:
        module = importlib.import_module("collectives.grading" + (f".{name}" if name else ""))
        assert isinstance(module, types.ModuleType)
        assert module.__doc__ and len(module.__doc__.split()) >= 12, name
        assert isinstance(module.__all__, list), name
        for attr in module.__all__:
            assert hasattr(module, attr), (name, attr)


def test_the_map_names_every_part_of_the_package():
    doc = grading.__doc__
    for part in (
        "``checks``",
        "``diagnosis``",
        "``isolation/``",
        "``tasks/<assignment>``",
        "collectives_grader",
    ):
        assert part in doc, part
