"""The offline collective calculators (collectives.viz.calculators.collective, also named by
the old collectives.viz.interactive): the grid they precompute, the page block they write,
and their live ipywidgets version. Expected times are the alpha-beta closed
forms worked out by hand in the comments, never numbers taken from the calculator."""

import json
import re

import numpy as np
import pytest

import collectives as cl
from collectives.viz import calculators as vi
from collectives.viz.style import ALGORITHM_COLOURS, algorithm_colour

ALPHA = 1e-6


def _cases():
    return {
        "ring": lambda n, B: (cl.algorithms.ring_all_gather(n), cl.topology.ring(n, B, ALPHA)),
        "direct": lambda n, B: (
            cl.algorithms.direct_all_gather(n),
            cl.topology.switch(n, B, ALPHA),
        ),
        # recursive doubling needs a power of two: left out at 6 ranks
        "recursive doubling": lambda n, B: (
            None
            if n & (n - 1)
            else (cl.algorithms.recursive_doubling_all_gather(n), cl.topology.switch(n, B, ALPHA))
        ),
    }


@pytest.fixture(scope="module")
def calc():
    return vi.calculator(
        "all_gather",
        _cases(),
        ranks=[4, 6, 8],
        link_bandwidths={"slow": 10e9, "fast": 40e9},
        sizes=[2**12, 2**20, 2**24],
        rank=0,
        size=1,
    )


def test_grid_holds_the_ring_closed_form(calc):
    g = calc.grid
    assert g.algorithms == ("ring", "direct", "recursive doubling")
    assert g.rank_labels == ("4", "6", "8") and g.group_sizes == (4, 6, 8)
    assert g.bandwidth_labels == ("slow", "fast")
    # ring all-gather, 8 ranks, 40 GB/s, S = 16 MiB: 7 steps of alpha + S/(8B)
    # = 7 * (1e-6 + 16777216 / 3.2e11) = 7 * 53.4288e-6 = 374.0016e-6 s
    assert g.seconds[0, 2, 1, 2] == pytest.approx(374.0016e-6, rel=1e-9)
    # busbw = S/t * (n-1)/n = 16777216 / 374.0016e-6 * 7/8 = 39.2528 GB/s
    assert g.busbw[0, 2, 1, 2] == pytest.approx(16777216 / 374.0016e-6 * 7 / 8, rel=1e-9)


def test_a_case_that_does_not_apply_is_left_out(calc):
    g = calc.grid
    assert np.isnan(g.seconds[2, 1]).all()  # recursive doubling at 6 ranks
    assert np.isfinite(g.seconds[2, 0]).all() and np.isfinite(g.seconds[2, 2]).all()
    names = [name for name, _, _ in calc.readout(rank=1, bandwidth=0, size=0)]
    assert names == ["ring", "direct"]


def test_readout_picks_one_setting(calc):
    # ring, 4 ranks, 10 GB/s, 1 MiB: 3 * (1e-6 + 1048576 / 4e10) = 3 * 27.2144e-6 = 81.6432e-6 s
    ((name, t, busbw),) = calc.readout(rank=0, bandwidth=0, size=1, algorithm=0)
    assert name == "ring"
    assert t == pytest.approx(81.6432e-6, rel=1e-9)
    assert busbw == pytest.approx(1048576 / 81.6432e-6 * 3 / 4, rel=1e-9)


def _payload(html_text):
    found = re.search(
        r'<script type="application/json" class="cl-calc-data">(.*?)</script>', html_text, re.S
    )
    assert found, "no data block"
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_page_block_carries_the_grid_and_a_static_readout(calc):
    text = calc._repr_html_()
    data = _payload(text)
    assert data["algorithms"] == ["ring", "direct", "recursive doubling"]
    assert data["seconds"][0][0][0][1] == pytest.approx(81.6432e-6, rel=1e-9)
    assert data["seconds"][2][1][0] == [None, None, None]  # JSON has no NaN
    assert data["colours"] == [algorithm_colour(a) for a in data["algorithms"]]
    # the readout is in the HTML before any script runs (ring, 4 ranks, 10 GB/s, 1 MiB)
    assert '<th scope="row">ring</th><td>81.6 µs</td>' in text
    # four controls a reader moves, and the plot's choice of metric
    for control in ("rank", "size", "bandwidth", "algorithm", "metric"):
        assert f'data-control="{control}"' in text
    # one Plotly trace per algorithm, log axes, values on hover
    fig = data["figure"]
    assert [t["name"] for t in fig["data"]] == data["algorithms"]
    assert all("hovertemplate" in t for t in fig["data"])
    assert fig["layout"]["xaxis"]["type"] == "log"
    # nothing from the network: no URL in the block at all
    assert "http://" not in text and "https://" not in text


def test_each_block_has_its_own_id(calc):
    other = vi.calculator("all_gather", _cases(), ranks=[4], link_bandwidths=[1e9], sizes=[1024])
    assert calc.id != other.id and f'id="{other.id}"' in other._repr_html_()


def test_bad_input_raises_a_collectives_error():
    with pytest.raises(cl.CollectivesError, match="not all_gather"):
        vi.calculator(
            "all_gather",
            {"ring": lambda n, B: (cl.algorithms.ring_reduce_scatter(n), cl.topology.ring(n, B))},
            [4],
            [1e9],
        )
    with pytest.raises(cl.CollectivesError, match="no case applies"):
        vi.calculator("all_gather", {"x": lambda n, B: None}, [4], [1e9])
    with pytest.raises(cl.CollectivesError, match="positive"):
        vi.calculator("all_gather", _cases(), [4], [0.0])
    with pytest.raises(cl.CollectivesError, match="size index"):
        vi.calculator("all_gather", _cases(), [4], [1e9], sizes=[1024], size=3)
    with pytest.raises(cl.CollectivesError, match="metric"):
        vi.calculator("all_gather", _cases(), [4], [1e9], metric="flops")


def test_live_widget_updates_its_readout():
    box = vi.calculator(
        "all_gather",
        _cases(),
        ranks=[4, 8],
        link_bandwidths=[10e9, 40e9],
        sizes=[2**20, 2**24],
        rank=0,
        size=0,
        live=True,
    )
    assert "81.6 µs" in box.readout.value  # ring, 4 ranks, 10 GB/s, 1 MiB (above)
    box.controls["rank"].value = 1
    box.controls["bandwidth"].value = 1
    box.controls["size"].value = 1
    # ring, 8 ranks, 40 GB/s, 16 MiB: 374.0016 us (test_grid_holds_the_ring_closed_form)
    assert "374 µs" in box.readout.value and "81.6 µs" not in box.readout.value
    box.controls["algorithm"].value = 1  # direct only
    assert '<th scope="row">ring</th>' not in box.readout.value


def test_every_algorithm_has_one_colour_blind_safe_colour():
    assert algorithm_colour("NCCL Tree") == ALGORITHM_COLOURS["tree"]
    assert algorithm_colour("Rabenseifner") == algorithm_colour("halving-doubling")
    assert algorithm_colour("ring") != algorithm_colour("tree")
    with pytest.raises(cl.CollectivesError, match="no colour"):
        algorithm_colour("made-up algorithm")


def test_case_helper_and_wire_bytes():
    half = vi.case(cl.algorithms.ring_all_gather, cl.topology.ring, ALPHA, wire_bytes=0.5)
    only_even = vi.case(
        cl.algorithms.ring_all_gather, cl.topology.ring, ALPHA, when=lambda n: n % 2 == 0
    )
    calc = vi.calculator(
        "all_gather",
        {"ring": only_even, "direct": half},
        ranks=[3, 4],
        link_bandwidths=[10e9],
        sizes=[2**20],
        rank=1,
        size=0,
        colours={"direct": "#123456"},
    )
    g = calc.grid
    assert np.isnan(g.seconds[0, 0, 0, 0])  # 3 ranks: left out
    # half the bytes on the wire: 3 * (1e-6 + 524288 / 4e10) = 3 * 14.1072e-6 = 42.3216e-6 s
    assert g.seconds[1, 1, 0, 0] == pytest.approx(42.3216e-6, rel=1e-9)
    # busbw counts the reader's whole buffer: 1048576 / t * 3/4
    assert g.busbw[1, 1, 0, 0] == pytest.approx(1048576 / 42.3216e-6 * 3 / 4, rel=1e-9)
    assert calc.data()["colours"] == [algorithm_colour("ring"), "#123456"]
    assert vi.power_of_two(8) and not vi.power_of_two(6) and not vi.power_of_two(0)


def test_named_rank_settings_and_control_labels():
    calc = vi.calculator(
        "all_gather",
        _cases(),
        ranks={"two nodes": 4, "four nodes": 8},
        link_bandwidths=[10e9],
        sizes=[1024],
        rank_name="nodes",
        bandwidth_name="NIC",
    )
    assert calc.grid.rank_labels == ("two nodes", "four nodes")
    assert calc.grid.group_sizes == (4, 8)
    text = calc._repr_html_()
    assert "<label>nodes <input" in text and "<label>NIC <select" in text


def test_the_latency_setting_adds_alpha_to_every_step_that_moves_data(calc):
    g = calc.grid
    # data-moving steps: ring all-gather n - 1, direct 1, recursive doubling log2 n (NaN at 6)
    assert g.steps[0].tolist() == [3, 5, 7] and g.steps[1].tolist() == [1, 1, 1]
    assert g.steps[2, 0] == 2 and np.isnan(g.steps[2, 1]) and g.steps[2, 2] == 3
    labels = list(calc.latencies)
    assert labels[0] == "none" and calc.latencies["none"] == 0.0
    # NCCL 2.30.7's tuner (src/graph/tuning.cc, hwLatencies), per ring step, sorted
    assert list(calc.latencies.values())[1:] == [0.6e-6, 2.7e-6, 3.4e-6, 14e-6]
    assert labels[1] == "0.6 µs (NCCL NVLink, LL)"
    # ring, 4 ranks, 10 GB/s, 1 MiB: 81.6432 us (above) + 3 steps x 14 us = 123.6432 us
    ((_, t, busbw),) = calc.readout(rank=0, bandwidth=0, size=1, algorithm=0, latency=4)
    assert t == pytest.approx(123.6432e-6, rel=1e-9)
    assert busbw == pytest.approx(1048576 / 123.6432e-6 * 3 / 4, rel=1e-9)
    # the default shows none added
    assert calc.readout(0, 0, 1, 0) == calc.readout(0, 0, 1, 0, latency=0)
    data = _payload(calc._repr_html_())
    assert data["steps"][2] == [2, None, 3] and data["latencies"] == [
        0.0,
        0.6e-6,
        2.7e-6,
        3.4e-6,
        14e-6,
    ]
    assert 'data-control="latency"' in calc._repr_html_()


def test_each_calculator_says_what_it_models(calc):
    text = calc._repr_html_()
    # a ring link: 1 us per message; one switch: 1 us per hop, 2 hops per message
    assert "ring: 1 µs per link, so 1 µs for the slowest message of a step" in text
    assert (
        "direct, recursive doubling: 1 µs per link, so 2 µs for the slowest message of a step"
    ) in text
    assert "adds its α to every step that moves data" in text
    assert "what NCCL 2.30.7's tuner assumes for one ring step" in text  # the defaults
    h100 = cl.hardware.spec("dgx-h100")
    gpu = vi.calculator(
        "all_to_all",
        {
            "direct": lambda n, nic: (
                cl.algorithms.direct_all_to_all(8 * n),
                cl.hardware.dgx_nodes(n, nic),
            )
        },
        ranks=[1, 2],
        link_bandwidths=[h100.nic_bandwidth],
        sizes=[1024],
    )
    assert "direct: none on any link (bytes over bandwidth alone)" in vi.model_text(gpu.grid)
    across = vi.calculator(
        "all_to_all",
        {
            "direct": lambda n, nic: (
                cl.algorithms.direct_all_to_all(8 * n),
                cl.hardware.dgx_nodes(n, nic, latency="nccl-ll"),
            )
        },
        ranks=[2],
        link_bandwidths=[h100.nic_bandwidth],
        sizes=[1024],
    )
    # NVLink hops 0.3 us, InfiniBand links 1.35 us; the slowest message of the direct
    # all-to-all goes to another node's other rail: PCIe, leaf, spine, spine, leaf, PCIe,
    # four InfiniBand links, 4 x 1.35 = 5.4 us
    assert (
        "direct: 1.35 µs per leaf/spine link, 0.3 µs per nvlink link, 0 per pcie link, so "
        "5.4 µs for the slowest message of a step"
    ) in vi.model_text(across.grid)


def test_hover_names_the_size_in_the_sliders_binary_units(calc):
    fig = calc.data()["figure"]
    # 1 MiB is 1.05 MB: the hover reads the slider's label, never Plotly's SI prefix of x
    assert fig["data"][0]["customdata"] == ["4 KiB", "1 MiB", "16 MiB"]
    assert all(
        t["hovertemplate"].startswith(f"<b>{t['name']}</b><br>%{{customdata}}: ")
        for t in fig["data"]
    )


@pytest.mark.parametrize(
    "values, ticks",
    [
        ([2e-6, 5e-4], [1e-6, 1e-5, 1e-4, 1e-3]),  # 2.4 decades: powers of ten
        ([3e-6, 7e-6], [2e-6, 5e-6, 1e-5]),  # less than three powers: 1, 2, 5
        ([14.3e-6] * 3, [1e-5, 2e-5]),  # a flat line: the ticks either side
        ([1e-5], [1e-5, 2e-5]),  # a value on a tick: the next one too
        ([1.2e-3, 1.9e-3], [1e-3, 2e-3]),  # every digit
    ],
)
def test_time_axis_labels_two_to_fifteen_ticks(values, ticks):
    got, span = vi.time_axis(values + [float("nan")])
    assert got == pytest.approx(ticks, rel=1e-12)
    low, high = span
    assert low < np.log10(min(values)) and high > np.log10(max(values))
    assert vi.time_axis([float("nan")]) == ([], None)


def test_figure_axes_never_keep_the_other_metrics_ticks(calc):
    time_fig = calc.figure(metric="seconds").to_dict()["layout"]["yaxis"]
    busbw_fig = calc.figure(metric="busbw").to_dict()["layout"]["yaxis"]
    assert time_fig["type"] == "log" and time_fig["tickmode"] == "array"
    assert busbw_fig["type"] == "linear" and "dtick" not in busbw_fig
    assert "tickvals" not in busbw_fig and busbw_fig["range"][0] == 0
    assert vi.busbw_range([[1.0, np.nan], [2.0, 3.0]]) == [0.0, pytest.approx(3.24)]
    assert vi.busbw_range([np.nan]) == [0.0, 1.0]


def test_bad_latency_settings_raise_a_collectives_error():
    with pytest.raises(cl.CollectivesError, match="latency 'x' must be finite seconds >= 0"):
        vi.calculator("all_gather", _cases(), [4], [1e9], sizes=[1024], latencies={"x": -1.0})
    with pytest.raises(cl.CollectivesError, match=r"latency index 2 is outside 0\.\.1"):
        vi.calculator(
            "all_gather",
            _cases(),
            [4],
            [1e9],
            sizes=[1024],
            latencies={"none": 0, "1 us": 1e-6},
            latency=2,
        )
