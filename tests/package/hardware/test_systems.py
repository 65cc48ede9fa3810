"""The published records (collectives.hardware.systems): every preset listed, the numbers and
their sources."""

import pytest

from collectives import hardware


def test_presets_are_listed():
    assert {"tpu-v4", "tpu-v5p", "tpu-v5e", "tpu-v6e", "tpu7x", "dgx-h100", "dgx-b200",
            "gb200-nvl72"} <= set(hardware.presets())


@pytest.mark.parametrize("name, link, shape", [
    # The Scaling Book, "How to Think About TPUs" (2026-07): one-way ICI bytes/s per link
    ("tpu-v4", 4.5e10, (16, 16, 16)), ("tpu-v5p", 9.0e10, (16, 20, 28)),
    ("tpu-v5e", 4.5e10, (16, 16)), ("tpu-v6e", 9.0e10, (16, 16)),
    # NVLink 4: 18 links x 25 GB/s = 450 GB/s per H100; NVLink 5: 900 GB/s per B200
    ("dgx-h100", 450e9, (8,)), ("dgx-b200", 900e9, (8,)),
])
def test_published_numbers(name, link, shape):
    s = hardware.spec(name)
    assert s.link_bandwidth == link and s.default_shape == shape
    assert s.source.startswith("https://")
