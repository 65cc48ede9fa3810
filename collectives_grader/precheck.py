"""Checks of a submission before nbgrader grades it, and its tamper report.

Instructor tooling: :mod:`collectives_grader.classroom` runs it on every submission first, for
its report; :class:`collectives_grader.pipeline.Precheck` runs :func:`notebook_problems` inside
nbgrader's autograde pipeline, on every path.

Modelled: what makes ``nbgrader autograde`` stop for the whole class or grade nonsense, found
before it runs: a notebook that is not valid JSON or not a notebook; ``grade_id``s duplicated
or emptied, or nbgrader metadata of another format (nbgrader 0.9.6 raises
``SchemaTooOldError`` from its de-duplication step and aborts); test cells missing or added;
a notebook from another assignment (none of its nbgrader cells are this assignment's, or its
file name is not one of the assignment's). Each problem is a sentence for the student's
feedback. The tamper report lists the nbgrader cells other than solutions (tests, locked text)
whose source differs from the released notebook, and the *copies* (:func:`package_copies`):
code cells holding a long run of lines of the ``collectives`` package's own source (a
learner who pasted the package's function under their own ``def``, which the re-run's origin
check cannot tell from their own writing); nbgrader restores test cells before grading, so an
entry there is a fact to look at, not a penalty. Left out: plain cells without nbgrader
metadata (learners may add their own) in the tamper report (the copies look at every code
cell); a copy rewritten line by line (renamed variables, reordered statements) is not found.
"""

import json
from pathlib import Path

import collectives

from .copies import COPY_LINES, copied_runs

__all__ = [
    "check_submission",
    "tamper_report",
    "package_copies",
    "COPY_LINES",
    "nbgrader_cells",
    "notebook_problems",
    "SCHEMA_VERSION",
]

#: the nbgrader metadata format (``schema_version``) nbgrader 0.9 grades; any other stops
#: nbgrader's whole run (``SchemaTooOldError``, ``SchemaTooNewError``)
SCHEMA_VERSION = 3


def nbgrader_cells(nb):
    """[(grade_id, cell)] of the cells with nbgrader metadata, in order."""
    return [
        (c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), c)
        for c in nb.get("cells", [])
        if c.get("metadata", {}).get("nbgrader")
    ]


def _source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def _load(path):
    """(notebook dict, problem or None)."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"{Path(path).name} is not valid JSON ({exc}), so it cannot be graded"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, f"{Path(path).name} is JSON but not a notebook (no list of cells)"
    return nb, None


def check_submission(folder, release_folder):
    """The problems of the submission in ``folder`` against the released notebooks in
    ``release_folder``, as sentences (empty when it can be graded)."""
    folder, release_folder = Path(folder), Path(release_folder)
    released = {p.name: p for p in sorted(release_folder.glob("*.ipynb"))}
    problems = []
    for extra in sorted(p.name for p in folder.glob("*.ipynb") if p.name not in released):
        problems.append(
            f"{extra} is not a notebook of this assignment (expected "
            f"{', '.join(released)}): was it handed in to the wrong assignment?"
        )
    for name, release_path in released.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name} is missing from the submission")
            continue
        nb, problem = _load(path)
        if problem:
            problems.append(problem)
            continue
        release, _ = _load(release_path)
        problems += notebook_problems(name, nb, release)
    return problems


def notebook_problems(name, nb, release):
    """The problems of the notebook ``nb`` (named ``name``) against the released notebook
    ``release``, as sentences (empty when it can be graded): another assignment's notebook,
    emptied or duplicated ``grade_id``s, nbgrader metadata of another format, test cells
    missing or added."""
    cells = nbgrader_cells(nb)
    ids = [gid for gid, _ in cells]
    expected = {gid: c for gid, c in nbgrader_cells(release)}
    if cells and not set(ids) & set(expected):
        return [
            f"{name} has none of this assignment's cells: it is a notebook from another assignment"
        ]
    problems = []
    versions = sorted(
        {
            str(c["metadata"]["nbgrader"].get("schema_version", "none"))
            for _, c in cells
            if c["metadata"]["nbgrader"].get("schema_version") != SCHEMA_VERSION
        }
    )
    if versions:
        problems.append(
            f"{name}: nbgrader metadata of another format (schema_version "
            f"{', '.join(versions)}, expected {SCHEMA_VERSION}): the cells' "
            "metadata was edited or copied from another notebook"
        )
    empty = sum(1 for gid in ids if not gid)
    if empty:
        problems.append(
            f"{name}: {empty} cell(s) have an empty grade_id (their nbgrader metadata was edited)"
        )
    duplicated = sorted({gid for gid in ids if gid and ids.count(gid) > 1})
    if duplicated:
        problems.append(
            f"{name}: the grade_id(s) {', '.join(duplicated)} appear more than "
            f"once (a cell was copied with its metadata); keep one of each"
        )
    tests = {gid for gid, c in expected.items() if c["metadata"]["nbgrader"].get("grade")}
    found = {gid for gid, c in cells if c["metadata"]["nbgrader"].get("grade")}
    if tests - found:
        problems.append(
            f"{name}: the test cell(s) {', '.join(sorted(tests - found))} are missing (deleted?)"
        )
    if found - tests:
        problems.append(
            f"{name}: the cell(s) {', '.join(sorted(found - tests))} are marked "
            f"as graded but are not test cells of this assignment"
        )
    return problems


def _readable_pairs(folder, release_folder):
    """(notebook name, submitted notebook, released notebook) for each released notebook
    whose submitted copy can be read (the others are the precheck's problems)."""
    for release_path in sorted(Path(release_folder).glob("*.ipynb")):
        nb, problem = _load(Path(folder) / release_path.name)
        release, _ = _load(release_path)
        if problem is None and nb is not None:
            yield release_path.stem, nb, release or {"cells": []}


def tamper_report(folder, release_folder):
    """{notebook: [grade_id, ...]} of the nbgrader cells other than solutions whose source
    differs from the released notebook (notebooks that cannot be read are left out)."""
    report = {}
    for name, nb, release in _readable_pairs(folder, release_folder):
        submitted = dict(nbgrader_cells(nb))
        changed = [
            gid
            for gid, cell in nbgrader_cells(release)
            if not cell["metadata"]["nbgrader"].get("solution")
            and gid in submitted
            and _source(submitted[gid]) != _source(cell)
        ]
        if changed:
            report[name] = changed
    return report


def package_copies(folder, release_folder, package_root=None):
    """{notebook: [{"cell", "module", "line", "lines"}, ...]}: the runs of at least
    :data:`COPY_LINES` consecutive code lines in a submitted notebook's code cells that are
    lines of the package's own source (``package_root``, default the installed
    ``collectives``), each with the cell (its grade_id, or ``"cell <index>"``), the module
    and line where the run starts, and its length in code lines (lines compared by their
    tokens, comments and quoting left out: :mod:`collectives_grader.copies`). Lines the
    released notebook already holds do not count; notebooks that cannot be read are left
    out."""
    root = package_root or Path(collectives.__file__).parent
    report = {}
    for name, nb, release in _readable_pairs(folder, release_folder):
        code = [
            (position, cell)
            for position, cell in enumerate(nb["cells"])
            if isinstance(cell, dict) and cell.get("cell_type") == "code"
        ]
        given = [_source(cell) for cell in release.get("cells", [])]
        runs = []
        for run in copied_runs([_source(cell) for _, cell in code], given, root):
            position, cell = code[run.pop("index")]
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            runs.append({"cell": grade_id or f"cell {position}", **run})
        if runs:
            report[name] = runs
    return report
