"""The old module paths (collectives.viz.gpu, .cluster, .tpu, .interactive, .plan) still name
everything they named, as the same objects the modules by kind of figure define; the old
font helpers are the one font API."""

import importlib

import matplotlib
import pytest

import collectives as cl
from collectives.viz import calculators, costs, fabric, hardware, style

OLD = {
    "gpu": [
        "ALGORITHM_COLOURS",
        "LEVEL_COLOURS",
        "FIG_WIDTH",
        "setup",
        "style",
        "draw_scalable_unit",
        "plot_bars",
        "link_bytes",
        "plot_link_bytes",
    ],
    "cluster": [
        "LEVEL_COLOURS",
        "LEVEL_LABELS",
        "ALGORITHM_COLOURS",
        "WIDTH",
        "FONT",
        "phone_style",
        "level_seconds_bars",
        "cable_loads",
        "plot_cable_loads",
        "draw_cluster",
    ],
    "tpu": [
        "COLOURS",
        "FONT",
        "draw_slice",
        "draw_cube",
        "plot_bandwidth_hierarchy",
        "draw_hops",
        "plot_level_seconds",
    ],
    "interactive": [
        "Grid",
        "case",
        "power_of_two",
        "compute_grid",
        "calculator",
        "Calculator",
        "format_seconds",
        "format_bytes",
        "format_rate",
        "DEFAULT_SIZES",
    ],
    "plan": [
        "ClusterChoice",
        "PlanGrid",
        "PlanCalculator",
        "plan_grid",
        "plan_calculator",
        "summarise",
        "purpose_class",
        "level_label",
        "DEFAULT_MODELS",
        "DEFAULT_CLUSTERS",
        "DEFAULT_RECIPES",
        "CLASS_COLOURS",
    ],
}


@pytest.mark.parametrize("module", sorted(OLD))
def test_old_modules_name_what_they_named(module):
    old = importlib.import_module(f"collectives.viz.{module}")
    assert set(OLD[module]) <= set(old.__all__)
    for name in old.__all__:
        assert hasattr(old, name), (module, name)


def test_the_old_names_are_the_new_objects():
    from collectives.viz import cluster, gpu, interactive, plan, tpu

    assert gpu.draw_scalable_unit is hardware.draw_scalable_unit
    assert gpu.plot_link_bytes is costs.plot_link_bytes and gpu.link_bytes is costs.link_multiples
    assert cluster.draw_cluster is hardware.draw_cluster
    assert cluster.cable_loads is cl.fabric.cable_flows
    assert cluster.plot_cable_loads is fabric.plot_cable_loads
    assert cluster.level_seconds_bars is costs.level_seconds_bars
    assert tpu.draw_slice is hardware.draw_slice
    assert tpu.plot_level_seconds is costs.plot_level_seconds
    assert interactive.calculator is calculators.calculator
    assert interactive.format_seconds is calculators.format_seconds
    assert plan.plan_calculator is calculators.plan_calculator
    assert plan._readout_rows is calculators.readout_rows  # the site's browser test
    assert gpu.ALGORITHM_COLOURS is style.ALGORITHM_COLOURS


def test_old_font_helpers_set_the_book_sizes():
    from collectives.viz import cluster, gpu

    saved = dict(matplotlib.rcParams)
    try:
        gpu.setup()
        assert matplotlib.rcParams["font.size"] == style.FONT_SIZE
        with gpu.style(15):
            assert matplotlib.rcParams["font.size"] == 15
        with cluster.phone_style():
            assert matplotlib.rcParams["font.size"] == cluster.FONT == 12
        assert matplotlib.rcParams["font.size"] == style.FONT_SIZE
    finally:
        matplotlib.rcParams.update(saved)
