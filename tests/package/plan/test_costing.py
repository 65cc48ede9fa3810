"""collectives/plan/costing.py: how a GPU fabric spreads a collective's flows (plain hashed
ECMP, Meta's 16 queue pairs with enhanced ECMP, adaptive routing), qp_timing against
cl.time and the fabric's max-min model."""

import pytest

import collectives as cl
from collectives.plan import Layout
from collectives.plan.costing import Coster, qp_timing

NIC = 50e9  # 400 Gb/s per GPU (Llama 3 paper, 3.3.1)


@pytest.fixture(scope="module")
def meta():
    # two pods of 28 racks of 16 GPUs, 1:7 above the pods (the capstone's cut-down cluster)
    return cl.hardware.preset("meta-roce-32k", zones=2, racks_per_zone=28, aggregators=4)


@pytest.fixture(scope="module")
def ring(meta):
    mesh = Layout(fsdp=112, tp=8).mesh()
    return mesh, mesh.collective(cl.algorithms.ring_all_gather(112), "fsdp")


def test_one_queue_pair_is_cl_time(meta, ring):
    mesh, schedule = ring
    direct = cl.time(schedule, meta, 2.2e8, placement=mesh.placement)
    one = qp_timing(schedule, meta, 2.2e8, placement=mesh.placement, qps=1)
    assert one.seconds == pytest.approx(direct.seconds, rel=1e-12)
    assert one.level_seconds() == pytest.approx(direct.level_seconds(), rel=1e-12)


def test_sixteen_queue_pairs_agree_with_the_fabric_model(meta, ring):
    # equal flows: the max-min step ends when the busiest link drains, as cl.time counts it
    mesh, schedule = ring
    mine = qp_timing(schedule, meta, 2.2e8, placement=mesh.placement, qps=16)
    flows = cl.fabric.collective_time(schedule, meta, 2.2e8, qps=16, hash_qp=True)
    assert mine.seconds == pytest.approx(flows, rel=1e-9)
    plain = cl.time(schedule, meta, 2.2e8, placement=mesh.placement).seconds
    # every GPU's one ring step sends 220 MB / 112 out of its own NIC: 111 of them at least
    # 111 / 112 x 220 MB / 50 GB/s; hashed uplinks collide, 16 QPs spread
    bound = 111 / 112 * 2.2e8 / NIC
    assert bound <= mine.seconds < plain
    with pytest.raises(cl.CollectivesError, match="needs a GPU cluster"):
        qp_timing(cl.algorithms.ring_all_gather(8), cl.topology.ring(8, 1e9), 1e6)


def test_the_schemes_on_a_hashed_fabric(meta):
    mesh = Layout(fsdp=112, tp=8).mesh()
    seconds = {
        e: Coster(meta, mesh, ecmp=e).cost("all_gather", ("fsdp",), 2.2e8).seconds
        for e in (None, "plain", "e-ecmp", "adaptive")
    }
    bound = 111 / 112 * 2.2e8 / NIC
    # as built = plain hashing; enhanced ECMP and adaptive routing reach the NIC bound here
    # (the bidirectional ring: half the bytes each way on every NIC)
    assert seconds[None] == seconds["plain"] > 2 * bound
    assert seconds["e-ecmp"] == pytest.approx(bound) and seconds["adaptive"] == pytest.approx(bound)
    assert (
        Coster(meta, mesh, ecmp="adaptive").cost("all_gather", ("fsdp",), 2.2e8).bottleneck_level
        == "leaf"
    )


def test_schemes_choose_nothing_on_a_torus_and_bad_input():
    tpu = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4))
    mesh = Layout(dp=64).mesh()
    base = Coster(tpu, mesh).cost("all_reduce", ("dp",), 1e8).seconds
    assert Coster(tpu, mesh, ecmp="e-ecmp").ecmp is None
    assert Coster(tpu, mesh, ecmp="adaptive").cost("all_reduce", ("dp",), 1e8).seconds == base
    with pytest.raises(cl.CollectivesError, match="ecmp must be one of"):
        Coster(tpu, mesh, ecmp="spray")
    with pytest.raises(cl.CollectivesError, match="qps must be an integer >= 1"):
        Coster(tpu, mesh, qps=0)


def test_plain_reroutes_an_adaptive_cluster_to_hashing():
    hashed = cl.hardware.preset("dgx-h100", nodes=4)
    sprayed = cl.hardware.preset("dgx-h100", nodes=4, routing="adaptive")
    mesh = Layout(dp=4, tp=8).mesh()

    def cost(cluster, ecmp):
        return Coster(cluster, mesh, ecmp=ecmp).cost("all_reduce", ("dp",), 1e9).seconds

    assert cost(sprayed, "plain") == cost(hashed, None)
    assert cost(hashed, "adaptive") == cost(sprayed, None)
