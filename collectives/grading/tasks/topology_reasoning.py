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

Tasks 3 to 5 are decisions graded by what they cost, never by the package's choice. Task 3
plans an all-gather over every axis of a v5e or v5p slice within a time budget (an order of
the axes, or all axes at once, and the bytes it gathers): :func:`check_all_gather_plan` times
the learner's own plan at the learner's own bytes with :func:`collectives.time`
(:func:`slice_all_gather_seconds`), which must fit the budget, and compares the bytes with what
the best axis order gathers (:func:`largest_all_gather_within`); a plan that gathers more (all
axes at once, on the slices where that is faster) passes too. A slice shape or a mesh layout
must cost no more than the best one (:func:`~collectives.grading.check_no_worse` with
:func:`v5e_slice_all_reduce_seconds` and :func:`wrapped_axis_step_seconds`), so ties and
answers as good as the reference's by another route pass.

The hidden tests check fixed cases and cases drawn from the course seed
(:func:`drawn_cases`, :mod:`collectives.grading.cohort`), so that a table of the answers the
feedback shows does not pass the next cohort's grading. The check of the earlier Task 3 (the
time along one axis, :func:`v5e_axis_seconds` between itself and :func:`v5e_axis_lower_bound`)
stays, for released copies of that notebook.
"""

import itertools
import math
from functools import lru_cache

from ...errors import GradingError
from .. import cohort
from ..checks import check_number, show

__all__ = [
    "slice_hops",
    "slice_diameter",
    "slice_bisection_bandwidth",
    "v5e_axis_seconds",
    "v5e_axis_lower_bound",
    "v5e_all_reduce_seconds",
    "v5e_slice_all_reduce_seconds",
    "best_v5e_slice_shape",
    "wrapped_axis_step_seconds",
    "wrapped_axis_for",
    "slice_all_gather_seconds",
    "largest_all_gather_within",
    "check_all_gather_plan",
    "drawn_cases",
    "V5E_SHAPES",
    "PLAN_CHIPS",
    "CONCURRENT",
]

#: the axis sizes of a TPU v5e slice (a 16 x 16 pod cut in powers of two)
V5E_SIZES = (1, 2, 4, 8, 16)
#: every 2-D v5e slice shape with rows <= cols
V5E_SHAPES = tuple((r, c) for r in V5E_SIZES for c in V5E_SIZES if r <= c)


def _shape(shape):
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise GradingError(
            f"the test's shape {shape!r} is not a tuple of sizes (a bug in the test)"
        ) from None
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
    ra, rb = (sum(int(c) * math.prod(shape[i + 1 :]) for i, c in enumerate(x)) for x in (a, b))
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

    return measures.bisection_bandwidth(
        torus(_shape(shape), link_bandwidth, wraparound=tuple(bool(w) for w in wraparound))
    )


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
    line = (ring if topo.wraparound[int(axis)] else chain)(
        m, system.link_bandwidth, system.hop_latency
    )
    links_in = np.unique(line.link_src[line.link_dst == 0]).size
    return measures.diameter(line) * system.hop_latency + (m - 1) / m * nbytes / (
        links_in * system.link_bandwidth
    )


def v5e_all_reduce_seconds(shape, nbytes):
    """Seconds of the torus all-reduce over a whole v5e slice (reduce-scatter then all-gather
    one axis at a time, latency-optimal rings where an axis wraps, chains elsewhere), in the
    faster of the two axis orders, by :func:`collectives.time`."""
    from ... import algorithms, cost

    topo = _v5e(shape)
    used = [a for a, size in enumerate(topo.shape) if size > 1]
    orders = [tuple(used), tuple(reversed(used))] if len(used) > 1 else [tuple(used)]
    return min(
        cost.time(
            algorithms.torus_all_reduce(topo.shape, axes=order, wraparound=topo.wraparound),
            topo,
            nbytes,
        ).seconds
        for order in orders
    )


def v5e_slice_all_reduce_seconds(shape, n_chips, nbytes):
    """:func:`v5e_all_reduce_seconds` of a learner's answer to "which v5e slice of ``n_chips``
    chips?": the cost :func:`~collectives.grading.check_no_worse` grades it by. Raises
    :class:`~collectives.GradingError` if ``shape`` is not one of the candidates (two axes of
    1, 2, 4, 8 or 16 chips, rows <= cols, ``n_chips`` in all)."""
    shape = _shape(shape)
    if shape not in V5E_SHAPES or shape[0] * shape[1] != int(n_chips):
        raise GradingError(
            f"{shape} is not a v5e slice of {n_chips} chips: two axes of 1, 2, "
            "4, 8 or 16 chips, rows <= cols"
        )
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
    return v5e_axis_seconds(
        shape, data_axis, grad_bytes, "all_reduce"
    ) + n_gathers * v5e_axis_seconds(shape, model_axis, gather_bytes)


def wrapped_axis_for(k, grad_bytes, gather_bytes, n_gathers):
    """On a v5e slice of shape ``(k, 16)`` (only the 16-chip axis wraps), which of two
    logical mesh axes goes on the wrapped axis so that a step's collectives take the least
    time (:func:`wrapped_axis_step_seconds`): ``"data"`` (one all-reduce of ``grad_bytes``
    per step along it) or ``"model"`` (``n_gathers`` all-gathers of ``gather_bytes`` each);
    "data" if the two tie. The notebook grades a learner's answer by its cost against this
    one's (:func:`~collectives.grading.check_no_worse`)."""
    step = {
        c: wrapped_axis_step_seconds(c, k, grad_bytes, gather_bytes, n_gathers)
        for c in ("data", "model")
    }
    return min(step, key=step.get)


# ---- Task 3: an all-gather over a whole slice, planned within a time budget -----------------

#: the chips of Task 3: a 2-D generation (an axis wraps only with 16 chips) and a 3-D one
#: (every axis wraps on a slice of whole 4 x 4 x 4 cubes, none on a smaller one)
PLAN_CHIPS = ("tpu-v5e", "tpu-v5p")
#: the plan that cuts every shard into one part per axis, the parts visiting the axes in
#: rotated orders at once (:func:`collectives.algorithms.torus_all_gather` ``concurrent=True``)
CONCURRENT = "concurrent"
#: a plan's bytes may fall short of the reference's by this much (relative), or by
#: :data:`BYTES_ABS` bytes (a learner may round them down to a whole number), and its time
#: exceed the budget by :data:`BUDGET_REL` (relative)
BYTES_REL = 1e-6
BYTES_ABS = 1.0
BUDGET_REL = 1e-9
#: the buffer at which a plan's time is read to find its slope (its time is affine in nbytes)
_PROBE = float(2**30)


def _chip(chip):
    if chip not in PLAN_CHIPS:
        raise GradingError(
            f"the test's chip {chip!r} is not one of {PLAN_CHIPS} (a bug in the test)"
        )
    return chip


def _used_axes(shape):
    return tuple(a for a, size in enumerate(shape) if size > 1)


def _order(plan, shape):
    """The learner's ``plan`` as :data:`CONCURRENT` or a tuple of the axes with more than one
    chip (axes of one chip may be named anywhere: they move nothing). Raises
    :class:`GradingError` naming what is wrong."""
    if isinstance(plan, str):
        if plan != CONCURRENT:
            raise GradingError(
                f"the plan {plan!r} is not an order of the axes (a tuple such as "
                f"(1, 0)) nor {CONCURRENT!r}"
            )
        return CONCURRENT
    try:
        axes = [int(a) for a in plan]
        if any(a != b for a, b in zip(axes, plan)):
            raise TypeError
    except (TypeError, ValueError):
        raise GradingError(
            f"the plan {show(plan)} is not an order of the axes (a tuple of "
            f"axis numbers such as (1, 0)) nor {CONCURRENT!r}"
        ) from None
    used = _used_axes(shape)
    if (
        len(set(axes)) != len(axes)
        or any(not 0 <= a < len(shape) for a in axes)
        or not set(used) <= set(axes)
    ):
        raise GradingError(
            f"the plan {show(plan)} must name each axis of the {show(shape)} "
            f"slice with more than one chip, {show(used)}, once (in any order)"
        )
    return tuple(a for a in axes if shape[a] > 1)


def slice_all_gather_seconds(plan, chip, shape, nbytes):
    """:func:`collectives.time` of the all-gather over every chip of a ``chip`` slice of
    ``shape`` (:func:`collectives.hardware.preset`, its wraparound by the published rule):
    along the axes one at a time in the order ``plan`` (a tuple of axes), or all axes at once
    (``plan`` :data:`CONCURRENT`), with the torus all-gather (latency-optimal bidirectional
    rings where an axis wraps, chains where it does not); ``nbytes`` is the buffer every chip
    holds at the end."""
    from ... import algorithms, cost
    from ...hardware import preset

    shape = _shape(shape)
    topo = preset(_chip(chip), shape=shape)
    order = _order(plan, shape)
    if order == CONCURRENT:
        schedule = algorithms.torus_all_gather(
            topo.shape, axes=_used_axes(shape), concurrent=True, wraparound=topo.wraparound
        )
    else:
        schedule = algorithms.torus_all_gather(topo.shape, axes=order, wraparound=topo.wraparound)
    return cost.time(schedule, topo, float(nbytes)).seconds


def _affine(plan, chip, shape):
    """(seconds at 0 bytes, seconds per byte) of a plan: its time is affine in the buffer
    (each step's latency plus its busiest link's bytes, every one a fixed share of it)."""
    empty = slice_all_gather_seconds(plan, chip, shape, 0.0)
    slope = (slice_all_gather_seconds(plan, chip, shape, _PROBE) - empty) / _PROBE
    half = slice_all_gather_seconds(plan, chip, shape, _PROBE / 2)
    if not math.isclose(half, empty + slope * _PROBE / 2, rel_tol=1e-9):
        raise GradingError(
            f"the time of plan {plan} on {chip} {shape} is not affine in the "
            "buffer (a bug in the grading)"
        )
    return empty, slope


def largest_all_gather_within(chip, shape, budget):
    """The reference plan: ``(order, nbytes)``, the order of the axes (one at a time) whose
    all-gather over the whole slice gathers the most bytes within ``budget`` seconds, and those
    bytes (:func:`slice_all_gather_seconds` is affine in the buffer: the budget less the
    latency, over the seconds per byte). Of orders that tie, the first in
    :func:`itertools.permutations` order. The reference does not try :data:`CONCURRENT`: a
    learner who finds that it gathers more passes."""
    shape = _shape(shape)
    used = _used_axes(shape)
    if not used:
        raise GradingError(f"a slice of one chip gathers nothing (a bug in the test): {shape}")
    best = None
    for order in itertools.permutations(used):
        empty, slope = _affine(order, chip, shape)
        nbytes = (float(budget) - empty) / slope
        if best is None or nbytes > best[1]:
            best = (order, nbytes)
    if best[1] <= 0:
        raise GradingError(f"no all-gather on {chip} {shape} fits {budget} s (a bug in the test)")
    return best


def check_all_gather_plan(answer, what, chip, shape, budget):
    """Check a learner's plan ``(plan, nbytes)`` by what it does: the all-gather of ``nbytes``
    with ``plan`` (an order of the axes, or :data:`CONCURRENT`) must take no more than
    ``budget`` seconds by :func:`slice_all_gather_seconds` (relative :data:`BUDGET_REL`), and
    ``nbytes`` must be no less than the reference plan's (:func:`largest_all_gather_within`;
    relative :data:`BYTES_REL`, or :data:`BYTES_ABS` bytes). A plan that gathers more than the
    reference's passes.
    Returns 1.0 (the re-check's number for "right"); raises ``AssertionError`` with both plans
    otherwise, :class:`GradingError` for an answer of the wrong kind."""
    shape = _shape(shape)
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != 2:
        raise GradingError(
            f"{what} should be a pair (plan, nbytes), such as ((1, 0), 1e6), "
            f"but it is {show(answer)}"
        )
    plan, nbytes = answer
    try:
        order = _order(plan, shape)
    except GradingError as exc:
        raise AssertionError(f"{what}: {exc}") from None
    nbytes = check_number(nbytes, f"the bytes of {what}")
    if nbytes < 0:
        raise AssertionError(f"{what} gathers {nbytes!r} bytes: a buffer is at least 0 bytes")
    seconds = slice_all_gather_seconds(order, chip, shape, nbytes)
    if seconds > float(budget) * (1 + BUDGET_REL):
        raise AssertionError(
            f"{what} is {show(answer)}: gathering {nbytes:.6g} bytes with the plan {show(order)} "
            f"takes {seconds:.6g} s by cl.time on the {chip} preset, more than the budget of "
            f"{float(budget):.6g} s ({seconds / float(budget):.4g} times it)"
        )
    best_order, best_bytes = largest_all_gather_within(chip, shape, budget)
    if nbytes < best_bytes * (1 - BYTES_REL) - BYTES_ABS:
        times = f"{best_bytes / nbytes:.4g} times yours" if nbytes else "where yours gathers none"
        raise AssertionError(
            f"{what} is {show(answer)}: within the budget the plan {show(best_order)} gathers "
            f"{best_bytes:.6g} bytes, {times}"
        )
    return 1.0


# ---- the cases the hidden tests draw from the course seed -----------------------------------


def _log_uniform(generator, low, high, digits=3):
    """A number drawn log-uniformly from [low, high], rounded to ``digits`` significant
    digits (so that it prints short in the feedback)."""
    value = math.exp(generator.uniform(math.log(low), math.log(high)))
    return float(f"{value:.{digits - 1}e}")


def _sizes(generator, choices, count):
    return tuple(int(generator.choice(choices)) for _ in range(count))


def _draw_hops(generator):
    dims = int(generator.integers(1, 4))
    shape = _sizes(generator, (1, 2, 3, 4, 5, 7, 8, 12, 16, 20, 28), dims)
    wrap = tuple(bool(w) for w in generator.integers(0, 2, dims))
    a = tuple(int(generator.integers(0, m)) for m in shape)
    b = tuple(int(generator.integers(0, m)) for m in shape)
    return (shape, wrap, a, b)


def _draw_diameter(generator):
    shape, wrap, _, _ = _draw_hops(generator)
    return (shape, wrap)


def _draw_bisection(generator):
    dims = int(generator.integers(1, 4))
    shape = _sizes(generator, (1, 2, 4, 6, 8, 12, 16, 20, 28), dims)
    if math.prod(shape) == 1:
        shape = (2,) + shape[1:]
    wrap = tuple(bool(w) for w in generator.integers(0, 2, dims))
    return (shape, wrap, float(generator.choice((4.5e10, 9e10, 1e9))))


def _draw_plan(generator):
    chip = str(generator.choice(PLAN_CHIPS))
    dims = 2 if chip == "tpu-v5e" else 3
    shape = (1,)
    while math.prod(shape) == 1:
        shape = _sizes(generator, V5E_SIZES, dims)
    return (chip, shape, _log_uniform(generator, 3e-5, 5e-3))


def _draw_shape(generator):
    return (int(2 ** generator.integers(0, 9)), _log_uniform(generator, 1e4, 1e8))


def _draw_wrapped(generator):
    return (
        int(generator.choice((2, 4, 8))),
        _log_uniform(generator, 1e4, 1e9),
        _log_uniform(generator, 1e3, 1e8),
        int(generator.integers(1, 101)),
    )


_DRAWS = {
    "test_slice_hops": _draw_hops,
    "test_slice_diameter": _draw_diameter,
    "test_slice_bisection_bandwidth": _draw_bisection,
    "test_slice_all_gather_plan": _draw_plan,
    "test_best_v5e_slice_shape": _draw_shape,
    "test_wrapped_axis_for": _draw_wrapped,
}


def drawn_cases(label, count, course_seed=None):
    """``count`` cases for the notebook's test cell ``label`` (its ``grade_id``), drawn from the
    course seed (:func:`collectives.grading.cohort.cases`): each a tuple of the arguments of
    the cell's function, plain ints, floats, bools and tuples. Ranges: slices of 1 to 3 axes up
    to the v5p pod's sides (hops, diameter; even sides for the bisection, whose worst cut the
    notebook states for even sides only); v5e and v5p slices with sides 1 to 16 and budgets of
    30 us to 5 ms (Task 3); 1 to 256 chips and 10 kB to 100 MB (Task 4); Task 5's buffers from
    1 kB to 1 GB and 1 to 100 gathers."""
    if label not in _DRAWS:
        raise GradingError(f"no cases are drawn for {label!r} (a bug in the test)")
    return cohort.cases(label, [], _DRAWS[label], count, course_seed)
