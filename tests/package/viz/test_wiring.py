"""collectives.viz.wiring: any Topology placed from its declared info, and a step's transfers
drawn along the routes collectives.time costs. Expected positions are worked out by hand from
the layout rules in the module docstring (ranks row-major over info.shape)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives import viz
from collectives.topology import Topology
from collectives.viz import wiring as vw


def _arrows(ax):
    return [p for p in ax.patches if isinstance(p, matplotlib.patches.FancyArrowPatch)]


def test_topology_arrows_follow_the_routes():
    s = cl.algorithms.direct_all_gather(3)
    ax = viz.draw_topology(cl.topology.switch(3, 1.0), step=0, schedule=s)
    assert len(_arrows(ax)) == 2 * s.n_transfers  # up-link and down-link of each transfer
    plt.close("all")


def test_one_arrow_per_shard_and_link():
    schedule = cl.algorithms.torus_all_gather((2, 3), concurrent=True)
    topology = cl.topology.torus((2, 3), 4.5e10, 1e-6)
    merged = 0
    for step in range(schedule.n_steps):
        ax = viz.draw_topology(topology, step=step, schedule=schedule, ax=plt.figure().gca())
        st = schedule.step(step)
        remote = np.flatnonzero(st.src != st.dst)
        pair, link = topology.paths(st.src[remote], st.dst[remote])
        expected = {(lk, int(st.src_chunk[remote[p]]) // 4) for p, lk in zip(pair, link)}
        assert len(_arrows(ax)) == len(expected)
        merged += len(pair) - len(expected)
        plt.close("all")
    assert merged > 0  # some link carries two pieces of one shard in a step


def test_a_ring_on_a_circle_clockwise_from_the_top():
    pos = vw.wiring_of(cl.topology.ring(4, 1.0)).positions
    # rank 0 at the top, then clockwise: right, bottom, left
    np.testing.assert_allclose(pos, [[0, 1], [1, 0], [0, -1], [-1, 0]], atol=1e-12)


def test_a_torus_is_a_grid_and_its_leading_axes_are_planes():
    pos = vw.wiring_of(cl.topology.torus((2, 3), 1.0)).positions
    # rank r = (row, col) row-major: x = col, y = -row
    np.testing.assert_array_equal(pos, [[0, 0], [1, 0], [2, 0], [0, -1], [1, -1], [2, -1]])
    lay = vw.wiring_of(cl.topology.torus((2, 3, 4), 1.0))
    # rank (i, j, k) = 12 i + 4 j + k: plane i side by side, 4 columns + a gap of 1.5
    for rank, (i, j, k) in [(0, (0, 0, 0)), (7, (0, 1, 3)), (12, (1, 0, 0)), (23, (1, 2, 3))]:
        np.testing.assert_array_equal(lay.positions[rank], [k + 5.5 * i, -j])
    assert [text for _, _, text in lay.panels] == ["axis 0 = 0", "axis 0 = 1"]


def test_wraparound_links_are_stubs_leaving_one_edge():
    t = cl.topology.torus((2, 3), 1.0)
    lay = vw.wiring_of(t)
    links = {(int(u), int(v)): i for i, (u, v) in enumerate(zip(t.link_src, t.link_dst))}
    # axis 1 (size 3) wraps: 2 -> 0 leaves rank 2 to the right, 0 -> 2 leaves rank 0 leftwards
    np.testing.assert_allclose(lay.stub[links[2, 0]], [0.45, 0])
    np.testing.assert_allclose(lay.stub[links[0, 2]], [-0.45, 0])
    np.testing.assert_allclose(lay.stub[links[0, 1]], [0, 0])
    # axis 0 has 2 chips: its two links are plain; 2 rows x 2 directions of wrap on axis 1
    assert np.count_nonzero(lay.stub.any(axis=1)) == 4
    mesh = vw.wiring_of(cl.topology.torus((3, 3), 1.0, wraparound=False))
    assert not mesh.stub.any()
    # 4x4x4: links along axis 0 join planes: arcs, except its wraps (diagonal stubs):
    # 16 lines x 2 directions of neighbour links x 3 gaps = 96 arcs, 16 x 2 wrap stubs
    cube = cl.topology.torus((4, 4, 4), 1.0)
    lay = vw.wiring_of(cube)
    assert lay.arc.sum() == 96
    wraps = lay.stub.any(axis=1) & (np.abs(lay.stub[:, 0]) == np.abs(lay.stub[:, 1]))
    assert wraps.sum() == 32


def test_a_cluster_is_drawn_tier_by_tier():
    small = cl.topology.cluster(2, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    lay = vw.wiring_of(small)
    pos = lay.positions
    # GPU (node, i) at x = node * (4 + 1.5) + i on row 0, labelled i
    np.testing.assert_array_equal(pos[:8, 0], [0, 1, 2, 3, 5.5, 6.5, 7.5, 8.5])
    assert lay.labels == ("0", "1", "2", "3") * 2
    # each NIC right above the GPU its PCIe link reaches; each NVSwitch under its node
    pcie = small.info.levels.index("pcie")
    for u, v, lv in zip(small.link_src, small.link_dst, small.link_level):
        if lv == pcie and u < 8:
            assert pos[v, 0] == pos[u, 0] and pos[v, 1] == 0.9
    nvswitch = np.flatnonzero((small.node_role == 2) & (small.node_tier == 0))
    np.testing.assert_allclose(pos[nvswitch], [[1.5, -1.2], [7.0, -1.2]])
    leaves = np.flatnonzero(small.node_tier == 1)
    spines = np.flatnonzero(small.node_tier == 2)
    assert (pos[leaves, 1] == 2.6).all() and (pos[spines, 1] == 4.4).all()
    # four rail leaves spread evenly across the GPUs (each serves both nodes)
    np.testing.assert_allclose(np.sort(pos[leaves, 0]), [0, 8.5 / 3, 17 / 3, 8.5])
    assert [name for _, name in lay.rows] == ["NVSwitch", "leaves", "spines"]


@pytest.mark.parametrize(
    "build",
    [
        lambda: cl.hardware.preset("dgx-h100"),
        lambda: cl.hardware.preset("superpod-h100", units=1),
        lambda: cl.hardware.preset("gb200-nvl72"),
        lambda: cl.hardware.preset("meta-roce-32k", zones=2, racks_per_zone=28, aggregators=4),
        lambda: cl.hardware.preset("tpu-v5e", shape=(4, 4), slices=2),
        lambda: cl.hardware.preset("tpu-v4", shape=(4, 4, 4)),
        lambda: cl.fabric.fat_tree(4, 1e9),
        lambda: cl.fabric.clos(8, 2, 1e9),
        lambda: cl.topology.chain(5, 1e9),
    ],
    ids=[
        "dgx",
        "superpod-su",
        "nvl72",
        "meta",
        "multislice",
        "v4-cube",
        "fat-tree",
        "clos",
        "chain",
    ],
)
def test_every_preset_gets_a_position_for_every_node(build):
    topology = build()
    pos = vw.wiring_of(topology).positions
    assert pos.shape == (topology.n_nodes, 2) and np.isfinite(pos).all()
    # no two nodes on the same spot
    assert len(np.unique(np.round(pos, 9), axis=0)) == topology.n_nodes


def test_a_multislice_draws_each_slice_as_a_panel():
    ms = cl.hardware.preset("tpu-v4", shape=(4, 4, 4), slices=2)
    lay = vw.wiring_of(ms)
    pos = lay.positions
    # slice 0 (ranks 0..63) left of slice 1 (64..127), each drawn as its cube's four planes
    assert pos[:64, 0].max() < pos[64:128, 0].min()
    np.testing.assert_array_equal(pos[64:128] - pos[64], pos[:64] - pos[0])
    # wraps of one cube: axes 1 and 2 in each plane (4 planes x 4 lines x 2 directions
    # each) and axis 0 between planes (16 lines x 2): 32 + 32 + 32 = 96, in both slices
    assert lay.stub.any(axis=1).sum() == 2 * 96
    # and the neighbour links between planes are arcs (16 lines x 2 directions x 3 gaps)
    assert lay.arc.sum() == 2 * 96
    # the DCN switches (one per chip position) in a row below the slices
    assert (pos[128:, 1] < pos[:128, 1].min()).all()
    assert [text for _, _, text in lay.panels] == ["dcn 0", "dcn 1"]


def test_switch_participants_run_on_the_switches_cost_time_uses():
    """NVLS on a DGX node: its switch participant is the node's NVSwitch (the first switch,
    as cl.time places it), and the step's crossings are the GPUs' NVLinks to and from it."""
    dgx = cl.hardware.preset("dgx-h100")
    nvls = cl.algorithms.nvls_all_reduce(8)
    nvswitch = int(dgx.switches[0])
    nvlink = dgx.info.levels.index("nvlink")
    for step in range(nvls.n_steps):
        link, chunk, src, dst = vw.step_crossings(nvls, dgx, step)
        assert len(link) and (dgx.link_level[link] == nvlink).all()
        assert set(src.tolist()) | set(dst.tolist()) <= set(range(8)) | {nvswitch}
        assert nvswitch in set(src.tolist()) | set(dst.tolist())
    ax = viz.draw_topology(dgx, 0, nvls, ax=plt.figure().gca(), levels=("nvlink",))
    # the participating switch is outlined in black
    outlined = [
        c
        for c in ax.collections
        if len(c.get_offsets()) == 1 and np.allclose(c.get_edgecolor()[0][:3], 0)
    ]
    assert len(outlined) == 1
    np.testing.assert_allclose(outlined[0].get_offsets()[0], vw.wiring_of(dgx).positions[nvswitch])
    plt.close("all")


def test_grouped_schedules_stay_in_their_groups():
    """An all-gather along axis 1 of a 2x3 torus runs in each row at once: every crossing
    joins two ranks of one row."""
    t = cl.topology.torus((2, 3), 1.0)
    s = cl.algorithms.torus_all_gather((2, 3), axes=[1])
    assert s.n_groups == 2
    for step in range(s.n_steps):
        _, _, src, dst = vw.step_crossings(s, t, step)
        assert (src // 3 == dst // 3).all()


def test_levels_hide_the_rest_of_the_wiring():
    dgx = cl.hardware.preset("dgx-h100")
    lay = vw.wiring_of(dgx, levels=("nvlink",))
    nvlink = dgx.info.levels.index("nvlink")
    np.testing.assert_array_equal(lay.hidden, dgx.link_level != nvlink)
    placed = np.flatnonzero(np.isfinite(lay.positions[:, 0]))
    assert placed.tolist() == list(range(8)) + [int(dgx.switches[0])]  # GPUs and NVSwitch
    assert [name for _, name in lay.rows] == ["NVSwitch"]
    with pytest.raises(cl.CollectivesError, match="no link level 'ici'"):
        vw.wiring_of(dgx, levels=("ici",))


def test_bad_topologies_are_refused():
    with pytest.raises(cl.CollectivesError, match="too many to draw"):
        vw.wiring_of(cl.topology.torus((64, 64), 1.0))
    with pytest.raises(cl.CollectivesError, match="Topology"):
        vw.wiring_of("ring")


def test_a_topology_with_no_declared_drawing_gets_a_spring_layout():
    # three endpoints and a switch, built by hand: family "custom"
    src, dst = [0, 1, 2, 3, 3, 3], [3, 3, 3, 0, 1, 2]
    t = Topology(
        3, src, dst, 1.0, 0.0, lambda s, d: (np.zeros(0, int), np.zeros(0, int)), n_switches=1
    )
    pos = vw.wiring_of(t).positions
    assert pos.shape == (4, 2) and np.isfinite(pos).all()
