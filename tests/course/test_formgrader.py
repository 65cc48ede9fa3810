"""The formgrader in a browser: a hand grade and a comment given to a written answer reach the
student's feedback and the export (issue 25).

A course with cost_models released and one submission autograded; Jupyter Server with
nbgrader's formgrader on 127.0.0.1 (a free port, a token), started as exercises/README.md says
(``--allow-root`` as root); Debian's Chromium, headless, through Playwright, opens the
submission's grading page, types the score and the comment as a grader does; then ``nbgrader
generate_feedback`` (no ``--force``) and ``nbgrader export``.
"""

import csv
import html
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

import assignments as specs
import nbgrader_helpers as h

pytestmark = pytest.mark.slow

ASSIGNMENT, NOTEBOOK, WRITTEN = "cost_models", "ring_all_gather", "written_regimes"
CHROMIUM = Path("/usr/bin/chromium")
COMMENT = "Both regimes named, with the 92 % of latency at 64 kB: full marks."


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = h.Course.create(tmp_path_factory.mktemp("formgrader"), [ASSIGNMENT])
    spec = specs.load(ASSIGNMENT)
    nb = spec.submissions["correct"][NOTEBOOK](
        course.source(ASSIGNMENT, NOTEBOOK), course.release(ASSIGNMENT, NOTEBOOK)
    )
    folder = course.root / "submitted" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    (folder / "timestamp.txt").write_text("2026-01-15 10:00:00.000000 UTC")
    h.nbgrader(course.root, course.env, "autograde", ASSIGNMENT)
    return course


@pytest.fixture(scope="module")
def formgrader(course):
    port, token = _free_port(), secrets.token_hex(16)
    args = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        "--ServerApp.jpserver_extensions={'nbgrader.server_extensions.formgrader': True}",
    ]
    if os.geteuid() == 0:
        args.append("--allow-root")
    log = open(course.root.parent / "server.log", "w")
    proc = subprocess.Popen(
        args, cwd=course.root, env=course.env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (
                course.root.parent / "server.log"
            ).read_text()[-3000:]
            time.sleep(0.5)
    yield base, token
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _grade(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        grade = gb.find_grade(WRITTEN, NOTEBOOK, ASSIGNMENT, "alice")
        comment = gb.find_comment(WRITTEN, NOTEBOOK, ASSIGNMENT, "alice")
        return grade.manual_score, grade.needs_manual_grade, comment.manual_comment


def test_a_grade_and_comment_typed_in_the_formgrader_reach_feedback_and_export(course, formgrader):
    from nbgrader.api import Gradebook
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "run `make browser` (Debian's chromium)"
    base, token = formgrader
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gb:
        submission_id = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "alice").id
    assert _grade(course)[:2] == (None, True)  # waiting for the grader
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            # the token on every request, the formgrader's own API calls included
            context = browser.new_context(extra_http_headers={"Authorization": f"token {token}"})
            page = context.new_page()
            page.goto(f"{base}/formgrader/submissions/{submission_id}/", wait_until="networkidle")
            assert "Rubric" in page.content()  # the rubric beside the answer
            score = page.locator(f"input.score#{WRITTEN}")
            score.fill("1")
            score.press("Tab")  # 'change': the formgrader saves
            comment = page.locator(f"textarea#{WRITTEN}-comment")
            comment.fill(COMMENT)
            comment.press("Tab")
            deadline = time.monotonic() + 60
            while _grade(course) != (1.0, False, COMMENT):
                assert time.monotonic() < deadline, _grade(course)
                page.wait_for_timeout(250)
        finally:
            browser.close()
    h.nbgrader(course.root, course.env, "generate_feedback", ASSIGNMENT)
    page = (course.root / "feedback" / "alice" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert f"{NOTEBOOK} (Score: 10.0 / 10.0)" in page
    assert html.escape(COMMENT, quote=False) in page
    h.nbgrader(course.root, course.env, "export", "--to", "grades.csv")
    with open(course.root / "grades.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["student_id"] == "alice"]
    assert float(row["score"]) == 10.0
