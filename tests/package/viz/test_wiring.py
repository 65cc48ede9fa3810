"""collectives.viz.wiring: any Topology placed from its declared info, and a step's transfers
drawn along the routes collectives.time costs. Expected positions are worked out by hand from
the layout rules in the module docstring (ranks row-major over info.shape)."""

import math

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
    # GPU (node, i) at x = node * (4 + 1.5) + i on row 0, labelled by its rank 4 * node + i
    # (8 GPUs: a small cluster); in a cluster of more than 16, by i
    np.testing.assert_array_equal(pos[:8, 0], [0, 1, 2, 3, 5.5, 6.5, 7.5, 8.5])
    assert lay.labels == tuple(str(r) for r in range(8))
    bigger = cl.topology.cluster(5, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    assert vw.wiring_of(bigger).labels == ("0", "1", "2", "3") * 5
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


def test_a_window_of_a_cluster_too_large_to_draw_whole_is_drawn():
    meta = cl.hardware.preset("meta-roce-24k")  # 53,913 nodes
    assert meta.n_nodes > vw.MAX_NODES
    with pytest.raises(cl.CollectivesError, match="too many to draw"):
        vw.wiring_of(meta)
    lay = vw.wiring_of(meta, nodes=(0, 1))  # the first rack's two servers
    placed = np.flatnonzero(np.isfinite(lay.positions[:, 0]))
    gpus = placed[placed < meta.n_ranks]
    assert gpus.tolist() == list(range(16))
    # above them: their rack switch, the pod's 18 CTSWs and the 9 ATSWs, nothing else
    tiers = meta.node_tier[placed[np.isin(placed, meta.switches)]]
    assert np.bincount(tiers)[1:].tolist() == [1, 18, 9]
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


# --- a switch drawn as its chips, a window of a cluster, merged arrows, switch actions ------


def test_the_nvswitch_is_drawn_as_its_four_chips():
    dgx = cl.hardware.preset("dgx-h100")
    lay = vw.wiring_of(dgx, ("nvlink", "pcie"), chips=True)
    (split,) = lay.chips
    assert split.switch == int(dgx.switches[0]) and split.links == (5, 4, 4, 5)
    # GPUs at x = 0..7: the node's width of 8 cut in 4, a chip at each quarter's middle,
    # 0.9 below the NVSwitch's row at -1.2
    np.testing.assert_allclose(
        split.positions, [[0.5, -2.1], [2.5, -2.1], [4.5, -2.1], [6.5, -2.1]]
    )
    np.testing.assert_allclose(split.shares, [5 / 18, 4 / 18, 4 / 18, 5 / 18])
    assert "NVSwitch chips" in [name for _, name in lay.rows]
    ax = viz.draw_topology(dgx, layout=lay, ax=plt.figure().gca())
    # one line from every GPU to every chip (8 x 4), each chip labelled with its links
    chip_lines = [
        line
        for line in ax.lines
        if any(np.allclose(line.get_xydata()[-1], xy) for xy in split.positions)
    ]
    assert len(chip_lines) == 32
    on_chips = [
        t.get_text()
        for t in ax.texts
        if any(np.allclose(t.get_position(), xy) for xy in split.positions)
    ]
    assert on_chips == ["5", "4", "4", "5"]
    plt.close("all")


def test_a_transfer_through_the_chips_is_drawn_through_every_chip():
    dgx = cl.hardware.preset("dgx-h100")
    lay = vw.wiring_of(dgx, ("nvlink",), chips=(5, 4, 4, 5))
    ring = cl.algorithms.ring_all_gather(8)
    ax = plt.figure().gca()
    viz.draw_topology(dgx, 0, ring, ax=ax, layout=lay)
    # 8 transfers, each GPU -> NVSwitch -> GPU: 2 links x 4 chips = 8 arrows each; only the
    # way out of the chips has a head (the transfer passes through them)
    arrows = _arrows(ax)
    assert len(arrows) == 64
    styles = [type(a.get_arrowstyle()).__name__ for a in arrows]
    assert styles.count("CurveFilledB") == 32
    # a chip's arrows are as thick as its share of the links: 5/18 against 4/18
    widths = sorted({round(a.get_linewidth(), 6) for a in arrows})
    assert len(widths) == 2 and math.isclose(widths[1] / widths[0], 5 / 4, rel_tol=1e-5)
    plt.close("all")


def test_chips_need_an_nvlink_switch_and_link_counts():
    with pytest.raises(cl.CollectivesError, match="no NVLink switch"):
        vw.wiring_of(cl.topology.ring(4, 1.0), chips=(1, 1))
    with pytest.raises(cl.CollectivesError, match="positive whole link counts"):
        vw.wiring_of(cl.hardware.preset("dgx-h100"), chips=(5, 0))
    with pytest.raises(cl.CollectivesError, match="chips=True: no NVSwitch chips recorded"):
        vw.wiring_of(cl.hardware.preset("dgx-b200"), chips=True)


def test_a_window_draws_some_nodes_of_a_cluster():
    su = cl.hardware.preset("superpod-h100", units=1)
    lay = vw.wiring_of(su, nodes=(0, 1, 2, 31))
    pos = lay.positions
    gpus = np.flatnonzero(np.isfinite(pos[: su.n_ranks, 0]))
    assert gpus.tolist() == [n * 8 + i for n in (0, 1, 2, 31) for i in range(8)]
    # nodes side by side 8 + 1.5 apart, 1.2 more where the numbers skip (2 -> 31)
    np.testing.assert_allclose(pos[[0, 8, 16, 248], 0], [0, 9.5, 19, 29.7])
    # their 4 NVSwitches and 32 NICs, the unit's 8 rail leaves and its 4 spines
    placed = np.isfinite(pos[:, 0])
    assert placed[su.n_ranks :].sum() == 32 + 4 + 8 + 4
    assert [t for _, _, t in lay.panels] == ["node 0", "node 1", "node 2", "⋯", "node 31"]
    # a transfer from a node not drawn is left out
    ring = cl.algorithms.ring_all_gather(su.n_ranks)
    ax = viz.draw_topology(su, 0, ring, ax=plt.figure().gca(), layout=lay)
    link, *_ = vw.step_crossings(ring, su, 0)
    shown = np.isfinite(pos[su.link_src[link], 0]) & np.isfinite(pos[su.link_dst[link], 0])
    assert len(_arrows(ax)) == shown.sum() < len(link)
    plt.close("all")


def test_a_window_needs_a_cluster_and_its_node_numbers():
    su = cl.hardware.preset("superpod-h100", units=1)
    with pytest.raises(cl.CollectivesError, match=r"distinct node numbers 0\.\.31"):
        vw.wiring_of(su, nodes=(0, 32))
    with pytest.raises(cl.CollectivesError, match="not a cluster of GPU nodes"):
        vw.wiring_of(cl.topology.torus((2, 3), 1.0), nodes=(0,))


def test_switch_actions_name_a_reduction_and_a_multicast():
    # NVLS on 4 GPUs (cl.algorithms.nvls_all_reduce): step 0 the switch reduces every
    # slice (multimem.ld_reduce), 1 returns slice c to GPU c, 2 GPU c stores it, 3 the
    # switch multicasts each slice to all 4 GPUs
    switch = cl.topology.switch(4, 1.0)
    nvls = cl.algorithms.nvls_all_reduce(4)
    actions = [vw.switch_actions(nvls, switch, k) for k in range(4)]
    assert actions == [{4: "Σ"}, {4: ""}, {4: ""}, {4: "1→4"}]
    assert vw.switch_actions(cl.algorithms.ring_all_gather(4), switch, 0) == {}
    ax = viz.draw_topology(switch, 3, nvls, ax=plt.figure().gca())
    assert "1→4" in [t.get_text() for t in ax.texts]
    plt.close("all")


def test_arrows_past_max_fan_merge_into_one_with_their_count():
    # direct all-to-all on 4 ranks of a switch: each up-link carries 3 chunks, each
    # down-link 3; 12 transfers x 2 links = 24 arrows, or one per link (8) past a fan of 2
    switch = cl.topology.switch(4, 1.0)
    a2a = cl.algorithms.direct_all_to_all(4)
    ax = viz.draw_topology(switch, 0, a2a, ax=plt.figure().gca())
    assert len(_arrows(ax)) == 24
    ax = viz.draw_topology(
        switch, 0, a2a, ax=plt.figure().gca(), layout=vw.wiring_of(switch, max_fan=2)
    )
    assert len(_arrows(ax)) == 8
    assert [t.get_text() for t in ax.texts].count("×3") == 8
    with pytest.raises(cl.CollectivesError, match="max_fan must be an integer >= 1"):
        vw.wiring_of(switch, max_fan=-1)
    plt.close("all")


def test_planes_per_row_put_a_cube_in_a_square():
    # 4 x 4 x 4 with two planes to a row: plane i at column i % 2, row i // 2 of planes;
    # a plane is 4 wide + a gap of 1.5, 4 high + a gap of 1.5 + 0.6 for its caption
    lay = vw.wiring_of(cl.topology.torus((4, 4, 4), 1.0), panels_per_row=2, radius=0.22)
    for rank, (i, j, k) in [(0, (0, 0, 0)), (19, (1, 0, 3)), (32, (2, 0, 0)), (63, (3, 3, 3))]:
        np.testing.assert_array_equal(lay.positions[rank], [k + 5.5 * (i % 2), -j - 6.1 * (i // 2)])
    assert lay.radius == 0.22
    with pytest.raises(cl.CollectivesError):
        vw.wiring_of(cl.topology.torus((4, 4, 4), 1.0), panels_per_row=0)
    with pytest.raises(cl.CollectivesError):
        vw.wiring_of(cl.topology.torus((4, 4), 1.0), radius=0.8)


def test_panel_captions_name_the_slices_and_must_match_them():
    ms = cl.hardware.preset("tpu-v5e", shape=(2, 2), slices=3)
    lay = vw.wiring_of(ms, panel_captions=["slice 0", "slice 1", "slice 2"])
    assert [text for _, _, text in lay.panels] == ["slice 0", "slice 1", "slice 2"]
    with pytest.raises(cl.CollectivesError, match="3 panels"):
        vw.wiring_of(ms, panel_captions=["a", "b"])


def test_the_links_drawn_in_a_step_are_the_links_time_loads():
    """The 4 x 4 x 4 cube's all-gather over axes 1 and 2 at once: summed over the steps, the
    shards drawn on each link times a shard's bytes are the link's bytes in cl.time, and
    every step draws one arrow per (link, shard) pair it crosses."""
    cube = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4))
    schedule = cl.algorithms.torus_all_gather((4, 4, 4), axes=(1, 2), concurrent=True)
    nbytes = 64e6
    timing = cl.time(schedule, cube, nbytes)
    lay = vw.wiring_of(cube, panels_per_row=2)
    carried = np.zeros(cube.n_links)
    for step in range(schedule.n_steps):
        link, chunk, _, _ = vw.step_crossings(schedule, cube, step)
        np.add.at(carried, link, nbytes / schedule.n_chunks)
        ax = plt.figure().gca()
        vw.draw_wiring(cube, ax=ax, layout=lay)
        drawn = vw.draw_transfers(schedule, cube, step, ax, layout=lay)
        assert drawn == len(np.unique(np.stack([link, chunk // 4], axis=1), axis=0))
        plt.close("all")
    np.testing.assert_allclose(carried, timing.link_bytes)
    # a chip receives the other 15 chips' 4 MB shards, 60 MB, evenly over its 4 in-plane
    # links: 15 MB on each
    assert math.isclose(carried.max(), 15e6)
    # no link between planes (axis 0) is used
    src, dst = cube.link_src, cube.link_dst
    between = (src // 16) != (dst // 16)
    assert carried[between].sum() == 0


def test_a_bridged_transfer_is_one_dashed_arc_end_to_end():
    """A multislice drawn with its ICI links only: a DCN step's transfers cross the undrawn
    DCN switch; with bridge=True each is one arc from chip c of one slice to chip c of the
    next (after the reduce-scatter each chip owns 24 / 4 = 6 chunks, and a step of the DCN
    ring all-reduce of 3 sends a third of them: 12 chips x 2 chunks = 24 arcs), without it
    they are left out."""
    ms = cl.hardware.preset("tpu-v5e", shape=(2, 2), slices=3)
    inner = cl.algorithms.torus_reduce_scatter((2, 2), wraparound=False)
    schedule = cl.algorithms.hierarchical_all_reduce(inner, cl.algorithms.ring_all_reduce(3))
    dcn_step = 2  # after the two ICI reduce-scatter steps
    _, _, src, dst = vw.step_crossings(schedule, ms, dcn_step)
    assert ((src % 4) == (dst % 4)).all() and ((dst // 4 - src // 4) % 3 == 1).all()
    bridged = vw.wiring_of(ms, ("ici",), bridge=True)
    ax = plt.figure().gca()
    vw.draw_wiring(ms, ax=ax, layout=bridged)
    assert vw.draw_transfers(schedule, ms, dcn_step, ax, layout=bridged) == 24
    arcs = _arrows(ax)
    assert len(arcs) == 24 and all(a.get_linestyle() != "-" for a in arcs)
    chips = bridged.positions[: ms.n_ranks]

    def nearest(xy):
        return int(np.argmin(np.hypot(*(chips - xy).T)))

    ax.figure.canvas.draw()
    ends = set()
    for a in arcs:  # the arc's path starts at its source chip and ends at its destination
        path = a.get_path().vertices
        ends.add((nearest(path[0]), nearest(path[-3])))  # the last three: the head
    assert ends == {(int(a), int(b)) for a, b in zip(src, dst)}
    plain = vw.wiring_of(ms, ("ici",))
    ax = plt.figure().gca()
    vw.draw_wiring(ms, ax=ax, layout=plain)
    assert vw.draw_transfers(schedule, ms, dcn_step, ax, layout=plain) == 0
    plt.close("all")
