"""collectives/validation.py: the shared argument checks (the other checks are exercised
through every public function in test_bad_input.py)."""

import ast
import pathlib

import numpy as np
import pytest

import collectives as cl
from collectives import validation
from collectives.validation import check_nbytes, renamed_arg


@pytest.mark.parametrize(
    "good, value",
    [(0, 0.0), (2**20, 1048576.0), (np.int64(3), 3.0), (2.5, 2.5), (np.float32(4), 4.0)],
)
def test_check_nbytes_accepts_finite_sizes(good, value):
    assert check_nbytes(good) == value and type(check_nbytes(good)) is float


@pytest.mark.parametrize(
    "bad, message",
    [
        (True, "nbytes must be a number of bytes, got True"),
        ("1k", "nbytes must be a number of bytes, got '1k'"),
        (None, "nbytes must be a number of bytes, got None"),
        (-1, "nbytes must be finite and >= 0, got -1"),
        (float("inf"), "nbytes must be finite and >= 0, got inf"),
        (float("nan"), "nbytes must be finite and >= 0, got nan"),
    ],
)
def test_check_nbytes_names_what_is_wrong(bad, message):
    with pytest.raises(cl.CollectivesError) as info:
        check_nbytes(bad)
    assert str(info.value) == message


def test_renamed_arg_takes_the_current_or_the_old_name():
    # (value, default, old value, current name, old name) -> (value, the name it came under)
    assert renamed_arg(4, 1, None, "n_segments", "k") == (4, "n_segments")
    assert renamed_arg(1, 1, 4, "n_segments", "k") == (4, "k")
    assert renamed_arg(None, None, 4, "n_segments", "k") == (4, "k")
    assert renamed_arg(None, None, None, "n_segments", "k") == (None, "n_segments")
    with pytest.raises(
        cl.ScheduleError,
        match=r"^n_segments and its old name k were both "
        r"given \(2 and 4\); give n_segments only$",
    ):
        renamed_arg(2, 1, 4, "n_segments", "k", error=cl.ScheduleError)


def test_validation_imports_only_the_errors():
    # schedule_arg moved to collectives.schedule so that validation, the bottom layer,
    # never imports the Schedule (no schedule <-> validation cycle)
    tree = ast.parse(pathlib.Path(validation.__file__).read_text())
    local = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert local == ["errors"]
    assert not hasattr(validation, "schedule_arg")
    assert cl.schedule.schedule_arg(cl.algorithms.ring_all_gather(2)).n_ranks == 2
    with pytest.raises(
        cl.ScheduleError, match=r"schedule must be a collectives\.Schedule, got list"
    ):
        cl.schedule.schedule_arg([1])
