"""How make test shares its work (tests/work_units.py, tests/conftest.py): the units and the
order they start in."""

from pathlib import Path

from work_units import BOTH_PATHS, PIPELINE, START_FIRST, start_rank, unit_of

REPO = Path(__file__).resolve().parents[2]


def test_a_file_is_a_unit_and_the_pipeline_comes_in_two_halves():
    assert unit_of("tests/package/test_cost.py::test_x[a-b]") == "tests/package/test_cost.py"
    assert unit_of(f"{PIPELINE}::test_autograde[cost_models]") == f"{PIPELINE} half 0"
    assert unit_of(f"{PIPELINE}::test_autograde[planning]") == f"{PIPELINE} half 1"


def test_each_assignment_on_both_grading_paths_is_a_unit_of_its_own():
    # ten assignments graded twice: one worker alone would take them all, one after the other
    first = f"{BOTH_PATHS}::test_both_paths_score_the_spec_exactly[cost_models]"
    second = f"{BOTH_PATHS}::test_both_paths_score_the_spec_exactly[planning]"
    assert unit_of(first) == first and unit_of(second) == second


def test_the_minute_long_files_start_first_in_their_order():
    ranks = [start_rank(unit) for unit in START_FIRST]
    assert ranks == list(range(len(START_FIRST)))
    assert start_rank("tests/package/test_cost.py") == len(START_FIRST)
    assert all((REPO / unit).is_file() for unit in START_FIRST)  # no stale name
