"""Both grading paths, on every assignment: the spec's submissions score exactly and identically
(issue 25).

For each assignment of ``exercises/source/`` (one test each): one release of the assignment
alone, the spec's submissions (correct, blank, partial, hostile, the wrong, variant and shortcut
attacks, the origin attack, and the spec's others) written exactly as the pipeline test writes
them (:meth:`nbgrader_helpers.Course.write_submissions`), then two copies of that course graded
one after the other:

- ``plain``: ``nbgrader autograde <assignment>`` (what the formgrader runs);
- ``classroom``: ``python -m collectives_grader.classroom grade <assignment> --jobs 1``
  (``make grade``: prechecked, sandboxed, resumable; it also writes the feedback and the
  export, which count in its seconds).

The two gradebooks must hold the same automatic score and "needs a manual grade" flag in every
cell of every student, and both must be what the spec expects
(:meth:`nbgrader_helpers.Course.expected_after_autograde`: EXPECTED for every test cell; a
written answer awaiting its hand grade, or 0 when handed in as released). The seconds per
notebook of each path are printed (``-s``) and recorded as the test's properties
(``--junitxml``); nothing is asserted about them.

Marked ``extended``: ``make test-extended`` runs it; ``make test`` compares the paths on
cost_models alone, with the notebooks that cannot be graded (tests/course/test_grading_paths.py).
"""

import shutil
import time

import pytest

import assignments as specs
import nbgrader_helpers as h

pytestmark = [pytest.mark.slow, pytest.mark.extended]

PATHS = ("plain", "classroom")


def differences(assignment, spec, states, wanted):
    """One line per cell where the paths disagree with each other or with the spec:
    assignment, student, notebook, cell and the (auto_score, needs_manual_grade) of each."""
    lines = []
    for student in spec.students:
        for nb in spec.notebooks:
            for cell in spec.points[nb]:
                got = {path: states[path][student][0][nb][cell] for path in PATHS}
                want = wanted[student][nb][cell]
                if len(set(got.values())) > 1 or want not in got.values():
                    lines.append(
                        f"{assignment}: student {student!r}, {nb} cell {cell!r}: "
                        + ", ".join(f"{path} {got[path]}" for path in PATHS)
                        + f"; the spec expects {want}  (auto_score, needs_manual_grade)"
                    )
    return lines


@pytest.mark.parametrize("assignment", h.assignments())
def test_both_paths_score_the_spec_exactly(assignment, tmp_path, record_property):
    spec = specs.load(assignment)
    base = h.Course.create(tmp_path, [assignment])
    assert base.release_output == ""
    base.write_submissions(assignment)
    courses, seconds = {}, {}
    for path in PATHS:  # one after the other: the seconds of each are its own
        root = tmp_path / path
        shutil.copytree(base.root, root)
        courses[path] = h.Course(root, base.env, [assignment], "")
        start = time.perf_counter()
        h.run(h.grading_command(path, assignment, root), root, base.env, timeout=1800)
        seconds[path] = time.perf_counter() - start
    notebooks = len(spec.students) * len(spec.notebooks)
    for path in PATHS:
        record_property(f"{path}_seconds", round(seconds[path], 1))
        record_property(f"{path}_seconds_per_notebook", round(seconds[path] / notebooks, 2))
    print(
        f"\n{assignment}: {len(spec.students)} submissions x {len(spec.notebooks)} notebooks; "
        + "; ".join(
            f"{path} {seconds[path]:.1f} s ({seconds[path] / notebooks:.2f} s per notebook)"
            for path in PATHS
        )
    )
    states = {path: courses[path].gradebook_state(assignment, spec) for path in PATHS}
    wanted = base.expected_after_autograde(assignment, spec)
    problems = differences(assignment, spec, states, wanted)
    assert not problems, "\n".join(problems)
    for student in spec.students:  # the totals follow the cells; the same on both paths
        assert states["plain"][student][1:] == states["classroom"][student][1:], (
            f"{assignment}: student {student!r}: total and needs_manual_grade "
            f"plain {states['plain'][student][1:]}, "
            f"classroom {states['classroom'][student][1:]}"
        )
