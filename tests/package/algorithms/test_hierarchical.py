"""Hierarchical all-reduce (inner reduce-scatter, outer all-reduce, inner all-gather), and the
per-level report of ``time``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import topology as tp
from collectives.traffic import Traffic
from collectives.transforms import pipelined

# a cluster of the DGX H100 kind: numbers only set the scale of these tests
NVLINK, PCIE, NIC = 450e9, 64e9, 50e9


def gpus(n_nodes, g):
    return tp.cluster(n_nodes, g, nvlink_bandwidth=NVLINK, pcie_bandwidth=PCIE, nic_bandwidth=NIC)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.booleans())
def test_two_level_ring_all_reduce_computes_the_sum(n_nodes, g, bidirectional):
    s = cl.algorithms.two_level_ring_all_reduce(n_nodes, g, bidirectional=bidirectional)
    cl.verify(s)
    x = np.random.default_rng(0).integers(-9, 9, (n_nodes * g, 2 * s.n_chunks))
    np.testing.assert_array_equal(cl.simulate(s, x), np.broadcast_to(x.sum(0), x.shape))
    listed = Traffic.from_transfers(s.step_of_transfer, s.src, s.dst, s.n_steps)
    assert s.traffic.per_step() == listed.per_step()


def test_multislice_all_reduce_is_a_torus_inside_and_a_ring_across():
    # 3 slices of a 2x2 torus joined over DCN: ICI reduce-scatter, DCN all-reduce, ICI
    # all-gather (The Scaling Book, multislice)
    s = cl.algorithms.hierarchical_all_reduce(
        cl.algorithms.torus_reduce_scatter((2, 2)), cl.algorithms.ring_all_reduce(3)
    )
    cl.verify(s)
    assert s.n_ranks == 12


def test_unpipelined_cost_is_the_sum_of_the_levels():
    n_nodes, g, S = 4, 8, 2**30
    t = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, g), gpus(n_nodes, g), S)
    # inside a node: ring reduce-scatter and all-gather, (g-1)/g S over NVLink each;
    # across nodes: a ring all-reduce of the shard S/g, 2(N-1)/N (S/g) over each NIC
    inner = 2 * (g - 1) / g * S / NVLINK
    outer = 2 * (n_nodes - 1) / n_nodes * (S / g) / NIC
    assert t.seconds == pytest.approx(inner + outer, rel=1e-12)
    assert t.level_seconds() == pytest.approx({"nvlink": inner, "leaf": outer}, rel=1e-12)
    assert t.bottleneck_level == "nvlink"  # 4.18 ms against 4.03 ms
    # only 1/g of the buffer crosses the NICs: per rail 2(N-1)/N (S/g) each way
    assert t.level_bytes()["leaf"] == pytest.approx(2 * n_nodes * g * outer * NIC, rel=1e-12)


def test_pipelined_it_costs_about_the_slower_level():
    n_nodes, g, S = 4, 8, 2**30
    h = cl.algorithms.two_level_ring_all_reduce(n_nodes, g)
    topo = gpus(n_nodes, g)
    whole = cl.time(h, topo, S)
    levels = whole.level_seconds()
    piped = cl.time(pipelined(h, 128), topo, S)
    assert max(levels.values()) <= piped.seconds < 1.06 * max(levels.values())
    assert piped.seconds < 0.53 * whole.seconds


def test_the_flat_ring_crosses_the_spines_and_the_hierarchy_does_not():
    n_nodes, g, S = 4, 8, 2**30
    topo = gpus(n_nodes, g)
    flat = cl.time(cl.algorithms.ring_all_reduce(n_nodes * g), topo, S)
    hier = cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, g), topo, S)
    # GPU 7 -> GPU 8 changes rail: through a spine, every step, with the whole ring's bytes
    assert flat.bottleneck_level == "spine" and hier.level_bytes()["spine"] == 0
    assert hier.seconds < flat.seconds / 5
    # a slower NIC moves the bottleneck to the network
    slow = tp.cluster(
        n_nodes, g, nvlink_bandwidth=NVLINK, pcie_bandwidth=PCIE, nic_bandwidth=NIC / 4
    )
    assert (
        cl.time(cl.algorithms.two_level_ring_all_reduce(n_nodes, g), slow, S).bottleneck_level
        == "leaf"
    )


def test_a_topology_without_levels_reports_its_one_level():
    t = cl.time(cl.algorithms.ring_all_reduce(4), tp.ring(4, 1e9), 4e6)
    assert t.bottleneck_level == "link" and t.level_bytes() == {"link": t.link_bytes.sum()}


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: cl.algorithms.hierarchical_all_reduce(
                cl.algorithms.ring_all_gather(2), cl.algorithms.ring_all_reduce(2)
            ),
            "inner_reduce_scatter must compute reduce_scatter, not all_gather",
        ),
        (
            lambda: cl.algorithms.hierarchical_all_reduce(
                cl.algorithms.ring_reduce_scatter(2), cl.algorithms.ring_all_gather(2)
            ),
            "outer_all_reduce must compute all_reduce, not all_gather",
        ),
        (
            lambda: cl.algorithms.hierarchical_all_reduce(
                cl.algorithms.ring_reduce_scatter(2),
                cl.algorithms.ring_all_reduce(2),
                cl.algorithms.ring_all_gather(3),
            ),
            "must use the ranks and chunks",
        ),
        (
            lambda: cl.algorithms.hierarchical_all_reduce("ring", cl.algorithms.ring_all_reduce(2)),
            "inner_reduce_scatter must be a collectives.Schedule",
        ),
        (lambda: cl.algorithms.two_level_ring_all_reduce(0, 8), "must be an integer >= 1"),
    ],
)
def test_bad_parts_are_named(call, message):
    with pytest.raises(cl.ScheduleError, match=message):
        call()


def test_in_network_reduction_on_the_cluster_uses_each_nodes_nvswitch_and_each_rails_leaf():
    n_nodes, g, S = 4, 8, 2**30
    topo = gpus(n_nodes, g)
    mesh = cl.Mesh({"node": n_nodes, "gpu": g})
    # NVLS inside every node: switch participant of group i lands on node i's NVSwitch (the
    # cluster's first switches, in node order); only NVLink carries bytes, S + S/g per GPU
    # and direction
    nvls = mesh.collective(cl.algorithms.nvls_all_reduce(g), "gpu")
    cl.verify(nvls)
    t = cl.time(nvls, topo, S)
    assert t.level_bytes() == pytest.approx(
        {"nvlink": n_nodes * g * 2 * (S + S / g), "pcie": 0, "leaf": 0, "spine": 0}
    )
    # SHARP across nodes: one reduction in the leaf of every rail (placed there explicitly);
    # every GPU's whole buffer goes up its PCIe and NIC once and comes back once
    sharp = mesh.collective(cl.algorithms.sharp_all_reduce(n_nodes), "node")
    first_leaf = 2 * n_nodes * g + n_nodes  # after GPUs, NICs, NVSwitches
    t = cl.time(sharp, topo, S, switch_placement=first_leaf + np.arange(g))
    assert t.level_bytes() == pytest.approx(
        {"nvlink": 0, "pcie": n_nodes * g * 2 * S, "leaf": n_nodes * g * 2 * S, "spine": 0}
    )
    assert t.seconds == pytest.approx(2 * S / NIC)  # S up, S down, at NIC speed


def test_multislice_all_reduce_on_the_multislice_preset_costs_ici_plus_dcn():
    # 2 slices of a v5p 4x4x4 cube over DCN (Scaling Book 2026-07: ICI 9e10 B/s per link
    # one way, about 1 us per hop; DCN about 6.25e9 B/s per chip)
    pod = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4), slices=2)
    assert pod.n_ranks == 128 and pod.info.levels == ("dcn", "ici")
    assert pod.system.dcn_bandwidth == 6.25e9
    s = cl.algorithms.hierarchical_all_reduce(
        cl.algorithms.torus_reduce_scatter((4, 4, 4)), cl.algorithms.ring_all_reduce(2)
    )
    S = 2**30
    t = cl.time(s, pod, S)
    ici = cl.analytic.torus_reduce_scatter((4, 4, 4), S, alpha=1e-6, bandwidth=9e10)
    dcn = cl.analytic.ring_all_reduce(2, S / 64, alpha=0.0, bandwidth=6.25e9)
    assert t.seconds == pytest.approx(2 * ici + dcn, rel=1e-12)
    assert t.level_seconds()["dcn"] == pytest.approx(dcn, rel=1e-12)
    # the named form, one axis after another, is the same schedule; with every axis at once
    # (its default) the ICI phases take the concurrent torus time
    named = cl.algorithms.multislice_all_reduce((4, 4, 4), 2, concurrent=False)
    assert cl.time(named, pod, S).seconds == t.seconds
    together = cl.time(cl.algorithms.multislice_all_reduce((4, 4, 4), 2), pod, S)
    ici_together = cl.analytic.torus_reduce_scatter(
        (4, 4, 4), S, alpha=1e-6, bandwidth=9e10, concurrent=True
    )
    assert together.seconds == pytest.approx(2 * ici_together + dcn, rel=1e-12)
    assert named.name == "multislice_all_reduce"
    small = cl.algorithms.multislice_all_reduce((2, 2), 3)
    cl.verify(small)
    cl.verify(cl.algorithms.multislice_all_reduce((2, 2, 4), 2, wraparound=False))
    x = np.random.default_rng(0).normal(size=(12, small.n_chunks))
    assert np.allclose(cl.simulate(small, x), np.broadcast_to(x.sum(axis=0), x.shape))
    with pytest.raises(cl.TopologyError, match="does not take option"):
        cl.hardware.preset("dgx-h100", slices=2)
    with pytest.raises(cl.TopologyError, match="slices must be an integer >= 1"):
        cl.hardware.preset("tpu-v5e", slices=0)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.booleans(), st.booleans())
def test_hierarchical_all_gather_and_reduce_scatter_compute_their_collectives(
    n_nodes, g, outer_two_way, inner_two_way
):
    a = cl.algorithms
    outer = (a.bidirectional_ring_all_gather if outer_two_way else a.ring_all_gather)(n_nodes)
    inner = (a.bidirectional_ring_all_gather if inner_two_way else a.ring_all_gather)(g)
    ag = a.hierarchical_all_gather(outer, inner)
    rs = a.hierarchical_reduce_scatter(cl.transforms.dual(inner), cl.transforms.dual(outer))
    n = n_nodes * g
    rng = np.random.default_rng(1)
    x = rng.integers(-9, 9, (n, 2 * ag.n_chunks // n))
    np.testing.assert_array_equal(cl.simulate(ag, x), np.tile(x.reshape(1, -1), (n, 1)))
    y = rng.integers(-9, 9, (n, 2 * rs.n_chunks))
    np.testing.assert_array_equal(cl.simulate(rs, y), y.sum(axis=0).reshape(n, -1))
    for s in (ag, rs):
        cl.verify(s)
        listed = Traffic.from_transfers(s.step_of_transfer, s.src, s.dst, s.n_steps)
        assert s.traffic.per_step() == listed.per_step()


def test_hierarchical_all_gather_crosses_the_network_with_one_gth_of_the_result():
    n_nodes, g, S = 4, 8, 2**30
    a = cl.algorithms
    ag = a.hierarchical_all_gather(a.ring_all_gather(n_nodes), a.ring_all_gather(g))
    t = cl.time(ag, gpus(n_nodes, g), S)
    # rails first: a ring all-gather whose output is S/g; then NVLink: a ring all-gather of S
    outer = (n_nodes - 1) / n_nodes * (S / g) / NIC
    inner = (g - 1) / g * S / NVLINK
    assert t.seconds == pytest.approx(outer + inner, rel=1e-12)
    assert t.level_seconds() == pytest.approx({"leaf": outer, "nvlink": inner}, rel=1e-12)
    flat = cl.time(a.ring_all_gather(n_nodes * g), gpus(n_nodes, g), S)
    assert flat.seconds > 5 * t.seconds


@pytest.mark.parametrize("line", ["direct", "ring", "bidirectional_ring"])
@pytest.mark.parametrize("n_nodes, g", [(2, 4), (3, 2), (1, 3)])
def test_hierarchical_all_to_all_delivers_every_part(n_nodes, g, line):
    s = cl.algorithms.hierarchical_all_to_all(n_nodes, g, line=line)
    cl.verify(s)
    n = n_nodes * g
    x = np.arange(n * s.n_chunks).reshape(n, s.n_chunks)
    parts = x.reshape(n, n, -1)  # [source, destination, piece]
    np.testing.assert_array_equal(cl.simulate(s, x), parts.transpose(1, 0, 2).reshape(n, -1))


def test_hierarchical_all_to_all_sends_fewer_larger_messages_across_the_network():
    n_nodes, g, S = 4, 8, 2**26
    topo = tp.cluster(
        n_nodes,
        g,
        nvlink_bandwidth=NVLINK,
        pcie_bandwidth=PCIE,
        nic_bandwidth=NIC,
        network_latency=5e-6,
    )
    hier = cl.time(cl.algorithms.hierarchical_all_to_all(n_nodes, g), topo, S)
    flat = cl.time(cl.algorithms.direct_all_to_all(n_nodes * g), topo, S)
    # the network sees the same (N-1)/N of every buffer, but the flat one routes the parts
    # for other rails through the spines, sharing them; the hierarchical one stays on rails
    assert hier.level_bytes()["spine"] == 0 and flat.level_bytes()["spine"] > 0
    assert hier.level_bytes()["leaf"] == pytest.approx(
        2 * n_nodes * g * (n_nodes - 1) / n_nodes * S
    )
    assert hier.seconds < flat.seconds
