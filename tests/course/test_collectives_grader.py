"""collectives_grader: the instructor's tools (sandbox, class grading, prechecks) as a package
of their own, outside the ``collectives`` package that graded code imports.

Checked here: both command names work (``python -m collectives_grader.<tool>`` and the earlier
``python -m collectives.grading.<tool>``), the old imports are the new objects, jupyter_client
finds the provisioner by its entry point, nothing in ``collectives`` imports the tools (but the
three compatibility modules), the package copy graded code sees does not hold them, the
wheel ships them, and SandboxError is in the package's one error hierarchy. The tools
themselves are tested in test_grading_sandbox.py, test_grading_classroom.py and
test_grading_postgres.py.
"""

import ast
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import tomllib
from setuptools import find_packages

import collectives
import collectives_grader
from collectives.errors import CollectivesError, SandboxError
from collectives_grader import classroom, precheck, sandbox

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(collectives.__file__).parent
#: the modules of collectives that may import collectives_grader: the compatibility modules
SHIMS = {"grading/sandbox.py", "grading/classroom.py", "grading/precheck.py"}


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module", ["collectives_grader.sandbox", "collectives.grading.sandbox"])
def test_the_sandbox_command_runs_under_both_names(module):
    proc = run("-m", module)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "usage: python -m collectives_grader.sandbox install|check"


@pytest.mark.parametrize(
    "module", ["collectives_grader.classroom", "collectives.grading.classroom"]
)
def test_the_class_grading_command_runs_under_both_names(module):
    proc = run("-m", module, "status", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m collectives_grader.classroom status")


def test_the_old_imports_are_the_new_objects():
    import collectives.grading.classroom as old_classroom
    import collectives.grading.precheck as old_precheck
    import collectives.grading.sandbox as old_sandbox

    for old, new in ((old_sandbox, sandbox), (old_classroom, classroom), (old_precheck, precheck)):
        assert old.__all__ == new.__all__
        for name in new.__all__:
            assert getattr(old, name) is getattr(new, name), (new.__name__, name)


def test_jupyter_client_finds_the_provisioner_by_its_entry_point():
    found = [
        e
        for e in entry_points(group="jupyter_client.kernel_provisioners")
        if e.name == sandbox.KERNEL_NAME
    ]
    assert len(found) == 1 and found[0].value == "collectives_grader.sandbox:SandboxProvisioner"
    assert found[0].load() is sandbox.SandboxProvisioner


def test_collectives_never_imports_the_tools():
    """Only the three compatibility modules name collectives_grader; nothing imports those
    (tests/package/grading/test_init.py checks that collectives.grading loads none of them)."""
    importers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(n.split(".")[0] == "collectives_grader" for n in names):
                importers.add(path.relative_to(PACKAGE).as_posix())
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 1
                and path.parent.name == "grading"
                and any(a.name in ("sandbox", "classroom", "precheck") for a in node.names)
            ):
                importers.add(f"{path.relative_to(PACKAGE).as_posix()} (imports a shim)")
    assert importers == SHIMS


def test_the_package_copy_graded_code_sees_holds_no_tool():
    snap = sandbox.PackageSnapshot()
    try:
        assert [p.name for p in snap.root.iterdir()] == ["collectives"]
        assert not any("collectives_grader" in path for path in snap.manifest)
        assert set(snap.sources) == {
            p.relative_to(PACKAGE).as_posix()
            for p in PACKAGE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        }
        snap.verify()
        assert snap.error is SandboxError
    finally:
        snap.remove()


def test_the_wheel_ships_the_tools_and_every_grading_subpackage():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    found = set(find_packages(str(REPO), include=include))
    assert {
        "collectives_grader",
        "collectives",
        "collectives.grading",
        "collectives.grading.isolation",
        "collectives.grading.tasks",
    } <= found
    assert Path(collectives_grader.__file__).parent.parent == PACKAGE.parent  # beside it


def test_sandbox_error_is_in_the_one_hierarchy():
    assert sandbox.SandboxError is SandboxError
    assert issubclass(SandboxError, CollectivesError) and issubclass(SandboxError, RuntimeError)
    assert "SandboxError" in collectives.errors.__all__
