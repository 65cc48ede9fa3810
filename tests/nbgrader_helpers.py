"""Helpers of the nbgrader pipeline test (tests/course/test_grading_pipeline.py).

- where the course is, and which assignments and notebooks it has (the same rule as the release
  script, scripts/release_notebooks.py, which is imported from there);
- reading notebooks: a cell's nbgrader metadata, cells by ``grade_id``, the visible and hidden
  parts of a test cell, a solution without its markers, what nbgrader's release makes of a cell,
  the names a learner's cells bind;
- running nbgrader in a temporary course directory: :class:`Course` runs each step once (one
  ``nbgrader validate`` for every source notebook, one ``validate --invert`` for every release
  notebook, one ``autograde`` and one ``generate_feedback`` per assignment, one ``export``) and
  remembers the outcome, a failure included, so that every test that needs a step shares it and
  one assignment's failure does not stop the others.

The per-assignment expectations (points, submissions, scores, messages) are in the spec modules
``tests/assignments/<assignment>.py``; their format is documented in tests/assignments/__init__.py.
"""

import ast
import csv
import datetime
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
EXERCISES = REPO / "exercises"
RELEASE_SCRIPT = REPO / "scripts" / "release_notebooks.py"

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
# what exercises/nbgrader_config.py puts in place of a solution
CODE_STUB = (
    '# YOUR CODE HERE\nraise NotImplementedError("not written yet: replace this line '
    'with your code")'
)
TEXT_STUB = "YOUR ANSWER HERE"

# The submissions' timestamps: assignment i (in sorted order), student j -> FIRST + i h + j min.
FIRST_TIMESTAMP = datetime.datetime(2026, 1, 15, 10, 0, 0)


def timestamp(assignment_index, student_index):
    """The submission time written to ``timestamp.txt`` and read back from the export."""
    return FIRST_TIMESTAMP + datetime.timedelta(hours=assignment_index, minutes=student_index)


# ---- the course: assignments and notebooks -----------------------------------------------------


@functools.lru_cache(maxsize=None)
def release_script():
    """scripts/release_notebooks.py as a module (it is a script, not part of a package)."""
    spec = importlib.util.spec_from_file_location("release_notebooks", RELEASE_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assignments(course_dir=EXERCISES):
    """The course's assignments: the folders of ``source/`` with a notebook, sorted (the release
    script's own rule, so the tests see exactly what it releases)."""
    return release_script().assignments(Path(course_dir))


def notebooks(assignment, course_dir=EXERCISES):
    """The names (without ``.ipynb``) of an assignment's source notebooks, sorted."""
    return sorted(p.stem for p in (Path(course_dir) / "source" / assignment).glob("*.ipynb"))


def source_path(assignment, notebook, course_dir=EXERCISES):
    return Path(course_dir) / "source" / assignment / f"{notebook}.ipynb"


def read(path):
    return nbformat.read(path, as_version=4)


def copy_of(nb):
    """A deep copy of a notebook, as an independent NotebookNode."""
    return nbformat.from_dict(nbformat.reads(nbformat.writes(nb), as_version=4))


# ---- reading notebooks -------------------------------------------------------------------------


def meta(cell):
    """A cell's nbgrader metadata ({} for an ordinary cell)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def cells_by_id(nb):
    """grade_id -> cell, for the cells nbgrader knows."""
    return {meta(c)["grade_id"]: c for c in nb.cells if "grade_id" in meta(c)}


def graded_cells(nb):
    """grade_id -> points of the graded cells."""
    return {meta(c)["grade_id"]: meta(c).get("points") for c in nb.cells if meta(c).get("grade")}


def solution_cells(nb):
    """grade_ids of the solution cells, in notebook order (hand-graded answers included)."""
    return [meta(c)["grade_id"] for c in nb.cells if meta(c).get("solution")]


def manual_cells(nb):
    """grade_id -> points of the answers graded by hand (nbgrader's "manually graded answer":
    a solution cell that is also graded, markdown here), in notebook order."""
    return {
        meta(c)["grade_id"]: meta(c).get("points")
        for c in nb.cells
        if meta(c).get("grade") and meta(c).get("solution")
    }


def autograded_cells(nb):
    """grade_id -> points of the autograded test cells (graded, not a solution)."""
    return {k: v for k, v in graded_cells(nb).items() if k not in manual_cells(nb)}


def hidden_part(source):
    """The text between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` (from the first
    marker on); '' when there is none."""
    if BEGIN_HIDDEN not in source:
        return ""
    return source[source.index(BEGIN_HIDDEN) : source.index(END_HIDDEN)]


def visible_part(source):
    """A test cell without its hidden tests."""
    return _replace_regions(source, BEGIN_HIDDEN, END_HIDDEN, None)


def without_markers(source):
    """A solution cell with its solution, without the ``### BEGIN/END SOLUTION`` lines."""
    return "\n".join(
        line for line in source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION)
    )


def _replace_regions(source, begin, end, stub):
    """``source`` with every region from a line containing ``begin`` to one containing ``end``
    (both included) replaced by ``stub`` indented like the first line (or removed)."""
    out, inside = [], False
    for line in source.split("\n"):
        if begin in line:
            inside = True
            if stub is not None:
                indent = re.match(r"\s*", line).group(0)
                out += [indent + s for s in stub.split("\n")]
        elif end in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def released_source(cell):
    """What the release (``nbgrader generate_assignment``) must make of a source cell: the
    solution regions replaced by the stub of exercises/nbgrader_config.py, the hidden tests
    removed, everything else unchanged."""
    source = cell.source
    if meta(cell).get("solution"):
        stub = CODE_STUB if cell.cell_type == "code" else TEXT_STUB
        source = _replace_regions(source, "BEGIN SOLUTION", "END SOLUTION", stub)
    if meta(cell).get("grade") and cell.cell_type == "code":
        source = _replace_regions(source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", None)
    return source


def top_level_names(source):
    """Names a cell defines at its top level: functions, classes, assigned names (not the
    modules it imports)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def functions_defined(source):
    """Names of the functions a cell defines at its top level."""
    return {
        node.name
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def learner_names(nb):
    """What the learner's answers are: the names the solution cells define at their top level."""
    names = set()
    for cell in nb.cells:
        if meta(cell).get("solution") and cell.cell_type == "code":
            names |= top_level_names(cell.source)
    return names


def names_read_unbound(code, allowed=()):
    """Names ``code`` reads that it never binds itself (nor are in ``allowed``), sorted."""
    tree = ast.parse(code)
    bound = set(allowed)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    read = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return sorted(read - bound)


def functions_called_through_grading(code):
    """Names ``f`` of the calls ``_grading.call(f, ...)`` in ``code``."""
    called = set()
    for node in ast.walk(ast.parse(code)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "call"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "_grading"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            called.add(node.args[0].id)
    return called


def error_outputs(cell):
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def printed(nb):
    """Everything the notebook's cells printed (stream outputs), concatenated."""
    return "".join(
        o.get("text", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream"
    )


# ---- running nbgrader --------------------------------------------------------------------------


def nbgrader_env(tmp):
    """nbgrader's environment: the venv first on PATH (nbgrader runs ``alembic``), Jupyter and
    IPython state in the temporary directory, away from the user's configuration, and
    unbuffered output (so that a command's log and its printed results stay in order)."""
    env = dict(os.environ)
    bins = [str(Path(sys.executable).parent), str(REPO / ".venv" / "bin")]
    env["PATH"] = os.pathsep.join(bins + [env.get("PATH", "")])
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "jupyter_config"),
        ("JUPYTER_DATA_DIR", "jupyter_data"),
        ("JUPYTER_RUNTIME_DIR", "jupyter_runtime"),
        ("IPYTHONDIR", "ipython"),
    ):
        (Path(tmp) / sub).mkdir(exist_ok=True)
        env[var] = str(Path(tmp) / sub)
    env.pop("JUPYTER_PATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class CommandFailed(Exception):
    pass


def run(args, cwd, env, timeout=600, merge=False):
    """Run a command; raise :class:`CommandFailed` (with its output) unless it exits 0.
    ``merge``: stderr into stdout, in the order written."""
    proc = subprocess.run(
        args,
        cwd=cwd,
        env=env,
        text=True,
        timeout=timeout,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
    )
    if proc.returncode != 0:
        raise CommandFailed(
            f"`{' '.join(map(str, args))}` failed (exit status "
            f"{proc.returncode}) in {cwd}:\n{proc.stdout}\n{proc.stderr or ''}"
        )
    return proc


def grading_command(path, assignment, root, jobs=1, feedback=True):
    """The command that grades ``assignment`` in the course at ``root`` on one of the two
    grading paths: ``"plain"``, ``nbgrader autograde`` (what the formgrader runs); ``"classroom"``,
    ``python -m collectives_grader.classroom grade`` (``make grade``) with ``jobs`` kernels at
    once, writing the feedback unless ``feedback`` is false."""
    if path == "plain":
        return [sys.executable, "-m", "nbgrader", "autograde", assignment]
    if path != "classroom":
        raise ValueError(f"no grading path {path!r}: 'plain' or 'classroom'")
    command = [sys.executable, "-m", "collectives_grader.classroom", "grade", assignment]
    command += ["--course-dir", str(root), "--jobs", str(jobs)]
    return command if feedback else command + ["--no-feedback"]


def nbgrader(course_dir, env, *args, merge=False):
    return run([sys.executable, "-m", "nbgrader", *args], course_dir, env, merge=merge)


class Course:
    """A temporary copy of the course directory, and what nbgrader did in it.

    ``Course.create(tmp, names)`` copies exercises/nbgrader_config.py and the sources of
    ``names`` (default: every assignment) and releases them with the release script. The other
    steps, which concern the released assignments only, run on first use and are remembered,
    failures included (a remembered failure is raised again, as :class:`CommandFailed`, to each
    test that needs it): ``validate(invert)``, ``autograde(a)`` (which first writes the
    submissions of a's spec), ``feedback(a)``, ``export(specced)``.
    """

    def __init__(self, root, env, released, release_output):
        self.root, self.env, self.release_output = root, env, release_output
        self.assignments = list(released)  # sorted
        self._done = {}
        self.after_autograde = {}  # assignment -> gradebook_state

    @classmethod
    def create(cls, tmp, names=()):
        """Copy the course to ``tmp/course`` and release the assignments ``names`` (all of
        them when empty, as ``make student`` does). Only the sources of ``names`` are copied,
        so that the release script generates them all in one nbgrader run."""
        tmp = Path(tmp)
        root = tmp / "course"
        root.mkdir()
        shutil.copy(EXERCISES / "nbgrader_config.py", root)
        for name in names or assignments(EXERCISES):
            shutil.copytree(
                EXERCISES / "source" / name,
                root / "source" / name,
                ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
            )
        env = nbgrader_env(tmp)
        proc = run(
            [sys.executable, str(RELEASE_SCRIPT), "--course-dir", str(root), *names], REPO, env
        )
        released = sorted(names) if names else assignments(root)
        return cls(root, env, released, proc.stdout + proc.stderr)

    def _once(self, key, step):
        """Run ``step()`` the first time ``key`` is asked for; remember its result or failure."""
        if key not in self._done:
            try:
                self._done[key] = (True, step())
            except Exception as exc:  # remembered, raised again to every user
                message = (
                    str(exc) if isinstance(exc, CommandFailed) else (f"{type(exc).__name__}: {exc}")
                )
                self._done[key] = (False, message)
        ok, value = self._done[key]
        if not ok:
            raise CommandFailed(f"{key}: {value}")
        return value

    # -- paths ----------------------------------------------------------------------------------

    def notebooks(self, assignment):
        return notebooks(assignment, self.root)

    def source(self, assignment, notebook):
        return read(self.root / "source" / assignment / f"{notebook}.ipynb")

    def release(self, assignment, notebook):
        return read(self.root / "release" / assignment / f"{notebook}.ipynb")

    def autograded_nb(self, assignment, student, notebook):
        self.autograde(assignment)
        return read(self.root / "autograded" / student / assignment / f"{notebook}.ipynb")

    def feedback_html(self, assignment, student, notebook):
        self.feedback(assignment)
        return (self.root / "feedback" / student / assignment / f"{notebook}.html").read_text()

    # -- validate: one run for all source notebooks, one for all release notebooks ----------------

    def validate(self, invert=False, assignments=None):
        """``nbgrader validate`` (``--invert``: of the release notebooks) of every notebook of
        the released ``assignments`` (default: all) in one run; returns {(assignment,
        notebook): its output}."""
        chosen = tuple(self.assignments if assignments is None else assignments)
        key = f"validate{' --invert' if invert else ''} {' '.join(chosen)}"
        return self._once(key, lambda: self._validate(invert, chosen))

    def _validate(self, invert, chosen):
        folder = "release" if invert else "source"
        paths = {(a, nb): f"{folder}/{a}/{nb}.ipynb" for a in chosen for nb in self.notebooks(a)}
        args = ["validate", *(["--invert"] if invert else []), *paths.values()]
        output = nbgrader(self.root, self.env, *args, merge=True).stdout
        # the log line "Validating '<absolute path>'" starts each notebook's part of the output
        parts = re.split(r"^.*Validating '(.*)'\s*$", output, flags=re.M)
        by_path = {Path(p).resolve(): text for p, text in zip(parts[1::2], parts[2::2])}
        found = {key: by_path.get((self.root / path).resolve()) for key, path in paths.items()}
        missing = [path for key, path in paths.items() if found[key] is None]
        if missing:
            raise CommandFailed(f"nbgrader {' '.join(args)}: no output for {missing}:\n{output}")
        return found

    # -- autograde, feedback, export ------------------------------------------------------------

    def autograde(self, assignment):
        """Write the submissions of the assignment's spec, then ``nbgrader autograde`` (every
        student in one run); returns the spec."""
        return self._once(f"autograde {assignment}", lambda: self._autograde(assignment))

    def _autograde(self, assignment):
        spec = self.write_submissions(assignment)
        nbgrader(self.root, self.env, "autograde", assignment)
        self.after_autograde[assignment] = self.gradebook_state(assignment, spec)
        return spec

    def write_submissions(self, assignment):
        """Write the submissions of the assignment's spec to ``submitted/<student>/<assignment>/``
        (each notebook built from fresh copies of the source and release notebooks, and a
        ``timestamp.txt``: :func:`timestamp`); returns the spec. What both grading paths grade
        (tests/course/test_grading_pipeline.py, tests/course/test_grading_both_paths.py)."""
        import assignments as specs  # tests/assignments/

        spec = specs.load(assignment)
        index = self.assignments.index(assignment)
        sources = {nb: self.source(assignment, nb) for nb in spec.notebooks}
        releases = {nb: self.release(assignment, nb) for nb in spec.notebooks}
        for j, student in enumerate(spec.students):
            folder = self.root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            for nb in spec.notebooks:
                built = spec.submissions[student][nb](copy_of(sources[nb]), copy_of(releases[nb]))
                if not isinstance(built, nbformat.NotebookNode):
                    raise TypeError(
                        f"tests/assignments/{assignment}.py: SUBMISSIONS[{student!r}]"
                        f"[{nb!r}] returned {type(built).__name__}, not a notebook"
                    )
                nbformat.write(built, folder / f"{nb}.ipynb")
            stamp = timestamp(index, j).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
            (folder / "timestamp.txt").write_text(stamp)
        return spec

    def gradebook_state(self, assignment, spec):
        """{student: ({notebook: {grade_id: (auto_score, needs_manual_grade)}}, total,
        needs_manual_grade)} as the gradebook has it now.

        ``auto_score``, not ``score``: nbgrader's ``Grade.score`` is a computed column that is
        0.0 when neither an automatic nor a manual score is set (nbgrader/api.py), so a written
        answer still waiting for its hand grade would look like one graded 0; its
        ``auto_score`` is None."""
        from nbgrader.api import Gradebook

        state = {}
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gb:
            for student in spec.students:
                submission = gb.find_submission(assignment, student)
                cells = {
                    nb: {
                        cell: (
                            gb.find_grade(cell, nb, assignment, student).auto_score,
                            gb.find_grade(cell, nb, assignment, student).needs_manual_grade,
                        )
                        for cell in spec.points[nb]
                    }
                    for nb in spec.notebooks
                }
                state[student] = (cells, submission.score, submission.needs_manual_grade)
        return state

    def expected_after_autograde(self, assignment, spec):
        """{student: {notebook: {grade_id: (auto_score, needs_manual_grade)}}} that autograde
        must leave in the gradebook (:meth:`gradebook_state`'s cells): EXPECTED's score for every
        test cell; a written answer handed in as released scores 0 (nbgrader itself), an edited
        one awaits its hand grade (None, True)."""
        wanted = {}
        for student in spec.students:
            wanted[student] = {}
            for name in spec.notebooks:
                submitted = cells_by_id(
                    read(self.root / "submitted" / student / assignment / f"{name}.ipynb")
                )
                release = cells_by_id(self.release(assignment, name))
                wanted[student][name] = {}
                for cell in spec.points[name]:
                    if cell not in spec.manual[name]:
                        wanted[student][name][cell] = (spec.expected[student][name][cell], False)
                    elif submitted[cell].source == release[cell].source:
                        wanted[student][name][cell] = (0, False)
                    else:
                        wanted[student][name][cell] = (None, True)
        return wanted

    def grade_by_hand(self, assignment):
        """After autograde: the spec's EXPECTED score of every hand-graded answer that awaits
        one, set through nbgrader's gradebook API as the formgrader does (manual score, no
        longer needing a manual grade). Returns the spec."""

        def step():
            from nbgrader.api import Gradebook

            spec = self.autograde(assignment)
            with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gb:
                for student in spec.students:
                    for nb, cells in spec.manual.items():
                        for cell in cells:
                            grade = gb.find_grade(cell, nb, assignment, student)
                            if grade.needs_manual_grade:
                                grade.manual_score = spec.expected[student][nb][cell]
                                grade.needs_manual_grade = False
                gb.db.commit()
            return spec

        return self._once(f"grade by hand {assignment}", step)

    def feedback(self, assignment):
        def step():
            self.grade_by_hand(assignment)
            nbgrader(self.root, self.env, "generate_feedback", assignment)

        return self._once(f"generate_feedback {assignment}", step)

    def export(self, specced):
        """``nbgrader export`` once, after autograding every assignment in ``specced`` (an
        assignment whose autograde failed is exported as it is); returns
        (fieldnames, {(assignment, student): row})."""

        def step():
            for assignment in specced:
                try:
                    self.grade_by_hand(assignment)
                except CommandFailed:
                    pass  # reported by that assignment's tests
            nbgrader(self.root, self.env, "export", "--to", "grades.csv")
            with open(self.root / "grades.csv", newline="") as f:
                reader = csv.DictReader(f)
                rows = {}
                for row in reader:
                    key = (row["assignment"], row["student_id"])
                    assert key not in rows, f"two rows for {key}"
                    rows[key] = row
                return reader.fieldnames, rows

        return self._once("export", step)
