"""The learner's self-check (collectives.grading.selfcheck): reading a notebook, running its
setup and answer cells, drawing cases, the report. The end-to-end runs on the course's
notebooks (a correct one scores full, a wrong one is named per task) are in
tests/course/test_selfcheck.py."""

import inspect
import json

import numpy as np
import pytest

from collectives import GradingError
from collectives.grading import selfcheck


def _cell(source, **nbgrader):
    meta = {"nbgrader": nbgrader} if nbgrader else {}
    return {"cell_type": "code", "source": source, "metadata": meta, "outputs": []}


def _notebook(*cells):
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_load_answers_runs_setup_and_answer_cells_only():
    nb = _notebook(
        _cell("import math\nBASE = 10", grade_id="setup", locked=True),
        _cell("def f(n):\n    return BASE + math.floor(n)", grade_id="f", solution=True),
        _cell(
            "raise RuntimeError('a visible test')",
            grade_id="test_f",
            grade=True,
            locked=True,
            points=1,
        ),
        _cell("f = None   # the learner's scratch cell"),
        _cell(
            "def g(n):\n    raise ValueError('half written')\nh = 1 / 0",
            grade_id="g",
            solution=True,
        ),
    )
    answers = selfcheck.load_answers(nb, "scratch")
    assert answers["f"](2.5) == 12  # the scratch cell did not run
    assert "g" in answers and "h" not in answers  # the cell stopped at its error
    # the function's source can be read back, as the isolated re-run needs
    assert inspect.getsource(answers["f"]).startswith("def f(n):")


def test_a_failing_setup_cell_is_a_grading_error():
    nb = _notebook(_cell("import not_a_module_anywhere", grade_id="setup", locked=True))
    with pytest.raises(GradingError, match="setup cell 0 fails: ModuleNotFoundError"):
        selfcheck.load_answers(nb)


def test_read_notebook_knows_the_courses_notebooks_only(tmp_path):
    other = tmp_path / "my_notes.ipynb"
    other.write_text(json.dumps(_notebook()))
    with pytest.raises(
        GradingError, match=r"my_notes\.ipynb is not one of the course's graded notebooks"
    ):
        selfcheck.read_notebook(other)
    broken = tmp_path / "fabric.ipynb"
    broken.write_text("{not json")
    with pytest.raises(GradingError, match=r"cannot read .* as a notebook"):
        selfcheck.read_notebook(broken)


def test_draws_are_fresh_distinct_and_valid():
    rng = np.random.default_rng(3)
    cases = selfcheck._draws(rng, 5, lambda r: int(r.integers(0, 100)), lambda c: c % 2 == 0)
    assert len(set(cases)) == 5 and all(c % 2 == 0 for c in cases)
    with pytest.raises(GradingError, match="could not draw its cases"):
        selfcheck._draws(rng, 2, lambda r: 1)

    # a case the reference refuses (a tie it raises a GradingError for) is drawn again
    def refuse_odd(c):
        if c % 2:
            raise GradingError("a tie")
        return True

    assert all(
        c % 2 == 0 for c in selfcheck._draws(rng, 3, lambda r: int(r.integers(0, 50)), refuse_odd)
    )


def test_every_task_is_a_test_cell_of_its_notebook():
    for notebook, tasks in selfcheck.TASKS.items():
        tests = [t.test for t in tasks]
        assert len(tests) == len(set(tests)), notebook
        assert all(t.test.startswith("test_") and t.functions for t in tasks), notebook


def test_the_report_names_each_task_and_the_total():
    results = [
        selfcheck.TaskResult("test_a", ("a",), 3, True, "4 fresh checks passed"),
        selfcheck.TaskResult("test_b", ("b", "c"), 2, False, "b(4) is 1, expected 2"),
    ]
    text = selfcheck._report("x/ring_all_gather.ipynb", results, {"written_regimes": 1}, 12)
    assert text.splitlines() == [
        "Self-check of ring_all_gather.ipynb on fresh cases (seed 12):",
        "  3/3  a: passed - 4 fresh checks passed",
        "  0/2  b, c: FAILED - b(4) is 1, expected 2",
        "  -/1  written_regimes: a written answer, graded by hand; --model-answers shows a "
        "model answer after you have written yours",
        "Score: 3 of 5 autograded points (written answers: 1 more, graded by hand).",
        "These cases are the self-check's own; your instructor's hidden tests check others.",
    ]


def test_main_refuses_a_notebook_it_does_not_know(tmp_path, capsys):
    other = tmp_path / "notes.ipynb"
    other.write_text(json.dumps(_notebook()))
    assert selfcheck.main([str(other)]) == 2
    assert "is not one of the course's graded notebooks" in capsys.readouterr().err
    assert selfcheck.main([str(other), "--model-answers"]) == 2
    assert selfcheck.main([str(tmp_path / "ring_all_gather.ipynb"), "--model-answers"]) == 0
    assert "--- written_regimes: a model answer ---" in capsys.readouterr().out
