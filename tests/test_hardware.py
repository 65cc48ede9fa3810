"""Hardware presets carry the published numbers (FACTS.md) and the wraparound rules."""

import pytest

import collectives as cl
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


def test_full_v5e_pod_is_a_wrapped_16x16_torus():
    t = cl.hardware.preset("tpu-v5e")
    assert t.n_ranks == 256 and t.shape == (16, 16) and t.wraparound == (True, True)
    assert t.n_links == 256 * 4
    assert set(t.link_bandwidth) == {4.5e10}


def test_v5e_8x16_wraps_only_the_long_axis():
    t = cl.hardware.preset("tpu-v5e", shape=(8, 16))
    assert t.wraparound == (False, True)


@pytest.mark.parametrize("shape, wrap", [
    ((2, 2, 1), (False, False, False)), ((2, 2, 4), (False, False, False)),
    ((4, 4, 4), (True, True, True)), ((4, 8, 12), (True, True, True)),
])
def test_3d_slices_wrap_only_when_built_of_whole_cubes(shape, wrap):
    t = cl.hardware.preset("tpu-v5p", shape=shape)
    # a 2-long axis never gets a duplicate wraparound link, so compare the rule itself
    assert hardware.tpu_wraparound("tpu-3d", shape) == wrap
    assert t.n_ranks == shape[0] * shape[1] * shape[2]


def test_full_v5p_pod_routes_and_times():
    t = cl.hardware.preset("tpu-v5p")
    assert t.n_ranks == 8960
    # 16x20x28 torus: farthest chip is 8 + 10 + 14 = 32 hops away
    far = (8 * 20 + 10) * 28 + 14
    assert len(t.route(0, far)) == 32


def test_dgx_h100_is_an_nvswitch_node():
    t = cl.hardware.preset("dgx-h100")
    assert (t.n_ranks, t.n_switches) == (8, 1)
    assert t.system.hop_latency == 0.0        # NVLink latency: not published


@pytest.mark.parametrize("call, message", [
    (lambda: cl.hardware.preset("tpu-v9"), "unknown hardware preset 'tpu-v9'; choose from"),
    (lambda: cl.hardware.preset("tpu-v5e", shape=(4, 4, 4)), r"tpu-v5e slices are 2-D; got shape \(4, 4, 4\)"),
    (lambda: cl.hardware.preset("dgx-h100", shape=(8,)), "does not take option\\(s\\) shape"),
])
def test_bad_presets(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()
