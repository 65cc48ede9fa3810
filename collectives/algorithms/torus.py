"""Torus algorithms: 1-D ring algorithms run along every line of an N-D torus.

Ranks are numbered row-major over ``shape``; a *line* along axis a is the ranks that
differ only in coordinate a. An all-gather over the torus runs a ring all-gather along
axis ``axes[0]`` in every line, then along ``axes[1]`` moving the blocks gathered so far,
and so on: after the last axis every rank holds every shard. With ``concurrent=True`` each
shard is cut into one part per axis and part p visits the axes in the order rotated by p,
so that all axes carry data at the same time (The Scaling Book's "all axes at once").
Reduce-scatters are the duals, all-reduces the two composed, and all-to-alls run a 1-D
all-to-all per axis, each moving the parts whose destination differs on that axis.
Built with :func:`collectives.transforms.embed`. ``axes`` may name any subset of the axes:
the collective then runs inside every line (plane, ...) of those axes at once, a collective
over groups (:func:`axis_groups`), as The Scaling Book's AG_X is one all-gather per line
along X. ``nbytes`` stays the buffer one rank holds at the end of its own group's
collective. Taught in chapters "All-gather" and
"All-to-all".
"""

from __future__ import annotations

import math
from functools import partial
from typing import Sequence

import numpy as np

from ..errors import ScheduleError
from ..schedule import Schedule, compose
from ..transforms import dual, embed, grouped, parallel
from ..validation import flag, per_axis_flags
from . import alltoall, ring

__all__ = [
    "torus_all_gather",
    "torus_reduce_scatter",
    "torus_all_reduce",
    "torus_all_to_all",
    "axis_groups",
]


def _check(shape, axes):
    """``(shape, axes)``: axes in the order given (default every axis longer than 1), axes of
    size 1 dropped."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ScheduleError(f"shape must be a tuple of axis sizes, got {shape!r}") from None
    if not shape or min(shape) < 1:
        raise ScheduleError(f"shape must be a non-empty tuple of positive sizes, got {shape!r}")
    if axes is None:
        axes = tuple(a for a, size in enumerate(shape) if size > 1)
    else:
        try:
            axes = tuple(int(a) for a in axes)
        except (TypeError, ValueError):
            raise ScheduleError(f"axes must be a tuple of axis numbers, got {axes!r}") from None
        bad = [a for a in axes if not 0 <= a < len(shape)]
        if bad or len(set(axes)) != len(axes):
            raise ScheduleError(
                f"axes must be distinct axis numbers of a {len(shape)}-D shape, got {axes!r}"
            )
        axes = tuple(a for a in axes if shape[a] > 1)
    return shape, axes


def axis_groups(shape: Sequence[int], axes: Sequence[int]) -> np.ndarray:
    """The groups of a collective along ``axes`` of a torus: (G, m) ranks, one row per
    line (plane, ...) of those axes, members row-major over the axes in increasing order,
    groups row-major over the other axes. ``axes=(0,)`` of a 4x4x4 torus: the 16 lines
    along axis 0 (The Scaling Book's AG_X runs in all of them at once)."""
    used = sorted(axes)
    others = [a for a in range(len(shape)) if a not in used]
    ranks = np.arange(math.prod(shape)).reshape(shape)
    m = math.prod(shape[a] for a in used)
    return ranks.transpose(others + used).reshape(-1, m)


def _over_axes(build, shape, axes, wraparound, name, **options):
    """``build(sub_shape, sub_axes, sub_wrap)`` on the torus of the chosen axes, run inside
    every line/plane of those axes at once when they leave some axes out."""
    wrap = _wrap(shape, wraparound)
    used = sorted(axes)
    if len(used) == sum(size > 1 for size in shape):
        return build(shape, axes, wrap).renamed(name)
    sub_shape = tuple(shape[a] for a in used) or (1,)
    sub_axes = tuple(used.index(a) for a in axes)
    sub_wrap = tuple(wrap[a] for a in used) or (True,)
    groups = axis_groups(shape, axes)
    axes_text = ",".join(map(str, axes))
    return grouped(build(sub_shape, sub_axes, sub_wrap), groups, name=f"{name}[axes {axes_text}]")


def _strides(shape):
    return np.array([math.prod(shape[a + 1 :]) for a in range(len(shape))], dtype=np.int64)


def _lines(shape, axis):
    """(G, shape[axis]) ranks of every line along ``axis``, lines in row-major order."""
    strides = _strides(shape)
    n = math.prod(shape)
    starts = np.flatnonzero((np.arange(n) // strides[axis]) % shape[axis] == 0)
    return starts[:, None] + np.arange(shape[axis])[None, :] * strides[axis]


def _gathered_shards(shape, axis, done, lines):
    """For line g and position c: the shards held at that rank once axes ``done`` are
    gathered, as (G, m, prod of done sizes) rank numbers."""
    strides = _strides(shape)
    ranks = lines  # (G, m): the rank at position c
    coords = (ranks[..., None] // strides) % np.array(shape)
    done = sorted(done)
    base = ranks - (coords[..., done] * strides[done]).sum(axis=-1) if done else ranks
    if not done:
        return base[..., None]
    grid = np.indices([shape[a] for a in done]).reshape(len(done), -1)
    offsets = (grid * strides[done][:, None]).sum(axis=0)
    return base[..., None] + offsets


def _all_gather_part(shape, order, line_algorithm, k, kk, part):
    """Gather part ``part`` of every shard along ``order``: big slots ``q*k + part*kk + h``
    (h < kk) of shard q. ``line_algorithm(axis)`` is the 1-D all-gather of that axis; if it
    splits a shard into fewer chunks than kk (a chain moves whole shards), each of its chunks
    stands for several of the kk half-slots. Blocks are built only when the transfers are
    listed, so a full pod is costed from the traffic alone."""
    n = math.prod(shape)
    stages, done = [], []
    for axis in order:
        m = shape[axis]
        small = line_algorithm(axis)(m)
        per = small.n_chunks // m  # small chunks per small shard
        lines = _lines(shape, axis)
        held = math.prod(shape[a] for a in done)  # shards gathered so far per rank

        def blocks(lines=lines, done=tuple(done), per=per, m=m, axis=axis):
            held = _gathered_shards(shape, axis, list(done), lines)  # (G, m, L)
            # small slot c * per + h  <->  big slots held[g, c, :] * k + part * kk + h * kk/per + j
            sub = np.arange(per)[:, None] * (kk // per) + np.arange(kk // per)[None, :]
            b = (
                held[:, :, None, None, :] * k + part * kk + sub[None, None, :, :, None]
            )  # (G, m, per, kk/per, L)
            return b.reshape(len(lines), m * per, -1)

        stages.append(
            embed(
                small,
                lines,
                blocks,
                collective="all_gather",
                n_ranks=n,
                n_chunks=n * k,
                block_length=(kk // per) * held,
            )
        )
        done.append(axis)
    result = stages[0]
    for stage in stages[1:]:
        result = compose(result, stage, collective="all_gather")
    return result


def _wrap(shape, wraparound):
    return per_axis_flags(wraparound, len(shape), error=ScheduleError)


def torus_all_gather(
    shape: int | Sequence[int],
    axes: Sequence[int] | None = None,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> Schedule:
    """All-gather over a torus of ``shape``: a 1-D all-gather along each of ``axes`` in turn.

    Along an axis with wraparound (``wraparound``: one bool, or one per axis, as in
    :func:`collectives.topology.torus`) the 1-D algorithm is a ring, bidirectional if
    ``bidirectional``: with ``latency_optimal`` (the default) every block travels whole both
    ways, half-way round (:func:`~collectives.algorithms.latency_optimal_ring_all_gather`,
    floor(m/2) steps along an axis of m), else each ring sends half of every block each way
    round the whole ring (:func:`~collectives.algorithms.bidirectional_ring_all_gather`,
    m - 1 steps; the same bytes per link). Along an axis without wraparound, a chain (whole
    blocks both ways; a ring there would route its closing transfer back along the whole
    line). ``concurrent``: cut every shard into ``len(axes)`` parts that visit the axes in
    rotated orders at the same time. Shard chunks:
    ``k = (2 if bidirectional else 1) * (len(axes) if concurrent else 1)`` per rank; rank r's
    shard is slots ``[r*k, (r+1)*k)``.
    """
    shape, axes = _check(shape, axes)
    name = _name("torus_all_gather", bidirectional, concurrent, latency_optimal)
    return _over_axes(
        partial(
            _torus_all_gather,
            bidirectional=bidirectional,
            concurrent=concurrent,
            latency_optimal=latency_optimal,
        ),
        shape,
        axes,
        wraparound,
        name,
    )


def _name(base, bidirectional, concurrent, latency_optimal):
    """The schedule's name: the split-halves rings (the older schedule) are named so."""
    split = bidirectional and not flag(latency_optimal, "latency_optimal", error=ScheduleError)
    return base + ("_concurrent" if concurrent else "") + ("_split_halves" if split else "")


def _torus_all_gather(shape, axes, wrap, *, bidirectional, concurrent, latency_optimal):
    from .chain import chain_all_gather

    n = math.prod(shape)
    kk = 2 if bidirectional else 1
    if not bidirectional:
        ring_1d = ring.ring_all_gather
    elif latency_optimal:
        ring_1d = ring.latency_optimal_ring_all_gather
    else:
        ring_1d = ring.bidirectional_ring_all_gather

    def line_algorithm(axis):
        return ring_1d if wrap[axis] else chain_all_gather

    parts = len(axes) if concurrent and axes else 1
    k = kk * parts
    if not axes:  # a single rank: nothing to do
        return Schedule("all_gather", n, n * k, [])
    pieces = [
        _all_gather_part(shape, axes[p:] + axes[:p], line_algorithm, k, kk, p) for p in range(parts)
    ]
    return pieces[0] if parts == 1 else parallel(*pieces)


def torus_reduce_scatter(
    shape: int | Sequence[int],
    axes: Sequence[int] | None = None,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> Schedule:
    """Reduce-scatter over a torus: the dual of :func:`torus_all_gather` (axes in reverse
    order, reductions instead of copies); rank r ends with its shard's slots summed."""
    ag = torus_all_gather(shape, axes, bidirectional, concurrent, wraparound, latency_optimal)
    return dual(ag, name=_name("torus_reduce_scatter", bidirectional, concurrent, latency_optimal))


def torus_all_reduce(
    shape: int | Sequence[int],
    axes: Sequence[int] | None = None,
    bidirectional: bool = True,
    concurrent: bool = False,
    wraparound: bool | Sequence[bool] = True,
    latency_optimal: bool = True,
) -> Schedule:
    """All-reduce over a torus: torus reduce-scatter then torus all-gather (over the same
    groups when ``axes`` leaves some axes out)."""
    rs = torus_reduce_scatter(shape, axes, bidirectional, concurrent, wraparound, latency_optimal)
    ag = torus_all_gather(shape, axes, bidirectional, concurrent, wraparound, latency_optimal)
    return compose(
        rs, ag, name=_name("torus_all_reduce", bidirectional, concurrent, latency_optimal)
    )


_ONE_D_ALL_TO_ALL = {
    "bidirectional_ring": alltoall.bidirectional_ring_all_to_all,
    "ring": alltoall.ring_all_to_all,
    "direct": None,
}


def torus_all_to_all(
    shape: int | Sequence[int], axes: Sequence[int] | None = None, line: str = "bidirectional_ring"
) -> Schedule:
    """All-to-all over a torus: along each axis in turn, a 1-D all-to-all (``line``:
    "bidirectional_ring", "ring" or "direct") moves every part to the line position
    of its destination's coordinate on that axis. Parts are split like the 1-D
    algorithm's (2 chunks each for a bidirectional ring)."""
    shape, axes = _check(shape, axes)
    if line not in _ONE_D_ALL_TO_ALL:
        raise ScheduleError(f"line must be one of {', '.join(_ONE_D_ALL_TO_ALL)}, got {line!r}")
    return _over_axes(partial(_torus_all_to_all, line=line), shape, axes, True, "torus_all_to_all")


def _torus_all_to_all(shape, axes, wrap, *, line):
    from .direct import direct_all_to_all

    one_d = _ONE_D_ALL_TO_ALL[line] or direct_all_to_all
    n = math.prod(shape)
    kk = 2 if line == "bidirectional_ring" else 1
    strides = _strides(shape)
    parts = np.arange(n)
    stages, scratch = [], 0
    for axis in axes:
        m = shape[axis]
        small = one_d(m)
        lines = _lines(shape, axis)
        # small part c (destination position c on this axis) <-> every big part whose
        # destination has coordinate c on the axis; the same slots in every line
        coord = (parts // strides[axis]) % m
        dest = np.argsort(coord, kind="stable").reshape(m, -1)  # row c: coordinate c
        data = (dest[:, None, :] * kk + np.arange(kk)[None, :, None]).reshape(m * kk, -1)
        width = data.shape[1]
        spare = n * kk + np.arange(small.n_scratch * width).reshape(small.n_scratch, width)
        blocks = np.broadcast_to(
            np.concatenate([data, spare]), (len(lines), m * kk + small.n_scratch, width)
        )
        stages.append(
            embed(
                small,
                lines,
                blocks,
                collective="all_to_all",
                n_ranks=n,
                n_chunks=n * kk,
                n_scratch=small.n_scratch * width,
            )
        )
        scratch = max(scratch, small.n_scratch * width)
    if not stages:
        return Schedule("all_to_all", n, n * kk, [])
    result = stages[0]
    for stage in stages[1:]:
        result = compose(result, stage, collective="all_to_all")
    return result
