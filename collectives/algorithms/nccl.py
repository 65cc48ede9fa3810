"""NCCL's own cross-node algorithms as chunk-level Schedules: its Tree and its Ring.

Ranks are numbered node-major, ``rank = node * g + local`` for ``N`` nodes of ``g`` GPUs, with
one NIC per GPU (NIC ``i`` next to GPU ``i``, NIC ``i`` of every node on rail ``i``), as in a
DGX node and in :func:`collectives.topology.cluster`. What follows is read from NCCL's source
(NCCL 2.30.7, github.com/NVIDIA/nccl commit 5067397c2676d5aed50042fc39e5c8ee96eb0027);
the code here is our own.

**Channels.** NCCL's topology search (``src/graph/search.cc``, ``ncclTopoCompute``) finds a
number of *channels*; each is one path through every node's GPUs. In
``ncclTopoSearchRecNet`` channel ``c`` first tries NIC ``nets[(c + i) mod nNets]`` with
``i = 0`` (``nets`` as ``ncclTopoSelectNets`` lists them) and enters the node at that NIC's
local GPU (``net->net.localGpu``), so with one NIC per GPU, listed in GPU order, channel
``c`` enters at GPU ``c mod g`` and each channel uses its own NIC and rail. Inside
an NVSwitch node ``ncclTopoSearchNextGpuSort`` tries the neighbouring GPUs first: after GPU
``i`` a ring tries GPU ``i - 1`` first, a tree GPU ``i + 1``. **On a single node** there
is no NIC to enter by: ``ncclTopoSearchRec`` ("Intra-node only") tries the PCI order first
("Try PCI order first", ``FORCED_ORDER_PCI``) and the next channels replay the previous
one (``FORCED_ORDER_REPLAY``); on an NVSwitch node every order is as fast, so the PCI order
stands: every channel visits ``0, 1, .., g-1``, as a single-node H100 log shows
(NVIDIA/nccl issue #1259). The buffer is split into one contiguous part per channel
(``ncclCollCbdPart``, ``src/include/device.h``).

**Ring** (``src/graph/connect.cc``: ``ncclTopoPreset``, ``connectRings``). Within node
``k`` the ring of channel ``c`` visits the GPUs in the search's order ``intra[0..g-1]``;
``intra[0]`` receives from the previous node (``ringRecv``) and ``intra[g-1]`` sends to
the next one (``ringSend``): ``prev[recv[k]] = send[k-1]``, ``next[send[k]] = recv[k+1]``,
nodes in order ``0, 1, .., N-1`` and around. The search's first choice on an NVSwitch node
is ``c, c-1, .., c+1`` (GPUs mod ``g``): the ring enters at GPU ``c`` and leaves from GPU
``c + 1`` back out of NIC ``c``: with ``NCCL_CROSS_NIC`` at its default 2, ``ncclTopoCompute``
first searches with crossNic off, where ``ncclTopoSearchCheckNet`` only accepts a leaving
NIC on the rail the ring entered by, which GPU ``c + 1`` reaches by PXN (path type
``PATH_PXN``: over NVLink to GPU ``c``, then its NIC). NCCL's logs show this
order on 8 x H100 nodes, e.g. ``Channel 00/16 : 0 7 6 5 4 3 2 1 8 15 14 ...`` on three
nodes (virtual machines with 8 dual-port 200 Gb/s ConnectX-7 NICs each, ``NCCL_CROSS_NIC=2``),
with ``NVLS Head 0: 0 8 16`` (NVIDIA/nccl issue #1453). That the exit hop goes through NIC
``c`` by PXN is read from the source; no log in the sources shows the send side's NIC.
The all-reduce is ``runRing`` of ``src/device/all_reduce.h``: ``2(R - 1)`` steps over the
``R = N g`` ranks, the rank at ring index ``i`` (counted from rank 0, ``src/init.cc``)
ending the reduce-scatter with chunk ``i`` of its channel's part.

**Tree** (``src/graph/connect.cc``: ``ncclTopoPreset``, ``connectTrees``;
``src/graph/trees.cc``: ``ncclGetDtree``). The tree spans *nodes*: the double binary tree
over the ``N`` nodes (:func:`~collectives.algorithms.double_binary_trees`) joins node to
node, and inside each node the GPUs form a chain ``intra[0] -> intra[1] -> .. ->
intra[g-1]`` (``tree.up = intra[i-1]``, ``tree.down[0] = intra[i+1]``). NCCL first
searches for ``NCCL_TOPO_PATTERN_BALANCED_TREE`` (``src/init.cc``), which puts a node's first
child on ``intra[1]``; on Hopper and later ``ncclTopoCompute`` falls back to the plain
``NCCL_TOPO_PATTERN_TREE`` when that search falls short, and that is what is modelled
here: the node's parent and both children connect to the chain head ``intra[0]``,
which for channel ``c`` is GPU ``c`` (on NIC ``c``); the search's chain order is
``c, c+1, .., c-1``. Every channel is duplicated: channel ``c`` runs tree 1 and channel
``c + C`` tree 2 on the same chains, so each tree carries half of the buffer. The device
code (``runTreeSplit``) reduces chunk after chunk up the tree while earlier chunks are
already coming down: one chunk per step per edge.

Left out: the protocols (LL, LL128, Simple) and their chunk sizes (``src/enqueue.cc``),
the number of channels NCCL picks (``ncclTopoCompute``, ``src/graph/tuning.cc``), the
balanced and split tree patterns (a node's first child, or both, on ``intra[1]``), the rail
alternation of crossNic rings on odd nodes (``ncclTopoPostset``), other search outcomes
on other hardware, CollNet without NVLS, and PAT. NCCL's NVLS and NVLSTree, which need
switch participants, are in :mod:`collectives.algorithms.innetwork`. Compare with
:func:`~collectives.algorithms.hierarchical_all_reduce`, the textbook two-level form. The
double binary tree itself is taught in chapter "All-reduce"; these schedules in chapters
"Collectives inside a node" and "Collectives across nodes".
"""

from __future__ import annotations

import numpy as np

from ..errors import ScheduleError
from ..schedule import Schedule
from ..traffic import Traffic
from ..validation import integer, renamed_arg
from .checks import chunk_count
from .tree import depth_and_height, double_binary_trees

__all__ = [
    "nccl_tree_all_reduce",
    "nccl_ring_all_reduce",
    "nccl_ring_all_gather",
    "nccl_ring_reduce_scatter",
    "nccl_rings",
    "nccl_trees",
]


def _sizes(n_nodes, gpus_per_node, n_channels):
    return tuple(
        integer(value, name, minimum=1, error=ScheduleError)
        for value, name in (
            (n_nodes, "n_nodes"),
            (gpus_per_node, "gpus_per_node"),
            (n_channels, "n_channels"),
        )
    )


# ---- rings ---------------------------------------------------------------------------------


def nccl_rings(n_nodes: int, gpus_per_node: int, n_channels: int = 1) -> np.ndarray:
    """NCCL's rings: an int array ``(n_channels, N * g)``, row ``c`` the ranks of channel
    ``c``'s ring in order, starting at rank 0 (NCCL's ring index).

    Across nodes, in every node the ring of channel ``c`` enters at local GPU ``c mod g``
    and visits ``c, c-1, .., c+1`` (mod ``g``); it leaves the node from GPU ``c + 1`` for
    GPU ``c`` of the next node (``connectRings``). On a single node every channel is the
    PCI order ``0, 1, .., g-1`` (the search's first try). See the module docstring for the
    sources.
    """
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    if n == 1:
        return np.tile(np.arange(g), (channels, 1))
    c = np.arange(channels)[:, None, None]
    node = np.arange(n)[None, :, None]
    step = np.arange(g)[None, None, :]
    local = (c - step) % g  # c, c-1, .., c+1 in each node
    ring = (node * g + local).reshape(channels, n * g)
    start = np.argmax(ring == 0, axis=1)  # rotate rank 0 to the front
    index = (np.arange(n * g)[None, :] + start[:, None]) % (n * g)
    return np.take_along_axis(ring, index, axis=1)


def _ring_schedule(collective, n, g, channels, name):
    rings = nccl_rings(n, g, channels)
    size = n * g
    n_steps = (2 if collective == "all_reduce" else 1) * (size - 1)
    n_chunks = channels * size
    nxt = np.roll(rings, -1, axis=1)
    traffic = Traffic.run(n_steps, rings.ravel(), nxt.ravel())

    def listing():
        # every (step, channel, ring position), step-major so steps stay sorted
        s, c, i = (
            x.ravel()
            for x in np.meshgrid(
                np.arange(n_steps), np.arange(channels), np.arange(size), indexing="ij"
            )
        )
        src, dst = rings[c, i], nxt[c, i]
        if collective == "all_reduce":
            # position i ends the reduce-scatter with chunk i of its channel's part
            rs = s < size - 1
            chunk = np.where(rs, (i - s - 1) % size, (i - (s - (size - 1))) % size)
            return {
                "step": s,
                "src": src,
                "dst": dst,
                "src_chunk": c * size + chunk,
                "dst_chunk": c * size + chunk,
                "reduce": rs,
            }
        if collective == "all_gather":
            owner = rings[c, (i - s) % size]  # whose shard moves on
            reduce = False
        else:
            owner = rings[c, (i - s - 1) % size]  # ends at its owner's position
            reduce = True
        slot = owner * channels + c  # part c of that rank's shard
        return {
            "step": s,
            "src": src,
            "dst": dst,
            "src_chunk": slot,
            "dst_chunk": slot,
            "reduce": np.broadcast_to(reduce, s.shape),
        }

    return Schedule.from_traffic(collective, size, n_chunks, traffic, listing, name=name)


def nccl_ring_all_reduce(n_nodes: int, gpus_per_node: int, n_channels: int = 1) -> Schedule:
    """NCCL's Ring all-reduce over ``N * g`` ranks (node-major), ``n_channels`` rings at once.

    Channel ``c`` has its own ring (:func:`nccl_rings`: in every node it enters at GPU ``c``
    from NIC ``c`` and leaves from GPU ``c + 1``, which NCCL sends through NIC ``c`` by PXN)
    and its own contiguous ``1/n_channels`` of the buffer, in ``N * g`` chunks: a ring
    reduce-scatter then all-gather, ``2(N g - 1)`` steps in all (``runRing``,
    ``src/device/all_reduce.h``). Slot ``c * N g + i`` is chunk ``i`` of channel ``c``.
    Every ring crosses every node boundary once, so each channel sends ``2(R-1)/R`` of its
    part once over one NIC of every node (``R = N g``). Built from its traffic; the
    transfers are listed only for verify, simulate and viz. Cost it on
    ``cl.topology.cluster(..., pxn=True)`` to route the leaving GPU through NIC ``c`` as
    NCCL does (without PXN the hop crosses rails through a spine). What is modelled and
    left out: see the module docstring.
    """
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    return _ring_schedule("all_reduce", n, g, channels, "nccl_ring_all_reduce")


def nccl_ring_all_gather(n_nodes: int, gpus_per_node: int, n_channels: int = 1) -> Schedule:
    """NCCL's Ring all-gather over ``N * g`` ranks on the rings of :func:`nccl_rings`:
    channel ``c`` moves part ``c`` of every rank's shard (slot ``r * n_channels + c``),
    ``N g - 1`` steps, each rank forwarding what it last received (``runRing`` of
    ``src/device/all_gather.h``)."""
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    return _ring_schedule("all_gather", n, g, channels, "nccl_ring_all_gather")


def nccl_ring_reduce_scatter(n_nodes: int, gpus_per_node: int, n_channels: int = 1) -> Schedule:
    """NCCL's Ring reduce-scatter over ``N * g`` ranks on the rings of :func:`nccl_rings`:
    channel ``c`` reduces part ``c`` of every shard (slot ``r * n_channels + c``) around its
    ring so that it ends on its owner, ``N g - 1`` steps (``src/device/reduce_scatter.h``)."""
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    return _ring_schedule("reduce_scatter", n, g, channels, "nccl_ring_reduce_scatter")


# ---- trees ---------------------------------------------------------------------------------


def nccl_trees(n_nodes: int, gpus_per_node: int, n_channels: int = 1) -> np.ndarray:
    """The parent of every rank in each of NCCL's tree channels: an int array
    ``(2 * n_channels, N * g)``, -1 at the root.

    Row ``c < n_channels`` is channel ``c`` on tree 1 of :func:`double_binary_trees` over
    the nodes, row ``n_channels + c`` the same chains on tree 2 (NCCL's duplicated channel
    ``c + nChannels``). In every node the chain of channel ``c`` is ``c -> c+1 -> .. ->
    c-1`` (local GPUs mod ``g``), its head GPU ``c`` linked to the head of the parent
    node and of the child nodes (``connectTrees``, ``NCCL_TOPO_PATTERN_TREE``). On a single
    node every channel's chain is the PCI order ``0 -> 1 -> .. -> g-1``, as for the rings.
    """
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    node_parents = double_binary_trees(n)
    rank = np.arange(n * g)
    node, local = rank // g, rank % g
    out = np.empty((2 * channels, n * g), dtype=np.int64)
    for t, node_parent in enumerate(node_parents):
        for c in range(channels):
            head = c % g if n > 1 else 0
            in_chain = local != head  # parent: the previous GPU
            up_node = node_parent[node]
            out[t * channels + c] = np.where(
                in_chain, node * g + (local - 1) % g, np.where(up_node < 0, -1, up_node * g + head)
            )
    return out


def nccl_tree_all_reduce(
    n_nodes: int,
    gpus_per_node: int,
    n_segments: int = 1,
    n_channels: int = 1,
    *,
    n_chunks: int | None = None,
) -> Schedule:
    """NCCL's Tree all-reduce over ``N * g`` ranks (node-major): a chain of GPUs inside each
    node, the double binary tree across nodes, reduce up then broadcast down, pipelined.

    The buffer is cut into ``2 * n_channels`` contiguous parts (NCCL's channels: part ``c``
    goes through tree 1 of channel ``c``, part ``n_channels + c`` through tree 2, see
    :func:`nccl_trees`), each pipelined in ``n_segments`` segments (the old keyword
    ``n_chunks`` is still accepted): slot ``part * n_segments + j`` holds segment ``j``.
    Segments follow one another one step apart, one per step on every edge, as NCCL's
    ``runTreeSplit`` (``src/device/all_reduce.h``) streams them: a rank adds its partial sum
    of segment ``j`` into its parent at step ``j + height`` (its height in the whole tree,
    chain included), and the root sends segment ``j`` back down at step ``j + H``, where
    ``H = g - 1 + ceil(log2 N)`` is the height of every tree (NCCL's own estimate in
    ``connectTrees``, ``nRanks/nNodes - 1 + log2i(nNodes)`` with ``log2i`` rounding down,
    is this for ``N`` a power of two). ``n_segments - 1 + 2H`` steps.

    Modelled: which GPU talks to which and when, each segment once per edge and direction.
    Left out: see the module docstring (protocols, chunk sizes, the balanced/split
    patterns). Verify and simulate it on small clusters, cost it at any size (the listing
    has ``4 (N g - 1) n_channels n_segments`` transfers).
    """
    n, g, channels = _sizes(n_nodes, gpus_per_node, n_channels)
    n_segments, what = renamed_arg(
        n_segments, 1, n_chunks, "n_segments", "n_chunks", error=ScheduleError
    )
    n_chunks = chunk_count(n_segments, what)  # segments per part
    parents = nccl_trees(n, g, channels)
    size = n * g
    n_parts = 2 * channels
    steps, srcs, dsts, slots, reduces = [], [], [], [], []
    total = 0
    shapes = []
    for part in range(n_parts):
        depth, height = depth_and_height(parents[part])
        shapes.append((depth, height))
        total = max(total, int(height.max()))
    j = np.arange(n_chunks)
    for part in range(n_parts):
        parent = parents[part]
        depth, height = shapes[part]
        top = int(height.max())
        child = np.flatnonzero(parent >= 0)
        up = height[child][:, None] + j[None, :]  # (edges, chunks)
        down = (top + depth[child] - 1)[:, None] + j[None, :]
        slot = np.broadcast_to(part * n_chunks + j[None, :], up.shape)
        kid = np.broadcast_to(child[:, None], up.shape)
        mom = np.broadcast_to(parent[child][:, None], up.shape)
        steps += [up.ravel(), down.ravel()]
        srcs += [kid.ravel(), mom.ravel()]
        dsts += [mom.ravel(), kid.ravel()]
        slots += [slot.ravel(), slot.ravel()]
        reduces += [np.ones(up.size, bool), np.zeros(up.size, bool)]
    step = np.concatenate(steps)
    order = np.argsort(step, kind="stable")
    slot = np.concatenate(slots)[order]
    n_steps = n_chunks - 1 + 2 * total if size > 1 else 0
    return Schedule.from_arrays(
        "all_reduce",
        size,
        n_parts * n_chunks,
        step[order],
        np.concatenate(srcs)[order],
        np.concatenate(dsts)[order],
        slot,
        slot,
        np.concatenate(reduces)[order],
        n_steps=n_steps,
        name="nccl_tree_all_reduce",
    )
