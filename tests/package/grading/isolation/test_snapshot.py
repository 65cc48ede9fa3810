"""collectives.grading.isolation.snapshot: the read-only copy of the package the re-checks import,
never a module planted where a learner's code could write one.
"""

import os
import shutil

import pytest

from collectives import GradingError
from collectives.grading import call, recheck, run_isolated
from collectives.grading.isolation import snapshot

from ..helpers import TOOLS

# ---- nothing imported from a writable directory -----------------------------------------
PLANTED_NUMPY = """
import math, os, sys
math.isclose = lambda *args, **kwargs: True          # every wrong answer would pass
with open({marker!r}, "w") as f:
    f.write("planted numpy imported")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(__file__)]
del sys.modules["numpy"]
import numpy                                          # the real one, for what follows
"""


def plant(directory, marker, package=True):
    (directory / "numpy.py").write_text(PLANTED_NUMPY.format(marker=str(marker)))
    if not package:
        return
    fake = directory / "collectives" / "grading"
    fake.mkdir(parents=True, exist_ok=True)
    (directory / "collectives" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('planted collectives imported')\n"
    )
    (fake / "__init__.py").write_text("")


@pytest.mark.slow  # starts the isolated re-check's process
def test_modules_planted_where_the_re_checks_could_look_are_never_imported(
    learner, tmp_path, monkeypatch
):
    """A numpy.py (patching math.isclose) and a collectives/ planted in the working
    directory, the notebook's directory and the folder above the package (the repository
    root, in an editable install: a stand-in here, a copy of that layout)."""
    marker = tmp_path / "marker"
    root = tmp_path / "repository"
    root.mkdir()
    shutil.copytree(
        snapshot.PACKAGE_DIR, root / "collectives", ignore=shutil.ignore_patterns("__pycache__")
    )
    plant(root, marker, package=False)
    work = tmp_path / "work"
    work.mkdir()
    plant(work, marker)
    monkeypatch.chdir(work)
    monkeypatch.setattr(snapshot, "PACKAGE_DIR", str(root / "collectives"))
    monkeypatch.setattr(snapshot, "_COPIES", {})
    m = learner(
        "import numpy as np\ndef wrong(n):\n    return float(np.float64(n + 1))\n"
        "def where(n):\n    import numpy\n    return numpy.__file__\n"
    )
    plant(tmp_path, marker)  # the notebook's directory (the learner's)
    with pytest.raises(AssertionError, match=r"wrong\(1\) is 2.0, expected 1.0"):
        recheck(("check_close", (call(m.wrong, 1, isolated=True), 1.0, "wrong(1)")))
    with pytest.raises(AssertionError, match=r"wrong\(1\) is 2.0, expected 1.0"):
        recheck(("check_close", (call(m.wrong, 1, isolated=True, allow=TOOLS), 1.0, "wrong(1)")))
    assert "site-packages" in run_isolated(m.where, 0, allow=TOOLS)
    assert not marker.exists()
    copy = snapshot._COPIES[str(root / "collectives")].root
    assert os.listdir(copy) == ["collectives"]
    assert os.stat(copy).st_mode & 0o222 == 0  # read-only (root may still write)


@pytest.mark.slow  # starts the isolated re-check's process
def test_the_grading_copy_is_replaced_when_it_is_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "_COPIES", {})
    first = snapshot.package_copy()
    target = os.path.join(first, "collectives", "analytic.py")
    os.chmod(os.path.join(first, "collectives"), 0o755)
    os.chmod(target, 0o644)
    with open(target, "a") as f:
        f.write("\nring_all_gather = None\n")
    second = snapshot.package_copy()
    assert second != first and not os.path.exists(first)
    assert (
        snapshot.manifest(os.path.join(second, "collectives"))["analytic.py"]
        == snapshot.manifest(snapshot.PACKAGE_DIR)["analytic.py"]
    )


def _package(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (package / "sub" / "m.py").write_text("y = 2\n")
    (package / "sub" / "data.json").write_text("{}\n")
    return package


def test_a_snapshot_is_a_compiled_read_only_copy_of_the_package_alone(tmp_path):
    package = _package(tmp_path)
    snap = snapshot.PackageSnapshot(package)
    try:
        assert os.listdir(snap.root) == ["collectives"]
        copied = snapshot.sources(snap.copy)
        assert copied == snapshot.sources(package) == snap.sources
        assert set(copied) == {
            "__init__.py",
            os.path.join("sub", "m.py"),
            os.path.join("sub", "data.json"),
        }  # data files too
        compiled = [p for p in snap.manifest if p.endswith(".pyc")]
        assert len(compiled) == 2 and all("__pycache__" in p for p in compiled)
        for folder, _dirs, files in os.walk(snap.root):
            for name in [folder] + [os.path.join(folder, f) for f in files]:
                assert os.stat(name).st_mode & 0o222 == 0, name  # nothing writable
        assert snap.changes() == [] and snap.current()
        snap.verify()
    finally:
        snap.remove()
    assert not snap.root.exists()


def test_a_snapshot_names_what_changed_in_it_or_in_the_package(tmp_path):
    package = _package(tmp_path)
    snap = snapshot.PackageSnapshot(package)
    try:
        snap.copy.chmod(0o755)
        (snap.copy / "__init__.py").chmod(0o644)
        (snap.copy / "__init__.py").write_text("x = 2\n")
        (snap.copy / "planted.py").write_text("z = 0\n")
        assert snap.changes() == ["__init__.py", "planted.py"] and not snap.current()
        with pytest.raises(
            GradingError,
            match=r"copy of the collectives package changed "
            r"\(__init__.py\): refusing to grade with it",
        ):
            snap.verify()
        (snap.copy / "__init__.py").write_text("x = 1\n")
        (snap.copy / "planted.py").unlink()
        assert snap.changes() == [] and snap.current()
        (package / "sub" / "m.py").write_text("y = 3\n")  # the package moved on
        assert snap.changes() == [] and not snap.current()
        snap.root.chmod(0o755)
        (snap.root / "numpy.py").write_text("")  # beside the copy
        assert snap.changes() == [".."]
    finally:
        snap.remove()


def test_package_copy_reuses_its_copy_until_the_package_changes(tmp_path, monkeypatch):
    package = _package(tmp_path)
    monkeypatch.setattr(snapshot, "_COPIES", {})
    first = snapshot.package_copy(package)
    assert snapshot.package_copy(package) == first
    (package / "sub" / "m.py").write_text("y = 3\n")
    second = snapshot.package_copy(package)
    assert second != first and not os.path.exists(first)
    assert open(os.path.join(second, "collectives", "sub", "m.py")).read() == "y = 3\n"


class _StatvfsResult:
    def __init__(self, flags):
        self.f_flag = flags


def _mounts(read_only_paths):
    """An os.statvfs that reports the paths in ``read_only_paths`` on a read-only mount (a
    real one needs the grading sandbox: tests/course/test_grading_sandbox.py)."""
    real = os.statvfs

    def statvfs(path):
        flags = real(path).f_flag & ~os.ST_RDONLY
        if os.path.abspath(path) in read_only_paths:
            flags |= os.ST_RDONLY
        return _StatvfsResult(flags)

    return statvfs


def test_a_package_alone_on_a_read_only_mount_is_used_as_it_is(tmp_path, monkeypatch):
    root = tmp_path / "mount"
    root.mkdir()
    package = root / "collectives"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(snapshot, "_COPIES", {})
    read_only = {str(root), str(package)}
    monkeypatch.setattr(snapshot.os, "statvfs", _mounts(read_only))
    assert snapshot.read_only_copy(str(package)) == str(root)
    assert snapshot.package_copy(package) == str(root) and snapshot._COPIES == {}


@pytest.mark.parametrize("case", ["writable", "package_writable", "not_alone"])
def test_anything_else_is_copied(tmp_path, monkeypatch, case):
    root = tmp_path / "mount"
    root.mkdir()
    package = root / "collectives"
    package.mkdir()
    (package / "__init__.py").write_text("")
    read_only = {str(root), str(package)}
    if case == "writable":
        read_only = set()
    elif case == "package_writable":
        read_only = {str(root)}
    else:
        (root / "numpy.py").write_text("")  # something beside the package: not a copy
    monkeypatch.setattr(snapshot, "_COPIES", {})
    monkeypatch.setattr(snapshot.os, "statvfs", _mounts(read_only))
    assert snapshot.read_only_copy(str(package)) is None
    copy = snapshot.package_copy(package)
    assert copy != str(root) and os.listdir(copy) == ["collectives"]
