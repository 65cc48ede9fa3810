"""Build the student notebooks: ``nbgrader generate_assignment`` for every assignment.

Every folder of ``exercises/source/`` that holds a notebook is an assignment. For each one
this runs, in the course directory ``exercises/``::

    nbgrader generate_assignment <assignment> --force

(when every folder of ``source/`` is to be generated, one ``nbgrader generate_assignment
'*' --force`` does them all: :func:`release_all`)

which writes ``exercises/release/<assignment>/<notebook>.ipynb`` (solutions replaced by
``raise NotImplementedError()``, hidden tests removed, outputs cleared) and records the
assignment in the gradebook ``exercises/gradebook.db``, creating it on first use. Then it
checks that no solution or hidden test reached a release notebook.

Called by ``make student`` (part of ``make book``); works on a fresh clone. An assignment
whose release notebooks are all newer than its source notebooks, the course's
``nbgrader_config.py`` and this script, and that the gradebook already holds, is left as it
is (``--force`` regenerates it anyway), so a ``make book`` with nothing changed does not pay
for nbgrader. Silent when all goes well (``--verbose`` lists what was released or skipped); on
failure it prints the command, its output and the reason, and exits with status 1.

Usage: python scripts/release_notebooks.py [--course-dir DIR] [--force] [--verbose]
       [ASSIGNMENT ...]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE_DIR = ROOT / "exercises"
#: text that must never reach a student notebook
LEAKS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def assignments(course_dir):
    """Names of the folders of ``source/`` that hold at least one notebook, sorted."""
    source = course_dir / "source"
    if not source.is_dir():
        return []
    return sorted(
        d.name
        for d in source.iterdir()
        if d.is_dir() and not d.name.startswith((".", "_")) and any(d.glob("*.ipynb"))
    )


def nbgrader_env():
    """The environment for nbgrader: this interpreter's bin directory first on PATH, because
    nbgrader runs ``alembic`` (to create or upgrade the gradebook) from PATH."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return env


def leaks(notebook):
    """Cells of a release notebook that still carry a solution or hidden-test marker."""
    with open(notebook, encoding="utf-8") as f:
        cells = json.load(f).get("cells", [])
    found = []
    for i, cell in enumerate(cells):
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        found += [f"cell {i}: {marker!r}" for marker in LEAKS if marker in text]
    return found


def up_to_date(course_dir, assignment):
    """Whether the release of ``assignment`` is newer than everything it is made from (its
    source notebooks, nbgrader_config.py, this script) and the gradebook exists."""
    sources = sorted((course_dir / "source" / assignment).glob("*.ipynb"))
    targets = [course_dir / "release" / assignment / s.name for s in sources]
    inputs = sources + [course_dir / "nbgrader_config.py", Path(__file__).resolve()]
    if not (course_dir / "gradebook.db").is_file() or not all(t.is_file() for t in targets):
        return False
    newest_input = max(p.stat().st_mtime for p in inputs)
    return min(t.stat().st_mtime for t in targets) > newest_input


def shown(pattern):
    """The nbgrader command that generates ``pattern``, as the messages show it."""
    return f"nbgrader generate_assignment {pattern} --force"


def generate(course_dir, pattern, env):
    """Run ``nbgrader generate_assignment <pattern> --force`` in the course directory; returns
    ``(error message or None, nbgrader's output)``."""
    command = [sys.executable, "-m", "nbgrader", "generate_assignment", pattern, "--force"]
    try:
        proc = subprocess.run(command, cwd=course_dir, env=env, capture_output=True, text=True)
    except OSError as exc:
        return f"could not run `{shown(pattern)}`: {exc}", ""
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        return (
            f"`{shown(pattern)}` failed (exit status {proc.returncode}) in {course_dir}:\n{output}",
            output,
        )
    return None, output


def check_release(course_dir, assignment, pattern, output):
    """An error message if a release notebook of ``assignment`` is missing or still holds a
    solution or hidden test; else None. ``pattern`` and ``output``: the nbgrader run that
    generated it, for the message."""
    sources = sorted((course_dir / "source" / assignment).glob("*.ipynb"))
    for source in sources:
        target = course_dir / "release" / assignment / source.name
        if not target.is_file():
            missing = target.relative_to(course_dir)
            return f"`{shown(pattern)}` exited 0 but did not write {missing}:\n{output}"
        found = leaks(target)
        if found:
            return (
                f"{target.relative_to(course_dir)} still contains solution or hidden-test "
                f"markers ({'; '.join(found)}); check the cells' nbgrader metadata in "
                f"{source.relative_to(course_dir)}"
            )
    return None


def release(course_dir, assignment, env):
    """Generate one assignment; return an error message, or None on success."""
    error, output = generate(course_dir, assignment, env)
    return error or check_release(course_dir, assignment, assignment, output)


def release_all(course_dir, names, env):
    """Generate the assignments ``names``; return an error message, or None on success.

    When ``names`` are all the folders of ``source/``, one nbgrader run generates them all
    (``generate_assignment '*'``: nbgrader's start-up, about 2 s, paid once instead of once per
    assignment); if that run fails, the assignments are generated one at a time, so that the
    message names the ones that fail. Otherwise each is generated on its own. Every
    assignment is attempted; the messages of all that failed are returned."""
    folders = sorted(d.name for d in (course_dir / "source").iterdir() if d.is_dir())
    errors = None
    if len(names) > 1 and sorted(names) == folders:
        error, output = generate(course_dir, "*", env)
        if error is None:
            errors = [check_release(course_dir, a, "'*'", output) for a in names]
    if errors is None:
        errors = [release(course_dir, assignment, env) for assignment in names]
    return "\n".join(error for error in errors if error) or None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "assignment", nargs="*", help="assignments to release (default: every folder of source/)"
    )
    parser.add_argument(
        "--course-dir",
        type=Path,
        default=COURSE_DIR,
        help="the nbgrader course directory (default: exercises/)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="regenerate every assignment, even those that are up to date",
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="say what was released or skipped"
    )
    args = parser.parse_args(argv)
    course_dir = args.course_dir.resolve()
    if not (course_dir / "nbgrader_config.py").is_file():
        print(
            f"release_notebooks: {course_dir} has no nbgrader_config.py; is it the course "
            "directory?",
            file=sys.stderr,
        )
        return 1
    found = assignments(course_dir)
    names = args.assignment or found
    unknown = [a for a in names if a not in found]
    if unknown or not names:
        print(
            f"release_notebooks: no assignment {', '.join(unknown) or ''} in "
            f"{course_dir / 'source'} (found: {', '.join(found) or 'none'})",
            file=sys.stderr,
        )
        return 1
    stale = []
    for assignment in names:
        if not args.force and up_to_date(course_dir, assignment):
            if args.verbose:
                print(f"up to date: {assignment}")
        else:
            stale.append(assignment)
    if stale:
        error = release_all(course_dir, stale, nbgrader_env())
        if error:
            print(f"release_notebooks: {error}", file=sys.stderr)
            return 1
    if args.verbose:
        for assignment in stale:
            for notebook in sorted((course_dir / "release" / assignment).glob("*.ipynb")):
                print(f"released {notebook.relative_to(course_dir.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
