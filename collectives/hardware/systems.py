"""Hardware presets: topologies built from published numbers, each with its source.

``preset(name, **options)`` returns a :class:`~collectives.topology.Topology`;
``presets()`` lists the names; ``spec(name)`` gives the numbers behind a preset.

Sources (cite these, with their versions, in the book):

* TPU: The Scaling Book, "How to Think About TPUs", jax-ml.github.io/scaling-book/tpus,
  version of 2026-07 (older versions give other ICI numbers: v5e 5e10, v5p 1e11 one-way):
  ICI per link, hop latency, DCN and PCIe per chip, chips per host.
* NVLink: NVIDIA DGX H100 and DGX B200 user guides and the NVLink product page
  (nvidia.com/en-us/data-center/nvlink); H100: 18 NVLink 4 links x 25 GB/s per direction.
* NICs: one ConnectX-7 400 Gb/s NIC per GPU, PCIe Gen5 x16 (DGX user guides, ConnectX-7 manual;
  PCIe 5.0: 32 GT/s per lane, PCI-SIG).
* SuperPOD: NVIDIA DGX SuperPOD reference architectures (DGX H100, RA-11333-001 V11, tables 3
  and 4; DGX B200, table 3): 32-node scalable units, rail leaves, spines, cores.

Modelled: chip-to-chip links and their one-way bandwidth, ICI hop latency, which torus axes
wrap around, DCN between slices (per chip), TPU hosts (which chips share one); GPU nodes with
NVSwitch, PCIe and a NIC per GPU, rail-optimised leaves, spines and a core tier with the
reference architecture's switch and cable counts. Left out: the hosts' PCIe and NIC as links
on the DCN path (DCN is given per chip), NVLink and InfiniBand latency (not published: 0 by
default, can be given), link-level protocol overheads (NCCL reaches about 370 of 450 GB/s on
H100 NVLink: nccl-tests issue #212, NCCL issue #1455), adaptive routing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .errors import TopologyError
from .topology import cluster, product, switch, torus
from .validation import integer

if TYPE_CHECKING:
    from .topology import Topology

__all__ = ["System", "SuperPODPlan", "preset", "presets", "spec", "superpod_plan", "tpu_hosts",
           "tpu_wraparound"]

SCALING_BOOK_TPUS = "https://jax-ml.github.io/scaling-book/tpus/ (2026-07 version)"
NVLINK_PAGE = "https://www.nvidia.com/en-us/data-center/nvlink/"
DGX_H100_GUIDE = "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html"
DGX_B200_GUIDE = "https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html"
GB200_NVL72_PAGE = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (rack totals)"
CONNECTX7_MANUAL = ("https://docs.nvidia.com/networking/display/connectx7vpiocp3/"
                    "supported+interfaces (PCIe Gen 5.0 x16)")
SUPERPOD_H100_RA = ("NVIDIA DGX SuperPOD reference architecture, DGX H100, RA-11333-001 V11 "
                    "(2023-09-22), tables 3 and 4")
SUPERPOD_B200_RA = ("https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-"
                    "infrastructure-b200/latest/dgx-superpod-architecture.html (table 3: "
                    "2 to 64 SUs, leaf/spine/core switch and cable counts)")
#: PCIe 5.0 x16, one direction: 32 GT/s x 16 lanes x 128/130 encoding / 8 bits (PCI-SIG
#: PCIe 5.0 base specification: 32 GT/s per lane); the NIC of each DGX GPU sits behind it
PCIE5_X16 = 32e9 * 16 * 128 / 130 / 8
#: NDR InfiniBand, 400 Gb/s per port = 5e10 bytes/s per direction (ConnectX-7, QM9700)
NDR_400G = 400e9 / 8


@dataclass(frozen=True)
class System:
    """The published numbers behind a preset. Bandwidths in bytes/s per direction."""

    name: str
    kind: str                       # "tpu-2d", "tpu-3d" or "nvswitch"
    link_bandwidth: float           # one-way bytes/s per ICI link, or per GPU into NVSwitch
    hop_latency: float              # seconds per link crossed
    default_shape: tuple[int, ...]  # full pod / NVLink domain
    hbm_bandwidth: float            # bytes/s of HBM per chip
    bf16_flops: float               # peak bf16 FLOP/s per chip
    hbm_bytes: float                # HBM capacity per chip, bytes
    source: str
    notes: str = ""
    extra_sources: tuple[str, ...] = field(default_factory=tuple)
    dcn_bandwidth: float | None = None  # bytes/s per chip over the data-center network (TPU)
    host_shape: tuple[int, ...] | None = None  # chips under one host (TPU); None: not published
    pcie_bandwidth: float | None = None  # bytes/s per chip to its host (TPU), per GPU to its NIC
    nic_bandwidth: float | None = None   # bytes/s per NIC each way (GPU: one NIC per GPU)

    @property
    def ici_links(self) -> int | None:
        """ICI links per chip: 4 on a 2-D torus, 6 on a 3-D torus (None for GPUs)."""
        return {"tpu-2d": 4, "tpu-3d": 6}.get(self.kind)

    @property
    def chips_per_host(self) -> int | None:
        """Chips that share one host (and its PCIe and DCN), or None if not published."""
        return None if self.host_shape is None else int(np.prod(self.host_shape))


_SYSTEMS = {
    s.name: s
    for s in (
        # Scaling Book "How to Think About TPUs" (2026-07): chip table and ICI table;
        # ICI hop latency "about 1 us" (same chapter); DCN bandwidth per chip (same chapter:
        # about 6.25e9 B/s, 3.125e9 on v5e, 1.25e10 on v6e and TPU7x; older versions of the
        # book give other DCN numbers)
        # Hosts (same chapter): one host per 2x2x1 chips on v4/v5p, per 4x2 on v5e/v6e; PCIe
        # about 1.6e10 B/s per chip (3.2e10 on v6e). TPU7x hosts and PCIe: not in that source.
        System("tpu-v4", "tpu-3d", 4.5e10, 1e-6, (16, 16, 16), 1.2e12, 2.75e14, 32e9,
               SCALING_BOOK_TPUS, "TPU v4p; pod 16x16x16 = 4096 chips", dcn_bandwidth=6.25e9,
               host_shape=(2, 2, 1), pcie_bandwidth=1.6e10),
        System("tpu-v5p", "tpu-3d", 9.0e10, 1e-6, (16, 20, 28), 2.8e12, 4.59e14, 96e9,
               SCALING_BOOK_TPUS, "pod 16x20x28 = 8960 chips", dcn_bandwidth=6.25e9,
               host_shape=(2, 2, 1), pcie_bandwidth=1.6e10),
        System("tpu-v5e", "tpu-2d", 4.5e10, 1e-6, (16, 16), 8.2e11, 1.97e14, 16e9,
               SCALING_BOOK_TPUS, "pod 16x16 = 256 chips", dcn_bandwidth=3.125e9,
               host_shape=(4, 2), pcie_bandwidth=1.6e10),
        System("tpu-v6e", "tpu-2d", 9.0e10, 1e-6, (16, 16), 1.6e12, 9.20e14, 32e9,
               SCALING_BOOK_TPUS, "Trillium; pod 16x16 = 256 chips", dcn_bandwidth=1.25e10,
               host_shape=(4, 2), pcie_bandwidth=3.2e10),
        System("tpu7x", "tpu-3d", 9.0e10, 1e-6, (4, 4, 576), 7.4e12, 2.30e15, 192e9,
               SCALING_BOOK_TPUS, "Ironwood; 9216 chips", dcn_bandwidth=1.25e10),
        # NVLink 4: 18 links x 25 GB/s per direction = 450 GB/s per GPU (NVLink page,
        # DGX H100 guide); NVLink 5: 900 GB/s per GPU. Latency: not published.
        # DGX nodes: 8 GPUs on NVSwitch, one 400 Gb/s ConnectX-7 NIC per GPU (rail-optimised)
        # behind PCIe Gen5 x16 (DGX user guides; ConnectX-7 manual)
        System("dgx-h100", "dgx", 450e9, 0.0, (8,), 3.35e12, 9.89e14, 80e9,
               DGX_H100_GUIDE, "8 H100 SXM on 4 NVSwitches (modelled as one crossbar), "
               "8 ConnectX-7 400 Gb/s NICs", (NVLINK_PAGE, CONNECTX7_MANUAL),
               pcie_bandwidth=PCIE5_X16, nic_bandwidth=NDR_400G),
        System("dgx-b200", "dgx", 900e9, 0.0, (8,), 8e12, 2.25e15, 180e9,
               DGX_B200_GUIDE, "8 B200 on NVLink 5 switches, 8 ConnectX-7 400 Gb/s NICs",
               (NVLINK_PAGE, CONNECTX7_MANUAL), pcie_bandwidth=PCIE5_X16,
               nic_bandwidth=NDR_400G),
        # DGX SuperPOD H100: DGX H100 nodes in scalable units of 32 node slots, NDR 400 Gb/s
        # QM9700 switches (64 ports) on a rail-optimised fat tree (RA-11333-001 V11)
        System("superpod-h100", "superpod", 450e9, 0.0, (4 * 32, 8), 3.35e12, 9.89e14, 80e9,
               SUPERPOD_H100_RA, "DGX H100 nodes, 32 per scalable unit, 8 rail leaves per "
               "unit, spines, and a core tier beyond 8 units",
               (SUPERPOD_B200_RA, DGX_H100_GUIDE, NVLINK_PAGE, CONNECTX7_MANUAL),
               pcie_bandwidth=PCIE5_X16, nic_bandwidth=NDR_400G),
        # GB200 NVL72: NVLink 5, 900 GB/s per GPU each way (NVLink page). Per-GPU FLOP/s, HBM
        # and its bandwidth: the NVL72 product page's rack totals divided by 72 (FP16/BF16
        # tensor 360 PFLOP/s with sparsity, half that dense; 13.4 TB HBM3e at 576 TB/s)
        # Meta's RoCE training cluster (collectives.fabric.presets: Llama 3 paper section
        # 3.3.1, Gangidi et al. SIGCOMM 2024, Networking@Scale 2023; assumptions marked
        # there): H100 GPUs, 16 per rack, 400 Gb/s per GPU; GPU numbers as dgx-h100. The
        # fabric only: NVLink inside the servers is not part of this Topology.
        System("meta-roce-32k", "meta-roce", 400e9 / 8, 0.0, (8, 252, 16), 3.35e12,
               9.89e14, 80e9, "Grattafiori et al., The Llama 3 Herd of Models, arXiv "
               "2407.21783, section 3.3.1", "zones x racks x GPUs; options zones, "
               "racks_per_zone, wiring, hash_seed",
               ("Gangidi et al., RDMA over Ethernet for Distributed AI Training at Meta "
                "Scale, SIGCOMM 2024", DGX_H100_GUIDE)),
        System("gb200-nvl72", "nvswitch", 900e9, 0.0, (72,), 8e12, 2.5e15, 186e9,
               NVLINK_PAGE, "72 Blackwell GPUs in one NVLink domain", (GB200_NVL72_PAGE,)),
    )
}


def presets() -> list[str]:
    """Names accepted by :func:`preset`."""
    return sorted(_SYSTEMS)


def spec(name: str) -> System:
    """The :class:`System` (published numbers and sources) behind preset ``name``."""
    key = str(name).lower()
    if key == "tpu-v4p":
        key = "tpu-v4"
    if key not in _SYSTEMS:
        raise TopologyError(f"unknown hardware preset {name!r}; choose from {', '.join(presets())}")
    return _SYSTEMS[key]


def tpu_wraparound(kind: str, shape: Sequence[int]) -> tuple[bool, ...]:
    """Which axes of a TPU slice have wraparound links (Scaling Book, 2026-07).

    2D chips (v5e, v6e): an axis wraps only when it is the full 16 chips. 3D chips (v4, v5p,
    TPU7x) are built from 4x4x4 cubes joined by optical circuit switches: a slice made of
    whole cubes (every axis a multiple of 4) wraps on every axis; smaller slices (2x2x1,
    2x2x2, 2x2x4, ...) have none.
    """
    if kind == "tpu-2d":
        return tuple(size == 16 for size in shape)
    whole_cubes = all(size % 4 == 0 for size in shape)
    return tuple(whole_cubes for _ in shape)


def tpu_hosts(name: str, shape: Sequence[int] | None = None) -> np.ndarray:
    """The host of every chip of a TPU slice (row-major chip order): chips are grouped into
    tiles of the system's ``host_shape`` (2x2x1 on v4/v5p, 4x2 on v5e/v6e; The Scaling Book,
    2026-07), host ids row-major over the tiles. An axis shorter than the tile leaves its
    hosts partly used, as in a small slice. Hosts share their PCIe and DCN bandwidth among
    their chips; ``spec(name).pcie_bandwidth`` and ``dcn_bandwidth`` are per chip."""
    system = spec(name)
    if system.host_shape is None:
        raise TopologyError(f"{system.name}: hosts are not published in the pinned source "
                            f"({system.source})" if system.kind.startswith("tpu") else
                            f"{system.name} is a GPU system; its nodes are its hosts")
    shape = system.default_shape if shape is None else tuple(
        integer(size, "shape", minimum=1, error=TopologyError) for size in shape)
    if len(shape) != len(system.host_shape):
        raise TopologyError(f"{system.name} slices are {len(system.host_shape)}-D; got shape "
                            f"{shape}")
    coords = np.indices(shape).reshape(len(shape), -1)
    tile = np.array(system.host_shape)[:, None]
    tiles_per_axis = -(-np.array(shape) // np.array(system.host_shape))
    return np.ravel_multi_index(tuple(coords // tile), tuple(tiles_per_axis))


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


#: QM9700 NDR switch: 64 ports of 400 Gb/s (SuperPOD RA); a leaf splits them 32 down, 32 up
SWITCH_PORTS = 64
NODES_PER_UNIT = 32
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

    ``nodes``: DGX nodes (default 32 per SU; the RA's reference 4-SU design has 127, one
    slot per SU going to fabric management).
    """
    units = integer(units, "units", minimum=1, error=TopologyError)
    if units > 256:
        raise TopologyError(f"a three-tier fabric of 64-port switches reaches 256 scalable "
                            f"units (65,536 GPUs); got units={units}")
    nodes = units * NODES_PER_UNIT if nodes is None else integer(
        nodes, "nodes", minimum=1, error=TopologyError)
    if not (units - 1) * NODES_PER_UNIT < nodes <= units * NODES_PER_UNIT:
        raise TopologyError(f"{units} scalable units hold {(units - 1) * NODES_PER_UNIT + 1} "
                            f"to {units * NODES_PER_UNIT} nodes; got nodes={nodes}")
    half = SWITCH_PORTS // 2
    leaves = units * GPUS_PER_NODE
    if units <= 8:
        spines = next(d for d in (1, 2, 4, 8, 16, 32) if d * SWITCH_PORTS >= leaves * half)
        groups, per_group, leaf_links, cores_per_group, core_links = 1, units, half // spines, 0, 0
        spines_per_group = spines
    else:
        per_group = half // GPUS_PER_NODE                 # 4 SUs: 32 leaves per group
        groups = -(-units // per_group)
        spines_per_group, leaf_links = half, 1
        spines = groups * spines_per_group
        cores_per_group = next(c for c in (1, 2, 4, 8, 16, 32)
                               if c * SWITCH_PORTS >= groups * half)
        core_links = half // cores_per_group
    cores = spines_per_group * cores_per_group
    return SuperPODPlan(
        units=units, nodes=nodes, gpus=nodes * GPUS_PER_NODE, leaves=leaves, spines=spines,
        cores=cores, groups=groups, units_per_group=per_group,
        spines_per_group=spines_per_group, leaf_spine_links=leaf_links,
        cores_per_group=cores_per_group, spine_core_links=core_links,
        node_leaf_cables=nodes * GPUS_PER_NODE,
        leaf_spine_cables=leaves * spines_per_group * leaf_links,
        spine_core_cables=spines * cores_per_group * core_links)


def preset(name: str, **options: Any) -> Topology:
    """A Topology for hardware preset ``name`` (see :func:`presets`).

    TPU options: ``shape`` (the slice, default the full pod), ``wraparound`` (override
    the published rule), ``hop_latency`` (seconds per link), ``slices`` (multislice: that many
    copies of the slice joined over the data-center network) and ``dcn_latency`` (seconds;
    default 0, not published).

    DGX nodes ("dgx-h100", "dgx-b200"): a :func:`~collectives.topology.cluster` of ``nodes``
    DGX nodes (default 1): 8 GPUs on the node's NVSwitch, each with its own 400 Gb/s NIC
    behind PCIe Gen5 x16, rail leaves per unit of ``nodes_per_unit`` (default 32) and
    spines. "superpod-h100": ``units`` scalable units (default 4, the RA's reference
    design) wired as :func:`superpod_plan` says, ``nodes`` (default 32 per unit). GPU options
    also: ``hop_latency`` (seconds per NVLink hop), ``pcie_latency``, ``network_latency``
    (per InfiniBand link), all 0 by default (not published), and ``pxn`` (route as NCCL's
    PXN). GPUs are the ranks, numbered ``node * 8 + local``; "gb200-nvl72": ``n`` GPUs on one
    NVLink switch (default 72), ``hop_latency``.

    Multislice is modelled as a product topology (DCN first, then the slice's ICI torus):
    rank ``slice * chips + chip``; chip ``c`` of every slice reaches chip ``c`` of the
    others through a DCN link of the published per-chip DCN bandwidth each way. Left out:
    the hosts and NICs the DCN traffic really crosses (the per-chip figure already shares a
    host's bandwidth among its chips) and contention inside the data-center network.
    """
    system = spec(name)
    hop_latency = options.pop("hop_latency", system.hop_latency)
    if system.kind == "nvswitch":
        n = options.pop("n", system.default_shape[0])
        _no_more(options, name)
        topo = switch(n, system.link_bandwidth, hop_latency)
    elif system.kind in ("dgx", "superpod"):
        topo = _gpu_cluster(system, hop_latency, options, name)
    elif system.kind == "meta-roce":
        from .fabric.presets import meta_cluster

        allowed = {"zones", "racks_per_zone", "gpus_per_rack", "spines", "aggregators",
                   "oversubscription", "wiring", "hash_seed"}
        _no_more({k: v for k, v in options.items() if k not in allowed}, name)
        topo = meta_cluster(hop_latency=hop_latency, **options)
    else:
        topo = _tpu_slices(system, hop_latency, options, name)
    return topo.with_info(name=f"{system.name} {topo.name}", system=system,
                          sources=(system.source, *system.extra_sources))


def _gpu_cluster(system, hop_latency, options, name):
    fabric = {}
    if system.kind == "superpod":
        plan = superpod_plan(options.pop("units", 4), options.pop("nodes", None))
        nodes, per_unit = plan.nodes, NODES_PER_UNIT
        fabric = dict(n_spines=plan.spines_per_group, spine_links=plan.leaf_spine_links,
                      units_per_group=plan.units_per_group,
                      cores_per_group=max(plan.cores_per_group, 1),
                      core_links=max(plan.spine_core_links, 1))
    else:
        nodes = integer(options.pop("nodes", 1), "nodes", minimum=1, error=TopologyError)
        per_unit = integer(options.pop("nodes_per_unit", NODES_PER_UNIT), "nodes_per_unit",
                           minimum=1, error=TopologyError)
    latencies = {key: options.pop(key, 0.0) for key in ("pcie_latency", "network_latency")}
    pxn = options.pop("pxn", False)
    _no_more(options, name)
    return cluster(nodes, GPUS_PER_NODE, nvlink_bandwidth=system.link_bandwidth,
                   pcie_bandwidth=system.pcie_bandwidth, nic_bandwidth=system.nic_bandwidth,
                   nodes_per_unit=per_unit, nvlink_latency=hop_latency, pxn=pxn,
                   **latencies, **fabric)


def _tpu_slices(system, hop_latency, options, name):
    shape = tuple(options.pop("shape", system.default_shape))
    want = 2 if system.kind == "tpu-2d" else 3
    if len(shape) != want:
        raise TopologyError(f"{system.name} slices are {want}-D; got shape {shape}")
    wrap = options.pop("wraparound", None)
    if wrap is None:
        wrap = tpu_wraparound(system.kind, shape)
    slices = integer(options.pop("slices", 1), "slices", minimum=1, error=TopologyError)
    dcn_latency = options.pop("dcn_latency", 0.0)
    _no_more(options, name)
    topo = torus(shape, system.link_bandwidth, hop_latency, wrap)
    if slices > 1:
        dcn = switch(slices, system.dcn_bandwidth, dcn_latency)
        label = f"{slices} slices of {topo.name} over DCN"
        topo = product(dcn, topo, level_names=("dcn", "ici"), name=label)
    return topo


def _no_more(options, name):
    if options:
        raise TopologyError(f"preset {name!r} does not take option(s) {', '.join(sorted(options))}")
