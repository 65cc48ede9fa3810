"""collectives.grading.tasks.cost_models (earlier part of collectives.grading.collective_tasks):
the checks of the cost-model notebook (exercises/source/cost_models): the ring all-gather
fitted to measurements, sized to a time budget and upgraded. Expected values are derived by
hand in the comments. The pipeline test (tests/course/test_grading_pipeline.py -k
cost_models) runs the same checks end to end through nbgrader.
"""

import importlib

import pytest

from collectives import GradingError
from collectives.grading import collective_tasks, recheck
from collectives.grading.tasks import cost_models as ct

# ---- cost models: fit, largest ring, better upgrade (exercises/source/cost_models) ----------

# Two nccl-tests rows (size, us) of a ring all-gather over 4 ranks, 2 us per step, 1e9 B/s, by
# hand from (n - 1)(alpha + S / (n B)): S = 4e3 -> 3 (2e-6 + 1e-6) = 9 us; S = 4e6 ->
# 3 (2e-6 + 1e-3) = 3006 us.
ROWS = [(4e3, 9.0), (4e6, 3006.0)]


def test_ring_fit_accepts_the_ring_it_was_timed_on():
    assert ct.check_ring_fit((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9) == 1.0
    assert ct.check_ring_fit([2e-6 * (1 + 1e-8), 1e9], "fit", 4, ROWS[::-1], 2e-6, 1e9) == 1.0
    # one DGX H100 node, 1 us a link: a step crosses two, 2 us; S = 8e3 -> 7 (2e-6 + 1e3 / 450e9)
    rows = [(s, 7 * (2e-6 + s / 8 / 450e9) * 1e6) for s in (8e3, 8e8)]
    assert ct.check_ring_fit((2e-6, 450e9), "fit", 8, rows, 2e-6, 450e9, system="dgx-h100") == 1.0


def test_ring_fit_names_the_slip():
    # the whole intercept 3 alpha for alpha; algbw's 1 / slope = n B / (n - 1); microseconds
    for answer, text in (
        (
            (6e-6, 1e9),
            "the alpha of fit is 6e-06 s, expected 2e-06 s (the "
            "latency of one step of the ring these rows were timed "
            "on by cl.time); yours is exactly 3 times that",
        ),
        (
            (2e-6, 4e9 / 3),
            "the bandwidth of fit is 1333333333.3333333 B/s, "
            "expected 1000000000.0 B/s (the bytes/s of one link "
            "of the ring these rows were timed on by cl.time); "
            "yours is exactly 4/3 times that",
        ),
        ((2.0, 1e3), "yours is 10**6 times that: a unit prefix (M, micro)?"),
    ):
        with pytest.raises(AssertionError) as info:
            ct.check_ring_fit(answer, "fit", 4, ROWS, 2e-6, 1e9)
        assert text in str(info.value)


def test_ring_fit_form_and_test_bugs():
    for answer in (2e-6, (2e-6,), "2e-6, 1e9", None):
        with pytest.raises(GradingError, match=r"should be a pair \(alpha, bandwidth\)"):
            ct.check_ring_fit(answer, "fit", 4, ROWS, 2e-6, 1e9)
    with pytest.raises(GradingError, match=r"is not cl\.time's"):
        ct.check_ring_fit((2e-6, 1e9), "fit", 4, [(4e3, 9.5), (4e6, 3006.0)], 2e-6, 1e9)
    with pytest.raises(GradingError, match="a DGX H100 node has 8 GPUs"):
        ct.check_ring_fit((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9, system="dgx-h100")


# By hand, (n - 1) alpha + (S / B)(n - 1) / n <= t: no bytes, 1 us a step, 7.5 us -> 8 ranks;
# 2 GB at 1 GB/s in 1 s: two ranks already take 1 s + 1 us -> 1 rank; 1 MB at 1 GB/s, 10 us a
# step, 1.1 ms: 16 ranks take 150 us + 937.5 us = 1.0875 ms, 17 take 160 + 941.2 = 1101.2 us.
@pytest.mark.parametrize(
    "case, n",
    [((0.0, 1e-6, 1e9, 7.5e-6), 8), ((2e9, 1e-6, 1e9, 1.0), 1), ((1e6, 1e-5, 1e9, 1.1e-3), 16)],
)
def test_largest_ring_by_hand(case, n):
    assert ct.largest_ring_within(*case) == n
    assert ct.check_largest_ring(n, "r", *case) == 1.0
    with pytest.raises(
        AssertionError,
        match=rf"^r is {n + 1}, but the answer is {n}: a ring "
        rf"all-gather over {n + 1} ranks takes .* more than",
    ):
        ct.check_largest_ring(n + 1, "r", *case)


def test_largest_ring_form_and_test_bugs():
    with pytest.raises(GradingError, match=r"should be an int >= 1 .* \(use // or int\(...\)\)"):
        ct.check_largest_ring(16.0, "r", 1e6, 1e-5, 1e9, 1.1e-3)
    for answer in (True, 0, None):
        with pytest.raises(GradingError, match="should be an int >= 1"):
            ct.check_largest_ring(answer, "r", 1e6, 1e-5, 1e9, 1.1e-3)
    with pytest.raises(GradingError, match="may grow forever"):
        ct.largest_ring_within(1e6, 0.0, 1e9, 1e-3)


# By hand, on 2 ranks, 1 us a step, 1e9 B/s, x2 each: hops save 0.5 us; links save
# S / (2B) / 2, 0.25 us at 1 kB, 2.5 us at 10 kB, 0.5 us at 2 kB (a tie). With hops x10 and
# links x1.1 at 10 kB: 0.9 us against 5 us x (1 - 1/1.1) = 0.45 us.
@pytest.mark.parametrize(
    "case, answer",
    [
        ((2, 1e3, 1e-6, 1e9, 2, 2), "latency"),
        ((2, 1e4, 1e-6, 1e9, 2, 2), "bandwidth"),
        ((2, 1e4, 1e-6, 1e9, 10, 1.1), "latency"),
    ],
)
def test_better_upgrade_by_hand(case, answer):
    assert ct.better_upgrade(*case) == answer
    assert ct.check_better_upgrade(answer, "u", *case) == 1.0
    other = "latency" if answer == "bandwidth" else "bandwidth"
    with pytest.raises(
        AssertionError,
        match=rf"^u is '{other}', but the answer is '{answer}': "
        r"by cl.time the ring all-gather takes ",
    ):
        ct.check_better_upgrade(other, "u", *case)


def test_better_upgrade_form_and_ties():
    with pytest.raises(GradingError, match="a tie"):
        ct.better_upgrade(2, 2e3, 1e-6, 1e9, 2, 2)
    with pytest.raises(GradingError, match="should be a string"):
        ct.check_better_upgrade(None, "u", 2, 1e3, 1e-6, 1e9, 2, 2)
    with pytest.raises(AssertionError, match="not one of the choices"):
        ct.check_better_upgrade("hops", "u", 2, 1e3, 1e-6, 1e9, 2, 2)


def test_cost_model_checks_run_by_name_in_the_recheck():
    recheck(
        (
            "check_reference",
            (
                1.0,
                "fit",
                "grading.collective_tasks.check_ring_fit",
                ((2e-6, 1e9), "fit", 4, ROWS, 2e-6, 1e9),
            ),
        ),
        (
            "check_reference",
            (
                1.0,
                "r",
                "grading.collective_tasks.check_largest_ring",
                (16, "r", 1e6, 1e-5, 1e9, 1.1e-3),
            ),
        ),
    )
    with pytest.raises(AssertionError, match="but the answer is 'latency'"):
        recheck(
            (
                "check_reference",
                (
                    1.0,
                    "u",
                    "grading.collective_tasks.check_better_upgrade",
                    ("bandwidth", "u", 2, 1e3, 1e-6, 1e9, 2, 2),
                ),
            )
        )
    # the module's own name, and the earlier one's objects
    with pytest.raises(AssertionError, match="but the answer is 'latency'"):
        recheck(
            (
                "check_reference",
                (
                    1.0,
                    "u",
                    "grading.tasks.cost_models.check_better_upgrade",
                    ("bandwidth", "u", 2, 1e3, 1e-6, 1e9, 2, 2),
                ),
            )
        )
    # (a reload of collectives.grading leaves the compatibility module as it is: re-executed,
    # as a fresh import in a notebook would, it holds this module's objects)
    old = importlib.reload(collective_tasks)
    for name in ct.__all__:
        assert getattr(old, name) is getattr(ct, name)
