"""collectives.grading.cohort: the cases a hidden test draws from the course seed."""

from collectives.grading import cohort


def _draw(generator):
    return generator.integers(6, 41).item()


def test_the_fixed_cases_come_first_then_distinct_drawn_ones(monkeypatch):
    monkeypatch.setenv(cohort.ENV, "cohort-a")
    found = cohort.cases("test_x", [1, 2, 3], _draw, 5)
    assert found[:3] == [1, 2, 3]
    assert len(found) == 8 and len(set(found)) == 8
    assert all(6 <= n <= 40 for n in found[3:])


def test_one_seed_gives_the_same_cases_and_another_seed_others(monkeypatch):
    monkeypatch.setenv(cohort.ENV, "cohort-a")
    first = cohort.cases("test_x", [], _draw, 6)
    assert cohort.cases("test_x", [], _draw, 6) == first  # the same cohort: regrades
    monkeypatch.setenv(cohort.ENV, "cohort-b")
    assert cohort.cases("test_x", [], _draw, 6) != first  # the next cohort
    assert cohort.cases("test_x", [], _draw, 6, course_seed="cohort-a") == first


def test_each_cell_draws_on_its_own(monkeypatch):
    monkeypatch.setenv(cohort.ENV, "cohort-a")
    assert cohort.cases("test_x", [], _draw, 6) != cohort.cases("test_y", [], _draw, 6)


def test_without_a_seed_the_practice_seed(monkeypatch):
    monkeypatch.delenv(cohort.ENV, raising=False)
    assert cohort.seed() == cohort.PRACTICE
    assert cohort.cases("test_x", [], _draw, 4) == cohort.cases(
        "test_x", [], _draw, 4, course_seed="practice"
    )
