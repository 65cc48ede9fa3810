"""Published fabric designs as :func:`~collectives.fabric.layered` fabrics, each number
with its source and every assumption marked.

:func:`meta_cluster` is Meta's RoCE training cluster: racks (RTSW leaves) of 16 GPUs,
AI zones (two-stage non-blocking Clos of RTSWs and CTSW spines), zones joined by an
aggregation tier (ATSW) oversubscribed 7:1. What the sources say, and what is assumed:

* Llama 3 paper (Grattafiori et al., arXiv 2407.21783, section 3.3.1): 24K GPUs on a
  three-layer Clos; a rack holds 16 GPUs (two servers) under one ToR; a pod of 192 racks
  (3,072 GPUs) has full bisection bandwidth; 8 pods; the aggregation layer is oversubscribed
  1:7; 400 Gb/s between GPUs. ``racks_per_zone=192`` reproduces it (24,576 GPUs).
* Meta, Networking@Scale 2023 talks and Gangidi et al., "RDMA over Ethernet for Distributed
  AI Training at Meta Scale" (SIGCOMM 2024): the RTSW / CTSW / ATSW names and the AI zone.
  The 32k-GPU layout (252 racks per zone, 8 zones, 18 CTSWs per zone, 18 ATSWs, 7:1 between
  spine and aggregation) is the course's reading of the 2023 talks; **not checked** against
  the talk recordings, which we could not read: treat it as an assumption.
* **Assumed** here: every RTSW has one 400 Gb/s cable to each of its zone's 18 CTSWs
  (18 up for 16 down: spare uplinks, 16:18); every CTSW splits the uplinks that 7:1 allows
  (252 / 7 = 36) evenly over all 18 ATSWs (2 each, "mesh"), or sends all 36 to ATSW i of
  its plane (``wiring="striped"``); every cable 400 Gb/s = 5e10 bytes/s per direction.
"""

from __future__ import annotations

from ..errors import TopologyError
from ..validation import integer, number
from .layered import Tier, layered

__all__ = ["meta_cluster", "META_SOURCES"]

META_SOURCES = (
    "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.1",
    "Gangidi et al., RDMA over Ethernet for Distributed AI Training at Meta Scale, "
    "SIGCOMM 2024",
    "Meta, Networking@Scale 2023 (AI networking edition), talks on RoCE training fabrics",
)
#: 400 Gb/s per port, bytes/s per direction (Llama 3 paper: 400 Gbps interconnects)
GBPS_400 = 400e9 / 8


def meta_cluster(zones=8, racks_per_zone=252, *, gpus_per_rack=16, spines=18,
                 aggregators=18, oversubscription=7, link_bandwidth=GBPS_400,
                 wiring="mesh", hop_latency=0.0, hash_seed=0):
    """Meta's 3-tier RoCE cluster (module docstring): 8 zones x 252 racks x 16 GPUs =
    32,256 GPUs by default. ``oversubscription``: CTSW downlink:uplink capacity; the CTSW
    uplinks, ``racks_per_zone / oversubscription``, must divide evenly over the
    ``aggregators`` (mesh) or be whole (striped)."""
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
    gpus = zones * racks * gpus_per_rack
    return layered(gpus_per_rack, link_bandwidth, tiers, wiring=wiring,
                   hop_latency=hop_latency, hash_seed=hash_seed, sources=META_SOURCES,
                   name=f"Meta-style RoCE cluster: {zones} zones x {racks} racks x "
                        f"{gpus_per_rack} GPUs = {gpus} GPUs")
