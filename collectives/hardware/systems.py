"""The published numbers behind every hardware preset, each with its source.

:class:`System` is one record (bandwidths in bytes/s per direction, FLOP/s, bytes, seconds);
:data:`SYSTEMS` holds every preset's record by name. Sources (cite these, with their
versions, in the book):

* TPU: The Scaling Book, "How to Think About TPUs", jax-ml.github.io/scaling-book/tpus,
  version of 2026-07 (older versions give other ICI numbers: v5e 5e10, v5p 1e11 one-way):
  ICI per link, DCN and PCIe per chip, chips per host. TPU7x's VM of 4 chips and 2 NICs:
  Google's GKE Ironwood page (:data:`GKE_IRONWOOD`) and TPU7x page (:data:`GCLOUD_TPU7X`).
  The ICI hop latency, 1 us, is an assumption: The Scaling Book calls the per-hop overhead
  "typically around 1us" ("Sharded matrices", the note on ICI latency), and Google publishes
  no ICI latency.
* NVLink: NVIDIA DGX H100 and DGX B200 user guides and the NVLink product page
  (nvidia.com/en-us/data-center/nvlink); H100: 18 NVLink 4 links x 25 GB/s per direction.
* NICs: one ConnectX-7 400 Gb/s NIC per GPU, PCIe Gen5 x16 (DGX user guides, ConnectX-7 manual;
  PCIe 5.0: 32 GT/s per lane, PCI-SIG).
* SuperPOD: NVIDIA DGX SuperPOD reference architectures (DGX H100, RA-11333-001 V11, tables 3
  and 4; DGX B200, table 3): 32-node scalable units, rail leaves, spines, cores.
* Meta's RoCE cluster: the Llama 3 paper, Meta's SIGCOMM 2024 paper and talks
  (:mod:`collectives.hardware.meta`, where the assumptions are marked).

**Two rates per GPU link.** Every GPU record carries the *line rate* (the vendor's
figure: 18 NVLink 4 links x 25 GB/s = 450 GB/s per H100, 400 Gb/s = 50 GB/s per NIC) and an
*effective rate*, the payload rate the hardware delivers to NCCL:

* NVLink: NCCL's own per-link figure, ``SM90_NVLINK_BW 20.6`` (Hopper) and
  ``SM100_NVLINK_BW 40.1`` (Blackwell) GB/s in ``src/graph/topo.h`` (NCCL 2.30.7), times
  the 18 links: 370.8 GB/s per H100, 721.8 GB/s per B200/GB200. The gap to the line rate
  is NVLink's packet overhead, not NCCL's LL/LL128/Simple protocols: NCCL's maintainers
  attribute the A100 equivalent (about 20 of 25 GB/s per link) to the SMs' 128-byte
  payloads (nccl-tests issue #149, NCCL issue #1054) and the overhead of bidirectional
  traffic (nccl-tests issue #258); no source states how the Hopper 20.6 was derived.
  370.8 GB/s is the ring plateau on 8 H100s (about 370 GB/s busbw: expected by a maintainer
  in nccl-tests issue #212, measured in NCCL issues #1455 and #2140).
* NIC: 48.5 GB/s per 400 Gb/s ConnectX-7, the upper end of what the nccl-tests maintainers
  expect per NDR NIC: "48-49GB/s" (nccl-tests issue #267, a RoCE thread), "46-48GB/s per
  NIC" (#290), "around 48GB/s" (#319). An expected value, neither a specification nor a
  run.

``System.bandwidths(rates)`` gives the three GPU bandwidths (NVLink, PCIe, NIC) at
``rates="line"`` (default: the presets' historic numbers) or ``"effective"``; the GPU
presets take the same ``rates=`` option. PCIe stays at its line rate in both (it is never
the bottleneck behind a 400 Gb/s NIC).

Left out: NVLink and InfiniBand latency (not published: 0 by default, can be given), the
protocols' own overheads (LL, LL128), and any effective rate for TPU links (none is
published).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import TopologyError

__all__ = [
    "System",
    "SYSTEMS",
    "SCALING_BOOK_TPUS",
    "SCALING_BOOK_SHARDING",
    "GCLOUD_TPU7X",
    "GKE_IRONWOOD",
    "ICI_HOP_LATENCY",
    "NVLINK_PAGE",
    "DGX_H100_GUIDE",
    "DGX_B200_GUIDE",
    "GB200_NVL72_PAGE",
    "CONNECTX7_MANUAL",
    "SUPERPOD_H100_RA",
    "SUPERPOD_B200_RA",
    "PCIE5_X16",
    "NDR_400G",
    "NCCL_TOPO_H",
    "NVLINK_OVERHEAD",
    "NIC_MEASURED_SOURCE",
    "SM90_NVLINK_BW",
    "SM100_NVLINK_BW",
    "NVLINKS_PER_GPU",
    "NDR_EFFECTIVE",
    "RATES",
    "HOPPER_RATES",
    "BLACKWELL_RATES",
    "lookup",
    "no_more_options",
    "NCCL_TUNING_CC",
    "NCCL_STEP_LATENCY",
    "LATENCIES",
]

SCALING_BOOK_TPUS = "https://jax-ml.github.io/scaling-book/tpus/ (2026-07 version)"
SCALING_BOOK_SHARDING = (
    "https://jax-ml.github.io/scaling-book/sharding/ (2026-07 version; "
    "the note on ICI latency: 'typically around 1us' per hop)"
)
GCLOUD_TPU7X = "https://docs.cloud.google.com/tpu/docs/tpu7x (specifications per 4-chip VM)"
GKE_IRONWOOD = (
    "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood "
    "(NUMA binding: each TPU7x VM holds four chips and two NICs)"
)
#: seconds per ICI hop: an assumption after The Scaling Book's "typically around 1us"
#: (:data:`SCALING_BOOK_SHARDING`); Google publishes no ICI latency
ICI_HOP_LATENCY = 1e-6
NVLINK_PAGE = "https://www.nvidia.com/en-us/data-center/nvlink/"
DGX_H100_GUIDE = "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html"
DGX_B200_GUIDE = "https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html"
GB200_NVL72_PAGE = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (rack totals)"
CONNECTX7_MANUAL = (
    "https://docs.nvidia.com/networking/display/connectx7vpiocp3/"
    "supported+interfaces (PCIe Gen 5.0 x16)"
)
SUPERPOD_H100_RA = (
    "NVIDIA DGX SuperPOD reference architecture, DGX H100, RA-11333-001 V11 "
    "(2023-09-22), tables 3 and 4"
)
SUPERPOD_B200_RA = (
    "https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-"
    "infrastructure-b200/latest/dgx-superpod-architecture.html (table 3: "
    "2 to 64 SUs, leaf/spine/core switch and cable counts)"
)
#: PCIe 5.0 x16, one direction: 32 GT/s x 16 lanes x 128/130 encoding / 8 bits (PCI-SIG
#: PCIe 5.0 base specification: 32 GT/s per lane); the NIC of each DGX GPU sits behind it
PCIE5_X16 = 32e9 * 16 * 128 / 130 / 8
#: NDR InfiniBand, 400 Gb/s per port = 5e10 bytes/s per direction (ConnectX-7, QM9700)
NDR_400G = 400e9 / 8
NCCL_TOPO_H = (
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h "
    "(SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s per NVLink link)"
)
NVLINK_OVERHEAD = (
    "https://github.com/NVIDIA/nccl-tests/issues/149 and "
    "https://github.com/NVIDIA/nccl/issues/1054 (NVLink packet overhead on "
    "128-byte stores)"
)
NIC_MEASURED_SOURCE = (
    "https://github.com/NVIDIA/nccl-tests/issues/267 (maintainers expect 48 "
    "to 49 GB/s per 400 Gb/s NIC; 46 to 48 in issue #290)"
)
#: NCCL's effective NVLink bandwidth per link, bytes/s per direction (NCCL_TOPO_H)
SM90_NVLINK_BW = 20.6e9
SM100_NVLINK_BW = 40.1e9
#: NVLink links per H100 and per Blackwell GPU (NVLink page)
NVLINKS_PER_GPU = 18
#: expected payload rate of one 400 Gb/s NIC, bytes/s per direction (NIC_MEASURED_SOURCE;
#: the name is kept for compatibility: it is the maintainers' expected value, not a run)
NDR_EFFECTIVE = 48.5e9
#: the two rates a GPU preset can be built at
RATES = ("line", "effective")
NCCL_TUNING_CC = (
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc "
    "(hwLatencies, microseconds per ring step: NVLink 0.6 LL, 3.4 Simple; "
    "network 2.7 LL, 14.0 Simple)"
)
#: The latency of one ring step that NCCL's tuner assumes (NCCL_TUNING_CC), in seconds, by
#: path ("nvlink": inside a node; "network": across nodes) and protocol ("LL": NCCL's
#: low-latency protocol for small messages; "Simple": the one for large ones). These are
#: constants of NCCL's own cost model, not measurements: NVIDIA publishes no NVLink, NVSwitch
#: or InfiniBand latency. The GPU presets use them only when asked (``latency="nccl-ll"`` or
#: ``"nccl-simple"``); by default their latencies are 0.
NCCL_STEP_LATENCY = {
    ("nvlink", "LL"): 0.6e-6,
    ("nvlink", "Simple"): 3.4e-6,
    ("network", "LL"): 2.7e-6,
    ("network", "Simple"): 14.0e-6,
}
#: the GPU presets' ``latency`` option: its values and the protocol of NCCL_STEP_LATENCY each
#: one takes ("none", the default: every latency 0, as published numbers give none)
LATENCIES = {"none": None, "nccl-ll": "LL", "nccl-simple": "Simple"}


@dataclass(frozen=True)
class System:
    """The published numbers behind a preset. Bandwidths in bytes/s per direction."""

    name: str
    kind: str  # "tpu-2d", "tpu-3d", "nvswitch", "dgx", "superpod", "meta-roce"
    link_bandwidth: float  # one-way bytes/s per ICI link, or per GPU into NVSwitch
    hop_latency: float  # seconds per link crossed
    default_shape: tuple[int, ...]  # full pod / NVLink domain
    hbm_bandwidth: float  # bytes/s of HBM per chip
    bf16_flops: float  # peak bf16 FLOP/s per chip
    hbm_bytes: float  # HBM capacity per chip, bytes
    source: str
    notes: str = ""
    extra_sources: tuple[str, ...] = field(default_factory=tuple)
    dcn_bandwidth: float | None = None  # bytes/s per chip over the data-center network (TPU)
    host_shape: tuple[int, ...] | None = None  # chips under one host (TPU); None: not published
    pcie_bandwidth: float | None = None  # bytes/s per chip to its host (TPU), per GPU to its NIC
    nic_bandwidth: float | None = None  # bytes/s per NIC each way (GPU: one NIC per GPU)
    effective_link_bandwidth: float | None = None  # GPU: NVLink payload rate (module doc)
    effective_nic_bandwidth: float | None = None  # GPU: expected NIC payload rate
    effective_sources: tuple[str, ...] = field(default_factory=tuple)

    def bandwidths(self, rates: str = "line") -> tuple[float, float | None, float | None]:
        """(NVLink per GPU, PCIe per GPU, NIC) in bytes/s per direction at ``rates``
        ("line": the vendor's figures; "effective": NCCL's NVLink figure and the NIC rate
        nccl-tests' maintainers expect, see the module docstring). TPU records have no
        effective rate."""
        if rates not in RATES:
            raise TopologyError(f"rates must be one of {', '.join(RATES)}; got {rates!r}")
        if rates == "line":
            return self.link_bandwidth, self.pcie_bandwidth, self.nic_bandwidth
        if self.effective_link_bandwidth is None:
            raise TopologyError(f"{self.name}: no effective rate is published; use rates='line'")
        nic = self.effective_nic_bandwidth if self.nic_bandwidth is not None else None
        return self.effective_link_bandwidth, self.pcie_bandwidth, nic

    def node_bandwidths(self, rates: str = "line") -> tuple[float, float, float]:
        """:meth:`bandwidths` of a record with PCIe and NICs (a GPU node); raises
        :class:`~collectives.TopologyError` for one without (a TPU chip)."""
        link, pcie, nic = self.bandwidths(rates)
        if pcie is None or nic is None:
            raise TopologyError(f"{self.name} publishes no PCIe or NIC rate: it is not a GPU node")
        return link, pcie, nic

    @property
    def ici_links(self) -> int | None:
        """ICI links per chip: 4 on a 2-D torus, 6 on a 3-D torus (None for GPUs)."""
        return {"tpu-2d": 4, "tpu-3d": 6}.get(self.kind)

    @property
    def chips_per_host(self) -> int | None:
        """Chips that share one host (and its PCIe and DCN), or None if not published."""
        return None if self.host_shape is None else int(np.prod(self.host_shape))


# the effective rates of Hopper and Blackwell GPU records (module docstring)
HOPPER_RATES: dict[str, Any] = dict(
    effective_link_bandwidth=NVLINKS_PER_GPU * SM90_NVLINK_BW,
    effective_nic_bandwidth=NDR_EFFECTIVE,
    effective_sources=(NCCL_TOPO_H, NVLINK_OVERHEAD, NIC_MEASURED_SOURCE),
)
BLACKWELL_RATES: dict[str, Any] = dict(
    HOPPER_RATES, effective_link_bandwidth=NVLINKS_PER_GPU * SM100_NVLINK_BW
)

#: every preset's record, by name (:func:`collectives.hardware.spec` looks names up here)
SYSTEMS = {
    s.name: s
    for s in (
        # Scaling Book "How to Think About TPUs" (2026-07): chip table and ICI table;
        # ICI hop latency: ICI_HOP_LATENCY, assumed after the Scaling Book's "typically
        # around 1us" per hop ("Sharded matrices"; not a Google specification); DCN bandwidth
        # per chip (same chapter: about 6.25e9 B/s, 3.125e9 on v5e, 1.25e10 on v6e and
        # TPU7x; older versions of the book give other DCN numbers)
        # Hosts (same chapter): one host per 2x2x1 chips on v4/v5p/TPU7x, per 8 chips on
        # v5e/v6e (the book's "4x2"; oriented 2x4, as Google's v5e slice table gives
        # "2x4 | 8 | 1" host and 4x4 2, 4x8 4, 8x16 16, 16x16 32); PCIe about 1.6e10 B/s
        # per chip (3.2e10 on v6e). TPU7x: 4 chips and 2 NICs per VM (GKE_IRONWOOD;
        # GCLOUD_TPU7X's table is per 4-chip VM); its PCIe bandwidth is not published.
        System(
            "tpu-v4",
            "tpu-3d",
            4.5e10,
            ICI_HOP_LATENCY,
            (16, 16, 16),
            1.2e12,
            2.75e14,
            32e9,
            SCALING_BOOK_TPUS,
            "TPU v4p; pod 16x16x16 = 4096 chips",
            (SCALING_BOOK_SHARDING,),
            dcn_bandwidth=6.25e9,
            host_shape=(2, 2, 1),
            pcie_bandwidth=1.6e10,
        ),
        System(
            "tpu-v5p",
            "tpu-3d",
            9.0e10,
            ICI_HOP_LATENCY,
            (16, 20, 28),
            2.8e12,
            4.59e14,
            96e9,
            SCALING_BOOK_TPUS,
            "pod 16x20x28 = 8960 chips",
            (SCALING_BOOK_SHARDING,),
            dcn_bandwidth=6.25e9,
            host_shape=(2, 2, 1),
            pcie_bandwidth=1.6e10,
        ),
        System(
            "tpu-v5e",
            "tpu-2d",
            4.5e10,
            ICI_HOP_LATENCY,
            (16, 16),
            8.2e11,
            1.97e14,
            16e9,
            SCALING_BOOK_TPUS,
            "pod 16x16 = 256 chips",
            (SCALING_BOOK_SHARDING,),
            dcn_bandwidth=3.125e9,
            host_shape=(2, 4),
            pcie_bandwidth=1.6e10,
        ),
        System(
            "tpu-v6e",
            "tpu-2d",
            9.0e10,
            ICI_HOP_LATENCY,
            (16, 16),
            1.6e12,
            9.20e14,
            32e9,
            SCALING_BOOK_TPUS,
            "Trillium; pod 16x16 = 256 chips",
            (SCALING_BOOK_SHARDING,),
            dcn_bandwidth=1.25e10,
            host_shape=(2, 4),
            pcie_bandwidth=3.2e10,
        ),
        # TPU7x as "tpu-3d" (six links, a 3-D torus of 4x4x4 cubes) is an assumption: no
        # source gives its ICI port count or topology (The Scaling Book: a 4x4x576 pod and
        # 2x2x1 hosts; GCLOUD_TPU7X: bandwidth per chip only)
        System(
            "tpu7x",
            "tpu-3d",
            9.0e10,
            ICI_HOP_LATENCY,
            (4, 4, 576),
            7.4e12,
            2.30e15,
            192e9,
            SCALING_BOOK_TPUS,
            "Ironwood; 9216 chips; 4 chips (2x2x1) and 2 NICs per VM",
            (SCALING_BOOK_SHARDING, GKE_IRONWOOD, GCLOUD_TPU7X),
            dcn_bandwidth=1.25e10,
            host_shape=(2, 2, 1),
        ),
        # NVLink 4: 18 links x 25 GB/s per direction = 450 GB/s per GPU (NVLink page,
        # DGX H100 guide); NVLink 5: 900 GB/s per GPU. Latency: not published.
        # DGX nodes: 8 GPUs on NVSwitch, one 400 Gb/s ConnectX-7 NIC per GPU (rail-optimised)
        # behind PCIe Gen5 x16 (DGX user guides; ConnectX-7 manual)
        System(
            "dgx-h100",
            "dgx",
            450e9,
            0.0,
            (8,),
            3.35e12,
            9.89e14,
            80e9,
            DGX_H100_GUIDE,
            "8 H100 SXM on 4 NVSwitches (modelled as one crossbar), 8 ConnectX-7 400 Gb/s NICs",
            (NVLINK_PAGE, CONNECTX7_MANUAL),
            pcie_bandwidth=PCIE5_X16,
            nic_bandwidth=NDR_400G,
            **HOPPER_RATES,
        ),
        System(
            "dgx-b200",
            "dgx",
            900e9,
            0.0,
            (8,),
            8e12,
            2.25e15,
            180e9,
            DGX_B200_GUIDE,
            "8 B200 on NVLink 5 switches, 8 ConnectX-7 400 Gb/s NICs",
            (NVLINK_PAGE, CONNECTX7_MANUAL),
            pcie_bandwidth=PCIE5_X16,
            nic_bandwidth=NDR_400G,
            **BLACKWELL_RATES,
        ),
        # DGX SuperPOD H100: DGX H100 nodes in scalable units of 32 node slots, NDR 400 Gb/s
        # QM9700 switches (64 ports) on a rail-optimised fat tree (RA-11333-001 V11)
        System(
            "superpod-h100",
            "superpod",
            450e9,
            0.0,
            (4 * 32, 8),
            3.35e12,
            9.89e14,
            80e9,
            SUPERPOD_H100_RA,
            "DGX H100 nodes, 32 per scalable unit, 8 rail leaves per "
            "unit, spines, and a core tier beyond 8 units",
            (SUPERPOD_B200_RA, DGX_H100_GUIDE, NVLINK_PAGE, CONNECTX7_MANUAL),
            pcie_bandwidth=PCIE5_X16,
            nic_bandwidth=NDR_400G,
            **HOPPER_RATES,
        ),
        # GB200 NVL72: NVLink 5, 900 GB/s per GPU each way (NVLink page). Per-GPU FLOP/s, HBM
        # and its bandwidth: the NVL72 product page's rack totals divided by 72 (FP16/BF16
        # tensor 360 PFLOP/s with sparsity, half that dense; 13.4 TB HBM3e at 576 TB/s)
        # Meta's RoCE training cluster (collectives.hardware.meta: Llama 3 paper section
        # 3.3.1, Gangidi et al. SIGCOMM 2024; assumptions marked there): H100 GPUs, 16 per
        # rack, 400 Gb/s NIC per GPU. Its servers (Grand Teton) hold eight GPUs joined by
        # NVLink (Llama 3 paper, 3.3.1); NVLink, PCIe and the GPU numbers as dgx-h100 (H100
        # SXM: NVLink 4, 450 GB/s per GPU; PCIe Gen5 x16). "meta-roce-24k" is the published
        # Llama 3 cluster (8 pods x 192 racks); "meta-roce-32k" a labelled what-if (8 zones
        # x 252 racks, not a published layout)
        System(
            "meta-roce-24k",
            "meta-roce",
            450e9,
            0.0,
            (8, 192, 16),
            3.35e12,
            9.89e14,
            80e9,
            "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.1",
            "the Llama 3 24K cluster: pods x racks x GPUs, "
            "8 GPUs per NVLink server; options zones, racks_per_zone, wiring, hash_seed, "
            "routing",
            (
                "Gangidi et al., RDMA over Ethernet for Distributed Training at Meta "
                "Scale, SIGCOMM 2024",
                DGX_H100_GUIDE,
                NVLINK_PAGE,
                CONNECTX7_MANUAL,
            ),
            pcie_bandwidth=PCIE5_X16,
            nic_bandwidth=NDR_400G,
        ),
        System(
            "meta-roce-32k",
            "meta-roce",
            450e9,
            0.0,
            (8, 252, 16),
            3.35e12,
            9.89e14,
            80e9,
            "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.1",
            "what-if, not a published layout: 8 zones x "
            "252 racks x 16 GPUs, 8 GPUs per NVLink server; options zones, "
            "racks_per_zone, wiring, hash_seed, routing",
            (
                "Gangidi et al., RDMA over Ethernet for Distributed Training at Meta "
                "Scale, SIGCOMM 2024",
                DGX_H100_GUIDE,
                NVLINK_PAGE,
                CONNECTX7_MANUAL,
            ),
            pcie_bandwidth=PCIE5_X16,
            nic_bandwidth=NDR_400G,
            **HOPPER_RATES,
        ),
        System(
            "gb200-nvl72",
            "nvswitch",
            900e9,
            0.0,
            (72,),
            8e12,
            2.5e15,
            186e9,
            NVLINK_PAGE,
            "72 Blackwell GPUs in one NVLink domain (18 compute trays of 4 "
            "GPUs; NCCL treats it as one multi-node NVLink domain, MNNVL)",
            (GB200_NVL72_PAGE,),
            **BLACKWELL_RATES,
        ),
    )
}


def lookup(name: str) -> System:
    """The :class:`System` called ``name`` (``"tpu-v4p"`` is ``"tpu-v4"``), or a
    TopologyError naming the choices."""
    key = str(name).lower()
    if key == "tpu-v4p":
        key = "tpu-v4"
    if key not in SYSTEMS:
        raise TopologyError(
            f"unknown hardware preset {name!r}; choose from {', '.join(sorted(SYSTEMS))}"
        )
    return SYSTEMS[key]


def no_more_options(options: dict, name: str) -> None:
    """Raise if a preset was given options it does not take."""
    if options:
        raise TopologyError(f"preset {name!r} does not take option(s) {', '.join(sorted(options))}")
