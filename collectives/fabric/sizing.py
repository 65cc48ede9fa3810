"""Fabric arithmetic in closed form: hosts, switches, cables and bisection bandwidth.

:func:`fat_tree_counts` is Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008): k^3/4 hosts,
5k^2/4 switches. :func:`clos_counts` is a folded Clos of ``radix``-port switches in
``tiers`` tiers with ``oversubscription`` at the leaves (the wiring of
:func:`~collectives.fabric.clos`; tests hold the two equal). :func:`fabric_bisection` is
the package's one bisection entry point, :func:`collectives.measures.bisection_bandwidth`
(for a built fabric, the capacity across the cut between the two halves of its top block,
live links only). :func:`pfc_headroom` is the buffer a lossless (PFC) port keeps free for
what still arrives after it pauses its sender, term by term; :func:`mlx5_xoff` the same
budget as NVIDIA's Linux driver for its ConnectX NICs computes it. Left out: optics and
port breakouts, spare ports, buffer cells and sharing. Taught in chapter "Designing the
fabric".
"""

from __future__ import annotations

import numpy as np

from ..errors import TopologyError
from ..measures import bisection_bandwidth
from ..validation import integer, number
from .builders import realise_ratio
from .flows import route_flows, step_time
from .layered import Tier, layered

__all__ = [
    "fat_tree_counts",
    "clos_counts",
    "clos_count",
    "fabric_bisection",
    "leaf_spine_bisection",
    "failure_slowdown",
    "pfc_headroom",
    "mlx5_xoff",
    "MLX5_FIXED_BYTES_PER_GBPS",
    "MLX5_RESPONSE_S",
    "FIBRE_M_PER_S",
    "JUMBO_FRAME_BYTES",
]

#: NVIDIA's mlx5 Linux driver (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c,
#: ``calculate_xoff``): "xoff = ((301+2.16 * len [m]) * speed [Gbps] + 2.72 MTU [B])", the
#: speed taken as at least 40 Gb/s. The fixed term, 301 bytes per Gb/s of line rate, is what
#: a port keeps receiving whatever the cable: 301 x 8 / 1e9 s = 2.41 us. The driver does not
#: break it down; it lumps the peer's reaction to the pause with the interface and PHY/MAC
#: delays of both ends. It sizes a NIC's receive buffer (the NIC pausing its switch)
MLX5_FIXED_BYTES_PER_GBPS = 301
#: the fixed term as a time, 2.41 us (the default ``response_s`` of :func:`pfc_headroom`)
MLX5_RESPONSE_S = MLX5_FIXED_BYTES_PER_GBPS * 8 / 1e9
#: the largest frame of an Ethernet fabric that allows jumbo frames (9,216 bytes; also the
#: mlx5 driver's MINIMUM_MAX_MTU, the least it reserves above xoff for a lossless buffer)
JUMBO_FRAME_BYTES = 9216
#: light in fibre and twin-ax copper: about two thirds of c (Cisco's PFC white paper: 65 %
#: of c in single-mode fibre, 70 % in twin-ax; 2e8 m/s is 67 %)
FIBRE_M_PER_S = 2e8


def fat_tree_counts(k):
    """Al-Fares's k-ary fat tree: dict of ``hosts`` (k^3/4), ``switches`` (5k^2/4: k^2/2
    edge, k^2/2 aggregation, k^2/4 core), ``cables`` (3k^3/4: one per host, k^3/4 per
    switch tier) and ``pods`` (k)."""
    k = integer(k, "k", minimum=2, error=TopologyError)
    if k % 2:
        raise TopologyError(f"k must be even, got {k}")
    return dict(
        hosts=k**3 // 4,
        switches=5 * k**2 // 4,
        edge=k**2 // 2,
        aggregation=k**2 // 2,
        core=k**2 // 4,
        cables=3 * k**3 // 4,
        pods=k,
    )


def clos_counts(radix, tiers, link_bandwidth=1.0, oversubscription=1.0):
    """A folded Clos of ``radix``-port switches in ``tiers`` tiers, leaf ports split
    ``a`` hosts : ``b`` uplinks with ``a / b = oversubscription`` (whole ports). Returns a
    dict: ``hosts`` = 2 a (R/2)^(L-1), ``switches_per_tier`` (leaf first), ``switches``,
    ``cables`` (host cables + b per leaf for each tier above), ``bisection`` (bytes/s one
    way: H b_link / 2 / d) and the realised ``hosts_per_leaf``, ``uplinks``."""
    radix = integer(radix, "radix", minimum=2, error=TopologyError)
    if radix % 2:
        raise TopologyError(f"radix must be even, got {radix}")
    tiers = integer(tiers, "tiers", minimum=1, error=TopologyError)
    bw = number(link_bandwidth, "link_bandwidth", positive=True, error=TopologyError)
    h = radix // 2
    a, b = realise_ratio(radix, oversubscription, tiers)
    if tiers == 1:
        return dict(
            hosts=radix,
            switches_per_tier=(1,),
            switches=1,
            cables=radix,
            bisection=radix * bw / 2,
            hosts_per_leaf=radix,
            uplinks=0,
        )
    leaves = 2 * h ** (tiers - 1)
    per_tier = (
        [leaves]
        + [2 * h ** (tiers - t) * b * h ** (t - 2) for t in range(2, tiers)]
        + [b * h ** (tiers - 2)]
    )
    hosts = a * leaves
    return dict(
        hosts=hosts,
        switches_per_tier=tuple(per_tier),
        switches=sum(per_tier),
        cables=hosts + (tiers - 1) * leaves * b,
        bisection=hosts * bw / 2 / (a / b),
        hosts_per_leaf=a,
        uplinks=b,
    )


#: the one bisection entry point (:func:`collectives.measures.bisection_bandwidth`)
fabric_bisection = bisection_bandwidth


def clos_count(radix, tiers, what, oversubscription=1.0, link_bandwidth=1.0):
    """One number of :func:`clos_counts`: ``what`` is "hosts", "switches", "cables" or
    "bisection" (bytes/s one way)."""
    counts = clos_counts(radix, tiers, link_bandwidth, oversubscription)
    if what not in ("hosts", "switches", "cables", "bisection"):
        raise TopologyError(
            f"what must be 'hosts', 'switches', 'cables' or 'bisection', got {what!r}"
        )
    return counts[what]


def leaf_spine_bisection(leaves, hosts_per_leaf, spines, link_bandwidth, failed_spines=0):
    """Bisection bandwidth (bytes/s one way) of a two-tier leaf-spine fabric, every leaf
    cabled once to every spine, after the first ``failed_spines`` spines fail: built with
    :func:`~collectives.fabric.layered`, failed with ``fail``, cut with
    :func:`fabric_bisection`."""
    fab = layered(hosts_per_leaf, link_bandwidth, [Tier(leaves, spines)])
    failed_spines = integer(
        failed_spines, "failed_spines", minimum=0, maximum=spines, error=TopologyError
    )
    if failed_spines:
        fab = fab.fail(switches=fab.switches[fab.node_tier[fab.switches] == 2][:failed_spines])
    return fabric_bisection(fab)


def failure_slowdown(hosts_per_leaf, uplinks, failed):
    """How many times longer a leaf-to-leaf step takes when ``failed`` of a leaf's
    ``uplinks`` (one per spine) are down and the flows are placed again by the engineered
    scheme: every host of leaf 0 sends one equal flow to a host of leaf 1. Simulated on a
    built two-leaf fabric with max-min rates."""
    fab = layered(hosts_per_leaf, 1e9, [Tier(2, uplinks)])
    failed = integer(failed, "failed", minimum=0, maximum=uplinks - 1, error=TopologyError)
    src = np.arange(hosts_per_leaf)
    dst = src + hosts_per_leaf
    before = step_time(route_flows(fab, src, dst, 1e9, scheme="engineered"))
    up = np.flatnonzero((fab.link_tier == 2) & fab.link_up)[:failed]  # leaf 0's first
    after = step_time(route_flows(fab.fail(links=up), src, dst, 1e9, scheme="engineered"))
    return after / before


def pfc_headroom(
    link_bandwidth,
    cable_m,
    *,
    mtu=4096,
    receiver_mtu=None,
    response_s=MLX5_RESPONSE_S,
    interface_s=0.0,
    fibre_m_per_s=FIBRE_M_PER_S,
):
    """Bytes a PFC receiver must still be able to absorb after deciding to pause its sender,
    on a link of ``link_bandwidth`` bytes/s and ``cable_m`` metres: the terms of Cisco's
    white paper "Priority Flow Control: Build Reliable Layer 2 Infrastructure", each at line
    rate.

    * the frame the receiver has begun to send (the pause waits behind it), which "can
      belong to any CoS", so the largest MTU of any class: ``receiver_mtu`` bytes (default
      ``mtu``; :data:`JUMBO_FRAME_BYTES` where another class allows jumbo frames);
    * the pause's trip to the sender and the bytes already on their way back: a cable round
      trip, ``2 cable_m / fibre_m_per_s`` seconds;
    * the sender's reaction to the pause: ``response_s``, by default
      :data:`MLX5_RESPONSE_S`, the mlx5 driver's fixed term, which also holds the
      interface and PHY delays of both ends (the driver does not break it down);
    * transceiver and interface delays counted apart (Cisco's "transceiver latency"):
      ``interface_s`` seconds, 0 by default because the driver's fixed term already
      includes them;
    * the frame of the paused (lossless) class the sender has begun when it stops:
      ``mtu`` bytes.

    With ``response_s=0`` it is the cable-and-frames lower bound. Left out: the IEEE 802.3
    and 802.1Qbb bounds on each delay (not read for this package), buffer cells, and the
    extra ``max_mtu`` the mlx5 driver keeps above its xoff threshold."""
    bw = number(
        link_bandwidth,
        "link_bandwidth",
        positive=True,
        unit="bytes/s per direction",
        error=TopologyError,
    )
    length = number(cable_m, "cable_m", unit="metres", error=TopologyError)
    frame = number(mtu, "mtu", positive=True, unit="bytes", error=TopologyError)
    first = (
        frame
        if receiver_mtu is None
        else number(receiver_mtu, "receiver_mtu", positive=True, unit="bytes", error=TopologyError)
    )
    response = number(response_s, "response_s", unit="seconds", error=TopologyError)
    interface = number(interface_s, "interface_s", unit="seconds", error=TopologyError)
    speed = number(fibre_m_per_s, "fibre_m_per_s", positive=True, unit="m/s", error=TopologyError)
    return first + frame + (2 * length / speed + response + interface) * bw


def mlx5_xoff(link_bandwidth, cable_m, *, mtu=4096):
    """The PFC xoff headroom (bytes) NVIDIA's mlx5 driver reserves on a ConnectX port:
    ``(301 + 2.16 cable_m) * Gb/s + 2.72 mtu``, the line rate taken as at least 40 Gb/s
    (:data:`MLX5_FIXED_BYTES_PER_GBPS`; integer arithmetic as in the driver left out).
    ``mtu`` is the netdev's (Ethernet) MTU, as the driver passes it (9,000 on a host set up
    for jumbo frames). Left out: the driver also requires the lossless buffer to hold this
    plus ``max_mtu`` (the netdev's max_mtu, at least 9,216 bytes) plus one buffer cell, and
    sets the xon threshold ``max_mtu`` below the xoff one."""
    bw = number(
        link_bandwidth,
        "link_bandwidth",
        positive=True,
        unit="bytes/s per direction",
        error=TopologyError,
    )
    length = number(cable_m, "cable_m", unit="metres", error=TopologyError)
    frame = number(mtu, "mtu", positive=True, unit="bytes", error=TopologyError)
    gbps = max(bw * 8 / 1e9, 40.0)
    return (MLX5_FIXED_BYTES_PER_GBPS + 2.16 * length) * gbps + 2.72 * frame
