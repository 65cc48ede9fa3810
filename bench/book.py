"""Build time of the book: a clean build and a no-change rebuild, in the same run.

The working tree is copied into a temporary directory (without .git, .venv, _build, the
generated notebooks and caches; with the vendored offline assets, which `make vendor` has
already fetched: "everything installed"), the student notebooks are written there
(`scripts/release_notebooks.py`, the `make student` step, which the chapters' download links
need), and then, in the copy,

    jupyter-book build . --builder html -W -n --keep-going

runs twice: first from nothing (no _build, no execution cache: every chapter is executed),
then again with nothing changed. The repository's own _build is never touched. The chapters'
kernels import the copy's `collectives` (PYTHONPATH), so the figures are the working tree's.

Targets (issue 12, on the 2-core machine): the clean build under 6 minutes, the no-change
rebuild under 15 s. Printed: each phase's wall time against its target, the chapters'
execution time as the jupyter-cache recorded it (the rest of a clean build is Sphinx's
reading and writing), the number of pages and the size of the site. `make book` with nothing
changed also regenerates every student notebook (nbgrader has no "up to date" check), so the
script times that step a second time and prints the sum too.

Usage: python bench/book.py [--keep DIR]   (--keep: build in DIR and leave it there)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CLEAN_TARGET_S = 6 * 60
REBUILD_TARGET_S = 15.0
BUILD = ["build", ".", "--builder", "html", "-W", "-n", "--keep-going"]
# Never copied: version control, environments, build outputs, nbgrader state, caches.
SKIP_TOP = {
    ".git",
    ".venv",
    "_build",
    "node_modules",
    ".pytest_cache",
    ".hypothesis",
    "collectives.egg-info",
}
SKIP_ANYWHERE = {"__pycache__", ".ipynb_checkpoints", ".jupyter_cache"}
SKIP_EXERCISES = {"release", "submitted", "autograded", "feedback", "downloaded", "gradebook.db"}


def _ignore(directory: str, names: list[str]) -> set[str]:
    here = Path(directory).resolve()
    skip = {n for n in names if n in SKIP_ANYWHERE}
    if here == ROOT:
        skip |= {n for n in names if n in SKIP_TOP}
    elif here == ROOT / "exercises":
        skip |= {n for n in names if n in SKIP_EXERCISES or n.endswith(".csv")}
    return skip


def copy_tree(dest: Path) -> None:
    vendor = ROOT / "_static" / "vendor" / "manifest.json"
    if not vendor.is_file():
        sys.exit(
            "bench/book.py: _static/vendor is missing; run `make vendor` (or `make book`) first"
        )
    shutil.copytree(ROOT, dest, ignore=_ignore, symlinks=True)


def run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(
            f"bench/book.py: {what} failed (exit {result.returncode}):\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    return seconds


def execution_seconds(book: Path) -> tuple[int, float]:
    """(notebooks executed, their total execution time) from the copy's jupyter-cache."""
    try:
        from jupyter_cache import get_cache
    except ImportError:
        return 0, float("nan")
    cache = book / "_build" / ".jupyter_cache"
    if not cache.is_dir():
        return 0, float("nan")
    records = get_cache(str(cache)).list_cache_records()
    times = [float((r.data or {}).get("execution_seconds", "nan")) for r in records]
    return len(records), sum(times)


def site_stats(book: Path) -> tuple[int, float]:
    """(HTML pages of the book, megabytes of the whole site)."""
    html = book / "_build" / "html"
    pages = [
        p
        for p in html.rglob("*.html")
        if p.relative_to(html).parts[0] not in ("_static", "_sources")
    ]
    size = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    return len(pages), size / 1e6


def verdict(seconds: float, target: float) -> str:
    return f"{seconds / target:4.0%} of the target, {'met' if seconds < target else 'MISSED'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build in this (new) directory and keep it")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-book-")) if args.keep is None else args.keep
    book = workdir / "book" if args.keep is None else workdir
    env = dict(
        os.environ, PYTHONPATH=str(book), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    try:
        started = time.perf_counter()
        copy_tree(book)
        copy_s = time.perf_counter() - started
        student_s = run(
            [sys.executable, "scripts/release_notebooks.py"],
            book,
            env,
            "the student notebooks (scripts/release_notebooks.py)",
        )
        jupyter_book = str(BIN / "jupyter-book")
        clean_s = run([jupyter_book, *BUILD], book, env, "the clean build")
        executed, exec_s = execution_seconds(book)
        pages, megabytes = site_stats(book)
        rebuild_s = run([jupyter_book, *BUILD], book, env, "the no-change rebuild")
        student_again_s = run(
            [sys.executable, "scripts/release_notebooks.py"],
            book,
            env,
            "the student notebooks, again",
        )
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"book build, {os.cpu_count()} CPUs, {pages} pages ({megabytes:.1f} MB of site), "
        f"{executed} chapters executed"
    )
    print(f"  copy of the working tree         {copy_s:7.1f} s")
    print(f"  student notebooks (make student) {student_s:7.1f} s")
    print(
        f"  clean build (jupyter-book)       {clean_s:7.1f} s   target < {CLEAN_TARGET_S:.0f} s: "
        f"{verdict(clean_s, CLEAN_TARGET_S)}"
    )
    print(f"    of which executing chapters    {exec_s:7.1f} s   (jupyter-cache's record)")
    print(
        f"  no-change rebuild (jupyter-book) {rebuild_s:7.1f} s   "
        f"target < {REBUILD_TARGET_S:.0f} s: "
        f"{verdict(rebuild_s, REBUILD_TARGET_S)}"
    )
    print(
        f"  clean build + student notebooks  {clean_s + student_s:7.1f} s   "
        f"({verdict(clean_s + student_s, CLEAN_TARGET_S)})"
    )
    make_book_s = rebuild_s + student_again_s
    print(
        f"  `make book` with nothing changed {make_book_s:7.1f} s   (the rebuild + the student "
        f"notebooks again, {student_again_s:.1f} s: {verdict(make_book_s, REBUILD_TARGET_S)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
