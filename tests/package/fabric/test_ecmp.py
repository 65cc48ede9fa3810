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
    return dist / n ** m


def test_collision_probability():
    # 4 flows on 4 paths: 4!/4^4 = 24/256 of assignments are collision-free
    assert fabric.ecmp_no_collision_probability(4, 4) == 0.09375
    assert fabric.ecmp_collision_probability(4, 4) == 0.90625
    assert fabric.ecmp_no_collision_probability(5, 4) == 0.0
    assert fabric.ecmp_collision_probability(1, 8) == 0.0
    assert fabric.ecmp_no_collision_probability(0, 3) == 1.0
    for m, n in [(2, 3), (3, 3), (3, 5), (4, 6)]:
        assert fabric.ecmp_no_collision_probability(m, n) == pytest.approx(
            brute_force_max_load(m, n)[: 2].sum(), abs=1e-15)


@pytest.mark.parametrize("m,n", [(0, 3), (1, 1), (3, 1), (1, 4), (2, 2), (3, 3), (4, 2),
                                 (5, 3), (4, 4), (2, 6), (6, 4)])
def test_max_load_distribution_matches_enumeration(m, n):
    np.testing.assert_allclose(fabric.max_load_distribution(m, n), brute_force_max_load(m, n),
                               atol=1e-13)


@pytest.mark.parametrize("n,expected", [(2, 1.5), (4, 2.125), (8, 2.597), (16, 3.078)])
def test_expected_max_load_for_as_many_flows_as_paths(n, expected):
    exact = fabric.expected_max_load_exact(n, n)
    assert exact == pytest.approx(expected, abs=5e-4)
    dist = fabric.max_load_distribution(n, n)
    std = math.sqrt(np.arange(n + 1) ** 2 @ dist - exact ** 2)
    trials = 40_000
    estimate = fabric.expected_max_load(n, n, trials=trials, seed=7)
    assert abs(estimate - exact) < 4 * std / math.sqrt(trials)     # 4 standard errors
    assert fabric.expected_max_load(n, n, trials=trials, seed=7) == estimate


def test_expected_max_load_edge_cases_and_many_flows():
    assert fabric.expected_max_load(0, 4) == 0.0
    assert fabric.expected_max_load(7, 1, trials=10) == 7.0
    assert fabric.expected_max_load_exact(7, 1) == 7.0
    # Meta's 1,000 flows on 16 links: mean 62.5 per link, the busiest is ~25 % above
    exact = fabric.expected_max_load_exact(1000, 16)
    assert 1.2 < exact / 62.5 < 1.35
    assert fabric.expected_max_load(1000, 16, trials=2000, seed=1) == pytest.approx(exact, rel=0.01)


@pytest.mark.parametrize("call,message", [
    (lambda: fabric.ecmp_collision_probability(-1, 4), "flows must be an integer >= 0, got -1"),
    (lambda: fabric.ecmp_no_collision_probability(2, 0), "paths must be an integer >= 1, got 0"),
    (lambda: fabric.expected_max_load(2, 2.0), "paths must be an integer >= 1, got 2.0"),
    (lambda: fabric.expected_max_load(2, 2, trials=0), "trials must be an integer >= 1, got 0"),
    (lambda: fabric.max_load_distribution(True, 2), "flows must be an integer >= 0, got True"),
])
def test_balls_into_bins_reject_bad_input(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()


@pytest.mark.parametrize("connections,paths,target,answer", [
    (16, 18, 0.45, 4), (8, 8, 0.5, 3), (8, 8, 0.4, 2), (4, 16, 0.3, 4), (1, 1, 1.0, 1)])
def test_qps_for_efficiency_is_the_first_q_to_reach_the_target(connections, paths, target,
                                                               answer):
    assert fabric.qps_for_efficiency(connections, paths, target) == answer
    assert fabric.ecmp_efficiency(connections * answer, paths) >= target
    if answer > 1:
        assert fabric.ecmp_efficiency(connections * (answer - 1), paths) < target
    # one flow per path on one path: the busiest is the mean
    assert fabric.ecmp_efficiency(5, 1) == 1.0
    with pytest.raises(CollectivesError, match="target must be a share"):
        fabric.qps_for_efficiency(4, 4, 1.5)
