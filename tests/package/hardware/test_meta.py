"""Meta's RoCE cluster (collectives.hardware.meta): counts from the sources, NVLink servers,
rejected layouts; the fabric.presets compatibility names."""

import pytest

import collectives as cl
from collectives import fabric
from collectives.errors import TopologyError


def test_llama3_cluster_is_the_default():
    # Llama 3 paper, 3.3.1: 16 GPUs per rack, 192 racks per pod (3,072 GPUs), 8 pods;
    # switches 1,536 RTSW + 8 x 18 CTSW (assumed) + 9 ATSW (assumed), and the 24,576 / 8 =
    # 3,072 servers' NVSwitches; cables: 24,576 host, 1,536 x 18 RTSW-CTSW, 144 CTSW x 27
    # uplinks (192 / 7 = 27.4, the nearest whole number of cables: 192 / 27 = 7.11:1)
    f = cl.hardware.preset("meta-roce-24k")
    assert f.n_ranks == 8 * 192 * 16 == 24_576
    assert f.switches_per_tier == (1536, 144, 9)
    assert f.n_switches == 1536 + 144 + 9 + 3072
    assert f.cables_per_tier == (24_576, 1536 * 18, 144 * 27)
    assert f.n_links == 2 * (24_576 + 27_648 + 3888) + 4 * 24_576
    assert f.oversubscription == pytest.approx((16 / 18, 192 / 27))
    # cross-pod cut: 4 pods x 18 CTSWs x 27 uplinks x 50 GB/s
    assert fabric.fabric_bisection(f) == pytest.approx(4 * 18 * 27 * 50e9)
    assert f.system.name == "meta-roce-24k"
    # the builder's own default is the same cluster
    bare = fabric.meta_cluster()
    assert (bare.n_ranks, bare.switches_per_tier, bare.cables_per_tier) == (
        f.n_ranks,
        f.switches_per_tier,
        f.cables_per_tier,
    )
    # the RTSW uplinks at twice the downlinks that secondary sources report: 32 CTSWs
    twice = fabric.meta_cluster(zones=1, spines=32)
    assert twice.oversubscription[0] == pytest.approx(16 / 32)


def test_meta_preset_counts():
    # the 32k what-if (not a published layout):
    # 8 zones x 252 racks x 16 GPUs; switches 2016 RTSW + 8 x 18 CTSW + 18 ATSW, and the
    # 32,256 / 8 = 4,032 servers' NVSwitches; cables: 32,256 host, 2016 x 18 RTSW-CTSW,
    # 144 CTSW x 36 uplinks (252 / 7); inside the servers 32,256 NVLink and 32,256 PCIe
    # links each way
    f = cl.hardware.preset("meta-roce-32k")
    assert f.n_ranks == 8 * 252 * 16 == 32_256
    assert f.switches_per_tier == (2016, 144, 18)
    assert f.n_switches == 2016 + 144 + 18 + 4032
    assert f.n_nics == 32_256
    assert f.cables_per_tier == (32_256, 2016 * 18, 144 * 36)
    assert f.n_links == 2 * (32_256 + 36_288 + 5184) + 4 * 32_256
    assert f.info.levels == ("nvlink", "pcie", "leaf", "spine", "core")
    assert f.oversubscription == pytest.approx((16 / 18, 7.0))
    # cross-zone cut: 4 zones x 18 CTSWs x 36 uplinks x 50 GB/s
    assert fabric.fabric_bisection(f) == pytest.approx(4 * 18 * 36 * 50e9)
    assert f.system.name == "meta-roce-32k"


def test_meta_preset_rejects_ratios_whole_cables_cannot_give():
    # 18 racks at 7:1 need 2.57 uplinks per CTSW; 3 give 6:1, 14 % off
    with pytest.raises(
        TopologyError,
        match=r"18 racks per zone at 7:1 need 2\.57143 CTSW "
        "uplinks; the nearest whole number, 3, gives 6:1",
    ):
        fabric.meta_cluster(zones=2, racks_per_zone=18)
    # 20 racks: 3 uplinks give 6.67:1, within 5 % of 7:1
    assert fabric.meta_cluster(
        zones=2, racks_per_zone=20, aggregators=3, gpus_per_server=None
    ).oversubscription[1] == pytest.approx(20 / 3)
    with pytest.raises(TopologyError, match="27 CTSW uplinks do not split evenly over 5 ATSWs"):
        fabric.meta_cluster(aggregators=5)


def test_meta_servers_are_nvlink_nodes_of_eight():
    # GPUs 0..7 are one server (Llama 3 paper, 3.3.1: eight GPUs on NVLink), two servers
    # per rack: GPU 0 -> 7 crosses its NVSwitch, GPU 0 -> 8 (the other server of the rack)
    # its PCIe, its NIC's cable into the RTSW and back, GPU 0 -> 16 (the next rack) climbs
    # to a CTSW of the zone
    f = cl.hardware.preset("meta-roce-32k", zones=2, racks_per_zone=28, aggregators=4)
    assert f.gpus_per_node == 8 and f.info.gpus_per_node == 8
    assert f.route_levels(0, 7) == ["nvlink", "nvlink"]
    assert f.route_levels(0, 8) == ["pcie", "leaf", "leaf", "pcie"]
    assert f.route_levels(0, 16) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]
    assert f.route_levels(0, 28 * 16) == [
        "pcie",
        "leaf",
        "spine",
        "core",
        "core",
        "spine",
        "leaf",
        "pcie",
    ]
    # NVLink 450 GB/s per GPU, PCIe Gen5 x16 (32 GT/s x 16 x 128/130 / 8 bytes/s), 400 Gb/s
    pcie, nic = (f.link_bandwidth[f.route(0, 16)[k]] for k in (0, 1))
    assert f.link_bandwidth[f.route(0, 7)[0]] == 450e9
    assert pcie == 32e9 * 16 * 128 / 130 / 8 and nic == 400e9 / 8
    # the fabric alone, as before the servers were modelled: GPU 0 -> 7 through the RTSW
    bare = fabric.meta_cluster(zones=2, racks_per_zone=28, aggregators=4, gpus_per_server=None)
    assert bare.route_levels(0, 7) == ["leaf", "leaf"] and bare.n_nics == 0
    assert bare.switches_per_tier == f.switches_per_tier
    with pytest.raises(TopologyError, match="a rack of 12 GPUs does not hold whole servers of 8"):
        fabric.meta_cluster(gpus_per_rack=12)


def test_fabric_presets_is_the_compatibility_name_of_hardware_meta():
    from collectives.fabric import presets

    assert presets.meta_cluster is cl.hardware.meta_cluster is fabric.meta_cluster
    assert presets.META_SOURCES is cl.hardware.META_SOURCES
