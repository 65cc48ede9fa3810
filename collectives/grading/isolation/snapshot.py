"""The read-only, hash-checked copy of the ``collectives`` package that graded code imports.

A learner's code can write files (a ``collectives/`` or ``numpy.py`` next to the notebook, in
the working directory, or in the folder above the package: the repository root, in an editable
install) and, in the kernel, change the package's modules. So the processes that grade never
import the package from where it is installed: they import it from a :class:`PackageSnapshot`,
a new temporary directory that holds ``collectives/`` and nothing else, copied from the
package's files (no compiled files), compiled there, made read-only, and hashed as made.

Two users: the isolated re-check and the learner's process (:func:`package_copy`: one copy per
process, hashed again before every use and replaced when anything in it, or in the package,
changed; none inside the grading sandbox, whose package already is a read-only copy), and the
grading sandbox (``collectives_grader.sandbox``: one copy per grading run, bound read-only into
every kernel, which refuses to start when the copy changed: :meth:`PackageSnapshot.verify`).
Only ``collectives/`` is copied: the instructor's tools (``collectives_grader``) are never in
it.

Left out: the copy is as good as the package it is made from (the package's own folder must
not be writable by learners' code), and a grader running as root can still write to it.
"""

import atexit
import compileall
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from ...errors import GradingError

__all__ = [
    "PACKAGE_DIR",
    "PackageSnapshot",
    "package_copy",
    "read_only_copy",
    "manifest",
    "sources",
]

#: the ``collectives`` package this module belongs to (its directory)
PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_COPIES: dict[str, "PackageSnapshot"] = {}  # package directory -> its snapshot (package_copy)


def manifest(directory):
    """{relative path: sha256} of every file under ``directory`` (compiled files included)."""
    found = {}
    for folder, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, directory)] = hashlib.sha256(f.read()).hexdigest()
    return found


def sources(directory):
    """The :func:`manifest` of a package's own files (no compiled files)."""
    return {
        k: v
        for k, v in manifest(directory).items()
        if "__pycache__" not in k.split(os.sep) and not k.endswith(".pyc")
    }


def _writable(root):
    for folder, _, _ in os.walk(root):
        os.chmod(folder, stat.S_IRWXU)


class PackageSnapshot:
    """A private, read-only copy of the package in ``package_dir`` (default: this one).

    :attr:`root` is a new temporary directory holding only ``collectives/``, the copy;
    :attr:`manifest` its hashes as made (compiled files included); :attr:`sources` those of
    the package's files when it was copied. :attr:`error` is the class of error
    :meth:`verify` raises (a subclass may name another, as the grading sandbox does)."""

    error: type[Exception] = GradingError

    def __init__(self, package_dir=PACKAGE_DIR):
        self.package_dir = Path(package_dir).resolve()
        self.sources = sources(self.package_dir)
        self.root = Path(tempfile.mkdtemp(prefix="collectives-package-"))
        copy = self.root / "collectives"
        shutil.copytree(
            self.package_dir, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        compileall.compile_dir(str(copy), quiet=2)
        for folder, _, files in os.walk(copy):
            for name in files:
                os.chmod(os.path.join(folder, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            os.chmod(
                folder,
                stat.S_IRUSR
                | stat.S_IXUSR
                | stat.S_IRGRP
                | stat.S_IXGRP
                | stat.S_IROTH
                | stat.S_IXOTH,
            )
        os.chmod(
            self.root,
            stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH,
        )
        if sources(copy) != self.sources:
            self.remove()
            raise self.error(
                "the grading copy of the collectives package differs from the "
                "package: it changed while being copied"
            )
        self.manifest = manifest(copy)

    @property
    def copy(self):
        """The copy's ``collectives/`` folder."""
        return self.root / "collectives"

    def changes(self):
        """The relative paths (sorted) of the files added, removed or changed in the copy
        since it was made, and ``..`` if anything but ``collectives/`` appeared beside it."""
        if not self.copy.is_dir():
            return ["collectives"]
        now = manifest(self.copy)
        changed = sorted(
            {
                path
                for path in set(now) | set(self.manifest)
                if now.get(path) != self.manifest.get(path)
            }
        )
        if os.listdir(self.root) != ["collectives"]:
            changed.append("..")
        return changed

    def current(self):
        """Whether the copy is unchanged and still equal to the package's files as they are."""
        return not self.changes() and sources(self.copy) == sources(self.package_dir)

    def verify(self):
        """Raise :attr:`error` naming the first changed file when the copy differs from what
        it was when made (the copy is what every process of a grading run imports)."""
        changed = self.changes()
        if changed:
            raise self.error(
                f"the grading copy of the collectives package changed "
                f"({changed[0]}): refusing to grade with it"
            )

    def remove(self):
        """Delete the copy (made writable first)."""
        if self.root.exists():
            _writable(self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def read_only_copy(package_dir):
    """The folder above ``package_dir`` when that folder already is what a copy would be: on
    a read-only mount, and holding the package's folder alone (as the grading sandbox binds
    its snapshot, ``collectives_grader.sandbox.PACKAGE_MOUNT``); else None. Nothing run in
    this process can change a read-only mount, so it needs neither a copy nor hashing (a
    reloaded ``collectives.grading`` would otherwise copy and compile the package again in
    every test cell)."""
    root = os.path.dirname(package_dir)
    try:
        read_only = all(os.statvfs(path).f_flag & os.ST_RDONLY for path in (root, package_dir))
        alone = os.listdir(root) == [os.path.basename(package_dir)]
    except OSError:
        return None
    return root if read_only and alone else None


def package_copy(package_dir=None):
    """The directory that holds this process's copy of the package (a :class:`PackageSnapshot`),
    from which the re-check and the learner's process import it.

    The copy is made on first use; before each use its files are hashed and compared with the
    copy as it was made and with the package's files, and a fresh copy replaces it if anything
    differs. So the re-check never imports from the package's own folder, its parent (the
    repository root, in an editable install) or any other directory a learner's code could
    have written a module into. Where the package is already such a copy, on a read-only
    mount (:func:`read_only_copy`: inside the grading sandbox), that is returned and nothing
    is copied. ``package_dir`` (tests): another package folder to copy."""
    source = os.path.abspath(package_dir or PACKAGE_DIR)
    mounted = read_only_copy(source)
    if mounted is not None:
        return mounted
    snap = _COPIES.get(source)
    if snap is not None:
        if snap.current():
            return str(snap.root)
        _COPIES.pop(source, None)
        snap.remove()
    snap = PackageSnapshot(source)
    atexit.register(snap.remove)
    _COPIES[source] = snap
    return str(snap.root)
