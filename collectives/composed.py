"""Composed topologies: a product of dimensions, and GPU nodes joined by a rail fabric.

:func:`product` stacks existing topologies as the dimensions of one multi-dimensional
topology, as ASTRA-sim builds a system from ring, switch and fully-connected building
blocks (one per dimension), routed dimension by dimension. :func:`cluster` builds GPU nodes
(NVSwitch inside, one NIC per GPU) joined by a rail-optimised leaf/spine fabric, the way an
NVIDIA DGX SuperPOD is wired. Both are re-exported by :mod:`collectives.topology`. Every
bandwidth is bytes/s per direction of one link, every latency seconds per link; hardware
numbers live in :mod:`collectives.hardware`, never here.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .errors import TopologyError
from .topology import ROLES, Topology, TopologyInfo
from .validation import flag, integer, number

__all__ = ["product", "cluster"]


# ---- product of dimensions ----------------------------------------------------------------

class _ProductRouter:
    """Dimension-order routing: along dimension 0 first (that dimension's own router on the
    local coordinates, in the copy the packet is in), then dimension 1, and so on."""

    def __init__(self, dimensions, strides, link_offsets):
        self.dimensions = dimensions
        self.strides = strides
        self.link_offsets = link_offsets

    def __call__(self, src, dst):
        node = src.copy()
        pairs, links = [], []
        for dim, stride, offset in zip(self.dimensions, self.strides, self.link_offsets):
            size = dim.n_ranks
            here, there = (node // stride) % size, (dst // stride) % size
            moving = np.flatnonzero(here != there)
            if moving.size:
                pair, link = dim.paths(here[moving], there[moving])
                copy = _copy_index(node[moving], stride, size)
                pairs.append(moving[pair])
                links.append(offset + copy[pair] * dim.n_links + link)
            node = node + (there - here) * stride
        pair, link = np.concatenate(pairs), np.concatenate(links)
        order = np.argsort(pair, kind="stable")     # each pair's hops stay in dimension order
        return pair[order], link[order]


def _copy_index(node, stride, size):
    """Which copy of a dimension (of the given stride and size) an endpoint sits in: its
    row-major index over the other dimensions' coordinates."""
    return node // (stride * size) * stride + node % stride


def product(*dimensions: Topology, name: Optional[str] = None,
            level_names: Optional[Sequence[str]] = None) -> Topology:
    """The multi-dimensional topology whose dimension ``d`` is ``dimensions[d]``.

    Endpoints are numbered row-major over ``(dimensions[0].n_ranks, dimensions[1].n_ranks,
    ...)`` (dimension 0 most significant). For every dimension there is one copy of its
    topology for every combination of the other coordinates, with that dimension's links
    (bandwidth, latency) and switches; switches come after all endpoints, dimension by
    dimension, copy by copy. A route moves along dimension 0 with that dimension's own
    router, then along dimension 1, and so on, skipping dimensions already in place.

    ``info.shape`` is the dimensions' sizes, ``info.levels`` one name per dimension
    (``level_names``, default ``"dim0"``, ``"dim1"``, ...), ``link_level`` each link's
    dimension. A product of two rings is wired and routed as the 2-D torus of that shape.

    Modelled: per-dimension link speeds and routing, shared links. Left out: routes to the
    dimensions' switches (in-network reduction inside one dimension is costed on that
    dimension alone), routing that mixes dimensions, dimensions with NICs.
    """
    if not dimensions:
        raise TopologyError("product() needs at least one dimension (a Topology)")
    for d, dim in enumerate(dimensions):
        if not isinstance(dim, Topology):
            raise TopologyError(
                f"dimension {d} of product() must be a Topology, got {type(dim).__name__}")
        if dim.n_nics:
            raise TopologyError(
                f"dimension {d} of product() ({dim.name}) has NICs; only topologies of "
                "endpoints, switches and links can be dimensions")
    levels = _level_names(level_names, len(dimensions))
    sizes = tuple(dim.n_ranks for dim in dimensions)
    n_ranks = math.prod(sizes)
    strides = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    srcs, dsts, bandwidths, latencies, link_levels, link_offsets = [], [], [], [], [], []
    n_links = 0
    n_switches = 0
    for d, (dim, stride) in enumerate(zip(dimensions, strides)):
        size = dim.n_ranks
        n_copies = n_ranks // size
        copy = np.arange(n_copies)[:, None]
        # a copy's local endpoint j is the global endpoint with coordinate j on dimension d
        first = copy // stride * stride * size + copy % stride
        ends = []
        for local in (dim.link_src, dim.link_dst):
            local = local[None, :]
            ends.append(np.where(local < size, first + local * stride,
                                 n_ranks + n_switches + copy * dim.n_switches + local - size))
        srcs.append(ends[0].ravel())
        dsts.append(ends[1].ravel())
        bandwidths.append(np.tile(dim.link_bandwidth, n_copies))
        latencies.append(np.tile(dim.link_latency, n_copies))
        link_levels.append(np.full(n_copies * dim.n_links, d))
        link_offsets.append(n_links)
        n_links += n_copies * dim.n_links
        n_switches += n_copies * dim.n_switches
    label = " x ".join(dim.name for dim in dimensions)
    return Topology(n_ranks, np.concatenate(srcs), np.concatenate(dsts),
                    np.concatenate(bandwidths), np.concatenate(latencies),
                    _ProductRouter(tuple(dimensions), strides, link_offsets),
                    n_switches=n_switches, link_level=np.concatenate(link_levels),
                    info=TopologyInfo(family="product", shape=sizes, levels=levels),
                    name=f"product ({label})" if name is None else name)


def _level_names(level_names, n_dimensions):
    if level_names is None:
        return tuple(f"dim{d}" for d in range(n_dimensions))
    if isinstance(level_names, str):
        raise TopologyError(f"level_names must be a sequence of names, got {level_names!r}")
    names = tuple(level_names)
    if len(names) != n_dimensions or len(set(names)) != len(names) or not all(
            isinstance(n, str) and n for n in names):
        raise TopologyError(
            f"level_names must be {n_dimensions} distinct non-empty strings (one per "
            f"dimension), got {names!r}")
    return names


# ---- GPU cluster on a rail-optimised fabric -------------------------------------------------

_LEVELS = ("nvlink", "pcie", "leaf", "spine", "core")


class _ClusterRouter:
    """Routes of :func:`cluster`: up from the source to where the two sides meet (the node's
    NVSwitch, a rail leaf, a spine of their spine-leaf group, or a core switch), then down
    to the destination. Which spine, core and parallel cable a route takes are digits of one
    fixed hash of (src, dst), as ECMP would pick them."""

    reaches_switches = True

    def __init__(self, n_nodes, gpus_per_node, nodes_per_unit, n_units, n_spines, pxn=False,
                 spine_links=1, units_per_group=None, cores_per_group=0, core_links=1):
        self.pxn = pxn
        self.gpus_per_node = gpus_per_node
        self.nodes_per_unit = nodes_per_unit
        self.n_spines = n_spines                      # spines in each spine-leaf group
        self.spine_links = spine_links
        self.units_per_group = units_per_group or n_units
        self.n_groups = -(-n_units // self.units_per_group)
        self.cores_per_group = cores_per_group if self.n_groups > 1 else 0
        self._core_digits = max(self.cores_per_group, 1)      # hash base: 1 without cores
        self.core_links = core_links
        self.n_gpus = n_gpus = n_nodes * gpus_per_node
        self.first_nvswitch = 2 * n_gpus
        self.first_leaf = 2 * n_gpus + n_nodes
        self.n_leaves = n_units * gpus_per_node
        self.first_spine = self.first_leaf + self.n_leaves
        self.first_core = self.first_spine + self.n_groups * n_spines
        self.n_cores = n_spines * self.cores_per_group
        self.leaf_spine_links = self.n_leaves * n_spines * spine_links     # each direction
        self.first_core_link = 6 * n_gpus + 2 * self.leaf_spine_links
        self.spine_core_links = self.n_groups * self.n_cores * core_links  # each direction

    def leaf(self, gpu):
        """Index (0-based among the leaves) of each GPU's rail leaf."""
        node, rail = gpu // self.gpus_per_node, gpu % self.gpus_per_node
        return node // self.nodes_per_unit * self.gpus_per_node + rail

    def group(self, leaf):
        """The spine-leaf group of each leaf (0-based): units_per_group units share spines."""
        return leaf // self.gpus_per_node // self.units_per_group

    def __call__(self, src, dst):
        if self.pxn:
            return self._pxn(src, dst)
        return self._direct(src, dst)

    def _pxn(self, src, dst):
        """NCCL's PXN: a GPU sends to a GPU of another node on another rail by moving the data
        over NVLink to the GPU of its own node on the destination's rail, whose NIC sends it
        (so it stays on one rail leaf inside a unit)."""
        n_gpus, g = self.n_gpus, self.gpus_per_node
        relay = ((src < n_gpus) & (dst < n_gpus) & (src // g != dst // g)
                 & (src % g != dst % g))
        via = np.where(relay, src // g * g + dst % g, src)    # the GPU on the right rail
        first_pair, first_link = self._direct(src[relay], via[relay])        # over NVLink
        rest_pair, rest_link = self._direct(via, dst)
        index = np.flatnonzero(relay)
        pair = np.concatenate([index[first_pair], rest_pair])
        part = np.concatenate([np.zeros(len(first_pair), np.int64),
                               np.ones(len(rest_pair), np.int64)])
        link = np.concatenate([first_link, rest_link])
        order = np.lexsort((part, pair))                       # stable within each part
        return pair[order], link[order]

    def _choices(self, src, dst):
        """Spine, core and cable digits of the route's hash."""
        h = _hash_pair(src, dst)
        digits = []
        for base in (self.n_spines, self.spine_links, self._core_digits,
                     self.core_links, self.core_links, self.spine_links):
            digits.append((h % np.uint64(base)).astype(np.int64))
            h //= np.uint64(base)
        return digits

    def _direct(self, src, dst):
        n_gpus, g = self.n_gpus, self.gpus_per_node
        src_gpu, dst_gpu = src < n_gpus, dst < n_gpus
        gpu_s = np.where(src_gpu, src, dst)           # the GPU on each side; a switch end
        gpu_d = np.where(dst_gpu, dst, src)           # borrows the other side's GPU
        leaf_s, leaf_d = self.leaf(gpu_s), self.leaf(gpu_d)
        group_s, group_d = self.group(leaf_s), self.group(leaf_d)
        # where the two sides meet: 0 the node's NVSwitch, 1 a rail leaf, 2 a spine, 3 a core
        meet = np.where(gpu_s // g == gpu_d // g, 0,
                        np.where(leaf_s == leaf_d, 1, np.where(group_s == group_d, 2, 3)))
        switch_end = np.where(src_gpu, dst, src)
        meet = np.where(switch_end == self.first_nvswitch + gpu_s // g, 0, meet)
        meet = np.where(switch_end == self.first_leaf + leaf_s, 1, meet)
        ok = (src_gpu & dst_gpu) | ((src_gpu != dst_gpu) & (
            (switch_end == self.first_nvswitch + gpu_s // g)
            | (switch_end == self.first_leaf + leaf_s)))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise TopologyError(
                f"a cluster routes a GPU only to and from its own node's NVSwitch and its rail "
                f"leaf switch, not {int(src[i])} -> {int(dst[i])}")
        spine, cable_up, core, core_up, core_down, cable_down = self._choices(src, dst)
        base, per = 6 * n_gpus, self.leaf_spine_links
        up_spine = base + (leaf_s * self.n_spines + spine) * self.spine_links + cable_up
        down_spine = base + per + (leaf_d * self.n_spines + spine) * self.spine_links + cable_down
        # spine s of group G talks to the cores of core group s (cores s*C .. s*C + C-1)
        c, k = self._core_digits, self.core_links
        up_core = self.first_core_link + (
            (group_s * self.n_spines + spine) * c + core) * k + core_up
        down_core = self.first_core_link + self.spine_core_links + (
            (group_d * self.n_spines + spine) * c + core) * k + core_down
        none = np.full(len(src), -1)
        up = np.stack([np.where(meet == 0, gpu_s, 2 * n_gpus + gpu_s),        # NVLink / PCIe
                       np.where(meet > 0, 4 * n_gpus + gpu_s, none),          # NIC -> leaf
                       np.where(meet >= 2, up_spine, none),                   # leaf -> spine
                       np.where(meet == 3, up_core, none)], axis=1)           # spine -> core
        down = np.stack([np.where(meet == 3, down_core, none),                # core -> spine
                         np.where(meet >= 2, down_spine, none),               # spine -> leaf
                         np.where(meet > 0, 5 * n_gpus + gpu_d, none),        # leaf -> NIC
                         np.where(meet == 0, n_gpus + gpu_d, 3 * n_gpus + gpu_d)], axis=1)
        up[~src_gpu] = -1                             # the path starts at that switch
        down[~dst_gpu] = -1                           # the path ends at that switch
        hops = np.concatenate([up, down], axis=1)
        pair = np.repeat(np.arange(len(src)), (hops >= 0).sum(axis=1))
        link = hops.ravel()
        return pair, link[link >= 0]


def _hash_pair(src, dst):
    """A fixed pseudo-random 64-bit hash of each (src, dst): MurmurHash3's 64-bit finaliser of
    ``src * 2**32 + dst``; its digits pick spines, cores and cables as ECMP would."""
    h = (src.astype(np.uint64) << np.uint64(32)) | dst.astype(np.uint64)
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> np.uint64(33)
        h *= np.uint64(multiplier)
    h ^= h >> np.uint64(33)
    return h


def cluster(n_nodes: int, gpus_per_node: int, *, nvlink_bandwidth: float,
            pcie_bandwidth: float, nic_bandwidth: float, nodes_per_unit: Optional[int] = None,
            n_spines: Optional[int] = None, spine_bandwidth: Optional[float] = None,
            spine_links: int = 1, units_per_group: Optional[int] = None,
            cores_per_group: int = 1, core_links: int = 1,
            core_bandwidth: Optional[float] = None,
            nvlink_latency: float = 0.0, pcie_latency: float = 0.0,
            network_latency: float = 0.0, pxn: bool = False,
            name: Optional[str] = None) -> Topology:
    """GPU nodes joined by a rail-optimised leaf/spine(/core) fabric, as in an NVIDIA DGX
    SuperPOD.

    Each node's GPUs sit on one NVSwitch (a non-blocking crossbar) and each GPU has its own
    NIC behind PCIe. Nodes are grouped into scalable units of ``nodes_per_unit`` (default:
    one unit of all nodes; a last unit may be partly filled). In a unit, NIC ``i`` of every
    node goes to leaf ``(unit, i)``: one leaf per rail per unit.

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

    Routes: inside a node, GPU -> NVSwitch -> GPU. Between nodes: GPU -> NIC -> leaf; down
    the same leaf if the destination is on it (same unit and rail), else up to a spine of
    the group and down to the destination's leaf if it is in the same group, else spine ->
    core -> the same-numbered spine of the destination's group -> its leaf; then NIC -> GPU.
    The spine, core and parallel cables are digits of a fixed hash of (src, dst)
    (MurmurHash3's 64-bit finaliser of ``src * 2**32 + dst``), so routes spread as ECMP
    would, collisions included. A GPU also routes to and from its own node's NVSwitch (NVLS)
    and its rail leaf (InfiniBand SHARP).

    ``pxn``: route as NCCL's PXN does (NCCL user guide, environment variable
    ``NCCL_PXN_DISABLE``: "inter-node communication using a non-local NIC, using NVLink and
    an intermediate GPU"): to a GPU of another node on another rail, first over NVLink to
    the GPU of the source's node on the destination's rail, then out of that GPU's NIC, so
    the route crosses NVLink, PCIe and NIC, the rail leaf and, across units, a spine.

    Modelled: the route a SuperPOD takes, each hop's bandwidth and latency, parallel cables,
    shared links. Left out: adaptive routing, switch radix limits (no check that a switch
    has the ports), NVSwitch as 4 chips rather than one crossbar, and which operations NCCL
    sends through PXN (it is a routing choice of the whole topology here).
    """
    n_nodes = integer(n_nodes, "n_nodes", minimum=1, error=TopologyError)
    g = integer(gpus_per_node, "gpus_per_node", minimum=1, error=TopologyError)
    per_unit = n_nodes if nodes_per_unit is None else integer(
        nodes_per_unit, "nodes_per_unit", minimum=1, error=TopologyError)
    n_spines = min(per_unit, n_nodes) if n_spines is None else integer(
        n_spines, "n_spines", minimum=1, error=TopologyError)
    spine_links = integer(spine_links, "spine_links", minimum=1, error=TopologyError)
    cores_per_group = integer(cores_per_group, "cores_per_group", minimum=1,
                              error=TopologyError)
    core_links = integer(core_links, "core_links", minimum=1, error=TopologyError)
    n_units = -(-n_nodes // per_unit)
    per_group = n_units if units_per_group is None else integer(
        units_per_group, "units_per_group", minimum=1, error=TopologyError)
    spine_bw = nic_bandwidth if spine_bandwidth is None else spine_bandwidth
    bw = {key: number(value, key, positive=True, unit="bytes/s per direction",
                      error=TopologyError)
          for key, value in (("nvlink_bandwidth", nvlink_bandwidth),
                             ("pcie_bandwidth", pcie_bandwidth),
                             ("nic_bandwidth", nic_bandwidth),
                             ("spine_bandwidth", spine_bw),
                             ("core_bandwidth", spine_bw if core_bandwidth is None
                              else core_bandwidth))}
    lat = [number(value, key, unit="seconds", error=TopologyError)
           for key, value in (("nvlink_latency", nvlink_latency),
                              ("pcie_latency", pcie_latency),
                              ("network_latency", network_latency))]
    e = n_nodes * g
    router = _ClusterRouter(n_nodes, g, per_unit, n_units, n_spines,
                            flag(pxn, "pxn", error=TopologyError), spine_links=spine_links,
                            units_per_group=per_group, cores_per_group=cores_per_group,
                            core_links=core_links)
    gpu = np.arange(e)
    nic, nvswitch = e + gpu, 2 * e + gpu // g
    leaf = router.first_leaf + router.leaf(gpu)
    # leaf-spine cables: (leaf, s, k) row-major; the leaf's group picks the spines
    leaf_i, spine_i, _ = np.indices((n_units * g, n_spines, spine_links)).reshape(3, -1)
    spine_leaf = router.first_leaf + leaf_i
    spine = router.first_spine + router.group(leaf_i) * n_spines + spine_i
    # spine-core cables: (group, s, c, k) row-major; spine s of a group -> core group s
    n_groups, per_core = router.n_groups, router.cores_per_group
    group_c, spine_c, core_c, _ = np.indices((n_groups, n_spines, per_core, core_links)
                                             ).reshape(4, -1)
    core_spine = router.first_spine + group_c * n_spines + spine_c
    core = router.first_core + spine_c * per_core + core_c
    # link ids: gpu->nvswitch, nvswitch->gpu, gpu->nic, nic->gpu, nic->leaf, leaf->nic,
    # leaf->spine, spine->leaf, spine->core, core->spine -- the arithmetic _ClusterRouter uses
    link_src = np.concatenate([gpu, nvswitch, gpu, nic, nic, leaf, spine_leaf, spine,
                               core_spine, core])
    link_dst = np.concatenate([nvswitch, gpu, nic, gpu, leaf, nic, spine, spine_leaf,
                               core, core_spine])
    level = np.repeat([0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
                      [e] * 6 + [len(spine_i)] * 2 + [len(core_c)] * 2)
    bandwidth = np.array([bw[k] for k in ("nvlink_bandwidth", "pcie_bandwidth",
                                          "nic_bandwidth", "spine_bandwidth",
                                          "core_bandwidth")])[level]
    latency = np.array([lat[0], lat[1], lat[2], lat[2], lat[2]])[level]
    n_switch_nodes = n_nodes + n_units * g + n_groups * n_spines + router.n_cores
    node_role = np.repeat([ROLES.index("endpoint"), ROLES.index("nic"), ROLES.index("switch")],
                          [e, e, n_switch_nodes])
    units = f", {n_units} units" if n_units > 1 else ""
    tiers = (f", {n_groups} groups of {n_spines} spines, {router.n_cores} cores"
             if n_groups > 1 else f", {n_spines} spines")
    return Topology(e, link_src, link_dst, bandwidth, latency, router, node_role=node_role,
                    link_level=level,
                    info=TopologyInfo(family="cluster", shape=(n_nodes, g),
                                      levels=_LEVELS if n_groups > 1 else _LEVELS[:4]),
                    name=name if name is not None else
                    f"cluster of {n_nodes} x {g} GPUs{units}{tiers}" + (", PXN" if pxn else ""))
