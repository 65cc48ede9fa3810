"""collectives.grading.tasks.cluster_collectives (earlier collectives.grading.clusters): the
package's answers to the notebook on GPU clusters (exercises/source/cluster_collectives), and
the check of a placement of a mesh.

Values are derived by hand where the model allows it (DGX H100: NVLink 450 GB/s per GPU and
direction, a NIC 50 GB/s, latencies 0 unless given); the pipeline test
(tests/course/test_grading_pipeline.py -k cluster_collectives) runs them end to end through
nbgrader.
"""

import importlib

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.analytic import ring_all_reduce
from collectives.grading import check_choice, check_reference, recheck
from collectives.grading.tasks import cluster_collectives as clusters

NVLINK, NIC = 450e9, 50e9
GIB = 2**30
#: one step of a shard S/8 over NVLink, and the 8 shards of a 1 GiB buffer
A = GIB / 8 / NVLINK


# ---- Task 1: the levels of the hierarchical all-reduce ---------------------------------------


@pytest.mark.parametrize(
    "n, nbytes", [(1, GIB), (2, GIB), (4, GIB), (5, 1e9), (16, 123456789.0), (64, 2**20)]
)
def test_level_seconds_are_the_two_rings(n, nbytes):
    # NVLink: reduce-scatter and all-gather over the 8 GPUs of a node, 2 x 7 steps of S/8;
    # the NICs: a ring all-reduce of the shard S/8 over the N GPUs of a rail, 2(N - 1) steps
    # of S/(8N); 0 for one node, where nothing leaves it
    nvlink = clusters.hierarchical_level_seconds(n, nbytes, "nvlink")
    nic = clusters.hierarchical_level_seconds(n, nbytes, "nic")
    assert nvlink == pytest.approx(14 * nbytes / 8 / NVLINK, rel=1e-12)
    assert nic == pytest.approx(2 * (n - 1) * nbytes / (8 * n) / NIC, rel=1e-12, abs=0)
    assert nvlink == pytest.approx(
        ring_all_reduce(8, nbytes, alpha=0.0, bandwidth=NVLINK), rel=1e-12
    )
    assert nic == pytest.approx(
        ring_all_reduce(n, nbytes / 8, alpha=0.0, bandwidth=NIC), rel=1e-12, abs=0
    )


def test_level_seconds_of_the_notebooks_example():
    # 14 x 2**27 / 450e9 = 4.176 ms, the notebook's example
    assert clusters.hierarchical_level_seconds(4, GIB, "nvlink") == pytest.approx(
        4.17566e-3, rel=1e-5
    )
    with pytest.raises(GradingError, match="level must be 'nvlink' or 'nic', got 'leaf'"):
        clusters.hierarchical_level_seconds(4, GIB, "leaf")


@pytest.mark.parametrize("n, answer", [(1, "nvlink"), (4, "nvlink"), (5, "nic"), (64, "nic")])
def test_the_nics_bound_from_five_nodes_on(n, answer):
    # 2 (N-1)/N (S/8) / 50e9 > 2 (7/8) S / 450e9 when (N-1)/N > 7/9, i.e. N > 4.5, whatever S
    for nbytes in (2**20, 1e9, 1e10):
        assert clusters.hierarchical_bottleneck(n, nbytes) == answer


def test_levels_that_tie_raise(monkeypatch):
    monkeypatch.setattr(clusters, "_levels", lambda n, s: {"nvlink": 1.0, "nic": 1.0 + 1e-9})
    with pytest.raises(GradingError, match=r"both levels take .* \(a bug in the test\)"):
        clusters.hierarchical_bottleneck(4, GIB)


# ---- Task 2: pipelining ----------------------------------------------------------------------


def test_pipelined_seconds_by_hand():
    b = GIB / 16 / NIC  # one rail step on 2 nodes: S/(8N) = 2**26 bytes
    # one segment: the levels one after the other, 14 NVLink steps and 2 rail steps
    assert clusters.pipelined_hierarchical_seconds(2, GIB, 1) == pytest.approx(
        14 * A + 2 * b, rel=1e-12
    )
    # 3 segments (1/3 of the bytes each) over the 16 original steps, 18 steps in all: the
    # NVLink-only steps carry 1, 2, 3 x 5, (the rail phase), 3 x 5, 2, 1 segments (12 A in
    # all); the 4 steps with a rail segment are bounded by the NICs (b = 4.5 A), with 1, 2, 2
    # and 1 rail segments: 2 b
    assert clusters.pipelined_hierarchical_seconds(2, GIB, 3) == pytest.approx(
        12 * A + 2 * b, rel=1e-12
    )
    # 2 segments: 1, 2 x 6 NVLink steps each side, 1/2 + 1 + 1/2 of b in the middle
    assert clusters.pipelined_hierarchical_seconds(2, GIB, 2) == pytest.approx(
        13 * A + 2 * b, rel=1e-12
    )
    # one node has only NVLink steps: every segment loads the same links, whatever k
    for k in (1, 4, 64):
        assert clusters.pipelined_hierarchical_seconds(1, GIB, k) == pytest.approx(
            14 * A, rel=1e-12
        )


def test_pipelined_seconds_is_cl_time_of_the_pipelined_schedule():
    schedule = cl.transforms.pipelined(cl.algorithms.two_level_ring_all_reduce(4, 8), 64)
    topology = cl.hardware.preset("dgx-h100", nodes=4)
    assert (
        clusters.pipelined_hierarchical_seconds(4, GIB, 64)
        == cl.time(schedule, topology, GIB).seconds
    )
    # the notebook's example: about 4.462 ms
    assert clusters.pipelined_hierarchical_seconds(4, GIB, 64) == pytest.approx(4.462e-3, rel=1e-3)


def test_segments_needed():
    # one node: one segment already takes the slower (the only) level's time
    assert clusters.hierarchical_segments_needed(1, GIB, 0.05) == 1
    # 2 nodes: the slower level is NVLink, 14 A; 3 segments take 21 A = 1.5 x 14 A (above),
    # 2 segments 22 A: within 51 % from 3 segments on
    assert clusters.hierarchical_segments_needed(2, GIB, 0.51) == 3
    # within 5 %: the fewest k, so k - 1 is above the bound
    k = clusters.hierarchical_segments_needed(2, GIB, 0.05)
    bound = 1.05 * 14 * A
    assert clusters.pipelined_hierarchical_seconds(2, GIB, k) <= bound
    assert clusters.pipelined_hierarchical_seconds(2, GIB, k - 1) > bound
    assert k == 11
    # the notebook's example
    assert clusters.hierarchical_segments_needed(4, GIB, 0.05) == 88


def test_a_count_at_the_bound_or_too_many_segments_raise():
    # 3 segments take exactly 1.5 times the slower level (above): on the boundary
    with pytest.raises(GradingError, match=r"3 segments take .* at the bound"):
        clusters.hierarchical_segments_needed(2, GIB, 0.5)
    with pytest.raises(GradingError, match="more than 5 segments needed"):
        clusters.hierarchical_segments_needed(2, GIB, 0.05, limit=5)


# ---- Task 3: placing a mesh ------------------------------------------------------------------


def test_rail_placement():
    # TP group g of Mesh(axes).groups("tp") on node g, TP index j on local GPU j
    assert clusters.rail_placement({"tp": 2, "dp": 2}) == [0, 8, 1, 9]  # the notebook's
    assert clusters.rail_placement({"dp": 2, "tp": 2}) == [0, 1, 8, 9]
    assert clusters.rail_placement({"dp": 4, "tp": 8}) == list(range(32))
    assert clusters.rail_placement({"pp": 2, "dp": 2, "tp": 8}) == list(range(32))
    # tp first: mesh rank t * 4 + d is TP index t of TP group d, on node d
    assert clusters.rail_placement({"tp": 8, "dp": 4}) == [
        8 * d + t for t in range(8) for d in range(4)
    ]
    with pytest.raises(GradingError, match="does not fit in a node"):
        clusters.rail_placement({"tp": 16, "dp": 2})


@pytest.mark.parametrize(
    "axes, n_nodes",
    [
        ({"dp": 4, "tp": 8}, 4),
        ({"tp": 8, "dp": 4}, 4),
        ({"tp": 4, "dp": 4}, 4),
        ({"dp": 3, "tp": 4}, 4),
        ({"tp": 8, "pp": 2, "dp": 2}, 4),
        ({"tp": 2, "dp": 8}, 8),
    ],
)
def test_the_rail_placement_costs_the_two_rings(axes, n_nodes):
    # every TP ring on NVLink, every DP ring on its GPUs' own NICs: 2(n-1)/n S / B each
    tp, dp = axes["tp"], axes["dp"]
    rules = 128 * 2 * (tp - 1) / tp * 2**25 / NVLINK + 2 * (dp - 1) / dp * GIB / NIC
    placement = clusters.rail_placement(axes)
    assert clusters.mesh_step_seconds(axes, placement, n_nodes, 128, 2**25, GIB) == pytest.approx(
        rules, rel=1e-12
    )
    assert clusters.placement_slowdown(axes, placement, n_nodes, 128, 2**25, GIB) == pytest.approx(
        1.0, rel=1e-12
    )
    assert clusters.check_placement(
        placement, "p", axes, n_nodes, 128, 2**25, GIB
    ) == pytest.approx(1.0, rel=1e-12)


def test_other_placements_that_keep_the_rules_pass():
    axes = {"dp": 4, "tp": 8}
    # nodes in another order, and the TP ranks of every node in another order: the same links
    placement = [8 * (3 - d) + (7 - t) for d in range(4) for t in range(8)]
    assert clusters.check_placement(placement, "p", axes, 4, 128, 2**25, GIB) == pytest.approx(
        1.0, rel=1e-12
    )
    # a numpy array of numpy ints, on more nodes than needed
    placement = np.array([8 * (d + 2) + t for d in range(4) for t in range(8)])
    assert clusters.check_placement(placement, "p", axes, 8, 128, 2**25, GIB) == pytest.approx(
        1.0, rel=1e-12
    )


def test_a_placement_that_breaks_a_rule_fails_with_both_times():
    axes = {"tp": 8, "dp": 4}
    what = "mesh_placement({'tp': 8, 'dp': 4}, 4)"
    # rank order: TP group d on GPUs d, d + 4, ..., d + 28, two per node
    with pytest.raises(AssertionError) as info:
        clusters.check_placement(list(range(32)), what, axes, 4, 128, 2**25, GIB)
    message = str(info.value)
    assert message.startswith(
        f"{what}: the TP group of mesh ranks [0, 4, 8, 12, 16, 20, 24, 28] is on GPUs [0, 4, 8, "
        "12, 16, 20, 24, 28], which span nodes [0, 1, 2, 3]; by cl.time its step (128 TP "
        "all-reduces of 33554432 bytes, one DP all-reduce of 1073741824 bytes) takes "
    )
    best = 128 * 1.75 * 2**25 / NVLINK + 1.5 * GIB / NIC  # 48.9 ms
    assert message.endswith(
        f" the {best!r} s with every TP group in one node and every DP group on one rail"
    )
    assert clusters.placement_slowdown(axes, list(range(32)), 4, 128, 2**25, GIB) > 2


def test_a_placement_as_fast_that_breaks_a_rule_fails():
    # rank order of 3 x 4: TP groups in nodes 0 and 1, DP group 0 on GPUs 0, 4, 8: rails 0 and
    # 4; a ring step from GPU 4 to GPU 8 climbs to a spine, as fast as along a rail here
    axes = {"dp": 3, "tp": 4}
    with pytest.raises(
        AssertionError,
        match=r"^p: the DP group of mesh ranks \[0, 4, 8\] is on "
        r"GPUs \[0, 4, 8\], which span rails \[0, 4\]; its "
        "step is as fast, by cl.time, but the task asks "
        "for both rules$",
    ):
        clusters.check_placement(list(range(12)), "p", axes, 4, 128, 2**25, GIB)


@pytest.mark.parametrize(
    "placement, error, text",
    [
        (
            None,
            GradingError,
            "p should be a list of GPUs (ints), one per mesh rank, but it is None",
        ),
        (
            "0, 8, 1, 9",
            GradingError,
            "p should be a list of GPUs (ints), one per mesh rank, but it "
            "is the string '0, 8, 1, 9'",
        ),
        ([0, 8, 1], GradingError, "p is a list of 3 GPUs; the mesh has 4 ranks"),
        (
            [0, 8.0, 1, 9],
            GradingError,
            "p[1] is a float (8.0); expected an int, the GPU node * 8 + "
            "local (use // rather than /, or int(...))",
        ),
        ([0, True, 1, 9], GradingError, "p[1] is a bool (True); expected an int"),
        (
            [0, 8, 1, 16],
            AssertionError,
            "p puts mesh rank 3 on 16, which is not a GPU of the 2 nodes (0 to 15)",
        ),
        ([0, 8, 0, 9], AssertionError, "p puts mesh ranks 0 and 2 on GPU 0"),
    ],
)
def test_the_form_of_a_placement(placement, error, text):
    with pytest.raises(error) as info:
        clusters.check_placement(placement, "p", {"tp": 2, "dp": 2}, 2, 128, 2**25, GIB)
    assert str(info.value).startswith(text)


def test_misplacement_ratio_by_hand():
    # each group's ring on links of its own: swapped, TP rings on the NICs and DP rings on
    # NVLink; right, the other way round
    for dp, tp, n_tp, tp_bytes, dp_bytes in (
        (8, 8, 128, 2**25, 1.75e9),
        (3, 5, 7, 3e7, 2e8),
        (8, 2, 96, 2**26, 5e9),
    ):
        tp_sent = n_tp * 2 * (tp - 1) / tp * tp_bytes
        dp_sent = 2 * (dp - 1) / dp * dp_bytes
        ratio = (tp_sent / NIC + dp_sent / NVLINK) / (tp_sent / NVLINK + dp_sent / NIC)
        assert clusters.misplacement_ratio(dp, tp, n_tp, tp_bytes, dp_bytes) == pytest.approx(
            ratio, rel=1e-12
        )
    # the notebook's example
    assert clusters.misplacement_ratio(8, 8, 128, 2**25, 1.75e9) == pytest.approx(2.016, rel=1e-3)


def test_the_answers_do_not_depend_on_the_routing():
    # the tasks cost on the preset's default, hashed ECMP; every schedule and layout they cost
    # stays inside nodes or on one rail's leaf of one scalable unit, so InfiniBand's routes
    # ("dmodk", "adaptive") give the same times: by hand, the two rings of each layout on
    # links of their own, as in test_misplacement_ratio_by_hand
    swapped = [8 * t + d for d in range(8) for t in range(8)]
    right = [8 * d + t for d in range(8) for t in range(8)]
    axes = {"dp": 8, "tp": 8}
    for routing in ("hash", "dmodk", "adaptive"):
        topo = cl.hardware.preset("dgx-h100", nodes=8, routing=routing)
        t = cl.time(cl.algorithms.two_level_ring_all_reduce(8, 8), topo, GIB).level_seconds()
        # NVLink: 2 x 7 shards of S/8; the rail ring: 2 x 7/8 of the shard S/8 per NIC
        assert t["nvlink"] == pytest.approx(2 * 7 * A)
        assert t["leaf"] == pytest.approx(2 * 7 / 8 * GIB / 8 / NIC)
        for placement, tp_link, dp_link in ((swapped, NIC, NVLINK), (right, NVLINK, NIC)):
            mesh = cl.Mesh(axes, devices=placement)
            for axis, link in (("tp", tp_link), ("dp", dp_link)):
                ring = mesh.collective(cl.algorithms.ring_all_reduce(8), axis)
                seconds = cl.time(ring, topo, GIB, placement=mesh.placement).seconds
                assert seconds == pytest.approx(2 * 7 / 8 * GIB / link), (routing, axis)


# ---- Task 4: SHARP or a ring along the rails -------------------------------------------------


@pytest.mark.parametrize(
    "n, nbytes, latency, k, answer",
    [
        # ring 14 (2 us + 1e7/64/50e9) = 71.75 us; SHARP 2 (1 us + 1e7/8/50e9) = 52 us
        (8, 1e7, 1e-6, 1, "sharp"),
        # ring 14 (2 us + 312.5 us) = 4.403 ms; SHARP 2 (1 us + 2.5 ms) = 5.002 ms
        (8, 1e9, 1e-6, 1, "ring"),
        # SHARP in 16 segments: 17 (1 us + 156.25 us) = 2.673 ms
        (8, 1e9, 1e-6, 16, "sharp"),
    ],
)
def test_sharp_or_ring_by_hand(n, nbytes, latency, k, answer):
    # the ring: 2(N-1) steps, each message over two cables (NIC -> leaf -> NIC) with S/(8N);
    # SHARP: k + 1 steps, each message over one cable with S/(8k)
    ring = 2 * (n - 1) * (2 * latency + nbytes / (8 * n) / NIC)
    sharp = (k + 1) * (latency + nbytes / (8 * k) / NIC)
    assert clusters.rail_all_reduce_seconds(n, nbytes, latency, "ring") == pytest.approx(
        ring, rel=1e-12
    )
    assert clusters.rail_all_reduce_seconds(n, nbytes, latency, "sharp", k) == pytest.approx(
        sharp, rel=1e-12
    )
    assert clusters.sharp_or_ring(n, nbytes, latency, k) == answer


def test_sharp_or_ring_without_a_clear_answer_or_outside_a_unit_raises():
    # without latency, 3 nodes and 3 segments: ring 4 S/(24 B) = SHARP 4 S/(24 B)
    with pytest.raises(GradingError, match=r"ring and SHARP take .* \(a bug in the test\)"):
        clusters.sharp_or_ring(3, GIB, 0.0, 3)
    for n in (1, 33):
        with pytest.raises(GradingError, match=f"{n} nodes: the rails of 2 to 32 nodes"):
            clusters.sharp_or_ring(n, GIB, 1e-6, 1)
    with pytest.raises(GradingError, match="algorithm must be 'ring' or 'sharp'"):
        clusters.rail_all_reduce_seconds(4, GIB, 1e-6, "tree")


# ---- Task 5: a SuperPOD ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "units, leaves, spines, cores, cables",
    [
        # the published rows (RA-11333-001 V11 table 4; the B200 RA, table 3); cables: 256 per SU
        # node to leaf and as many leaf to spine, and with a core tier as many spine to core
        (1, 8, 4, 0, 512),
        (2, 16, 8, 0, 1024),
        (3, 24, 16, 0, 1536),
        (4, 32, 16, 0, 2048),
        (8, 64, 32, 0, 4096),
        (16, 128, 128, 64, 3 * 4096),
        (32, 256, 256, 128, 3 * 8192),
        # 9 SUs: 3 groups of 32 spines; core groups of 2 cores (3 x 32 up-links on 64 ports), each
        # spine with 16 cables to each of them: 96 x 32 spine-core cables
        (9, 72, 96, 64, 2 * 2304 + 96 * 32),
    ],
)
def test_superpod_count(units, leaves, spines, cores, cables):
    got = {
        what: clusters.superpod_count(units, what)
        for what in ("leaves", "spines", "cores", "cables")
    }
    assert got == {"leaves": leaves, "spines": spines, "cores": cores, "cables": cables}


def test_superpod_count_of_something_else_raises():
    with pytest.raises(GradingError, match="what must be one of leaves, spines, cores, cables"):
        clusters.superpod_count(4, "switches")


# ---- registration: the re-check finds them by name, and a reload restores them ------------


def test_every_name_is_exported_and_resolvable():
    for name in clusters.__all__:
        assert getattr(cl.grading, name) is getattr(clusters, name)
        assert getattr(cl.grading.clusters, name) is getattr(clusters, name)  # the old module
        assert name in cl.grading.__all__


def test_the_references_work_by_name_in_the_re_check():
    check_reference(14 * A, "x", "grading.hierarchical_level_seconds", (4, GIB, "nvlink"))
    check_choice(
        "sharp",
        None,
        "y",
        options=("sharp", "ring"),
        reference="grading.sharp_or_ring",
        args=(8, 1e7, 1e-6, 1),
    )
    with pytest.raises(AssertionError, match=r"^y is 'ring', but the answer is 'sharp'$"):
        recheck(
            (
                "check_choice",
                ("ring", None, "y"),
                {
                    "options": ("sharp", "ring"),
                    "reference": "grading.sharp_or_ring",
                    "args": (8, 1e7, 1e-6, 1),
                },
            )
        )
    with pytest.raises(
        AssertionError,
        match=r"^z is 89.0, expected 88.0 = collectives\.grading"
        r"\.hierarchical_segments_needed\(4, 1073741824, "
        r"0\.05\)",
    ):
        recheck(
            ("check_reference", (89, "z", "grading.hierarchical_segments_needed", (4, GIB, 0.05)))
        )
    what = "mesh_placement({'tp': 2, 'dp': 2}, 2)"
    args = ({"tp": 2, "dp": 2}, 2, 128, 2**25, GIB)
    recheck(
        ("check_reference", (1.0, what, "grading.check_placement", ([0, 8, 1, 9], what, *args)))
    )
    # rank order: all four ranks in node 0, faster than the rules, but DP group [0, 1] spans
    # rails 0 and 1
    with pytest.raises(
        AssertionError,
        match=r"^mesh_placement\(\{'tp': 2, 'dp': 2\}, 2\): the "
        r"DP group of mesh ranks \[0, 1\] is on GPUs "
        r"\[0, 1\], which span rails \[0, 1\]; by cl.time "
        r"its step .* takes .* s, 0.384615 times the",
    ):
        recheck(
            ("check_reference", (1.0, what, "grading.check_placement", ([0, 1, 2, 3], what, *args)))
        )


def test_a_reload_restores_what_a_notebook_patched():
    # as a notebook would (no monkeypatch: the reload itself must undo it)
    cl.grading.clusters.superpod_count = lambda *args: 0
    cl.grading.check_placement = lambda *args, **kwargs: 1.0
    grading = importlib.reload(cl.grading)
    assert grading.superpod_count(1, "leaves") == 8
    with pytest.raises(AssertionError):
        grading.check_placement([0, 1, 2, 3], "p", {"tp": 2, "dp": 2}, 2, 128, 2**25, GIB)
