"""The registry of published measurements (collectives.hardware.published): every row has a
source and a reason, its predictions are the model's numbers (derived here by hand), and the
page's table computes them all."""

import math

import pytest

from collectives.errors import CollectivesError
from collectives.hardware import published as p


def test_every_row_has_a_source_a_unit_and_a_reason():
    assert p.MEASUREMENTS == p.GPU_ROWS + p.TPU_ROWS
    for m in p.MEASUREMENTS:
        assert m.source.startswith("https://"), m.case
        assert m.value > 0 and m.unit and len(m.reason) > 20, m.case
    cases = [(m.case, m.system) for m in p.MEASUREMENTS]
    assert len(cases) == len(set(cases))                       # lookup_row is unambiguous


def test_ring_on_8_h100s_by_hand():
    m = p.lookup_row("ring all-reduce busbw, 8 GPUs", "DGX H100 (8 x H100 SXM)")
    # line: ring busbw = the 450 GB/s link; effective: 18 x 20.6 = 370.8 (NCCL topo.h)
    assert m.prediction("line") == pytest.approx(450.0)
    assert m.prediction("effective") == pytest.approx(370.8)
    assert round(m.ratio("line"), 2) == 0.82 and round(m.ratio("effective"), 2) == 1.00


def fill(n, k=256):
    """The pipelined NVLS schedule's share of its ideal rate: k segments of 4 steps (load S/k
    up, S/(nk) down, store S/(nk) up, multicast S/k down) overlap in k + 3 steps, of which
    k - 1 carry (1 + 1/n) S/k on the busier direction and 4 (the fill and the drain) S/k:
    k (1 + 1/n) / (4 + (k - 1)(1 + 1/n))."""
    a = 1 + 1 / n
    return k * a / (4 + (k - 1) * a)


def test_nvls_on_8_h100s_by_hand():
    m = p.lookup_row("NVLS all-reduce busbw, 8 GPUs", "DGX H100 (8 x H100 SXM)")
    # ideal NVLS algbw B n/(n+1) times the ring factor 2(n-1)/n = 2(n-1) B/(n+1) = 700 GB/s
    assert m.prediction("line") == pytest.approx(700 * fill(8), rel=1e-9)
    assert m.prediction("effective") == pytest.approx(2 * 7 * 370.8 / 9 * fill(8), rel=1e-9)
    assert round(m.prediction("line")) == 693


def test_nvls_sweep_matches_the_ideal_gain():
    # the model's NVLS / ring at n GPUs is the ideal 2(n-1)/(n+1) up to the pipeline fill
    for n in (2, 4, 8):
        ratio = p.nvls_busbw(n) / p.ring_busbw(n)
        assert ratio == pytest.approx(2 * (n - 1) / (n + 1) * fill(n), rel=1e-9)
    assert set(p.NVLS_SWEEP_1455) == set(range(2, 9))
    assert all(p.NVLS_SWEEP_1455[n] == 367.5 for n in (2, 3, 4))


def test_nvls_on_2_gpus_is_above_the_model_bound():
    # NCCL #1455 forced NVLS: 367.5 GB/s busbw = algbw at n = 2 (factor 2(n-1)/n = 1); the
    # model's NVLS algbw is at most B n/(n+1) = 300 GB/s at the line rate, so the ratio is
    # above 1 (1.23 with the pipeline fill): the model is no upper bound there
    m = p.lookup_row("NVLS all-reduce busbw, 2 GPUs")
    assert m.prediction("line") < 450 * 2 / 3 < m.value
    assert m.ratio("line") > 1 and round(m.ratio("line"), 2) == 1.23
    assert "forced" in m.reason and "contradicted" in m.reason


def test_nic_row_is_one_nic_and_an_expectation():
    m = p.lookup_row("ring busbw per 400 Gb/s NIC")
    assert m.prediction("line") == pytest.approx(50.0)        # 400 Gb/s / 8
    assert m.prediction("effective") == pytest.approx(48.5)   # the expected value itself
    assert m.kind == "expected"             # nccl-tests #267: "should achieve up to 48-49GB/s"


def test_kinds_say_which_figures_are_runs():
    kinds = {(m.case, m.system): m.kind for m in p.GPU_ROWS}
    # maintainers' expected values: nccl-tests #212 (370, 480), #267 (48-49), #319 (~396)
    expected = {("ring all-reduce busbw, 8 GPUs", "DGX H100 (8 x H100 SXM)"),
                ("NVLS all-reduce busbw, 8 GPUs", "DGX H100 (8 x H100 SXM)"),
                ("ring busbw per 400 Gb/s NIC",
                 "ConnectX-7 at 400 Gb/s (maintainers' expectation)"),
                ("ring all-reduce busbw, 2 or more nodes", "H100 nodes, 8 x CX-7 400 Gb/s")}
    assert {key for key, kind in kinds.items() if kind == "expected"} == expected
    assert set(kinds.values()) == {"measured", "expected"}
    with pytest.raises(CollectivesError, match="kind"):
        p.Measurement(case="x", system="y", source="https://x", value=1.0, unit="u",
                      predict=lambda: 1.0, reason="r" * 30, kind="guessed")


def test_nccl_nvls_tree_cap_by_hand():
    # tuning.cc perChMaxNVLSTreeBws, Hopper: 57.7 (2 nodes) and 45.5 (3+ nodes) per channel,
    # times 8 NVLS channels (one head per GPU): 461.6 and 364.0 GB/s busbw
    assert p.nccl_nvls_tree_cap(2) == pytest.approx(461.6)
    assert p.nccl_nvls_tree_cap(3) == p.nccl_nvls_tree_cap(16) == pytest.approx(364.0)
    assert p.nccl_nvls_tree_cap(4, channels=4) == pytest.approx(182.0)
    with pytest.raises(CollectivesError, match="2 or more nodes"):
        p.nccl_nvls_tree_cap(1)
    caps = {m.case: m.nccl_estimate for m in p.GPU_ROWS if m.nccl_estimate is not None}
    assert caps["all-reduce busbw, 2 nodes (16 GPUs)"] == pytest.approx(461.6)
    assert caps["all-reduce busbw, 4 nodes (32 GPUs)"] == pytest.approx(364.0)


def test_sharp_fraction_by_hand():
    # k segments go up in steps 0..k-1 and come down in steps 1..k: k + 1 steps of S/k on
    # the NIC, so algbw = B k/(k+1); 64/65 = 0.9846 at the line rate, times 48.5/50 effective
    assert p.sharp_fraction() == pytest.approx(64 / 65)
    assert p.sharp_fraction("effective") == pytest.approx(64 / 65 * 48.5 / 50)
    assert p.sharp_fraction(n_segments=1) == pytest.approx(1 / 2)
    m = p.lookup_row("streamed SHARP all-reduce bandwidth")
    assert round(m.ratio("line"), 2) == 0.96 and round(m.ratio("effective"), 2) == 0.99


def test_cross_node_ring_rows_by_hand():
    # the 8-channel ring over 2 nodes: every NIC carries 2 (R-1)/R S / 8, busbw = 8 x 50 GB/s
    # at the line rate; at the effective rate NVLink binds first, as on one node: 18 x 20.6
    m = p.lookup_row("ring all-reduce busbw, 2 or more nodes")
    assert m.prediction("line") == pytest.approx(400.0)
    assert m.prediction("effective") == pytest.approx(370.8)
    assert round(m.ratio("effective"), 2) == 1.07          # 396 / 370.8: the model is pessimistic


def test_table_has_every_row_and_finite_ratios():
    rows = p.table()
    assert len(rows) == len(p.MEASUREMENTS)
    for row, m in zip(rows, p.MEASUREMENTS):
        assert math.isfinite(row["measured / model (line)"])
        assert row["measured / model (line)"] == pytest.approx(
            row["measured"] / row["model (line)"])
        assert row["kind"] == m.kind
        cap = row["NCCL 2.30.7 tuner cap"]
        assert math.isnan(cap) if m.nccl_estimate is None else cap == m.nccl_estimate


def test_bad_rates_and_missing_rows_raise():
    m = p.GPU_ROWS[0]
    with pytest.raises(CollectivesError, match="rates"):
        m.prediction("peak")
    with pytest.raises(CollectivesError, match="0 rows"):
        p.lookup_row("no such case")


# ---- the TPU rows ---------------------------------------------------------------------------

def test_scaling_book_profiles_by_hand():
    # v5e 8 x 4, Y a chain of 4 at 45e9 B/s and 1 us per hop: 3 (1 us + (S/4) / 45e9)
    for (rows, cols), measured in p.SCALING_BOOK_PROFILES.items():
        nbytes = 2 * rows * cols
        model = 3 * (1e-6 + nbytes / 4 / 45e9)
        assert p.v5e_chain_gather_seconds(rows, cols) == pytest.approx(model, rel=1e-12)
        m = p.lookup_row(f"all-gather along a 4-chip chain, bf16 [{rows}, {cols}] "
                         f"(profiled {measured * 1e6:.0f} us)")
        assert m.value == pytest.approx(nbytes / measured / 1e9)
        assert m.prediction("line") == pytest.approx(nbytes / model / 1e9, rel=1e-12)
        assert m.prediction("effective") == m.prediction("line")      # one rate per TPU link
    # 33.55 MB: 562.2 us against the profiled 680 us
    assert round(p.v5e_chain_gather_seconds(2048, 8192) * 1e6, 1) == 562.2


@pytest.mark.parametrize("name, links, rate, google_rate, published", [
    # the cut across a torus's longest axis: 2 links per line (wraparound)
    ("tpu-v5e", 2 * 16, 45e9, 50e9, 1.6e12),     # Google: 400 GB/s per chip over 4 ports, 2 ways
    ("tpu-v6e", 2 * 16, 90e9, 100e9, 3.2e12),    # Google: 800 GB/s per chip over 4 ports, 2 ways
    ("tpu-v4", 2 * 256, 45e9, None, 24e12),      # Google's v4 page gives no per-chip ICI
])
def test_pod_bisection_rows_by_hand(name, links, rate, google_rate, published):
    assert p.pod_bisection(name) == pytest.approx(links * rate / 1e12)
    if google_rate is not None:                  # consistent with: one way, per port
        assert links * google_rate == pytest.approx(published)


def test_all_reduce_bandwidth_is_a_sum_of_ports():
    # every port of every chip one way: v4 4096 x 6 x 45e9 = 1105.92 TB/s (Google: 1.1 PB/s);
    # v5e 256 x 4 x 45e9 = 46.08 (Google: 51.2 = 256 x 4 x 50e9)
    assert p.pod_port_sum("tpu-v4") == pytest.approx(1105.92)
    assert p.pod_port_sum("tpu-v5e") == pytest.approx(46.08)
    assert 256 * 4 * 50e9 / 1e12 == pytest.approx(51.2)
    sections = {m.section for m in p.TPU_ROWS}
    assert sections == {"TPU", "TPU: Google's pod figures"}


@pytest.mark.parametrize("nbytes, rate", [
    # ring of 16 at 45e9 one way, 1 us per hop: 8 hops + 15/32 S / 45e9; the link carries
    # 15/32 S, so 10 MB: 4.6875e6 B / (8 us + 104.17 us) = 41.79 GB/s
    (10e6, 4.6875e6 / (8e-6 + 4.6875e6 / 45e9) / 1e9),
    (2**31, 15 / 32 * 2**31 / (8e-6 + 15 / 32 * 2**31 / 45e9) / 1e9),
])
def test_v5e_ring_link_rate_by_hand(nbytes, rate):
    assert p.v5e_ring_gather_link_rate(nbytes) == pytest.approx(rate)


def test_scaling_book_ring_row_is_95_percent_of_the_link():
    row = p.lookup_row("all-gather link rate along a 16-chip ring, 10 MB and above")
    assert row.value == pytest.approx(0.95 * 45.0) and row.section == "TPU"
    assert row.ratio() == pytest.approx(0.95, abs=0.001)   # the model's plateau: 44.98 GB/s
