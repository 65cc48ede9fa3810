"""collectives.viz.fp8's plot of an FP8 all-reduce's error hop by hop: one line per result,
its points the result's step errors (in percent), steps that send nothing left out."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import fp8 as vf


def test_plot_step_errors_draws_each_results_errors_in_percent():
    g = np.random.default_rng(0).normal(size=(4, 64)).astype(np.float32)
    hop = cl.fp8.msamp_all_reduce(g, step_errors=True)
    once = cl.fp8.fp8_all_reduce(g, step_errors=True)
    ax = vf.plot_step_errors(
        {"per hop": hop, "once": once}, ax=plt.figure().gca(), colours={"per hop": "red"}
    )
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["per hop", "once"]
    np.testing.assert_allclose(lines[0].get_ydata(), 100 * hop.step_errors)
    np.testing.assert_array_equal(lines[0].get_xdata(), np.arange(hop.step_errors.size))
    assert lines[0].get_color() == "red"
    # a step that sends nothing (NaN) is left out
    gap = cl.fp8.fp8_all_reduce(g, step_errors=True)
    object.__setattr__(gap, "step_errors", np.array([0.1, np.nan, 0.3]))
    line = vf.plot_step_errors({"gap": gap}, ax=plt.figure().gca()).get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata(), [0, 2])
    np.testing.assert_allclose(line.get_ydata(), [10.0, 30.0])
    with pytest.raises(cl.CollectivesError, match="step_errors=True"):
        vf.plot_step_errors({"none": cl.fp8.fp8_all_reduce(g)})
    plt.close("all")
