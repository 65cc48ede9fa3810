"""Hardware presets carry the published numbers (FACTS.md) and the wraparound rules."""

import numpy as np
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


def test_dgx_h100_is_an_nvswitch_node_with_a_nic_per_gpu():
    t = cl.hardware.preset("dgx-h100")
    # 8 GPUs, 8 NICs; switches: the NVSwitch, 8 rail leaves, 1 spine (one node: min(32, 1))
    assert (t.n_ranks, t.n_nics, t.n_switches) == (8, 8, 1 + 8 + 1)
    assert t.system.hop_latency == 0.0        # NVLink latency: not published
    levels = dict(zip(t.info.levels, range(4)))
    bandwidth = {name: set(t.link_bandwidth[t.link_level == i].tolist())
                 for name, i in levels.items()}
    # NVLink 4: 18 x 25 GB/s = 450 GB/s per GPU; PCIe 5.0 x16: 32 GT/s x 16 x 128/130 / 8
    # = 63.0 GB/s; NDR 400 Gb/s = 50 GB/s (DGX H100 user guide, ConnectX-7 manual)
    assert bandwidth == {"nvlink": {450e9}, "pcie": {32e9 * 16 * 128 / 130 / 8},
                         "leaf": {50e9}, "spine": {50e9}}
    # inside the node: GPU -> NVSwitch -> GPU, as the 8-GPU switch of earlier versions
    assert [t.info.levels[t.link_level[k]] for k in t.route(0, 5)] == ["nvlink", "nvlink"]


def test_dgx_nodes_on_rails():
    t = cl.hardware.preset("dgx-b200", nodes=4)
    assert (t.n_ranks, t.shape) == (32, (4, 8))
    # GPU 3 of node 0 to GPU 3 of node 2: the rail-3 leaf, no NVLink, no spine
    assert [t.info.levels[t.link_level[k]] for k in t.route(3, 19)] == [
        "pcie", "leaf", "leaf", "pcie"]
    assert set(t.link_bandwidth[t.link_level == 0].tolist()) == {900e9}     # NVLink 5


# DGX SuperPOD compute fabric: (SUs, leaves, spines, cores, node-leaf, leaf-spine, spine-core
# cables). 1-4 SUs: DGX H100 RA-11333-001 V11 table 4 (switches; cables = one per GPU port at
# each tier); 8-64 SUs: DGX SuperPOD B200 RA table 3 (same 32-node SUs and 64-port NDR
# switches), where 16 SUs and more have a core tier.
RA_COUNTS = [
    (1, 8, 4, 0, 256, 256, 0), (2, 16, 8, 0, 512, 512, 0), (3, 24, 16, 0, 768, 768, 0),
    (4, 32, 16, 0, 1024, 1024, 0), (8, 64, 32, 0, 2048, 2048, 0),
    (16, 128, 128, 64, 4096, 4096, 4096), (32, 256, 256, 128, 8192, 8192, 8192),
    (64, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize("units, leaves, spines, cores, node_leaf, leaf_spine, spine_core",
                         RA_COUNTS)
def test_superpod_matches_the_reference_architecture(units, leaves, spines, cores, node_leaf,
                                                     leaf_spine, spine_core):
    plan = hardware.superpod_plan(units)
    assert (plan.leaves, plan.spines, plan.cores) == (leaves, spines, cores)
    assert (plan.node_leaf_cables, plan.leaf_spine_cables, plan.spine_core_cables) == (
        node_leaf, leaf_spine, spine_core)
    # the built topology has exactly those switches and cables (one link each way per cable)
    t = cl.hardware.preset("superpod-h100", units=units)
    nodes = units * 32
    assert t.n_ranks == nodes * 8 and t.n_switches == nodes + leaves + spines + cores
    cables = np.bincount(t.link_level, minlength=5) // 2
    assert cables[2:].tolist() == [node_leaf, leaf_spine, spine_core]
    # no switch uses more than the QM9700's 64 ports
    ports = np.bincount(t.link_src, minlength=t.n_nodes)
    first_leaf = 2 * t.n_ranks + nodes
    assert ports[first_leaf:].max() <= 64
    # every leaf has 32 ports down and 32 up: non-blocking at the leaf
    assert set(ports[first_leaf:first_leaf + leaves].tolist()) == {64}


def test_superpod_reference_design_has_127_nodes():
    # RA-11333-001 V11 table 4: the 4-SU design has 127 DGX H100 nodes (a node slot goes to
    # fabric management), 32 leaves and 16 spines
    t = cl.hardware.preset("superpod-h100", units=4, nodes=127)
    assert t.n_ranks == 127 * 8 and t.n_switches == 127 + 32 + 16


def test_superpod_routes_climb_only_as_high_as_needed():
    t = cl.hardware.preset("superpod-h100", units=16)
    names = t.info.levels

    def kinds(a, b):
        return [names[t.link_level[k]] for k in t.route(a, b)]

    assert kinds(0, 8) == ["pcie", "leaf", "leaf", "pcie"]                    # same rail, SU
    assert kinds(0, 9) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]  # other rail
    assert kinds(0, 3 * 256) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]  # SU 3
    assert kinds(0, 4 * 256) == ["pcie", "leaf", "spine", "core", "core", "spine", "leaf",
                                 "pcie"]                                       # group 1


@pytest.mark.parametrize("call, message", [
    (lambda: hardware.superpod_plan(0), "units must be an integer >= 1, got 0"),
    (lambda: hardware.superpod_plan(300), "a three-tier fabric of 64-port switches reaches 256"),
    (lambda: hardware.superpod_plan(4, nodes=96), "4 scalable units hold 97 to 128 nodes; got "
                                                  "nodes=96"),
    (lambda: cl.hardware.preset("superpod-h100", shape=(8,)), "does not take option"),
    (lambda: hardware.tpu_hosts("tpu7x"), "hosts are not published"),
    (lambda: hardware.tpu_hosts("dgx-h100"), "is a GPU system"),
])
def test_bad_gpu_presets(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()


@pytest.mark.parametrize("name, chips_per_host, hosts_in_pod", [
    # The Scaling Book (2026-07): v5e/v6e one host per 4x2 chips, v4/v5p per 2x2x1
    ("tpu-v5e", 8, 256 // 8), ("tpu-v6e", 8, 32), ("tpu-v5p", 4, 8960 // 4),
    ("tpu-v4", 4, 4096 // 4),
])
def test_tpu_hosts(name, chips_per_host, hosts_in_pod):
    assert hardware.spec(name).chips_per_host == chips_per_host
    host = hardware.tpu_hosts(name)
    assert host.max() + 1 == hosts_in_pod
    assert set(np.bincount(host).tolist()) == {chips_per_host}
    # a 2x2 v5e slice sits on part of one host
    assert hardware.tpu_hosts("tpu-v5e", (2, 2)).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("call, message", [
    (lambda: cl.hardware.preset("tpu-v9"), "unknown hardware preset 'tpu-v9'; choose from"),
    (lambda: cl.hardware.preset("tpu-v5e", shape=(4, 4, 4)), r"tpu-v5e slices are 2-D; got shape \(4, 4, 4\)"),
    (lambda: cl.hardware.preset("dgx-h100", shape=(8,)), "does not take option\\(s\\) shape"),
])
def test_bad_presets(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()
