"""The cohort's cases: hidden tests that differ from one cohort of learners to the next.

A hidden test checks fixed cases (the ones its author chose for their edges) and, on top, cases
drawn from the *course seed*, which the instructor sets once per cohort in
exercises/nbgrader_config.py (``COURSE_SEED``). A table of answers built from one cohort's
feedback (the failing cases and their expected values that the messages name) then misses the
next cohort's drawn cases, so that the grading does not depend on keeping the tests secret.

How the seed reaches a hidden test: never as itself. The grading kernel's environment does not
hold it (collectives_grader.sandbox scrubs it, sandboxed or not); instead the grader's Execute
step (collectives_grader.pipeline) writes, as the first line of each test cell's hidden part,
that cell's own key, :func:`cell_seed` of the course seed, the submission (the student and a
hash of the notebook) and the cell's ``grade_id``, into the variable :data:`ENV`, which
:func:`seed` reads. So a learner's cell, run before a test cell, finds no seed to draw that
test's cases with; a key seen later (in the environment, in IPython's input history, printed
into the feedback) is another cell's, or draws only this very submission's cases, and tells
nothing of the course seed (a hash): a table built from it fails the next submission.

:func:`rng` gives a draw its own generator (the cell's key and the draw's label, hashed), so
that the cases of one draw do not change when another draws more; :func:`cases` appends drawn
cases to fixed ones. Without the variable (a learner's own kernel, the package's tests) the seed
is :data:`PRACTICE`.

Left out: which cases are drawn is the test's own business (ranges for which the reference is
well conditioned). **What this defends, and what not.** Defended: a table of answers carried
over from any other submission's feedback, this cohort's or another's; and one that the
notebook's cells compute before a test cell runs (draw the cases with the public task module,
compute their answers with the package, leave them in a global the learner's function reads;
the isolated re-run carries plain globals over; found by the review of the cluster_collectives
notebook, 2026-12-02, and now the spec's *computed_table*). While the test cell runs, the
grader reads the learner's function and its globals without running any code of the
learner's (:mod:`.isolation.trust`: a dict subclass or an object with ``__getattr__`` had
filled the table at that moment; the spec's *filled_while_read*). **Not defended**: learner
code that keeps running while the test cell runs, and so sees the cell's key once it is set: a
background thread started by an earlier cell (it can fill a plain global, or a file the
learner's re-run reads, before the grader reads them: shown by the review of 2026-12-03), and,
as for the rest of the grading (:mod:`collectives.grading`), code that hooks into the
interpreter or IPython (``sys.settrace``, audit hooks, a ``pre_run_cell`` callback, which sees
the cell's source). Closing those needs the cases drawn, and the learner's function called on
them, outside the kernel's reach: the grader (outside the sandbox) drawing the cases after the
kernel has handed over the bundle, and the re-run in a sandbox of its own that shares no files
with the kernel. Until then, read the notebooks of scores that look too good for threads
(``threading``, ``_thread``, ``multiprocessing``) and hooks.
"""

import hashlib
import os

import numpy as np

from ..errors import GradingError

__all__ = ["ENV", "PRACTICE", "seed", "cell_seed", "rng", "cases"]

#: the environment variable that holds a test cell's key (:func:`cell_seed`) while it grades
ENV = "COLLECTIVES_COURSE_SEED"
#: the seed when none is set
PRACTICE = "practice"


def seed():
    """The course seed: :data:`ENV`, else :data:`PRACTICE`."""
    return os.environ.get(ENV) or PRACTICE


def cell_seed(course_seed, grade_id, submission=""):
    """The key a test cell draws its cases with: a hash (SHA-256, hex) of the course seed, the
    ``submission`` (the grader's name for one student's notebook as handed in: the student and
    a hash of its cells) and the cell's ``grade_id``; so that one cell's key gives away
    neither the course seed nor another cell's, and a key a learner's notebook shows in its
    own feedback draws nobody else's cases, nor those of its own next submission."""
    if not isinstance(course_seed, str) or not course_seed:
        raise GradingError(f"the course seed must be a non-empty string, not {course_seed!r}")
    if not isinstance(grade_id, str) or not grade_id:
        raise GradingError(f"a cell's grade_id must be a non-empty string, not {grade_id!r}")
    if not isinstance(submission, str):
        raise GradingError(f"the submission must be a string, not {submission!r}")
    text = f"course seed\0{course_seed}\0{submission}\0{grade_id}"
    return hashlib.sha256(text.encode()).hexdigest()


def rng(label, course_seed=None):
    """A numpy generator for the test cell ``label``, from the course seed (or ``course_seed``)."""
    text = f"{seed() if course_seed is None else course_seed}\0{label}".encode()
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text).digest()[:8], "little"))


def cases(label, fixed, draw, count, course_seed=None):
    """``fixed`` (a list of cases) followed by ``count`` cases ``draw(generator)`` makes with
    :func:`rng` of ``label``; a drawn case equal to an earlier one is drawn again (at most
    ``20 * count`` draws in all)."""
    found = list(fixed)
    generator = rng(label, course_seed)
    for _ in range(20 * count):
        if len(found) >= len(fixed) + count:
            break
        case = draw(generator)
        if case not in found:
            found.append(case)
    return found
