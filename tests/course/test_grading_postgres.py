"""One grading test, run with the gradebook in SQLite and in PostgreSQL.

The PostgreSQL server is started by the test on 127.0.0.1 (Debian's ``postgresql``, installed by
``make postgres``): ``initdb`` with trust authentication for one user, ``pg_ctl start`` on a free
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
import time
from pathlib import Path

import nbformat
import pytest

from collectives_grader import classroom

import assignments as specs
import nbgrader_helpers as h

ASSIGNMENT, NOTEBOOK = "cost_models", "ring_all_gather"
pytestmark = pytest.mark.slow


def _as_postgres(args):
    """Run ``args`` as the postgres user when root (postgres refuses to run as root)."""
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


class _Server(str):
    """The gradebook URL, with the server's ``bindir``, ``data`` folder and ``port``."""


@pytest.fixture(scope="module")
def postgres_url():
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        pytest.fail("PostgreSQL is not installed: run `make postgres`", pytrace=False)
    bindir = Path(bins[-1])
    tmp = Path(tempfile.mkdtemp(prefix="collectives-pg-"))
    if os.geteuid() == 0:
        shutil.chown(tmp, "postgres", "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp / "data"
    steps = [
        [str(bindir / "initdb"), "-D", str(data), "-U", "grader", "--auth=trust", "-E", "UTF8"],
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(tmp / "log"),
            "-w",
            "-o",
            f"-h 127.0.0.1 -p {port} -k {tmp}",
            "start",
        ],
        [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "grader", "gradebook"],
    ]
    try:
        for args in steps:
            proc = _as_postgres(args)
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        server = _Server(f"postgresql+psycopg2://grader@127.0.0.1:{port}/gradebook")
        server.bindir, server.data, server.port = bindir, data, port
        yield server
    finally:
        _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"])
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_class_grading_gives_the_same_scores(backend, request, tmp_path):
    from nbgrader.api import Gradebook

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
            nbformat.write(
                spec.submissions[student][NOTEBOOK](
                    course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
                ),
                path,
            )
        (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "collectives_grader.classroom",
            "grade",
            ASSIGNMENT,
            "--course-dir",
            str(course.root),
            "--no-feedback",
        ],
        env=course.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((course.root / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: e["status"] for s, e in report.items()} == {
        "partial": "graded",
        "badjson": "not graded: 0",
    }
    tests = [
        g
        for g, c in h.cells_by_id(course.source(ASSIGNMENT, NOTEBOOK)).items()
        if h.meta(c).get("grade") and c.cell_type == "code"
    ]
    with Gradebook(url) as gb:
        found = {
            s: {
                g.name: g.score for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, s).grades
            }
            for s in ("partial", "badjson")
        }
    assert {g: found["partial"][g] for g in tests} == {
        g: spec.expected["partial"][NOTEBOOK][g] for g in tests
    }
    assert {g: found["badjson"][g] for g in tests} == dict.fromkeys(tests, 0.0)
    backups = list((course.root / "backups").iterdir())
    assert len(backups) == 1 and backups[0].stat().st_size > 0
    assert backups[0].suffix == (".db" if backend == "sqlite" else ".sql")
    if backend == "postgresql":
        # a backup with the grades in it, restored as exercises/README.md says, into a fresh
        # database: every grade as it was
        server = request.getfixturevalue("postgres_url")
        backup = classroom.backup_gradebook(course.root, url)
        client = ["-h", "127.0.0.1", "-p", str(server.port), "-U", "grader"]
        for args in (
            [str(server.bindir / "dropdb"), *client, "gradebook"],
            [str(server.bindir / "createdb"), *client, "gradebook"],
            [
                str(server.bindir / "psql"),
                *client,
                "--dbname",
                "gradebook",
                "--set",
                "ON_ERROR_STOP=1",
                "--quiet",
                "--file",
                str(backup),
            ],
        ):
            proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, (args, proc.stderr)
        with Gradebook(url) as gb:
            restored = {
                s: {
                    g.name: g.score
                    for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, s).grades
                }
                for s in ("partial", "badjson")
            }
        assert restored == found


def test_a_gradebook_server_restarted_mid_run_leaves_nobody_graded_wrongly(postgres_url, tmp_path):
    """PostgreSQL restarted while a student is being graded: that student is not recorded as
    graded (before: 0 for a database error, kept by every re-run); the re-run finishes with
    the spec's scores."""
    from nbgrader.api import Gradebook

    course = h.Course.create(tmp_path, [ASSIGNMENT])
    with open(course.root / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.CourseDirectory.db_url = {str(postgres_url)!r}\n")
    h.nbgrader(course.root, course.env, "generate_assignment", ASSIGNMENT, "--force")
    spec = specs.load(ASSIGNMENT)
    folder = course.root / "submitted" / "partial" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(
        spec.submissions["partial"][NOTEBOOK](
            course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
        ),
        folder / f"{NOTEBOOK}.ipynb",
    )
    args = [
        sys.executable,
        "-m",
        "collectives_grader.classroom",
        "grade",
        ASSIGNMENT,
        "--course-dir",
        str(course.root),
        "--no-feedback",
        "--jobs",
        "1",
    ]
    proc = subprocess.Popen(
        args, env=course.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    autograded = course.root / "autograded" / "partial" / ASSIGNMENT
    deadline = time.monotonic() + 300
    while not autograded.is_dir():  # the kernel runs the notebook now
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    restart = _as_postgres(
        [
            str(postgres_url.bindir / "pg_ctl"),
            "-D",
            str(postgres_url.data),
            "-m",
            "immediate",
            "-w",
            "-l",
            str(postgres_url.data.parent / "log"),
            "restart",
            "-o",
            f"-h 127.0.0.1 -p {postgres_url.port} -k {postgres_url.data.parent}",
        ]
    )
    assert restart.returncode == 0, restart.stderr
    proc.communicate(timeout=600)
    state = course.root / ".grading" / f"{ASSIGNMENT}.json"
    recorded = json.loads(state.read_text()) if state.exists() else {}
    if proc.returncode != 0:  # the restart hit an open connection
        assert "partial" not in recorded
    again = subprocess.run(args, env=course.env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    tests = [
        g
        for g, c in h.cells_by_id(course.source(ASSIGNMENT, NOTEBOOK)).items()
        if h.meta(c).get("grade") and c.cell_type == "code"
    ]
    with Gradebook(str(postgres_url)) as gb:
        found = {
            g.name: g.score
            for g in gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "partial").grades
        }
    assert {g: found[g] for g in tests} == {g: spec.expected["partial"][NOTEBOOK][g] for g in tests}
