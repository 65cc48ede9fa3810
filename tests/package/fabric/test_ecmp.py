"""Balls into bins (collectives.fabric.ecmp): collision probabilities and the busiest path's
load against enumeration, sampling, the queue pairs an efficiency target needs."""

import itertools
import math

import numpy as np
import pytest

from collectives import fabric
from collectives.errors import CollectivesError


def brute_force_max_load(m, n):
    """P(max = k) by enumerating all n^m assignments of m flows to n paths."""
    dist = np.zeros(m + 1)
    for assignment in itertools.product(range(n), repeat=m):
        dist[max(np.bincount(assignment, minlength=n)) if m else 0] += 1
    return dist / n**m


def test_collision_probability():
    # 4 flows on 4 paths: 4!/4^4 = 24/256 of assignments are collision-free
    assert fabric.ecmp_no_collision_probability(4, 4) == 0.09375
    assert fabric.ecmp_collision_probability(4, 4) == 0.90625
    assert fabric.ecmp_no_collision_probability(5, 4) == 0.0
    assert fabric.ecmp_collision_probability(1, 8) == 0.0
    assert fabric.ecmp_no_collision_probability(0, 3) == 1.0
    for m, n in [(2, 3), (3, 3), (3, 5), (4, 6)]:
        assert fabric.ecmp_no_collision_probability(m, n) == pytest.approx(
            brute_force_max_load(m, n)[:2].sum(), abs=1e-15
        )


@pytest.mark.parametrize(
    "m,n", [(0, 3), (1, 1), (3, 1), (1, 4), (2, 2), (3, 3), (4, 2), (5, 3), (4, 4), (2, 6), (6, 4)]
)
def test_max_load_distribution_matches_enumeration(m, n):
    np.testing.assert_allclose(
        fabric.max_load_distribution(m, n), brute_force_max_load(m, n), atol=1e-13
    )


@pytest.mark.parametrize("n,expected", [(2, 1.5), (4, 2.125), (8, 2.597), (16, 3.078)])
def test_expected_max_load_for_as_many_flows_as_paths(n, expected):
    exact = fabric.expected_max_load_exact(n, n)
    assert exact == pytest.approx(expected, abs=5e-4)
    dist = fabric.max_load_distribution(n, n)
    std = math.sqrt(np.arange(n + 1) ** 2 @ dist - exact**2)
    trials = 40_000
    estimate = fabric.expected_max_load(n, n, trials=trials, seed=7)
    assert abs(estimate - exact) < 4 * std / math.sqrt(trials)  # 4 standard errors
    assert fabric.expected_max_load(n, n, trials=trials, seed=7) == estimate


def test_expected_max_load_edge_cases_and_many_flows():
    assert fabric.expected_max_load(0, 4) == 0.0
    assert fabric.expected_max_load(7, 1, trials=10) == 7.0
    assert fabric.expected_max_load_exact(7, 1) == 7.0
    # Meta's 1,000 flows on 16 links: mean 62.5 per link, the busiest is ~25 % above
    exact = fabric.expected_max_load_exact(1000, 16)
    assert 1.2 < exact / 62.5 < 1.35
    assert fabric.expected_max_load(1000, 16, trials=2000, seed=1) == pytest.approx(exact, rel=0.01)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: fabric.ecmp_collision_probability(-1, 4), "flows must be an integer >= 0, got -1"),
        (
            lambda: fabric.ecmp_no_collision_probability(2, 0),
            "paths must be an integer >= 1, got 0",
        ),
        (lambda: fabric.expected_max_load(2, 2.0), "paths must be an integer >= 1, got 2.0"),
        (lambda: fabric.expected_max_load(2, 2, trials=0), "trials must be an integer >= 1, got 0"),
        (lambda: fabric.max_load_distribution(True, 2), "flows must be an integer >= 0, got True"),
    ],
)
def test_balls_into_bins_reject_bad_input(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()


@pytest.mark.parametrize(
    "connections,paths,target,answer",
    [(16, 18, 0.45, 4), (8, 8, 0.5, 3), (8, 8, 0.4, 2), (4, 16, 0.3, 4), (1, 1, 1.0, 1)],
)
def test_qps_for_efficiency_is_the_first_q_to_reach_the_target(connections, paths, target, answer):
    assert fabric.qps_for_efficiency(connections, paths, target) == answer
    assert fabric.ecmp_efficiency(connections * answer, paths) >= target
    if answer > 1:
        assert fabric.ecmp_efficiency(connections * (answer - 1), paths) < target
    # one flow per path on one path: the busiest is the mean
    assert fabric.ecmp_efficiency(5, 1) == 1.0
    with pytest.raises(CollectivesError, match="target must be a share"):
        fabric.qps_for_efficiency(4, 4, 1.5)


# ---- the busiest link of many racks: the statistic a synchronous step waits for ------------


def brute_force_max_over_groups(m, n, g):
    """P(max = k) over g independent groups of m flows on n paths, by enumerating all
    (n^m)^g assignments: the busiest link of every group's links together."""
    dist = np.zeros(m + 1)
    for assignment in itertools.product(range(n), repeat=m * g):
        loads = (
            [np.bincount(assignment[i * m : (i + 1) * m], minlength=n).max() for i in range(g)]
            if m
            else [0]
        )
        dist[max(loads)] += 1
    return dist / n ** (m * g)


@pytest.mark.parametrize(
    "m,n,g",
    [(2, 2, 2), (3, 2, 2), (2, 3, 3), (3, 3, 2), (4, 2, 2), (1, 4, 3), (0, 2, 4), (3, 1, 2)],
)
def test_max_over_groups_matches_enumeration(m, n, g):
    np.testing.assert_allclose(
        fabric.max_load_distribution(m, n, g), brute_force_max_over_groups(m, n, g), atol=1e-13
    )
    dist = brute_force_max_over_groups(m, n, g)
    assert fabric.expected_max_load_exact(m, n, g) == pytest.approx(
        np.arange(m + 1) @ dist, abs=1e-12
    )


def test_two_flows_on_two_paths_by_hand():
    # one rack: both flows on one path with probability 1/2, so E[max] = 1.5; two racks:
    # the busiest of both is 1 only if neither collides, 1/4, so E[max] = 2 - 1/4 = 1.75
    assert fabric.expected_max_load_exact(2, 2) == 1.5
    assert fabric.expected_max_load_exact(2, 2, 2) == 1.75
    assert fabric.expected_max_load_exact(2, 2, 10) == pytest.approx(2 - 0.5**10, abs=1e-15)


def test_the_busiest_of_many_racks_grows_with_the_racks():
    # 16 flows on 18 uplinks: about 2.93 per rack, but the busiest of 252 racks' uplinks
    # carries about 5.5: (16/18) / 5.5 is 16 % of the even spread, not a third
    one = fabric.expected_max_load_exact(16, 18)
    many = [fabric.expected_max_load_exact(16, 18, g) for g in (1, 8, 64, 252, 1536)]
    assert many[0] == one and all(b > a for a, b in zip(many, many[1:]))
    assert round(one, 2) == 2.93 and 5.4 < many[3] < 5.7
    assert fabric.ecmp_efficiency(16, 18, 252) == pytest.approx((16 / 18) / many[3])
    # the sampled maximum over 252 racks agrees within 4 standard errors
    dist = fabric.max_load_distribution(16, 18, 252)
    std = math.sqrt(np.arange(17) ** 2 @ dist - many[3] ** 2)
    trials = 4000
    sampled = fabric.expected_max_load(16, 18, trials=trials, seed=3, groups=252)
    assert abs(sampled - many[3]) < 4 * std / math.sqrt(trials)


@pytest.mark.parametrize("m,n,g", [(16, 18, 1), (16, 18, 252), (256, 18, 192), (1000, 16, 1)])
def test_the_estimates_beside_the_exact_value(m, n, g):
    exact = fabric.expected_max_load_exact(m, n, g)
    poisson = fabric.max_load_estimate(m, n, g)
    gaussian = fabric.max_load_estimate(m, n, g, method="gaussian")
    # the extreme-value (Poisson) estimate: within 5 % for one rack, 0.1 % for many
    assert abs(poisson - exact) < (0.05 if g == 1 else 1e-3) * exact
    # the closed form m/n + sqrt(2 (m/n) ln N), computed here by hand
    mean = m / n
    assert gaussian == pytest.approx(mean + math.sqrt(2 * mean * math.log(g * n)), rel=1e-12)


def test_the_gaussian_form_is_poor_at_light_load_and_close_at_heavy_load():
    # 16 flows on 18 uplinks of 252 racks: m/n = 0.89 is far below ln N = 8.4, and the
    # closed form (4.76) misses the exact maximum (5.54) by 14 %; at 1,000 flows on 16 links
    # (m/n = 62.5 far above ln 16) it is 6 % high
    light = fabric.max_load_estimate(16, 18, 252, method="gaussian")
    assert light < 0.9 * fabric.expected_max_load_exact(16, 18, 252)
    heavy = fabric.max_load_estimate(1000, 16, method="gaussian")
    assert 1.0 < heavy / fabric.expected_max_load_exact(1000, 16) < 1.08


def test_the_gaussian_form_errs_both_ways_at_light_load():
    # 16 flows on 18 links, m/n = 8/9: the busiest of one group's links carries 2.93 flows on
    # average (the seeded simulation below agrees: 2.93), while the closed form
    # 8/9 + sqrt(2 (8/9) ln 18) = 0.889 + 2.266 = 3.16 is too high; over 8 groups, ln 144 =
    # 4.97 gives 0.889 + 2.973 = 3.86, below the busiest of 8 groups (3.99 simulated): the
    # sign of the error flips
    one_form = 8 / 9 + math.sqrt(2 * 8 / 9 * math.log(18))
    eight_form = 8 / 9 + math.sqrt(2 * 8 / 9 * math.log(144))
    assert fabric.max_load_estimate(16, 18, method="gaussian") == pytest.approx(one_form)
    assert round(one_form, 2) == 3.16 and round(eight_form, 2) == 3.86
    assert fabric.expected_max_load_exact(16, 18) < one_form
    assert fabric.expected_max_load_exact(16, 18, 8) > eight_form
    # and a seeded simulation agrees with the exact side of both comparisons
    assert fabric.expected_max_load(16, 18, trials=20_000, seed=3) < one_form - 0.1
    assert fabric.expected_max_load(16, 18, trials=4000, seed=3, groups=8) > eight_form + 0.05


def test_qps_for_a_step_over_many_racks_needs_more():
    # per rack q = 4 reaches 0.45 of the even spread (the test above); over 8 racks the
    # busiest link of all is busier, so more queue pairs are needed, and the answer is the
    # first q whose all-rack efficiency reaches the target
    assert fabric.qps_for_efficiency(16, 18, 0.45) == 4
    q = fabric.qps_for_efficiency(16, 18, 0.45, groups=8)
    assert q > 4
    assert (
        fabric.ecmp_efficiency(16 * q, 18, 8) >= 0.45 > fabric.ecmp_efficiency(16 * (q - 1), 18, 8)
    )


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: fabric.max_load_distribution(2, 2, 0), "groups must be an integer >= 1, got 0"),
        (lambda: fabric.expected_max_load_exact(2, 2, 1.5), "groups must be an integer >= 1"),
        (lambda: fabric.expected_max_load(2, 2, groups=-1), "groups must be an integer >= 1"),
        (lambda: fabric.max_load_estimate(2, 2, method="exact"), "method must be one of"),
        (lambda: fabric.qps_for_efficiency(2, 2, 0.5, groups=0), "groups must be an integer"),
        (lambda: fabric.qps_for_efficiency(2, 2, True), "target must be a share"),
    ],
)
def test_groups_and_estimates_reject_bad_input(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()
