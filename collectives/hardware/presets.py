"""Hardware presets: topologies built from published numbers, each with its source.

``preset(name, **options)`` returns a :class:`~collectives.topology.Topology`;
``presets()`` lists the names; ``spec(name)`` gives the numbers behind a preset
(:class:`~collectives.hardware.systems.System`, with its sources); ``dgx_nodes`` is the
DGX H100 cluster the chapters' calculators vary the NIC speed of.

Modelled: chip-to-chip links and their one-way bandwidth, ICI hop latency, which torus axes
wrap around, DCN between slices (per chip), TPU hosts (which chips share one); GPU nodes with
NVSwitch, PCIe and a NIC per GPU, rail-optimised leaves, spines and a core tier with the
reference architecture's switch and cable counts; Meta's RoCE cluster with its NVLink
servers. Left out: the hosts' PCIe and NIC as links on the DCN path (DCN is given per
chip), NVLink and InfiniBand latency (not published: 0 by default, can be given, or taken from
NCCL's tuner with ``latency="nccl-ll"`` or ``"nccl-simple"``). GPU presets
are built at the line rate by default; ``rates="effective"`` builds them at the effective
rates of :mod:`collectives.hardware.systems` (NCCL's 20.6 GB/s per H100 NVLink link, 370.8
GB/s per GPU, and the 48.5 GB/s per NIC that nccl-tests' maintainers expect).
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import TopologyError
from ..topology import Cluster, Topology, cluster, switch
from ..validation import integer
from .meta import LAYOUTS, meta_cluster
from .superpod import GPUS_PER_NODE, NODES_PER_UNIT, superpod_plan
from .systems import (
    LATENCIES,
    NCCL_STEP_LATENCY,
    NCCL_TUNING_CC,
    SYSTEMS,
    System,
    lookup,
    no_more_options,
)
from .tpu import tpu_slices

__all__ = ["preset", "presets", "spec", "dgx_nodes", "latency_options"]


def presets() -> list[str]:
    """Names accepted by :func:`preset`."""
    return sorted(SYSTEMS)


def spec(name: str) -> System:
    """The :class:`System` (published numbers and sources) behind preset ``name``."""
    return lookup(name)


def preset(name: str, **options: Any) -> Topology:
    """A Topology for hardware preset ``name`` (see :func:`presets`).

    TPU options: ``shape`` (the slice, default the full pod), ``wraparound`` (override
    the published rule), ``hop_latency`` (seconds per link; default 1 us, an assumption after
    The Scaling Book's "typically around 1us", not a published figure), ``slices``
    (multislice: that many copies of the slice joined over the data-center network) and
    ``dcn_latency`` (seconds; default 0, not published); see :mod:`collectives.hardware.tpu`.

    DGX nodes ("dgx-h100", "dgx-b200"): a :func:`~collectives.topology.cluster` of ``nodes``
    DGX nodes (default 1): 8 GPUs on the node's NVSwitch, each with its own 400 Gb/s NIC
    behind PCIe Gen5 x16, rail leaves per unit of ``nodes_per_unit`` (default 32) and
    spines. "superpod-h100": ``units`` scalable units (default 4, the RA's reference
    design) wired as :func:`~collectives.hardware.superpod_plan` says, ``nodes`` (default 32
    per unit). GPU options also: ``hop_latency`` (seconds per NVLink hop), ``pcie_latency``,
    ``network_latency`` (per InfiniBand link), all 0 by default (not published), ``latency``
    (``"none"``, the default; ``"nccl-ll"`` or ``"nccl-simple"``: the latency NCCL's tuner
    assumes for one ring step, :data:`~collectives.hardware.systems.NCCL_STEP_LATENCY`, split
    evenly over the two links a message crosses: half of the NVLink step on each NVLink hop
    (GPU, NVSwitch, GPU) and half of the network step on each InfiniBand link (NIC, leaf, NIC;
    a path through the spines crosses four, twice that), PCIe 0), ``pxn``
    (route as NCCL's PXN), ``routing`` and ``hash_seed`` (hashed ECMP by default; see
    :func:`collectives.topology.gpu_cluster`). GPUs are the ranks, numbered
    ``node * 8 + local``; "gb200-nvl72": ``n`` GPUs on one NVLink switch (default 72),
    ``hop_latency``.

    Every GPU preset also takes ``rates``: "line" (default; the vendor's link rates) or
    "effective" (NVLink at NCCL's ``SM90_NVLINK_BW``/``SM100_NVLINK_BW`` x 18 links, NICs at
    the expected 48.5 GB/s; :meth:`System.bandwidths`). Routing across the fabric:
    ``routing="hash"`` (ECMP, the default: an Ethernet fabric's), ``"dmodk"``
    (deterministic up/down, as an InfiniBand subnet manager routes) or ``"adaptive"`` (the
    ideal of InfiniBand adaptive routing; NCCL's IB transport sends AR-capable transfers by
    default, ``src/transport/net_ib/init.cc``, but the switches route adaptively only where
    the fabric has AR enabled on the service level used: NCCL_IB_ADAPTIVE_ROUTING,
    NCCL_IB_SL). A DGX SuperPOD's compute fabric is InfiniBand, so "dmodk" or "adaptive" is
    its routing; "hash" is what the same cabling would do under ECMP.

    "meta-roce-24k" (the Llama 3 24K cluster, Meta's published layout) and "meta-roce-32k"
    (a labelled what-if: zones of 252 racks): :func:`~collectives.hardware.meta_cluster`
    with that layout (:data:`collectives.hardware.meta.LAYOUTS`) and its options
    (``zones``, ``racks_per_zone``, ``gpus_per_rack``, ``spines``, ``aggregators``,
    ``oversubscription``, ``wiring``, ``hash_seed``, ``routing``, ``gpus_per_server``,
    ``nvlink_latency``, ``pcie_latency``); ``hop_latency`` is seconds per fabric link.

    Multislice is modelled as a product topology (DCN first, then the slice's ICI torus):
    rank ``slice * chips + chip``; chip ``c`` of every slice reaches chip ``c`` of the
    others through a DCN link of the published per-chip DCN bandwidth each way.
    """
    system = spec(name)
    nccl_latency = system.kind in ("nvswitch", "dgx", "superpod") and latency_options(
        options.pop("latency", "none"), options, name, network=system.kind != "nvswitch"
    )
    hop_latency = options.pop("hop_latency", system.hop_latency)
    gpu = system.kind in ("nvswitch", "dgx", "superpod", "meta-roce")
    rates = options.pop("rates", "line") if gpu else "line"
    if system.kind == "nvswitch":
        n = options.pop("n", system.default_shape[0])
        no_more_options(options, name)
        topo = switch(n, system.bandwidths(rates)[0], hop_latency)
    elif system.kind in ("dgx", "superpod"):
        topo = _dgx_cluster(system, hop_latency, options, name, rates)
    elif system.kind == "meta-roce":
        allowed = {
            "zones",
            "racks_per_zone",
            "gpus_per_rack",
            "spines",
            "aggregators",
            "oversubscription",
            "wiring",
            "hash_seed",
            "routing",
            "gpus_per_server",
            "nvlink_latency",
            "pcie_latency",
        }
        no_more_options({k: v for k, v in options.items() if k not in allowed}, name)
        if rates != "line":
            system.bandwidths(rates)  # validates the name
            raise TopologyError(
                f"{system.name} is built at its line rates only (its RoCE "
                "NICs' payload rate is not published)"
            )
        topo = meta_cluster(hop_latency=hop_latency, **{**LAYOUTS[system.name], **options})
    else:
        topo = tpu_slices(system, hop_latency, options, name)
    sources = (system.source, *system.extra_sources)
    if nccl_latency:
        sources += (NCCL_TUNING_CC,)
    if rates == "effective":
        sources += system.effective_sources
    label = f"{system.name} {topo.name}" + (" (effective rates)" if rates == "effective" else "")
    return topo.with_info(name=label, system=system, sources=sources)


def latency_options(latency: str, options: dict, name: str, network: bool = True) -> bool:
    """Put the per-link latencies of ``latency`` (a key of
    :data:`~collectives.hardware.systems.LATENCIES`) into ``options`` as ``hop_latency``
    (NVLink) and, with ``network``, ``network_latency`` (InfiniBand); True if it set any.
    ``"none"`` sets nothing (the options' own values, 0 by default)."""
    if latency not in LATENCIES:
        raise TopologyError(
            f"{name}: latency must be one of {', '.join(LATENCIES)}; got {latency!r}"
        )
    protocol = LATENCIES[latency]
    if protocol is None:
        return False
    given = [key for key in ("hop_latency", "network_latency") if key in options]
    if given:
        raise TopologyError(
            f"{name}: latency={latency!r} sets the link latencies; give it or "
            f"{' and '.join(given)}, not both"
        )
    options["hop_latency"] = NCCL_STEP_LATENCY["nvlink", protocol] / 2
    if network:
        options["network_latency"] = NCCL_STEP_LATENCY["network", protocol] / 2
    return True


def _dgx_cluster(
    system: System, hop_latency: float, options: dict, name: str, rates: str = "line"
) -> Cluster:
    fabric: dict[str, Any] = {}
    if system.kind == "superpod":
        plan = superpod_plan(options.pop("units", 4), options.pop("nodes", None))
        nodes, per_unit = plan.nodes, NODES_PER_UNIT
        fabric = dict(
            n_spines=plan.spines_per_group,
            spine_links=plan.leaf_spine_links,
            units_per_group=plan.units_per_group,
            cores_per_group=max(plan.cores_per_group, 1),
            core_links=max(plan.spine_core_links, 1),
        )
    else:
        nodes = integer(options.pop("nodes", 1), "nodes", minimum=1, error=TopologyError)
        per_unit = integer(
            options.pop("nodes_per_unit", NODES_PER_UNIT),
            "nodes_per_unit",
            minimum=1,
            error=TopologyError,
        )
    extra: dict[str, Any] = {
        key: options.pop(key)
        for key in ("pcie_latency", "network_latency", "pxn", "routing", "hash_seed")
        if key in options
    }
    no_more_options(options, name)
    nvlink, pcie, nic = system.node_bandwidths(rates)
    return cluster(
        nodes,
        GPUS_PER_NODE,
        nvlink_bandwidth=nvlink,
        pcie_bandwidth=pcie,
        nic_bandwidth=nic,
        nodes_per_unit=per_unit,
        nvlink_latency=hop_latency,
        **extra,
        **fabric,
    )


def dgx_nodes(
    n_nodes: int,
    nic_bandwidth: Optional[float] = None,
    *,
    network_latency: float = 0.0,
    system: str = "dgx-h100",
    rates: str = "line",
    latency: str = "none",
) -> Cluster:
    """``n_nodes`` DGX nodes of ``system`` (8 GPUs on NVSwitch, a NIC per GPU behind PCIe)
    on one rail-optimised unit with ``n_nodes`` spines, as
    :func:`~collectives.topology.cluster` builds it: ``nic_bandwidth`` (bytes/s per
    direction) replaces the published NIC speed for "what if" questions (None keeps it);
    ``network_latency`` seconds per InfiniBand link (not published: 0 by default);
    ``rates``: "line" or "effective" (:meth:`System.bandwidths`); ``latency``: "none"
    (default: the latencies above, NVLink 0) or NCCL's tuner's, as :func:`preset` takes it
    ("nccl-ll", "nccl-simple"; then ``network_latency`` is not given). The chapters'
    calculators vary the first two."""
    record = spec(system)
    if record.kind != "dgx":
        raise TopologyError(f"dgx_nodes builds DGX nodes; {record.name} is not one")
    nvlink, pcie, published_nic = record.node_bandwidths(rates)
    nic = published_nic if nic_bandwidth is None else nic_bandwidth
    given = {"network_latency": network_latency} if network_latency else {}
    latency_options(latency, given, record.name)
    return cluster(
        n_nodes,
        GPUS_PER_NODE,
        nvlink_bandwidth=nvlink,
        pcie_bandwidth=pcie,
        nic_bandwidth=nic,
        network_latency=given.get("network_latency", 0.0),
        nvlink_latency=given.get("hop_latency", 0.0),
    )
