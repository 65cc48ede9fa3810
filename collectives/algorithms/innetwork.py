"""In-network reduction: switches that receive, reduce and multicast (NVLS, InfiniBand SHARP).

A Schedule may have switch participants (numbered after the ranks) whose slots start empty:
a reduce into an empty switch slot starts its accumulator, and one switch slot can be
copied to many ranks in one step (multicast). Both algorithms below are verified and timed
like any other; on a topology the switch participant is placed on a switch node
(``switch_placement`` in :func:`collectives.time`, default the topology's first switches).

* :func:`nvls_all_reduce`: NVLink SHARP as NCCL drives it on one NVSwitch domain. Each GPU
  c reads its slice c reduced over every GPU through the switch (``multimem.ld_reduce``:
  the switch pulls slice c from all n GPUs, the caller's own included), then writes the
  result back with one multicast store (``multimem.st``) that the switch copies to every
  GPU. Per link and direction that is S + S/n bytes, against 2(n-1)S/n for a ring, so the
  ideal speed-up is 2(n-1)/(n+1) (1.56x for 8 GPUs) and algbw = B n/(n+1), which is how
  NCCL's maintainers relate NVLS bandwidth to link bandwidth (nccl-tests issue #212 and pull
  request #239). Measured on 8xH100 it is about 1.3x (ring busbw about 370 GB/s, NVLS about
  480 GB/s: nccl-tests #212, NCCL issue #1455): protocol and switch overheads, not modelled.
* :func:`sharp_all_reduce`: a reduction tree of one switch, as InfiniBand SHARP aggregates
  in the switch: every rank sends its whole buffer up, the switch reduces it and multicasts
  the result down; S bytes per link and direction (algbw = B).

Across nodes, NCCL's two NVLS algorithms (NCCL 2.30.7: ``src/graph/connect.cc``,
``connectNvls``; ``src/device/all_reduce.h``, ``RunWorkColl`` for ``NCCL_ALGO_NVLS`` and
``NCCL_ALGO_NVLS_TREE``; ``src/transport/nvls.cc``) reduce each node on its NVSwitch first.
Every node has ``nHeads`` **heads**, one GPU per NIC (``NVLS Head 0: 0 8 16`` ... ``NVLS
Head 7: 7 15 23`` on three 8 x H100 nodes, virtual machines with 8 dual-port 200 Gb/s
ConnectX-7 NICs each, NVIDIA/nccl issue #1453: head ``h`` is local
GPU ``h``); the buffer is cut into one slice per head. Head ``h`` reads slice ``h`` summed
over its node (``multimem.ld_reduce``), combines it across nodes, and stores the result
back with a multicast that the NVSwitch copies to every GPU of its node:

* :func:`nvls_tree_all_reduce` (NVLSTree): across nodes, head ``h`` of every node joins
  NCCL's double binary tree over the nodes (``ncclGetDtree``; even channels tree 0, odd
  channels tree 1, so each tree carries half of the buffer); a head adds its children's
  partial sums to its node's, sends the sum to its parent's head ``h`` over rail ``h``, and
  passes the result back down before storing it into its node.
* :func:`nvls_collnet_all_reduce` (NVLS with CollNet, ``collnetEnable``: ``nvls.out`` is
  the CollNet network): head ``h`` sends its node's slice ``h`` into an InfiniBand SHARP
  reduction on rail ``h`` and gets the sum of all nodes back, then stores it into its node.
  Here SHARP is one switch per rail (the rail's leaf, as in one scalable unit), as
  :func:`sharp_all_reduce` models it.

Per GPU and per segment, NVLink carries up ``S`` (the load) plus ``S/g`` (the head's store)
and down ``S/g`` plus ``S`` (the multicast), as on one node; each NIC carries only the
head's slices, ``S/g`` up and down for SHARP, and for the tree ``S/(2g)`` per tree and
edge. How this differs from the package's three-phase hierarchy
(:func:`~collectives.algorithms.hierarchical_all_reduce`): the node phases are the
switch's reduce and multicast, not a reduce-scatter and an all-gather among the GPUs; the
network phase is a tree or SHARP of heads, not a ring; and NCCL streams all phases at once
(the step-synchronous model needs ``n_segments`` to overlap them).

Four (two) synchronous steps each on one node; ``n_segments`` pipelines them
(``transforms.pipelined``) so that the up and down directions of every link work at once,
as the hardware does. Left out: the switch's reduction throughput (NVSwitch: 400 GFLOP/s
FP32 per switch chip, Hot Chips 2022), the four NVSwitch chips of a DGX H100 (modelled as
one), the copies of unregistered buffers into NCCL's multicast buffers (the scatter and
gather warps of ``all_reduce.h``), NCCL's channel count, and the reduction tree of several
switches that SHARP builds across a fabric of more than one leaf per rail.
"""

from __future__ import annotations

import numpy as np

from ..errors import ScheduleError
from ..schedule import Schedule
from ..transforms import pipelined
from ..validation import integer
from .checks import chunk_count, rank_count
from .tree import depth_and_height, double_binary_trees

__all__ = ["nvls_all_reduce", "sharp_all_reduce", "nvls_tree_all_reduce", "nvls_collnet_all_reduce"]


def nvls_all_reduce(n: int, n_segments: int = 1) -> Schedule:
    """NVLink SHARP all-reduce of n GPUs on one switch (participant n), chunk c = slice c.

    Step 0: every GPU reduces every slice into the switch (the switch gathers slice c from
    all GPUs); step 1: the switch returns slice c to GPU c; step 2: GPU c stores slice c
    to the switch; step 3: the switch multicasts slice c to every GPU.
    """
    n = rank_count(n)
    n_segments = chunk_count(n_segments, "n_segments")
    switch = n
    g, c = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    r = np.arange(n)
    steps = [
        (g, np.full(n * n, switch), c, c, True),  # ld_reduce: slices in
        (np.full(n, switch), r, r, r, False),  # reduced slice c to GPU c
        (r, np.full(n, switch), r, r, False),  # multimem.st: slice c out
        (np.full(n * n, switch), g, c, c, False),
    ]  # multicast to every GPU
    one = _from_steps(n, n, steps, "nvls_all_reduce")
    return one if n_segments == 1 else pipelined(one, n_segments, name="nvls_all_reduce")


def sharp_all_reduce(n: int, n_segments: int = 1) -> Schedule:
    """All-reduce in one switch: every rank reduces its buffer into the switch (step 0),
    the switch multicasts the sum to every rank (step 1)."""
    n = rank_count(n)
    n_segments = chunk_count(n_segments, "n_segments")
    switch = n
    zero = np.zeros(n, dtype=np.int64)
    r = np.arange(n)
    steps = [(r, np.full(n, switch), zero, zero, True), (np.full(n, switch), r, zero, zero, False)]
    one = _from_steps(n, 1, steps, "sharp_all_reduce")
    return one if n_segments == 1 else pipelined(one, n_segments, name="sharp_all_reduce")


def _nodes_and_gpus(n_nodes, gpus_per_node):
    return tuple(
        integer(v, name, minimum=1, error=ScheduleError)
        for v, name in ((n_nodes, "n_nodes"), (gpus_per_node, "gpus_per_node"))
    )


def _node_phases(n, g, slots_per_head):
    """The NVLS node phases of every node: (reduce into the switch, switch to heads) and
    (heads store into the switch, switch multicasts): lists of (src, dst, slot, reduce)
    arrays. Slot ``t * g + h`` (``t < slots_per_head``) belongs to head ``h``; switch of node
    ``k`` is participant ``n * g + k``."""
    rank = np.arange(n * g)
    node = rank // g
    switch = n * g + node
    slots = np.arange(slots_per_head * g)
    src = np.repeat(rank, slots.size)
    load = (src, np.repeat(switch, slots.size), np.tile(slots, rank.size), True)
    slot_rank = np.repeat(rank, slots_per_head)  # head of each owned slot
    own = (np.arange(slots_per_head)[None, :] * g + (rank % g)[:, None]).ravel()
    to_head = (n * g + slot_rank // g, slot_rank, own, False)
    store = (slot_rank, n * g + slot_rank // g, own, False)
    return load, to_head, store, own, slot_rank


def _multicast(n, g, heads, slots):
    """The switch of each head's node copies each (head, slot) to every GPU of the node."""
    node = heads // g
    members = node[:, None] * g + np.arange(g)[None, :]
    return (np.repeat(n * g + node, g), members.ravel(), np.repeat(slots, g), False)


def _listed(collective, n_ranks, n_chunks, transfers, n_steps, n_switches, name):
    """A Schedule from (step, (src, dst, slot, reduce)) pairs of arrays."""
    step = np.concatenate([np.broadcast_to(st, np.shape(t[0])) for st, t in transfers])
    order = np.argsort(step, kind="stable")
    src, dst, slot, red = (
        np.concatenate([np.broadcast_to(t[i], np.shape(t[0])) for _, t in transfers])[order]
        for i in range(4)
    )
    return Schedule.from_arrays(
        collective,
        n_ranks,
        n_chunks,
        step[order],
        src,
        dst,
        slot,
        slot,
        red,
        n_steps=n_steps,
        n_switches=n_switches,
        name=name,
    )


def nvls_tree_all_reduce(n_nodes: int, gpus_per_node: int, n_segments: int = 1) -> Schedule:
    """NCCL's NVLSTree all-reduce over ``N * g`` ranks (node-major) with a NIC per GPU.

    Participants: the ranks, then one NVSwitch per node (participant ``N g + k`` for node
    ``k``; on :func:`collectives.topology.cluster` the default switch placement, the
    topology's first switches, is the nodes' NVSwitches). Slots: ``2 g`` per segment, slot
    ``t g + h`` the slice of head ``h`` (local GPU ``h``) on tree ``t`` of
    :func:`~collectives.algorithms.double_binary_trees` over the nodes.

    Steps (one segment): 0, every GPU reduces every slot into its node's switch
    (``multimem.ld_reduce``); 1, the switch gives each head its two slots; then, per tree, a
    head of height ``u`` in the node tree adds its sum into its parent's head at step
    ``2 + u``; the root's sum comes back down, reaching depth ``d`` at step ``1 + T + d``
    (``T`` the taller tree's height), where the head stores it into its switch at step
    ``2 + T + d`` and the switch multicasts it to the node at ``3 + T + d``: ``4 + 2T``
    steps in all. ``n_segments`` pipelines it. On one node (``N = 1``; NCCL disables
    NVLSTree there) it is NVLS with two slots per GPU.
    """
    n, g = _nodes_and_gpus(n_nodes, gpus_per_node)
    n_segments = chunk_count(n_segments, "n_segments")
    load, to_head, store, own, slot_rank = _node_phases(n, g, 2)
    trees = double_binary_trees(n) if n > 1 else (np.array([-1]), np.array([-1]))
    shapes = [depth_and_height(parent) for parent in trees]
    top = max(int(height.max()) for _, height in shapes)
    transfers: list[tuple] = [(0, load), (1, to_head)]
    tree_of_slot = own // g  # slot t*g + h belongs to tree t
    node_of = slot_rank // g
    for t, parent in enumerate(trees):
        depth, height = shapes[t]
        mine = tree_of_slot == t
        heads, slots, nodes = slot_rank[mine], own[mine], node_of[mine]
        child = parent[nodes] >= 0
        up_src, up_slot = heads[child], slots[child]
        up_dst = parent[nodes[child]] * g + up_src % g
        transfers.append((2 + height[nodes[child]], (up_src, up_dst, up_slot, True)))
        transfers.append((1 + top + depth[nodes[child]], (up_dst, up_src, up_slot, False)))
        when = 2 + top + depth[nodes]
        transfers.append((when, (heads, n * g + nodes, slots, False)))
        cast = _multicast(n, g, heads, slots)
        transfers.append((np.repeat(when + 1, g), cast))
    n_steps = 4 + 2 * top
    one = _listed("all_reduce", n * g, 2 * g, transfers, n_steps, n, "nvls_tree_all_reduce")
    return one if n_segments == 1 else pipelined(one, n_segments, name="nvls_tree_all_reduce")


def nvls_collnet_all_reduce(n_nodes: int, gpus_per_node: int, n_segments: int = 1) -> Schedule:
    """NCCL's NVLS all-reduce with CollNet (InfiniBand SHARP) across nodes, over ``N * g``
    ranks (node-major) with a NIC per GPU.

    Participants: the ranks, one NVSwitch per node (``N g + k``), then one SHARP switch per
    rail (``N g + N + h``; on one scalable unit of :func:`collectives.topology.cluster` the
    default switch placement puts it on rail ``h``'s leaf). Slot ``h`` (``g`` per segment)
    is head ``h``'s slice. Steps: 0, every GPU reduces every slot into its node's switch;
    1, the switch gives head ``h`` slot ``h``; 2, every head ``h`` reduces it into rail
    ``h``'s SHARP switch; 3, SHARP returns the sum to every head ``h``; 4, the head stores
    it into its node's switch; 5, the switch multicasts it to the node. ``n_segments``
    pipelines it.
    """
    n, g = _nodes_and_gpus(n_nodes, gpus_per_node)
    n_segments = chunk_count(n_segments, "n_segments")
    load, to_head, store, own, slot_rank = _node_phases(n, g, 1)
    sharp = n * g + n + own  # rail h's SHARP switch, slot h
    transfers = [
        (0, load),
        (1, to_head),
        (2, (slot_rank, sharp, own, True)),
        (3, (sharp, slot_rank, own, False)),
        (4, store),
        (5, _multicast(n, g, slot_rank, own)),
    ]
    one = _listed("all_reduce", n * g, g, transfers, 6, n + g, "nvls_collnet_all_reduce")
    return one if n_segments == 1 else pipelined(one, n_segments, name="nvls_collnet_all_reduce")


def _from_steps(n, n_chunks, steps, name):
    step = np.concatenate([np.full(len(s[0]), i) for i, s in enumerate(steps)])
    fields = [np.concatenate([np.broadcast_to(s[j], s[0].shape) for s in steps]) for j in range(5)]
    return Schedule.from_arrays(
        "all_reduce", n, n_chunks, step, *fields, n_steps=len(steps), n_switches=1, name=name
    )
