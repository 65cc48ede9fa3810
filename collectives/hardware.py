"""Hardware presets: topologies built from published numbers, each with its source.

``preset(name, **options)`` returns a :class:`~collectives.topology.Topology`;
``presets()`` lists the names; ``spec(name)`` gives the numbers behind a preset.

Sources (cite these, with their versions, in the book):

* TPU: The Scaling Book, "How to Think About TPUs", jax-ml.github.io/scaling-book/tpus,
  version of 2026-07 (older versions give other ICI numbers: v5e 5e10, v5p 1e11 one-way).
* NVLink: NVIDIA DGX H100 and DGX B200 user guides and the NVLink product page
  (nvidia.com/en-us/data-center/nvlink); H100: 18 NVLink 4 links x 25 GB/s per direction.

Modelled: chip-to-chip links and their one-way bandwidth, ICI hop latency, which torus axes
wrap around. Left out: DCN and PCIe paths, NVLink latency (not published: it defaults to
0 and can be given), link-level protocol overheads (NCCL reaches about 370 of 450 GB/s on
H100 NVLink: nccl-tests issue #212, NCCL issue #1455).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .errors import TopologyError
from .topology import product, switch, torus
from .validation import integer

if TYPE_CHECKING:
    from .topology import Topology

__all__ = ["System", "preset", "presets", "spec", "tpu_wraparound", "tpu_hosts"]

SCALING_BOOK_TPUS = "https://jax-ml.github.io/scaling-book/tpus/ (2026-07 version)"
NVLINK_PAGE = "https://www.nvidia.com/en-us/data-center/nvlink/"
DGX_H100_GUIDE = "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html"
DGX_B200_GUIDE = "https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html"


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
        System("dgx-h100", "nvswitch", 450e9, 0.0, (8,), 3.35e12, 9.89e14, 80e9,
               DGX_H100_GUIDE, "8 H100 SXM on 4 NVSwitches (modelled as one crossbar)",
               (NVLINK_PAGE,)),
        System("dgx-b200", "nvswitch", 900e9, 0.0, (8,), 8e12, 2.25e15, 180e9,
               DGX_B200_GUIDE, "8 B200 on NVLink 5 switches", (NVLINK_PAGE,)),
        System("gb200-nvl72", "nvswitch", 900e9, 0.0, (72,), 8e12, 2.5e15, 186e9,
               NVLINK_PAGE, "72 Blackwell GPUs in one NVLink domain"),
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
                            f"({system.source})" if system.kind != "nvswitch" else
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


def preset(name: str, **options: Any) -> Topology:
    """A Topology for hardware preset ``name`` (see :func:`presets`).

    TPU options: ``shape`` (the slice, default the full pod), ``wraparound`` (override
    the published rule), ``hop_latency`` (seconds per link), ``slices`` (multislice: that many
    copies of the slice joined over the data-center network) and ``dcn_latency`` (seconds;
    default 0, not published). GPU options: ``n`` (GPUs on the NVLink switch, default the
    whole domain), ``hop_latency`` (default 0: not published).

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
    else:
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
    return topo.with_info(name=f"{system.name} {topo.name}", system=system,
                          sources=(system.source, *system.extra_sources))


def _no_more(options, name):
    if options:
        raise TopologyError(f"preset {name!r} does not take option(s) {', '.join(sorted(options))}")
