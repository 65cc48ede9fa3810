"""The graded assignments' specs: what tests/course/test_grading_pipeline.py expects of each one.

Every folder ``exercises/source/<assignment>/`` needs a module ``tests/assignments/<assignment>.py``
(this package). The pipeline test finds the assignments the way the release script does and
fails, printing a skeleton to start from, for any assignment without a spec. The spec says what
the notebooks contain, which submissions to build and what nbgrader must make of them, to the
point and to the character. ``cost_models.py`` is the complete example; copy it.

What a spec defines
-------------------
Notebooks are named without ``.ipynb``; every table is keyed by notebook first, so that an
assignment may have several notebooks (most have one: write ``NOTEBOOK = "..."`` once and
``{NOTEBOOK: ...}``).

``POINTS = {notebook: {grade_id: points}}``
    Every graded cell of every notebook (autograder test cells and hand-graded answers) and its
    points. The keys are exactly the
    notebooks in ``exercises/source/<assignment>/``; the cells and points must be exactly those of
    the notebook's nbgrader metadata (checked).
``MAX_SCORE = 10``
    The assignment's total as documented (exercises/README.md's table); POINTS must add up to it.
``MANUAL = {notebook: (grade_id, ...)}`` (optional)
    The written answers graded by hand: nbgrader "manually graded answer" cells (markdown,
    ``solution`` and ``grade`` with points), one or two per notebook. The source cell holds,
    between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (so that the release shows "YOUR
    ANSWER HERE"), a model answer and a rubric for the grader (a line starting with
    ``**Rubric``). Their points count in POINTS and MAX_SCORE; autograde must leave every
    submitted (edited) answer needing a manual grade (an untouched one scores 0 by itself);
    the pipeline then sets EXPECTED's score for it through nbgrader's gradebook API, as the
    formgrader does, and checks the totals, the feedback and the export with it. A manual
    score may be any number from 0 to the cell's points.
``SOLUTIONS = {notebook: (grade_id, ...)}``
    The solution cells (hand-graded answers apart), when each solution cell ``<name>`` is
    graded by the test cell
    ``test_<name>`` (cost_models' convention). Otherwise ``{notebook: {solution_grade_id:
    test_grade_id or (test_grade_id, ...)}}``. Every solution cell and every graded cell of the
    notebook must appear. Checked for each pair: the test cell is locked, imports from
    ``collectives.grading`` in its visible part, and its hidden part reloads
    ``collectives.grading``, calls ``_grading.recheck(...)``, calls each function the solution
    cell defines through ``_grading.call(function, ...)`` and reads each other name it assigns
    (helpers and constants named ``_like_this`` are exempt), and the tuple form's solution cell
    ``<name>`` defines ``<name>``.
``SUBMISSIONS = {student: {notebook: build}}``
    The submissions to autograde, at least ``"correct"`` (every solution), ``"blank"`` (the release
    as handed out), ``"partial"`` (some tasks right, at least one wrong and some blank) and
    ``"hostile"`` (see below); and the attacks its tasks must survive: ``"wrong"`` (plausible wrong
    answers: EXPECTED 0 everywhere), ``"variant"`` (correct answers in another shape: every point)
    and ``"shortcut"`` (answers that call the package: 0 everywhere); add others freely (student
    ids: letters, digits, ``_``, ``-``). ``build(source, release)`` receives fresh copies of the
    source notebook (solutions and hidden tests) and of the release notebook (nbformat
    ``NotebookNode``) and returns the notebook the student hands in. :func:`submission` makes the
    usual builders; any function will do.
``EXPECTED = {student: {notebook: {grade_id: score}}}``
    The exact score of every graded cell for every student in SUBMISSIONS: all of the cell's
    points or 0 (nbgrader gives a test cell all or nothing); for a hand-graded answer, the score
    the grader gives by hand. ``correct`` must score every point,
    ``blank`` none, ``partial`` strictly between, ``hostile`` less than MAX_SCORE (give it one
    genuinely right answer, so that it scores more than 0 and shows that the cells are graded
    one by one).
``ERRORS = {student: {notebook: {grade_id: Error(...)}}}``
    The error a failing test cell shows in the autograded notebook; its message must also appear
    in the student's feedback HTML (except the hostile student's: a notebook that disables
    IPython's ``showtraceback`` shows "An error occurred while showtraceback was disabled"
    there instead). Required: one for every cell the hostile submission fails, and at least one
    for the partial submission. Only cells that score 0 may appear.
``PRINTED = {student: {notebook: (text, ...)}}``
    Texts that must appear in what the autograded notebook printed. Required for ``hostile``: the
    success lines of visible tests its tampering fooled (proof that the tampering worked, so that
    its zero really comes from the hidden re-check).

How the scores are asserted
---------------------------
The test copies ``exercises/nbgrader_config.py`` and ``exercises/source/`` to a temporary course
directory and releases the assignments there with ``scripts/release_notebooks.py`` (all of them
in a full run). Spec-free
checks, for every assignment: the source notebooks have no outputs and unique grade_ids; hidden
tests read no name a learner's cell could rebind; each release cell is exactly its source cell
with solutions replaced by the stub and hidden tests removed; ``nbgrader validate`` passes every
source notebook and ``nbgrader validate --invert`` fails every test of every release notebook.
With the spec: POINTS and SOLUTIONS against the notebook; then ``nbgrader autograde
<assignment>`` (one run for all its students) and, per student and cell, exactly EXPECTED in the
gradebook, the totals, ``max_score``; every test cell of the autograded notebook restored to the
source's (the hostile's edits undone); an error output in exactly the cells that score 0; ERRORS
and PRINTED; ``nbgrader generate_feedback``: each report's total and per-cell scores and the
ERRORS messages; ``nbgrader export`` (once for the course): one row per assignment and student,
timestamps, raw score, score, max score. Students without a submission to an assignment (because
another assignment's spec has more students) must appear with 0.

How to write a hostile submission
---------------------------------
Its job is to prove that a learner cannot buy points by attacking the visible tests. Answer most
tasks wrongly and, in the same cells, disable everything the visible tests rely on: rebind or
monkeypatch ``collectives`` functions (``cl.verify``, ``cl.simulate``, ``cl.time``, the
``cl.analytic`` functions the cell compares with), the ``collectives.grading`` helpers and
``math.isclose``, silence IPython (``get_ipython().showtraceback``, ``set_custom_exc``), return
objects that lie about equality (a ``float`` subclass whose ``__eq__`` is always true), rebind
names a hidden test might read (``range``, ``expected``), and edit test cells
(``edited_tests``: nbgrader must restore them). The visible tests then print their success lines
(PRINTED), the hidden re-check in a fresh process still fails every wrong answer (ERRORS, with the
values the re-check computed, not the patched ones) and only the genuinely right answer scores.
``cost_models.HOSTILE`` is a catalogue to start from. Tricks the grading does not claim to stop
(patching ``importlib``, ``subprocess`` or IPython's input transformers, calling the package's own
solution) do not belong in it; exercises/README.md lists them.

Example (abridged from an earlier cost_models.py)
-------------------------------------------------
::

    from assignments import Error, submission

    NOTEBOOK = "ring_all_gather"
    POINTS = {NOTEBOOK: {"test_ring_all_gather_steps": 4, "test_ring_all_gather_time": 3,
                         "test_busbw_from_time": 1, "test_crossover_bytes": 1,
                         "test_latency_fraction": 1}}
    MAX_SCORE = 10
    SOLUTIONS = {NOTEBOOK: ("ring_all_gather_steps", "ring_all_gather_time", "busbw_from_time",
                            "crossover_bytes", "latency_fraction")}

    PARTIAL_TIME = '''
    def ring_all_gather_time(n, nbytes, alpha, bandwidth):
        return n * (alpha + nbytes / (n * bandwidth))      # n steps: one too many
    '''
    HOSTILE = {                     # solution grade_id -> the code the hostile student writes
        "busbw_from_time": '''
    import collectives
    collectives.busbw = lambda *args, **kwargs: 42.0        # fools the visible check
    expected = 42.0                                         # a name a test might read
    def busbw_from_time(n, nbytes, seconds):
        return 42.0
    ''',
        "crossover_bytes": '''
    def crossover_bytes(n, alpha, bandwidth):               # genuinely right: 1 point
        return n * alpha * bandwidth
    ''',
        # ... one tampering answer for each other task
    }
    SUBMISSIONS = {
        "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK])},
        "blank": {NOTEBOOK: submission()},
        "partial": {NOTEBOOK: submission(solved=("ring_all_gather_steps", "busbw_from_time"),
                                         replaced={"ring_all_gather_time": PARTIAL_TIME})},
        "hostile": {NOTEBOOK: submission(replaced=HOSTILE,
                                         edited_tests={"test_busbw_from_time": "pass"})},
    }
    EXPECTED = {
        "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
        "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
        "partial": {NOTEBOOK: {"test_ring_all_gather_steps": 4, "test_ring_all_gather_time": 0,
                               "test_busbw_from_time": 1, "test_crossover_bytes": 0,
                               "test_latency_fraction": 0}},
        "hostile": {NOTEBOOK: {"test_ring_all_gather_steps": 0, "test_ring_all_gather_time": 0,
                               "test_busbw_from_time": 0, "test_crossover_bytes": 1,
                               "test_latency_fraction": 0}},
    }
    ERRORS = {
        "partial": {NOTEBOOK: {"test_ring_all_gather_time": Error(
            "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0014993080888888888, expected "
            "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, "
            "alpha=1e-06, bandwidth=45000000000.0); yours is exactly 8/7 times that")}},
        "hostile": {NOTEBOOK: {
            # the re-check's own value (0.0 for one rank), not the patched 42.0
            "test_busbw_from_time": Error(startswith="busbw_from_time(1, 1000000.0, 0.001) is "
                                          "42.0, expected 0.0 = collectives.busbw("),
            # ... one Error for each other cell it fails
        }},
    }
    PRINTED = {"hostile": {NOTEBOOK: ("busbw_from_time agrees with cl.busbw",)}}

The partial submission scores 4 + 1 = 5 of 10; the hostile one 1, although every visible test
printed its success line.

Workflow
--------
Write the notebook, run ``make student`` and the two ``nbgrader validate`` commands of
exercises/README.md, then
``python -m pytest -q tests/course/test_grading_pipeline.py -k <assignment>``
(with ``.venv/bin`` first on PATH; ``-k`` makes the pipeline release, validate, grade and export
that assignment only, in about half a minute). Its first failure prints a skeleton spec made from
the notebook's metadata; check its points against the README, write the partial and hostile
submissions, and run again: a wrong expectation fails with the actual value (scores as a dict
diff, messages in full), and the temporary course stays in
``/tmp/pytest-of-$USER/pytest-<N>/grading_pipeline0/course/`` (``submitted/``, ``autograded/``,
``feedback/``, ``grades.csv``) for a look. Never copy an actual value into the spec without
checking that it is the right one. Before you commit, run the whole file once: the export is
checked across all assignments.
"""

import functools
import importlib
import json
import re
import types
from dataclasses import dataclass
from pathlib import Path

from nbgrader_helpers import (
    EXERCISES,
    cells_by_id,
    graded_cells,
    manual_cells,
    meta,
    notebooks,
    read,
    solution_cells,
    source_path,
    visible_part,
    without_markers,
)

HERE = Path(__file__).resolve().parent
#: the submissions every spec must build
REQUIRED_STUDENTS = ("correct", "blank", "partial", "hostile")
#: the attacks every assignment's tasks must survive before they ship: plausible wrong answers
#: (all score 0), correct answers in another shape (every point) and answers that just call
#: the package (all score 0, through ``_grading.call(..., isolated=True)``)
ATTACK_STUDENTS = ("wrong", "variant", "shortcut")

#: The start of a hostile answer cell: disable every check the visible tests rely on (the
#: package's verify/simulate, every check of collectives.grading and of its modules,
#: math.isclose, the notebook's imported check names, IPython's error display). Specs write
#: ``TAMPERING + '''def ...'''``.
TAMPERING = """import math
import sys
import collectives
import collectives.algorithms
import collectives.analytic
import collectives.grading

def _always_pass(*args, **kwargs):
    return None

collectives.verify = _always_pass
collectives.simulate = lambda schedule, inputs: inputs
for _module in [collectives.grading] + [_m for _key, _m in list(sys.modules.items())
                                        if _key.startswith("collectives.grading.")]:
    for _name in dir(_module):
        if _name.startswith("check") or _name in ("recheck", "call", "_compare"):
            setattr(_module, _name, _always_pass)
check_schedule = check_close = check_reference = check_choice = _always_pass
math.isclose = lambda *args, **kwargs: True
get_ipython().showtraceback = lambda *args, **kwargs: None
get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)
"""
STUDENT_ID = re.compile(r"[A-Za-z0-9_-]+")


# ---- the vocabulary of a spec ------------------------------------------------------------------

#: how the re-check starts its list of a cell's further failing checks (recheck.py)
MORE_CHECKS = "\n\nThis cell has "


def _first_check(evalue):
    """The message of a cell's first failing check: the re-check appends the others after
    :data:`MORE_CHECKS` (their wording is tested in tests/package/grading/test_grading.py)."""
    head, sep, tail = evalue.partition(MORE_CHECKS)
    return head if sep and " more failing check" in tail.split("\n", 1)[0] else evalue


@dataclass(frozen=True)
class Error:
    """The error of a failing test cell: ``Error(message)`` for the message of its first
    failing check, exactly (the re-check lists any further failing checks after it), or
    ``Error(startswith=..., contains=(...))`` for its beginning and fragments of the rest;
    ``ename``: the exception's class name (``AssertionError`` for a wrong answer,
    ``GradingError`` for one of the wrong form, ``NotImplementedError`` for a blank)."""

    message: str = None
    startswith: str = ""
    contains: tuple = ()
    ename: str = "AssertionError"

    def __post_init__(self):
        if isinstance(self.contains, str):
            object.__setattr__(self, "contains", (self.contains,))
        if self.message is None and not self.startswith and not self.contains:
            raise ValueError("Error() needs a message, or startswith= or contains=")

    def problems(self, ename, evalue):
        """What is wrong with an actual error (empty when it is the expected one)."""
        found = []
        if ename != self.ename:
            found.append(f"is a {ename}, expected a {self.ename}")
        if self.message is not None and _first_check(evalue) != self.message:
            found.append(f"has a different message than expected\n  expected: {self.message!r}")
        if not evalue.startswith(self.startswith):
            found.append(f"does not start with {self.startswith!r}")
        found += [f"does not contain {text!r}" for text in self.contains if text not in evalue]
        if found:
            found.append(f"its message is {evalue!r}")
        return found

    def texts(self):
        """The texts the message must contain (to look for in the feedback)."""
        return tuple(t for t in ((self.message or self.startswith), *self.contains) if t)


def submission(solved=(), replaced=None, edited_tests=None):
    """A builder for SUBMISSIONS: the release notebook, with

    - ``solved``: grade_ids of solution cells answered with the source notebook's solution
      (without the ``### BEGIN/END SOLUTION`` lines);
    - ``replaced``: {grade_id: code} for solution cells answered with code of one's own (leading
      and trailing blank lines are dropped);
    - ``edited_tests``: {grade_id: code} for test cells the student edits (nbgrader must restore
      them before grading).
    """
    solved, replaced, edited_tests = tuple(solved), dict(replaced or {}), dict(edited_tests or {})

    def build(source, release):
        answers, cells = cells_by_id(source), cells_by_id(release)
        for grade_id in (*solved, *replaced, *edited_tests):
            if grade_id not in cells:
                raise KeyError(f"no cell with grade_id {grade_id!r} in the release notebook")
        for grade_id in (*solved, *replaced):
            if not meta(cells[grade_id]).get("solution"):
                raise ValueError(f"{grade_id!r} is not a solution cell")
        for grade_id in edited_tests:
            if not meta(cells[grade_id]).get("grade"):
                raise ValueError(f"{grade_id!r} is not a graded (test) cell")
        for grade_id in solved:
            cells[grade_id].source = without_markers(answers[grade_id].source)
        for grade_id, code in replaced.items():
            cells[grade_id].source = code.strip("\n")
        for grade_id, code in edited_tests.items():
            cells[grade_id].source = code
        return release

    return build


# ---- the origin attack: every graded name bound to the package's own code ---------------------

#: how the origin attack binds a graded function's name to a function of the package, in turn
#: (no ``def`` of the learner's: the package's function itself, an alias, a partial, a wrapper
#: and a class attribute of it); ``{module}.{attr}`` is the package's function
ORIGIN_SHAPES = (
    "{name} = {module}.{attr}",
    "from {module} import {attr} as {name}",
    "{name} = functools.partial({module}.{attr})",
    "@functools.wraps({module}.{attr})\ndef {name}(*args, **kwargs):\n"
    "    return {module}.{attr}(*args, **kwargs)",
    "class _Answers_{name}:\n    answer = staticmethod({module}.{attr})\n\n"
    "{name} = _Answers_{name}.answer",
)
#: the package's function an answer is bound to when the package has none of the same name
ORIGIN_FALLBACK = ("collectives.analytic", "ring_all_gather")
#: what the refusal of such an answer says (collectives.grading.isolation.origin.NOT_YOURS)
NOT_YOURS = "is not a function written in the notebook"


@functools.lru_cache(maxsize=None)
def _package_functions():
    """{name: module} of the public functions of every module of ``collectives`` (the first
    module in sorted order that defines one, where it is defined)."""
    import pkgutil

    import collectives

    found = {}
    names = sorted(m.name for m in pkgutil.walk_packages(collectives.__path__, "collectives."))
    for module_name in ["collectives", *names]:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # an optional dependency (torch, matplotlib)
            continue
        for attr, value in vars(module).items():
            if (
                not attr.startswith("_")
                and isinstance(value, types.FunctionType)
                and value.__module__ == module_name
            ):
                found.setdefault(attr, module_name)
    return found


def origin_attack(assignment, solutions, enames=None):
    """``(SUBMISSIONS entry, EXPECTED entry, ERRORS entry)`` of the origin attack on an
    assignment: every function its solution cells define is bound to the package's function of
    the same name (else to :data:`ORIGIN_FALLBACK`), in the shapes of :data:`ORIGIN_SHAPES` in
    turn; written answers are left blank. Every cell scores 0, and each test cell of a
    solution that defines only functions fails with the refusal (:data:`NOT_YOURS`), from the
    visible or the hidden part (unless its visible part calls the function in the kernel, where
    the package's function may fail first on the task's arguments): a ``GradingError``, or the
    error ``enames`` gives for that test cell (a task's own check that reports it as an
    ``AssertionError``). ``solutions``: the spec's SOLUTIONS."""
    builds, expected, errors = {}, {}, {}
    functions = _package_functions()
    turn = 0
    for nb in sorted(solutions):
        source = read(source_path(assignment, nb))
        pairs = _normalise_solutions(solutions[nb])
        cells = cells_by_id(source)
        replaced, failing = {}, set()
        for solution_id, tests in pairs.items():
            code = cells[solution_id].source
            defined = sorted(n for n in _top_level_functions(code) if not n.startswith("_"))
            others = _top_level_values(code)
            lines = ["import functools", "import collectives"]
            for name in defined:
                module, attr = (functions[name], name) if name in functions else ORIGIN_FALLBACK
                lines += [
                    f"import {module}",
                    ORIGIN_SHAPES[turn % len(ORIGIN_SHAPES)].format(
                        name=name, module=module, attr=attr
                    ),
                ]
                turn += 1
            replaced[solution_id] = "\n".join(lines) + "\n"
            # a visible test that calls the function in the kernel fails on what the package's
            # function does with its arguments, before the hidden part refuses it
            direct = {
                t for t in tests if set(defined) & _called_by_name(visible_part(cells[t].source))
            }
            if defined and not others:
                failing.update(set(tests) - direct)
        graded = {
            gid: meta(cell).get("points") for gid, cell in cells.items() if meta(cell).get("grade")
        }
        builds[nb] = submission(replaced=replaced)
        expected[nb] = dict.fromkeys(graded, 0)
        # a test cell that also checks another solution's constants may fail on those first
        shared = {
            t for sid, tests in pairs.items() for t in tests if _top_level_values(cells[sid].source)
        }
        errors[nb] = {
            t: Error(contains=(NOT_YOURS,), ename=(enames or {}).get(t, "GradingError"))
            for t in sorted(failing - shared)
        }
    return builds, expected, errors


def _called_by_name(code):
    """Names ``f`` of the calls ``f(...)`` in ``code``."""
    import ast

    return {
        n.func.id
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


def _top_level_functions(code):
    import ast

    return [
        n.name
        for n in ast.parse(code).body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def _top_level_values(code):
    """Public names a cell assigns at its top level (constants, not functions)."""
    import ast

    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return {n for n in names if not n.startswith("_")}


# ---- loading and checking a spec ---------------------------------------------------------------


class SpecError(Exception):
    """A spec that is missing, or incomplete, or inconsistent."""


def spec_path(assignment):
    return HERE / f"{assignment}.py"


def spec_names():
    """The assignments that have a spec module, sorted."""
    return sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))


def _normalise_solutions(value):
    """SOLUTIONS[notebook] in its long form {solution: (test, ...)}."""
    if isinstance(value, dict):
        return {s: (t,) if isinstance(t, str) else tuple(t) for s, t in value.items()}
    return {s: (f"test_{s}",) for s in value}


def load(assignment, course_dir=EXERCISES):
    """The spec of an assignment, checked for completeness and consistency, as a namespace:
    ``name, module, notebooks, points, manual, max_score, solutions`` (long form),
    ``named_solutions``
    ({notebook: True for the short form of SOLUTIONS}), ``submissions,
    expected, errors, printed, students`` (sorted), ``totals`` ({student: total}).
    Raises :class:`SpecError` saying what is missing or wrong."""
    path = spec_path(assignment)
    if not path.is_file():
        raise SpecError(missing_spec_message(assignment, course_dir))
    module = importlib.import_module(f"assignments.{assignment}")
    where = f"tests/assignments/{assignment}.py"
    problems = []
    missing = [
        n
        for n in ("POINTS", "MAX_SCORE", "SOLUTIONS", "SUBMISSIONS", "EXPECTED")
        if not hasattr(module, n)
    ]
    if missing:
        raise SpecError(
            f"{where} defines no {', '.join(missing)} (see tests/assignments/__init__.py)"
        )
    points, solutions = module.POINTS, module.SOLUTIONS
    submissions, expected = module.SUBMISSIONS, module.EXPECTED
    errors, printed = getattr(module, "ERRORS", {}), getattr(module, "PRINTED", {})
    manual = {nb: tuple(cells) for nb, cells in getattr(module, "MANUAL", {}).items()}

    on_disk = notebooks(assignment, course_dir)
    if sorted(points) != on_disk:
        problems.append(
            f"POINTS is for the notebooks {sorted(points)}, but "
            f"exercises/source/{assignment}/ has {on_disk}"
        )
    nbs = tuple(sorted(points))
    for nb, cells in manual.items():
        if nb not in points or not set(cells) <= set(points[nb]):
            problems.append(f"MANUAL[{nb!r}] names cells that POINTS does not have: {cells}")
    manual = {nb: manual.get(nb, ()) for nb in nbs}
    if sum(sum(cells.values()) for cells in points.values()) != module.MAX_SCORE:
        problems.append(
            f"POINTS add up to {sum(sum(c.values()) for c in points.values())}, "
            f"not MAX_SCORE = {module.MAX_SCORE}"
        )
    if sorted(solutions) != list(nbs):
        problems.append(f"SOLUTIONS is for {sorted(solutions)}, POINTS for {list(nbs)}")
    long_solutions = {nb: _normalise_solutions(solutions.get(nb, ())) for nb in nbs}

    required = REQUIRED_STUDENTS + ATTACK_STUDENTS
    for student in required:
        if student not in submissions:
            problems.append(f"SUBMISSIONS has no {student!r} (required: {', '.join(required)})")
    for student, builders in submissions.items():
        if not STUDENT_ID.fullmatch(student):
            problems.append(f"student id {student!r}: use letters, digits, _ and -")
        if sorted(builders) != list(nbs) or not all(callable(b) for b in builders.values()):
            problems.append(
                f"SUBMISSIONS[{student!r}] must map each of {list(nbs)} to a "
                f"function build(source, release)"
            )
    if sorted(expected) != sorted(submissions):
        problems.append(
            f"EXPECTED is for {sorted(expected)}, SUBMISSIONS for {sorted(submissions)}"
        )

    totals = {}
    for student, by_nb in expected.items():
        if sorted(by_nb) != list(nbs):
            problems.append(f"EXPECTED[{student!r}] is for {sorted(by_nb)}, not {list(nbs)}")
            continue
        for nb in nbs:
            if set(by_nb[nb]) != set(points[nb]):
                problems.append(
                    f"EXPECTED[{student!r}][{nb!r}] must give a score to exactly the "
                    f"cells of POINTS[{nb!r}]"
                )
            for cell, score in by_nb[nb].items():
                if cell in manual[nb]:
                    if not (isinstance(score, (int, float)) and 0 <= score <= points[nb][cell]):
                        problems.append(
                            f"EXPECTED[{student!r}][{nb!r}][{cell!r}] = {score!r}:"
                            f" a manual grade from 0 to {points[nb][cell]}"
                        )
                elif cell in points[nb] and score not in (0, points[nb][cell]):
                    problems.append(
                        f"EXPECTED[{student!r}][{nb!r}][{cell!r}] = {score}: a "
                        f"test cell scores 0 or all its {points[nb][cell]} points"
                    )
        totals[student] = sum(sum(cells.values()) for cells in by_nb.values())
    if "correct" in expected and expected["correct"] != points:
        problems.append("EXPECTED['correct'] must be every point (POINTS)")
    if "blank" in totals and totals["blank"] != 0:
        problems.append("EXPECTED['blank'] must be 0 everywhere")
    if "partial" in totals and not 0 < totals["partial"] < module.MAX_SCORE:
        problems.append(
            f"EXPECTED['partial'] totals {totals['partial']}: make it strictly "
            f"between 0 and {module.MAX_SCORE}"
        )
    if "hostile" in totals and not totals["hostile"] < module.MAX_SCORE:
        problems.append("EXPECTED['hostile'] must be less than MAX_SCORE")
    for student in ("wrong", "shortcut"):
        if student in totals and totals[student] != 0:
            problems.append(
                f"EXPECTED[{student!r}] must be 0 everywhere: every plausible wrong "
                "answer and every answer that calls the package scores nothing"
            )
    if "variant" in expected and expected["variant"] != points:
        problems.append(
            "EXPECTED['variant'] must be every point (POINTS): a correct answer in another shape"
        )

    for name, table, kind in (("ERRORS", errors, Error), ("PRINTED", printed, None)):
        for student, by_nb in table.items():
            if student not in expected or not set(by_nb) <= set(nbs):
                problems.append(f"{name}[{student!r}]: unknown student or notebook")
                continue
            for nb, entries in by_nb.items():
                if kind is None:
                    if isinstance(entries, str) or not all(isinstance(t, str) for t in entries):
                        problems.append(f"{name}[{student!r}][{nb!r}] must be a tuple of texts")
                    continue
                for cell, error in entries.items():
                    if not isinstance(error, Error):
                        problems.append(f"ERRORS[{student!r}][{nb!r}][{cell!r}] is not an Error")
                    elif cell in manual[nb]:
                        problems.append(
                            f"ERRORS[{student!r}][{nb!r}][{cell!r}]: a hand-graded "
                            "answer shows no error"
                        )
                    elif expected[student][nb].get(cell) != 0:
                        problems.append(
                            f"ERRORS[{student!r}][{nb!r}][{cell!r}]: that cell "
                            "does not score 0 in EXPECTED"
                        )
    if "hostile" in expected:
        failing = {
            (nb, c)
            for nb in nbs
            for c, s in expected["hostile"].get(nb, {}).items()
            if s == 0 and c not in manual[nb]
        }
        described = {(nb, c) for nb, cells in errors.get("hostile", {}).items() for c in cells}
        if failing != described:
            problems.append(
                "ERRORS['hostile'] must give the error of every cell the hostile "
                f"submission fails, and only those: {sorted(failing)}"
            )
        if not any(printed.get("hostile", {}).values()):
            problems.append(
                "PRINTED['hostile'] must name the success lines of the visible tests "
                "its tampering fooled"
            )
    if "partial" in expected and not any(errors.get("partial", {}).values()):
        problems.append("ERRORS['partial'] must give the message of at least one failing cell")
    if problems:
        raise SpecError(f"{where}:\n- " + "\n- ".join(problems))
    return types.SimpleNamespace(
        name=assignment,
        module=module,
        notebooks=nbs,
        points=points,
        manual=manual,
        max_score=module.MAX_SCORE,
        solutions=long_solutions,
        named_solutions={nb: not isinstance(solutions.get(nb), dict) for nb in nbs},
        submissions=submissions,
        expected=expected,
        errors=errors,
        printed=printed,
        students=tuple(sorted(expected)),
        totals=totals,
    )


def missing_spec_message(assignment, course_dir=EXERCISES):
    """What to do about an assignment without a spec, with a skeleton to start from."""
    return (
        f"exercises/source/{assignment}/ has no spec: write tests/assignments/{assignment}.py "
        f"(format: the docstring of tests/assignments/__init__.py; complete example: "
        f"tests/assignments/cost_models.py). A start, from the notebook's metadata: check "
        f"the points against exercises/README.md, then write the partial and hostile "
        f"submissions, their EXPECTED scores, ERRORS and PRINTED.\n\n"
        f"{skeleton(assignment, course_dir)}"
    )


def _literal(value, indent=""):
    """Python source for nested dicts and tuples of strings and numbers, one item a line."""
    inner = indent + "    "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_literal(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{indent}}}"
    if isinstance(value, tuple):
        items = [f"{inner}{_literal(v, inner)}," for v in value]
        return "(\n" + "\n".join(items) + f"\n{indent})"
    return json.dumps(value)


def skeleton(assignment, course_dir=EXERCISES):
    """The beginning of a spec, from the source notebooks' nbgrader metadata."""
    nbs = notebooks(assignment, course_dir)
    points, solutions, manual = {}, {}, {}
    for nb in nbs:
        source = read(source_path(assignment, nb, course_dir))
        points[nb] = graded_cells(source)
        manual[nb] = tuple(manual_cells(source))
        sols = [s for s in solution_cells(source) if s not in manual[nb]]
        if all(f"test_{s}" in points[nb] for s in sols):
            solutions[nb] = tuple(sols)
        else:
            solutions[nb] = {s: "test_..." for s in sols}
    total = sum(sum(p.values()) for p in points.values())
    return "\n".join(
        [
            f'"""{assignment}: what the pipeline test expects (format: tests/assignments/'
            f'__init__.py)."""',
            "",
            "from assignments import Error, submission",
            "",
            f"POINTS = {_literal(points)}",
            f"MAX_SCORE = {total}",
            f"SOLUTIONS = {_literal(solutions)}",
            "# the written answers graded by hand (their rubric is in the source notebook)",
            f"MANUAL = {_literal(manual)}",
            "SUBMISSIONS = {",
            '    "correct": {nb: submission(solved=tuple(SOLUTIONS[nb]) + MANUAL[nb]) '
            "for nb in SOLUTIONS},",
            '    "blank": {nb: submission() for nb in SOLUTIONS},',
            '    # "partial": ..., "hostile": ..., "wrong": ..., "variant": ..., "shortcut": ...',
            "}",
            "EXPECTED = {",
            '    "correct": {nb: dict(cells) for nb, cells in POINTS.items()},',
            '    "blank": {nb: dict.fromkeys(cells, 0) for nb, cells in POINTS.items()},',
            '    # "partial": ..., "hostile": ...',
            "}",
            "ERRORS = {}   # {student: {notebook: {grade_id: Error(...)}}}",
            "PRINTED = {}  # {student: {notebook: (text, ...)}}",
        ]
    )
