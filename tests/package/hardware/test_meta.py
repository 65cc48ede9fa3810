"""Meta's RoCE cluster (collectives.hardware.meta): counts from the sources, NVLink servers,
rejected layouts; the fabric.presets compatibility names."""

import pytest

import collectives as cl
from collectives import fabric
from collectives.errors import TopologyError


def test_meta_preset_counts():
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


def test_meta_preset_rejects_fractional_cables():
    with pytest.raises(TopologyError, match="27.4286 CTSW uplinks"):
        fabric.meta_cluster(racks_per_zone=192)
    with pytest.raises(TopologyError, match="do not split evenly over 5 ATSWs"):
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
    assert f.route_levels(0, 28 * 16) == ["pcie", "leaf", "spine", "core", "core", "spine",
                                          "leaf", "pcie"]
    # NVLink 450 GB/s per GPU, PCIe Gen5 x16 (32 GT/s x 16 x 128/130 / 8 bytes/s), 400 Gb/s
    pcie, nic = (f.link_bandwidth[f.route(0, 16)[k]] for k in (0, 1))
    assert f.link_bandwidth[f.route(0, 7)[0]] == 450e9
    assert pcie == 32e9 * 16 * 128 / 130 / 8 and nic == 400e9 / 8
    # the fabric alone, as before the servers were modelled: GPU 0 -> 7 through the RTSW
    bare = fabric.meta_cluster(zones=2, racks_per_zone=28, aggregators=4, gpus_per_server=None)
    assert bare.route_levels(0, 7) == ["leaf", "leaf"] and bare.n_nics == 0
    assert bare.switches_per_tier == f.switches_per_tier
    with pytest.raises(TopologyError, match="a rack of 12 GPUs does not hold whole servers "
                                            "of 8"):
        fabric.meta_cluster(gpus_per_rack=12)


def test_fabric_presets_is_the_compatibility_name_of_hardware_meta():
    from collectives.fabric import presets
    assert presets.meta_cluster is cl.hardware.meta_cluster is fabric.meta_cluster
    assert presets.META_SOURCES is cl.hardware.META_SOURCES
