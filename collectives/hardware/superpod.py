"""The compute fabric of an NVIDIA DGX SuperPOD H100 for any number of scalable units.

:func:`superpod_plan` gives the switch and cable counts (:class:`SuperPODPlan`) from one
rule that reproduces every published row (RA-11333-001 V11, table 4; the B200 RA's table
3); :func:`collectives.hardware.preset` builds the "superpod-h100" preset from it with
:func:`collectives.topology.cluster`. Left out: which cable goes where inside the RA (the
wiring is our assumption, stated below), fabric management nodes, storage and in-band
networks. Taught in chapter "GPU clusters".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TopologyError
from ..validation import integer

__all__ = [
    "SuperPODPlan",
    "superpod_plan",
    "SWITCH_PORTS",
    "NODES_PER_UNIT",
    "GPUS_PER_NODE",
    "MANAGEMENT_SLOTS",
]


@dataclass(frozen=True)
class SuperPODPlan:
    """How a DGX SuperPOD's compute fabric is built for a number of scalable units (SUs).

    Counts are switches and cables (one cable = one link each way). ``groups`` spine-leaf
    groups of ``units_per_group`` SUs each own ``spines_per_group`` spines; every leaf has
    ``leaf_spine_links`` cables to every spine of its group; with more than one group, spine
    ``s`` of every group has ``spine_core_links`` cables to each of the ``cores_per_group``
    cores of core group ``s``.
    """

    units: int
    nodes: int
    gpus: int
    leaves: int
    spines: int
    cores: int
    groups: int
    units_per_group: int
    spines_per_group: int
    leaf_spine_links: int
    cores_per_group: int
    spine_core_links: int
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int

    @property
    def reference_nodes(self) -> int:
        """DGX systems in the reference architecture's tables for this many SUs: all slots
        but one, which the whole fabric gives to its management (UFM): 31, 63, 95, 127
        for 1 to 4 SUs (RA-11333-001 V11, table 4 footnote)."""
        return self.units * NODES_PER_UNIT - MANAGEMENT_SLOTS


#: QM9700 NDR switch: 64 ports of 400 Gb/s (SuperPOD RA); a leaf splits them 32 down, 32 up
SWITCH_PORTS = 64
NODES_PER_UNIT = 32
#: node slots the whole fabric keeps for its management (UFM): one, however many SUs
#: (RA-11333-001 V11, footnote to table 4)
MANAGEMENT_SLOTS = 1
GPUS_PER_NODE = 8


def superpod_plan(units: int, nodes: int | None = None) -> SuperPODPlan:
    """The compute fabric of a DGX SuperPOD H100 of ``units`` scalable units.

    Published (RA-11333-001 V11, table 4; the B200 RA's table 3, same 32-node SUs and 64-port
    NDR switches): 1 SU: 8 leaves, 4 spines; 2 SU: 16, 8; 3 SU: 24, 16; 4 SU: 32, 16;
    8 SU: 64, 32; 16 SU: 128 leaves, 128 spines, 64 cores; 32 SU: 256, 256, 128;
    64 SU: 512, 512, 256; cables node-leaf = leaf-spine (= spine-core) = one per GPU.

    The rule that reproduces every row (the RA publishes counts, not this rule, nor which
    cable goes where; the wiring below is our assumption): a leaf has 32 ports down (one per
    node of its SU, its rail) and 32 up. Up to 8 SUs (two tiers) every leaf spreads its 32
    up-links evenly over all spines: the fewest spines that divide 32 and offer enough
    ports (``spines * 64 >= leaves * 32``). Beyond 8 SUs, 64-port spines cannot take every
    leaf, so a core tier is added: spine-leaf groups of 4 SUs (32 leaves, 32 spines, one
    cable between each leaf and spine of the group; a spine keeps 32 ports for cores), and
    spine ``s`` of every group joins core group ``s``, whose cores split that group's
    ``groups * 32`` up-links, 64 ports each. Between the published sizes (say 9 SUs) a partly
    filled last group keeps all 32 of its spines, provisioned for growth; then the spine-core
    cables are no longer one per GPU.

    ``nodes``: DGX nodes (default 32 per SU, every slot filled). The RA's tables list
    31, 63, 95 and 127 DGX systems for 1 to 4 SUs: its footnote removes **one** DGX system
    from the whole fabric, not one per SU, whose slot the fabric's management (UFM) uses
    (RA-11333-001 V11, table 4 and its footnote); ``SuperPODPlan.reference_nodes`` is that
    count.
    """
    units = integer(units, "units", minimum=1, error=TopologyError)
    if units > 256:
        raise TopologyError(
            f"a three-tier fabric of 64-port switches reaches 256 scalable "
            f"units (65,536 GPUs); got units={units}"
        )
    nodes = (
        units * NODES_PER_UNIT
        if nodes is None
        else integer(nodes, "nodes", minimum=1, error=TopologyError)
    )
    if not (units - 1) * NODES_PER_UNIT < nodes <= units * NODES_PER_UNIT:
        raise TopologyError(
            f"{units} scalable units hold {(units - 1) * NODES_PER_UNIT + 1} "
            f"to {units * NODES_PER_UNIT} nodes; got nodes={nodes}"
        )
    half = SWITCH_PORTS // 2
    leaves = units * GPUS_PER_NODE
    if units <= 8:
        spines = next(d for d in (1, 2, 4, 8, 16, 32) if d * SWITCH_PORTS >= leaves * half)
        groups, per_group, leaf_links, cores_per_group, core_links = 1, units, half // spines, 0, 0
        spines_per_group = spines
    else:
        per_group = half // GPUS_PER_NODE  # 4 SUs: 32 leaves per group
        groups = -(-units // per_group)
        spines_per_group, leaf_links = half, 1
        spines = groups * spines_per_group
        cores_per_group = next(c for c in (1, 2, 4, 8, 16, 32) if c * SWITCH_PORTS >= groups * half)
        core_links = half // cores_per_group
    cores = spines_per_group * cores_per_group
    return SuperPODPlan(
        units=units,
        nodes=nodes,
        gpus=nodes * GPUS_PER_NODE,
        leaves=leaves,
        spines=spines,
        cores=cores,
        groups=groups,
        units_per_group=per_group,
        spines_per_group=spines_per_group,
        leaf_spine_links=leaf_links,
        cores_per_group=cores_per_group,
        spine_core_links=core_links,
        node_leaf_cables=nodes * GPUS_PER_NODE,
        leaf_spine_cables=leaves * spines_per_group * leaf_links,
        spine_core_cables=spines * cores_per_group * core_links,
    )
