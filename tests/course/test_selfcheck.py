"""The learner's self-check (collectives.grading.selfcheck) on the course's own notebooks.

- every autograded test cell of every source notebook has a task, naming functions its
  solution cells define, and nothing else does;
- the model answers it prints are the source notebooks' model answers, rubric included;
- end to end, on the released notebook filled in as tests/assignments/<assignment>.py's
  submissions fill it: the correct one scores every autograded point, and in the plausible
  wrong one (``"wrong"``) every task fails, with a message that names the task's function.
  Slow (each task re-runs the learner's functions in fresh processes): two assignments
  here, 26 to 46 s each on the 2-core machine under load; every other notebook was run the
  same way by hand (`python -m collectives.grading.selfcheck`) when the self-check was
  written.
"""

import pytest

from collectives.grading import selfcheck
from collectives.grading.model_answers import MODEL_ANSWERS

from assignments import load
from nbgrader_helpers import (
    EXERCISES,
    autograded_cells,
    copy_of,
    functions_defined,
    manual_cells,
    meta,
    notebooks,
    read,
    solution_cells,
    source_path,
    without_markers,
)
from nbgrader_helpers import assignments as course_assignments

ALL = [(a, nb) for a in course_assignments() for nb in notebooks(a)]


@pytest.mark.parametrize(("assignment", "notebook"), ALL, ids=[f"{a}/{n}" for a, n in ALL])
def test_every_autograded_cell_has_a_task_on_the_functions_it_grades(assignment, notebook):
    source = read(source_path(assignment, notebook))
    tasks = selfcheck.TASKS[notebook]
    assert sorted(t.test for t in tasks) == sorted(autograded_cells(source))
    defined = set()
    for cell in source.cells:
        if meta(cell).get("solution") and cell.cell_type == "code":
            defined |= functions_defined(without_markers(cell.source))
    for task in tasks:
        assert set(task.functions) <= defined, (task.test, task.functions)


@pytest.mark.parametrize(("assignment", "notebook"), ALL, ids=[f"{a}/{n}" for a, n in ALL])
def test_model_answers_are_the_source_notebooks(assignment, notebook):
    source = read(source_path(assignment, notebook))
    cells = {meta(c)["grade_id"]: c for c in source.cells if "grade_id" in meta(c)}
    written = manual_cells(source)
    assert sorted(MODEL_ANSWERS.get(notebook, {})) == sorted(written)
    for grade_id in written:
        text = cells[grade_id].source
        begin, end = "### BEGIN SOLUTION", "### END SOLUTION"
        answer = text[text.index(begin) + len(begin) : text.index(end)].strip("\n")
        assert MODEL_ANSWERS[notebook][grade_id] == answer, grade_id
        assert "**Rubric" in MODEL_ANSWERS[notebook][grade_id]


def _submission(assignment, notebook, student, folder):
    import nbformat

    spec = load(assignment)
    release = read(EXERCISES / "release" / assignment / f"{notebook}.ipynb")
    built = spec.submissions[student][notebook](
        copy_of(read(source_path(assignment, notebook))), copy_of(release)
    )
    path = folder / student / f"{notebook}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(built, path)
    return path, spec


END_TO_END = [
    ("cost_models", "ring_all_gather"),
    ("all_to_all", "bruck_all_to_all"),
    ("fp8", "fp8"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "notebook"), END_TO_END, ids=[a for a, _ in END_TO_END])
def test_a_correct_notebook_scores_full_and_a_wrong_one_is_named_per_task(
    assignment, notebook, tmp_path
):
    if not (EXERCISES / "release" / assignment).is_dir():
        pytest.fail("exercises/release/ is missing: run `make student`", pytrace=False)
    correct, spec = _submission(assignment, notebook, "correct", tmp_path)
    results, written = selfcheck.check_notebook(correct, seed=2026)
    assert [(r.test, r.passed) for r in results] == [(r.test, True) for r in results], [
        r.message for r in results if not r.passed
    ]
    want = {k: v for k, v in spec.points[notebook].items() if k not in spec.manual[notebook]}
    assert {r.test: r.points for r in results} == want
    assert sorted(written) == sorted(spec.manual[notebook])

    wrong, _ = _submission(assignment, notebook, "wrong", tmp_path)
    results, _ = selfcheck.check_notebook(wrong, seed=2026)
    for r in results:
        assert not r.passed, f"{r.test} passed a wrong answer: {r.message}"
        assert any(
            r.message.startswith(name) or f" {name}(" in r.message or name in r.message
            for name in r.functions
        ), r.message
    assert solution_cells(read(source_path(assignment, notebook)))  # the spec is the course's
