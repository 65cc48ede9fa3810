"""Re-running a learner's function without the package, and the checks in a fresh process.

What lives where (bottom up; each module imports only those above it in this list, and the
grading package's :mod:`~collectives.grading.checks`, :mod:`~collectives.grading.diagnosis` and
:mod:`~collectives.grading.cohort`):

``wire``
    the one codec between the kernel, the learner's process and the re-check process: values
    as plain JSON (:func:`~.wire.encode`, :func:`~.wire.decode`), the tagged reply line, the
    words of a refusal. Standalone (standard library only), so the learner's process loads it
    by its path.
``trust``
    which objects the grader may touch without running the learner's code
    (:func:`~.trust.trusted_type`): read before a learner's object is looked into, while a test
    cell grades. Standard library only.
``snapshot``
    the one read-only, hash-checked copy of the package that graded code imports
    (:class:`~.snapshot.PackageSnapshot`; :func:`~.snapshot.package_copy` for the re-checks,
    the same class for the grading sandbox of ``collectives_grader``).
``origin``
    where a learner's graded function comes from (:func:`~.origin.check_origin`): written in
    the notebook, or bound to the package's function, an alias, a partial, a wrapper or a class
    attribute of it (refused).
``reading``
    reading a learner's function and what it uses into a bundle (:func:`~.reading.bundle`), and
    what a task allows of the package (:func:`~.reading.policy`).
``calls``
    ``call(f, ..., isolated=True)``, the calls made in the learner's process
    (:func:`~.calls.resolve`, :func:`~.calls.run_isolated`), and the kernel's side of the wire.
``orchestrator``
    :func:`~.orchestrator.recheck`: the checks run on plain data in a fresh process.
``learner_process``
    the learner's process: a program run by its path from the snapshot, importing nothing of
    the package (only the standard library and ``wire.py``, loaded by its path).

This package re-exports the names the old module ``collectives.grading.isolation`` had
(notebooks call ``_grading.isolation.resolve``) and the re-check's. What the isolation stops
and what it does not: the docstring of :mod:`collectives.grading`.
"""

from .calls import (
    LEARNER_PROCESS,
    IsolatedCall,
    IsolatedFailure,
    call,
    contains_failure,
    decode,
    encode,
    isolated_call,
    resolve,
    run_calls,
    run_isolated,
)
from .orchestrator import RECHECKABLE, isolated_main, recheck
from .origin import NOT_YOURS, check_origin
from .reading import FORBIDDEN, NO_PACKAGE, SCHEDULE_TOOLS, bundle, policy
from .snapshot import PackageSnapshot, manifest, package_copy

__all__ = [
    "NO_PACKAGE",
    "FORBIDDEN",
    "SCHEDULE_TOOLS",
    "IsolatedCall",
    "IsolatedFailure",
    "bundle",
    "policy",
    "call",
    "isolated_call",
    "run_calls",
    "run_isolated",
    "resolve",
    "contains_failure",
    "encode",
    "decode",
    "LEARNER_PROCESS",
    "recheck",
    "RECHECKABLE",
    "isolated_main",
    "PackageSnapshot",
    "package_copy",
    "manifest",
    "NOT_YOURS",
    "check_origin",
]
