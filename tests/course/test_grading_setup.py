"""An instructor's last mile, without running a class: the course's configuration, the make
targets and the guides say and do what grading needs (issue 25). Fast: nothing is graded."""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXERCISES = REPO / "exercises"


@pytest.fixture(scope="module")
def config():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(EXERCISES)).load_config()


@pytest.mark.parametrize(
    "name, student",
    [
        ("alice_ring_all_gather.ipynb", "alice"),  # the plain form
        ("smithjane_12345_67890_ring_all_gather.ipynb", "smithjane"),  # Canvas: name_id_subid_file
        ("smithjane_late_12345_67890_ring_all_gather-1.ipynb", "smithjane"),  # late, resubmitted
        ("LATE_smithjane_12345_67890_ring_all_gather.ipynb", "smithjane"),
    ],
)
def test_zip_collect_names_learning_platforms_downloads(config, name, student):
    from nbgrader.plugins import FileNameCollectorPlugin

    found = FileNameCollectorPlugin(config=config).collect(
        f"/course/downloaded/cost_models/extracted/{name}"
    )
    # before: the guide's expression made file_id "12345_67890_ring_all_gather.ipynb" (or
    # student "LATE"), so no notebook was found and every student scored 0
    assert found == {"student_id": student, "file_id": "ring_all_gather"}


def test_feedback_is_made_again_after_hand_grading(config):
    # nbgrader's default skips a page newer than its notebook ("Skipping existing"), so a
    # hand grade given after `make grade` never reached the student
    assert config.GenerateFeedback.force is True


def _dry_run(*args):
    return subprocess.run(
        ["make", "-n", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout


def test_grading_installs_no_postgresql_server():
    commands = _dry_run("grade", "ASSIGNMENT=cost_models")
    assert "bubblewrap" in commands
    assert "postgresql" not in commands  # before: apt-get install postgresql


def test_one_assignment_is_released_alone_by_a_documented_command():
    commands = _dry_run("release", "ASSIGNMENT=cost_models", "RELEASE=exchange")
    assert re.search(r"release_notebooks\.py cost_models\b", commands)
    assert "nbgrader release_assignment cost_models" in commands
    assert "make release ASSIGNMENT=" in (EXERCISES / "README.md").read_text()


def test_learners_install_the_sites_wheel_never_the_instructors_repository():
    guide = (EXERCISES / "README.md").read_text()
    assert "pip install -e ." not in guide  # the clone holds the solutions
    assert "wheel" in guide
    start = (REPO / "start_here.md").read_text()
    assert "in preparation" not in start


@pytest.mark.parametrize(
    "topic",
    [
        "--allow-root",
        "Exchange.root",
        "install -d -m 1777",  # the exchange root: writable by all, sticky
        "c.CourseDirectory.groupshared",
        "pg_restore",
        "psql",
        "PGPASSFILE",
        "grades-cost_models.csv",
        "How to recover",
        "COURSE_SEED",
    ],
)
def test_the_guide_covers_the_last_mile(topic):
    assert topic in (EXERCISES / "README.md").read_text(), topic
