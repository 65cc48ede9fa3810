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


def test_nic_row_is_one_nic():
    m = p.lookup_row("ring busbw per 400 Gb/s NIC")
    assert m.prediction("line") == pytest.approx(50.0)        # 400 Gb/s / 8
    assert m.prediction("effective") == pytest.approx(48.5)   # the measurement itself


def test_table_has_every_row_and_finite_ratios():
    rows = p.table()
    assert len(rows) == len(p.MEASUREMENTS)
    for row in rows:
        assert math.isfinite(row["measured / model (line)"])
        assert row["measured / model (line)"] == pytest.approx(
            row["measured"] / row["model (line)"])


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
    if google_rate is not None:                  # Google's count: one way, per port
        assert links * google_rate == pytest.approx(published)


def test_all_reduce_bandwidth_is_a_sum_of_ports():
    # every port of every chip one way: v4 4096 x 6 x 45e9 = 1105.92 TB/s (Google: 1.1 PB/s);
    # v5e 256 x 4 x 45e9 = 46.08 (Google: 51.2 = 256 x 4 x 50e9)
    assert p.pod_port_sum("tpu-v4") == pytest.approx(1105.92)
    assert p.pod_port_sum("tpu-v5e") == pytest.approx(46.08)
    assert 256 * 4 * 50e9 / 1e12 == pytest.approx(51.2)
    sections = {m.section for m in p.TPU_ROWS}
    assert sections == {"TPU", "TPU: Google's pod figures"}
