"""Both grading paths give the same scores, and feedback is no answer key (issue 25).

One assignment (cost_models), one release, two copies of the course: plain ``nbgrader autograde
cost_models`` (what the formgrader runs) in one, ``python -m collectives_grader.classroom grade``
(``make grade``) in the other, on the same submissions: a correct one, the origin attack of the
spec, and notebooks that cannot be graded (a deleted test cell, old-format metadata, invalid
JSON, a duplicated grade_id). Before, plain nbgrader graded the deleted test cell 8/10 where
``make grade`` gave 0, and the old-format metadata stopped its whole run.

``make test`` runs the comparison (one grading per path, at once); the cohort's lookup table,
the last mile after ``make grade`` and the class with no gradable submission each grade again,
so they are marked ``extended`` (``make test-extended``). Every spec submission of every
assignment (the attacks included) is compared on both paths by
tests/course/test_grading_both_paths.py, in ``make test-extended`` too.

Then the cohort: a table of answers built from one cohort's feedback (a probe submission's
failing messages name every hidden case and its expected value) scores the task under that
cohort's seed and 0 under another one.
"""

import html
import json
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

import assignments as specs
import nbgrader_helpers as h

pytestmark = pytest.mark.slow

ASSIGNMENT, NOTEBOOK = "cost_models", "ring_all_gather"
SEED, OTHER_SEED = "cohort-a", "cohort-b"


def _correct(spec, source, release):
    return spec.submissions["correct"][NOTEBOOK](h.copy_of(source), h.copy_of(release))


def _broken(kind, spec, source, release):
    nb = _correct(spec, source, release)
    if kind == "deleted_test":
        nb.cells = [c for c in nb.cells if h.meta(c).get("grade_id") != "test_better_upgrade"]
    elif kind == "old_metadata":
        for cell in nb.cells:
            if h.meta(cell):
                cell.metadata.nbgrader.schema_version = 1
    elif kind == "duplicated_id":
        cell = next(c for c in nb.cells if h.meta(c).get("grade_id") == "better_upgrade")
        nb.cells.append(h.copy_of(nbformat.v4.new_notebook(cells=[cell])).cells[0])
    return nb


# right for the visible test's one case (so that the hidden part runs), wrong for every other
PROBE = """
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    if (chip, n, d_model, d_ff) == ("tpu-v5e", 16, 8192, 28672):
        return 4110.457085427784
    return -1.0
"""

BROKEN = ("deleted_test", "old_metadata", "duplicated_id", "bad_json")


def _write(course, student, nb=None, text=None):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    if text is not None:
        (folder / f"{NOTEBOOK}.ipynb").write_text(text)
    else:
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")
    (folder / "submission_secret.txt").write_text(f"secret-of-{student}")  # as the exchange


def _env(course, seed):
    env = h.nbgrader_env(course.parent)
    env["COLLECTIVES_COURSE_SEED"] = seed
    return env


def _scores(course, students):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {
            s: {
                c.name: gb.find_grade(c.name, NOTEBOOK, ASSIGNMENT, s).score
                for c in gb.find_notebook(NOTEBOOK, ASSIGNMENT).grade_cells
            }
            for s in students
        }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(plain course, classroom course, students) after grading both."""
    spec = specs.load(ASSIGNMENT)
    base = h.Course.create(tmp_path_factory.mktemp("paths"), [ASSIGNMENT])
    source, release = base.source(ASSIGNMENT, NOTEBOOK), base.release(ASSIGNMENT, NOTEBOOK)
    students = {
        "correct": _correct(spec, source, release),
        "origin": spec.submissions["origin"][NOTEBOOK](h.copy_of(source), h.copy_of(release)),
        "probe": specs.submission(replaced={"tokens_to_hide_gather": PROBE})(
            h.copy_of(source), h.copy_of(release)
        ),
    }
    for kind in BROKEN[:-1]:
        students[kind] = _broken(kind, spec, source, release)
    for student, nb in students.items():
        _write(base.root, student, nb)
    _write(base.root, "bad_json", text='{"cells": [ this is not JSON')
    students = sorted([*students, "bad_json"])
    courses = {}
    for path in ("plain", "classroom"):
        courses[path] = base.root.parent / path
        shutil.copytree(base.root, courses[path])
    # both paths at once, one core each
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
            cwd=courses["plain"],
            env=_env(courses["plain"], SEED),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "collectives_grader.classroom",
                "grade",
                ASSIGNMENT,
                "--course-dir",
                str(courses["classroom"]),
                "--jobs",
                "1",
            ],
            env=_env(courses["classroom"], SEED),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    ]
    outputs = [run.communicate(timeout=1200) for run in runs]
    plain, room = (
        subprocess.CompletedProcess(run.args, run.returncode, *out)
        for run, out in zip(runs, outputs)
    )
    return courses, students, plain, room, spec


def test_a_class_run_with_ungradable_notebooks_finishes_on_both_paths(graded):
    courses, students, plain, room, _ = graded
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "SchemaTooOldError" not in plain.stderr and "old version" not in plain.stderr
    assert room.returncode == 0, room.stdout + room.stderr
    assert "Traceback" not in room.stderr
    for path in courses.values():
        assert sorted(p.name for p in (path / "autograded").iterdir()) == students


def test_both_paths_give_the_same_exact_scores(graded):
    courses, students, _, _, spec = graded
    plain = _scores(courses["plain"], students)
    room = _scores(courses["classroom"], students)
    assert plain == room
    points = spec.points[NOTEBOOK]
    zeros = dict.fromkeys(points, 0.0)
    # correct: every automatic point; its written answer waits for a hand grade (0 until then)
    assert plain["correct"] == {**{c: float(p) for c, p in points.items()}, "written_regimes": 0.0}
    assert plain["origin"] == zeros
    for kind in BROKEN:
        assert plain[kind] == zeros, kind  # before: deleted_test scored 8


def test_ungradable_submissions_get_a_page_that_says_why_and_how_to_recover(graded):
    courses, _, _, _, _ = graded
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", ASSIGNMENT],
        cwd=courses["plain"],
        env=_env(courses["plain"], SEED),
        check=True,
        capture_output=True,
        timeout=600,
    )
    why = {
        "deleted_test": "test_better_upgrade are missing",
        "old_metadata": "schema_version 1",
        "duplicated_id": "better_upgrade appear more than once",
        "bad_json": "is not valid JSON",
    }
    for path in courses.values():
        for kind, text in why.items():
            folder = path / "feedback" / kind / ASSIGNMENT
            page = html.unescape((folder / "not_graded.html").read_text())
            assert text in page and "How to recover" in page, (path.name, kind)
            feedback = html.unescape((folder / f"{NOTEBOOK}.html").read_text())
            assert text in feedback and "could not be graded" in feedback, (path.name, kind)


def test_feedback_holds_no_hidden_test_no_traceback_and_nothing_from_a_cdn(graded):
    courses, students, _, _, _ = graded
    for path in courses.values():
        for student in students:
            page = (path / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
            # the hidden parts' code, and the answers cost_models' hidden comments list
            for leak in (
                "BEGIN HIDDEN TESTS",
                "_grading.recheck",
                "137, 108, 123, 114",
                "cdnjs",
                "https://cdn",
                "Traceback (most recent call last)",
            ):
                assert leak not in page, (path.name, student, leak)
    autograded = h.read(
        courses["plain"] / "autograded" / "probe" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    )
    assert "BEGIN HIDDEN TESTS" in json.dumps(autograded)  # the instructor still sees them


def _table_from_feedback(page):
    """{repr(args): expected} of every failing case the probe's feedback names."""
    found = re.findall(
        r"tokens_to_hide_gather\('(tpu-v\w+)', (\d+), (\d+), (\d+)\) is "
        r"-1\.0, expected ([0-9.e+-]+)",
        html.unescape(page),
    )
    return {repr((chip, int(n), int(d), int(f))): float(v) for chip, n, d, f, v in found}


LOOKUP = """
_TABLE = {table!r}

def tokens_to_hide_gather(chip, n, d_model, d_ff):
    return _TABLE[repr((chip, n, d_model, d_ff))]
"""


@pytest.mark.extended
def test_a_lookup_table_from_another_submissions_feedback_fails(graded):
    """The probe's feedback names its drawn cases and their answers; a table of them misses
    the cases drawn for any other submission (each submission's cases are its own: the key is
    a hash of the seed, the student and the notebook), under this cohort's seed as under
    another's. The miss is the drawn cases' alone: the visible test passes and the hidden
    one fails on a case the table does not hold (a KeyError)."""
    courses, _, _, _, spec = graded
    course = courses["plain"]
    if not (course / "feedback" / "probe").exists():
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_feedback", ASSIGNMENT],
            cwd=course,
            env=_env(course, SEED),
            check=True,
            capture_output=True,
            timeout=600,
        )
    page = (course / "feedback" / "probe" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    table = _table_from_feedback(page)
    # the hidden part's 8 fixed cases but the visible one, and 3 of this cohort's seed
    assert len(table) == 10, table
    table[repr(("tpu-v5e", 16, 8192, 28672))] = 4110.457085427784
    scored = {}
    for seed in (SEED, OTHER_SEED):
        folder = course.parent / f"lookup_{seed}"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(
            course, folder, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback")
        )
        release = h.read(folder / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
        source = h.read(folder / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
        nb = specs.submission(replaced={"tokens_to_hide_gather": LOOKUP.format(table=table)})(
            source, release
        )
        _write(folder, "lookup", nb)
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "lookup"],
            cwd=folder,
            env=_env(folder, seed),
            check=True,
            capture_output=True,
            timeout=600,
        )
        scored[seed] = _scores(folder, ["lookup"])["lookup"]["test_tokens_to_hide_gather"]
        graded_nb = h.read(folder / "autograded" / "lookup" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
        (error,) = h.error_outputs(h.cells_by_id(graded_nb)["test_tokens_to_hide_gather"])
        assert "KeyError" in error.ename + error.evalue, (seed, error.ename, error.evalue)
        assert "tokens_to_hide_gather agrees" in h.printed(graded_nb), seed  # visible passed
    # before: 1.0 under this cohort's seed (one key per cohort and cell, 2026-12-03 morning)
    assert scored == {SEED: 0.0, OTHER_SEED: 0.0}


# ---- the last mile, on the course graded by `make grade` ---------------------------------------


def _grade_by_hand(course, student, score, comment):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade("written_regimes", NOTEBOOK, ASSIGNMENT, student)
        grade.manual_score, grade.needs_manual_grade = score, False
        gb.find_comment("written_regimes", NOTEBOOK, ASSIGNMENT, student).manual_comment = comment
        gb.db.commit()


def _nbgrader(course, *args):
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=_env(course, SEED),
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.extended
def test_the_last_mile_after_make_grade(graded, tmp_path):
    from nbgrader.api import Gradebook

    courses, students, _, _, _ = graded
    course = courses["classroom"]
    # the export of this assignment alone, for a learning platform
    export = (course / "grades-cost_models.csv").read_text().splitlines()
    assert len(export) == 1 + len(students) and all(
        r.startswith("cost_models,") for r in export[1:]
    )
    # the rubric under the written answer for the grader, never in the student's page
    autograded = h.read(course / "autograded" / "correct" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    assert any("For the grader" in c.source and "Rubric" in c.source for c in autograded.cells)
    # a hand grade after make grade reaches the page without --force (before: the old page)
    _grade_by_hand(course, "correct", 1.0, "Both regimes right.")
    assert _nbgrader(course, "generate_feedback", ASSIGNMENT).returncode == 0
    page = (course / "feedback" / "correct" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert f"{NOTEBOOK} (Score: 10.0 / 10.0)" in page and "Both regimes right." in page
    assert "For the grader" not in page  # the rubric cell stays out
    # a regrade keeps the hand grade settled (before: flagged for grading again)
    assert (
        _nbgrader(course, "autograde", ASSIGNMENT, "--student", "correct", "--force").returncode
        == 0
    )
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade("written_regimes", NOTEBOOK, ASSIGNMENT, "correct")
        assert (grade.manual_score, grade.needs_manual_grade) == (1.0, False)
        assert gb.find_submission(ASSIGNMENT, "correct").score == 10.0
    # feedback released through an exchange for every student, the ungradable ones included
    # (before: release_feedback stopped at the first folder without timestamp.txt)
    root = tmp_path / "exchange"
    (root / "collectives").mkdir(parents=True)
    released = _nbgrader(course, "release_feedback", ASSIGNMENT, f"--Exchange.root={root}")
    assert released.returncode == 0, released.stdout + released.stderr
    pages = list((root / "collectives" / "feedback").glob("*.html"))
    assert len(pages) == len(students) + 4  # + the 4 not_graded.html pages
    # the graded student hands in a broken notebook: 0, hand grade included, and the page says
    # why (before: 1.0 kept, the page lost, feedback built from the old notebook)
    broken = h.read(course / "submitted" / "old_metadata" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    nbformat.write(broken, course / "submitted" / "correct" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    room = subprocess.run(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course),
            "--jobs",
            "1",
        ],
        env=_env(course, SEED),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert room.returncode == 0, room.stderr
    assert "1 not graded: 0" in room.stdout
    assert _scores(course, ["correct"])["correct"] == dict.fromkeys(
        _scores(course, ["correct"])["correct"], 0.0
    )
    folder = course / "feedback" / "correct" / ASSIGNMENT
    assert "schema_version 1" in html.unescape((folder / "not_graded.html").read_text())
    assert "schema_version 1" in html.unescape((folder / f"{NOTEBOOK}.html").read_text())


@pytest.mark.extended
def test_make_grade_with_no_gradable_submission_writes_its_report(graded):
    courses, _, _, _, _ = graded
    course = courses["plain"].parent / "none_gradable"
    shutil.copytree(
        courses["plain"],
        course,
        ignore=shutil.ignore_patterns(
            "submitted", "autograded", "feedback", "gradebook.db", ".grading", "*.csv"
        ),
    )
    shutil.copy(courses["plain"].parent / "course" / "gradebook.db", course)  # as released
    for kind in ("bad_json", "deleted_test"):
        shutil.copytree(courses["plain"] / "submitted" / kind, course / "submitted" / kind)
    room = subprocess.run(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course),
            "--jobs",
            "1",
        ],
        env=_env(course, SEED),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert room.returncode == 0 and "Traceback" not in room.stderr, room.stderr
    assert "cost_models: 2 not graded: 0" in room.stdout
    report = json.loads((course / "reports" / "cost_models.json").read_text())
    assert sorted(report) == ["bad_json", "deleted_test"]
    assert len((course / "grades.csv").read_text().splitlines()) == 3
