"""Class grading: the parallel command against sequential ``nbgrader autograde``, same run.

For each assignment (default: cost_models), N submissions (default 12) cycling through the
spec's correct, partial, blank and hostile notebooks (tests/assignments/<assignment>.py) are
written into two copies of one released temporary course. One copy is graded by plain
``nbgrader autograde <assignment>`` (sequential), the other by ``python -m
collectives.grading.classroom grade`` (all cores); both in the sandbox. Prints seconds per
notebook, the speed-up, and whether every cell's score is identical.

The issue asks for 60 submissions of every assignment; at 10-20 s per notebook on 2 cores that
is hours, so the default is a documented subset: ``--submissions 60 --assignments all`` runs
the full measurement.

    python bench/grading.py [--submissions N] [--assignments a,b|all] [--jobs J]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import nbformat  # noqa: E402

import assignments as specs  # noqa: E402
import nbgrader_helpers as h  # noqa: E402

KINDS = ("correct", "partial", "blank", "hostile")


def write_class(course, assignment, count):
    spec = specs.load(assignment, course.root)
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        folder = course.root / "submitted" / f"{kind}{i:03d}" / assignment
        folder.mkdir(parents=True)
        for nb in spec.notebooks:
            built = spec.submissions[kind][nb](h.copy_of(course.source(assignment, nb)),
                                               h.copy_of(course.release(assignment, nb)))
            nbformat.write(built, folder / f"{nb}.ipynb")
        (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")


def all_scores(root, assignment):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {(s.student.id, nb.name, g.name): g.score
                for s in gb.assignment_submissions(assignment)
                for nb in s.notebooks for g in nb.grades}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=12)
    parser.add_argument("--assignments", default="cost_models")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    names = h.assignments() if args.assignments == "all" else args.assignments.split(",")
    print(f"class grading: {args.submissions} submissions per assignment, {args.jobs} jobs, "
          f"{os.cpu_count()} cores")
    for assignment in names:
        with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
            (Path(tmp) / "a").mkdir()
            seq = h.Course.create(Path(tmp) / "a", [assignment])
            write_class(seq, assignment, args.submissions)
            par_root = Path(tmp) / "b" / "course"
            shutil.copytree(seq.root, par_root)
            start = time.perf_counter()
            h.nbgrader(seq.root, seq.env, "autograde", assignment)
            sequential = time.perf_counter() - start
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "collectives.grading.classroom", "grade",
                            assignment, "--course-dir", str(par_root), "--jobs",
                            str(args.jobs), "--no-feedback"], env=seq.env, check=True,
                           capture_output=True)
            parallel = time.perf_counter() - start
            same = all_scores(seq.root, assignment) == all_scores(par_root, assignment)
            n = args.submissions
            print(f"  {assignment:28s} sequential {sequential / n:6.2f} s/notebook, parallel "
                  f"{parallel / n:6.2f} s/notebook, speed-up {sequential / parallel:4.2f}x, "
                  f"grades identical: {same}")


if __name__ == "__main__":
    main()
