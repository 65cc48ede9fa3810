"""GPU and TPU presets (collectives.hardware.presets): DGX nodes with a NIC per GPU, rails,
SuperPOD routes, dgx_nodes, bad options."""

import pytest

import collectives as cl
from collectives import hardware


def test_dgx_h100_is_an_nvswitch_node_with_a_nic_per_gpu():
    t = cl.hardware.preset("dgx-h100")
    # 8 GPUs, 8 NICs; switches: the NVSwitch, 8 rail leaves, 1 spine (one node: min(32, 1))
    assert (t.n_ranks, t.n_nics, t.n_switches) == (8, 8, 1 + 8 + 1)
    assert t.system.hop_latency == 0.0  # NVLink latency: not published
    levels = dict(zip(t.info.levels, range(4)))
    bandwidth = {
        name: set(t.link_bandwidth[t.link_level == i].tolist()) for name, i in levels.items()
    }
    # NVLink 4: 18 x 25 GB/s = 450 GB/s per GPU; PCIe 5.0 x16: 32 GT/s x 16 x 128/130 / 8
    # = 63.0 GB/s; NDR 400 Gb/s = 50 GB/s (DGX H100 user guide, ConnectX-7 manual)
    assert bandwidth == {
        "nvlink": {450e9},
        "pcie": {32e9 * 16 * 128 / 130 / 8},
        "leaf": {50e9},
        "spine": {50e9},
    }
    # inside the node: GPU -> NVSwitch -> GPU, as the 8-GPU switch of earlier versions
    assert [t.info.levels[t.link_level[k]] for k in t.route(0, 5)] == ["nvlink", "nvlink"]


def test_dgx_nodes_on_rails():
    t = cl.hardware.preset("dgx-b200", nodes=4)
    assert (t.n_ranks, t.shape) == (32, (4, 8))
    # GPU 3 of node 0 to GPU 3 of node 2: the rail-3 leaf, no NVLink, no spine
    assert [t.info.levels[t.link_level[k]] for k in t.route(3, 19)] == [
        "pcie",
        "leaf",
        "leaf",
        "pcie",
    ]
    assert set(t.link_bandwidth[t.link_level == 0].tolist()) == {900e9}  # NVLink 5


def test_superpod_routes_climb_only_as_high_as_needed():
    t = cl.hardware.preset("superpod-h100", units=16)
    names = t.info.levels

    def kinds(a, b):
        return [names[t.link_level[k]] for k in t.route(a, b)]

    assert kinds(0, 8) == ["pcie", "leaf", "leaf", "pcie"]  # same rail, SU
    assert kinds(0, 9) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]  # other rail
    assert kinds(0, 3 * 256) == ["pcie", "leaf", "spine", "spine", "leaf", "pcie"]  # SU 3
    assert kinds(0, 4 * 256) == [
        "pcie",
        "leaf",
        "spine",
        "core",
        "core",
        "spine",
        "leaf",
        "pcie",
    ]  # group 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: hardware.superpod_plan(0), "units must be an integer >= 1, got 0"),
        (
            lambda: hardware.superpod_plan(300),
            "a three-tier fabric of 64-port switches reaches 256",
        ),
        (
            lambda: hardware.superpod_plan(4, nodes=96),
            "4 scalable units hold 97 to 128 nodes; got nodes=96",
        ),
        (lambda: cl.hardware.preset("superpod-h100", shape=(8,)), "does not take option"),
        (lambda: hardware.tpu_hosts("tpu7x", (4, 4)), "tpu7x slices are 3-D; got shape"),
        (lambda: hardware.tpu_hosts("dgx-h100"), "is a GPU system"),
    ],
)
def test_bad_gpu_presets(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cl.hardware.preset("tpu-v9"), "unknown hardware preset 'tpu-v9'; choose from"),
        (
            lambda: cl.hardware.preset("tpu-v5e", shape=(4, 4, 4)),
            r"tpu-v5e slices are 2-D; got shape \(4, 4, 4\)",
        ),
        (lambda: cl.hardware.preset("dgx-h100", shape=(8,)), "does not take option\\(s\\) shape"),
    ],
)
def test_bad_presets(call, message):
    with pytest.raises(cl.TopologyError, match=message):
        call()


def test_dgx_nodes_are_the_cluster_the_calculators_vary():
    # n DGX H100 nodes on one rail unit with n spines, NIC speed replaceable: what the
    # chapters' calculators built by hand with cl.topology.cluster and the spec's numbers
    h100 = hardware.spec("dgx-h100")
    by_hand = cl.topology.cluster(
        4,
        8,
        nvlink_bandwidth=h100.link_bandwidth,
        pcie_bandwidth=h100.pcie_bandwidth,
        nic_bandwidth=100e9,
        network_latency=1e-6,
    )
    t = hardware.dgx_nodes(4, 100e9, network_latency=1e-6)
    for key in ("link_src", "link_dst", "link_bandwidth", "link_latency"):
        assert getattr(t, key).tolist() == getattr(by_hand, key).tolist()
    nic = t.info.levels.index("leaf")
    assert set(t.link_bandwidth[t.link_level == nic].tolist()) == {100e9}
    default = hardware.dgx_nodes(2)
    assert set(default.link_bandwidth[default.link_level == nic].tolist()) == {50e9}
    with pytest.raises(cl.TopologyError, match="dgx_nodes builds DGX nodes; tpu-v5e is not"):
        hardware.dgx_nodes(2, system="tpu-v5e")


def test_gpu_presets_take_a_routing_option():
    hashed = cl.hardware.preset("dgx-h100", nodes=8)
    spread = cl.hardware.preset("dgx-h100", nodes=8, routing="dmodk")
    assert hashed.routing == "hash" and spread.routing == "dmodk"
    assert cl.hardware.preset("dgx-h100", nodes=8, hash_seed=3).hash_seed == 3
    meta = cl.hardware.preset(
        "meta-roce-32k", zones=2, racks_per_zone=28, aggregators=4, routing="adaptive"
    )
    assert meta.routing == "adaptive"


# ---- rates= ------------------------------------------------------------------------------


def test_rates_option_builds_the_effective_links():
    import collectives as cl

    one = cl.hardware.preset("dgx-h100", rates="effective")
    ring = cl.time(cl.algorithms.ring_all_reduce(8), one, 1e9, placement=range(8))
    # ring all-reduce busbw = the per-GPU NVLink rate: 18 x 20.6 GB/s (NCCL's topo.h)
    assert cl.busbw("all_reduce", 1e9, ring.seconds, 8) == pytest.approx(370.8e9)
    two = cl.hardware.preset("dgx-h100", nodes=2, rates="effective")
    rail = cl.time(cl.algorithms.ring_all_reduce(2), two, 1e9, placement=[0, 8])
    assert rail.seconds == pytest.approx(1e9 / 48.5e9)  # one NIC at 48.5 GB/s
    assert "effective" in two.name and cl.hardware.preset("dgx-h100").name != one.name
    nvl = cl.hardware.preset("gb200-nvl72", n=4, rates="effective")
    t = cl.time(cl.algorithms.ring_all_gather(4), nvl, 1e9)
    assert t.seconds == pytest.approx(3 / 4 * 1e9 / 721.8e9)
    assert cl.hardware.dgx_nodes(2, rates="effective").n_ranks == 16


def test_rates_option_is_refused_where_it_has_no_meaning():
    import collectives as cl

    with pytest.raises(cl.TopologyError):
        cl.hardware.preset("tpu-v5p", rates="effective")
    with pytest.raises(cl.TopologyError):
        cl.hardware.preset("meta-roce-32k", zones=1, racks_per_zone=7, rates="effective")
    with pytest.raises(cl.TopologyError):
        cl.hardware.preset("dgx-h100", rates="fast")


def test_latency_option_takes_nccls_step_latencies():
    """``latency="nccl-ll"``/``"nccl-simple"``: the latency NCCL's tuner assumes per ring step
    (src/graph/tuning.cc of NCCL 2.30.7, hwLatencies: NVLink 0.6 us LL, 3.4 us Simple;
    network 2.7 us LL, 14 us Simple), half on each of the two links a message crosses."""
    default = cl.hardware.preset("dgx-h100", nodes=2)
    assert default.path_latency([0, 0], [1, 8]).tolist() == [0.0, 0.0]  # the default: none
    ll = cl.hardware.preset("dgx-h100", nodes=2, latency="nccl-ll")
    # GPU 0 -> NVSwitch -> GPU 1: 2 x 0.3 us; GPU 0 -> PCIe -> NIC -> leaf -> NIC -> PCIe ->
    # GPU 8: two InfiniBand links of 1.35 us each, PCIe 0
    assert ll.path_latency([0, 0], [1, 8]).tolist() == pytest.approx([0.6e-6, 2.7e-6])
    assert hardware.systems.NCCL_TUNING_CC in ll.info.sources
    simple = hardware.dgx_nodes(4, latency="nccl-simple")
    # GPU 0 -> GPU 31 (other node, other rail): through a spine, four InfiniBand links of 7 us
    assert simple.path_latency([0, 0, 0], [1, 8, 31]).tolist() == pytest.approx(
        [3.4e-6, 14e-6, 28e-6]
    )
    nvl72 = cl.hardware.preset("gb200-nvl72", latency="nccl-ll")
    assert nvl72.path_latency([0], [71]).tolist() == pytest.approx([0.6e-6])
    with pytest.raises(cl.TopologyError, match="give it or hop_latency, not both"):
        cl.hardware.preset("dgx-h100", latency="nccl-ll", hop_latency=1e-6)
    with pytest.raises(cl.TopologyError, match="latency must be one of none, nccl-ll"):
        cl.hardware.preset("dgx-h100", latency="fast")
    with pytest.raises(cl.TopologyError, match="give it or network_latency"):
        hardware.dgx_nodes(2, network_latency=1e-6, latency="nccl-ll")
    with pytest.raises(cl.TopologyError, match="does not take option"):
        cl.hardware.preset("tpu-v5e", latency="nccl-ll")
