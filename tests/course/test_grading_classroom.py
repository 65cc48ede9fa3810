"""Class grading (collectives_grader/classroom.py and precheck.py) in a temporary course.

cost_models is released; the class holds two honest students (the spec's *partial* and
*blank*, whose exact scores the spec gives for sequential ``nbgrader autograde``) and four
submissions that stop plain nbgrader or cannot be graded: a duplicated ``grade_id``, invalid
JSON, a deleted test cell, and another assignment's notebook. One run of the parallel command
(2 jobs) grades all of them: honest students exactly as the spec says, the others 0 with a page
saying why; a fifth one's kernel exits in its first cell: 0, with the reason. A sixth,
``hoarder``, answers the first task right and attacks the sandbox's limits in the next three:
fills its working directory and ``/tmp`` (and tries the kernel's socket directory on the
grader's disk), allocates 4.5 GiB in three child processes (each under the per-process limit),
and forks without end: each attack ends in an error in its own cell (0 for that task, the
error in the feedback), the first task keeps its points, nothing it wrote is left on the
grader's disk, and everyone else is graded as without it. A test cell edited by ``partial``
shows in the tamper report. Then: manual grades and extra credit survive a regrade, a re-run
grades nothing twice, an interrupted run resumes from the command line with the same final
grades, and each run leaves a backup of the gradebook.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from collectives_grader import classroom, precheck, sandbox

import assignments as specs
import nbgrader_helpers as h

ASSIGNMENT, NOTEBOOK = "cost_models", "ring_all_gather"
HONEST = ("partial", "blank")
_SOURCE = h.read(h.source_path(ASSIGNMENT, NOTEBOOK))
# the notebook's code test cells and solution cells, in order (read, not assumed)
TESTS = [
    g for g, c in h.cells_by_id(_SOURCE).items() if h.meta(c).get("grade") and c.cell_type == "code"
]
SOLUTIONS = [
    g
    for g, c in h.cells_by_id(_SOURCE).items()
    if h.meta(c).get("solution") and c.cell_type == "code"
]
EDITED, DELETED, COPIED = TESTS[-1], TESTS[-2], SOLUTIONS[-2]
pytestmark = pytest.mark.slow


def edited_test(nb):
    h.cells_by_id(nb)[EDITED].source += "\n# looks fine to me\n"
    return nb


def duplicated_id(nb):
    cell = h.cells_by_id(nb)[COPIED]
    copy = h.copy_of(nbformat.v4.new_notebook(cells=[cell])).cells[0]
    copy.id = "copied-cell"
    nb.cells.append(copy)
    return nb


def deleted_test(nb):
    nb.cells = [c for c in nb.cells if h.meta(c).get("grade_id") != DELETED]
    return nb


def other_assignment(nb):
    for cell in nb.cells:
        if h.meta(cell):
            cell.metadata.nbgrader["grade_id"] = "other_" + h.meta(cell)["grade_id"]
    return nb


BROKEN = {
    "duplicated": (duplicated_id, f"the grade_id(s) {COPIED} appear more than once"),
    "deleted": (deleted_test, f"the test cell(s) {DELETED} are missing"),
    "other": (other_assignment, "it is a notebook from another assignment"),
    "badjson": (None, "ring_all_gather.ipynb is not valid JSON"),
}


QUITTER = "import os\nos._exit(3)\n"  # the kernel exits in the first solution cell

# hoarder's attacks on the limits, one per solution cell after the first (answered right)
DISK_FILLER = """
import os, ipykernel.connect
def fill(folder):
    written = 0
    try:
        for i in range(10**6):
            with open(os.path.join(folder, f"fill{i}.bin"), "wb", buffering=0) as f:
                for _ in range(8):
                    written += f.write(b"x" * 2**24)
    except OSError as exc:
        return written // 2**20, exc.strerror
    finally:
        for name in os.listdir(folder):
            if name.startswith("fill"):
                os.remove(os.path.join(folder, name))
sockets = os.path.dirname(ipykernel.connect.get_connection_file())
try:
    with open(os.path.join(sockets, "planted.bin"), "wb") as f:
        f.write(b"x")
    planted = "written"
except OSError as exc:
    planted = exc.strerror
raise OSError(f"disk full: cwd {fill('.')}, tmp {fill('/tmp')}, sockets {planted}")
"""
MEMORY_HOARDER = """
import os, time
pids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (1536 * 2**20)      # written, so resident: 1.5 GiB per child
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
statuses = [os.waitpid(pid, 0)[1] for pid in pids]
killed = sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses)
raise MemoryError(f"{killed} of 3 children were killed")
"""
FORK_BOMB = """
import os, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError as exc:
    raise RuntimeError(f"fork failed after {children} children: {exc}")
"""
HOARDER = {SOLUTIONS[1]: DISK_FILLER, SOLUTIONS[2]: MEMORY_HOARDER, SOLUTIONS[3]: FORK_BOMB}


def write(course, student, nb=None, text=None):
    folder = course.root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{NOTEBOOK}.ipynb"
    path.write_text(text) if text is not None else nbformat.write(nb, path)
    (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")


def gradebook_scores(course, student):
    from nbgrader.api import Gradebook

    with Gradebook(classroom.db_url(course.root)) as gb:
        nb = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student)
        return {g.name: (g.auto_score, g.manual_score, g.extra_credit) for g in nb.grades}


def code_tests(course):
    return [
        g
        for g, c in h.cells_by_id(course.source(ASSIGNMENT, NOTEBOOK)).items()
        if h.meta(c).get("grade") and c.cell_type == "code"
    ]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = h.Course.create(tmp_path_factory.mktemp("classroom"), [ASSIGNMENT])
    spec = specs.load(ASSIGNMENT)
    source, release = course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
    for student in HONEST:
        nb = spec.submissions[student][NOTEBOOK](h.copy_of(source), h.copy_of(release))
        write(course, student, edited_test(nb) if student == "partial" else nb)
    for student, (build, _) in BROKEN.items():
        if build is None:
            write(course, student, text='{"cells": [')
        else:
            write(course, student, build(h.copy_of(release)))
    write(
        course,
        "quitter",
        specs.submission(replaced={SOLUTIONS[0]: QUITTER})(h.copy_of(source), h.copy_of(release)),
    )
    write(
        course,
        "hoarder",
        specs.submission(solved=SOLUTIONS[:1], replaced=HOARDER)(
            h.copy_of(source), h.copy_of(release)
        ),
    )
    report = run_cli(course, "--jobs", "2")
    return dict(course=course, spec=spec, report=report)


def run_cli(course, *args, check=True):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course.root),
            *args,
        ],
        env=course.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((course.root / "reports" / f"{ASSIGNMENT}.json").read_text())


def test_honest_students_get_exactly_the_spec_scores(graded):
    course, spec = graded["course"], graded["spec"]
    for student in HONEST:
        found = gradebook_scores(course, student)
        assert {g: found[g][0] for g in code_tests(course)} == {
            g: spec.expected[student][NOTEBOOK][g] for g in code_tests(course)
        }, student
        assert graded["report"][student]["status"] == "graded"


@pytest.mark.parametrize("student", sorted(BROKEN))
def test_a_broken_submission_scores_zero_with_the_reason(graded, student):
    course = graded["course"]
    assert {
        g: s[0] for g, s in gradebook_scores(course, student).items() if g in code_tests(course)
    } == dict.fromkeys(code_tests(course), 0.0)
    entry = graded["report"][student]
    assert entry["status"] == "not graded: 0"
    assert any(BROKEN[student][1] in p for p in entry["problems"]), entry
    page = (course.root / "feedback" / student / ASSIGNMENT / "not_graded.html").read_text()
    assert BROKEN[student][1].replace("'", "&#x27;") in page


def test_a_kernel_that_exits_early_costs_that_student_only_with_the_reason(graded):
    course = graded["course"]
    entry = graded["report"]["quitter"]
    assert entry["status"] == "failed: 0", entry
    assert {
        g: s[0] for g, s in gradebook_scores(course, "quitter").items() if g in code_tests(course)
    } == dict.fromkeys(code_tests(course), 0.0)
    page = (course.root / "feedback" / "quitter" / ASSIGNMENT / "not_graded.html").read_text()
    assert "grading stopped with an error: the notebook&#x27;s kernel stopped" in page, page
    assert str(course.root) not in page


def hoarder_errors(course):
    """{solution cell: [(ename, evalue)]} of hoarder's autograded notebook."""
    nb = h.read(course.root / "autograded" / "hoarder" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    return {
        g: [(o.ename, o.evalue) for o in h.error_outputs(h.cells_by_id(nb)[g])] for g in HOARDER
    }


def test_attacks_on_the_limits_cost_their_tasks_only(graded):
    course = graded["course"]
    assert graded["report"]["hoarder"]["status"] == "graded"
    # the first task is answered right (its test cell's points), every attacked one scores 0
    points = {
        g: c.metadata.nbgrader["points"] for g, c in h.cells_by_id(_SOURCE).items() if g in TESTS
    }
    expected = dict.fromkeys(TESTS, 0.0)
    expected["test_" + SOLUTIONS[0]] = points["test_" + SOLUTIONS[0]]
    assert {
        g: s[0] for g, s in gradebook_scores(course, "hoarder").items() if g in TESTS
    } == expected
    errors = hoarder_errors(course)
    # the disk: at most Limits.disk_bytes (512 MiB) in each tmpfs, then "no space"; the socket
    # directory on the grader's disk was taken back once the kernel was ready
    (disk,) = errors[SOLUTIONS[1]]
    found = re.fullmatch(
        r"disk full: cwd \((\d+), 'No space left on device'\), tmp "
        r"\((\d+), 'No space left on device'\), sockets Permission denied",
        disk[1],
    )
    assert disk[0] == "OSError" and found, disk
    limit = sandbox.LIMITS.disk_bytes // 2**20
    assert all(limit - 16 <= int(mib) <= limit for mib in found.groups()), disk
    # memory: 3 x 1.5 GiB > 4 GiB for the kernel's processes together: the kernel's memory
    # cgroup kills at least one child (where a cgroup can be made: as root here)
    (memory,) = errors[SOLUTIONS[2]]
    group = sandbox.MemoryGroup(sandbox.LIMITS.total_memory_bytes)
    if group.path is not None:
        group.remove()
        assert memory[0] == "MemoryError" and re.fullmatch(
            r"[123] of 3 children were killed", memory[1]
        ), memory
    # processes: forks stop below Limits.processes (the kernel's own processes count too)
    (forks,) = errors[SOLUTIONS[3]]
    count = re.match(r"fork failed after (\d+) children", forks[1])
    assert forks[0] == "RuntimeError" and count, forks
    assert 0 < int(count.group(1)) < sandbox.LIMITS.processes
    # nothing it wrote is left on the grader's disk; its feedback shows the errors
    assert sorted(
        p.name for p in (course.root / "autograded" / "hoarder" / ASSIGNMENT).iterdir()
    ) == [f"{NOTEBOOK}.ipynb", "timestamp.txt"]
    page = (course.root / "feedback" / "hoarder" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert "disk full: cwd" in page and "children were killed" in page, page[-3000:]


def test_tamper_report_names_the_edited_test_cell(graded):
    assert graded["report"]["partial"]["tampered"] == {NOTEBOOK: [EDITED]}
    assert graded["report"]["blank"]["tampered"] == {}
    # nobody pasted the package's source (tests/course/test_precheck_copies.py: someone who did)
    assert all(entry["copied"] == {} for entry in graded["report"].values())


def test_export_has_every_student(graded):
    import csv

    with open(graded["course"].root / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT}
    assert sorted(rows) == sorted((*HONEST, *BROKEN, "quitter", "hoarder"))
    assert float(rows["badjson"]["score"]) == 0.0


def test_manual_grades_survive_a_regrade_and_nothing_is_graded_twice(graded):
    from nbgrader.api import Gradebook

    course = graded["course"]
    with Gradebook(classroom.db_url(course.root)) as gb:
        grade = gb.find_grade(EDITED, NOTEBOOK, ASSIGNMENT, "partial")
        grade.manual_score, grade.extra_credit = 1.0, 0.5
        gb.db.commit()
    autograded = course.root / "autograded" / "blank" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    before = autograded.stat().st_mtime_ns
    backups = len(list((course.root / "backups").iterdir()))
    # partial hands in again (same answers, one more line): only partial is graded again
    path = course.root / "submitted" / "partial" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    nb = h.read(path)
    nb.cells.append(nbformat.v4.new_markdown_cell("one more thought"))
    nbformat.write(nb, path)
    report = run_cli(course, "--no-feedback")
    assert report["partial"]["status"] == "graded"
    assert report["blank"]["status"] == "already graded"
    assert autograded.stat().st_mtime_ns == before
    assert gradebook_scores(course, "partial")[EDITED][1:] == (1.0, 0.5)
    assert len(list((course.root / "backups").iterdir())) == backups + 1


def test_an_interrupted_run_resumes_from_the_command_line(graded):
    """Ctrl-C after the first of two students to grade; the same command again grades the
    other one only; every student's grades end as before the interrupt."""
    course = graded["course"]
    everyone = sorted(json.loads((course.root / "reports" / f"{ASSIGNMENT}.json").read_text()))
    final = {s: gradebook_scores(course, s) for s in everyone}
    state = course.root / ".grading" / f"{ASSIGNMENT}.json"
    done = json.loads(state.read_text())
    for student in HONEST:  # forget them: they are to be graded again
        done.pop(student)
    state.write_text(json.dumps(done))
    remembered = len(done)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course.root),
            "--jobs",
            "1",
            "--no-feedback",
        ],
        env=course.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while len(json.loads(state.read_text())) < remembered + 1:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "run the same command again" in err, err[-2000:]
    first = set(json.loads(state.read_text()))
    missing = sorted(set(HONEST) - first)
    assert len(missing) == 1
    mtimes = {
        s: (course.root / "autograded" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").stat().st_mtime_ns
        for s in set(HONEST) - set(missing)
    }
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "status",
            ASSIGNMENT,
            "--course-dir",
            str(course.root),
        ],
        env=course.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert f"{missing[0]}\tto grade" in status.splitlines(), status
    assert f"{ASSIGNMENT}: {len(everyone) - 1} graded, 1 to grade" in status, status
    report = run_cli(course, "--no-feedback")
    assert [s for s, e in report.items() if e["status"] == "graded"] == missing
    assert all(
        (course.root / "autograded" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").stat().st_mtime_ns == m
        for s, m in mtimes.items()
    )
    assert {s: gradebook_scores(course, s) for s in everyone} == final


def _processes_of(course):
    """Pids of the processes whose command line names the course directory (the grading
    command, its workers and their kernels)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(course.root) in line:
                found.append(int(entry.name))
    return found


def test_a_run_killed_with_sigkill_leaves_no_worker_and_resumes_to_the_same_grades(graded):
    """kill -9 of the grading command after its first student: no worker goes on grading
    (before: the workers, in sessions of their own, graded on, beside the re-run); the re-run
    grades the others only, and every grade ends as in the uninterrupted run."""
    course = graded["course"]
    everyone = sorted(json.loads((course.root / "reports" / f"{ASSIGNMENT}.json").read_text()))
    final = {s: gradebook_scores(course, s) for s in everyone}
    state = course.root / ".grading" / f"{ASSIGNMENT}.json"
    done = json.loads(state.read_text())
    for student in HONEST:
        done.pop(student)
    state.write_text(json.dumps(done))
    remembered = len(done)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course.root),
            "--jobs",
            "2",
            "--no-feedback",
        ],
        env=course.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while len(json.loads(state.read_text())) < remembered + 1:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    proc.kill()
    proc.wait(timeout=60)
    deadline = time.monotonic() + 30
    while _processes_of(course) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_of(course) == []
    recorded = json.loads(state.read_text())
    missing = sorted(set(HONEST) - set(recorded))
    mtimes = {
        s: (course.root / "autograded" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").stat().st_mtime_ns
        for s in set(HONEST) - set(missing)
    }
    report = run_cli(course, "--no-feedback")
    assert sorted(s for s, e in report.items() if e["status"] == "graded") == missing
    assert all(
        (course.root / "autograded" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").stat().st_mtime_ns == m
        for s, m in mtimes.items()
    )  # none graded twice
    assert {s: gradebook_scores(course, s) for s in everyone} == final


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs (in a mount namespace)")
def test_a_full_disk_mid_run_leaves_nobody_graded_wrongly(tmp_path):
    """The course's disk full while the class is graded (a 16 KiB tmpfs over autograded/, in a
    mount namespace of the run's own): nobody is recorded as graded (before: each student
    recorded with 0, which every re-run kept); the re-run, with space again, gives the spec's
    scores."""
    course = h.Course.create(tmp_path, [ASSIGNMENT])
    spec = specs.load(ASSIGNMENT)
    source, release = course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
    for student in HONEST:
        write(
            course,
            student,
            spec.submissions[student][NOTEBOOK](h.copy_of(source), h.copy_of(release)),
        )
    (course.root / "autograded").mkdir()
    script = (
        'mount -t tmpfs -o size=16k tmpfs "$1/autograded" && exec "$2" -m '
        'collectives_grader.classroom grade cost_models --course-dir "$1" --jobs 1 '
        "--no-feedback"
    )
    full = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            script,
            "sh",
            str(course.root),
            sys.executable,
        ],
        env=course.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert full.returncode == 1, full.stdout + full.stderr
    assert "the gradebook or the course's disk failed" in full.stderr
    state = course.root / ".grading" / f"{ASSIGNMENT}.json"
    assert not state.exists() or json.loads(state.read_text()) == {}
    report = run_cli(course, "--no-feedback")
    assert {s: report[s]["status"] for s in HONEST} == dict.fromkeys(HONEST, "graded")
    for student in HONEST:
        found = gradebook_scores(course, student)
        assert {g: found[g][0] for g in code_tests(course)} == {
            g: spec.expected[student][NOTEBOOK][g] for g in code_tests(course)
        }, student


# ---- pre-checks alone ---------------------------------------------------------------------------


def test_precheck_accepts_the_release_itself(tmp_path):
    release = h.EXERCISES / "release" / ASSIGNMENT
    if not release.is_dir():
        pytest.skip("exercises/release not built (make student)")
    assert precheck.check_submission(release, release) == []
    assert precheck.tamper_report(release, release) == {}


def test_precheck_names_an_extra_notebook(tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "sub").mkdir()
    nb = nbformat.v4.new_notebook()
    nbformat.write(nb, tmp_path / "release" / "a.ipynb")
    nbformat.write(nb, tmp_path / "sub" / "a.ipynb")
    nbformat.write(nb, tmp_path / "sub" / "fp8.ipynb")
    (problem,) = precheck.check_submission(tmp_path / "sub", tmp_path / "release")
    assert problem.startswith("fp8.ipynb is not a notebook of this assignment")
