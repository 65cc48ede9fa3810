"""collectives/algorithms/catalog.py: every catalogue algorithm computes its collective,
symbolically (verify) and numerically (simulate), for every rank count it supports."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.algorithms import CATALOG, supports

from ground_truth import expected_outputs

NAMES = sorted(CATALOG)


def build(name, n, root):
    algorithm = CATALOG[name]
    if algorithm.collective in ("broadcast", "reduce", "gather", "scatter"):
        return algorithm.build(n, root=root % n)
    return algorithm.build(n)


@pytest.mark.parametrize("name", NAMES)
def test_verifies_for_every_supported_n_up_to_64(name):
    checked = 0
    for n in range(1, 65):
        if supports(name, n):
            schedule = build(name, n, root=n // 3)
            assert schedule.n_ranks == n
            assert schedule.collective == CATALOG[name].collective
            cl.verify(schedule)
            checked += 1
    assert checked == (7 if CATALOG[name].power_of_two_only else 64)


@pytest.mark.parametrize("name", [n for n in NAMES if CATALOG[n].power_of_two_only])
@pytest.mark.parametrize("n", [3, 6, 12, 63])
def test_power_of_two_algorithms_refuse_other_counts_clearly(name, n):
    with pytest.raises(cl.ScheduleError, match=rf"n must be a power of two; got n={n} "):
        CATALOG[name].build(n)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4"])
def test_bad_rank_counts_are_refused(name, bad):
    with pytest.raises(cl.ScheduleError, match=r"n \(number of ranks\) must be"):
        CATALOG[name].build(bad)


@st.composite
def instances(draw):
    name = draw(st.sampled_from(NAMES))
    n = draw(st.integers(1, 64).filter(lambda n: supports(name, n)))
    root = draw(st.integers(0, n - 1))
    schedule = build(name, n, root)
    # rows must split into the schedule's chunks: all-gather rows are one shard
    per_row = schedule.n_chunks // n if schedule.collective == "all_gather" else schedule.n_chunks
    length = per_row * draw(st.integers(1, 3))
    dtype = draw(st.sampled_from([np.int64, np.int32, np.float64]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    inputs = rng.integers(-1000, 1000, size=(n, length)).astype(dtype)
    return schedule, inputs, root


@settings(max_examples=300, deadline=None)
@given(instances())
def test_simulate_equals_numpy_ground_truth(case):
    schedule, inputs, root = case
    out = cl.simulate(schedule, inputs)
    want = expected_outputs(schedule.collective, inputs, root=schedule.root)
    if schedule.collective in ("reduce", "gather"):
        np.testing.assert_array_equal(out[schedule.root], want)
    else:
        np.testing.assert_array_equal(out, want)
    assert out.dtype == inputs.dtype


def test_simulate_is_exact_on_floats_that_are_not_integers():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 8))
    out = cl.simulate(cl.algorithms.ring_all_reduce(8), x)
    # each chunk is summed in ring order starting from a different rank, so compare to
    # the sum within floating-point reassociation error
    np.testing.assert_allclose(out, np.tile(x.sum(axis=0), (8, 1)), rtol=1e-12, atol=1e-12)


def test_step_counts_match_the_textbook():
    assert cl.algorithms.ring_all_gather(8).n_steps == 7
    assert cl.algorithms.ring_all_reduce(8).n_steps == 14
    assert cl.algorithms.recursive_doubling_all_gather(16).n_steps == 4
    assert cl.algorithms.recursive_halving_reduce_scatter(16).n_steps == 4
    assert cl.algorithms.binomial_tree_broadcast(5).n_steps == 3  # ceil(log2 5)
    assert cl.algorithms.binomial_tree_reduce(1).n_steps == 0
    assert cl.algorithms.direct_all_gather(6).n_steps == 1
    assert cl.algorithms.direct_all_to_all(6).n_transfers == 30  # 6 x 5 pairs


def test_supports_names_an_unknown_algorithm():
    assert supports("ring_all_gather", 3) and not supports("recursive_doubling_all_gather", 3)
    with pytest.raises(
        cl.CollectivesError, match=r"unknown algorithm 'ring'; see collectives\.algorithms\.CATALOG"
    ):
        supports("ring", 4)


def test_the_catalogue_module_holds_what_the_package_re_exports():
    from collectives.algorithms import catalog

    assert cl.algorithms.CATALOG is catalog.CATALOG
    assert cl.algorithms.supports is catalog.supports
    assert cl.algorithms.square_shape(12) == (3, 4)  # 3 x 4 is the squarest of 12
    assert cl.algorithms.square_shape(7) == (1, 7)
