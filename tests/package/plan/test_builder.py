"""collectives/plan/builder.py: the cluster, its chip's numbers and the records a plan is
built from."""

import pytest

import collectives as cl
from collectives.plan import Layout
from collectives.plan.builder import RecordBuilder, chip_numbers, resolve_cluster
from collectives.plan.costing import Coster


@pytest.fixture(scope="module")
def dgx():
    return cl.hardware.preset("dgx-h100")  # one node, 8 GPUs


def test_a_record_is_costed_on_the_axes_that_split_the_work(dgx):
    mesh = Layout(tp=8).mesh()
    builder = RecordBuilder(Coster(dgx, mesh), mesh)
    builder.add(
        "tp activation all-reduce", "all_reduce", ("tp", "dp"), 2**20, 3, "forward", "forward"
    )
    (r,) = builder.records
    # dp has size 1 here: the collective runs over tp alone, one group of the 8 GPUs
    assert (r.purpose, r.collective, r.axis, r.group_size) == (
        "tp activation all-reduce",
        "all_reduce",
        "tp",
        8,
    )
    assert (r.nbytes, r.count, r.phase, r.hidden_behind) == (1048576.0, 3, "forward", "forward")
    # a ring all-reduce on the node's NVSwitch (450 GB/s per direction, DGX H100 guide, no
    # latency modelled): 2 (n-1)/n S / B = 1.75 x 1,048,576 / 450e9 = 4.0778 us each
    assert r.algorithm == "ring_all_reduce"
    assert r.seconds == pytest.approx(1.75 * 1048576 / 450e9, rel=1e-12)
    assert r.bottleneck_level == "nvlink"


def test_nothing_is_recorded_over_axes_of_size_one_or_zero_times(dgx):
    mesh = Layout(tp=8).mesh()
    builder = RecordBuilder(Coster(dgx, mesh), mesh)
    builder.add("dp grad all-reduce", "all_reduce", ("dp", "fsdp"), 2**20, 1, "backward")
    builder.add("tp activation all-reduce", "all_reduce", ("tp",), 2**20, 0, "forward")
    assert builder.records == []


def test_clusters_and_chip_numbers(dgx):
    assert resolve_cluster(dgx) is dgx
    assert resolve_cluster("dgx-h100").n_ranks == 8
    with pytest.raises(cl.CollectivesError, match="cluster must be a Topology"):
        resolve_cluster(8)
    # H100 SXM from its hardware record: 989 TFLOP/s dense BF16, 80 GB HBM3 at 3.35 TB/s
    assert chip_numbers(dgx, None, None) == (9.89e14, 80e9, 3.35e12)
    assert chip_numbers(dgx, 1e15, 40e9, 2e12) == (1e15, 40e9, 2e12)  # given: kept
    ring = cl.topology.ring(4, 1e9)  # no record
    assert chip_numbers(ring, 1e12, None) == (1e12, None, None)
    with pytest.raises(cl.CollectivesError, match="no hardware record"):
        chip_numbers(ring, None, None)


def test_step_keeps_its_old_name_for_resolve_cluster():
    from collectives.plan import step

    assert step.resolve_cluster is resolve_cluster
