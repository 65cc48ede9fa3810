"""Meta's RoCE training cluster, built with the one GPU-cluster builder, each number with
its source and every assumption marked.

:func:`meta_cluster`: servers of 8 H100 GPUs joined by NVLink, two per rack (RTSW leaf) of
16 GPUs, AI zones (two-stage non-blocking Clos of RTSWs and CTSW spines; the Llama 3 paper
calls a zone a *pod*), zones joined by an aggregation tier (ATSW) oversubscribed 1:7.

**The default is the Llama 3 24K cluster, the most detailed layout Meta has published
for a training cluster of its generation.** Its sources, and what they do not give:

* Llama 3 paper (Grattafiori et al., arXiv 2407.21783, section 3.3.1, "Network topology"):
  "each rack hosts 16 GPUs split between two servers and connected by a single Minipack2
  top-of-the-rack (ToR) switch. In the middle layer, 192 such racks are connected by Cluster
  Switches to form a pod of 3,072 GPUs with full bisection bandwidth ... eight such pods ...
  are connected via Aggregation Switches to form a cluster of 24K GPUs. However, network
  connectivity at the aggregation layer ... has an oversubscription ratio of 1:7"; "each
  server is equipped with eight GPUs and two CPUs. Within a server, the eight GPUs are
  connected via NVLink"; 400 Gb/s interconnects between GPUs. :data:`LLAMA3_24K`: 8 pods
  x 192 racks x 16 GPUs = 24,576 GPUs.
* Gangidi et al., "RDMA over Ethernet for Distributed Training at Meta Scale" (SIGCOMM
  2024; Meta's blog post on it says "...for Distributed AI Training...") and Meta's
  engineering post on it: the RTSW / CTSW / ATSW names, the AI zone, CTSWs with "deep
  buffers statically divided over the ports in the chassis".
* **Not published, assumed here**: the number of CTSWs per pod and of ATSWs, and the
  cabling. Every RTSW has one 400 Gb/s cable to each of its pod's 18 CTSWs (18 up for 16
  down): assumed. No count is published for the 400G Llama 3 cluster. Meta's blog post, as
  secondary copies quote it, says that while it pinned paths it upgraded the RTSW uplinks to
  twice the downlinks (``spines=32`` builds that); secondary summaries of the SIGCOMM paper,
  which we could not read, place a redundancy of about 1:1.125 (18 for 16) in the history of
  one 200G AI zone after traffic engineering was deployed. 1:7 at the CTSWs: 192 / 7 = 27.4
  uplinks, which no whole number of cables gives; the preset takes 27 per CTSW (192 / 27 =
  7.11:1) spread over 9 ATSWs (3 cables each, "mesh"). Every cable 400 Gb/s = 5e10 bytes/s
  per direction; the servers' NVLink and PCIe as a DGX H100's (H100 SXM: 450 GB/s NVLink 4
  per GPU, each GPU's NIC behind PCIe Gen5 x16; the record "meta-roce-24k" in
  :mod:`collectives.hardware.systems`).
* **What-if, not Meta's published layout**: :data:`WHAT_IF_32K`, the preset
  "meta-roce-32k": 8 zones of 252 racks (32,256 GPUs), 18 CTSWs per zone, 18 ATSWs, 7:1
  (36 uplinks per CTSW): this course's earlier layout, not taken from any Meta source we
  could check.

Levels (:data:`collectives.topology.LEVELS`): "nvlink" and "pcie" inside a server, "leaf"
for the GPU NICs' cables to the RTSW, "spine" RTSW-CTSW, "core" CTSW-ATSW. Taught in
chapter "Designing the fabric".
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import TopologyError
from ..topology import Cluster, Fabric, Tier, gpu_cluster
from ..validation import integer, number
from .systems import SYSTEMS

__all__ = [
    "meta_cluster",
    "META_SOURCES",
    "GBPS_400",
    "GPUS_PER_SERVER",
    "LLAMA3_24K",
    "WHAT_IF_32K",
    "LAYOUTS",
    "RATIO_TOLERANCE",
]

META_SOURCES = (
    "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.1",
    "Gangidi et al., RDMA over Ethernet for Distributed Training at Meta Scale, SIGCOMM 2024",
    "Engineering at Meta, A RoCE network for distributed AI training at scale, 2024-08-05",
)
#: 400 Gb/s per port, bytes/s per direction (Llama 3 paper: 400 Gbps interconnects)
GBPS_400 = 400e9 / 8
#: GPUs per Grand Teton server, on NVLink (Llama 3 paper, section 3.3.1)
GPUS_PER_SERVER = 8
#: the Llama 3 24K cluster (Llama 3 paper, 3.3.1): 8 pods of 192 racks; 9 ATSWs assumed
LLAMA3_24K = {"zones": 8, "racks_per_zone": 192, "aggregators": 9}
#: a what-if, not a published layout: 8 zones of 252 racks, 18 ATSWs (module docstring)
WHAT_IF_32K = {"zones": 8, "racks_per_zone": 252, "aggregators": 18}
#: the layout behind each preset name of :func:`collectives.hardware.preset`
LAYOUTS = {"meta-roce-24k": LLAMA3_24K, "meta-roce-32k": WHAT_IF_32K}
#: how far the realised CTSW downlink:uplink ratio may be from the one asked for (whole
#: cables only: 192 racks at 7:1 give 27 uplinks, 7.11:1)
RATIO_TOLERANCE = 0.05


def meta_cluster(
    zones: int = 8,
    racks_per_zone: int = 192,
    *,
    gpus_per_rack: int = 16,
    spines: int = 18,
    aggregators: int = 9,
    oversubscription: float = 7,
    link_bandwidth: float = GBPS_400,
    wiring: str = "mesh",
    hop_latency: float = 0.0,
    hash_seed: int = 0,
    routing: str = "hash",
    gpus_per_server: Optional[int] = GPUS_PER_SERVER,
    nvlink_latency: float = 0.0,
    pcie_latency: float = 0.0,
) -> Cluster:
    """Meta's 3-tier RoCE cluster (module docstring): by default the Llama 3 24K cluster,
    8 pods x 192 racks x 16 GPUs = 24,576 GPUs, in NVLink servers of ``gpus_per_server``
    (None: the fabric only, GPUs straight on their host cables as before the servers were
    modelled). ``oversubscription``: CTSW downlink:uplink capacity; each CTSW gets the whole
    number of uplinks nearest ``racks_per_zone / oversubscription`` (the realised ratio is
    ``Cluster.oversubscription``; a TopologyError when it is more than
    :data:`RATIO_TOLERANCE` away), which must divide evenly over the ``aggregators`` (mesh)
    or be whole (striped). ``hop_latency``: seconds per fabric link;
    ``nvlink_latency``, ``pcie_latency``: seconds per link inside a server; ``routing``
    and ``hash_seed``: as :func:`collectives.topology.gpu_cluster`."""
    zones = integer(zones, "zones", minimum=1, error=TopologyError)
    racks = integer(racks_per_zone, "racks_per_zone", minimum=1, error=TopologyError)
    d = number(oversubscription, "oversubscription", positive=True, error=TopologyError)
    exact = racks / d
    up = max(1, int(round(exact)))
    if abs(racks / up - d) > RATIO_TOLERANCE * d:
        raise TopologyError(
            f"{racks} racks per zone at {d:g}:1 need {exact:g} CTSW uplinks; "
            f"the nearest whole number, {up}, gives {racks / up:.3g}:1, more "
            f"than {RATIO_TOLERANCE:.0%} from {d:g}:1: pick a ratio that "
            f"gives whole cables"
        )
    aggregators = integer(aggregators, "aggregators", minimum=1, error=TopologyError)
    if wiring == "mesh":
        if up % aggregators:
            raise TopologyError(f"{up} CTSW uplinks do not split evenly over {aggregators} ATSWs")
        top = Tier(zones, aggregators, up // aggregators)
    else:
        if aggregators % spines:
            raise TopologyError("striped wiring needs the ATSWs to be a multiple of the CTSWs")
        top = Tier(zones, aggregators, up // (aggregators // spines))
    tiers = [Tier(racks, spines)] + ([top] if zones > 1 else [])
    per_rack = integer(gpus_per_rack, "gpus_per_rack", minimum=1, error=TopologyError)
    gpus = zones * racks * per_rack
    name = f"Meta-style RoCE cluster: {zones} zones x {racks} racks x {per_rack} GPUs = {gpus} GPUs"
    fabric = Fabric(per_rack, link_bandwidth, tuple(tiers), wiring=wiring)
    common: dict[str, Any] = dict(
        network_latency=hop_latency,
        routing=routing,
        hash_seed=hash_seed,
        family="layered",
        name=name,
        sources=META_SOURCES,
    )
    if gpus_per_server is None:
        return gpu_cluster(fabric, gpus, 1, **common)
    g = integer(gpus_per_server, "gpus_per_server", minimum=1, error=TopologyError)
    if per_rack % g:
        raise TopologyError(f"a rack of {per_rack} GPUs does not hold whole servers of {g}")
    record = SYSTEMS["meta-roce-24k"]
    return gpu_cluster(
        fabric,
        gpus // g,
        g,
        nvlink_bandwidth=record.link_bandwidth,
        pcie_bandwidth=record.pcie_bandwidth,
        nvlink_latency=nvlink_latency,
        pcie_latency=pcie_latency,
        **common,
    )
