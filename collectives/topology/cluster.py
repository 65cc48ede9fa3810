"""One GPU-cluster builder: NVLink nodes (or bare hosts) composed with any switch fabric.

:func:`gpu_cluster` builds every GPU cluster and datacenter fabric of the package from two
descriptions:

* **the nodes**: ``n_nodes`` nodes of ``gpus_per_node`` GPUs. With ``nvlink_bandwidth``
  each node is an NVLink server (DGX H100, Meta's Grand Teton): its GPUs sit on one
  NVSwitch (modelled as one non-blocking crossbar) and each GPU has its own NIC behind
  PCIe (``pcie_bandwidth``). Without it the endpoints are the hosts themselves (a fat tree
  of servers, or GPUs whose NVLink is left out), each on its own host cable.
* **the fabric** (:class:`Fabric`): leaves of ``hosts_per_leaf`` down-ports, then one
  :class:`Tier` per tier above. A tier-t *block* joins ``blocks`` blocks of the tier below
  through ``switches`` switches; every child switch has ``links`` parallel cables to every
  switch of its block ("mesh", the way leaf-spine fabrics are cabled) or, above tier 2,
  child switch ``i`` of a block reaches parent switches ``i*q .. i*q + q - 1`` only
  ("striped", ``q`` = parent switches / child switches per block: the k-ary n-tree of a
  fat tree, the core groups of a SuperPOD). ``rails`` makes the leaves rail-optimised:
  GPU ``i`` of every node of a leaf group shares leaf ``i`` of the group (NVIDIA SuperPOD
  wiring). ``planes`` > 1 repeats the switch fabric, one host port into each plane
  (Alibaba HPN's dual plane). A tier's oversubscription is its switches' downlink:uplink
  capacity; it can sit at any tier.

That one description covers a rail-optimised leaf/spine(/core) SuperPOD
(:func:`cluster`), the layered fabrics of :func:`collectives.fabric.layered` with
oversubscription at any tier (Meta's RoCE cluster, :func:`collectives.hardware.meta_cluster`,
now with its NVLink servers), and the folded Clos and k-ary fat tree of
:func:`collectives.fabric.clos` and :func:`collectives.fabric.fat_tree` (hosts only).

**Level names** (the one set, :data:`LEVELS`, indexed by ``link_level`` through
``info.levels``): ``"nvlink"`` GPU <-> its node's NVSwitch; ``"pcie"`` GPU <-> its NIC;
then one level per fabric tier, named after the switch the cable goes up into:
``"leaf"`` (a NIC's or host's cable into its leaf), ``"spine"`` (leaf <-> tier 2),
``"core"`` (tier 2 <-> tier 3, a SuperPOD's core or Meta's aggregation tier) and
``"tier 4"``, ``"tier 5"``, ... above. A topology lists the levels it has, in that order.
``link_tier`` numbers the same links by tier (0 inside the node, 1 host cables, t between
tiers t-1 and t).

**Routes.** Inside a node: GPU -> NVSwitch -> GPU. Otherwise GPU -> NIC (PCIe), then
up/down through the fabric: up to the lowest tier whose block holds both leaves, then down
(the same leaf when both share it), then NIC -> GPU. At each hop with a choice (which
plane, which uplink, which parallel cable, which switch of the child block on the way
down) the ``routing`` option decides:

* ``"hash"`` (default): hashed ECMP. :func:`collectives.topology.hashing.flow_hash` of the
  two endpoints the fabric path joins and the flow label (``flow_id``, e.g. the queue pair;
  the plane is hashed with flow 0, so every QP of a connection stays in one plane), under
  ``hash_seed``; the choices are the hash's digits in a fixed order of the fabric's tiers
  (:func:`~collectives.topology.hashing.hash_digits`), so flows spread as ECMP would,
  collisions included.
* ``"dmodk"``: deterministic up/down routing as an InfiniBand subnet manager computes it.
  OpenSM's up/down (``updn``) and fat-tree (``ftree``) engines fill each switch's
  forwarding table per *destination*: among the ports on a shortest up/down path to a
  destination, the one with the fewest destinations already assigned (OpenSM,
  doc/current-routing.txt), which on a regular fabric spreads consecutive destinations over
  consecutive ports, "destination mod k" (Zahavi et al., "Optimized InfiniBand fat-tree
  routing for shift all-to-all communication patterns", 2010). Modelled: the choice is a
  digit of the destination: at the leaf its port index under its own leaf modulo the
  uplinks, at tier t >= 2 the next digit of its leaf's index in the base of the choices
  per tier, going down its position modulo the choices; ``flow_id`` rotates every choice
  (LMC-style path sets). On a non-blocking fat tree no link then carries two flows of any
  shift permutation. Left out: OpenSM's load counters themselves (the order it visits
  destinations), LMC paths, and the SL/VL assignment that keeps routes deadlock-free.
* ``"adaptive"``: the ideal of InfiniBand adaptive routing (NVIDIA's AR: a switch picks the
  output port of an AR group by its load, per packet) and of packet spraying: each
  connection's traffic is spread evenly over its equal-cost next hops at every switch, so
  every link of the connection carries its share (:meth:`Cluster.link_shares`;
  :func:`collectives.time`, ``fabric.link_loads`` and ``fabric.route_flows`` use the
  shares; :meth:`~collectives.topology.Topology.paths` gives the path ``"dmodk"`` takes,
  one of the equal-cost paths). Left out: reordering, queue occupancy, the reaction time
  of real AR.

``pxn``: NCCL's PXN (NCCL user guide, ``NCCL_PXN_DISABLE``: "inter-node communication
using a non-local NIC, using NVLink and an intermediate GPU"): to a GPU of another node on
another rail, first over NVLink to the GPU of the source's node on the destination's rail,
then out of that GPU's NIC; rail-optimised fabrics only. A GPU also routes to and from its
own node's NVSwitch (NVLS) and its leaf (InfiniBand SHARP) when the nodes have NVLink.

**Failures**: :meth:`Cluster.fail` takes fabric cables or switches down; routing then
avoids them and the switches that can no longer reach the destination's leaf (the way
routing protocols withdraw routes), for every routing option. A route still climbs no
higher than the lowest tier whose block holds both leaves: a pair whose block has lost every
live way between them gets "no live path", even when a detour through a higher tier and back
into the block survives. That is what BGP does with RFC 7938's numbering (section 5.2.1: "A
unique ASN is allocated to each set of Tier 2 devices in the same cluster"): the detour's
AS_PATH holds the block's ASN twice, and BGP's loop check drops it. A choice among candidates
of which some are down takes the ``(c mod live)``-th live one for the column ``c`` it would
take with all of them up: a failure moves not only the flows of the failed candidate but
every flow whose column lies above it, one column along (and folds the last columns onto
the first). That is an order-preserving stand-in for ECMP without resilient hashing; real
hash-threshold ECMP (RFC 2992) recomputes every member's hash range and so re-spreads a
large, different part of the flows. Resilient hashing, which moves only the failed
member's flows, is left out.

**Nodes, in order** (``E`` endpoints, ``N`` nodes): endpoints ``0..E-1`` (GPU ``node * G
+ i``); with NVLink their NICs ``E + gpu`` (role "nic") and the node NVSwitches ``2E +
node``; then the fabric's switches tier by tier, plane by plane, block by block.
**Links**, each direction apart: with NVLink GPU -> NVSwitch, NVSwitch -> GPU, GPU -> NIC,
NIC -> GPU (``E`` each); then the host cables up and down (plane-major), then for each tier
the cables from the tier below up (child switch, parent, parallel cable) and down. A last
leaf group or a last tier-2 block may be partly filled (fewer nodes than ports, fewer
leaves than a block holds); a partly filled block keeps all its switches.

Modelled: each hop's bandwidth (bytes/s per direction) and latency (seconds per link of
its kind), parallel cables, shared links, failures. Left out: switch buffers, queueing,
PFC/ECN and congestion control; NVSwitch as 4 chips rather than one crossbar; switch radix
limits (no check that a switch has the ports); which operations NCCL sends through PXN (a
routing choice of the whole topology here). Taught in chapters "GPU clusters", "Collectives
across nodes" and "Designing the fabric".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..errors import TopologyError
from ..validation import choice, flag, int_array, integer, number
from .core import ROLES, FabricInfo, Topology, TopologyInfo, readonly
from .hashing import flow_hash, hash_digits

__all__ = [
    "Tier",
    "Fabric",
    "Cluster",
    "gpu_cluster",
    "cluster",
    "LEVELS",
    "ROUTINGS",
    "WIRINGS",
    "tier_level",
    "Chooser",
]

#: the level names of GPU clusters and fabrics, in order (module docstring); tiers above
#: the third are named "tier 4", "tier 5", ...
LEVELS = ("nvlink", "pcie", "leaf", "spine", "core")
#: how routes choose among equal-cost paths (module docstring)
ROUTINGS = ("hash", "dmodk", "adaptive")
#: how the cables between tiers 2 and up are laid (:class:`Fabric`)
WIRINGS = ("mesh", "striped")

#: a per-hop choice for traffic engineering (:meth:`Cluster.route_with`):
#: ``choose(hop, pairs, candidates, usable) -> column`` per row
Chooser = Callable[[int, np.ndarray, np.ndarray, Optional[np.ndarray]], np.ndarray]


def tier_level(tier: int) -> str:
    """The level name of the cables going up into fabric tier ``tier`` (1 = the leaves)."""
    return LEVELS[1 + tier] if tier <= 3 else f"tier {tier}"


@dataclass(frozen=True)
class Tier:
    """One tier above the leaves: a block of it joins ``blocks`` blocks of the tier below
    through ``switches`` switches; ``links`` parallel cables from every child switch to
    every switch of the block it reaches, ``bandwidth`` bytes/s per direction each (None:
    the host cables' speed)."""

    blocks: int
    switches: int
    links: int = 1
    bandwidth: Optional[float] = None


@dataclass(frozen=True)
class Fabric:
    """A switch fabric: leaves of ``hosts_per_leaf`` down-ports on host cables of
    ``host_bandwidth`` bytes/s per direction, then ``tiers`` (:class:`Tier`, bottom up);
    ``wiring`` "mesh" or "striped" above tier 2; ``planes`` copies of everything above the
    hosts; ``rails``: rail-optimised leaves (GPU ``i`` of every node on leaf ``i`` of its
    leaf group; needs nodes of several GPUs). See the module docstring."""

    hosts_per_leaf: int
    host_bandwidth: float
    tiers: tuple[Tier, ...] = ()
    wiring: str = "mesh"
    planes: int = 1
    rails: bool = False


# ---- the wiring ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Wiring:
    """Everything routing needs, in *padded* ids: a partly filled last tier-2 block is
    built with all its leaves, the absent ones dropped from the Topology (``link_map`` and
    ``node_map`` give the real ids). Index ``t`` of the per-tier tuples is tier ``t``
    (entry 0 unused)."""

    n_endpoints: int
    gpus_per_node: int
    n_nodes: int
    nvlink: bool
    pxn: bool
    rails: bool
    hosts_per_leaf: int
    planes: int
    n_tiers: int
    blocks_per_block: tuple
    switches_per_block: tuple
    parallel_links: tuple
    parents_per_child: tuple
    children_per_parent: tuple
    bandwidth: tuple
    span: tuple
    switches_per_plane: tuple
    real_leaves: int
    switch_base: tuple
    up_base: tuple
    down_base: tuple
    up_table: tuple
    parent_table: tuple
    down_table: tuple
    child_table: tuple
    position: np.ndarray  # per endpoint: leaf * hosts_per_leaf + port
    host_node: int  # node id of host 0 (its NIC, or the endpoint)
    fabric_base: int  # link id of the first host cable
    twin: np.ndarray  # padded link -> the other direction of its cable
    link_map: Optional[np.ndarray]  # padded link -> real link (None: the same)
    link_unmap: Optional[np.ndarray]  # real link -> padded link
    node_map: Optional[np.ndarray]  # padded node -> real node (-1: absent)

    def real_link(self, link: np.ndarray) -> np.ndarray:
        return link if self.link_map is None else self.link_map[link]

    def padded_link(self, link: np.ndarray) -> np.ndarray:
        return link if self.link_unmap is None else self.link_unmap[link]

    def real_node(self, node: np.ndarray) -> np.ndarray:
        return node if self.node_map is None else self.node_map[node]


def _tiers_arg(tiers: Any) -> tuple[Tier, ...]:
    tiers = tuple(tiers)
    for i, tier in enumerate(tiers):
        if not isinstance(tier, Tier):
            raise TopologyError(
                f"tiers[{i}] must be a fabric.Tier(blocks, switches, links, "
                f"bandwidth), got {tier!r}"
            )
    return tiers


def _positions(n_endpoints: int, a: int, g: int, rails: bool) -> np.ndarray:
    """Where each endpoint is cabled: position p = leaf * a + port."""
    r = np.arange(n_endpoints, dtype=np.int64)
    if not rails:
        return r
    node, rail = r // g, r % g
    return ((node // a) * g + rail) * a + node % a


def _wire(
    fabric: Fabric, n_nodes: int, g: int, nvlink: bool, pxn: bool
) -> tuple[_Wiring, dict[str, Any]]:
    """The wiring of ``n_nodes`` nodes of ``g`` endpoints on ``fabric`` (padded ids), and
    the link and node arrays the Topology is built from (``keep_link`` / ``keep_node``:
    which padded ids are real, None when all are)."""
    a, P = fabric.hosts_per_leaf, fabric.planes
    tiers = fabric.tiers
    T = len(tiers) + 1
    e = n_nodes * g
    # per-tier lists, index t for tier t (entry 0, and 1 where it has no meaning, unused)
    gb: list[Any] = [None, 1] + [
        integer(x.blocks, f"tiers[{i}].blocks", minimum=1, error=TopologyError)
        for i, x in enumerate(tiers)
    ]
    w: list[Any] = [None, 1] + [
        integer(x.switches, f"tiers[{i}].switches", minimum=1, error=TopologyError)
        for i, x in enumerate(tiers)
    ]
    m: list[Any] = [None, 1] + [
        integer(x.links, f"tiers[{i}].links", minimum=1, error=TopologyError)
        for i, x in enumerate(tiers)
    ]
    bw: list[Any] = [None, fabric.host_bandwidth] + [
        fabric.host_bandwidth
        if x.bandwidth is None
        else number(
            x.bandwidth,
            f"tiers[{i}].bandwidth",
            positive=True,
            unit="bytes/s per direction",
            error=TopologyError,
        )
        for i, x in enumerate(tiers)
    ]
    span: list[Any] = [None, 1]
    for t in range(2, T + 1):
        span.append(span[-1] * gb[t])
    striped = fabric.wiring == "striped"
    for t in range(3, T + 1):
        if striped and w[t] % w[t - 1]:
            raise TopologyError(
                f"striped wiring needs each tier's switches per block to be "
                f"a multiple of the tier below's: tier {t} has {w[t]}, tier "
                f"{t - 1} has {w[t - 1]}"
            )
    q: list[Any] = [None, None] + [
        w[t] if not striped or t == 2 else w[t] // w[t - 1] for t in range(2, T + 1)
    ]
    kc: list[Any] = [None, None] + [w[t - 1] if q[t] == w[t] else 1 for t in range(2, T + 1)]
    if fabric.rails:
        leaves = -(-n_nodes // a) * g
        if T > 1 and gb[2] % g:
            raise TopologyError(
                f"rail-optimised leaves come in groups of gpus_per_node={g}: "
                f"the leaves ({span[T]}) and the leaves per tier-2 block "
                f"({gb[2]}) must be multiples of it"
            )
        if T == 1 and g > 1:
            raise TopologyError(
                f"rail-optimised leaves come in groups of gpus_per_node={g}: "
                f"the leaves (1) and the leaves per tier-2 block (1) must be "
                f"multiples of it"
            )
    else:
        leaves = -(-e // a)
    if leaves > span[T]:
        raise TopologyError(
            f"the fabric holds {span[T] * a} hosts ({span[T]} leaves of "
            f"{a}), fewer than the {e} endpoints"
        )
    padded = -(-leaves // gb[2]) * gb[2] if T > 1 else 1
    n: list[Any] = [None, padded]
    count = padded
    for t in range(2, T + 1):
        blocks = count // gb[t] if t > 2 else padded // gb[2]
        if t > 2 and count % gb[t]:
            raise TopologyError(
                f"tier {t} joins blocks of {gb[t]} tier-{t - 1} blocks, but "
                f"the endpoints fill {count}; only the last tier-2 block "
                f"may be partly filled"
            )
        if t == T and blocks != 1:
            raise TopologyError(
                f"the top tier must join every block below into one: tier {T} has {blocks} blocks"
            )
        n.append(blocks * w[t])
        count = blocks
    # node ids
    first_switch = 2 * e + n_nodes if nvlink else e
    sw_base: list[Any] = [None, first_switch]
    for t in range(2, T + 1):
        sw_base.append(sw_base[-1] + n[t - 1] * P)
    host_node = e if nvlink else 0
    fabric_base = 4 * e if nvlink else 0
    position = _positions(e, a, g, fabric.rails)
    # links: host cables (plane-major), then per tier t the cables from tier t-1 up
    srcs, dsts, bws, tier_of, up_flag = [], [], [], [], []
    if nvlink:
        gpu = np.arange(e, dtype=np.int64)
        nic, nvswitch = e + gpu, 2 * e + gpu // g
        srcs += [gpu, nvswitch, gpu, nic]
        dsts += [nvswitch, gpu, nic, gpu]
        tier_of.append(np.zeros(4 * e, np.int64))
        up_flag.append(np.repeat([True, False, True, False], e))
    host = np.tile(np.arange(e, dtype=np.int64), P)
    plane_of = np.repeat(np.arange(P, dtype=np.int64), e)
    leaf_node = sw_base[1] + plane_of * n[1] + position[host] // a
    cables: list[Any] = [None, e * P]
    up_base: list[Any] = [None, fabric_base]
    down_base: list[Any] = [None, fabric_base + e * P]
    srcs += [host_node + host, leaf_node]
    dsts += [leaf_node, host_node + host]
    base = fabric_base + 2 * e * P
    up_table: list[Any] = [None] * T
    parent_table: list[Any] = [None] * T
    down_table: list[Any] = [None] * (T + 1)
    child_table: list[Any] = [None] * (T + 1)
    for t in range(2, T + 1):
        nc = n[t - 1] * P  # child switches, all planes
        c = np.arange(nc, dtype=np.int64)
        p_of, local = c // n[t - 1], c % n[t - 1]
        block = local // w[t - 1] // gb[t]
        first = (local % w[t - 1]) * q[t] if q[t] != w[t] else np.zeros(nc, np.int64)
        j = first[:, None] + np.arange(q[t])[None, :]  # (nc, q) parent positions
        parent = p_of[:, None] * n[t] + block[:, None] * w[t] + j
        cables.append(nc * q[t] * m[t])
        up_base.append(base)
        down_base.append(base + cables[t])
        ids = np.arange(cables[t], dtype=np.int64).reshape(nc, q[t], m[t])
        up_table[t - 1] = readonly(up_base[t] + ids)
        parent_table[t - 1] = readonly(parent)
        par = np.repeat(parent[:, :, None], m[t], axis=2).ravel()
        child = np.repeat(c, q[t] * m[t])
        srcs += [sw_base[t - 1] + child, sw_base[t] + par]
        dsts += [sw_base[t] + par, sw_base[t - 1] + child]
        base += 2 * cables[t]
        # down tables: parent s -> its children in each of its child blocks
        ns = n[t] * P
        s = np.arange(ns, dtype=np.int64)
        sp, sl = s // n[t], s % n[t]
        sblock, sj = sl // w[t], sl % w[t]
        if q[t] == w[t]:
            child_pos = np.broadcast_to(np.arange(kc[t])[None, None, :], (ns, gb[t], kc[t]))
        else:
            child_pos = np.broadcast_to((sj // q[t])[:, None, None], (ns, gb[t], 1))
        cblock = sblock[:, None, None] * gb[t] + np.arange(gb[t])[None, :, None]
        ch = sp[:, None, None] * n[t - 1] + cblock * w[t - 1] + child_pos
        jj = sj[:, None, None] - (0 if q[t] == w[t] else child_pos * q[t])
        link = (ch * q[t] + jj)[..., None] * m[t] + np.arange(m[t])
        child_table[t] = readonly(ch)
        down_table[t] = readonly(down_base[t] + link)
    for t in range(1, T + 1):
        k = cables[t]
        bws.append(np.full(2 * k, bw[t]))
        tier_of.append(np.full(2 * k, t, dtype=np.int64))
        up_flag.append(np.repeat([True, False], k))
    link_src, link_dst = np.concatenate(srcs), np.concatenate(dsts)
    n_links = len(link_src)
    twin = np.arange(n_links, dtype=np.int64)
    for t in range(1, T + 1):
        k, b = cables[t], up_base[t]
        twin[b : b + k] = np.arange(k) + b + k
        twin[b + k : b + 2 * k] = np.arange(k) + b
    # the absent leaves of a partly filled last tier-2 block
    link_map = link_unmap = node_map = None
    keep_node = keep_link = None
    if padded > leaves:
        n_all = sw_base[T] + n[T] * P
        keep_node = np.ones(n_all, bool)
        absent = (
            sw_base[1] + np.arange(P)[:, None] * n[1] + np.arange(leaves, padded)[None, :]
        ).ravel()
        keep_node[absent] = False
        keep_link = keep_node[link_src] & keep_node[link_dst]
        link_map = np.cumsum(keep_link) - 1
        link_map[~keep_link] = -1
        link_unmap = np.flatnonzero(keep_link)
        node_map = np.cumsum(keep_node) - 1
        node_map[~keep_node] = -1
        for arr in (link_map, link_unmap, node_map):
            readonly(arr)
    wiring = _Wiring(
        n_endpoints=e,
        gpus_per_node=g,
        n_nodes=n_nodes,
        nvlink=nvlink,
        pxn=pxn,
        rails=fabric.rails,
        hosts_per_leaf=a,
        planes=P,
        n_tiers=T,
        blocks_per_block=tuple(gb),
        switches_per_block=tuple(w),
        parallel_links=tuple(m),
        parents_per_child=tuple(q),
        children_per_parent=tuple(kc),
        bandwidth=tuple(bw),
        span=tuple(span),
        switches_per_plane=tuple(n),
        real_leaves=leaves,
        switch_base=tuple(sw_base),
        up_base=tuple(up_base),
        down_base=tuple(down_base),
        up_table=tuple(up_table),
        parent_table=tuple(parent_table),
        down_table=tuple(down_table),
        child_table=tuple(child_table),
        position=readonly(position),
        host_node=host_node,
        fabric_base=fabric_base,
        twin=readonly(twin),
        link_map=link_map,
        link_unmap=link_unmap,
        node_map=node_map,
    )
    arrays = dict(
        link_src=link_src,
        link_dst=link_dst,
        bandwidth=np.concatenate(bws),
        tier=np.concatenate(tier_of),
        up=np.concatenate(up_flag),
        cables=cables,
        keep_link=keep_link,
        keep_node=keep_node,
    )
    return wiring, arrays


# ---- choosing among equal-cost candidates --------------------------------------------------


def _usable(col: np.ndarray, ok: Optional[np.ndarray]) -> np.ndarray:
    """Column ``col`` when every candidate is usable; otherwise the ``(col mod usable)``-th
    usable one: every flow above a failed candidate moves one along, not only the failed
    candidate's (an order-preserving stand-in for non-resilient ECMP; module docstring)."""
    if ok is None:
        return col
    count = ok.sum(axis=1)
    want = col % np.maximum(count, 1)
    return np.argmax(np.cumsum(ok, axis=1) > want[:, None], axis=1)


def _hop_shapes(w: _Wiring) -> dict[int, tuple[int, int]]:
    """(choices of switch, parallel cables) at every hop of a route that climbs to the top:
    hop 0 the plane, hop t-1 up from tier t-1, hop 2T-t down from tier t."""
    T = w.n_tiers
    shapes = {0: (w.planes, 1)}
    for t in range(2, T + 1):
        shapes[t - 1] = (w.parents_per_child[t], w.parallel_links[t])
        shapes[2 * T - t] = (w.children_per_parent[t], w.parallel_links[t])
    return shapes


class _HashChoice:
    """Hashed ECMP: each hop's choice is two digits of the flow's hash (switch, then
    parallel cable), read in the fixed order of :func:`_hop_shapes`; the plane is a digit
    of the hash of flow 0."""

    def __init__(self, w: _Wiring, src, dst, flow, seed):
        shapes = _hop_shapes(w)
        hops = sorted(h for h in shapes if h > 0)
        bases = [b for h in hops for b in shapes[h]]
        digits = hash_digits(flow_hash(src, dst, flow, seed), bases)
        self.columns = {}
        for i, h in enumerate(hops):
            switch, cable = digits[2 * i], digits[2 * i + 1]
            self.columns[h] = switch * shapes[h][1] + cable if shapes[h][1] > 1 else switch
        self.columns[0] = (
            hash_digits(flow_hash(src, dst, None, seed), [w.planes])[0]
            if w.planes > 1
            else np.zeros(len(src), np.int64)
        )

    def column(self, hop, rows, count):
        """The column of each row's choice among ``count`` candidates, all usable."""
        return self.columns[hop][rows]

    def __call__(self, hop, rows, cand, ok):
        return _usable(self.columns[hop][rows], ok)


class _DestinationChoice:
    """Deterministic up/down ("dmodk"): each choice a digit of the destination (module
    docstring), rotated by the flow label."""

    def __init__(self, w: _Wiring, dst, flow):
        a = w.hosts_per_leaf
        self.position = w.position[dst]
        self.slot = self.position % a
        self.leaf = self.position // a
        self.flow = flow
        self.shapes = _hop_shapes(w)
        self.T = w.n_tiers

    def __call__(self, hop, rows, cand, ok):
        return _usable(self.column(hop, rows, cand.shape[1]), ok)

    def column(self, hop, rows, count):
        """The column of each row's choice among ``count`` candidates, all usable."""
        flow = self.flow[rows]
        if hop == 0:
            col = self.position[rows] % count
        elif hop == 1:
            col = (self.slot[rows] % count + flow) % count
        elif hop < self.T:
            below = math.prod(math.prod(self.shapes[h]) for h in range(2, hop))
            col = ((self.leaf[rows] // below) % count + flow) % count
        else:
            col = (self.position[rows] + flow) % count
        return col


# ---- the router --------------------------------------------------------------------------


class _ClusterRouter:
    """Routes of a :class:`Cluster` (module docstring), vectorised over pairs."""

    reaches_switches = True

    def __init__(self, wiring: _Wiring, routing: str, seed: int, failed: np.ndarray):
        self.w = wiring
        self.routing = routing
        self.seed = seed
        self.failed = failed  # padded links
        self._reach_cache = None
        self.reaches_switches = wiring.nvlink

    # ---- reachability after failures -----------------------------------------------------
    def reach(self):
        """``down[t][s, l]``: switch s of tier t (padded, all planes) reaches local leaf l
        of its block going down; ``up[t][s, L]``: it reaches leaf L of its plane up then
        down. None when nothing has failed."""
        if self._reach_cache is not None or not self.failed.any():
            return self._reach_cache
        w, dead = self.w, self.failed
        T, P = w.n_tiers, w.planes
        down = [None, np.ones((w.switches_per_plane[1] * P, 1), bool)]
        for t in range(2, T + 1):
            alive = (~dead[w.down_table[t]]).any(axis=3)  # (S, g, kc)
            r = alive[..., None] & down[t - 1][w.child_table[t]]  # (S, g, kc, span)
            down.append(r.any(axis=2).reshape(len(alive), -1))
        up = [None] * (T + 1)
        up[T] = down[T]
        for t in range(T - 1, 1, -1):
            alive = (~dead[w.up_table[t]]).any(axis=2)  # (S, u)
            reach = (alive[..., None] & up[t + 1][w.parent_table[t]]).any(axis=1)
            span, n_s = w.span[t], len(alive)
            block = (np.arange(n_s) % w.switches_per_plane[t]) // w.switches_per_block[t]
            cols = block[:, None] * span + np.arange(span)[None, :]
            reach[np.arange(n_s)[:, None], cols] = down[t]
            up[t] = reach
        self._reach_cache = (down, up)
        return self._reach_cache

    # ---- the fabric part -----------------------------------------------------------------
    def tops(self, hs, hd):
        """Leaves of each host pair and the tier its route climbs to (1: the same leaf)."""
        w = self.w
        a = w.hosts_per_leaf
        if w.rails:
            leaf_s, leaf_d = w.position[hs] // a, w.position[hd] // a
        else:  # hosts are cabled in rank order
            leaf_s, leaf_d = hs // a, hd // a
        top = np.ones(len(hs), dtype=np.int64)
        for t in range(2, w.n_tiers + 1):
            top += (leaf_s // w.span[t - 1]) != (leaf_d // w.span[t - 1])
        return leaf_s, leaf_d, top

    def walk(self, hs, hd, choose, out, start, tops=None):
        """Route host pairs hop by hop through the fabric, writing padded link ids into
        ``out[start + position]``; ``choose(hop, rows, cand, ok)`` picks a column of
        ``cand`` per row (``ok``: usable candidates, None when all are). ``tops``: what
        :meth:`tops` gives, when the caller has it."""
        w = self.w
        T, P, H = w.n_tiers, w.planes, w.n_endpoints
        n1 = w.switches_per_plane[1]
        leaf_s, leaf_d, top = self.tops(hs, hd) if tops is None else tops
        reach = self.reach()
        dead = self.failed

        def pick(hop, rows, cand, ok):
            if ok is not None and np.any(~ok.any(axis=1)):
                lost = ~ok.any(axis=1)
                raise TopologyError(
                    f"no live path for {int(np.count_nonzero(lost))} pair(s) (first "
                    f"{int(hs[rows][lost][0])} -> {int(hd[rows][lost][0])}) after the "
                    f"failures: every candidate link at hop {hop} is down or leads nowhere"
                )
            col = choose(hop, rows, cand, ok)
            return col, cand[np.arange(len(rows)), col]

        # without failures an internal choice (hash, d-mod-k) names its column from the
        # number of candidates alone, and the chosen link is computed, not gathered
        fast = reach is None and hasattr(choose, "column")
        rows = np.arange(len(hs))
        if fast and P == 1:
            plane = np.zeros(len(hs), np.int64)
            chosen = w.up_base[1] + hs
        else:
            cand = w.up_base[1] + np.arange(P)[None, :] * H + hs[:, None]
            ok = self._first_ok(hs, hd, leaf_s, leaf_d, cand, reach)
            plane, chosen = pick(0, rows, cand, ok)
        out[start] = chosen
        cur = plane * n1 + leaf_s
        for t in range(2, T + 1):  # up
            rows = np.flatnonzero(top >= t)
            if not rows.size:
                break
            sw = cur[rows]
            q, m = w.parents_per_child[t], w.parallel_links[t]
            if fast:
                if q * m == 1:
                    chosen = w.up_base[t] + sw
                    cur[rows] = w.parent_table[t - 1].ravel()[sw]
                else:
                    col = choose.column(t - 1, rows, q * m)
                    j = col // m if m > 1 else col
                    chosen = w.up_base[t] + (sw * q + j) * m + (col % m if m > 1 else 0)
                    cur[rows] = w.parent_table[t - 1].ravel()[sw * q + j]
            else:
                cand = w.up_table[t - 1][sw].reshape(len(rows), -1)
                parents = w.parent_table[t - 1][sw]
                ok = None
                if reach is not None:
                    ok = ~dead[cand] & np.repeat(
                        reach[1][t][parents, leaf_d[rows, None]], m, axis=1
                    )
                col, chosen = pick(t - 1, rows, cand, ok)
                cur[rows] = parents[np.arange(len(rows)), col // m]
            out[start[rows] + t - 1] = chosen
        for t in range(T, 1, -1):  # down
            rows = np.flatnonzero(top >= t)
            if not rows.size:
                continue
            sw = cur[rows]
            k = (leaf_d[rows] // w.span[t - 1]) % w.blocks_per_block[t]
            kc, m = w.children_per_parent[t], w.parallel_links[t]
            if fast:
                # flat indices into the (switch, child block, child, cable) tables
                at = (sw * w.blocks_per_block[t] + k) * kc
                if kc * m > 1:
                    col = choose.column(2 * T - t, rows, kc * m)
                    at = at + (col // m if m > 1 else col)
                    cable = col % m if m > 1 else 0
                else:
                    cable = 0
                chosen = w.down_table[t].ravel()[at * m + cable]
                cur[rows] = w.child_table[t].ravel()[at]
            else:
                cand = w.down_table[t][sw, k].reshape(len(rows), -1)
                children = w.child_table[t][sw, k]
                ok = None
                if reach is not None:
                    local = (leaf_d[rows] % w.span[t - 1])[:, None]
                    ok = ~dead[cand] & np.repeat(reach[0][t - 1][children, local], m, axis=1)
                col, chosen = pick(2 * T - t, rows, cand, ok)
                cur[rows] = children[np.arange(len(rows)), col // m]
            out[start[rows] + 2 * top[rows] - t] = chosen
        out[start + 2 * top - 1] = w.down_base[1] + plane * H + hd
        return top

    def _first_ok(self, hs, hd, leaf_s, leaf_d, cand, reach):
        """Usable planes (host cables alive both ends, and a live way between the leaves)."""
        if reach is None:
            return None
        w, dead = self.w, self.failed
        P, H, T = w.planes, w.n_endpoints, w.n_tiers
        n1 = w.switches_per_plane[1]
        ok = ~dead[cand] & ~dead[w.down_base[1] + np.arange(P)[None, :] * H + hd[:, None]]
        for p in range(P):
            sw = p * n1 + leaf_s
            if T > 1:
                alive = (~dead[w.up_table[1][sw]]).any(axis=2)
                far = reach[1][2][w.parent_table[1][sw], leaf_d[:, None]]
                ok[:, p] &= (leaf_s == leaf_d) | (alive & far).any(axis=1)
            else:
                ok[:, p] &= leaf_s == leaf_d
        return ok

    def spread(self, hs, hd):
        """Adaptive routing: every pair's traffic split evenly over the usable candidates
        at each hop. Returns ``(row, position, padded link, share, top)``."""
        w = self.w
        T, P, H = w.n_tiers, w.planes, w.n_endpoints
        n1 = w.switches_per_plane[1]
        leaf_s, leaf_d, top = self.tops(hs, hd)
        reach = self.reach()
        dead = self.failed
        width = max(w.switches_per_plane[1:]) * P
        out_row, out_pos, out_link, out_share = [], [], [], []

        def expand(rows, cand, ok, weight):
            """(state, column, share) of every usable candidate of every state."""
            if ok is None:
                ok = np.ones(cand.shape, bool)
            lost = ~ok.any(axis=1)
            if lost.any():
                raise TopologyError(
                    f"no live path for {int(np.count_nonzero(lost))} pair(s) (first "
                    f"{int(hs[rows][lost][0])} -> {int(hd[rows][lost][0])}) after the "
                    f"failures"
                )
            state, col = np.nonzero(ok)
            return state, col, weight[state] / ok.sum(axis=1)[state]

        def merge(row, node, weight):
            """One state per (pair, switch) reached, its shares summed."""
            uniq, inverse = np.unique(row * width + node, return_inverse=True)
            return uniq // width, uniq % width, np.bincount(inverse, weights=weight)

        rows = np.arange(len(hs))
        cand = w.up_base[1] + np.arange(P)[None, :] * H + hs[:, None]
        ok = self._first_ok(hs, hd, leaf_s, leaf_d, cand, reach)
        state, col, share = expand(rows, cand, ok, np.ones(len(hs)))
        out_row.append(state)
        out_pos.append(np.zeros(len(state), np.int64))
        out_link.append(cand[state, col])
        out_share.append(share)
        row, node, weight = state, col * n1 + leaf_s[state], share
        tier = np.ones(len(row), np.int64)
        for t in range(2, T + 1):  # up
            go = (tier == t - 1) & (top[row] >= t)
            if not go.any():
                continue
            r, sw, wt = row[go], node[go], weight[go]
            m = w.parallel_links[t]
            cand = w.up_table[t - 1][sw].reshape(len(r), -1)
            parents = w.parent_table[t - 1][sw]
            ok = None
            if reach is not None:
                ok = ~dead[cand] & np.repeat(reach[1][t][parents, leaf_d[r, None]], m, axis=1)
            state, col, share = expand(r, cand, ok, wt)
            out_row.append(r[state])
            out_pos.append(np.full(len(state), t - 1, np.int64))
            out_link.append(cand[state, col])
            out_share.append(share)
            r, sw, wt = merge(r[state], parents[state, col // m], share)
            row = np.concatenate([row[~go], r])
            node = np.concatenate([node[~go], sw])
            weight = np.concatenate([weight[~go], wt])
            tier = np.concatenate([tier[~go], np.full(len(r), t, np.int64)])
        for t in range(T, 1, -1):  # down
            go = tier == t
            if not go.any():
                continue
            r, sw, wt = row[go], node[go], weight[go]
            k = (leaf_d[r] // w.span[t - 1]) % w.blocks_per_block[t]
            m = w.parallel_links[t]
            cand = w.down_table[t][sw, k].reshape(len(r), -1)
            children = w.child_table[t][sw, k]
            ok = None
            if reach is not None:
                local = (leaf_d[r] % w.span[t - 1])[:, None]
                ok = ~dead[cand] & np.repeat(reach[0][t - 1][children, local], m, axis=1)
            state, col, share = expand(r, cand, ok, wt)
            out_row.append(r[state])
            out_pos.append(2 * top[r[state]] - t)
            out_link.append(cand[state, col])
            out_share.append(share)
            r, sw, wt = merge(r[state], children[state, col // m], share)
            row = np.concatenate([row[~go], r])
            node = np.concatenate([node[~go], sw])
            weight = np.concatenate([weight[~go], wt])
            tier = np.concatenate([tier[~go], np.full(len(r), t - 1, np.int64)])
        out_row.append(row)
        out_pos.append(2 * top[row] - 1)
        out_link.append(w.down_base[1] + (node // n1) * H + hd[row])
        out_share.append(weight)
        return (
            np.concatenate(out_row),
            np.concatenate(out_pos),
            np.concatenate(out_link),
            np.concatenate(out_share),
            top,
        )

    # ---- whole routes --------------------------------------------------------------------
    def endpoints_and_switch_ends(self, src, dst):
        """Check the pairs that end at a switch: a GPU only reaches its own node's
        NVSwitch and its own leaf (a plane's). Returns per pair the links before the fabric
        (up to 3, -1 padded) for switch-end pairs."""
        w = self.w
        e, g = w.n_endpoints, w.gpus_per_node
        src_ep, dst_ep = src < e, dst < e
        gpu = np.where(src_ep, src, dst)
        gpu = np.where(gpu < e, gpu, 0)  # a switch-to-switch pair is refused
        end = np.where(src_ep, dst, src)
        node = gpu // g
        nvswitch = 2 * e + node
        leaf = w.position[gpu] // w.hosts_per_leaf
        plane_leaf = (
            w.switch_base[1]
            + np.arange(w.planes)[None, :] * w.switches_per_plane[1]
            + leaf[:, None]
        )
        plane_leaf = w.real_node(plane_leaf)
        is_nvswitch = end == nvswitch
        on_leaf = end[:, None] == plane_leaf
        is_leaf = on_leaf.any(axis=1)
        ok = (src_ep & dst_ep) | ((src_ep != dst_ep) & (is_nvswitch | is_leaf))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise TopologyError(
                f"a cluster routes a GPU only to and from its own node's NVSwitch and its rail "
                f"leaf switch, not {int(src[i])} -> {int(dst[i])}"
            )
        plane = np.argmax(on_leaf, axis=1)
        H = e
        up_cable = w.up_base[1] + plane * H + gpu
        down_cable = w.down_base[1] + plane * H + gpu
        links = np.full((len(src), 2), -1, np.int64)
        to_switch = src_ep & ~dst_ep
        from_switch = ~src_ep & dst_ep
        links[to_switch & is_nvswitch, 0] = gpu[to_switch & is_nvswitch]
        links[from_switch & is_nvswitch, 0] = e + gpu[from_switch & is_nvswitch]
        sel = to_switch & ~is_nvswitch
        links[sel, 0], links[sel, 1] = 2 * e + gpu[sel], up_cable[sel]
        sel = from_switch & ~is_nvswitch
        links[sel, 0], links[sel, 1] = down_cable[sel], 3 * e + gpu[sel]
        return src_ep & dst_ep, links

    def assemble(self, src, dst, flow, choose=None, spread=False, index=None):
        """``(pair, real link[, share])`` of every pair, grouped by pair in path order."""
        w = self.w
        e, g = w.n_endpoints, w.gpus_per_node
        n = len(src)
        if not w.nvlink and not spread:  # hosts only: the fabric path alone
            tops = self.tops(src, dst)
            length = 2 * tops[2]
            offset = np.zeros(n, np.int64)
            np.cumsum(length[:-1], out=offset[1:])
            out = np.empty(int(length.sum()), np.int64)
            chooser = (
                self.chooser(src, dst, flow)
                if choose is None
                else self._user_chooser(choose, np.arange(n) if index is None else index)
            )
            self.walk(src, dst, chooser, out, offset, tops)
            return np.repeat(np.arange(n), length), w.real_link(out)
        if w.nvlink:
            both, switch_links = self.endpoints_and_switch_ends(src, dst)
        else:
            both, switch_links = np.ones(n, bool), None
        same_node = both & (src // g == dst // g) if w.nvlink else np.zeros(n, bool)
        relay = both & w.pxn & (src // g != dst // g) & (src % g != dst % g)
        via = np.where(relay, src // g * g + dst % g, src)
        fab = np.flatnonzero(both & ~same_node)
        pre = np.full((n, 3), -1, np.int64)
        post = np.full(n, -1, np.int64)
        if w.nvlink:
            pre[same_node, 0], pre[same_node, 1] = src[same_node], e + dst[same_node]
            pre[relay, 0], pre[relay, 1] = src[relay], e + via[relay]
            pre[fab, 2] = 2 * e + via[fab]
            post[fab] = 3 * e + dst[fab]
            if switch_links is not None:
                pre[~both, 0], pre[~both, 1] = switch_links[~both, 0], switch_links[~both, 1]
        n_pre = (pre >= 0).sum(axis=1)
        hs, hd = via[fab], dst[fab]
        if spread:
            return self._assemble_spread(n, pre, n_pre, post, fab, hs, hd)
        tops = self.tops(hs, hd)
        fab_len = np.zeros(n, np.int64)
        fab_len[fab] = 2 * tops[2]
        length = n_pre + fab_len + (post >= 0)
        offset = np.concatenate([[0], np.cumsum(length)[:-1]])
        out = np.empty(int(length.sum()), np.int64)
        place = np.cumsum(pre >= 0, axis=1) - 1  # a used column's place on the path
        for col in range(3):
            used = pre[:, col] >= 0
            out[offset[used] + place[used, col]] = pre[used, col]
        if fab.size:
            chooser = (
                self.chooser(hs, hd, flow[fab])
                if choose is None
                else self._user_chooser(choose, fab if index is None else index[fab])
            )
            self.walk(hs, hd, chooser, out, offset[fab] + n_pre[fab], tops)
        has_post = post >= 0
        out[offset[has_post] + length[has_post] - 1] = post[has_post]
        pair = np.repeat(np.arange(n), length)
        return pair, w.real_link(out)

    def _assemble_spread(self, n, pre, n_pre, post, fab, hs, hd):
        w = self.w
        if fab.size:
            rows, pos, link, share, top = self.spread(hs, hd)
        else:
            rows = pos = link = top = np.zeros(0, np.int64)
            share = np.zeros(0)
        parts_pair, parts_pos, parts_link, parts_share = [], [], [], []
        for col in range(3):
            used = np.flatnonzero(pre[:, col] >= 0)
            parts_pair.append(used)
            parts_pos.append(np.cumsum(pre >= 0, axis=1)[used, col] - 1)
            parts_link.append(pre[used, col])
            parts_share.append(np.ones(len(used)))
        parts_pair.append(fab[rows])
        parts_pos.append(n_pre[fab[rows]] + pos)
        parts_link.append(link)
        parts_share.append(share)
        has_post = np.flatnonzero(post >= 0)
        fab_len = np.zeros(n, np.int64)
        fab_len[fab] = 2 * top
        parts_pair.append(has_post)
        parts_pos.append(n_pre[has_post] + fab_len[has_post])
        parts_link.append(post[has_post])
        parts_share.append(np.ones(len(has_post)))
        pair = np.concatenate(parts_pair)
        pos = np.concatenate(parts_pos)
        link = np.concatenate(parts_link)
        share = np.concatenate(parts_share)
        order = np.lexsort((link, pos, pair))
        return pair[order], w.real_link(link[order]), share[order]

    @staticmethod
    def _user_chooser(choose, pairs):
        """A caller's choice, told the caller's pair indices (not the walk's rows)."""

        def chooser(hop, rows, cand, ok):
            return choose(hop, pairs[rows], cand, ok)

        return chooser

    def chooser(self, hs, hd, flow):
        if self.routing == "hash":
            return _HashChoice(self.w, hs, hd, flow, self.seed)
        return _DestinationChoice(self.w, hd, flow)  # dmodk, and adaptive's one path

    def __call__(self, src, dst, flow=None):
        if flow is None:
            flow = np.zeros(len(src), np.int64)
        return self.assemble(src, dst, flow)

    def shares(self, src, dst, flow=None):
        if self.routing != "adaptive":
            pair, link = self(src, dst, flow)
            return pair, link, np.ones(len(link))
        if flow is None:
            flow = np.zeros(len(src), np.int64)
        return self.assemble(src, dst, flow, spread=True)


# ---- the topology -------------------------------------------------------------------------


def _flow_ids(flow_id: Any, n: int) -> np.ndarray:
    flow = np.asarray(flow_id)
    if flow.dtype == bool or not np.issubdtype(flow.dtype, np.integer):
        raise TopologyError(f"flow_id must be an integer or one integer per pair, got {flow_id!r}")
    if flow.ndim == 0:
        return np.full(n, int(flow), dtype=np.int64)
    flow = flow.ravel().astype(np.int64)
    if len(flow) != n:
        raise TopologyError(f"flow_id has {len(flow)} entries for {n} pairs")
    return flow


class Cluster(Topology):
    """A Topology built by :func:`gpu_cluster` (and so by :func:`cluster`,
    :func:`collectives.fabric.layered`, :func:`~collectives.fabric.clos`,
    :func:`~collectives.fabric.fat_tree` and the GPU presets). Beyond the Topology
    contract:

    shape: ``tiers`` (the :class:`Tier` s, bottom up), ``n_tiers`` (the leaves included),
    ``hosts_per_leaf``, ``planes``, ``gpus_per_node``, ``n_leaves`` (per plane),
    ``switches_per_tier`` and ``cables_per_tier`` (tier 1 = leaves / host cables, all
    planes), ``tier_bandwidth``, ``oversubscription`` (per tier below the top),
    ``routing`` and ``hash_seed``; per endpoint ``port_position`` (leaf * hosts_per_leaf +
    port) and :meth:`leaf_of`, :meth:`block_of`; per node ``node_tier`` (0 below the
    fabric: endpoints, NICs, NVSwitches); per link ``link_tier`` (0 NVLink and PCIe, 1
    host cables, t between tiers t-1 and t), ``link_up`` (pointing away from the
    endpoints), ``link_twin`` (the other direction of its cable) and ``failed``.
    ``paths``, ``route`` and ``link_shares`` take ``flow_id`` (the ECMP flow label, e.g.
    one per queue pair); :meth:`route_with` routes with a caller's per-hop choice;
    :meth:`with_routing`, :meth:`fail` give variants.
    """

    # set by gpu_cluster once the Topology is built (object.__setattr__: Topology is frozen)
    _router: "_ClusterRouter"
    _wiring: _Wiring
    _tiers: tuple[Tier, ...]
    _tier_first_node: tuple  # per tier, its first node id (entry 0 unused)
    _node_tier: np.ndarray
    _link_tier: np.ndarray
    _link_up: np.ndarray
    _failed: np.ndarray
    _real_per_plane: tuple  # per tier, real switches in one plane (entry 0 unused)
    _switch_first_leaf: tuple  # per tier, each switch's first leaf (entry 0 unused)

    # ---- declared shape --------------------------------------------------------------------
    @property
    def tiers(self) -> tuple[Tier, ...]:
        """The tiers above the leaves, as given."""
        return self._tiers

    @property
    def n_tiers(self) -> int:
        """Switch tiers, the leaves included."""
        return self._wiring.n_tiers

    @property
    def hosts_per_leaf(self) -> int:
        return self._wiring.hosts_per_leaf

    @property
    def planes(self) -> int:
        return self._wiring.planes

    @property
    def gpus_per_node(self) -> Optional[int]:
        """GPUs per node (``info.gpus_per_node``; None for bare hosts)."""
        return self.info.gpus_per_node

    @property
    def routing(self) -> str:
        return self._router.routing

    @property
    def hash_seed(self) -> int:
        return self._router.seed

    @property
    def n_leaves(self) -> int:
        """Leaves in one plane."""
        return self._wiring.real_leaves

    @property
    def _fabric_info(self) -> FabricInfo:
        """``info.fabric``, which every Cluster declares."""
        fabric = self.info.fabric
        if fabric is None:  # only a Topology built outside gpu_cluster lacks it
            raise TopologyError(f"{self.name} declares no fabric (info.fabric is None)")
        return fabric

    @property
    def switches_per_tier(self) -> tuple[int, ...]:
        """Switches of each fabric tier, leaves first, all planes."""
        return self._fabric_info.switches_per_tier

    @property
    def cables_per_tier(self) -> tuple[int, ...]:
        """Cables (one link each way) of each tier: host cables first, all planes."""
        return self._fabric_info.cables_per_tier

    @property
    def tier_bandwidth(self) -> tuple[float, ...]:
        """Bytes/s per direction of one cable at each tier (host cables first)."""
        return self._fabric_info.tier_bandwidth

    @property
    def oversubscription(self) -> tuple[float, ...]:
        """Downlink:uplink capacity of a switch at each tier below the top (leaf first)."""
        w = self._wiring
        out = []
        for t in range(1, w.n_tiers):
            if t == 1:
                down = w.hosts_per_leaf * w.bandwidth[1]
            else:
                down = (
                    w.blocks_per_block[t]
                    * w.children_per_parent[t]
                    * w.parallel_links[t]
                    * w.bandwidth[t]
                )
            up = w.parents_per_child[t + 1] * w.parallel_links[t + 1] * w.bandwidth[t + 1]
            out.append(down / up)
        return tuple(out)

    @property
    def port_position(self) -> np.ndarray:
        """Per endpoint: where its host cable is plugged, ``leaf * hosts_per_leaf + port``."""
        return self._wiring.position

    node_tier = property(
        lambda self: self._node_tier,
        doc="Per node: its fabric tier (0 for endpoints, NICs, NVSwitches).",
    )
    link_tier = property(
        lambda self: self._link_tier,
        doc="Per link: 0 inside a node, 1 host cables, t between tiers t-1, t.",
    )
    link_up = property(
        lambda self: self._link_up, doc="Per link: True when it points away from the endpoints."
    )
    failed = property(lambda self: self._failed, doc="Per link: True when it is down.")

    @property
    def link_twin(self) -> np.ndarray:
        """Per link: the other direction of its cable (inside a node: the link itself)."""
        w = self._wiring
        return w.real_link(w.twin[w.padded_link(np.arange(self.n_links))])

    def leaf_of(self, rank: ArrayLike) -> np.ndarray:
        """The leaf (index within a plane) each rank is cabled to."""
        return self._wiring.position[np.asarray(rank, dtype=np.int64)] // self.hosts_per_leaf

    def block_of(self, rank: ArrayLike, tier: int) -> np.ndarray:
        """The tier-``tier`` block (1 = the leaf itself) each rank sits under."""
        tier = integer(tier, "tier", minimum=1, maximum=self.n_tiers, error=TopologyError)
        return self.leaf_of(rank) // self._wiring.span[tier]

    # ---- routing ---------------------------------------------------------------------------
    def paths(
        self, src: ArrayLike, dst: ArrayLike, flow_id: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays.

        ``flow_id``: None (every flow 0), an int, or one int per pair: the flow label the
        ECMP hash sees (and ``"dmodk"`` rotates by). Adaptive routing gives the
        ``"dmodk"`` path here; :meth:`link_shares` gives its spread.
        """
        src, dst = self.checked_pairs(src, dst)
        flow = None if flow_id is None else _flow_ids(flow_id, len(src))
        if src.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty
        return self._router(src, dst, flow)

    def link_shares(
        self, src: ArrayLike, dst: ArrayLike, flow_id: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(pair, link, share)``: the share of each pair's bytes on each link; with
        ``routing="adaptive"`` a pair's traffic is spread evenly over the usable
        candidates at every hop, otherwise share 1 on the links of :meth:`paths`."""
        src, dst = self.checked_pairs(src, dst)
        flow = None if flow_id is None else _flow_ids(flow_id, len(src))
        if src.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros(0)
        return self._router.shares(src, dst, flow)

    def route(self, src: int, dst: int, flow_id: int = 0) -> list[int]:
        """The links from ``src`` to ``dst`` (flow ``flow_id``), in order."""
        if src == dst:
            return []
        return self.paths([src], [dst], flow_id=flow_id)[1].tolist()

    def route_with(
        self, src: ArrayLike, dst: ArrayLike, choose: Chooser
    ) -> tuple[np.ndarray, np.ndarray]:
        """Route endpoint pairs with the caller's choice at every hop of the fabric (traffic
        engineering: :mod:`collectives.fabric.flows`): ``choose(hop, pairs, candidates,
        usable)`` gets the hop (0 plane, t-1 up from tier t-1, 2T-t down from tier t), the
        indices of the pairs choosing, their candidate links (one row each) and which are
        usable (None: all), and returns a column per row. ``(pair, link)`` as
        :meth:`paths`."""
        src, dst = self.checked_pairs(src, dst)
        if src.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty
        if np.any(src >= self.n_ranks) or np.any(dst >= self.n_ranks):
            raise TopologyError("route_with routes pairs of endpoints only")
        return self._router.assemble(src, dst, np.zeros(len(src), np.int64), choose=choose)

    def with_routing(
        self, routing: Optional[str] = None, hash_seed: Optional[int] = None
    ) -> "Cluster":
        """The same cluster (links, failures) routed another way: ``routing`` one of
        :data:`ROUTINGS`, ``hash_seed`` an int."""
        routing = (
            self.routing
            if routing is None
            else choice(routing, "routing", ROUTINGS, error=TopologyError)
        )
        seed = self.hash_seed if hash_seed is None else _seed_arg(hash_seed)
        router = _ClusterRouter(self._wiring, routing, seed, self._router.failed)
        other = self._copy()
        object.__setattr__(other, "_router", router)
        fabric = dataclasses.replace(self._fabric_info, routing=routing, hash_seed=seed)
        object.__setattr__(other, "info", dataclasses.replace(self.info, fabric=fabric))
        return other

    def _copy(self) -> "Cluster":
        other = object.__new__(type(self))
        for key, value in vars(self).items():
            object.__setattr__(other, key, value)
        return other

    # ---- failures --------------------------------------------------------------------------
    def fail(self, links: ArrayLike = (), switches: ArrayLike = ()) -> "Cluster":
        """A copy of this cluster with these fabric cables and switches down.

        ``links``: directed link ids (its cable fails: both directions); ``switches``:
        fabric switch ids (every cable of the switch fails). Failed links stay in the link
        list (so loads line up with the intact fabric) but routing avoids them. NVLink,
        PCIe and NVSwitches do not fail here (nothing reroutes inside a node).
        """
        links = int_array(links, "links", error=TopologyError).ravel()
        switches = int_array(switches, "switches", error=TopologyError).ravel()
        if np.any((links < 0) | (links >= self.n_links)):
            raise TopologyError(
                f"link ids must be 0..{self.n_links - 1}, got "
                f"{links[(links < 0) | (links >= self.n_links)][:3].tolist()}"
            )
        fabric_switches = self.switches[self._node_tier[self.switches] >= 1]
        first, last = int(fabric_switches[0]), int(fabric_switches[-1])
        is_switch = np.isin(switches, fabric_switches)
        if not np.all(is_switch):
            raise TopologyError(
                f"switch ids must be fabric switches ({first}..{last}), got "
                f"{switches[~is_switch][:3].tolist()}"
            )
        inside = self._link_tier[links] == 0
        if inside.any():
            raise TopologyError(
                f"only the fabric's cables fail here (host cables and up); "
                f"link {int(links[inside][0])} is an NVLink or PCIe link"
            )
        w = self._wiring
        dead = self._failed.copy()
        padded = w.padded_link(links)
        dead[links] = True
        dead[w.real_link(w.twin[padded])] = True
        dead |= np.isin(self.link_src, switches) | np.isin(self.link_dst, switches)
        padded_dead = np.zeros(len(w.twin), bool)
        padded_dead[w.padded_link(np.flatnonzero(dead))] = True
        router = _ClusterRouter(w, self.routing, self.hash_seed, readonly(padded_dead))
        other = self._copy()
        object.__setattr__(other, "_router", router)
        object.__setattr__(other, "_failed", readonly(dead))
        n_dead = int(dead.sum()) // 2
        object.__setattr__(other, "name", f"{self.name.split(' [')[0]} [{n_dead} cables down]")
        return other

    def live_capacity(self) -> float:
        """Bytes/s (one direction) of all live links of the switch fabric, summed (host
        cables and up; NVLink and PCIe inside the nodes left out)."""
        fabric = self._link_tier >= 1
        return float(self.link_bandwidth[fabric & ~self._failed].sum())

    def bisection_cut(self) -> Optional[float]:
        """Bytes/s (one direction) that can cross between the two halves of the top block
        (the first half of its child blocks, and the rest): the least, over tiers, of the
        live uplink capacity of either half (host cables at tier 1). Computed from the
        built links. None when there is no such cut that halves the endpoints: a single
        leaf, an odd number of blocks under the top, halves of unequal size, or nodes whose
        GPUs sit on both sides (rails under a two-tier fabric)."""
        w = self._wiring
        T = w.n_tiers
        if T == 1 or w.blocks_per_block[T] % 2:
            return None
        half_leaves = w.blocks_per_block[T] // 2 * w.span[T - 1]
        leaf = self.leaf_of(np.arange(self.n_ranks))
        first = leaf < half_leaves
        if 2 * int(first.sum()) != self.n_ranks:
            return None
        if self.gpus_per_node and w.nvlink:
            per_node = first.reshape(-1, w.gpus_per_node)
            if not np.all(per_node == per_node[:, :1]):
                return None
        up = self._link_up & ~self._failed
        src = self.link_src
        best = np.inf
        for t in range(1, T + 1):
            sel = np.flatnonzero(up & (self._link_tier == t))
            if t == 1:
                half = first[src[sel] - w.host_node]
            else:
                local = (src[sel] - self._tier_first_node[t - 1]) % self._real_per_plane[t - 1]
                half = self._switch_first_leaf[t - 1][local] < half_leaves
            bw = self.link_bandwidth[sel]
            best = min(best, float(bw[half].sum()), float(bw[~half].sum()))
        return best


def _seed_arg(hash_seed: Any) -> int:
    if isinstance(hash_seed, (bool, np.bool_)) or not isinstance(hash_seed, (int, np.integer)):
        raise TopologyError(f"hash_seed must be an integer, got {hash_seed!r}")
    return int(hash_seed)


def gpu_cluster(
    fabric: Fabric,
    n_nodes: Optional[int] = None,
    gpus_per_node: int = 1,
    *,
    nvlink_bandwidth: Optional[float] = None,
    pcie_bandwidth: Optional[float] = None,
    nvlink_latency: float = 0.0,
    pcie_latency: float = 0.0,
    network_latency: float = 0.0,
    routing: str = "hash",
    hash_seed: int = 0,
    pxn: bool = False,
    family: str = "cluster",
    name: Optional[str] = None,
    sources: Sequence[str] = (),
    topology_class: Optional[type] = None,
) -> Cluster:
    """The one GPU-cluster builder (module docstring): ``n_nodes`` nodes of
    ``gpus_per_node`` GPUs on ``fabric`` (:class:`Fabric`).

    ``n_nodes``: default as many as the fabric's ports hold. ``nvlink_bandwidth``: NVLink
    nodes (NVSwitch inside, each GPU's NIC behind PCIe of ``pcie_bandwidth``); None: the
    endpoints are the hosts on their host cables. Bandwidths in bytes/s per direction;
    latencies in seconds per link of each kind (``network_latency`` for every fabric
    link). ``routing``: one of :data:`ROUTINGS`; ``hash_seed``: the ECMP seed; ``pxn``:
    NCCL's PXN (rail-optimised fabrics with NVLink nodes). ``family``, ``name`` and
    ``sources`` go into ``info`` (the compatibility builders name theirs);
    ``topology_class``: a subclass of :class:`Cluster` to build.
    """
    if not isinstance(fabric, Fabric):
        raise TopologyError(
            f"fabric must be a collectives.topology.cluster.Fabric, got {type(fabric).__name__}"
        )
    a = integer(fabric.hosts_per_leaf, "hosts_per_leaf", minimum=1, error=TopologyError)
    host_bw = number(
        fabric.host_bandwidth,
        "host_bandwidth",
        positive=True,
        unit="bytes/s per direction",
        error=TopologyError,
    )
    planes = integer(fabric.planes, "planes", minimum=1, error=TopologyError)
    if fabric.wiring not in WIRINGS:
        raise TopologyError(f"wiring must be 'mesh' or 'striped', got {fabric.wiring!r}")
    rails = flag(fabric.rails, "rails", error=TopologyError)
    tiers = _tiers_arg(fabric.tiers)
    fabric = Fabric(a, host_bw, tiers, fabric.wiring, planes, rails)
    g = integer(gpus_per_node, "gpus_per_node", minimum=1, error=TopologyError)
    routing = choice(routing, "routing", ROUTINGS, error=TopologyError)
    seed = _seed_arg(hash_seed)
    pxn = flag(pxn, "pxn", error=TopologyError)
    nvlink = nvlink_bandwidth is not None
    if nvlink:
        nv_bw = number(
            nvlink_bandwidth,
            "nvlink_bandwidth",
            positive=True,
            unit="bytes/s per direction",
            error=TopologyError,
        )
        if pcie_bandwidth is None:
            raise TopologyError(
                "NVLink nodes need pcie_bandwidth (each GPU's NIC sits behind PCIe)"
            )
        pcie_bw = number(
            pcie_bandwidth,
            "pcie_bandwidth",
            positive=True,
            unit="bytes/s per direction",
            error=TopologyError,
        )
    latencies = [
        number(value, key, unit="seconds", error=TopologyError)
        for key, value in (
            ("nvlink_latency", nvlink_latency),
            ("pcie_latency", pcie_latency),
            ("network_latency", network_latency),
        )
    ]
    if pxn and not (nvlink and rails):
        raise TopologyError(
            "pxn relays over NVLink to the GPU on the destination's rail: it "
            "needs NVLink nodes on a rail-optimised fabric"
        )
    if n_nodes is None:
        span = math.prod(t.blocks for t in tiers)
        n_nodes = span // g * a if rails else span * a // g
        if not rails and span * a % g:
            raise TopologyError(f"{span * a} host ports do not hold whole nodes of {g}")
    n_nodes = integer(n_nodes, "n_nodes", minimum=1, error=TopologyError)
    wiring, arrays = _wire(fabric, n_nodes, g, nvlink, pxn)
    e = n_nodes * g
    T = wiring.n_tiers
    tier = arrays["tier"]
    keep = arrays["keep_link"]
    keep_node = arrays["keep_node"]
    link_src, link_dst = arrays["link_src"], arrays["link_dst"]
    bandwidth = arrays["bandwidth"]
    if nvlink:
        bandwidth = np.concatenate([np.full(2 * e, nv_bw), np.full(2 * e, pcie_bw), bandwidth])
    latency = np.where(tier == 0, 0.0, latencies[2])
    if nvlink:
        latency[: 2 * e] = latencies[0]
        latency[2 * e : 4 * e] = latencies[1]
    up = arrays["up"]
    n_nodes_padded = wiring.switch_base[T] + wiring.switches_per_plane[T] * planes
    node_tier = np.zeros(n_nodes_padded, np.int64)
    for t in range(1, T + 1):
        node_tier[
            wiring.switch_base[t] : wiring.switch_base[t] + wiring.switches_per_plane[t] * planes
        ] = t
    node_map = wiring.node_map  # set, as keep is, when the last tier-2 block is partly filled
    if keep is not None and node_map is not None:
        link_src = node_map[link_src[keep]]
        link_dst = node_map[link_dst[keep]]
        bandwidth, latency, tier, up = bandwidth[keep], latency[keep], tier[keep], up[keep]
        node_tier = node_tier[keep_node]
    levels = (LEVELS[:2] if nvlink else ()) + tuple(tier_level(t) for t in range(1, T + 1))
    level = tier - 1 + (2 if nvlink else 0)
    if nvlink:
        level[: 2 * e] = 0
        level[2 * e : 4 * e] = 1
    roles = [ROLES.index("endpoint")] * e
    if nvlink:
        roles += [ROLES.index("nic")] * e + [ROLES.index("switch")] * n_nodes
    n_real_nodes = len(node_tier)
    node_role = np.concatenate(
        [
            np.array(roles, np.int8),
            np.full(n_real_nodes - len(roles), ROLES.index("switch"), np.int8),
        ]
    )
    real_leaves = wiring.real_leaves
    per_plane = [None, real_leaves] + list(wiring.switches_per_plane[2:])
    cables = arrays["cables"]
    real_cables = [None, cables[1]] + [
        cables[2] * real_leaves // wiring.switches_per_plane[1] if t == 2 else cables[t]
        for t in range(2, T + 1)
    ]
    info_fabric = FabricInfo(
        hosts_per_leaf=a,
        switches_per_tier=tuple(n * planes for n in per_plane[1:]),
        cables_per_tier=tuple(int(c) for c in real_cables[1:]),
        tier_bandwidth=tuple(wiring.bandwidth[1:]),
        endpoints_per_block=tuple(int(s * a) for s in wiring.span[1:]),
        planes=planes,
        wiring=fabric.wiring,
        rails=rails,
        routing=routing,
        hash_seed=seed,
    )
    info = TopologyInfo(
        family=family,
        shape=(n_nodes, g) if g > 1 or nvlink else None,
        levels=levels,
        sources=tuple(sources),
        gpus_per_node=g if (g > 1 or nvlink) else None,
        fabric=info_fabric,
    )
    failed = readonly(np.zeros(len(link_src), bool))
    router = _ClusterRouter(wiring, routing, seed, readonly(np.zeros(len(wiring.twin), bool)))
    cls = Cluster if topology_class is None else topology_class
    if not (isinstance(cls, type) and issubclass(cls, Cluster)):
        raise TopologyError("topology_class must be a subclass of Cluster")
    if name is None:
        name = (
            f"{T}-tier cluster of {n_nodes} x {g}"
            + (" GPUs" if g > 1 else " hosts")
            + (f", {planes} planes" if planes > 1 else "")
        )
    topo = cls(
        e,
        link_src,
        link_dst,
        bandwidth,
        latency,
        router,
        node_role=node_role,
        link_level=level,
        info=info,
        name=name,
    )
    # where each switch's block starts, in leaves (for the bisection cut), per tier
    first_leaf: list[Any] = [None]
    for t in range(1, T + 1):
        local = np.arange(per_plane[t])
        first_leaf.append(readonly(local // wiring.switches_per_block[t] * wiring.span[t]))
    tier_first = [None] + [int(np.flatnonzero(node_tier == t)[0]) for t in range(1, T + 1)]
    for key, value in (
        ("_wiring", wiring),
        ("_tiers", tiers),
        ("_tier_first_node", tuple(tier_first)),
        ("_node_tier", readonly(node_tier)),
        ("_link_tier", readonly(tier)),
        ("_link_up", readonly(up)),
        ("_failed", failed),
        ("_real_per_plane", tuple(per_plane)),
        ("_switch_first_leaf", tuple(first_leaf)),
    ):
        object.__setattr__(topo, key, value)
    return topo


# ---- the SuperPOD-style cluster (the DESIGN.md signature) ---------------------------------


def cluster(
    n_nodes: int,
    gpus_per_node: int,
    *,
    nvlink_bandwidth: float,
    pcie_bandwidth: float,
    nic_bandwidth: float,
    nodes_per_unit: Optional[int] = None,
    n_spines: Optional[int] = None,
    spine_bandwidth: Optional[float] = None,
    spine_links: int = 1,
    units_per_group: Optional[int] = None,
    cores_per_group: int = 1,
    core_links: int = 1,
    core_bandwidth: Optional[float] = None,
    nvlink_latency: float = 0.0,
    pcie_latency: float = 0.0,
    network_latency: float = 0.0,
    pxn: bool = False,
    routing: str = "hash",
    hash_seed: int = 0,
    name: Optional[str] = None,
) -> Cluster:
    """GPU nodes joined by a rail-optimised leaf/spine(/core) fabric, as in an NVIDIA DGX
    SuperPOD: :func:`gpu_cluster` on the fabric these arguments describe.

    Each node's GPUs sit on one NVSwitch and each GPU has its own NIC behind PCIe. Nodes
    are grouped into scalable units of ``nodes_per_unit`` (default: one unit of all nodes;
    a last unit may be partly filled). In a unit, NIC ``i`` of every node goes to leaf
    ``(unit, i)``: one leaf per rail per unit.

    Two tiers (default): every leaf has ``spine_links`` parallel links each way to every one
    of the ``n_spines`` spines. Three tiers: with ``units_per_group`` smaller than the number
    of units, the units form spine-leaf groups of that many units; each group has its own
    ``n_spines`` spines, every leaf of the group linked to each of them as above; spine ``s``
    of every group has ``core_links`` parallel links each way to each of the
    ``cores_per_group`` core switches of core group ``s`` (so ``n_spines * cores_per_group``
    cores in all).

    Nodes, in order (``E = n_nodes * gpus_per_node``, ``U`` units, ``G = gpus_per_node``,
    ``S`` spines per group, ``K`` groups): GPUs ``0..E-1`` (GPU ``node * G + i``), their NICs
    ``E + gpu`` (role "nic"), the node NVSwitches ``2E + node``, the leaves
    ``2E + n_nodes + unit * G + rail``, the spines ``2E + n_nodes + U * G + group * S + s``,
    then the cores (``s * cores_per_group + c``). Links, each direction apart: GPU <-> its
    NVSwitch (``nvlink_bandwidth``, level "nvlink"), GPU <-> its NIC (``pcie_bandwidth``,
    "pcie"), NIC <-> its leaf (``nic_bandwidth``, "leaf"), leaf <-> spine
    (``spine_bandwidth``, default ``nic_bandwidth``, "spine"), spine <-> core
    (``core_bandwidth``, default ``spine_bandwidth``, "core"). Bandwidths in bytes/s per
    direction; each latency is seconds per link of that kind (``network_latency`` for leaf,
    spine and core links).

    ``n_spines`` defaults to the nodes of a full unit, ``min(nodes_per_unit, n_nodes)``: a
    leaf then has at least as many up-links (to spines) as down-links (to NICs), so with
    ``spine_bandwidth >= nic_bandwidth`` (the default) the fabric is non-blocking in
    capacity (1:1, full bisection); fixed hashed routes may still share a spine link. Spines
    carry all traffic between leaves: across units, and across rails even in one unit.

    Routes, ``routing`` (default hashed ECMP: the spine, core and parallel cables are
    digits of :func:`~collectives.topology.hashing.flow_hash` of the two GPUs, in that
    order), ``pxn`` and the routes to a GPU's own NVSwitch and rail leaf: as in the module
    docstring.
    """
    n_nodes = integer(n_nodes, "n_nodes", minimum=1, error=TopologyError)
    g = integer(gpus_per_node, "gpus_per_node", minimum=1, error=TopologyError)
    per_unit = (
        n_nodes
        if nodes_per_unit is None
        else integer(nodes_per_unit, "nodes_per_unit", minimum=1, error=TopologyError)
    )
    n_spines = (
        min(per_unit, n_nodes)
        if n_spines is None
        else integer(n_spines, "n_spines", minimum=1, error=TopologyError)
    )
    spine_links = integer(spine_links, "spine_links", minimum=1, error=TopologyError)
    cores_per_group = integer(cores_per_group, "cores_per_group", minimum=1, error=TopologyError)
    core_links = integer(core_links, "core_links", minimum=1, error=TopologyError)
    n_units = -(-n_nodes // per_unit)
    per_group = (
        n_units
        if units_per_group is None
        else integer(units_per_group, "units_per_group", minimum=1, error=TopologyError)
    )
    spine_bw = nic_bandwidth if spine_bandwidth is None else spine_bandwidth
    bw = {
        key: number(value, key, positive=True, unit="bytes/s per direction", error=TopologyError)
        for key, value in (
            ("nvlink_bandwidth", nvlink_bandwidth),
            ("pcie_bandwidth", pcie_bandwidth),
            ("nic_bandwidth", nic_bandwidth),
            ("spine_bandwidth", spine_bw),
            ("core_bandwidth", spine_bw if core_bandwidth is None else core_bandwidth),
        )
    }
    for key, value in (
        ("nvlink_latency", nvlink_latency),
        ("pcie_latency", pcie_latency),
        ("network_latency", network_latency),
    ):
        number(value, key, unit="seconds", error=TopologyError)
    n_groups = -(-n_units // per_group)
    tiers = [
        Tier(
            per_group * g if n_groups > 1 else n_units * g,
            n_spines,
            spine_links,
            bw["spine_bandwidth"],
        )
    ]
    if n_groups > 1:
        tiers.append(Tier(n_groups, n_spines * cores_per_group, core_links, bw["core_bandwidth"]))
    fabric = Fabric(per_unit, bw["nic_bandwidth"], tuple(tiers), wiring="striped", rails=True)
    n_cores = n_spines * cores_per_group if n_groups > 1 else 0
    units = f", {n_units} units" if n_units > 1 else ""
    tier_text = (
        f", {n_groups} groups of {n_spines} spines, {n_cores} cores"
        if n_groups > 1
        else f", {n_spines} spines"
    )
    if name is None:
        name = f"cluster of {n_nodes} x {g} GPUs{units}{tier_text}" + (", PXN" if pxn else "")
    return gpu_cluster(
        fabric,
        n_nodes,
        g,
        nvlink_bandwidth=bw["nvlink_bandwidth"],
        pcie_bandwidth=bw["pcie_bandwidth"],
        nvlink_latency=nvlink_latency,
        pcie_latency=pcie_latency,
        network_latency=network_latency,
        routing=routing,
        hash_seed=hash_seed,
        pxn=pxn,
        name=name,
    )
