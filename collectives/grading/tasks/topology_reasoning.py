"""The package's answers to the questions of the graded notebook on TPU slices
(``exercises/source/topology_reasoning``), computed from plain arguments so that
:func:`~collectives.grading.check_reference` and :func:`~collectives.grading.check_shape` can
call them by name in the isolated re-check (``"grading.slice_diameter"``).

Every answer comes from the package's models, not from a formula written again here: the
measures of :mod:`collectives.measures` on :func:`collectives.topology.torus`, and
:func:`collectives.time` of the torus algorithms on :func:`collectives.hardware.preset`
``("tpu-v5e", shape=...)``, whose wraparound follows the published rule (an axis of a v5e
slice wraps only when it has 16 chips). Shapes are tuples of axis sizes; coordinates tuples of
ints, one per axis; ``wraparound`` one bool per axis.
"""

import math
from functools import lru_cache

from ...errors import GradingError

__all__ = ["slice_hops", "slice_diameter", "slice_bisection_bandwidth", "v5e_axis_seconds",
           "v5e_all_reduce_seconds", "best_v5e_slice_shape", "wrapped_axis_for",
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
    at once; bidirectional rings where the axis wraps, chains where it does not); ``nbytes``
    is the buffer of one chip in its own line's collective."""
    from ... import algorithms, cost
    topo = _v5e(shape)
    build = getattr(algorithms, f"torus_{collective}")
    schedule = build(topo.shape, axes=(int(axis),), wraparound=topo.wraparound)
    return cost.time(schedule, topo, nbytes).seconds


def v5e_all_reduce_seconds(shape, nbytes):
    """Seconds of the torus all-reduce over a whole v5e slice (reduce-scatter then all-gather
    one axis at a time, rings where an axis wraps, chains elsewhere), in the faster of the two
    axis orders, by :func:`collectives.time`."""
    from ... import algorithms, cost
    topo = _v5e(shape)
    used = [a for a, size in enumerate(topo.shape) if size > 1]
    orders = [tuple(used), tuple(reversed(used))] if len(used) > 1 else [tuple(used)]
    return min(cost.time(algorithms.torus_all_reduce(topo.shape, axes=order,
                                                     wraparound=topo.wraparound),
                         topo, nbytes).seconds for order in orders)


def best_v5e_slice_shape(n_chips, nbytes):
    """The v5e slice ``(rows, cols)``, ``rows <= cols``, of ``n_chips`` chips on which an
    all-reduce of ``nbytes`` is fastest (:func:`v5e_all_reduce_seconds`). Raises
    :class:`~collectives.GradingError` if two shapes are within 1e-6 of each other (a test
    must not ask a question without a clear answer)."""
    candidates = [s for s in V5E_SHAPES if s[0] * s[1] == int(n_chips)]
    if not candidates:
        raise GradingError(f"no v5e slice has {n_chips} chips (a bug in the test)")
    times = sorted((v5e_all_reduce_seconds(s, nbytes), s) for s in candidates)
    if len(times) > 1 and math.isclose(times[0][0], times[1][0], rel_tol=1e-6):
        raise GradingError(f"{times[0][1]} and {times[1][1]} tie for {n_chips} chips and "
                           f"{nbytes} bytes (a bug in the test)")
    return times[0][1]


def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    """On a v5e slice of shape ``(k, 16)`` (only the 16-chip axis wraps), which of two
    logical mesh axes goes on the wrapped axis: ``"data"`` (one all-reduce of ``grad_bytes``
    per step along it) or ``"model"`` (``n_gathers`` all-gathers of ``gather_bytes`` each).
    The other gets the ``k`` chips of axis 0. The step's collectives run one after another;
    each costs :func:`v5e_axis_seconds` on the preset. Ties raise a
    :class:`~collectives.GradingError` (a bug in the test)."""
    shape = (int(k), 16)
    step = {}
    for logical, data_axis, model_axis in (("data", 1, 0), ("model", 0, 1)):
        step[logical] = (v5e_axis_seconds(shape, data_axis, grad_bytes, "all_reduce")
                         + n_gathers * v5e_axis_seconds(shape, model_axis, gather_bytes))
    if math.isclose(step["data"], step["model"], rel_tol=1e-6):
        raise GradingError(f"both layouts take {step['data']!r} s (a bug in the test)")
    return min(step, key=step.get)
