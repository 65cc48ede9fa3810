"""Every graded assignment end to end, through nbgrader, in a temporary course.

The assignments are the folders of ``exercises/source/`` (the release script's rule); each one
needs a spec, ``tests/assignments/<assignment>.py``: points, solutions, the submissions to build
and their exact scores and messages (format and guide: tests/assignments/__init__.py). An
assignment without a spec fails ``test_every_assignment_has_a_spec`` with a skeleton to start
from.

Static checks of the source notebooks run first (fast), for every assignment. The pipeline tests
(``slow``) run in two halves of the assignments (``work_units.FIRST_HALF`` and the others), so
that ``make test`` grades them on two workers at once (each half is a unit of work of its
own, tests/work_units.py). The tests of a half share one temporary course directory (copies of
``exercises/nbgrader_config.py`` and ``exercises/source/``; the repository's ``exercises/`` is
never touched) in which nbgrader's command-line tools run once each for that half's
assignments (see :class:`nbgrader_helpers.Course`):

1. ``scripts/release_notebooks.py`` (``nbgrader generate_assignment --force`` per assignment);
2. ``nbgrader validate`` on every source notebook (one run): every test passes;
3. ``nbgrader validate --invert`` on every release notebook (one run): every test fails;
4. per assignment, the spec's submissions (at least *correct*, *blank*, *partial*, *hostile*),
   built from the source and release notebooks with nbformat, then ``nbgrader autograde
   <assignment>`` (one run for all its students); the scores in the gradebook, per cell and in
   total, exactly; the test cells restored; the errors and printed lines;
5. per assignment, ``nbgrader generate_feedback``: one HTML report per student and notebook
   with the right scores and messages;
6. ``nbgrader export`` (one run): the CSV, row by row, for every assignment of the half.

A full run does this for every assignment; with ``-k <assignment>`` only the assignments of the
selected pipeline tests are released, validated, graded and exported.
"""

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import assignments as specs
import nbgrader_helpers as h
from work_units import HALF_IDS, pipeline_half

ASSIGNMENTS = h.assignments()
SPECCED = [a for a in ASSIGNMENTS if specs.spec_path(a).is_file()]
THIS_FILE = Path(__file__).resolve()

half = pipeline_half  # 0 or 1: which of the two courses grades an assignment


every_assignment = pytest.mark.parametrize("assignment", ASSIGNMENTS)
specced = pytest.mark.parametrize("assignment", SPECCED)

# nbgrader export's columns (exercises/README.md, section 5)
EXPORT_COLUMNS = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
]


def spec(assignment):
    """The assignment's spec, or a failure saying what is wrong with it."""
    try:
        return specs.load(assignment)
    except specs.SpecError as exc:
        pytest.fail(str(exc), pytrace=False)


def step(function, *args):
    """A step of the pipeline (Course.validate, .autograde, ...), or a failure with its output."""
    try:
        return function(*args)
    except h.CommandFailed as exc:
        pytest.fail(str(exc), pytrace=False)


def sources(assignment):
    return {nb: h.read(h.source_path(assignment, nb)) for nb in h.notebooks(assignment)}


# ---- every assignment has a spec ---------------------------------------------------------------


def test_the_course_has_assignments():
    assert ASSIGNMENTS, "exercises/source/ holds no assignment"


@every_assignment
def test_every_assignment_has_a_spec(assignment):
    if not specs.spec_path(assignment).is_file():
        pytest.fail(specs.missing_spec_message(assignment), pytrace=False)


def test_every_spec_is_for_an_assignment():
    stale = [name for name in specs.spec_names() if name not in ASSIGNMENTS]
    assert not stale, (
        f"tests/assignments/ has specs for {stale}, which are not folders of "
        f"exercises/source/ with a notebook (found: {ASSIGNMENTS})"
    )


@specced
def test_spec_is_complete_and_consistent(assignment):
    spec(assignment)


# ---- the source notebooks, statically ----------------------------------------------------------


@every_assignment
def test_source_is_valid_and_stored_without_outputs(assignment):
    for name, nb in sources(assignment).items():
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, (name, cell.source[:60])


@every_assignment
def test_grade_ids_are_unique_and_cells_are_autograded_or_written_answers(assignment):
    for name, nb in sources(assignment).items():
        ids = [h.meta(c)["grade_id"] for c in nb.cells if h.meta(c)]
        assert len(ids) == len(set(ids)), (name, sorted(i for i in ids if ids.count(i) > 1))
        # test cells are locked code; hand-graded answers are markdown with a hidden rubric;
        # no tasks
        for cell in nb.cells:
            meta = h.meta(cell)
            assert not meta.get("task"), (name, meta.get("grade_id"))
            if meta.get("grade") and meta.get("solution"):
                assert cell.cell_type == "markdown", meta["grade_id"]
                assert meta.get("points", 0) > 0, meta["grade_id"]
                solution = cell.source[cell.source.find(h.BEGIN_SOLUTION) :]
                assert h.BEGIN_SOLUTION in cell.source and h.END_SOLUTION in solution, (
                    meta["grade_id"],
                    "model answer and rubric between the solution markers",
                )
                assert "**Rubric" in solution[: solution.find(h.END_SOLUTION)], (
                    meta["grade_id"],
                    "a rubric for the grader, hidden from learners",
                )
            elif meta.get("grade"):
                assert cell.cell_type == "code" and meta.get("locked") is True, meta["grade_id"]
                assert meta.get("points", 0) > 0, meta["grade_id"]


@specced
def test_points_add_up(assignment):
    s = spec(assignment)
    graded = {name: h.graded_cells(nb) for name, nb in sources(assignment).items()}
    assert graded == s.points
    manual = {name: tuple(h.manual_cells(nb)) for name, nb in sources(assignment).items()}
    assert manual == s.manual, "MANUAL must name exactly the notebook's hand-graded answers"
    assert sum(sum(cells.values()) for cells in graded.values()) == s.max_score


@specced
def test_solution_and_test_cells_are_paired(assignment):
    s = spec(assignment)
    for name, nb in sources(assignment).items():
        cells = h.cells_by_id(nb)
        pairs = s.solutions[name]
        assert set(h.solution_cells(nb)) - set(s.manual[name]) == set(pairs), (
            name,
            "solution cells",
        )
        assert {t for tests in pairs.values() for t in tests} == set(h.autograded_cells(nb)), (
            name,
            "every test cell must test a solution",
        )
        for solution_id, test_ids in pairs.items():
            solution = cells[solution_id]
            assert h.meta(solution)["solution"] is True and solution.cell_type == "code"
            assert h.BEGIN_SOLUTION in solution.source and h.END_SOLUTION in solution.source
            defined = {n for n in h.top_level_names(solution.source) if not n.startswith("_")}
            functions = {f for f in h.functions_defined(solution.source) if not f.startswith("_")}
            assert defined, (solution_id, "defines nothing for the tests to check")
            if s.named_solutions[name]:
                assert solution_id in defined, (solution_id, "must define the name of its cell")
            hidden = ""
            for test_id in test_ids:
                test = cells[test_id]
                assert h.meta(test)["locked"] is True, test_id
                assert "collectives.grading" in h.visible_part(test.source), test_id
                part = h.hidden_part(test.source)
                assert "importlib.reload(collectives.grading)" in part, test_id
                assert "_grading.recheck(" in part, test_id
                hidden += part + "\n"
            called = h.functions_called_through_grading(hidden)
            assert functions <= called, (
                solution_id,
                "call these through _grading.call",
                sorted(functions - called),
            )
            read = set(h.names_read_unbound(hidden))
            assert defined - functions <= read, (
                solution_id,
                "hidden tests never read",
                sorted(defined - functions - read),
            )


@every_assignment
def test_hidden_tests_use_no_name_the_notebook_could_shadow(assignment):
    """A learner's cell can rebind any global, builtins included (``range = ...``): the hidden
    tests may only read names they bind themselves, and the learners' answers."""
    for name, nb in sources(assignment).items():
        answers = h.learner_names(nb)
        for grade_id, cell in h.cells_by_id(nb).items():
            if h.meta(cell).get("grade"):
                unbound = h.names_read_unbound(h.hidden_part(cell.source), answers)
                assert not unbound, (name, grade_id, unbound)


# ---- the pipeline ------------------------------------------------------------------------------


def selected_assignments(session):
    """The assignments of the selected pipeline tests (all of them when none is parametrised):
    ``pytest -k all_reduce`` releases, validates, grades and exports that assignment only."""
    selected = {
        item.callspec.params["assignment"]
        for item in session.items
        if item.path == THIS_FILE
        and item.get_closest_marker("slow")
        and "assignment" in getattr(getattr(item, "callspec", None), "params", {})
    }
    return () if selected >= set(ASSIGNMENTS) else tuple(sorted(selected))


@pytest.fixture(scope="module")
def courses(request, tmp_path_factory):
    """``courses(half)``: a copy of the course directory with the half's assignments under test
    released by the release script (every assignment of the half, in a full run); made on
    first use, so that a worker builds only the half it runs."""
    made = {}
    selected = selected_assignments(request.session) or ASSIGNMENTS

    def course_of(which):
        if which not in made:
            names = [a for a in selected if half(a) == which]
            if not names:
                pytest.skip(f"no assignment of half {which} is selected")
            made[which] = h.Course.create(
                tmp_path_factory.mktemp(f"grading_pipeline_{which}"), names
            )
            assert made[which].release_output == ""  # quiet on success
        return made[which]

    return course_of


@pytest.fixture
def course(request, courses):
    """The course of the half of the test's ``assignment`` (of its ``which`` when it has none)."""
    params = request.node.callspec.params
    return courses(half(params["assignment"]) if "assignment" in params else params["which"])


def specced_in(course):
    """The released assignments that have a spec."""
    return [a for a in course.assignments if a in SPECCED]


def autograded(course, assignment):
    """The spec, once the assignment's submissions are autograded."""
    spec(assignment)
    return step(course.autograde, assignment)


@pytest.mark.slow
@every_assignment
def test_release_strips_solutions_and_hidden_tests(course, assignment):
    for name in course.notebooks(assignment):
        source, release = course.source(assignment, name), course.release(assignment, name)
        text = json.dumps(release)
        for marker in (*h.release_script().LEAKS, "recheck", "_grading"):
            assert marker not in text, (name, marker)
        assert [c.cell_type for c in release.cells] == [c.cell_type for c in source.cells]
        for source_cell, release_cell in zip(source.cells, release.cells):
            assert h.meta(release_cell).get("grade_id") == h.meta(source_cell).get("grade_id")
            assert release_cell.source == h.released_source(source_cell), (
                name,
                h.meta(source_cell).get("grade_id"),
            )
        cells = h.cells_by_id(release)
        for grade_id in h.solution_cells(source):
            stub = h.CODE_STUB if cells[grade_id].cell_type == "code" else h.TEXT_STUB
            assert stub.splitlines()[-1] in cells[grade_id].source, grade_id
            assert "Rubric" not in cells[grade_id].source, grade_id
        for grade_id in h.autograded_cells(source):
            assert "collectives.grading" in cells[grade_id].source, grade_id  # visible tests
        assert all(c.get("outputs", []) == [] for c in release.cells)


# nbgrader validate on one assignment in make test, the others in make test-extended: the
# exact autograde scores of every spec's correct submission (full marks) and blank one (0 on
# every test cell) already show what validate shows, in the same nbgrader, on every assignment
VALIDATED = "cost_models"


@pytest.mark.slow
@pytest.mark.parametrize(
    "assignment",
    [a if a == VALIDATED else pytest.param(a, marks=pytest.mark.extended) for a in ASSIGNMENTS],
)
@pytest.mark.parametrize(
    "invert, verdict",
    [
        (False, "Success! Your notebook passes all the tests."),  # the source passes
        (True, "Success! The notebook does not pass any tests."),  # the release fails all
    ],
    ids=["source_passes_validate", "release_fails_validate_invert"],
)
def test_validate(course, assignment, invert, verdict):
    outputs = step(course.validate, invert, (assignment,))
    for name in course.notebooks(assignment):
        output = outputs[(assignment, name)]
        assert verdict in output, output


@pytest.mark.slow
@specced
def test_autograde_scores_are_exact(course, assignment):
    from nbgrader.api import Gradebook

    s = autograded(course, assignment)
    recorded, max_scores = {}, {}
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        for name in s.notebooks:
            notebook = gb.find_notebook(name, assignment)
            recorded[name] = {cell.name: cell.max_score for cell in notebook.grade_cells}
        for student in s.students:
            max_scores[student] = gb.find_submission(assignment, student).max_score
    assert recorded == s.points  # the gradebook knows the points
    assert max_scores == dict.fromkeys(s.students, s.max_score)
    # as autograde left them: every test cell scored, every written answer awaiting a grade
    # unless it was handed in untouched (0, by nbgrader itself)
    state = course.after_autograde[assignment]
    wanted = course.expected_after_autograde(assignment, s)
    scores, totals, waiting = {}, {}, {}
    for student in s.students:
        cells, total, needs = state[student]
        scores[student] = cells
        totals[student] = (total, needs)
        waiting[student] = any(w[1] for nb in wanted[student].values() for w in nb.values())
    assert scores == wanted
    assert totals == {
        student: (
            sum(w[0] or 0 for nb in wanted[student].values() for w in nb.values()),
            waiting[student],
        )
        for student in s.students
    }


@pytest.mark.slow
@specced
def test_grades_given_by_hand_count(course, assignment):
    """The written answers' grades, set through nbgrader's gradebook API after autograde
    (Course.grade_by_hand, as the formgrader does), make the totals EXPECTED says."""
    from nbgrader.api import Gradebook

    s = step(course.grade_by_hand, assignment)
    scores, totals = {}, {}
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        for student in s.students:
            submission = gb.find_submission(assignment, student)
            totals[student] = (submission.score, submission.needs_manual_grade)
            scores[student] = {
                name: {
                    cell: gb.find_grade(cell, name, assignment, student).score
                    for cell in s.points[name]
                }
                for name in s.notebooks
            }
    assert scores == s.expected
    assert totals == {student: (s.totals[student], False) for student in s.students}


@pytest.mark.slow
@specced
def test_test_cells_are_restored_and_fail_exactly_where_they_score_0(course, assignment):
    """nbgrader grades the source's test cells (hidden tests included), whatever the student did
    to them; a cell that scores 0 shows its error, a cell with full points none."""
    s = autograded(course, assignment)
    for name in s.notebooks:
        source = h.cells_by_id(course.source(assignment, name))
        for student in s.students:
            cells = h.cells_by_id(course.autograded_nb(assignment, student, name))
            for grade_id, points in s.expected[student][name].items():
                if grade_id in s.manual[name]:
                    continue  # the student's own written answer
                assert cells[grade_id].source == source[grade_id].source, (student, grade_id)
                errors = h.error_outputs(cells[grade_id])
                assert len(errors) == (1 if points == 0 else 0), (student, grade_id, errors)


@pytest.mark.slow
@specced
def test_failing_cells_show_the_expected_errors(course, assignment):
    """ERRORS: for the hostile submission, the isolated re-check's verdicts on the wrong answers
    (the in-kernel checks it disabled would have passed them); for the partial one, the
    feedback a learner reads."""
    s = autograded(course, assignment)
    problems = []
    for student, by_notebook in s.errors.items():
        for name, expected in by_notebook.items():
            cells = h.cells_by_id(course.autograded_nb(assignment, student, name))
            for grade_id, error in expected.items():
                errors = h.error_outputs(cells[grade_id])
                if len(errors) != 1:
                    problems.append(f"{student} {grade_id}: {len(errors)} error outputs")
                    continue
                problems += [
                    f"{student} {grade_id}: the error {p}"
                    for p in error.problems(errors[0].ename, errors[0].evalue)
                ]
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@specced
def test_printed_lines(course, assignment):
    """PRINTED: for the hostile submission, its tampering did fool the visible, in-kernel checks
    (each printed its success line), so its zeros come from the hidden re-check."""
    s = autograded(course, assignment)
    for student, by_notebook in s.printed.items():
        for name, texts in by_notebook.items():
            printed = h.printed(course.autograded_nb(assignment, student, name))
            missing = [t for t in texts if t not in printed]
            assert not missing, (student, name, missing, printed)


@pytest.mark.slow
@specced
def test_feedback_reports_each_students_scores_and_messages(course, assignment):
    s = autograded(course, assignment)
    step(course.feedback, assignment)
    for student in s.students:
        for name in s.notebooks:
            report = course.feedback_html(assignment, student, name)
            total = sum(s.expected[student][name].values())
            assert (
                f"{name} (Score: {float(total)} / {float(sum(s.points[name].values()))})"
            ) in report, (student, name)
            for cell, points in s.expected[student][name].items():
                kind = "Written response" if cell in s.manual[name] else "Test cell"
                assert (
                    f'<a href="#{cell}">{kind}</a> (Score: {float(points)} / '
                    f"{float(s.points[name][cell])})"
                ) in report, (student, cell)
            if student == "hostile":
                continue  # its IPython tampering replaces its tracebacks in the report
            for cell, error in s.errors.get(student, {}).get(name, {}).items():
                for text in error.texts():
                    assert html.escape(text, quote=False) in report, (student, cell, text)


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1], ids=HALF_IDS)
def test_export_has_one_row_per_assignment_and_student(course, which):
    fields, rows = step(course.export, specced_in(course))
    assert fields == EXPORT_COLUMNS
    students = set()
    for assignment in specced_in(course):
        try:
            students |= set(specs.load(assignment).students)
        except specs.SpecError:
            pass  # its own tests report it
    assert set(rows) == {(a, s) for a in course.assignments for s in students}


@pytest.mark.slow
@specced
def test_export_rows(course, assignment):
    s = autograded(course, assignment)
    _, rows = step(course.export, specced_in(course))
    index = course.assignments.index(assignment)
    for j, student in enumerate(s.students):
        row = rows[(assignment, student)]
        assert row["timestamp"] == h.timestamp(index, j).strftime("%Y-%m-%d %H:%M:%S"), student
        assert float(row["raw_score"]) == s.totals[student], student
        assert float(row["late_submission_penalty"]) == 0.0, student
        assert float(row["score"]) == s.totals[student], student
        assert float(row["max_score"]) == s.max_score, student
    # students of other assignments, who submitted nothing to this one, get 0
    for (other, student), row in rows.items():
        if other == assignment and student not in s.students:
            assert row["timestamp"] == "", student
            assert float(row["score"]) == 0.0 and float(row["raw_score"]) == 0.0, student
            assert float(row["max_score"]) == s.max_score, student


# ---- the release script's failures -------------------------------------------------------------


def test_release_script_rejects_an_unknown_assignment(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(h.EXERCISES / "source", course / "source")
    shutil.copy(h.EXERCISES / "nbgrader_config.py", course)
    proc = subprocess.run(
        [sys.executable, str(h.RELEASE_SCRIPT), "--course-dir", str(course), "no_such_assignment"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "no assignment no_such_assignment" in proc.stderr
    assert f"found: {', '.join(h.assignments(course))})" in proc.stderr
    assert not (course / "release").exists()


def _release_with_a_broken_assignment(tmp_path, *others):
    """Release a course holding the assignments ``others`` (copied from exercises/source/) and
    ``broken``, whose notebook has a solution marker in a cell nbgrader does not know as a
    solution cell (nbgrader refuses it); returns the course folder and the finished process."""
    course = tmp_path / "course"
    for name in others:
        shutil.copytree(h.EXERCISES / "source" / name, course / "source" / name)
    (course / "source" / "broken").mkdir(parents=True)
    shutil.copy(h.EXERCISES / "nbgrader_config.py", course)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"
            )
        ]
    )
    nbformat.write(nb, course / "source" / "broken" / "broken.ipynb")
    proc = subprocess.run(
        [sys.executable, str(h.RELEASE_SCRIPT), "--course-dir", str(course)],
        capture_output=True,
        text=True,
        env=h.nbgrader_env(tmp_path),
    )
    return course, proc


@pytest.mark.slow
def test_release_script_reports_nbgrader_failures(tmp_path):
    """nbgrader refuses the broken assignment, and the script says which command failed,
    with nbgrader's output."""
    _, proc = _release_with_a_broken_assignment(tmp_path)
    assert proc.returncode == 1
    assert "`nbgrader generate_assignment broken --force` failed" in proc.stderr
    assert "solution" in proc.stderr.lower()


@pytest.mark.slow
def test_a_failing_full_release_names_the_assignment_that_fails(tmp_path):
    """Releasing every folder of source/ is one nbgrader run; when it fails, the script
    generates the assignments one at a time and names the one nbgrader refuses (the good one
    is still released)."""
    course, proc = _release_with_a_broken_assignment(tmp_path, "cost_models")
    assert proc.returncode == 1
    assert "`nbgrader generate_assignment broken --force` failed" in proc.stderr
    assert "'*'" not in proc.stderr
    assert (course / "release" / "cost_models" / "ring_all_gather.ipynb").is_file()
