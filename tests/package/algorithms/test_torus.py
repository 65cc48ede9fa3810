"""collectives/algorithms/torus.py: the torus collectives over any shape, axes and options."""

import numpy as np
import pytest

import collectives as cl

from ground_truth import expected_outputs


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cl.algorithms.torus_all_gather((4, 0)), "positive sizes"),
        (lambda: cl.algorithms.torus_all_gather((4, 4), axes=(0, 0)), "distinct axis numbers"),
        (lambda: cl.algorithms.torus_all_to_all((4, 4), line="tree"), "line must be one of"),
    ],
)
def test_bad_torus_arguments(call, message):
    with pytest.raises(cl.ScheduleError, match=message):
        call()


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (4, 4), (2, 2, 3)])
def test_torus_algorithms_for_all_shapes_and_options(shape):
    n = int(np.prod(shape))
    x = np.random.default_rng(0).integers(0, 100, size=(n, 24 * n))
    for bidirectional in (True, False):
        for concurrent in (False, True):
            for name in ("torus_all_gather", "torus_reduce_scatter", "torus_all_reduce"):
                s = getattr(cl.algorithms, name)(
                    shape, bidirectional=bidirectional, concurrent=concurrent
                )
                cl.verify(s)
                rows = x[:, : (s.n_chunks // n if s.collective == "all_gather" else s.n_chunks)]
                np.testing.assert_array_equal(
                    cl.simulate(s, rows), expected_outputs(s.collective, rows)
                )
    for line in ("bidirectional_ring", "ring", "direct"):
        s = cl.algorithms.torus_all_to_all(shape, line=line)
        cl.verify(s)
