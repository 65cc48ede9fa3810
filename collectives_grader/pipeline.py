"""The project's steps in nbgrader's own pipelines: the same grading on every path.

Instructor tooling (it needs nbgrader). exercises/nbgrader_config.py puts these classes into
nbgrader's autograde and feedback pipelines (its extension points: the converters'
``exporter_class`` and preprocessor lists), so that plain ``nbgrader autograde`` (what the
formgrader runs, and many instructors type), nbgrader's Python API and ``make grade``
(:mod:`.classroom`, which calls that API) grade a submission the same way:

:class:`TolerantNotebookExporter` (``Autograde.exporter_class``)
    reads a submitted notebook; one that is not valid JSON, or not a notebook, becomes the
    *not-graded stand-in* below instead of an exception.
:class:`Precheck` (first of ``Autograde.sanitize_preprocessors``)
    checks the notebook against the released one (:func:`.precheck.notebook_problems`:
    duplicated or emptied ``grade_id``, old-format nbgrader metadata, deleted or added test
    cells, another assignment's notebook); one with a problem becomes the stand-in, before
    nbgrader's own steps (whose de-duplication stops a whole class run on such metadata).
:class:`Execute` (in place of nbgrader's, in ``Autograde.autograde_preprocessors``)
    runs the notebook in the kernel nbgrader_config.py names (the grading sandbox), each test
    cell's hidden tests drawing their cases with a key of their own derived from the course
    seed (``Execute.course_seed``; the seed never enters the kernel); a stand-in is not run:
    each of its test cells gets the error "not graded: <why>".
:class:`AfterGrades` (after ``SaveAutoGrades``)
    a stand-in scores 0 in every cell, written answers included (a grade given by hand to an
    earlier submission does not stay); a written answer graded by hand whose text is the one
    graded keeps its grade and is not flagged for grading again (nbgrader flags every
    hand-graded answer on a regrade), from the answers' hashes kept in
    ``.grading/answers/<assignment>/<student>.json``.
:class:`ShowRubric` (after ``Execute``)
    under each written answer, a cell with the rubric of the source notebook, for the grader
    in the formgrader.
:class:`FeedbackWithoutAnswerKey` (in ``GenerateFeedback.preprocessors``)
    the feedback page shows the test cells without their hidden tests and each error without
    its traceback (which quotes the hidden lines), only its last line: ``Error: message``;
    without the rubric cells.
:class:`FeedbackExporter` (``GenerateFeedback.exporter_class``)
    nbgrader's feedback page without MathJax from a CDN (the page loads nothing from the
    network; formulas in markdown stay as TeX text), and for a stand-in also
    ``not_graded.html``.

The stand-in is the released notebook with a first cell saying why the submission could not be
graded and how to recover, and the reasons in ``metadata.collectives_grading.not_graded``;
its feedback page is that notebook, so every later ``generate_feedback`` shows the reasons
(never an earlier submission's page). Left out: a submission folder without any of the
assignment's notebooks (nbgrader gives each missing notebook 0 by itself, with no page).
"""

import copy
import hashlib
import json
import os
import re
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter, NotebookExporter
from nbgrader.preprocessors import Execute as NbgraderExecute
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from collectives.grading import cohort

from . import precheck

__all__ = [
    "KEY",
    "TolerantNotebookExporter",
    "Precheck",
    "Execute",
    "with_cell_key",
    "submission_name",
    "AfterGrades",
    "ShowRubric",
    "RUBRIC",
    "FeedbackWithoutAnswerKey",
    "FeedbackExporter",
    "not_graded",
    "stand_in",
    "reasons_of",
    "answers_digest",
    "RECOVER",
    "NOT_GRADED_ERROR",
]

#: the notebook metadata key of the project's grading state
KEY = "collectives_grading"
#: the error name a stand-in's test cells show
NOT_GRADED_ERROR = "NotGraded"
#: what the not-graded page tells the student to do
RECOVER = (
    "How to recover: open the notebook you were given (fetch it again if you need to), "
    "copy your answers into its answer cells only (never copy, delete or add the test "
    "cells, or edit their metadata), then Kernel > Restart Kernel and Run All Cells, save, "
    "and hand it in again before the deadline; or ask your instructor."
)


def reasons_of(nb):
    """The reasons a notebook is a not-graded stand-in, or [] for an ordinary notebook."""
    return list(nb.get("metadata", {}).get(KEY, {}).get("not_graded", []))


def stand_in(release, reasons):
    """The not-graded stand-in of a submission (module docstring): a copy of the released
    notebook ``release`` with a first cell naming the ``reasons``."""
    nb = copy.deepcopy(release)
    text = (
        "**This submission could not be graded; it scores 0.**\n\n"
        + "\n".join(f"- {r}" for r in reasons)
        + f"\n\n{RECOVER}"
    )
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))
    nb.metadata[KEY] = {"not_graded": list(reasons)}
    return nb


def _coursedir(obj):
    """The nbgrader CourseDirectory above a preprocessor or exporter (its parents)."""
    while obj is not None:
        found = getattr(obj, "coursedir", None)
        if found is not None:
            return found
        obj = getattr(obj, "parent", None)
    return None


def _release_notebook(coursedir, assignment, notebook):
    path = (
        Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
        / f"{notebook}.ipynb"
    )
    return nbformat.read(path, as_version=4)


def _ids(resources):
    info = resources.get("nbgrader", {})
    return info.get("assignment"), info.get("student"), info.get("notebook")


class TolerantNotebookExporter(NotebookExporter):
    """nbgrader's notebook exporter, which turns a submitted file that cannot be read as a
    notebook into the not-graded stand-in (module docstring) instead of raising."""

    def from_filename(self, filename, resources=None, **kw):
        try:
            with open(filename, encoding="utf-8") as f:
                nbformat.read(f, as_version=4)
        except Exception as exc:  # anything a broken file can raise
            assignment, _, notebook = _ids(resources or {})
            coursedir = _coursedir(self)
            if coursedir is None or assignment is None:
                raise
            try:
                release = _release_notebook(coursedir, assignment, notebook)
            except OSError:
                raise exc from None
            name = Path(filename).name
            kind = (
                "is not valid JSON"
                if isinstance(exc, (ValueError, UnicodeDecodeError))
                else "cannot be read as a notebook"
            )
            reason = f"{name} {kind} ({type(exc).__name__}), so it cannot be graded"
            return self.from_notebook_node(stand_in(release, [reason]), resources, **kw)
        # read: the conversion's own errors (a kernel that died, ...) are nbgrader's to handle
        return super().from_filename(filename, resources=resources, **kw)


class Precheck(NbGraderPreprocessor):
    """The first sanitizing step: a notebook with a problem (:func:`.precheck.notebook_problems`)
    becomes the not-graded stand-in (module docstring)."""

    def preprocess(self, nb, resources):
        if reasons_of(nb):
            return nb, resources
        assignment, _, notebook = _ids(resources)
        coursedir = _coursedir(self)
        if coursedir is None:
            return nb, resources
        release = _release_notebook(coursedir, assignment, notebook)
        problems = precheck.notebook_problems(f"{notebook}.ipynb", nb, release)
        if problems:
            self.log.warning("not grading %s: %s", notebook, "; ".join(problems))
            return stand_in(release, problems), resources
        return nb, resources


#: the line of a test cell that opens its hidden tests (nbgrader's default delimiter)
_BEGIN_HIDDEN = re.compile(r"^[ \t]*#+[ \t]*BEGIN HIDDEN TESTS.*$", re.M)


def with_cell_key(source, key):
    """A test cell's ``source`` with, right after the line that opens its hidden tests (and
    indented as that line is), a line that makes ``key`` the seed its hidden tests draw their
    cases with (:data:`collectives.grading.cohort.ENV`); a cell without hidden tests is
    returned as it is."""
    match = _BEGIN_HIDDEN.search(source)
    if match is None:
        return source
    indent = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
    line = (
        f"{indent}import os as _cohort_os; _cohort_os.environ[{cohort.ENV!r}] = {key!r}"
        "  # this cell's key to the cohort's cases"
    )
    return source[: match.end()] + "\n" + line + source[match.end() :]


def submission_name(nb, resources):
    """What tells one submission from another for :func:`collectives.grading.cohort.cell_seed`:
    the student's id and a hash of every cell's source (as nbgrader runs them: test cells
    restored), the same on every regrade of the same notebook."""
    student = str(resources.get("nbgrader", {}).get("student", ""))
    digest = hashlib.sha256(json.dumps([c.get("source", "") for c in nb.cells]).encode())
    return f"{student}\0{digest.hexdigest()}"


class Execute(NbgraderExecute):
    """nbgrader's Execute, which does not run a not-graded stand-in (its test cells get the
    error that says why instead), and which gives each test cell's hidden tests their own key
    to the cohort's cases (:func:`collectives.grading.cohort.cell_seed` of
    :attr:`course_seed`, the submission (:func:`submission_name`) and the cell's grade_id,
    written into the cell's first hidden line
    while it runs, and taken out again: the autograded notebook and its feedback hold the
    cell as released). The course seed itself never enters the kernel."""

    course_seed = Unicode(
        "",
        help="The cohort's course seed (exercises/nbgrader_config.py's COURSE_SEED); empty: "
        "the hidden tests draw the practice cases a learner's own kernel draws.",
    ).tag(config=True)

    def preprocess(self, nb, resources, km=None):
        reasons = reasons_of(nb)
        if not reasons:
            keyed = {}
            if not self.course_seed:
                self.log.warning(
                    "Execute.course_seed is empty: the hidden tests draw the practice cases, "
                    "which a learner's own kernel draws too (set COURSE_SEED in "
                    "nbgrader_config.py)"
                )
            else:
                submission = submission_name(nb, resources)
                for index, cell in enumerate(nb.cells):
                    meta = cell.get("metadata", {}).get("nbgrader", {})
                    if cell.cell_type == "code" and meta.get("grade") and meta.get("grade_id"):
                        key = cohort.cell_seed(self.course_seed, meta["grade_id"], submission)
                        keyed[index] = cell.source
                        cell.source = with_cell_key(cell.source, key)
            try:
                return super().preprocess(nb, resources, km=km)
            finally:
                for index, source in keyed.items():
                    nb.cells[index].source = source
        message = "not graded: " + "; ".join(reasons)
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                cell.outputs = [
                    nbformat.v4.new_output(
                        "error",
                        ename=NOT_GRADED_ERROR,
                        evalue=message,
                        traceback=[f"{NOT_GRADED_ERROR}: {message}"],
                    )
                ]
        return nb, resources


def answers_digest(cell):
    """sha256 of a written answer's text, as graded."""
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    return hashlib.sha256(source.encode()).hexdigest()


def _answers_file(coursedir, assignment, student):
    return Path(coursedir.root) / ".grading" / "answers" / assignment / f"{student}.json"


class AfterGrades(NbGraderPreprocessor):
    """After nbgrader's SaveAutoGrades: zeros for a stand-in, and hand grades kept for written
    answers unchanged since they were graded (module docstring)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        assignment, student, notebook = _ids(resources)
        coursedir = _coursedir(self)
        reasons = reasons_of(nb)
        answers = {
            c.metadata["nbgrader"]["grade_id"]: c
            for c in nb.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")
            and c.metadata["nbgrader"].get("solution")
        }
        path = _answers_file(coursedir, assignment, student) if coursedir else None
        kept = json.loads(path.read_text()) if path is not None and path.exists() else {}
        before = kept.get(notebook, {})
        with Gradebook(resources["nbgrader"]["db_url"]) as gb:
            submission = gb.find_submission_notebook(notebook, assignment, student)
            for grade in submission.grades:
                if reasons:
                    grade.auto_score, grade.manual_score = 0.0, None
                    grade.needs_manual_grade = False
                elif (
                    grade.name in answers
                    and grade.manual_score is not None
                    and before.get(grade.name) == answers_digest(answers[grade.name])
                ):
                    grade.needs_manual_grade = False
            gb.db.commit()
        if path is not None:
            kept[notebook] = (
                {} if reasons else {gid: answers_digest(cell) for gid, cell in answers.items()}
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(kept, indent=1, sort_keys=True))
            os.replace(tmp, path)
        return nb, resources


#: where a written answer's rubric starts in its source cell (between the solution markers)
RUBRIC = "**Rubric"


def _rubric(source_cell):
    text = source_cell.get("source", "")
    text = "".join(text) if isinstance(text, list) else text
    start = text.find(RUBRIC)
    if start < 0:
        return None
    end = text.find("END SOLUTION", start)
    rubric = text[start : end if end >= 0 else None]
    return "\n".join(line for line in rubric.splitlines() if "END SOLUTION" not in line).rstrip(
        " #\n"
    )


class ShowRubric(NbGraderPreprocessor):
    """Under each written answer of the autograded notebook (what the formgrader shows), a
    cell with its rubric from the source notebook; :class:`FeedbackWithoutAnswerKey` leaves
    these cells out of the students' pages."""

    def preprocess(self, nb, resources):
        assignment, _, notebook = _ids(resources)
        coursedir = _coursedir(self)
        if coursedir is None or reasons_of(nb):
            return nb, resources
        path = (
            Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
            / f"{notebook}.ipynb"
        )
        try:
            source = nbformat.read(path, as_version=4)
        except OSError:
            return nb, resources
        rubrics = {}
        for cell in source.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade") and meta.get("solution") and _rubric(cell):
                rubrics[meta["grade_id"]] = _rubric(cell)
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if gid in rubrics and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                extra = nbformat.v4.new_markdown_cell(
                    f"*For the grader (left out of the student's feedback):*\n\n{rubrics[gid]}"
                )
                extra.metadata[KEY] = {"rubric_of": gid}
                cells.append(extra)
        nb.cells = cells
        return nb, resources


_HIDDEN = re.compile(
    r"^[ \t]*#+[ \t]*BEGIN HIDDEN TESTS.*?^[ \t]*#+[ \t]*END HIDDEN TESTS[^\n]*"
    r"\n?",
    re.M | re.S,
)


class FeedbackWithoutAnswerKey(NbGraderPreprocessor):
    """The feedback page without the answer key: test cells without their hidden tests, errors
    without their tracebacks (only ``Error: message``), no rubric cells (:class:`ShowRubric`)."""

    def preprocess(self, nb, resources):
        nb.cells = [c for c in nb.cells if "rubric_of" not in c.get("metadata", {}).get(KEY, {})]
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade"):
            cell.source = _HIDDEN.sub("", cell.source)
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources


#: the MathJax scripts nbconvert's templates load from a CDN
_CDN_SCRIPT = re.compile(r'<script[^>]*src="https?://[^"]*mathjax[^"]*"[^>]*>\s*</script>', re.I)


def not_graded(assignment, reasons):
    """The page ``feedback/<student>/<assignment>/not_graded.html`` of a submission that could
    not be graded."""
    import html

    items = "".join(f"<li>{html.escape(r)}</li>" for r in reasons)
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>"
        f"{html.escape(assignment)}: not graded</title></head><body><h1>"
        f"{html.escape(assignment)}: your submission could not be graded</h1><p>It scores 0 "
        f"because:</p><ul>{items}</ul><p>{html.escape(RECOVER)}</p></body></html>\n"
    )


class FeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML with nothing loaded from a CDN (MathJax left out), and for a
    not-graded stand-in, ``not_graded.html`` beside it."""

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        output = _CDN_SCRIPT.sub(
            "<!-- no MathJax: this page loads nothing from the network -->", output
        )
        reasons = reasons_of(nb)
        assignment, student, _ = _ids(resources or {})
        coursedir = _coursedir(self)
        if reasons and coursedir is not None and assignment and student:
            folder = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "not_graded.html").write_text(not_graded(assignment, reasons))
        return output, resources
