"""Meta's RoCE training cluster, built with the one GPU-cluster builder, each number with
its source and every assumption marked.

:func:`meta_cluster`: servers of 8 H100 GPUs joined by NVLink, two per rack (RTSW leaf) of
16 GPUs, AI zones (two-stage non-blocking Clos of RTSWs and CTSW spines), zones joined by
an aggregation tier (ATSW) oversubscribed 7:1. What the sources say, and what is assumed:

* Llama 3 paper (Grattafiori et al., arXiv 2407.21783, section 3.3.1): 24K GPUs on a
  three-layer Clos; a rack holds 16 GPUs (two servers) under one ToR; "each server is
  equipped with eight GPUs and two CPUs. Within a server, the eight GPUs are connected via
  NVLink"; a pod of 192 racks (3,072 GPUs) has full bisection bandwidth; 8 pods; the
  aggregation layer is oversubscribed 1:7; 400 Gb/s between GPUs. ``racks_per_zone=192``
  reproduces it (24,576 GPUs).
* Meta, Networking@Scale 2023 talks and Gangidi et al., "RDMA over Ethernet for Distributed
  AI Training at Meta Scale" (SIGCOMM 2024): the RTSW / CTSW / ATSW names and the AI zone.
  The 32k-GPU layout (252 racks per zone, 8 zones, 18 CTSWs per zone, 18 ATSWs, 7:1 between
  spine and aggregation) is the course's reading of the 2023 talks; **not checked** against
  the talk recordings, which we could not read: treat it as an assumption.
* **Assumed** here: every RTSW has one 400 Gb/s cable to each of its zone's 18 CTSWs
  (18 up for 16 down: spare uplinks, 16:18); every CTSW splits the uplinks that 7:1 allows
  (252 / 7 = 36) evenly over all 18 ATSWs (2 each, "mesh"), or sends all 36 to ATSW i of
  its plane (``wiring="striped"``); every cable 400 Gb/s = 5e10 bytes/s per direction; the
  servers' NVLink and PCIe as a DGX H100's (H100 SXM: 450 GB/s NVLink 4 per GPU, each
  GPU's NIC behind PCIe Gen5 x16; the record "meta-roce-32k" in
  :mod:`collectives.hardware.systems`).

Levels (:data:`collectives.topology.LEVELS`): "nvlink" and "pcie" inside a server, "leaf"
for the GPU NICs' cables to the RTSW, "spine" RTSW-CTSW, "core" CTSW-ATSW. Taught in
chapter "Designing the fabric".
"""

from __future__ import annotations

from typing import Optional

from ..errors import TopologyError
from ..topology import Cluster, Fabric, Tier, gpu_cluster
from ..validation import integer, number
from .systems import SYSTEMS

__all__ = ["meta_cluster", "META_SOURCES", "GBPS_400", "GPUS_PER_SERVER"]

META_SOURCES = (
    "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.1",
    "Gangidi et al., RDMA over Ethernet for Distributed AI Training at Meta Scale, "
    "SIGCOMM 2024",
    "Meta, Networking@Scale 2023 (AI networking edition), talks on RoCE training fabrics",
)
#: 400 Gb/s per port, bytes/s per direction (Llama 3 paper: 400 Gbps interconnects)
GBPS_400 = 400e9 / 8
#: GPUs per Grand Teton server, on NVLink (Llama 3 paper, section 3.3.1)
GPUS_PER_SERVER = 8


def meta_cluster(zones: int = 8, racks_per_zone: int = 252, *, gpus_per_rack: int = 16,
                 spines: int = 18, aggregators: int = 18, oversubscription: float = 7,
                 link_bandwidth: float = GBPS_400, wiring: str = "mesh",
                 hop_latency: float = 0.0, hash_seed: int = 0, routing: str = "hash",
                 gpus_per_server: Optional[int] = GPUS_PER_SERVER,
                 nvlink_latency: float = 0.0, pcie_latency: float = 0.0) -> Cluster:
    """Meta's 3-tier RoCE cluster (module docstring): 8 zones x 252 racks x 16 GPUs =
    32,256 GPUs by default, in NVLink servers of ``gpus_per_server`` (None: the fabric
    only, GPUs straight on their host cables as before the servers were modelled).
    ``oversubscription``: CTSW downlink:uplink capacity; the CTSW uplinks,
    ``racks_per_zone / oversubscription``, must divide evenly over the ``aggregators``
    (mesh) or be whole (striped). ``hop_latency``: seconds per fabric link;
    ``nvlink_latency``, ``pcie_latency``: seconds per link inside a server; ``routing``
    and ``hash_seed``: as :func:`collectives.topology.gpu_cluster`."""
    zones = integer(zones, "zones", minimum=1, error=TopologyError)
    racks = integer(racks_per_zone, "racks_per_zone", minimum=1, error=TopologyError)
    d = number(oversubscription, "oversubscription", positive=True, error=TopologyError)
    up = racks / d
    if abs(up - round(up)) > 1e-9:
        raise TopologyError(f"{racks} racks per zone at {d:g}:1 need {up:g} CTSW uplinks; "
                            f"pick a ratio that gives whole cables")
    up = int(round(up))
    aggregators = integer(aggregators, "aggregators", minimum=1, error=TopologyError)
    if wiring == "mesh":
        if up % aggregators:
            raise TopologyError(f"{up} CTSW uplinks do not split evenly over {aggregators} "
                                f"ATSWs")
        top = Tier(zones, aggregators, up // aggregators)
    else:
        if aggregators % spines:
            raise TopologyError("striped wiring needs the ATSWs to be a multiple of the CTSWs")
        top = Tier(zones, aggregators, up // (aggregators // spines))
    tiers = [Tier(racks, spines)] + ([top] if zones > 1 else [])
    per_rack = integer(gpus_per_rack, "gpus_per_rack", minimum=1, error=TopologyError)
    gpus = zones * racks * per_rack
    name = (f"Meta-style RoCE cluster: {zones} zones x {racks} racks x {per_rack} GPUs = "
            f"{gpus} GPUs")
    fabric = Fabric(per_rack, link_bandwidth, tuple(tiers), wiring=wiring)
    common = dict(network_latency=hop_latency, routing=routing, hash_seed=hash_seed,
                  family="layered", name=name, sources=META_SOURCES)
    if gpus_per_server is None:
        return gpu_cluster(fabric, gpus, 1, **common)
    g = integer(gpus_per_server, "gpus_per_server", minimum=1, error=TopologyError)
    if per_rack % g:
        raise TopologyError(f"a rack of {per_rack} GPUs does not hold whole servers of {g}")
    record = SYSTEMS["meta-roce-32k"]
    return gpu_cluster(fabric, gpus // g, g, nvlink_bandwidth=record.link_bandwidth,
                       pcie_bandwidth=record.pcie_bandwidth, nvlink_latency=nvlink_latency,
                       pcie_latency=pcie_latency, **common)
