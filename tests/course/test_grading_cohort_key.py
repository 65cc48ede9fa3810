"""The course seed never enters a grading kernel; each test cell's hidden part gets a key.

Before (found by the review of the cluster_collectives notebook, 2026-12-02), the sandbox passed
``COLLECTIVES_COURSE_SEED`` into the kernel's environment, so a learner's cell could read it,
draw a hidden test's cases with the public task module, compute their answers with the package
and leave them in a table its function reads (tests/assignments/cluster_collectives.py's
*computed_table* submission scored 10). Now collectives_grader.pipeline.Execute writes, as the
first hidden line of each test cell, that cell's key (a hash of the seed and its grade_id), and
takes it out again after the run.

Checked here, in a real kernel (collectives_grader.sandbox's, with the sandbox on and off):
a learner's cell sees no seed and the grading mark, the visible part of a test cell no key, its
hidden part its own key, a later learner cell nothing of the seed (environment, IPython's input
history), and the notebook comes back with the cells as they were. The pipeline test grades the
computed table itself.
"""

import hashlib
import json
import subprocess
import sys

import nbformat
import pytest

from collectives.grading import cohort
from collectives_grader import pipeline

import nbgrader_helpers as h

SEED = "s3cret-seed-2027"
HIDDEN = "### BEGIN HIDDEN TESTS"


def _key(grade_id, submission=""):
    """A cell's key as exercises/README.md states it: SHA-256 of the seed, the submission (the
    student and a hash of the notebook's cell sources) and the cell's id."""
    return hashlib.sha256(f"course seed\0{SEED}\0{submission}\0{grade_id}".encode()).hexdigest()


def _submission(student, sources):
    return student + "\0" + hashlib.sha256(json.dumps(sources).encode()).hexdigest()


def test_a_cells_key_is_a_hash_of_the_seed_the_submission_and_its_id():
    assert cohort.cell_seed(SEED, "test_a") == _key("test_a")
    assert cohort.cell_seed(SEED, "test_a", "alice\0ab") == _key("test_a", "alice\0ab")
    keys = {
        cohort.cell_seed(SEED, "test_a", "alice\0ab"),
        cohort.cell_seed(SEED, "test_b", "alice\0ab"),  # another cell
        cohort.cell_seed(SEED, "test_a", "bob\0ab"),  # another student
        cohort.cell_seed(SEED, "test_a", "alice\0cd"),  # alice's next submission
        cohort.cell_seed("another-cohort", "test_a", "alice\0ab"),
    }
    assert len(keys) == 5
    assert all(SEED not in key for key in keys)


def test_the_submission_is_the_student_and_a_hash_of_the_cells():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), _test_cell("t")])
    sources = [c.source for c in nb.cells]
    name = pipeline.submission_name(nb, {"nbgrader": {"student": "alice"}})
    assert name == _submission("alice", sources)
    nb.cells[0].source = "x = 2"
    assert pipeline.submission_name(nb, {"nbgrader": {"student": "alice"}}) != name


@pytest.mark.parametrize("seed, grade_id", [("", "test_a"), (None, "test_a"), (SEED, "")])
def test_a_key_needs_a_seed_and_an_id(seed, grade_id):
    with pytest.raises(cohort.GradingError, match="must be a non-empty string"):
        cohort.cell_seed(seed, grade_id)


def test_the_key_goes_right_after_the_line_that_opens_the_hidden_tests():
    source = "check(1)\n## BEGIN HIDDEN TESTS (graded)\nrecheck(2)\n### END HIDDEN TESTS"
    keyed = pipeline.with_cell_key(source, "abc123").splitlines()
    assert keyed[:2] == ["check(1)", "## BEGIN HIDDEN TESTS (graded)"]
    assert keyed[2].startswith("import os as _cohort_os; ")
    assert f'_cohort_os.environ["{cohort.ENV}"] = ' in keyed[2] or (
        f"_cohort_os.environ['{cohort.ENV}'] = " in keyed[2]
    )
    assert "'abc123'" in keyed[2]
    assert keyed[3:] == ["recheck(2)", "### END HIDDEN TESTS"]
    assert pipeline.with_cell_key("check(1)\n", "abc123") == "check(1)\n"


def test_the_key_line_is_indented_as_the_marker_is():
    source = "if True:\n    ### BEGIN HIDDEN TESTS\n    recheck(2)\n    ### END HIDDEN TESTS\n"
    keyed = pipeline.with_cell_key(source, "abc123")
    assert keyed.splitlines()[2].startswith("    import os as _cohort_os; ")
    compile(keyed, "<cell>", "exec")  # before, the line at column 0 was an IndentationError


def _test_cell(grade_id):
    cell = nbformat.v4.new_code_cell(
        'import os\nprint("VISIBLE", repr(os.environ.get("COLLECTIVES_COURSE_SEED")))\n'
        f"{HIDDEN}\nfrom collectives.grading import cohort\n"
        f'print("HIDDEN {grade_id}", cohort.seed())\n### END HIDDEN TESTS'
    )
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": 1,
        "grade_id": grade_id,
        "schema_version": 3,
    }
    return cell


LEARNER = (
    'import os\nprint("LEARNER", repr(os.environ.get("COLLECTIVES_COURSE_SEED")), '
    'repr(os.environ.get("COLLECTIVES_GRADING")))'
)
# after a test cell: the seed in the environment or in the source of any cell run so far? (the
# cell spells it backwards, since its own source is in In too)
LATER = f'print("LATER", {SEED[::-1]!r}[::-1] in repr(In) + repr(dict(os.environ)))'

RUN = """
import json, sys
import nbformat
from collectives_grader.pipeline import Execute
nb = nbformat.reads(sys.stdin.read(), as_version=4)
execute = Execute(kernel_name="collectives-sandbox", course_seed=sys.argv[2], timeout=120)
resources = {"metadata": {"path": sys.argv[1]}, "nbgrader": {"student": "alice"}}
nb, _ = execute.preprocess(nb, resources)
nbformat.write(nb, sys.argv[3])  # not to stdout, which the kernel shares
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["on", "off"])
def test_the_kernel_never_holds_the_seed_and_each_hidden_part_gets_its_key(tmp_path, sandbox):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(LEARNER),
            _test_cell("test_a"),
            nbformat.v4.new_code_cell(LATER),
            _test_cell("test_b"),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    sources = [c.source for c in nb.cells]
    env = h.nbgrader_env(tmp_path)
    env["COLLECTIVES_COURSE_SEED"] = SEED  # as an instructor who exported it for the run
    env["COLLECTIVES_GRADING_SANDBOX"] = sandbox
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(work), SEED, str(tmp_path / "ran.ipynb")],
        input=nbformat.writes(nb),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ran = nbformat.read(tmp_path / "ran.ipynb", as_version=4)
    printed = [
        "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream").strip()
        for cell in ran.cells
    ]
    submission = _submission("alice", sources)
    key_a, key_b = _key("test_a", submission), _key("test_b", submission)
    assert printed == [
        "LEARNER None '1'",
        f"VISIBLE None\nHIDDEN test_a {key_a}",
        "LATER False",
        f"VISIBLE {key_a!r}\nHIDDEN test_b {key_b}",
    ], json.dumps(printed, indent=1)
    # the cells come back as they were: the key is not kept in the autograded notebook
    assert [c.source for c in ran.cells] == sources
