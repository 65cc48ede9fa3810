"""Compatibility module: the isolated re-check under its earlier module name.

``collectives.grading.recheck`` is the function (the package re-exports it); this module keeps
``from collectives.grading.recheck import encode, decode, package_copy, ...`` working. The
re-check is :mod:`collectives.grading.isolation.orchestrator`, its codec
:mod:`collectives.grading.isolation.calls` (on :mod:`~collectives.grading.isolation.wire`),
the package copy :mod:`collectives.grading.isolation.snapshot`.
"""

from .isolation.calls import decode, encode
from .isolation.orchestrator import RECHECKABLE, isolated_main, recheck
from .isolation.snapshot import PACKAGE_DIR, manifest, package_copy

__all__ = [
    "recheck",
    "RECHECKABLE",
    "encode",
    "decode",
    "isolated_main",
    "package_copy",
    "manifest",
    "PACKAGE_DIR",
]
