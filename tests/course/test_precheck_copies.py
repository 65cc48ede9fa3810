"""collectives_grader.precheck.package_copies: code cells that hold long runs of the package's
own source (issue 22: "the tamper report flags a submission that contains long runs of the
package's own source"), which the re-run's origin check cannot tell from a learner's own
writing once they sit under a ``def`` in the notebook.

The expected module and line of each copy come from :mod:`inspect` (where the function the
test pastes is defined), not from the code under test.
"""

import inspect
from pathlib import Path

import nbformat
import pytest

from collectives.grading import cohort
from collectives_grader import precheck

import nbgrader_helpers as h

PASTED = cohort.cases  # a package function of more than COPY_LINES code lines
PASTED_FILE = "collectives/grading/cohort.py"


def _notebook(*sources, grade_id="answer"):
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    cells[0].metadata["nbgrader"] = {
        "grade": False,
        "solution": True,
        "locked": False,
        "grade_id": grade_id,
        "schema_version": 3,
    }
    return nbformat.v4.new_notebook(cells=cells)


def _folders(tmp_path, submitted, released=None):
    (tmp_path / "release").mkdir()
    (tmp_path / "sub").mkdir()
    nbformat.write(released or _notebook("# your answer here"), tmp_path / "release" / "a.ipynb")
    nbformat.write(submitted, tmp_path / "sub" / "a.ipynb")
    return tmp_path / "sub", tmp_path / "release"


def _code_lines(text):
    return [line for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_pasted_function_is_long_enough_to_be_reported():
    assert len(_code_lines(inspect.getsource(PASTED))) >= precheck.COPY_LINES + 2


def test_a_pasted_package_function_is_reported_with_its_module_and_line(tmp_path):
    source, first_line = inspect.getsourcelines(PASTED)
    pasted = "import numpy as np\n\n" + "".join(source) + "\nanswer = cases\n"
    report = precheck.package_copies(*_folders(tmp_path, _notebook(pasted)))
    ((run,),) = report.values()
    assert list(report) == ["a"]
    assert run["cell"] == "answer" and run["module"] == PASTED_FILE
    assert run["line"] == first_line
    assert run["lines"] == len(_code_lines("".join(source)))


def test_a_copy_reindented_and_respaced_in_a_plain_cell_is_reported(tmp_path):
    source = inspect.getsource(PASTED)
    respaced = "\n".join(
        "    " + line.replace(" = ", "=").replace(", ", ",") for line in source.splitlines()
    )
    nb = _notebook("x = 1", "if True:\n" + respaced + "\n    pass\n")
    (runs,) = precheck.package_copies(*_folders(tmp_path, nb)).values()
    assert [(r["cell"], r["module"]) for r in runs] == [("cell 1", PASTED_FILE)]


def test_a_short_excerpt_and_the_course_solutions_are_not_reported(tmp_path):
    source = _code_lines(inspect.getsource(PASTED))
    short = "\n".join(source[: precheck.COPY_LINES - 1])
    assert precheck.package_copies(*_folders(tmp_path, _notebook(short))) == {}
    for path in sorted(h.EXERCISES.glob("source/*/*.ipynb")):
        folder = tmp_path / path.parent.name
        (folder / "sub").mkdir(parents=True)
        (folder / "release").mkdir()
        (folder / "sub" / path.name).write_bytes(path.read_bytes())
        nbformat.write(_notebook("pass"), folder / "release" / path.name)
        assert precheck.package_copies(folder / "sub", folder / "release") == {}, path


def test_lines_the_release_already_holds_do_not_count(tmp_path):
    given = inspect.getsource(PASTED)
    report = precheck.package_copies(
        *_folders(tmp_path, _notebook(given), released=_notebook(given))
    )
    assert report == {}


@pytest.mark.parametrize("text", ["{ not json", '{"cells": 3}'])
def test_unreadable_notebooks_are_left_to_the_precheck(tmp_path, text):
    sub, release = _folders(tmp_path, _notebook("pass"))
    Path(sub / "a.ipynb").write_text(text)
    assert precheck.package_copies(sub, release) == {}
