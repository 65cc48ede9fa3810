"""How ``make test`` shares the tests between its workers: the unit of work of each test.

``make test`` runs ``pytest -n auto --dist loadgroup``; tests/conftest.py gives xdist a
scheduler that hands out whole units, each to one worker, and starts the units with the most
``slow`` tests first. A unit is a whole test file (as ``--dist loadfile``: a file's module
fixtures are built once), except for the grading pipeline, which runs in two halves of the
assignments, each with its own temporary course, so that both workers grade at once, and for
the comparison of both grading paths (``make test-extended``), whose tests (one per
assignment, each with its own course) are a unit each.

(xdist's own ``loadgroup`` reads ``xdist_group`` marks by rewriting node ids, which pytest 9
no longer lets a plugin do: the marks were ignored and the tests spread one by one.)
"""

import re

__all__ = [
    "PIPELINE",
    "BOTH_PATHS",
    "FIRST_HALF",
    "START_FIRST",
    "pipeline_half",
    "unit_of",
    "start_rank",
]

PIPELINE = "tests/course/test_grading_pipeline.py"
BOTH_PATHS = "tests/course/test_grading_both_paths.py"

# The first half of the pipeline; every other assignment (a new one too) is in the second. The
# halves take about as long: nbgrader autograde took, in seconds (2-core machine, other jobs
# running), cluster_collectives 242, real_processes 73 (94 before its redesign), planning 90,
# fabric 78, all_to_all 67, all_reduce 63, fp8 60, all_gather_reduce_scatter 60, cost_models 58,
# topology_reasoning 53.
FIRST_HALF = (
    "cluster_collectives",
    "fp8",
    "all_gather_reduce_scatter",
    "cost_models",
    "topology_reasoning",
)
HALF_IDS = ("first_half", "second_half")  # the ids of the pipeline tests of a whole half


# Files whose few tests each take minutes (a JupyterHub round trip, a fresh virtual environment
# with PyTorch, the formgrader in a browser): they start before the files with many slow tests,
# in this order, so that none of them is left to end a run on one worker alone.
START_FIRST = (
    "tests/course/test_jupyterhub.py",
    "tests/site/test_learner_install.py",
    "tests/course/test_formgrader.py",
)


def start_rank(unit):
    """Where ``unit`` starts: its index in START_FIRST, else len(START_FIRST) (after them)."""
    return START_FIRST.index(unit) if unit in START_FIRST else len(START_FIRST)


def pipeline_half(assignment):
    """0 for the assignments of FIRST_HALF, 1 for the others."""
    return 0 if assignment in FIRST_HALF else 1


def unit_of(nodeid):
    """The unit of work of the test ``nodeid``: ``"<file>"``, or for a pipeline test
    parametrised by an assignment (or by a half), ``"<file> half <0|1>"``, or for a test of
    both grading paths, the test itself."""
    path, _, rest = nodeid.partition("::")
    match = re.search(r"\[(.*)\]$", rest)
    if path == BOTH_PATHS:
        return nodeid  # one assignment, in a course of its own
    if path != PIPELINE or not match:
        return path
    tokens = match.group(1).split("-")
    if HALF_IDS[0] in tokens or any(token in FIRST_HALF for token in tokens):
        return f"{path} half 0"
    return f"{path} half 1"
