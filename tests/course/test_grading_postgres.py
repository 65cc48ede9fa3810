"""One grading test, run with the gradebook in SQLite and in PostgreSQL.

The PostgreSQL server is started by the test on 127.0.0.1 (Debian's ``postgresql``, installed by
``make sandbox``): ``initdb`` with trust authentication for one user, ``pg_ctl start`` on a free
port, run as the ``postgres`` user when the tests run as root (postgres refuses root), then
stopped. The test: cost_models released, a partial submission and one that is not valid JSON,
graded by the class command (which backs the gradebook up first, with ``pg_dump`` for
PostgreSQL); the partial student's scores are exactly the spec's, the other's 0.
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

import assignments as specs
import nbgrader_helpers as h

from collectives_grader import classroom

ASSIGNMENT, NOTEBOOK = "cost_models", "ring_all_gather"
pytestmark = pytest.mark.slow


def _as_postgres(args):
    """Run ``args`` as the postgres user when root (postgres refuses to run as root)."""
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def postgres_url():
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        pytest.fail("PostgreSQL is not installed: run `make sandbox`", pytrace=False)
    bindir = Path(bins[-1])
    tmp = Path(tempfile.mkdtemp(prefix="collectives-pg-"))
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres", "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp / "data"
    steps = [[str(bindir / "initdb"), "-D", str(data), "-U", "grader", "--auth=trust", "-E",
              "UTF8"],
             [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(tmp / "log"), "-w", "-o",
              f"-h 127.0.0.1 -p {port} -k {tmp}", "start"],
             [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "grader",
              "gradebook"]]
    try:
        for args in steps:
            proc = _as_postgres(args)
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        yield f"postgresql+psycopg2://grader@127.0.0.1:{port}/gradebook"
    finally:
        _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"])
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_class_grading_gives_the_same_scores(backend, request, tmp_path):
    course = h.Course.create(tmp_path, [ASSIGNMENT])
    if backend == "postgresql":
        url = request.getfixturevalue("postgres_url")
        with open(course.root / "nbgrader_config.py", "a") as f:
            f.write(f"\nc.CourseDirectory.db_url = {url!r}\n")
        h.nbgrader(course.root, course.env, "generate_assignment", ASSIGNMENT, "--force")
    url = classroom.db_url(course.root)
    assert url.startswith(backend)
    spec = specs.load(ASSIGNMENT)
    for student in ("partial", "badjson"):
        folder = course.root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        path = folder / f"{NOTEBOOK}.ipynb"
        if student == "badjson":
            path.write_text('{"cells": [')
        else:
            nbformat.write(spec.submissions[student][NOTEBOOK](
                course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)), path)
        (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")
    proc = subprocess.run([sys.executable, "-m", "collectives_grader.classroom", "grade",
                           ASSIGNMENT, "--course-dir", str(course.root), "--no-feedback"],
                          env=course.env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((course.root / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: e["status"] for s, e in report.items()} == {"partial": "graded",
                                                          "badjson": "not graded: 0"}
    from nbgrader.api import Gradebook
    tests = [g for g, c in h.cells_by_id(course.source(ASSIGNMENT, NOTEBOOK)).items()
             if h.meta(c).get("grade") and c.cell_type == "code"]
    with Gradebook(url) as gb:
        found = {s: {g.name: g.score for g in gb.find_submission_notebook(
            NOTEBOOK, ASSIGNMENT, s).grades} for s in ("partial", "badjson")}
    assert {g: found["partial"][g] for g in tests} == {
        g: spec.expected["partial"][NOTEBOOK][g] for g in tests}
    assert {g: found["badjson"][g] for g in tests} == dict.fromkeys(tests, 0.0)
    backups = list((course.root / "backups").iterdir())
    assert len(backups) == 1 and backups[0].stat().st_size > 0
    assert backups[0].suffix == (".db" if backend == "sqlite" else ".sql")
