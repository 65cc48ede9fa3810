"""Class grading: the parallel command against sequential ``nbgrader autograde``, same run.

For each assignment (default: cost_models), N submissions (default 12) cycling through the
spec's correct, partial, blank and hostile notebooks (tests/assignments/<assignment>.py) are
written into two copies of one released temporary course. One copy is graded by plain
``nbgrader autograde <assignment>`` (sequential), the other by ``python -m
collectives_grader.classroom grade`` (all cores). Both copies have the course's
nbgrader_config.py, so both run every kernel in the same grading sandbox (checked: the run
stops if the configuration names another kernel or the sandbox cannot run). Prints, per
assignment, seconds per notebook of each side, the speed-up, whether every cell's score is
identical, the 1-minute load average before and after each side (other jobs on the machine
slow both sides; ``--repeat`` alternates which side goes first) and, where a cgroup v1
``cpuacct`` folder can be made (as root), the CPU seconds per notebook each side used, all its
processes and kernels counted: the work each does, whatever the load.

The issue's measurement is ``--submissions 60 --assignments all`` (about an hour on 2 cores);
the default (12 of cost_models, about 2 minutes) is the reduced mode ``make bench`` runs.

    python bench/grading.py [--submissions N] [--assignments a,b|all] [--jobs J] [--repeat R]
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

from collectives_grader import sandbox  # noqa: E402

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
            built = spec.submissions[kind][nb](
                h.copy_of(course.source(assignment, nb)), h.copy_of(course.release(assignment, nb))
            )
            nbformat.write(built, folder / f"{nb}.ipynb")
        (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")


def all_scores(root, assignment):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {
            (s.student.id, nb.name, g.name): g.score
            for s in gb.assignment_submissions(assignment)
            for nb in s.notebooks
            for g in nb.grades
        }


def kernel_name(root):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    return config.Execute.get("kernel_name")


def sequential(root, assignment, jobs):
    return h.grading_command("plain", assignment, root)


def parallel(root, assignment, jobs):
    return h.grading_command("classroom", assignment, root, jobs, feedback=False)


class CpuGroup:
    """A cgroup v1 cpuacct folder: the CPU time of every process started in it (None where
    none can be made)."""

    def __init__(self):
        self.path = None
        try:
            mounts = Path("/proc/self/mounts").read_text().splitlines()
        except OSError:
            return
        points = [
            line.split()[1]
            for line in mounts
            if line.split()[2] == "cgroup" and "cpuacct" in line.split()[3].split(",")
        ]
        if points:
            path = Path(points[0]) / f"bench-grading-{os.getpid()}-{time.monotonic_ns()}"
            try:
                path.mkdir()
                self.path = path
            except OSError:
                pass

    def join(self):
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self):
        return int((self.path / "cpuacct.usage").read_text()) / 1e9 if self.path else None

    def remove(self):
        if self.path is not None:
            for _ in range(100):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.05)


def timed(side, root, env, assignment, jobs):
    """(seconds, CPU seconds or None, load average before, after) of one side."""
    group = CpuGroup()
    before = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run(
        side(root, assignment, jobs),
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        preexec_fn=group.join,
    )
    seconds, after = time.perf_counter() - start, os.getloadavg()[0]
    cpu = group.seconds()
    group.remove()
    return seconds, cpu, before, after


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=12)
    parser.add_argument("--assignments", default="cost_models")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per assignment, alternating which side goes first",
    )
    args = parser.parse_args()
    sandbox.check_available()
    names = h.assignments() if args.assignments == "all" else args.assignments.split(",")
    n = args.submissions
    print(
        f"class grading: {n} submissions per assignment, {args.jobs} jobs, "
        f"{os.cpu_count()} cores; both sides in the sandbox ({sandbox.KERNEL_NAME})"
    )
    totals = {"sequential": 0.0, "parallel": 0.0}
    for assignment in names:
        for run in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
                (Path(tmp) / "a").mkdir()
                seq = h.Course.create(Path(tmp) / "a", [assignment])
                if kernel_name(seq.root) != sandbox.KERNEL_NAME:
                    raise SystemExit(
                        f"the course grades with {kernel_name(seq.root)!r}, not "
                        f"{sandbox.KERNEL_NAME!r}: the comparison would not be fair"
                    )
                write_class(seq, assignment, n)
                par_root = Path(tmp) / "b" / "course"
                shutil.copytree(seq.root, par_root)
                sides = [("sequential", sequential, seq.root), ("parallel", parallel, par_root)]
                found = {}
                for name, side, root in sides if run % 2 == 0 else sides[::-1]:
                    found[name] = timed(side, root, seq.env, assignment, args.jobs)
                    totals[name] += found[name][0]
                same = all_scores(seq.root, assignment) == all_scores(par_root, assignment)
            (s, sc, s0, s1), (p, pc, p0, p1) = found["sequential"], found["parallel"]
            first = "sequential" if run % 2 == 0 else "parallel"
            cpu = (
                f", CPU s/notebook {sc / n:.2f} and {pc / n:.2f}"
                if sc is not None and pc is not None
                else ""
            )
            print(
                f"  {assignment:26s} sequential {s / n:5.2f} s/notebook (load {s0:4.1f} -> "
                f"{s1:4.1f}), parallel {p / n:5.2f} s/notebook (load {p0:4.1f} -> {p1:4.1f}),"
                f" speed-up {s / p:4.2f}x{cpu}, grades identical: {same} ({first} first)",
                flush=True,
            )
    if len(names) * args.repeat > 1:
        print(
            f"  all: sequential {totals['sequential']:.0f} s, parallel "
            f"{totals['parallel']:.0f} s, speed-up "
            f"{totals['sequential'] / totals['parallel']:.2f}x"
        )


if __name__ == "__main__":
    main()
