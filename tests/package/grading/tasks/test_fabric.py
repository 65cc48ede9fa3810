"""collectives.grading.tasks.fabric: the checks of the fabric notebook (exercises/source/fabric):
a leaf-spine's all-to-all, a design under a switch budget, queue pairs for a ring, the worst
cable. Expected values are derived by hand in the comments. The pipeline test
(tests/course/test_grading_pipeline.py -k fabric) runs the same checks end to end through
nbgrader.
"""

import pytest

from collectives import GradingError
from collectives.grading import recheck
from collectives.grading.tasks import fabric as ft

# ---- Task 1: the all-to-all on a leaf-spine --------------------------------------------------


@pytest.mark.parametrize(
    "case, seconds",
    [
        # 32 GPUs on leaves of 8, 4 spines: a GPU sends S/32 = 2**21 bytes to each other GPU; a
        # leaf's uplinks carry 8 x 24 x 2**21 over 4 cables, 48 x 2**21 each, more than a host
        # cable's 31 x 2**21: 48 x 2**21 / 5e10 s
        ((32, 8, 4, 1, 2.0**26, 5e10), 48 * 2**21 / 5e10),
        # 8 spines: 24 x 2**21 a cable; the host cable's 31 x 2**21 limits
        ((32, 8, 8, 1, 2.0**26, 5e10), 31 * 2**21 / 5e10),
        # 10 GPUs on leaves 4, 4, 2, one spine with 3 cables: 4 x 6 / 3 = 8 parts an uplink, 9 on a
        # host cable, 1e5 bytes a part: 9e5 / 1e9
        ((10, 4, 1, 3, 1e6, 1e9), 9e-4),
        # 40 GPUs on 5 leaves of 8, 2 spines x 2 cables: 8 x 32 / 4 = 64 parts of 2.5e6 bytes
        ((40, 8, 2, 2, 1e8, 5e10), 64 * 2.5e6 / 5e10),
    ],
)
def test_all_to_all_seconds_is_the_busiest_link(case, seconds):
    assert ft.all_to_all_seconds(*case) == pytest.approx(seconds, rel=1e-12)


# ---- Task 3: a design under a switch budget --------------------------------------------------

# 96 GPUs, radix 32, 7 switches, one cable per leaf and spine, by hand (time in units of
# S / 96 / B: the busiest of 95 on a host cable and a (96 - a) / spines on an uplink):
# a = 24 -> 4 leaves, 3 spines: 24 x 72 / 3 = 576; a = 25..28 -> 4 leaves, 3 spines: 591.7 and
# more; a = 20 -> 5 leaves, 2 spines: 760; a = 16 -> 6 leaves, 1 spine: 1280. The reference is
# (24, 4, 3, 1), 576 units = 8.05 ms. With 6 parallel cables, 5 leaves of 20 and 2 spines
# (20 + 2 x 6 = 32 leaf ports, 5 x 6 = 30 spine ports): 20 x 76 / 12 = 126.7 units, 1.77 ms.
UNIT = ft.NBYTES / 96 / ft.LINK_BANDWIDTH


def test_the_reference_design_is_the_best_with_one_cable():
    assert ft.reference_design(96, 32, 7) == (24, 4, 3, 1)
    assert ft.design_seconds((24, 4, 3, 1), 96) == pytest.approx(576 * UNIT, rel=1e-9)


def test_a_design_better_than_the_reference_passes():
    better = (20, 5, 2, 6)
    assert ft.design_seconds(better, 96) == pytest.approx(20 * 76 / 12 * UNIT, rel=1e-9)
    assert ft.design_seconds(better, 96) < ft.design_seconds((24, 4, 3, 1), 96) / 4
    assert ft.check_design(better, "d", 96, 32, 7) == 1.0
    assert ft.check_design([24, 4, 3, 1.0], "d", 96, 32, 7) == 1.0  # the reference itself


def test_a_slower_or_unbuildable_design_fails_with_the_numbers():
    # 1280 units, 150 GB/s across the middle (3 leaves x 1 uplink); the reference 576 units
    # and 2 leaves x 3 uplinks = 300 GB/s
    with pytest.raises(
        AssertionError,
        match=r"d = \(16, 6, 1, 1\) takes 17.9 ms on 7 switches "
        r"\(bisection 150 GB/s\).*the reference design "
        r"\(24, 4, 3, 1\) takes 8.053 ms on 7 switches "
        r"\(bisection 300 GB/s\).*2.22 times as long",
    ):
        ft.check_design((16, 6, 1, 1), "d", 96, 32, 7)
    for design, text in (
        ((24, 4, 4, 1), "uses 4 + 4 = 8 switches, more than the budget of 7"),
        ((24, 3, 3, 1), "72 host ports hold fewer than the 96 GPUs"),
        ((24, 4, 3, 3), "needs 24 host ports + 3 x 3 uplinks = 33 ports"),
        ((2, 48, 1, 1), "a spine needs 48 x 1 = 48 ports"),
        ((96, 1, 1, 1), "it has 1 leaf; a leaf-spine needs at least two"),
    ):
        with pytest.raises(AssertionError, match="cannot be built") as info:
            ft.check_design(design, "d", 96, 32, 7 if design[1] > 1 else 2)
        assert text in str(info.value)
    for answer in ((24, 4, 3), "24, 4, 3, 1", (24.5, 4, 3, 1), (0, 4, 3, 1), None):
        with pytest.raises(GradingError):
            ft.check_design(answer, "d", 96, 32, 7)
    with pytest.raises(GradingError, match="a bug in the test"):
        ft.reference_design(96, 8, 3)  # nothing fits


# ---- Task 4: queue pairs for a ring ----------------------------------------------------------

# Two racks (32 GPUs on racks of 16), one channel, 2 uplinks. One flow a rack: the busiest
# carries 1, efficiency (1/2)/1 = 0.5. Two flows (q = 2): a rack's busiest is 1 or 2 with 1/2
# each; P(busiest of both <= 1) = 1/4, E = 1 + 3/4 = 1.75, efficiency 1/1.75 = 0.5714. Three
# flows: busiest 3 with 2/8, P(both <= 2) = 9/16, E = 2 + 7/16, efficiency 1.5/2.4375 = 0.6154.
RACKS2 = (32, 16, 1, 2)


def test_ring_efficiency_by_hand():
    assert ft.ring_efficiency(1, *RACKS2, True) == pytest.approx(0.5)
    assert ft.ring_efficiency(2, *RACKS2, True) == pytest.approx(1 / 1.75)
    assert ft.ring_efficiency(3, *RACKS2, True) == pytest.approx(1.5 / 2.4375)
    assert ft.ring_efficiency(3, *RACKS2, False) == pytest.approx(0.5)  # QPs share a path
    assert ft.ring_efficiency(1, 16, 16, 16, 18, True) == 1.0  # one rack: no uplink


def test_ring_qps_reference_and_check():
    assert ft.ring_qps_reference(*RACKS2, 0.55, True) == 2
    assert ft.ring_qps_reference(*RACKS2, 0.6, True) == 3
    assert ft.ring_qps_reference(*RACKS2, 0.5, False) == 1
    assert ft.ring_qps_reference(*RACKS2, 0.55, False) is None
    assert ft.check_ring_qps(2, "q", *RACKS2, 0.55, True) == 1.0
    assert ft.check_ring_qps(None, "q", *RACKS2, 0.55, False) == 1.0
    for answer, text in (
        (1, "keeps an expected 0.5000 of link speed, below the target 0.55; 2 reach 0.5714"),
        (3, "2 queue pairs already reach 0.5714"),
        (None, "is None, but 2 queue pairs per connection reach"),
        (17, "more than the 16 queue pairs"),
    ):
        with pytest.raises(AssertionError) as info:
            ft.check_ring_qps(answer, "q", *RACKS2, 0.55, True)
        assert text in str(info.value)
    with pytest.raises(AssertionError, match="the answer is None"):
        ft.check_ring_qps(1, "q", *RACKS2, 0.55, False)
    with pytest.raises(GradingError):
        ft.check_ring_qps("2", "q", *RACKS2, 0.55, True)


def test_one_racks_statistic_is_too_optimistic_in_the_fixed_case():
    # the notebook's example: 8 racks need 5 QPs for 0.4 where one rack's statistic says 3
    from collectives.fabric import qps_for_efficiency

    assert ft.ring_qps_reference(128, 16, 16, 18, 0.4, True) == 5
    assert qps_for_efficiency(16, 18, 0.4) == 3


# ---- Task 5: the worst cable -----------------------------------------------------------------

# The notebook's example: leaves {0, 1}, {2, 3}, {4, 5}; 3 spines; cable (0, 0) down. Leaf 0
# sends 4 MB (host 0) + 2 MB (host 1) over spines 1 and 2, 3 MB each; host 0's cable carries
# 4 MB: 4e6 / 5e10 = 80 us. Losing (0, 1) or (0, 2) puts leaf 0's 6 MB on one uplink: 120 us.
# Any other cable leaves a path of 3 MB or less: 80 us.
EXAMPLE = (3, 2, 3, [(0, 0)], [(0, 2, 4e6), (1, 4, 2e6), (2, 5, 2e6)])


def test_cable_seconds_by_hand():
    assert ft.cable_seconds(None, *EXAMPLE) == pytest.approx(80e-6)
    assert ft.cable_seconds((0, 1), *EXAMPLE) == pytest.approx(120e-6)
    assert ft.cable_seconds((1, 0), *EXAMPLE) == pytest.approx(80e-6)
    assert ft.worst_cable_reference(*EXAMPLE) == (pytest.approx(120e-6), [(0, 1), (0, 2)])


def test_check_worst_cable():
    assert ft.check_worst_cable((0, 2), "c", *EXAMPLE) == 1.0
    assert ft.check_worst_cable([0, 1], "c", *EXAMPLE) == 1.0
    for answer, text in (
        (
            (1, 0),
            "the step takes 0.08 ms (now 0.08 ms), but losing the cable (0, 1) makes it 0.12 ms",
        ),
        ((0, 0), "a cable that is already down"),
        ((3, 0), "the fabric has leaves 0 to 2 and spines 0 to 2"),
    ):
        with pytest.raises(AssertionError) as info:
            ft.check_worst_cable(answer, "c", *EXAMPLE)
        assert text in str(info.value)
    for answer in ((0,), "01", None, (0.5, 1)):
        with pytest.raises(GradingError):
            ft.check_worst_cable(answer, "c", *EXAMPLE)


# ---- the cases and the re-check ------------------------------------------------------------


def test_cases_are_fixed_then_drawn_from_the_course_seed():
    for cases in (ft.all_to_all_cases, ft.busiest_cases, ft.design_cases):
        fixed = cases(0)
        one, again, other = cases(2, "cohort A"), cases(2, "cohort A"), cases(2, "cohort B")
        assert one[: len(fixed)] == fixed and len(one) == len(fixed) + 2
        assert one == again and one != other
    for gpus, radix, budget in ft.design_cases(3, "cohort A"):
        ft.reference_design(gpus, radix, budget)  # a design fits each


def test_drawn_queue_pair_targets_lie_between_two_efficiencies():
    fixed = ft.ring_qps_cases(0)
    for case in ft.ring_qps_cases(3, "cohort A")[len(fixed) :] + fixed[:1]:
        q = ft.ring_qps_reference(*case)
        gpus, per_rack, channels, uplinks, target, entropy = case
        assert q is not None and q >= 1
        high = ft.ring_efficiency(q, gpus, per_rack, channels, uplinks, entropy)
        low = (
            ft.ring_efficiency(q - 1, gpus, per_rack, channels, uplinks, entropy) if q > 1 else 0.0
        )
        assert low * 1.005 < target < high / 1.005


def test_drawn_failure_cases_keep_their_promise():
    fixed = ft.worst_cable_cases(0)
    assert fixed[0] == EXAMPLE
    for case in ft.worst_cable_cases(1, "cohort A")[len(fixed) - 1 :]:
        worst, cables = ft.worst_cable_reference(*case)
        assert worst >= 1.01 * ft.cable_seconds(None, *case) and 1 <= len(cables) <= 3


@pytest.mark.slow  # starts the isolated re-check's process
def test_fabric_checks_run_by_name_in_the_recheck():
    recheck(
        (
            "check_reference",
            (1.0, "d", "grading.tasks.fabric.check_design", ((20, 5, 2, 6), "d", 96, 32, 7)),
        ),
        (
            "check_reference",
            (1.0, "c", "grading.tasks.fabric.check_worst_cable", ((0, 1), "c", *EXAMPLE)),
        ),
    )
    with pytest.raises(AssertionError, match="already reach"):
        recheck(
            (
                "check_reference",
                (1.0, "q", "grading.tasks.fabric.check_ring_qps", (3, "q", *RACKS2, 0.55, True)),
            )
        )
