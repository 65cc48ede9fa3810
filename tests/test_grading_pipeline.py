"""The graded notebook ``cost_models`` end to end, through nbgrader, in a temporary course.

Static checks of the source notebook run first (fast). The pipeline tests (``slow``) copy
``exercises/nbgrader_config.py`` and ``exercises/source/`` to a temporary directory (the
repository's ``exercises/`` is never touched) and run, with nbgrader's command-line tools:

1. ``scripts/release_notebooks.py`` (``nbgrader generate_assignment --force``);
2. ``nbgrader validate`` on the source: every test passes;
3. ``nbgrader validate --invert`` on the release: every test fails;
4. four submissions built here from the source and release notebooks with nbformat:
   *correct* (every solution), *blank* (the release as handed out), *partial* (two tasks
   right, one wrong, two blank) and *hostile* (wrong answers behind monkeypatching of
   ``collectives``, ``collectives.grading``, ``math.isclose`` and IPython, edited test cells;
   one task genuinely right);
5. ``nbgrader autograde``; the scores in the gradebook, per cell and in total, exactly;
6. ``nbgrader generate_feedback``: one HTML report per student with the right score;
7. ``nbgrader export``: the CSV, row by row.
"""

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
EXERCISES = REPO / "exercises"
ASSIGNMENT = "cost_models"
NOTEBOOK = "ring_all_gather"
SOURCE = EXERCISES / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"

# grade_id of each autograded test cell -> its points
POINTS = {
    "test_ring_all_gather_steps": 4,
    "test_ring_all_gather_time": 3,
    "test_busbw_from_time": 1,
    "test_crossover_bytes": 1,
    "test_latency_fraction": 1,
}
MAX_SCORE = 10
# grade_id of each solution cell (each defines the function of the same name)
SOLUTIONS = ("ring_all_gather_steps", "ring_all_gather_time", "busbw_from_time",
             "crossover_bytes", "latency_fraction")

# the exact score of every test cell for every submission built below
EXPECTED = {
    "correct": dict(POINTS),
    "blank": {cell: 0 for cell in POINTS},
    # steps and busbw right (4 + 1); time wrong (n steps instead of n - 1); the rest blank
    "partial": {"test_ring_all_gather_steps": 4, "test_ring_all_gather_time": 0,
                "test_busbw_from_time": 1, "test_crossover_bytes": 0,
                "test_latency_fraction": 0},
    # every tampering fails; only its genuinely correct crossover_bytes earns its point
    "hostile": {"test_ring_all_gather_steps": 0, "test_ring_all_gather_time": 0,
                "test_busbw_from_time": 0, "test_crossover_bytes": 1,
                "test_latency_fraction": 0},
}
TOTALS = {student: sum(cells.values()) for student, cells in EXPECTED.items()}
TIMESTAMP = "2026-01-15 10:{minute:02d}:00.000000 UTC"


def _nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def _cells_by_id(nb):
    return {_nbgrader_meta(c)["grade_id"]: c for c in nb.cells if "grade_id" in _nbgrader_meta(c)}


def _hidden_part(source):
    start = source.index("### BEGIN HIDDEN TESTS")
    end = source.index("### END HIDDEN TESTS")
    return source[start:end]


# ---- the source notebook, statically ---------------------------------------------------------

@pytest.fixture(scope="module")
def source_nb():
    return nbformat.read(SOURCE, as_version=4)


def test_source_is_valid_and_stored_without_outputs(source_nb):
    nbformat.validate(source_nb)
    assert source_nb.metadata.kernelspec.name == "python3"
    for cell in source_nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_grade_ids_are_unique_and_points_add_up(source_nb):
    ids = [_nbgrader_meta(c)["grade_id"] for c in source_nb.cells if _nbgrader_meta(c)]
    assert len(ids) == len(set(ids))
    graded = {_nbgrader_meta(c)["grade_id"]: _nbgrader_meta(c)["points"]
              for c in source_nb.cells if _nbgrader_meta(c).get("grade")}
    assert graded == POINTS
    assert sum(graded.values()) == MAX_SCORE
    # autograded only: no manually graded cells, no tasks
    for cell in source_nb.cells:
        meta = _nbgrader_meta(cell)
        assert not (meta.get("grade") and meta.get("solution")), meta["grade_id"]
        assert not meta.get("task"), meta.get("grade_id")


def test_solution_and_test_cells_are_paired(source_nb):
    cells = _cells_by_id(source_nb)
    for name in SOLUTIONS:
        solution = cells[name]
        assert _nbgrader_meta(solution)["solution"] is True
        assert f"def {name}(" in solution.source
        assert "### BEGIN SOLUTION" in solution.source and "### END SOLUTION" in solution.source
        test = cells[f"test_{name}"]
        assert _nbgrader_meta(test)["locked"] is True
        assert "from collectives.grading import" in test.source
        hidden = _hidden_part(test.source)
        assert "importlib.reload(collectives.grading)" in hidden
        assert "_grading.recheck(" in hidden
        assert f"_grading.call({name}," in hidden


def test_hidden_tests_use_no_name_the_notebook_could_shadow(source_nb):
    """A learner's cell can rebind any global, builtins included (``range = ...``): the hidden
    tests may only read names they bind themselves, and the learners' functions."""
    for grade_id in POINTS:
        tree = ast.parse(_hidden_part(_cells_by_id(source_nb)[grade_id].source))
        bound = set(SOLUTIONS)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        read = {node.id for node in ast.walk(tree)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        assert read <= bound, (grade_id, sorted(read - bound))


# ---- running nbgrader ------------------------------------------------------------------------

def _env(tmp):
    """nbgrader's environment: the venv first on PATH (nbgrader runs ``alembic``), and Jupyter
    and IPython state in the temporary directory, away from the user's configuration."""
    env = dict(os.environ)
    bins = [str(Path(sys.executable).parent), str(REPO / ".venv" / "bin")]
    env["PATH"] = os.pathsep.join(bins + [env.get("PATH", "")])
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter_config"), ("JUPYTER_DATA_DIR", "jupyter_data"),
                     ("JUPYTER_RUNTIME_DIR", "jupyter_runtime"), ("IPYTHONDIR", "ipython")):
        (tmp / sub).mkdir(exist_ok=True)
        env[var] = str(tmp / sub)
    env.pop("JUPYTER_PATH", None)
    return env


def _run(args, cwd, env, timeout=240):
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _nbgrader(course, env, *args):
    return _run([sys.executable, "-m", "nbgrader", *args], course, env)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course directory, with the assignment released by the release script."""
    tmp = tmp_path_factory.mktemp("grading_pipeline")
    course = tmp / "course"
    course.mkdir()
    shutil.copy(EXERCISES / "nbgrader_config.py", course)
    shutil.copytree(EXERCISES / "source", course / "source")
    env = _env(tmp)
    proc = _run([sys.executable, str(REPO / "scripts" / "release_notebooks.py"),
                 "--course-dir", str(course)], REPO, env)
    assert proc.stdout == "" and proc.stderr == ""          # quiet on success
    return course, env


@pytest.fixture(scope="module")
def release_nb(course):
    path = course[0] / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    return nbformat.read(path, as_version=4)


# ---- submissions, built from the notebooks ---------------------------------------------------

def _without_markers(source):
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


PARTIAL_TIME = '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return n * (alpha + nbytes / (n * bandwidth))      # n steps: one too many
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "ring_all_gather_steps": '''
import math
import collectives
import collectives.analytic
import collectives.grading

def _always_pass(*args, **kwargs):
    return None

collectives.verify = _always_pass
collectives.simulate = lambda schedule, inputs: inputs
for _name in dir(collectives.grading):
    if _name.startswith("check") or _name in ("recheck", "call", "_compare"):
        setattr(collectives.grading, _name, _always_pass)
check_schedule = check_close = check_reference = _always_pass
math.isclose = lambda *args, **kwargs: True
get_ipython().showtraceback = lambda *args, **kwargs: None
get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)

def ring_all_gather_steps(n):
    return [[(r, 0, r, r) for r in range(1, n)]]       # everyone sends to rank 0
''',
    "ring_all_gather_time": '''
class _Liar(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

collectives.analytic.ring_all_gather = lambda n, nbytes, alpha, bandwidth: n * alpha
collectives.time = lambda *args, **kwargs: None
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.0

def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return _Liar(n * alpha)
''',
    "busbw_from_time": '''
collectives.busbw = lambda *args, **kwargs: 42.0
expected = 42.0

def busbw_from_time(n, nbytes, seconds):
    return 42.0
''',
    "crossover_bytes": '''
def crossover_bytes(n, alpha, bandwidth):
    return n * alpha * bandwidth
''',
    "latency_fraction": '''
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.25
range = lambda *args: ()

def latency_fraction(n, nbytes, alpha, bandwidth):
    return 0.25
''',
}


def _submission(source_nb, release_nb, solved, replaced=None, edited_tests=None):
    """The release notebook with some solution cells answered.

    ``solved``: grade_ids answered with the source's solution; ``replaced``: grade_id ->
    code of one's own; ``edited_tests``: grade_id -> new source for a (locked) test cell.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(release_nb)))
    source_cells = _cells_by_id(source_nb)
    cells = _cells_by_id(nb)
    for grade_id in solved:
        cells[grade_id].source = _without_markers(source_cells[grade_id].source)
    for grade_id, code in (replaced or {}).items():
        cells[grade_id].source = code.strip("\n")
    for grade_id, code in (edited_tests or {}).items():
        cells[grade_id].source = code
    return nb


@pytest.fixture(scope="module")
def submissions(source_nb, release_nb):
    return {
        "correct": _submission(source_nb, release_nb, SOLUTIONS),
        "blank": _submission(source_nb, release_nb, ()),
        "partial": _submission(source_nb, release_nb,
                               ("ring_all_gather_steps", "busbw_from_time"),
                               {"ring_all_gather_time": PARTIAL_TIME}),
        "hostile": _submission(source_nb, release_nb, (), HOSTILE,
                               {"test_ring_all_gather_steps": "print('all tests passed')",
                                "test_busbw_from_time": "pass"}),
    }


@pytest.fixture(scope="module")
def autograded(course, submissions):
    root, env = course
    for minute, (student, nb) in enumerate(sorted(submissions.items())):
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
        (folder / "timestamp.txt").write_text(TIMESTAMP.format(minute=minute))
    _nbgrader(root, env, "autograde", ASSIGNMENT)
    return root


# ---- the pipeline ----------------------------------------------------------------------------

@pytest.mark.slow
def test_release_strips_solutions_and_hidden_tests(course, release_nb):
    text = json.dumps(release_nb)
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "recheck", "_grading"):
        assert marker not in text
    cells = _cells_by_id(release_nb)
    for name in SOLUTIONS:
        assert f"def {name}(" in cells[name].source
        assert "raise NotImplementedError()" in cells[name].source
        assert "check" in cells[f"test_{name}"].source       # the visible tests stay
    assert all(c.get("outputs", []) == [] for c in release_nb.cells)


@pytest.mark.slow
def test_source_passes_validate(course):
    root, env = course
    proc = _nbgrader(root, env, "validate", f"source/{ASSIGNMENT}/{NOTEBOOK}.ipynb")
    assert "Success! Your notebook passes all the tests." in proc.stdout, proc.stdout


@pytest.mark.slow
def test_release_fails_every_test_under_validate_invert(course):
    root, env = course
    proc = _nbgrader(root, env, "validate", "--invert", f"release/{ASSIGNMENT}/{NOTEBOOK}.ipynb")
    assert "Success! The notebook does not pass any tests." in proc.stdout, proc.stdout


@pytest.mark.slow
def test_autograde_scores_are_exact(autograded):
    from nbgrader.api import Gradebook

    scores, totals = {}, {}
    with Gradebook(f"sqlite:///{autograded / 'gradebook.db'}") as gb:
        for student in EXPECTED:
            submission = gb.find_submission(ASSIGNMENT, student)
            totals[student] = (submission.score, submission.max_score)
            scores[student] = {cell: gb.find_grade(cell, NOTEBOOK, ASSIGNMENT, student).score
                               for cell in POINTS}
    assert scores == EXPECTED
    assert totals == {student: (total, MAX_SCORE) for student, total in TOTALS.items()}


@pytest.mark.slow
def test_hostile_failures_come_from_the_isolated_recheck(autograded):
    """The hostile notebook's in-kernel checks were all disabled; its cells fail with the
    messages of the re-check in a fresh process, and its edited test cells were restored."""
    nb = nbformat.read(autograded / "autograded" / "hostile" / ASSIGNMENT / f"{NOTEBOOK}.ipynb",
                       as_version=4)
    cells = _cells_by_id(nb)

    def error(grade_id):
        errors = [o for o in cells[grade_id].outputs if o.output_type == "error"]
        assert errors, grade_id
        return errors[0]

    assert "check_schedule(ring_all_gather_steps(4)" in cells["test_ring_all_gather_steps"].source
    assert "check_reference(busbw_from_time" in cells["test_busbw_from_time"].source
    steps_error = error("test_ring_all_gather_steps").evalue
    assert steps_error.startswith("ring_all_gather_steps(2) does not compute the all-gather: ")
    assert "rank 1 chunk 0 holds nothing" in steps_error
    assert error("test_ring_all_gather_time").evalue.startswith(
        "ring_all_gather_time(1, 1048576, 1e-06, 45000000000.0) is 1e-06, expected 0.0 = "
        "collectives.analytic.ring_all_gather(1, 1048576, 1e-06, 45000000000.0)")
    assert error("test_busbw_from_time").evalue.startswith(
        "busbw_from_time(1, 1000000.0, 0.001) is 42.0, expected 0.0 = collectives.busbw(")
    assert error("test_latency_fraction").evalue.startswith(
        "latency_fraction(2, 1048576, 1e-06, 1000000000.0) is 0.25, expected "
        "0.0019037175796896176 = collectives.grading.schedule_seconds('ring_all_gather', 2, "
        "1048576, link_bandwidth=1000000000.0, hop_latency=1e-06, part='latency_fraction')")
    for grade_id in POINTS:
        if grade_id != "test_crossover_bytes":
            assert error(grade_id).ename == "AssertionError", grade_id
    assert not [o for o in cells["test_crossover_bytes"].outputs if o.output_type == "error"]
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    printed = "".join(o.get("text", "") for c in cells.values() for o in c.get("outputs", [])
                      if o.output_type == "stream")
    assert "ring_all_gather_steps(4) is a correct one-way ring all-gather" in printed
    assert "busbw_from_time agrees with cl.busbw" in printed
    assert "latency_fraction agrees with cl.time" in printed


@pytest.mark.slow
def test_partial_feedback_names_the_wrong_step_count(autograded):
    nb = nbformat.read(autograded / "autograded" / "partial" / ASSIGNMENT / f"{NOTEBOOK}.ipynb",
                       as_version=4)
    [error] = [o for o in _cells_by_id(nb)["test_ring_all_gather_time"].outputs
               if o.output_type == "error"]
    assert error.ename == "AssertionError"
    assert error.evalue == (
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0014993080888888888, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, 1e-06, "
        "45000000000.0); yours is exactly 8/7 times that")


@pytest.fixture(scope="module")
def feedback(autograded, course):
    _nbgrader(autograded, course[1], "generate_feedback", ASSIGNMENT)
    return autograded / "feedback"


@pytest.mark.slow
def test_feedback_reports_each_students_score(feedback):
    for student, total in TOTALS.items():
        html = (feedback / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
        assert f"{NOTEBOOK} (Score: {float(total)} / {float(MAX_SCORE)})" in html, student
        for cell, points in EXPECTED[student].items():
            assert (f'<a href="#{cell}">Test cell</a> (Score: {float(points)} / '
                    f"{float(POINTS[cell])})") in html, (student, cell)


@pytest.mark.slow
def test_export_writes_one_row_per_student(feedback, course):
    root, env = course
    _nbgrader(root, env, "export", "--to", "grades.csv")
    with open(root / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(EXPECTED)
    for minute, student in enumerate(sorted(EXPECTED)):
        row = rows[student]
        assert row["assignment"] == ASSIGNMENT
        assert row["timestamp"] == f"2026-01-15 10:{minute:02d}:00"
        assert float(row["raw_score"]) == TOTALS[student]
        assert float(row["late_submission_penalty"]) == 0.0
        assert float(row["score"]) == TOTALS[student]
        assert float(row["max_score"]) == MAX_SCORE


# ---- the release script's failures -----------------------------------------------------------

def test_release_script_rejects_an_unknown_assignment(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(EXERCISES / "source", course / "source")
    shutil.copy(EXERCISES / "nbgrader_config.py", course)
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "release_notebooks.py"),
                           "--course-dir", str(course), "no_such_assignment"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "no assignment no_such_assignment" in proc.stderr
    assert f"found: {ASSIGNMENT}" in proc.stderr
    assert not (course / "release").exists()


@pytest.mark.slow
def test_release_script_reports_nbgrader_failures(tmp_path):
    """A solution marker in a cell nbgrader does not know as a solution cell: nbgrader
    refuses, and the script says which command failed, with nbgrader's output."""
    course = tmp_path / "course"
    (course / "source" / "broken").mkdir(parents=True)
    shutil.copy(EXERCISES / "nbgrader_config.py", course)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")])
    nbformat.write(nb, course / "source" / "broken" / "broken.ipynb")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "release_notebooks.py"),
                           "--course-dir", str(course)], capture_output=True, text=True,
                          env=_env(tmp_path))
    assert proc.returncode == 1
    assert "`nbgrader generate_assignment broken --force` failed" in proc.stderr
    assert "solution" in proc.stderr.lower()
