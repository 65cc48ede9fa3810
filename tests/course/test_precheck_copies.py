"""collectives_grader.precheck.package_copies: code cells that hold long runs of the package's
own source (issue 22: "the tamper report flags a submission that contains long runs of the
package's own source"), which the re-run's origin check cannot tell from a learner's own
writing once they sit under a ``def`` in the notebook.

The expected module and line of each copy come from :mod:`inspect` (where the function the
test pastes is defined), not from the code under test.
"""

import ast
import inspect
import textwrap
from pathlib import Path

import nbformat
import pytest

import collectives
from collectives.fp8.formats import get_format
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
    """The lines of ``text`` that hold code: not blank, not a comment, not in a docstring
    (a docstring is one string token, which a copy check does not count as a line)."""
    tree = ast.parse(textwrap.dedent(text))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    return [
        line
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.strip().startswith("#") and number not in docstrings
    ]


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


# the evasions and false positives a review found (/work/reviews/seed_review.md, finding 7)

QUOTED = get_format  # a package function whose code lines hold string literals
QUOTED_FILE = "collectives/fp8/formats.py"


def test_a_comment_on_every_few_lines_and_swapped_quotes_hide_no_copy(tmp_path):
    source = inspect.getsource(QUOTED)
    assert sum("'" in line or '"' in line for line in _code_lines(source)) >= 3
    swapped = source.translate(str.maketrans({"'": '"', '"': "'"}))
    commented = "\n".join(
        line + "  # mine" if k % 3 == 0 and line.strip() and '"""' not in line else line
        for k, line in enumerate(swapped.splitlines())
    )
    assert commented != source
    (runs,) = precheck.package_copies(*_folders(tmp_path, _notebook(commented))).values()
    assert [(r["module"], r["line"]) for r in runs] == [
        (QUOTED_FILE, inspect.getsourcelines(QUOTED)[1])
    ]


def test_a_list_written_one_item_per_line_is_not_a_copy(tmp_path):
    # black's layout of a list the package also writes one item per line
    honest = (
        "for name in [\n"
        + "".join(
            f'    "{name}",\n'
            for name in (
                "all_gather",
                "reduce_scatter",
                "all_reduce",
                "all_to_all",
                "broadcast",
                "reduce",
                "gather",
                "scatter",
            )
        )
        + "]:\n    print(name)\n"
    )
    imports = (
        "from collectives import (\n"
        + "".join(f"    {name},\n" for name in sorted(collectives.__all__)[:12])
        + ")\n"
    )
    nb = _notebook(honest, imports)
    assert precheck.package_copies(*_folders(tmp_path, nb)) == {}


def test_a_run_is_lines_that_follow_each_other_in_one_module(tmp_path):
    lines = [f"v{k} = f({k}, 'x')" for k in range(9)]
    package = tmp_path / "pkg"
    package.mkdir()
    # the submission's 9 lines are all the package's, but only lines 1-8 follow each other
    # in one module (b.py); a.py holds lines 0-4
    (package / "a.py").write_text("\n".join(lines[0:5]) + "\n")
    (package / "b.py").write_text("\n".join(lines[1:9]) + "\n")
    sub, release = _folders(tmp_path, _notebook("\n".join(lines)))
    (run,) = precheck.package_copies(sub, release, package_root=package)["a"]
    assert (run["module"], run["line"], run["lines"]) == ("pkg/b.py", 1, 8)
