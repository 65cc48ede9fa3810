"""scripts/release_notebooks.py leaves an up-to-date release alone and regenerates one whose
source changed (so that a `make book` with nothing changed does not pay for nbgrader)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release_notebooks.py"


def run(course, *args):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--course-dir", str(course), "-v", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_release_skips_what_is_up_to_date(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(
        ROOT / "exercises" / "source" / "cost_models", course / "source" / "cost_models"
    )
    shutil.copy2(ROOT / "exercises" / "nbgrader_config.py", course / "nbgrader_config.py")
    released = course / "release" / "cost_models" / "ring_all_gather.ipynb"

    assert "released" in run(course)  # a fresh course: generated
    first = released.stat().st_mtime_ns
    assert run(course).strip() == "up to date: cost_models"  # nothing changed: skipped
    assert released.stat().st_mtime_ns == first

    source = course / "source" / "cost_models" / "ring_all_gather.ipynb"
    later = first / 1e9 + 5
    os.utime(source, (later, later))  # the source changes
    assert "released" in run(course)
    assert released.stat().st_mtime_ns > first
    assert "released" in run(course, "--force")  # --force always regenerates
