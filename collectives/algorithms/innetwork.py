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

Four (two) synchronous steps each; ``n_segments`` pipelines them (``transforms.pipelined``)
so that the up and down directions of every link work at once, as the hardware does. Left
out: the switch's reduction throughput (NVSwitch: 400 GFLOP/s FP32 per switch chip, Hot
Chips 2022), the four NVSwitch chips of a DGX H100 (modelled as one), and the reduction
tree of several switches that SHARP builds across a fabric.
"""

from __future__ import annotations

import numpy as np

from ..schedule import Schedule
from ..transforms import pipelined
from .checks import chunk_count, rank_count

__all__ = ["nvls_all_reduce", "sharp_all_reduce"]


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
    steps = [(g, np.full(n * n, switch), c, c, True),              # ld_reduce: slices in
             (np.full(n, switch), r, r, r, False),                 # reduced slice c to GPU c
             (r, np.full(n, switch), r, r, False),                 # multimem.st: slice c out
             (np.full(n * n, switch), g, c, c, False)]             # multicast to every GPU
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
    steps = [(r, np.full(n, switch), zero, zero, True),
             (np.full(n, switch), r, zero, zero, False)]
    one = _from_steps(n, 1, steps, "sharp_all_reduce")
    return one if n_segments == 1 else pipelined(one, n_segments, name="sharp_all_reduce")


def _from_steps(n, n_chunks, steps, name):
    step = np.concatenate([np.full(len(s[0]), i) for i, s in enumerate(steps)])
    fields = [np.concatenate([np.broadcast_to(s[j], s[0].shape) for s in steps])
              for j in range(5)]
    return Schedule.from_arrays("all_reduce", n, n_chunks, step, *fields, n_steps=len(steps),
                                n_switches=1, name=name)
