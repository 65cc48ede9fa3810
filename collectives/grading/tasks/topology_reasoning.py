"""The package's answers to the questions of the graded notebook on TPU slices
(``exercises/source/topology_reasoning``), computed from plain arguments so that
:func:`~collectives.grading.check_reference` and :func:`~collectives.grading.check_shape` can
call them by name in the isolated re-check (``"grading.slice_diameter"``).

Every answer comes from the package's models, not from a formula written again here: the
measures of :mod:`collectives.measures` on :func:`collectives.topology.torus`, and
:func:`collectives.time` of the torus algorithms on :func:`collectives.hardware.preset`
``("tpu-v5e", shape=...)``, whose wraparound follows the published rule (an axis of a v5e
slice wraps only when it has 16 chips). Along a wrapped axis the torus algorithms run the
latency-optimal bidirectional ring (floor(m/2) steps), along the others a chain. Shapes are
tuples of axis sizes; coordinates tuples of ints, one per axis; ``wraparound`` one bool per
axis.

Tasks 3 to 5 are graded by cost, never by the package's choice: an estimate must be no slower
than the package's schedule and no faster than :func:`v5e_axis_lower_bound`
(:func:`~collectives.grading.check_estimate`); a slice shape or a mesh layout must cost no
more than the best one (:func:`~collectives.grading.check_no_worse` with
:func:`v5e_slice_all_reduce_seconds` and :func:`wrapped_axis_step_seconds`), so ties and
answers as good as the reference's by another route pass.
"""

import math
from functools import lru_cache

from ...errors import GradingError

__all__ = ["slice_hops", "slice_diameter", "slice_bisection_bandwidth", "v5e_axis_seconds",
           "v5e_axis_lower_bound", "v5e_all_reduce_seconds", "v5e_slice_all_reduce_seconds",
           "best_v5e_slice_shape", "wrapped_axis_step_seconds", "wrapped_axis_for",
           "V5E_SHAPES"]

#: the axis sizes of a TPU v5e slice (a 16 x 16 pod cut in powers of two)
V5E_SIZES = (1, 2, 4, 8, 16)
#: every 2-D v5e slice shape with rows <= cols
V5E_SHAPES = tuple((r, c) for r in V5E_SIZES for c in V5E_SIZES if r <= c)


def _shape(shape):
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise GradingError(f"the test's shape {shape!r} is not a tuple of sizes (a bug in the "
                           "test)") from None
    return shape


@lru_cache(maxsize=16)
def _torus(shape, wraparound):
    from ...topology import torus
    return torus(shape, 1.0, wraparound=wraparound)


def slice_hops(shape, wraparound, a, b):
    """Links on the route from the chip at coordinates ``a`` to the one at ``b``
    (:func:`collectives.measures.hops` on the torus)."""
    from ... import measures
    shape = _shape(shape)
    topo = _torus(shape, tuple(bool(w) for w in wraparound))
    ra, rb = (sum(int(c) * math.prod(shape[i + 1:]) for i, c in enumerate(x)) for x in (a, b))
    return int(measures.hops(topo, ra, rb))


def slice_diameter(shape, wraparound):
    """:func:`collectives.measures.diameter` of the torus ``shape`` with ``wraparound``."""
    from ... import measures
    return int(measures.diameter(_torus(_shape(shape), tuple(bool(w) for w in wraparound))))


def slice_bisection_bandwidth(shape, wraparound, link_bandwidth):
    """:func:`collectives.measures.bisection_bandwidth` (bytes/s one way) of the torus
    ``shape`` with ``wraparound`` and links of ``link_bandwidth`` bytes/s per direction."""
    from ... import measures
    from ...topology import torus
    return measures.bisection_bandwidth(torus(_shape(shape), link_bandwidth,
                                              wraparound=tuple(bool(w) for w in wraparound)))


def _v5e(shape):
    from ...hardware import preset
    return preset("tpu-v5e", shape=_shape(shape))


def v5e_axis_seconds(shape, axis, nbytes, collective="all_gather"):
    """:func:`collectives.time` of the torus ``collective`` ("all_gather", "reduce_scatter" or
    "all_reduce") along ``axis`` of a v5e slice (one collective in every line of that axis, all
    at once; latency-optimal bidirectional rings where the axis wraps, chains where it does
    not); ``nbytes`` is the buffer of one chip in its own line's collective."""
    from ... import algorithms, cost
    topo = _v5e(shape)
    build = getattr(algorithms, f"torus_{collective}")
    schedule = build(topo.shape, axes=(int(axis),), wraparound=topo.wraparound)
    return cost.time(schedule, topo, nbytes).seconds


def v5e_axis_lower_bound(shape, axis, nbytes):
    """The least time any all-gather along ``axis`` of a v5e slice can take in the
    alpha-beta model of :func:`collectives.time` (a step costs one hop latency plus the bytes
    of its busiest link direction over the link bandwidth).

    Two bounds add up. Steps: the farthest shard must cross the line's diameter in links, one
    per step (:func:`collectives.measures.diameter` of the line: floor(m/2) with
    wraparound, m - 1 without). Bytes: a chip receives (m-1)/m of the buffer through the links
    into it (2 with wraparound, 1 at the end of a chain), and a step's busiest link carries at
    least its share, so the busiest links summed over the steps carry at least
    (m-1)/m S / links. Both the latency-optimal ring and the chain reach the bound, so on v5e
    slices it equals :func:`v5e_axis_seconds`."""
    import numpy as np

    from ... import measures
    from ...topology import chain, ring
    topo = _v5e(shape)
    m = topo.shape[int(axis)]
    if m == 1:
        return 0.0
    system = topo.system
    line = (ring if topo.wraparound[int(axis)] else chain)(m, system.link_bandwidth,
                                                            system.hop_latency)
    links_in = np.unique(line.link_src[line.link_dst == 0]).size
    return (measures.diameter(line) * system.hop_latency
            + (m - 1) / m * nbytes / (links_in * system.link_bandwidth))


def v5e_all_reduce_seconds(shape, nbytes):
    """Seconds of the torus all-reduce over a whole v5e slice (reduce-scatter then all-gather
    one axis at a time, latency-optimal rings where an axis wraps, chains elsewhere), in the
    faster of the two axis orders, by :func:`collectives.time`."""
    from ... import algorithms, cost
    topo = _v5e(shape)
    used = [a for a, size in enumerate(topo.shape) if size > 1]
    orders = [tuple(used), tuple(reversed(used))] if len(used) > 1 else [tuple(used)]
    return min(cost.time(algorithms.torus_all_reduce(topo.shape, axes=order,
                                                     wraparound=topo.wraparound),
                         topo, nbytes).seconds for order in orders)


def v5e_slice_all_reduce_seconds(shape, n_chips, nbytes):
    """:func:`v5e_all_reduce_seconds` of a learner's answer to "which v5e slice of ``n_chips``
    chips?": the cost :func:`~collectives.grading.check_no_worse` grades it by. Raises
    :class:`~collectives.GradingError` if ``shape`` is not one of the candidates (two axes of
    1, 2, 4, 8 or 16 chips, rows <= cols, ``n_chips`` in all)."""
    shape = _shape(shape)
    if shape not in V5E_SHAPES or shape[0] * shape[1] != int(n_chips):
        raise GradingError(f"{shape} is not a v5e slice of {n_chips} chips: two axes of 1, 2, "
                           "4, 8 or 16 chips, rows <= cols")
    return v5e_all_reduce_seconds(shape, nbytes)


def best_v5e_slice_shape(n_chips, nbytes):
    """The v5e slice ``(rows, cols)``, ``rows <= cols``, of ``n_chips`` chips on which an
    all-reduce of ``nbytes`` is fastest (:func:`v5e_all_reduce_seconds`; of two that tie, the
    first in :data:`V5E_SHAPES`). The notebook grades a learner's shape by its cost against
    this one's (:func:`~collectives.grading.check_no_worse`), so a tie passes either way."""
    candidates = [s for s in V5E_SHAPES if s[0] * s[1] == int(n_chips)]
    if not candidates:
        raise GradingError(f"no v5e slice has {n_chips} chips (a bug in the test)")
    return min(candidates, key=lambda s: v5e_all_reduce_seconds(s, nbytes))


def wrapped_axis_step_seconds(choice, k, grad_bytes, gather_bytes, n_gathers):
    """Seconds of one training step's collectives on a v5e slice of shape ``(k, 16)`` (only
    the 16-chip axis wraps) when the logical mesh axis ``choice`` ("data" or "model") lies
    along the wrapped axis and the other along the ``k`` chips of axis 0: one all-reduce of
    ``grad_bytes`` along "data", then ``n_gathers`` all-gathers of ``gather_bytes`` along
    "model", one after another, each :func:`v5e_axis_seconds` on the preset."""
    if choice not in ("data", "model"):
        raise GradingError(f"{choice!r} is not one of the choices: 'data', 'model'")
    shape = (int(k), 16)
    data_axis, model_axis = (1, 0) if choice == "data" else (0, 1)
    return (v5e_axis_seconds(shape, data_axis, grad_bytes, "all_reduce")
            + n_gathers * v5e_axis_seconds(shape, model_axis, gather_bytes))


def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    """On a v5e slice of shape ``(k, 16)`` (only the 16-chip axis wraps), which of two
    logical mesh axes goes on the wrapped axis so that a step's collectives take the least
    time (:func:`wrapped_axis_step_seconds`): ``"data"`` (one all-reduce of ``grad_bytes``
    per step along it) or ``"model"`` (``n_gathers`` all-gathers of ``gather_bytes`` each);
    "data" if the two tie. The notebook grades a learner's answer by its cost against this
    one's (:func:`~collectives.grading.check_no_worse`)."""
    step = {c: wrapped_axis_step_seconds(c, k, grad_bytes, gather_bytes, n_gathers)
            for c in ("data", "model")}
    return min(step, key=step.get)
