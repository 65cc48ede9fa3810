"""The published records (collectives.hardware.systems): every preset listed, the numbers and
their sources."""

import pytest

from collectives import hardware


def test_presets_are_listed():
    assert {
        "tpu-v4",
        "tpu-v5p",
        "tpu-v5e",
        "tpu-v6e",
        "tpu7x",
        "dgx-h100",
        "dgx-b200",
        "gb200-nvl72",
    } <= set(hardware.presets())


@pytest.mark.parametrize(
    "name, link, shape",
    [
        # The Scaling Book, "How to Think About TPUs" (2026-07): one-way ICI bytes/s per link
        ("tpu-v4", 4.5e10, (16, 16, 16)),
        ("tpu-v5p", 9.0e10, (16, 20, 28)),
        ("tpu-v5e", 4.5e10, (16, 16)),
        ("tpu-v6e", 9.0e10, (16, 16)),
        # NVLink 4: 18 links x 25 GB/s = 450 GB/s per H100; NVLink 5: 900 GB/s per B200
        ("dgx-h100", 450e9, (8,)),
        ("dgx-b200", 900e9, (8,)),
    ],
)
def test_published_numbers(name, link, shape):
    s = hardware.spec(name)
    assert s.link_bandwidth == link and s.default_shape == shape
    assert s.source.startswith("https://")


# ---- line and effective rates ------------------------------------------------------------


@pytest.mark.parametrize(
    "name, nvlink",
    [
        # NCCL 2.30.7 src/graph/topo.h: SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s per link,
        # 18 links per GPU: 18 x 20.6 = 370.8 GB/s (Hopper), 18 x 40.1 = 721.8 GB/s (Blackwell)
        ("dgx-h100", 370.8e9),
        ("superpod-h100", 370.8e9),
        ("meta-roce-32k", 370.8e9),
        ("dgx-b200", 721.8e9),
        ("gb200-nvl72", 721.8e9),
    ],
)
def test_effective_nvlink_is_nccls_per_link_figure(name, nvlink):
    s = hardware.spec(name)
    line, effective = s.bandwidths("line"), s.bandwidths("effective")
    assert line[0] == s.link_bandwidth
    assert effective[0] == pytest.approx(nvlink)
    assert any("topo.h" in src for src in s.effective_sources)


def test_effective_nic_is_the_measured_rate_and_pcie_stays():
    # nccl-tests #267: 48 to 49 GB/s per 400 Gb/s NIC; the middle, 48.5e9 bytes/s
    line, effective = (hardware.spec("dgx-h100").bandwidths(r) for r in ("line", "effective"))
    assert line[2] == 50e9 and effective[2] == 48.5e9
    assert line[1] == effective[1] == 32e9 * 16 * 128 / 130 / 8


def test_rates_are_checked():
    from collectives.errors import TopologyError

    with pytest.raises(TopologyError, match="rates must be one of"):
        hardware.spec("dgx-h100").bandwidths("measured")
    with pytest.raises(TopologyError, match="no effective rate"):
        hardware.spec("tpu-v5p").bandwidths("effective")
