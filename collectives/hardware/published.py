"""Published measurements the course cites, each beside the package's prediction for the
same case: the registry behind the book's page "How far to trust the model".

A :class:`Measurement` names the case, its source (a URL), the published value and its
unit, the function that computes the package's prediction in the same unit (at the line
rate, and where it differs at the effective rate of :mod:`collectives.hardware.systems`),
and the reason for the difference. The page calls :func:`table` at build time and asserts
every ratio, so a change of the model that moves a row shows there.

What a row compares: a published plateau (nccl-tests' busbw for large buffers) or count
against the model's number for the same collective, hardware and size. ``kind`` says what
the published figure is: ``"measured"`` (a run someone reports) or ``"expected"`` (what a
maintainer says a system should reach, which is not a run). ``nccl_estimate``, where given,
is NCCL 2.30.7's own tuner bound for the same case (its constants in ``src/graph/tuning.cc``), a
third comparator that is neither a measurement nor the model. What a row leaves out: the
measurement's spread (most sources give one run), and any case the model cannot express
(latency of small messages: the presets' latency is 0, not published).

Sections: ``GPU_ROWS`` (the GPU chapters: one node, across nodes) and ``TPU_ROWS`` (the TPU
chapter; appended by its own authors). :data:`MEASUREMENTS` is both, in that order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from ..algorithms import (
    chain_all_gather,
    nccl_ring_all_reduce,
    nccl_tree_all_reduce,
    nvls_all_reduce,
    nvls_tree_all_reduce,
    ring_all_reduce,
    sharp_all_reduce,
    torus_all_gather,
)
from ..cost import busbw, time
from ..errors import CollectivesError, TopologyError
from ..measures import bisection_bandwidth
from ..mesh import Mesh
from .presets import preset
from .systems import lookup

__all__ = [
    "Measurement",
    "GPU_ROWS",
    "TPU_ROWS",
    "MEASUREMENTS",
    "table",
    "lookup_row",
    "NVLS_SWEEP_1455",
    "nvls_busbw",
    "ring_busbw",
    "GB",
    "KINDS",
    "NVLSTREE_PER_CHANNEL_CAP_HOPPER",
    "nccl_nvls_tree_cap",
    "sharp_fraction",
    "rail_leaves",
    "nic_busbw",
    "cross_node_busbws",
    "cross_node_busbw",
    "SCALING_BOOK_PROFILES",
    "v5e_chain_gather_seconds",
    "pod_bisection",
    "pod_port_sum",
    "SCALING_BOOK_RING_FRACTION",
    "v5e_ring_gather_link_rate",
]

GB = 1e9
#: buffer for the bandwidth plateaus: nccl-tests' large sizes (NCCL #1455 runs -b 2G -e 4G)
PLATEAU_BYTES = 2**31
#: segments that let the in-switch schedules overlap up and down (the chapters use 256)
SEGMENTS = 256

NCCLTESTS_212 = "https://github.com/NVIDIA/nccl-tests/issues/212"
NCCL_1455 = "https://github.com/NVIDIA/nccl/issues/1455"
NCCL_2140 = "https://github.com/NVIDIA/nccl/issues/2140"
NCCLTESTS_267 = "https://github.com/NVIDIA/nccl-tests/issues/267"
NCCLTESTS_309 = "https://github.com/NVIDIA/nccl-tests/issues/309"
NCCL_1221 = "https://github.com/NVIDIA/nccl/issues/1221"
NCCLTESTS_319 = "https://github.com/NVIDIA/nccl-tests/issues/319"
GRAHAM_2020 = "https://doi.org/10.1007/978-3-030-50743-5_3"
#: what a row's published figure is (module docstring)
KINDS = ("measured", "expected")
#: NCCL 2.30.7, src/graph/tuning.cc, perChMaxNVLSTreeBws for Hopper, GB/s of busbw per
#: channel, by the tuner's node-count column: 1 node (NVLSTree is off), 2 nodes, 3 or more
NVLSTREE_PER_CHANNEL_CAP_HOPPER = {1: 0.0, 2: 57.7, 4: 45.5}

#: NCCL issue #1455 (8 x H100 SXM, "NCCL_ALGO=[ALGO] ./all_reduce_perf -b 2G -e 4G -f 2 -g
#: [gpus]"): NVLS busbw by number of GPUs, GB/s. "when using ALGO=NVLS ... Busbw remains
#: about 365-370 GBps when gpus from 2 to 4. However, Busbw increase from 370 to 420, 440,
#: 460, and 480 GBps when gpus increase from 4 to 5, 6, 7, and 8"; the ring is "about
#: 365-370 GBps when gpus from 2 to 8". 367.5: the middle of 365-370. (The issue's own
#: algbw at 5 GPUs, 258 GB/s, gives 258 x 8/5 = 413 GB/s busbw, not the 420 it reports; the
#: row keeps the reported busbw.)
NVLS_SWEEP_1455 = {2: 367.5, 3: 367.5, 4: 367.5, 5: 420.0, 6: 440.0, 7: 460.0, 8: 480.0}


@dataclass(frozen=True)
class Measurement:
    """One published figure and the package's prediction of it.

    ``value`` is in ``unit``; ``predict()`` returns the package's number in the same unit at
    the line rate, ``predict_effective()`` (None: the same as ``predict``) at the effective
    rate. ``reason`` says why the two differ; ``section`` groups the rows on the page;
    ``kind`` is "measured" (a reported run) or "expected" (a maintainer's expected value);
    ``nccl_estimate`` (None: not given) is NCCL 2.30.7's own tuner bound for the case, same
    unit (the run may have used an older NCCL: the reason says)."""

    case: str
    system: str
    source: str
    value: float
    unit: str
    predict: Callable[[], float]
    reason: str
    section: str = "GPU, one node"
    predict_effective: Optional[Callable[[], float]] = None
    kind: str = "measured"
    nccl_estimate: Optional[float] = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise CollectivesError(
                f"row {self.case!r}: kind must be one of {', '.join(KINDS)}; got {self.kind!r}"
            )

    def prediction(self, rates: str = "line") -> float:
        """The package's number for this case at ``rates`` ("line" or "effective")."""
        if rates not in ("line", "effective"):
            raise CollectivesError(f"rates must be 'line' or 'effective'; got {rates!r}")
        if rates == "effective" and self.predict_effective is not None:
            return float(self.predict_effective())
        return float(self.predict())

    def ratio(self, rates: str = "line") -> float:
        """Measured over predicted (below 1: the model is optimistic)."""
        return self.value / self.prediction(rates)


# ---- the predictions -----------------------------------------------------------------------


def ring_busbw(n: int = 8, system: str = "dgx-h100", rates: str = "line") -> float:
    """The model's ring all-reduce busbw (GB/s) on ``n`` GPUs of one node of ``system``."""
    topo = (
        preset(system, rates=rates) if system != "gb200-nvl72" else preset(system, n=n, rates=rates)
    )
    t = time(ring_all_reduce(n), topo, PLATEAU_BYTES, placement=list(range(n)))
    return busbw("all_reduce", PLATEAU_BYTES, t.seconds, n) / GB


def nvls_busbw(n: int = 8, system: str = "dgx-h100", rates: str = "line") -> float:
    """The model's NVLS all-reduce busbw (GB/s, nccl-tests' ring factor 2(n-1)/n) on ``n``
    GPUs of one NVSwitch node of ``system``, pipelined in 256 segments."""
    topo = preset(system, rates=rates)
    t = time(nvls_all_reduce(n, n_segments=SEGMENTS), topo, PLATEAU_BYTES, placement=list(range(n)))
    return busbw("all_reduce", PLATEAU_BYTES, t.seconds, n) / GB


def nic_busbw(rates: str = "line") -> float:
    """The model's all-reduce busbw (GB/s) of a ring along one rail of two DGX H100 nodes
    (GPU 0 of each): what one NIC carries, as nccl-tests' per-NIC figure counts it."""
    topo = preset("dgx-h100", nodes=2, rates=rates)
    t = time(ring_all_reduce(2), topo, PLATEAU_BYTES, placement=[0, 8])
    return busbw("all_reduce", PLATEAU_BYTES, t.seconds, 2) / GB


def cross_node_busbws(nodes: int, rates: str = "line") -> dict[str, float]:
    """The model's all-reduce busbw (GB/s) over ``nodes`` DGX H100 nodes (PXN on) for each
    of NCCL's cross-node algorithms the package builds: "Ring" (8 channels), "Tree"
    (8 channels, 64 segments) and "NVLSTree" (64 segments)."""
    g = 8
    topo = preset("dgx-h100", nodes=nodes, pxn=True, rates=rates)
    schedules = {
        "Ring": nccl_ring_all_reduce(nodes, g, n_channels=g),
        "Tree": nccl_tree_all_reduce(nodes, g, n_segments=64, n_channels=g),
        "NVLSTree": nvls_tree_all_reduce(nodes, g, n_segments=64),
    }
    return {
        name: busbw("all_reduce", PLATEAU_BYTES, time(s, topo, PLATEAU_BYTES).seconds, nodes * g)
        / GB
        for name, s in schedules.items()
    }


def cross_node_busbw(nodes: int, rates: str = "line") -> float:
    """The best of :func:`cross_node_busbws`: NCCL's tuner also runs the fastest it models."""
    return max(cross_node_busbws(nodes, rates).values())


def nccl_nvls_tree_cap(nodes: int, channels: int = 8) -> float:
    """NCCL's own ceiling on NVLSTree all-reduce busbw (GB/s) over ``nodes`` H100 nodes:
    ``channels`` times the tuner's per-channel cap ``perChMaxNVLSTreeBws`` (Hopper: 57.7 on
    2 nodes, 45.5 on 3 or more; NCCL 2.30.7 ``src/graph/tuning.cc``, applied as
    ``bw = min(intraBw, interBw, perChMaxNVLSTreeBw)``, then ``busBw = nChannels * bw``).
    The NVLS graph has at most one channel per GPU (``search.cc``: ``maxChannels =
    min(NCCL_MAX_NVLS_ARITY, GPU count)``), 8 heads on 8 H100s (NCCL issue #1453 logs 8 on
    8 x H100 virtual machines); that the runs compared used 8 is inferred, not logged. An
    upper bound of NCCL's estimate, not a measurement; the cap is in NCCL since 2.28 (not in
    2.26 or 2.27)."""
    if nodes < 2:
        raise CollectivesError(f"NVLSTree runs on 2 or more nodes; got nodes={nodes!r}")
    return channels * NVLSTREE_PER_CHANNEL_CAP_HOPPER[2 if nodes <= 2 else 4]


def sharp_fraction(rates: str = "line", n_nodes: int = 8, n_segments: int = 64) -> float:
    """The model's streamed SHARP all-reduce along one rail of ``n_nodes`` DGX H100 nodes
    (GPU 0 of each, reduced in the rail's leaf, ``n_segments`` segments) as a fraction of the
    NIC's line rate: algbw / 50 GB/s, k/(k+1) at the line rate (64/65 = 0.985)."""
    topo = preset("dgx-h100", nodes=n_nodes, rates=rates)
    rails = Mesh({"node": n_nodes, "gpu": 8})  # the "node" groups are the rails
    schedule = rails.collective(sharp_all_reduce(n_nodes, n_segments=n_segments), "node")
    t = time(schedule, topo, PLATEAU_BYTES, switch_placement=rail_leaves(topo))
    nic = topo.system.nic_bandwidth if topo.system is not None else None
    if nic is None:
        raise TopologyError(f"{topo.name} declares no NIC bandwidth")
    return PLATEAU_BYTES / t.seconds / nic


def rail_leaves(topo) -> list[int]:
    """The leaf switch of each rail of a cluster of 8-GPU nodes in one scalable unit (found on
    the route from GPU r of node 0 to GPU r of node 1)."""
    leaf = topo.info.levels.index("leaf")
    out = []
    for rail in range(8):
        up = [link for link in topo.route(rail, 8 + rail) if topo.link_level[link] == leaf][0]
        out.append(int(topo.link_dst[up]))
    return out


def _sweep_row(n: int) -> Measurement:
    if n <= 4:
        reason = (
            "the user forced NVLS (the issue's 'NCCL_ALGO=[ALGO]'); no log in the thread "
            "shows what NCCL ran. The measurement equals the ring's, where the model's "
            "NVLS is slower than its ring at 2 GPUs (2(n-1)/(n+1) = 0.67), equal at 3 "
            "and 1.2x at 4. At 2 GPUs it is above the model's NVLS bound even at the "
            "line rate (algbw 367.5 against 300 GB/s), so the model's (1 + 1/n) S per "
            "link and direction is contradicted there; no source explains it"
        )
    else:
        reason = (
            "as on 8 GPUs: NCCL's tuner expects less of NVLS (efficiency 0.85 on Hopper, "
            "tuning.cc), copies into NCCL's multicast buffers, NVLink packet overhead"
        )
        if n == 5:
            reason += (
                "; the issue's own algbw at 5 GPUs (258 GB/s) gives 413 GB/s busbw, not "
                "the 420 it reports"
            )
    return Measurement(
        case=f"NVLS all-reduce busbw, {n} GPUs",
        system="n x H100 SXM, one node",
        source=NCCL_1455,
        value=NVLS_SWEEP_1455[n],
        unit="GB/s busbw",
        predict=lambda: nvls_busbw(n),
        predict_effective=lambda: nvls_busbw(n, rates="effective"),
        reason=reason,
        section="GPU, one node: NVLS by number of GPUs",
    )


NVLINK_REASON = (
    "NVLink packet overhead, which NCCL plans with as SM90_NVLINK_BW 20.6 GB/s per "
    "link (src/graph/topo.h): 18 x 20.6 = 370.8. NCCL's maintainers attribute the "
    "A100 equivalent (about 20 of 25 GB/s) to the SMs' 128-byte payloads and the "
    "overhead of bidirectional traffic (nccl-tests #149, #258); no source states "
    "how the Hopper figure was derived"
)

GPU_ROWS: tuple[Measurement, ...] = (
    Measurement(
        case="ring all-reduce busbw, 8 GPUs",
        system="DGX H100 (8 x H100 SXM)",
        source=NCCLTESTS_212,
        value=370.0,
        unit="GB/s busbw",
        kind="expected",
        predict=lambda: ring_busbw(8),
        predict_effective=lambda: ring_busbw(8, rates="effective"),
        reason=(
            "a maintainer's expected value ('NCCL can get an effective NVLink bandwidth of "
            "370GB/s'), which users measure too (NCCL #1455: 365-370; NCCL #2140: 370). "
            + NVLINK_REASON
        ),
    ),
    Measurement(
        case="NVLS all-reduce busbw, 8 GPUs",
        system="DGX H100 (8 x H100 SXM)",
        source=NCCLTESTS_212,
        value=480.0,
        unit="GB/s busbw",
        kind="expected",
        predict=lambda: nvls_busbw(8),
        predict_effective=lambda: nvls_busbw(8, rates="effective"),
        reason=(
            "a maintainer's expected value ('you should reach a peak busBw of ~480GB/s'), "
            "which users measure too (NCCL #1455, #2140). Beyond the packet overhead: "
            "NCCL's tuner expects less of NVLS (efficiency 0.85 on Hopper, applied to its "
            "own per-channel estimate in tuning.cc; what it stands for physically is not "
            "published), its kernels copy unregistered buffers into and out of NCCL's "
            "multicast buffers, and the switch's reduction rate; not separated by any "
            "source"
        ),
    ),
    Measurement(
        case="ring all-reduce busbw, 8 GPUs",
        system="8 x B300 (NVLink 5)",
        source=NCCL_2140,
        value=695.0,
        unit="GB/s busbw",
        predict=lambda: ring_busbw(8, "dgx-b200"),
        predict_effective=lambda: ring_busbw(8, "dgx-b200", rates="effective"),
        reason=(
            "NVLink 5 packet overhead: SM100_NVLINK_BW 40.1 GB/s per link in NCCL's "
            "topo.h, 18 x 40.1 = 721.8; the B300 is modelled by the dgx-b200 preset "
            "(same NVLink 5, 900 GB/s per GPU)"
        ),
    ),
    Measurement(
        case="NVLS all-reduce busbw, 8 GPUs",
        system="8 x B300 (NVLink 5)",
        source=NCCL_2140,
        value=845.0,
        unit="GB/s busbw",
        predict=lambda: nvls_busbw(8, "dgx-b200"),
        predict_effective=lambda: nvls_busbw(8, "dgx-b200", rates="effective"),
        reason=(
            "as on H100; NCCL's Blackwell NVLS efficiency factor is lower still (0.74, tuning.cc)"
        ),
    ),
    *(_sweep_row(n) for n in sorted(NVLS_SWEEP_1455)),
    Measurement(
        case="ring busbw per 400 Gb/s NIC",
        system="ConnectX-7 at 400 Gb/s (maintainers' expectation)",
        source=NCCLTESTS_267,
        value=48.5,
        unit="GB/s per NIC",
        kind="expected",
        predict=lambda: nic_busbw(),
        predict_effective=lambda: nic_busbw("effective"),
        reason=(
            "not a run: nccl-tests' maintainers expect 48-49 GB/s per NDR NIC (#267, a RoCE "
            "thread), 46-48 (#290) or about 48 (#319); 48.5 is the upper end of that. The "
            "payload rate below the 400 Gb/s line rate (headers, flow control). The "
            "effective rate is this figure, so its ratio is 1 by construction"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="ring all-reduce busbw, 2 or more nodes",
        system="H100 nodes, 8 x CX-7 400 Gb/s",
        source=NCCLTESTS_319,
        value=396.0,
        unit="GB/s busbw",
        kind="expected",
        predict=lambda: cross_node_busbws(2)["Ring"],
        predict_effective=lambda: cross_node_busbws(2, "effective")["Ring"],
        reason=(
            "a maintainer's expected value ('around 48GB/s from each CX7 NIC ... up to "
            "~396GB/s with the RING protocol'). The model's 8-channel ring is bound by the "
            "8 NICs at the line rate (400) and by NVLink at the effective rate (370.8: every "
            "channel's hop out of a node crosses NVLink to the GPU of its NIC, PXN), so the "
            "effective model is pessimistic here; the source does not say which part of "
            "the model's NVLink load a real ring avoids"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="all-reduce busbw, 2 nodes (16 GPUs)",
        system="2 HGX H100 hosts, 8 x 400G NICs each",
        source=NCCLTESTS_309,
        value=470.0,
        unit="GB/s busbw",
        nccl_estimate=nccl_nvls_tree_cap(2),
        predict=lambda: cross_node_busbw(2),
        predict_effective=lambda: cross_node_busbw(2, "effective"),
        reason=(
            "the algorithm is not logged, but NCCL's maintainers name it: on 2 nodes NCCL "
            "uses Tree or NVLSTree (nccl-tests #196, NCCL #946, nccl-tests #319), and 470 "
            "is above any ring's 400 (8 NICs x 50 GB/s). NCCL 2.28 and later cap NVLSTree "
            "at 8 x 57.7 = 461.6 GB/s here (tuning.cc), within 2 % of the run; the run used "
            "NCCL 2.26.2, which had no such cap, so the cap was perhaps fitted to runs like "
            "it (an inference). The model's best is its NVLSTree, bound by its NVLS node "
            "phases, far above both: 34 % optimistic at the line rate"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="all-reduce busbw, 2 nodes, MLNX_OFED",
        system="2 Supermicro HGX H100, 8 x CX-7 IB",
        source=NCCLTESTS_319,
        value=450.0,
        unit="GB/s busbw",
        nccl_estimate=nccl_nvls_tree_cap(2),
        predict=lambda: cross_node_busbw(2),
        predict_effective=lambda: cross_node_busbw(2, "effective"),
        reason=(
            "'with MLNX_OFED we can get at least 450 GB/s' (the issue is about DOCA giving "
            "less; NCCL 2.26.2); algorithm not stated, above any ring's 400 as the 470 of "
            "#309, and below the NVLSTree cap of 461.6 of later NCCL versions"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="all-reduce busbw, 4 nodes (32 GPUs)",
        system="4 HGX H100 hosts, 8 x 400G NICs each",
        source=NCCLTESTS_309,
        value=365.84,
        unit="GB/s busbw",
        nccl_estimate=nccl_nvls_tree_cap(4),
        predict=lambda: cross_node_busbw(4),
        predict_effective=lambda: cross_node_busbw(4, "effective"),
        reason=(
            "algorithm not stated. NCCL 2.28 and later cap NVLSTree on 3 or more nodes at "
            "8 x 45.5 = 364 GB/s (tuning.cc), within 1 % of the run (NCCL 2.26.2, without "
            "the cap); the model's best is "
            "its Ring, 400 (NICs) at the line rate and 370.8 (NVLink) at the effective "
            "rate, its NVLSTree and Tree heads with two children carrying as much as a "
            "ring. The 4-node run is on virtual machines (its command loads a VM topology "
            "file)"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="all-reduce busbw, 2 nodes, NVLS on",
        system="2 x 8 H100, 8 x 400G RoCE each",
        source=NCCL_1221,
        value=430.0,
        unit="GB/s busbw",
        nccl_estimate=nccl_nvls_tree_cap(2),
        predict=lambda: cross_node_busbw(2),
        predict_effective=lambda: cross_node_busbw(2, "effective"),
        reason=(
            "RoCE rather than InfiniBand (the model's fabric is the same), NCCL 2.19.3, "
            "whose tuner constants may differ from 2.30.7's. The issue reports 330 -> 430 "
            "GB/s with NVLS on 'single nodes or 2 nodes'; the row reads 430 as the 2-node "
            "figure, the only reading consistent with one node's 370/480"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="all-reduce busbw, 4 nodes, NVLS on",
        system="4 x 8 H100, 8 x 400G RoCE each",
        source=NCCL_1221,
        value=320.0,
        unit="GB/s busbw",
        nccl_estimate=nccl_nvls_tree_cap(4),
        predict=lambda: cross_node_busbw(4),
        predict_effective=lambda: cross_node_busbw(4, "effective"),
        reason=(
            "on more than 2 nodes NVLS on or off gave the same 320 GB/s there, as the "
            "model's NVLSTree gains nothing over its Ring from 4 nodes on; RoCE, whose "
            "payload rate the model does not know, NCCL 2.19.3"
        ),
        section="GPU, across nodes",
    ),
    Measurement(
        case="streamed SHARP all-reduce bandwidth",
        system="HDR InfiniBand switches (MPI_Allreduce)",
        source=GRAHAM_2020,
        value=0.95,
        unit="fraction of network bandwidth",
        predict=lambda: sharp_fraction(),
        predict_effective=lambda: sharp_fraction("effective"),
        reason=(
            "Graham et al. 2020 (abstract): 'MPI_Allreduce() bandwidth measured on an HDR "
            "InfiniBand based system achieves about 95% of network bandwidth'. The model's "
            "SHARP in the rail leaf, streamed in 64 segments, reaches 64/65 of the link at "
            "the line rate; at the effective rate the NIC's 48.5 of 50 GB/s (an NDR figure, "
            "assumed to carry over to HDR) takes 3 % more"
        ),
        section="InfiniBand SHARP",
    ),
)

# ---- TPU: The Scaling Book's profiles and Google's published pod figures ---------------------
# (appended by the TPU chapter's authors; chapter "TPU cluster topology")

SCALING_BOOK_SHARDING_URL = "https://jax-ml.github.io/scaling-book/sharding/"
GCLOUD_TPU_V4 = "https://cloud.google.com/tpu/docs/v4"
GCLOUD_TPU_V5E = "https://cloud.google.com/tpu/docs/v5e"
GCLOUD_TPU_V6E = "https://cloud.google.com/tpu/docs/v6e"
#: The Scaling Book's profiles ("Sharded matrices", worked problem on AllGather_Y of a v5e
#: slice with mesh {'X': 8, 'Y': 4}): bfloat16 [2048, 8192] gathered in 680 us, [256, 256] in
#: about 8 us. Neither axis of an 8 x 4 v5e slice wraps: Y is a chain of 4.
SCALING_BOOK_PROFILES = {(2048, 8192): 680e-6, (256, 256): 8e-6}
#: The Scaling Book's measured all-gather on a v5e 8 x 16 slice, sharded along the 16-chip
#: axis ("a full bidirectional ring"; "Sharded matrices", the note on ICI latency): "we not
#: only achieve about 95% of the peak claimed bandwidth (4.5e10) but also ... this peak at
#: about 10MB". The figure is a link rate "calculated according to the known cost of the
#: collective"; the book does not write that cost out.
SCALING_BOOK_RING_FRACTION = 0.95


def v5e_chain_gather_seconds(rows: int, cols: int) -> float:
    """The model's time of The Scaling Book's profiled all-gather: a bfloat16 [rows, cols]
    array gathered along Y of mesh {'X': 8, 'Y': 4} on a v5e 8 x 4 slice (chains of 4)."""
    topo = preset("tpu-v5e", shape=(8, 4))
    mesh = Mesh({"X": 8, "Y": 4})
    schedule = mesh.collective(chain_all_gather(4), "Y")
    return time(schedule, topo, 2 * rows * cols, placement=mesh.placement).seconds


def _profile_row(rows: int, cols: int, reason: str) -> Measurement:
    nbytes = 2 * rows * cols
    measured = SCALING_BOOK_PROFILES[rows, cols]
    return Measurement(
        case=f"all-gather along a 4-chip chain, bf16 [{rows}, {cols}] "
        f"(profiled {measured * 1e6:.0f} us)",
        system="TPU v5e 8 x 4 slice",
        source=SCALING_BOOK_SHARDING_URL,
        value=nbytes / measured / GB,
        unit="GB/s gathered (bytes / profiled time)",
        predict=lambda: nbytes / v5e_chain_gather_seconds(rows, cols) / GB,
        reason=reason,
        section="TPU",
    )


def v5e_ring_gather_link_rate(nbytes: float = PLATEAU_BYTES) -> float:
    """The model's one-way link rate, GB/s, in an all-gather of ``nbytes`` along the 16-chip
    (wrapped) axis of a v5e 8 x 16 slice: the bytes each link direction carries,
    (m - 1) / (2m) of the buffer on the latency-optimal ring of m = 16, over the time."""
    topo = preset("tpu-v5e", shape=(8, 16))
    m = 16
    if topo.wraparound is None:
        raise TopologyError(f"{topo.name} declares no wraparound")
    schedule = torus_all_gather((8, 16), axes=(1,), wraparound=topo.wraparound)
    seconds = time(schedule, topo, nbytes).seconds
    return (m - 1) / (2 * m) * nbytes / seconds / GB


def pod_bisection(name: str) -> float:
    """The model's bisection bandwidth of a full pod of TPU preset ``name``, TB/s one way
    (:func:`collectives.measures.bisection_bandwidth`)."""
    return bisection_bandwidth(preset(name)) / 1e12


def pod_port_sum(name: str) -> float:
    """Every ICI port of every chip of a full pod of ``name`` at its one-way link rate, TB/s:
    what Google's "all-reduce bandwidth per pod" adds up."""
    system = lookup(name)
    if system.ici_links is None:
        raise TopologyError(f"{name} is not a TPU preset: it has no ICI links")
    return math.prod(system.default_shape) * system.ici_links * system.link_bandwidth / 1e12


_GOOGLE_COUNT = (
    "Google's figure is consistent with counting the torus cut one way per port at "
    "its own per-port rate ({} GB/s: its {} GB/s of bidirectional ICI per chip "
    "over 4 ports), or equally a mesh cut of half the links both ways; the page "
    "does not say. The model counts the torus cut at The Scaling Book's {} GB/s, "
    "which notes that ICI links 'have slightly different bandwidths depending on "
    "the operation being performed'"
)

TPU_ROWS: tuple[Measurement, ...] = (
    _profile_row(
        2048,
        8192,
        "bandwidth-bound: the model runs every link at The Scaling Book's "
        "45 GB/s one way; the book puts the gap down to not reaching the "
        "theoretical bandwidth",
    ),
    _profile_row(
        256,
        256,
        "latency-bound: three hops at the presets' assumed 1 us (The Scaling "
        "Book's 'typically around 1us'; Google publishes no ICI latency); "
        "the measured fixed cost per step is larger",
    ),
    Measurement(
        case="all-gather link rate along a 16-chip ring, 10 MB and above",
        system="TPU v5e 8 x 16 slice",
        source=SCALING_BOOK_SHARDING_URL,
        value=SCALING_BOOK_RING_FRACTION * lookup("tpu-v5e").link_bandwidth / GB,
        unit="GB/s per link, one way",
        predict=v5e_ring_gather_link_rate,
        reason=(
            "The Scaling Book measures 'about 95% of the peak claimed bandwidth "
            "(4.5e10)', from about 10 MB; the model runs every link at the full "
            "45 GB/s (2 GB gathered: the latency is negligible). How the book turns "
            "gathered bytes into a link rate is not written out; the model counts "
            "the (m-1)/(2m) of the buffer each link direction carries"
        ),
        section="TPU",
    ),
    Measurement(
        case="pod bisection bandwidth",
        system="TPU v4 pod, 16 x 16 x 16",
        source=GCLOUD_TPU_V4,
        value=24.0,
        unit="TB/s",
        predict=lambda: pod_bisection("tpu-v4"),
        section="TPU: Google's pod figures",
        reason=(
            "the v4 page gives no per-chip ICI figure; 24 TB/s over the 512 links "
            "of the cut is 46.9 GB/s per link, against the model's 45"
        ),
    ),
    Measurement(
        case="pod bisection bandwidth",
        system="TPU v5e pod, 16 x 16",
        source=GCLOUD_TPU_V5E,
        value=1.6,
        unit="TB/s",
        predict=lambda: pod_bisection("tpu-v5e"),
        section="TPU: Google's pod figures",
        reason=_GOOGLE_COUNT.format(50, 400, 45) + ": 32 x 50 against 32 x 45",
    ),
    Measurement(
        case="pod bisection bandwidth",
        system="TPU v6e pod, 16 x 16",
        source=GCLOUD_TPU_V6E,
        value=3.2,
        unit="TB/s",
        predict=lambda: pod_bisection("tpu-v6e"),
        section="TPU: Google's pod figures",
        reason=_GOOGLE_COUNT.format(100, 800, 90) + ": 32 x 100 against 32 x 90",
    ),
    Measurement(
        case="all-reduce bandwidth per pod",
        system="TPU v4 pod, 16 x 16 x 16",
        source=GCLOUD_TPU_V4,
        value=1100.0,
        unit="TB/s",
        predict=lambda: pod_port_sum("tpu-v4"),
        section="TPU: Google's pod figures",
        reason=(
            "consistent with a sum of every port's one-way rate (4096 chips x 6 "
            "ports), not the speed of an all-reduce; any rate from 42.7 to 46.8 "
            "GB/s per port rounds to 1.1 PB/s, so the match at 45 confirms little "
            "(the 24 TB/s bisection asks for 45.9 to 47.9)"
        ),
    ),
    Measurement(
        case="all-reduce bandwidth per pod",
        system="TPU v5e pod, 16 x 16",
        source=GCLOUD_TPU_V5E,
        value=51.2,
        unit="TB/s",
        predict=lambda: pod_port_sum("tpu-v5e"),
        section="TPU: Google's pod figures",
        reason=(
            "256 chips x 4 ports x 50 GB/s one way: Google's per-port rate, against the model's 45"
        ),
    ),
    Measurement(
        case="all-reduce bandwidth per pod",
        system="TPU v6e pod, 16 x 16",
        source=GCLOUD_TPU_V6E,
        value=102.4,
        unit="TB/s",
        predict=lambda: pod_port_sum("tpu-v6e"),
        section="TPU: Google's pod figures",
        reason=(
            "256 chips x 4 ports x 100 GB/s one way: Google's per-port rate, against the model's 90"
        ),
    ),
)

MEASUREMENTS: tuple[Measurement, ...] = GPU_ROWS + TPU_ROWS


def lookup_row(case: str, system: Optional[str] = None) -> Measurement:
    """The registry row whose ``case`` (and ``system``, if given) match exactly."""
    rows = [m for m in MEASUREMENTS if m.case == case and (system is None or m.system == system)]
    if len(rows) != 1:
        raise CollectivesError(f"{len(rows)} rows match case={case!r}, system={system!r}")
    return rows[0]


def table(rows: Optional[tuple[Measurement, ...]] = None) -> list[dict]:
    """One dict per row (section, case, system, kind, the published value under
    "measured" whatever its kind, unit, NCCL's tuner cap or NaN, model at the line rate and
    at the effective rate, their ratios, reason, source), computed now."""
    out = []
    for m in MEASUREMENTS if rows is None else rows:
        line, effective = m.prediction("line"), m.prediction("effective")
        out.append(
            {
                "section": m.section,
                "case": m.case,
                "system": m.system,
                "kind": m.kind,
                "measured": m.value,
                "unit": m.unit,
                "NCCL 2.30.7 tuner cap": (
                    math.nan if m.nccl_estimate is None else float(m.nccl_estimate)
                ),
                "model (line)": line,
                "measured / model (line)": m.value / line,
                "model (effective)": effective,
                "measured / model (effective)": m.value / effective,
                "reason": m.reason,
                "source": m.source,
            }
        )
        if not (math.isfinite(line) and math.isfinite(effective)):
            raise CollectivesError(f"row {m.case!r}: prediction is not finite")
    return out
