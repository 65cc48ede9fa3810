"""Point-to-point patterns: send/recv, collective permute, gather and scatter.

Pipeline parallelism moves activations from stage s to stage s + 1 (and gradients back):
a *collective permute* in which every rank sends its whole buffer to one peer at once
(XLA's CollectivePermute; NCCL's grouped ``ncclSend``/``ncclRecv``). A single send/recv is
a permute of one pair. Gather and scatter are the rooted collectives that NCCL builds from
the same grouped sends and receives (nccl-tests src/gather.cu, src/scatter.cu), which is
what :func:`direct_gather` and :func:`direct_scatter` do: one step, every rank to or from
the root. Taught with the pipeline-parallel part of the planning chapter.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ScheduleError
from ..schedule import Schedule
from ..transforms import dual
from ..validation import int_array
from .checks import chunk_count, rank_count, root_rank

__all__ = ["collective_permute", "send_recv", "pipeline_shift", "direct_gather", "direct_scatter"]


def collective_permute(
    peers: ArrayLike, n_chunks: int = 1, *, name: str = "collective_permute"
) -> Schedule:
    """Every rank p with ``peers[p] >= 0`` sends its whole buffer (``n_chunks`` chunks) to
    rank ``peers[p]`` in one step; ``peers`` is a partial permutation (-1: sends nothing)."""
    p = int_array(peers, "peers", ndim=1, minimum=-1, error=ScheduleError)
    rank_count(len(p))
    n_chunks = chunk_count(n_chunks)
    senders = np.flatnonzero(p >= 0)
    src = np.repeat(senders, n_chunks)
    chunk = np.tile(np.arange(n_chunks), len(senders))
    return Schedule.from_arrays(
        "permute",
        len(p),
        n_chunks,
        np.zeros(len(src), np.int64),
        src,
        np.repeat(p[senders], n_chunks),
        chunk,
        chunk,
        n_steps=1,
        peers=p,
        name=name,
    )


def send_recv(n: int, src: int, dst: int, n_chunks: int = 1) -> Schedule:
    """Rank ``src`` sends its buffer to rank ``dst`` (one pair of an ``n``-rank group)."""
    n = rank_count(n)
    src, dst = root_rank(src, n), root_rank(dst, n)
    peers = np.full(n, -1)
    peers[src] = dst
    return collective_permute(peers, n_chunks, name="send_recv")


def pipeline_shift(n: int, n_chunks: int = 1, *, backward: bool = False) -> Schedule:
    """Pipeline parallelism's stage-to-stage move: stage s sends to s + 1 (activations,
    forward) or, with ``backward``, to s - 1 (gradients); the last (first) stage sends
    nothing."""
    n = rank_count(n)
    s = np.arange(n)
    peers = np.where(s > 0, s - 1, -1) if backward else np.where(s < n - 1, s + 1, -1)
    return collective_permute(
        peers, n_chunks, name="pipeline_shift" + ("_backward" if backward else "")
    )


def direct_gather(n: int, root: int = 0) -> Schedule:
    """Gather: in one step every rank sends its shard straight to the root (NCCL's grouped
    send/recv). The root's link carries (n-1)/n of the buffer."""
    n = rank_count(n)
    root = root_rank(root, n)
    others = np.flatnonzero(np.arange(n) != root)
    return Schedule.from_arrays(
        "gather",
        n,
        n,
        np.zeros(len(others), np.int64),
        others,
        np.full(len(others), root),
        others,
        others,
        n_steps=1,
        root=root,
        name="direct_gather",
    )


def direct_scatter(n: int, root: int = 0) -> Schedule:
    """Scatter: the root sends every rank its part in one step (the dual of the gather)."""
    return dual(direct_gather(n, root), name="direct_scatter")
