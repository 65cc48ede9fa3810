"""The cohort's cases: hidden tests that differ from one cohort of learners to the next.

A hidden test checks fixed cases (the ones its author chose for their edges) and, on top, cases
drawn from the *course seed*, which the instructor sets once per cohort in
exercises/nbgrader_config.py (``COURSE_SEED``; it reaches the grading kernels as the
environment variable :data:`ENV`). A table of answers built from one cohort's feedback (the
failing cases and their expected values that the messages name) then misses the next cohort's
drawn cases, so that the grading does not depend on keeping the tests secret.

:func:`rng` gives a test cell its own generator (the seed and the cell's label, hashed), so
that the cases of one cell do not change when another cell draws more; :func:`cases` appends
drawn cases to fixed ones. Without the variable (a learner's own kernel, the package's tests)
the seed is :data:`PRACTICE`.

Left out: which cases are drawn is the test's own business (ranges for which the reference is
well conditioned). **Not defended: the seed is no secret from code that runs in the grading
kernel.** A notebook cell run during grading can read the variable, draw the same cases with
the public task module (``placement_cases(3)``, ...), compute their answers with the package
(``reference_placement``, ``cl.time``) and leave them in a global table that the learner's
function reads: the isolated re-run carries plain globals over, so such a table passes (found
by the review of the cluster_collectives notebook, 2026-12-02). Closing it needs the cases
drawn, and the learner's function called on them, outside the kernel's reach (a grading
service beside the sandboxed kernel, not a process the kernel starts); until then the seed
stops only a table carried over from another cohort's feedback.
"""

import hashlib
import os

import numpy as np

__all__ = ["ENV", "PRACTICE", "seed", "rng", "cases"]

#: the environment variable that holds the course seed in a grading kernel
ENV = "COLLECTIVES_COURSE_SEED"
#: the seed when none is set
PRACTICE = "practice"


def seed():
    """The course seed: :data:`ENV`, else :data:`PRACTICE`."""
    return os.environ.get(ENV) or PRACTICE


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
