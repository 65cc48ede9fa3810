"""collectives/fp8/metrics.py: SNR, relative error, under- and overflow rates, by hand and
against the bit-exact cast."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives.fp8 as fp8


def test_metrics_by_hand():
    # signal 1 + 4 = 5, noise 0.1^2 = 0.01: 10 log10(500) = 26.9897 dB
    assert fp8.snr_db([1.0, 2.0], [1.0, 2.1]) == pytest.approx(10 * math.log10(500))
    assert fp8.snr_db([1.0, 2.0], [1.0, 2.0]) == math.inf
    assert fp8.snr_db([0.0], [1.0]) == -math.inf
    assert fp8.relative_error([3.0, 4.0], [3.0, 4.5]) == pytest.approx(0.1)  # 0.5 / 5
    assert fp8.relative_error([0.0], [0.0]) == 0.0
    # e4m3 with scale 1: 2^-10 is half the smallest subnormal 2^-9 and ties to 0; 1e-6 is
    # far below; 464 = 448 + 16 ties to 448 (even code 0x7E), 465 overflows; 0 not counted
    x = [2.0**-10, 1e-6, 1.0, 464.0, 465.0, -600.0, 0.0]
    assert fp8.underflow_rate(x, 1.0) == 2 / 6
    assert fp8.overflow_rate(x, 1.0) == 2 / 6
    # e5m2: 61440 = 57344 + 4096 ties to the even code beyond max (0x7C, Inf): overflow
    assert fp8.overflow_rate([61440.0, 61439.0], 1.0, "e5m2") == 0.5
    assert fp8.underflow_rate([0.0, 0.0], 1.0) == 0.0
    # 1e-4 is below 2^-10 (underflow); 1e-4 x 1000 = 0.1 is not
    assert fp8.underflow_rate([1e-4, 1e-4], [1.0, 1000.0]) == 0.5


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"])
@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.floats(-(2.0**20), 2.0**20, width=32), min_size=1, max_size=50),
    scale=st.floats(1e-3, 1e3),
)
def test_rates_match_the_cast(fmt, data, scale):
    x = np.array(data, np.float32)
    v = x.astype(np.float64) * np.float64(np.float32(scale))
    counted = x != 0
    q = fp8.decode(fp8.encode(v, fmt, saturate=False), fmt)
    if counted.any():
        assert fp8.underflow_rate(x, scale, fmt) == np.mean(q[counted] == 0)
        assert fp8.overflow_rate(x, scale, fmt) == np.mean(~np.isfinite(q[counted]))
