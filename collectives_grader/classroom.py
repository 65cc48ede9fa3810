"""Grading a whole class: ``python -m collectives_grader.classroom grade <assignment>``.

Instructor tooling (it needs nbgrader; the book and graded code never import it; ``make grade
ASSIGNMENT=<assignment>`` runs it).

Modelled: the instructor's run over every submission of one assignment, in the course
directory (default ``exercises/``):

1. refuse to start when the grading sandbox cannot run (:mod:`.sandbox`), unless opted out;
2. back up the gradebook (SQLite: a consistent copy; PostgreSQL: ``pg_dump``) to ``backups/``;
3. check every submission first (:mod:`.precheck`, for the report): one that cannot be graded
   (invalid JSON, duplicated or emptied ``grade_id``s, old-format metadata, missing or extra
   test cells, another assignment's notebook) is graded by nbgrader's pipeline as its
   not-graded stand-in (:mod:`.pipeline`, the same step plain ``nbgrader autograde`` runs):
   0 in every cell, hand grades of an earlier submission included, and a feedback page and
   ``not_graded.html`` saying why and how to recover;
4. grade the others, one student at a time per worker process, on all cores, with a progress
   bar: each worker calls nbgrader's Python API (``NbGraderAPI.autograde(assignment, student,
   force=True)``, what ``nbgrader autograde --student <id> --force`` and the formgrader run), so
   a failure (a kernel that died) costs that student only, who gets 0 and a page saying why;
   Each worker is a long-lived process, forked from the command after it imported nbgrader
   and copied the package for the sandbox (so neither is paid again per worker or per
   student), in a session of its own, killed when the command dies (even by ``kill -9``),
   that grades many students (the kernels start and stop
   per student, each in its sandbox);
5. remember each student graded, with a hash of the submission, in ``.grading/``: after an
   interrupt (INT, TERM, HUP), running the same command again grades only the students not
   done (or whose submission changed); ``status`` lists them (:func:`grading_status`);
6. ``nbgrader generate_feedback`` and ``nbgrader export`` (``grades.csv``, every assignment;
   ``grades-<assignment>.csv``, this one alone, for a learning platform's import); the report
   ``reports/<assignment>.json`` lists per student the status, problems, tampered cells
   and cells holding long runs of the package's own source (``copied``), and under
   ``_steps_failed`` either step if it failed (the report is written anyway).

nbgrader keeps manual grades and extra credit when it grades a submission again (it updates
the existing grades' automatic scores only). Left out: merging gradebooks of several machines
(use PostgreSQL so that every grader writes the same gradebook).
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from . import pipeline, precheck, sandbox

__all__ = [
    "grade_class",
    "grading_status",
    "submission_digest",
    "backup_gradebook",
    "db_url",
    "main",
]


def db_url(course):
    """The gradebook URL of the course's nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    url = config.CourseDirectory.get("db_url")
    return str(url) if url else f"sqlite:///{Path(course) / 'gradebook.db'}"


def submission_digest(folder):
    """sha256 over the names and contents of a submission's files."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def backup_gradebook(course, url, now=None):
    """Copy the gradebook to ``backups/gradebook-<UTC time>``; returns the copy's path."""
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%dT%H%M%S%fZ")
    folder = Path(course) / "backups"
    folder.mkdir(exist_ok=True)
    if url.startswith("sqlite:///"):
        source = Path(url[len("sqlite:///") :])
        target = folder / f"gradebook-{stamp}.db"
        if source.exists():
            with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
                src.backup(dst)
        return target
    target = folder / f"gradebook-{stamp}.sql"
    dump_url = re.sub(r"^postgresql\+\w+://", "postgresql://", url)
    proc = subprocess.run(
        ["pg_dump", "--dbname", dump_url, "--file", str(target)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"cannot back up the gradebook {url} with pg_dump: {proc.stderr.strip()}"
        )
    return target


class _State:
    """``.grading/<assignment>.json``: {student: digest of the submission graded}."""

    def __init__(self, course, assignment):
        self.path = Path(course) / ".grading" / f"{assignment}.json"
        self.done = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.lock = threading.Lock()

    def record(self, student, digest):
        with self.lock:
            self.done[student] = digest
            self.path.parent.mkdir(exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.done, indent=1, sort_keys=True))
            os.replace(tmp, self.path)


def _students(course, assignment):
    return sorted(
        p.parent.name for p in (Path(course) / "submitted").glob(f"*/{assignment}") if p.is_dir()
    )


def grading_status(course, assignment):
    """{student: "graded" | "changed since graded" | "to grade"} from the progress that
    :func:`grade_class` records (what a run of it would grade next)."""
    course = Path(course).resolve()
    done = _State(course, assignment).done
    status = {}
    for student in _students(course, assignment):
        digest = submission_digest(course / "submitted" / student / assignment)
        status[student] = (
            "to grade"
            if student not in done
            else "graded"
            if done[student] == digest
            else "changed since graded"
        )
    return status


def _nbgrader(*args):
    return [sys.executable, "-m", "nbgrader", *args]


def _reason_from_log(log, course):
    """Why nbgrader could not grade a submission, in the student's terms, from its log (the
    grader's paths left out)."""
    if re.search(r"DeadKernelError|Kernel died", log):
        reason = (
            "the notebook's kernel stopped while it ran (a cell called exit() or "
            "os._exit(), crashed Python, or exceeded a limit), so its cells could not be "
            "graded"
        )
    else:
        finals = re.findall(r"^(?:\w+\.)*\w+(?:Error|Exception)\b: .*$", log, flags=re.M)
        reason = finals[-1] if finals else "nbgrader could not grade this submission"
    return reason.replace(str(course), "<course>")


def _zero_with_feedback(course, url, assignment, student, reasons):
    """Score 0 for every cell of the student's submission, keep manual grades, and write
    ``feedback/<student>/<assignment>/not_graded.html`` with the reasons (and the same page as
    ``<name>.html`` for each notebook ``<name>.ipynb`` the student handed in, which is what
    ``nbgrader fetch_feedback`` looks for)."""
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    stamp_file = Path(course) / "submitted" / student / assignment / "timestamp.txt"
    timestamp = parse_utc(stamp_file.read_text().strip()) if stamp_file.exists() else None
    with Gradebook(url) as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment, student, timestamp=timestamp)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score, grade.manual_score = 0.0, None
                grade.needs_manual_grade = False
        gb.db.commit()
    folder = Path(course) / "feedback" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    page = pipeline.not_graded(assignment, reasons)
    (folder / "not_graded.html").write_text(page)
    # `nbgrader fetch_feedback` fetches a page for each notebook the student handed in, by its
    # name: the page goes under those names too (a renamed notebook), or it never reaches them
    for handed_in in (Path(course) / "submitted" / student / assignment).glob("*.ipynb"):
        (folder / f"{handed_in.stem}.html").write_text(page)
    # what `nbgrader release_feedback` reads beside every page (the exchange's submission
    # files): without them it stops at this student, and later students get no feedback
    for name in ("timestamp.txt", "submission_secret.txt"):
        found = Path(course) / "submitted" / student / assignment / name
        if found.is_file():
            (folder / name).write_bytes(found.read_bytes())


def grade_class(course, assignment, jobs=None, progress=True, feedback=True):
    """Grade every submission of ``assignment`` (see the module docstring); returns the report
    {student: {"status": ..., "problems": [...], "tampered": {...}, "copied": {...}}}."""
    course = Path(course).resolve()
    if sandbox.enabled():
        try:
            sandbox.check_available()
        except sandbox.SandboxError as exc:
            raise sandbox.SandboxError(sandbox.refuse_message(exc)) from None
    release = course / "release" / assignment
    if not release.is_dir():
        raise FileNotFoundError(
            f"{release} does not exist: release the assignment first "
            f"(nbgrader generate_assignment {assignment})"
        )
    url = db_url(course)
    backup_gradebook(course, url)
    state = _State(course, assignment)
    students = _students(course, assignment)
    report, todo = {}, []
    for student in students:
        folder = course / "submitted" / student / assignment
        digest = submission_digest(folder)
        problems = precheck.check_submission(folder, release)
        report[student] = {
            "problems": problems,
            "tampered": precheck.tamper_report(folder, release),
            "copied": precheck.package_copies(folder, release),
        }
        if state.done.get(student) == digest:
            report[student]["status"] = "already graded"
        elif any(not (folder / p.name).is_file() for p in release.glob("*.ipynb")):
            # a notebook missing: nbgrader would stop at this student with no page at all
            _zero_with_feedback(course, url, assignment, student, problems)
            state.record(student, digest)
            report[student]["status"] = "not graded: 0"
        else:
            # one with problems goes through nbgrader too: its pipeline (pipeline.py, in
            # nbgrader_config.py) makes it the not-graded stand-in, as plain nbgrader does
            todo.append((student, digest))
    _grade_in_parallel(
        course, url, assignment, todo, jobs or os.cpu_count() or 1, state, report, progress
    )
    if feedback:
        report_steps = {}
        for name, args in (
            ("generate_feedback", ("generate_feedback", assignment, "--force")),
            ("export", ("export", "--to", "grades.csv")),
            (
                "export of the assignment",
                (
                    "export",
                    "--to",
                    f"grades-{assignment}.csv",
                    f"--ExportPlugin.assignment={assignment}",
                ),
            ),
        ):
            proc = subprocess.run(_nbgrader(*args), cwd=course, capture_output=True, text=True)
            if proc.returncode != 0:
                report_steps[name] = _reason_from_log(proc.stdout + proc.stderr, course)
        if report_steps:
            report["_steps_failed"] = report_steps
    (course / "reports").mkdir(exist_ok=True)
    (course / "reports" / f"{assignment}.json").write_text(
        json.dumps(report, indent=1, sort_keys=True)
    )
    return report


_WORKER: dict[str, Any] = {}


def _prepare_workers():
    """Import nbgrader (2 s of CPU) and make the sandbox's package copy once, here, before the
    workers are forked from this process: they share both instead of each paying for them."""
    import nbgrader.apps  # noqa: F401

    if sandbox.enabled():
        sandbox.snapshot()


def _worker_start(course):
    """In each worker process (forked from the command's): a session of its own, the default
    signal handlers (the command stops its workers itself), and nbgrader's Python API on the
    course, made once.

    The session: Linux's autogroup scheduling shares the CPU between sessions first, so that
    workers left in the command's session would share one session's share between them on a
    loaded machine (each kernel already has a session of its own: ``bwrap --new-session``).
    It also keeps a terminal's Ctrl-C from the workers: the command stops them itself."""
    try:
        os.setsid()
    except OSError:
        pass
    _die_with_parent()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    os.chdir(course)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    _WORKER["api"] = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _die_with_parent():
    """Linux: this worker gets SIGKILL when the command that forked it dies, however it dies
    (``kill -9`` included), so that no orphaned worker goes on grading and writing the
    gradebook beside a re-run (its kernel then dies with it: ``bwrap --die-with-parent``)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the command died before the call
        os._exit(1)


def _autograde_one(job):
    """``nbgrader autograde <assignment> --student <student> --force``, in a worker."""
    assignment, student = job
    try:
        result = _WORKER["api"].autograde(assignment, student, force=True, create=True)
    except Exception as exc:  # reported for this student only
        return student, False, f"{type(exc).__name__}: {exc}"
    return student, bool(result["success"]), result.get("log", "") + result.get("error", "")


#: what nbgrader's log says when the grading machine, not the student, failed: the gradebook's
#: server went away (a PostgreSQL restart, a lost connection), or the course's disk is full:
#: that student is not recorded as graded, and the next run grades them
_GRADEBOOK_DOWN = re.compile(
    r"OperationalError|error accessing the nbgrader database|"
    r"server closed the connection|could not connect to server|"
    r"connection to server .* failed|No space left on device|"
    r"database or disk is full|Disk quota exceeded",
    re.I,
)
#: the status of a student the run could not finish (run the same command again)
UNFINISHED = "not finished: the gradebook or the course's disk failed; run the same command again"


def _grade_in_parallel(course, url, assignment, todo, jobs, state, report, progress):
    """Grade ``todo`` [(student, digest)] in ``jobs`` worker processes (nbgrader's Python API,
    as the formgrader calls it), recording each student as soon as it is done."""
    if not todo:
        return
    import multiprocessing

    digests = dict(todo)
    _prepare_workers()
    pool = multiprocessing.get_context("fork").Pool(
        min(jobs, len(todo)), _worker_start, (str(course),)
    )
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"grading {assignment}", unit="student")
    try:
        for student, ok, log in pool.imap_unordered(
            _autograde_one, [(assignment, s) for s, _ in todo]
        ):
            if ok and report[student]["problems"]:
                report[student]["status"] = "not graded: 0"
            elif ok:
                report[student]["status"] = "graded"
            elif _GRADEBOOK_DOWN.search(log):
                # the gradebook, not the student: left to grade again by the next run
                report[student]["status"] = UNFINISHED
                report[student]["problems"].append("the gradebook or the disk failed")
                if bar is not None:
                    bar.update(1)
                continue
            else:
                reason = _reason_from_log(log, course)
                _zero_with_feedback(
                    course, url, assignment, student, [f"grading stopped with an error: {reason}"]
                )
                report[student]["status"] = "failed: 0"
                report[student]["problems"].append(reason)
            try:
                state.record(student, digests[student])
            except OSError as exc:  # the course's disk is full: stop, resumable
                raise KeyboardInterrupt(f"cannot record the progress: {exc.strerror}") from None
            if bar is not None:
                bar.update(1)
        pool.close()
    except BaseException:
        pool.terminate()  # the kernels die with their worker (bwrap)
        raise
    finally:
        pool.join()
        if bar is not None:
            bar.close()


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv=None):
    """``python -m collectives_grader.classroom grade|status <assignment> [options]``."""
    parser = argparse.ArgumentParser(
        prog="python -m collectives_grader.classroom",
        description="Grade every submission of an assignment: sandboxed, checked first, in "
        "parallel, resumable; then feedback and grades.csv.",
        epilog="Interrupted (Ctrl-C, a lost connection)? Run the same grade command again: it "
        "grades only the students not done yet, or whose submission changed since; "
        "`status` lists them.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade all submissions of an assignment")
    grade.add_argument("assignment")
    grade.add_argument("--course-dir", default="exercises", help="(default: exercises)")
    grade.add_argument("--jobs", type=int, default=None, help="(default: all cores)")
    grade.add_argument(
        "--no-feedback", action="store_true", help="skip generate_feedback and export"
    )
    status = sub.add_parser(
        "status",
        help="which students a run would grade (after an "
        "interrupt: the ones a re-run resumes with)",
    )
    status.add_argument("assignment")
    status.add_argument("--course-dir", default="exercises", help="(default: exercises)")
    args = parser.parse_args(argv)
    if args.command == "status":
        found = grading_status(args.course_dir, args.assignment)
        for student, state in found.items():
            print(f"{student}\t{state}")
        counts = {}
        for state in found.values():
            counts[state] = counts.get(state, 0) + 1
        print(
            f"{args.assignment}: "
            + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no submissions")
        )
        return 0
    # Ctrl-C, a TERM signal or a lost terminal (HUP) stops the run cleanly, even when SIGINT
    # was ignored at start (a background job of a non-interactive shell)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    try:
        report = grade_class(
            args.course_dir, args.assignment, args.jobs, feedback=not args.no_feedback
        )
    except (sandbox.SandboxError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted: run the same command again to grade the students not done",
            file=sys.stderr,
        )
        return 130
    failed = report.pop("_steps_failed", {})
    counts = {}
    for entry in report.values():
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    print(
        f"{args.assignment}: "
        + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no submissions")
    )
    for step, reason in failed.items():
        print(f"nbgrader {step} failed: {reason}", file=sys.stderr)
    if any(e["status"] == UNFINISHED for e in report.values()):
        print(f"some students are not finished ({UNFINISHED})", file=sys.stderr)
        return 1
    tampered = {s: e["tampered"] for s, e in report.items() if e["tampered"]}
    if tampered:
        print(f"edited test or locked cells (restored by nbgrader): {tampered}")
    copied = {
        s: sorted({run["cell"] for runs in e["copied"].values() for run in runs})
        for s, e in report.items()
        if e["copied"]
    }
    if copied:
        print(
            f"cells holding {precheck.COPY_LINES} or more lines of the package's own source "
            f"(reports/{args.assignment}.json says where from): {copied}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
