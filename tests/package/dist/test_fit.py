"""collectives.dist.fit: the alpha-beta fit recovers the alpha and bandwidth that made the
times, and refuses what it cannot fit."""

import numpy as np
import pytest

import collectives as cl
from collectives.dist import SweepResult, SweepRow, fit_alpha_beta


def _result(times_us, sizes, impl="ring_all_reduce"):
    rows = tuple(
        SweepRow(s, s // 4, "float32", "sum", impl, t, 0.0, 0.0, 0) for s, t in zip(sizes, times_us)
    )
    return SweepResult("all_reduce", 4, 4, "gloo", 2, 1, rows)


def test_the_fit_recovers_alpha_and_bandwidth():
    ring = cl.algorithms.ring_all_reduce(4)
    # the ring all-reduce on 4 ranks: 6 steps, each alpha + (S / 4) / B:
    # T = 6 alpha + 1.5 S / B, with alpha = 100 us and B = 1e8 B/s
    sizes = [4096, 65536, 1048576]
    times = [(6 * 1e-4 + 1.5 * s / 1e8) * 1e6 for s in sizes]
    fit = fit_alpha_beta(_result(times, sizes), ring)
    assert fit.alpha == pytest.approx(1e-4, rel=1e-9)
    assert fit.bandwidth == pytest.approx(1e8, rel=1e-9)
    assert fit.rms_relative_error < 1e-9
    # its prediction is cl.time on the fitted ring: at 256 KiB 6e-4 + 1.5 x 262144 / 1e8
    assert fit.predict([262144])[0] == pytest.approx(6e-4 + 1.5 * 262144 / 1e8, rel=1e-9)
    assert fit.topology.n_ranks == 4


def test_a_fit_without_latency_clips_alpha_at_zero():
    ring = cl.algorithms.ring_all_reduce(4)
    sizes = [4096, 8192]
    # times that fall faster than the bytes: the unconstrained alpha would be negative
    fit = fit_alpha_beta(_result([100.0, 250.0], sizes), ring)
    assert fit.alpha == 0.0 and fit.bandwidth > 0
    # the single coefficient is the relative least-squares one: minimise sum (k S_i/T_i - 1)^2
    r = np.array([1.5 * 4096 / 100e-6, 1.5 * 8192 / 250e-6])
    assert 1 / fit.bandwidth == pytest.approx(r.sum() / (r @ r), rel=1e-9)


def test_errors():
    ring = cl.algorithms.ring_all_reduce(4)
    with pytest.raises(cl.CollectivesError, match="two sizes or more"):
        fit_alpha_beta(_result([10.0], [4096]), ring)
    with pytest.raises(cl.CollectivesError, match="two sizes or more"):
        fit_alpha_beta(_result([10.0, 20.0], [4096, 8192], impl="all_reduce"), ring)
    with pytest.raises(cl.CollectivesError, match="with rows"):
        fit_alpha_beta(None, ring)
    with pytest.raises(cl.CollectivesError, match="no positive bandwidth"):
        fit_alpha_beta(_result([300.0, 100.0], [4096, 8192]), ring)
