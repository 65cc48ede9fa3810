"""NCCL's tuner latency model (collectives.hardware.nccl_tuner), against sums worked by hand from
the constants of NCCL 2.30.7 src/graph/tuning.cc."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectives.errors import CollectivesError
from collectives.hardware.nccl_tuner import nccl_allreduce_latency


@pytest.mark.parametrize(
    "algo, ranks, nodes, proto, expected",
    [
        # ring LL128, 1024 GPUs on 128 nodes: 14 base + (2046 - 254) steps x max(1.9, 1.0)
        # + 254 x 4.0 = 14 + 3404.8 + 1016 = 4434.8 us
        ("ring", 1024, 128, "LL128", 4434.8),
        # tree LL128: 14 + 2 x (7 x 1.25 + 7 x 8.5) = 14 + 2 x 68.25 = 150.5 us
        ("tree", 1024, 128, "LL128", 150.5),
        # ring LL: 6.6 + 1792 x max(0.6, 1.0) + 254 x 2.7 = 6.6 + 1792 + 685.8 = 2484.4 us
        ("ring", 1024, 128, "LL", 2484.4),
        # tree LL, 32768 GPUs on 4096 nodes: 6.8 + 2 x (7 x 0.6 + 12 x 5.0) = 6.8 + 128.4 = 135.2 us
        ("tree", 32768, 4096, "LL", 135.2),
        # one node, ring LL128: 14 + 14 steps x 1.9 = 40.6 us (no network step)
        ("ring", 8, 1, "LL128", 40.6),
    ],
)
def test_worked_cases(algo, ranks, nodes, proto, expected):
    assert nccl_allreduce_latency(algo, ranks, nodes, proto) == pytest.approx(expected)


@given(st.integers(1, 12), st.integers(1, 8))
def test_ring_grows_by_one_network_step_pair_per_node(log_nodes, per_node):
    # one more node adds `per_node` GPUs: 2 (per_node - 1) NVLink steps and 2 network steps
    nodes = log_nodes
    one = nccl_allreduce_latency("ring", nodes * per_node, nodes)
    more = nccl_allreduce_latency("ring", (nodes + 1) * per_node, nodes + 1)
    assert more - one == pytest.approx(2 * (per_node - 1) * 1.9 + 2 * 4.0)


@pytest.mark.parametrize(
    "args",
    [
        ("butterfly", 8, 1),
        ("ring", 8, 1, "Simple"),
        ("ring", 12, 8),
        ("tree", 8, 0),
        ("ring", 2.5, 1),
    ],
)
def test_bad_input(args):
    with pytest.raises(CollectivesError):
        nccl_allreduce_latency(*args)
