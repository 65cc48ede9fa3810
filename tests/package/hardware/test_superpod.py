"""The SuperPOD's compute fabric (collectives.hardware.superpod): switch and cable counts
against the reference architecture's tables."""

import numpy as np
import pytest

import collectives as cl
from collectives import hardware

# DGX SuperPOD compute fabric: (SUs, leaves, spines, cores, node-leaf, leaf-spine, spine-core
# cables). 1-4 SUs: DGX H100 RA-11333-001 V11 table 4 (switches; cables = one per GPU port at
# each tier); 8-64 SUs: DGX SuperPOD B200 RA table 3 (same 32-node SUs and 64-port NDR
# switches), where 16 SUs and more have a core tier.
RA_COUNTS = [
    (1, 8, 4, 0, 256, 256, 0),
    (2, 16, 8, 0, 512, 512, 0),
    (3, 24, 16, 0, 768, 768, 0),
    (4, 32, 16, 0, 1024, 1024, 0),
    (8, 64, 32, 0, 2048, 2048, 0),
    (16, 128, 128, 64, 4096, 4096, 4096),
    (32, 256, 256, 128, 8192, 8192, 8192),
    (64, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize(
    "units, leaves, spines, cores, node_leaf, leaf_spine, spine_core", RA_COUNTS
)
def test_superpod_matches_the_reference_architecture(
    units, leaves, spines, cores, node_leaf, leaf_spine, spine_core
):
    plan = hardware.superpod_plan(units)
    assert (plan.leaves, plan.spines, plan.cores) == (leaves, spines, cores)
    assert (plan.node_leaf_cables, plan.leaf_spine_cables, plan.spine_core_cables) == (
        node_leaf,
        leaf_spine,
        spine_core,
    )
    # the built topology has exactly those switches and cables (one link each way per cable)
    t = cl.hardware.preset("superpod-h100", units=units)
    nodes = units * 32
    assert t.n_ranks == nodes * 8 and t.n_switches == nodes + leaves + spines + cores
    cables = np.bincount(t.link_level, minlength=5) // 2
    assert cables[2:].tolist() == [node_leaf, leaf_spine, spine_core]
    # no switch uses more than the QM9700's 64 ports
    ports = np.bincount(t.link_src, minlength=t.n_nodes)
    first_leaf = 2 * t.n_ranks + nodes
    assert ports[first_leaf:].max() <= 64
    # every leaf has 32 ports down and 32 up: non-blocking at the leaf
    assert set(ports[first_leaf : first_leaf + leaves].tolist()) == {64}


def test_superpod_reference_design_has_127_nodes():
    # RA-11333-001 V11 table 4: the 4-SU design has 127 DGX H100 nodes (a node slot goes to
    # fabric management), 32 leaves and 16 spines
    t = cl.hardware.preset("superpod-h100", units=4, nodes=127)
    assert t.n_ranks == 127 * 8 and t.n_switches == 127 + 32 + 16


def test_one_management_slot_for_the_whole_fabric():
    # RA-11333-001 V11, table 4: 31, 63, 95 and 127 DGX H100 systems for 1 to 4 SUs; its
    # footnote removes one DGX system from the whole fabric for UFM, not one per SU
    # (one per SU would give 31, 62, 93, 124)
    published = {1: 31, 2: 63, 3: 95, 4: 127}
    for units, nodes in published.items():
        plan = cl.hardware.superpod_plan(units, nodes=nodes)
        assert plan.reference_nodes == nodes
        assert plan.units * 32 - plan.reference_nodes == 1
    assert cl.hardware.superpod_plan(4).nodes == 128  # the model fills every slot
