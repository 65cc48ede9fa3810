"""collectives.viz.hardware: TPU slices, cubes, hop maps, a scalable unit and a small cluster,
drawn from the topology's links and declared info."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import hardware


def test_a_slice_draws_its_wraparound_stubs():
    # v5e 16x16 wraps both axes: one stub at each end of every row and column, 4 x 16 = 64
    slice_ = cl.hardware.preset("tpu-v5e", shape=(16, 16))
    ax, handles = hardware.draw_slice(slice_, ax=plt.figure().gca())
    wrap = [line for line in ax.lines if line.get_color() == hardware.COLOURS["wrap"]]
    assert len(wrap) == 64 and len(handles) == 2
    with pytest.raises(cl.CollectivesError, match="2-D"):
        hardware.draw_slice(cl.topology.ring(4, 1.0))
    plt.close("all")


def test_a_cube_has_a_stub_per_face_chip_and_axis():
    # a 4x4x4 block: 6 faces of 16 chips, one stub each
    _, stubs = hardware.draw_cube((4, 4, 4))
    assert stubs == 96
    plt.close("all")


def test_nic_rails_are_the_local_index_of_each_nics_gpu():
    small = cl.topology.cluster(3, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    rails = hardware.nic_rails(small)
    # 12 NICs; the NIC of GPU (node, i) is on rail i: rails 0..3, three NICs each
    assert len(rails) == 12 and sorted(rails.values()) == sorted(list(range(4)) * 3)
    assert hardware.nic_rails(cl.topology.ring(4, 1.0)) == {}


def test_draw_cluster_draws_each_flow_along_its_route():
    small = cl.topology.cluster(3, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    ax = hardware.draw_cluster(small, [(0, 5, "#D55E00")], ax=plt.figure().gca())
    flow = [line for line in ax.lines if line.get_color() == "#D55E00"]
    # one polyline through the route's nodes: GPU 0 and one more per link of the route
    assert len(flow) == 1 and len(flow[0].get_xdata()) == 1 + len(small.route(0, 5))
    labels = [t.get_text() for t in ax.texts]
    # 12 GPUs, each labelled once by its rank
    assert all(labels.count(str(r)) == 1 for r in range(12)) and "12" not in labels
    assert "NVSwitch" in labels and "spines" in labels
    with pytest.raises(cl.CollectivesError, match="cluster"):
        hardware.draw_cluster(cl.topology.torus((2, 2), 1.0))
    plt.close("all")


def test_a_scalable_unit_shows_its_rails_and_spines():
    su = cl.hardware.preset("superpod-h100", units=1)
    ax = hardware.draw_scalable_unit(su, nodes=(0, 1, 31), ax=plt.figure().gca())
    texts = [t.get_text() for t in ax.texts]
    # node numbers under the nodes, a gap between 1 and 31, then the 8 rail leaves (one per
    # GPU of a node) numbered 0..7 and the spines (the SU's tier-2 switches) named
    assert texts[:4] == ["⋯", "0", "1", "31"]
    assert texts[4:12] == [str(r) for r in range(8)]
    spines = int(np.count_nonzero(su.node_tier == 2))
    assert texts[12].startswith(f"{spines} spines")
    with pytest.raises(cl.CollectivesError, match="node numbers"):
        hardware.draw_scalable_unit(su, nodes=(32,))
    plt.close("all")


def test_hop_maps_label_every_cell():
    hops = np.arange(6).reshape(2, 3)
    ax = hardware.draw_hops(hops, ax=plt.figure().gca())
    assert sorted(t.get_text() for t in ax.texts) == [str(h) for h in range(6)]
    with pytest.raises(cl.CollectivesError, match="2-D"):
        hardware.draw_hops(np.arange(3))
    plt.close("all")
