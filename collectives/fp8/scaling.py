"""FP8 scaling recipes: per-tensor (current and delayed), MX blocks, DeepSeek-V3 tiles.

An FP8 format holds few values over a narrow range (E4M3: 448 down to 2^-9), so a tensor is
multiplied by a *scale* before the cast and the scale is kept beside the 8-bit codes. The
recipes differ in how much of the tensor shares one scale and when the scale is chosen.

What is modelled
----------------
Per-tensor scaling, NVIDIA Transformer Engine (TE), ``transformer_engine.common.recipe``:

* **current scaling** (``Float8CurrentScaling``), :func:`current_scale`: the scale comes from
  the tensor being cast, ``FP8_MAX / amax / 2**margin`` (TE's ``compute_scale_from_amax``
  with its default epsilon 0: an all-zero or non-finite amax gives 1.0).
* **delayed scaling** (``DelayedScaling(margin=0, amax_history_len=1024,
  amax_compute_algo="max")``, the defaults of TE 1.x and 2.x; TE 0.x had history length 1 and
  ``"most_recent"``), :class:`DelayedScaling` and :func:`delayed_scales`: the scale used at a
  step comes from the amaxes *recorded at earlier steps*; each step's amax (of the unscaled
  tensor) is MAX-all-reduced across the data-parallel group (:func:`amax_all_reduce`),
  appended to a history of ``history_len`` steps, and the next scale is
  ``(FP8_MAX / a) / 2**margin`` with ``a`` the maximum over the history (``"max"``) or the
  newest entry (``"most_recent"``), in float32, keeping the previous scale where ``a`` is 0,
  Inf or NaN (TE's ``_default_get_amax_and_update_history`` and ``_default_sf_compute`` in
  ``transformer_engine/pytorch/fp8.py``). The first step uses scale 1.0.
* :func:`quantize_scaled` / :func:`dequantize_scaled`: the scaled cast ``encode(x * scale)``
  and its inverse ``decode(codes) * (1 / scale)`` (TE keeps ``scale_inv`` in float32).

Block scaling:

* **MXFP8** (OCP Microscaling Formats Specification v1.0, 2023), :func:`mx_quantize`: 32
  consecutive elements share one E8M0 (power-of-two) scale ``X``; ``rule="ocp"`` is the
  spec's ``X = 2**(floor(log2 amax) - emax)`` (elements whose ``|x| / X`` rounds beyond
  FP8_MAX saturate), ``rule="ceil"`` is NVIDIA's (TE's MXFP8 kernels, cuBLAS)
  ``X = 2**ceil(log2(amax / FP8_MAX))``, which never saturates. See
  :func:`~collectives.fp8.formats.mx_block_scale`.
* **DeepSeek-V3 tiles** (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437,
  section 3.3), :func:`tile_quantize`: E4M3 for every GEMM input ("we adopt the E4M3 format
  on all tensors", section 3.3.2), one scale per 1x128 tile of activations and per 128x128
  block of weights, computed online from the tile's amax: ``s = amax / 448``,
  ``x ~ decode(code) * s`` (the formula of the released inference kernel and the
  ``weight_scale_inv`` of the released checkpoints, whose README says a ragged block is
  padded with zeros). Not modelled: section 3.3.3's exceptions, the inputs of the Linear
  after attention cached in "a customized E5M6 data format", and the power-of-two ("round
  scaled, i.e., integral power of 2") scales of those activations and of the activations
  dispatched in FP8 to the experts; here every tile's scale is ``amax / 448``.

Scale conventions, as in each source: a per-tensor ``scale`` (TE) *multiplies* the tensor
before the cast; MX ``X`` and DeepSeek's tile scale ``s`` *multiply the decoded value*
(dequantisation scales).

What is left out
----------------
The FP8 GEMMs themselves (DeepSeek-V3's FP32 promotion of partial sums every 128 elements
included), TE's ``interval`` and ``Callable`` amax algorithms, its power-of-two scale option
(``force_pow_2_scales``), the transposed copies TE keeps for the backward pass, swizzled scale
layouts, stochastic rounding, and every format but E4M3/E5M2 (and their fnuz variants for the
per-tensor recipes). Casts here round to nearest-even once from the exact product
``x * scale`` (TE rounds ``x * scale`` to float32 first; the results differ only when that
rounding lands exactly on an FP8 tie).

Taught in the FP8 chapter.
"""

import numpy as np

from ..errors import CollectivesError
from ..schedule import schedule_arg
from ..validation import integer
from .checks import as_array, check_bool, real_array, real_number
from .formats import (
    ELEMENT_FORMATS,
    FORMATS,
    MX_ELEMENT_FORMATS,
    decode,
    encode,
    get_format,
    mx_block_scale,
    scale_from_amax,
)

__all__ = [
    "current_scale",
    "DelayedScaling",
    "delayed_scales",
    "amax_all_reduce",
    "quantize_scaled",
    "dequantize_scaled",
    "mx_quantize",
    "mx_dequantize",
    "tile_quantize",
    "tile_dequantize",
]

_ALGOS = ("max", "most_recent")
_TE = "NVIDIA Transformer Engine, transformer_engine.common.recipe"


# ----------------------------------------------------------------------------- helpers


def _element_format(fmt, what):
    return get_format(fmt, allowed=ELEMENT_FORMATS, what=f"{what} (element formats)")


def _margin(margin):
    return float(real_number(margin, "margin"))


def _amaxes(values, what, name="amax"):
    """Real amaxes as float32 (NaN and +Inf allowed, as TE records them), never negative."""
    a = real_array(values, what)
    if a.size and np.any(a < 0):
        first = float(a[a < 0].flat[0])
        raise CollectivesError(
            f"{what}: {name} is a maximum of |x| and must be >= 0, got {first!r}"
        )
    with np.errstate(over="ignore"):
        return a.astype(np.float32)


def _history_len(value):
    return integer(value, "history_len", minimum=1)


def _algo(value):
    if not isinstance(value, str) or value not in _ALGOS:
        raise CollectivesError(
            f"algo must be 'max' or 'most_recent' (TE's amax_compute_algo), got {value!r}"
        )
    return value


def _sliding_max(a, length):
    """``out[i] = max(a[max(0, i - length + 1) : i + 1])``, vectorised (van Herk / Gil-Werman:
    prefix and suffix maxima inside blocks of ``length``; NaN propagates like ``np.max``)."""
    n = a.size
    if n == 0 or length == 1:
        return a.copy()
    if length >= n:
        return np.maximum.accumulate(a)
    pad = (-n) % length
    blocks = np.concatenate([a, np.full(pad, -np.inf, a.dtype)]).reshape(-1, length)
    prefix = np.maximum.accumulate(blocks, axis=1).ravel()[:n]
    suffix = np.maximum.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].ravel()[:n]
    out = prefix.copy()
    end = np.arange(length - 1, n)
    out[length - 1 :] = np.maximum(suffix[end - length + 1], prefix[end])
    return out


def _positive_scale(scale, what, shape=None):
    """A scale (or array of scales) as float32: finite and > 0, broadcastable to ``shape``."""
    s = real_array(scale, what)
    with np.errstate(over="ignore"):
        s32 = s.astype(np.float32)
    bad = ~np.isfinite(s32) | (s32 <= 0)
    if np.any(bad):
        first = float(s.flat[int(np.flatnonzero(bad.ravel())[0])])
        raise CollectivesError(
            f"{what}: scale must be finite and > 0 (as a float32), got {first!r}"
        )
    if shape is not None:
        try:
            ok = np.broadcast_shapes(s32.shape, shape) == tuple(shape)
        except ValueError:
            ok = False
        if not ok:
            raise CollectivesError(
                f"{what}: scale has shape {s32.shape}, which does not broadcast to the "
                f"data's shape {shape}"
            )
    return s32


def _codes(codes, what):
    arr = as_array(codes, f"{what} takes uint8 codes")
    if arr.dtype.kind not in "iu":
        raise CollectivesError(f"{what} takes uint8 codes (integers 0..255), got dtype {arr.dtype}")
    return arr


def _as_float(value):
    """A 0-d result as a Python float; arrays unchanged."""
    value = np.asarray(value)
    return float(value) if value.ndim == 0 else value


# ----------------------------------------------------------------------------- per-tensor


def current_scale(x, fmt="e4m3", margin=0):
    """TE current scaling: the scale for casting ``x`` itself, ``FP8_MAX / amax / 2**margin``.

    ``amax = max |x|`` over the whole tensor; computed in float32 like TE
    (``Float8CurrentScaling``, ``compute_scale_from_amax``). An empty or all-zero ``x``, or
    one holding Inf or NaN, gives 1.0 (TE's rule for amax 0, Inf and NaN); an amax so small
    that the quotient overflows float32 gives the float32 maximum. Returns a Python float
    (a float32 value). ``margin``: a finite real number (TE: an integer, default 0).

    Left out: TE's ``amax_epsilon`` and power-of-two options (both off by default) and the
    amax all-reduce TE does when the tensor is sharded (see :func:`amax_all_reduce`).
    """
    f = _element_format(fmt, "current_scale")
    margin = _margin(margin)
    v = real_array(x, "current_scale")
    with np.errstate(invalid="ignore"):
        amax = np.float32(np.max(np.abs(v))) if v.size else np.float32(0)
    return float(scale_from_amax(amax, f, margin, np.float32(1.0)))


class DelayedScaling:
    """TE's delayed-scaling recipe for one tensor, step by step.

    ``DelayedScaling(fmt="e4m3", history_len=1024, margin=0, algo="max")`` (TE's defaults;
    TE 0.x used ``history_len=1, algo="most_recent"``). :attr:`scale` is the scale to use at
    the current step (1.0 before any update). :meth:`update` records the step's amax and
    computes the scale of the next step: the amax of the unscaled tensor at this step (a
    number, or one number per data-parallel rank, which are MAX-all-reduced first, as TE
    reduces over its ``amax_reduction_group``), appended to :attr:`amax_history`; then
    ``scale = (FP8_MAX / a) / 2**margin`` with ``a`` the maximum of the last
    ``history_len`` recorded amaxes (``"max"``) or the newest (``"most_recent"``), in float32,
    keeping the previous scale where ``a`` is 0, Inf or NaN.

    :func:`delayed_scales` computes the same sequence for a whole run at once.
    """

    __slots__ = ("_fmt", "_history_len", "_margin", "_algo", "_history", "_scale")

    def __init__(self, fmt="e4m3", history_len=1024, margin=0, algo="max"):
        self._fmt = _element_format(fmt, "DelayedScaling").name
        self._history_len = _history_len(history_len)
        self._margin = _margin(margin)
        self._algo = _algo(algo)
        self._history = np.zeros(0, np.float32)
        self._scale = np.float32(1.0)

    fmt = property(lambda self: self._fmt, doc="The FP8 format (e.g. 'e4m3').")
    history_len = property(lambda self: self._history_len, doc="Steps of amax history kept.")
    margin = property(
        lambda self: self._margin, doc="The margin (the scale is divided by 2**margin)."
    )
    algo = property(lambda self: self._algo, doc="'max' or 'most_recent'.")

    @property
    def scale(self):
        """The scale for the current step (a Python float holding a float32 value)."""
        return float(self._scale)

    @property
    def amax_history(self):
        """The recorded amaxes (float32), oldest first, newest last; at most ``history_len``.

        (TE keeps a zero-filled buffer of ``history_len`` with the newest entry rotated to
        the end; zeros never change the maximum, so the two give the same scales.)"""
        return self._history.copy()

    def update(self, amax):
        """Record this step's ``amax`` (a number, or one per rank: reduced with MAX) and
        return the scale for the next step (also :attr:`scale`)."""
        a = _amaxes(amax, "DelayedScaling.update")
        if a.ndim > 1 or a.size == 0:
            raise CollectivesError(
                "DelayedScaling.update takes this step's amax: a number, or a 1-D array with "
                f"one amax per data-parallel rank; got shape {a.shape}"
            )
        step_amax = np.max(a)  # the MAX all-reduce (NaN propagates)
        self._history = np.append(self._history, np.float32(step_amax))[-self._history_len :]
        window = self._history.max() if self._algo == "max" else self._history[-1]
        self._scale = np.float32(
            scale_from_amax(np.float32(window), FORMATS[self._fmt], self._margin, self._scale)
        )
        return float(self._scale)

    def __repr__(self):
        return (
            f"DelayedScaling(fmt={self._fmt!r}, history_len={self._history_len}, "
            f"margin={self._margin:g}, algo={self._algo!r}; scale={float(self._scale):.6g} "
            f"after {self._history.size} recorded step(s))"
        )


def delayed_scales(amaxes, fmt="e4m3", history_len=1024, margin=0, algo="max"):
    """The scale TE's delayed scaling uses at every step of a run, vectorised.

    ``amaxes``: the amax of the unscaled tensor at each step, shape ``(steps,)``, or
    ``(steps, ranks)`` with one column per data-parallel rank (MAX-reduced over ranks first).
    Returns float32 of shape ``(steps,)``: entry ``t`` is the scale used at step ``t``, which
    only knows the amaxes of steps before ``t`` (1.0 at step 0); the same numbers as calling
    :meth:`DelayedScaling.update` once per step.

    Computed without a loop over steps: a sliding-window maximum (van Herk / Gil-Werman) for
    ``"max"``, then TE's scale formula, then the previous scale carried forward where the
    window's amax is 0, Inf or NaN.
    """
    f = _element_format(fmt, "delayed_scales")
    history_len = _history_len(history_len)
    margin = _margin(margin)
    algo = _algo(algo)
    a = _amaxes(amaxes, "delayed_scales", "every amax")
    if a.ndim == 2:
        if a.shape[1] == 0:
            raise CollectivesError(
                f"delayed_scales: amaxes has shape {a.shape}; give at least one rank per step"
            )
        a = a.max(axis=1)
    elif a.ndim != 1:
        raise CollectivesError(
            f"delayed_scales takes amaxes of shape (steps,) or (steps, ranks), got shape {a.shape}"
        )
    n = a.size
    out = np.ones(n, np.float32)
    if n <= 1:
        return out
    window = _sliding_max(a[:-1], history_len if algo == "max" else 1)
    candidate = scale_from_amax(window, f, margin, np.float32(np.nan))
    # where the window gives no information, keep the last scale that had one (or 1.0)
    known = ~np.isnan(candidate)
    last = np.maximum.accumulate(np.where(known, np.arange(n - 1), -1))
    out[1:] = np.where(last >= 0, candidate[np.maximum(last, 0)], np.float32(1.0))
    return out


def amax_all_reduce(amaxes, schedule=None):
    """The MAX all-reduce of per-rank amaxes, run as a Schedule with ``cl.simulate``.

    ``amaxes``: shape ``(n_ranks,)`` (one tensor) or ``(n_ranks, k)`` (k tensors' amaxes
    at once, as TE reduces one contiguous buffer); each must be >= 0 (NaN and Inf allowed;
    NaN propagates). ``schedule``: any all-reduce :class:`~collectives.Schedule` over
    ``n_ranks`` ranks, including one over groups (then each group reduces on its own); the
    default is :func:`~collectives.algorithms.ring_all_reduce`. A schedule built for
    ``op="sum"`` is run with the same transfers and ``op="max"`` (the algorithm does not
    depend on the reduction). Returns float32 of ``amaxes``' shape: every rank's row holds
    the maximum over its group. Each rank's buffer is its ``k`` amaxes padded with zeros to
    a multiple of the schedule's chunks (zero is the identity of a max of amaxes).
    """
    from ..algorithms import ring_all_reduce
    from ..replay import simulate

    a = _amaxes(amaxes, "amax_all_reduce", "every amax")
    if a.ndim not in (1, 2) or a.shape[0] == 0:
        raise CollectivesError(
            f"amax_all_reduce takes amaxes of shape (n_ranks,) or (n_ranks, k), got shape {a.shape}"
        )
    n = a.shape[0]
    rows = a.reshape(n, -1)
    if schedule is None:
        schedule = ring_all_reduce(n)
    schedule = schedule_arg(schedule)
    if schedule.collective != "all_reduce":
        raise CollectivesError(
            f"amax_all_reduce needs an all_reduce schedule, got {schedule.name!r} "
            f"({schedule.collective})"
        )
    if schedule.n_ranks != n:
        raise CollectivesError(
            f"amax_all_reduce: the schedule {schedule.name!r} has {schedule.n_ranks} ranks "
            f"but amaxes has {n} rows (one per rank)"
        )
    schedule = _with_op(schedule, "max")
    k = rows.shape[1]
    padded = np.zeros((n, max(1, -(-k // schedule.n_chunks)) * schedule.n_chunks), np.float32)
    padded[:, :k] = rows
    out = simulate(schedule, padded)[:, :k]
    return np.asarray(out.reshape(a.shape), dtype=np.float32)


def _with_op(schedule, op):
    """The same transfers under reduction ``op``."""
    if schedule.op == op:
        return schedule
    from ..schedule import Schedule

    arrays = schedule.transfer_arrays()
    return Schedule.from_arrays(
        schedule.collective,
        schedule.n_ranks,
        schedule.n_chunks,
        arrays["step"],
        arrays["src"],
        arrays["dst"],
        arrays["src_chunk"],
        arrays["dst_chunk"],
        arrays["reduce"],
        n_steps=schedule.n_steps,
        root=schedule.root,
        n_scratch=schedule.n_scratch,
        name=f"{schedule.name} (op={op})",
        groups=schedule.groups,
        n_switches=schedule.n_switches,
        op=op,
    )


def quantize_scaled(x, scale, fmt="e4m3", saturate=True):
    """The scaled cast: ``encode(x * scale, fmt, saturate)``; returns ``(codes, scale)``.

    ``scale``: a finite positive number, or an array broadcastable to ``x`` (held as
    float32, as TE holds scales), e.g. from :func:`current_scale` or
    :attr:`DelayedScaling.scale`. The product is formed exactly (float64) and rounded once
    to nearest-even; saturating by default, as TE's casts are. Returns the ``uint8`` codes
    (``x``'s shape) and the float32 scale (a Python float when a scalar was given), the pair
    :func:`dequantize_scaled` takes.
    """
    f = _element_format(fmt, "quantize_scaled")
    sat = check_bool(saturate, "saturate")
    v = real_array(x, "quantize_scaled")
    s = _positive_scale(scale, "quantize_scaled", v.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        codes = encode(v * s.astype(np.float64), f.name, saturate=sat)
    return codes, _as_float(s)


def dequantize_scaled(codes, scale, fmt="e4m3"):
    """``decode(codes) * (1 / scale)`` in float32: TE's dequantisation with ``scale_inv``.

    ``scale``: as given to :func:`quantize_scaled` (broadcastable to ``codes``). The
    reciprocal is taken in float32 (TE's ``scale_inv``); for a power-of-two scale the result
    is exactly ``decode(codes) / scale``.
    """
    f = _element_format(fmt, "dequantize_scaled")
    c = _codes(codes, "dequantize_scaled")
    s = _positive_scale(scale, "dequantize_scaled", c.shape)
    inv = np.float32(1.0) / s
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(decode(c, f.name) * inv, dtype=np.float32)


# ----------------------------------------------------------------------------- MX blocks


def _block_args(block, what):
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)) or block < 1:
        raise CollectivesError(f"{what}: block must be a positive integer, got {block!r}")
    return int(block)


def _mx_rule(rule):
    if not isinstance(rule, str) or rule not in ("ocp", "ceil", "te"):
        raise CollectivesError(
            "mx_quantize: rule must be 'ocp' (X = 2^(floor(log2 amax) - emax), OCP MX v1.0) or "
            f"'ceil' (X = 2^ceil(log2(amax / FP8_MAX)), NVIDIA's), got {rule!r}"
        )
    return "ocp" if rule == "ocp" else "te"


def _blocks_expanded(scales, block, n):
    """One scale per element: each of the last axis' blocks repeated, trimmed to ``n``."""
    return np.repeat(scales, block, axis=-1)[..., :n]


def mx_quantize(x, block=32, fmt="e4m3", rule="ocp"):
    """MXFP8: ``(codes, scale_codes)`` for blocks of ``block`` elements along the last axis.

    Each block's scale ``X`` is a power of two (:func:`~collectives.fp8.mx_block_scale`:
    ``rule="ocp"`` rounds down as the OCP MX v1.0 spec's conversion does, ``rule="ceil"``
    rounds up as NVIDIA's hardware and TE do; ``"te"`` is accepted as another name for
    ``"ceil"``); the elements are ``encode(x / X, fmt, saturate=True)`` (under the OCP rule
    a block's largest element may round beyond FP8_MAX and saturates, as the spec's
    reference code clamps it). Returns ``codes`` (uint8, ``x``'s shape) and ``scale_codes``
    (uint8 E8M0 patterns, shape ``x.shape[:-1] + (ceil(n / block),)``; 0xFF, NaN, for a block
    holding NaN, or Inf under the OCP rule). ``fmt``: "e4m3" or "e5m2" (MXFP8's element
    types). A ragged last block is padded with zeros.
    """
    f = get_format(fmt, allowed=MX_ELEMENT_FORMATS, what="mx_quantize (MXFP8 elements)")
    block = _block_args(block, "mx_quantize")
    rule = _mx_rule(rule)
    v = real_array(x, "mx_quantize")
    if v.ndim == 0:
        raise CollectivesError(
            "mx_quantize: x must have at least one axis (blocks run along the last axis), "
            "got a scalar"
        )
    scales = mx_block_scale(v, block=block, fmt=f.name, rule=rule)
    per_element = _blocks_expanded(scales.astype(np.float64), block, v.shape[-1])
    with np.errstate(invalid="ignore"):
        codes = encode(v / per_element, f.name, saturate=True)
    return codes, encode(scales, "e8m0")


def mx_dequantize(codes, scale_codes, block=32, fmt="e4m3"):
    """The values (float32) of MXFP8 ``codes`` with their E8M0 ``scale_codes``:
    ``decode(codes) * X`` blockwise, the inverse of :func:`mx_quantize`."""
    f = get_format(fmt, allowed=MX_ELEMENT_FORMATS, what="mx_dequantize (MXFP8 elements)")
    block = _block_args(block, "mx_dequantize")
    c = _codes(codes, "mx_dequantize")
    sc = _codes(scale_codes, "mx_dequantize (scale_codes)")
    if c.ndim == 0:
        raise CollectivesError("mx_dequantize: codes must have at least one axis, got a scalar")
    want = c.shape[:-1] + (-(-c.shape[-1] // block),)
    if sc.shape != want:
        raise CollectivesError(
            f"mx_dequantize: codes of shape {c.shape} in blocks of {block} need scale_codes "
            f"of shape {want}, got {sc.shape}"
        )
    x_scale = _blocks_expanded(decode(sc, "e8m0").astype(np.float64), block, c.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(decode(c, f.name) * x_scale, dtype=np.float32)


# ----------------------------------------------------------------------------- tiles


def _tile_args(tile, ndim, what):
    if isinstance(tile, (int, np.integer)) and not isinstance(tile, (bool, np.bool_)):
        tile = (tile,)
    try:
        tile = tuple(tile)
    except TypeError:
        raise CollectivesError(
            f"{what}: tile must be a tuple of positive integers such as (1, 128), got {tile!r}"
        ) from None
    if not tile or not all(
        isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_)) and t >= 1
        for t in tile
    ):
        raise CollectivesError(
            f"{what}: tile must be a tuple of positive integers such as (1, 128), got {tile!r}"
        )
    if len(tile) > ndim:
        raise CollectivesError(
            f"{what}: tile {tile} spans {len(tile)} axes but the data has {ndim}"
        )
    return tuple(int(t) for t in tile)


def _tile_grid(shape, tile):
    """Tiles per tiled axis (the last ``len(tile)`` axes)."""
    k = len(tile)
    return tuple(-(-n // t) for n, t in zip(shape[-k:], tile))


def _tile_expand(scales, tile, shape):
    """One scale per element (each tile's scale repeated over the tile, edges trimmed)."""
    k = len(tile)
    out = scales
    for i, t in enumerate(tile):
        axis = len(shape) - k + i
        out = np.repeat(out, t, axis=axis)
        out = np.take(out, np.arange(shape[axis]), axis=axis)
    return out


def tile_quantize(x, tile=(1, 128), fmt="e4m3"):
    """DeepSeek-V3's fine-grained quantisation: ``(codes, scales)``, one scale per tile.

    ``tile`` covers the last ``len(tile)`` axes of ``x``: ``(1, 128)`` for activations (one
    token by 128 channels), ``(128, 128)`` for weights (arXiv:2412.19437).
    Each tile's scale is ``s = amax / FP8_MAX`` in float32 (E4M3: ``amax / 448``, as their
    kernels compute it), the elements ``encode(x / s, fmt, saturate=True)``, so that
    ``x ~ decode(code) * s``. Ragged edge tiles are padded with zeros. An all-zero tile gets
    ``s = 1.0``; a tile holding Inf or NaN gets ``s = NaN`` (and NaN codes). Returns
    ``codes`` (uint8, ``x``'s shape) and ``scales`` (float32, ``x.shape[:-k]`` followed by
    the number of tiles along each tiled axis).
    """
    f = _element_format(fmt, "tile_quantize")
    v = real_array(x, "tile_quantize")
    tile = _tile_args(tile, v.ndim, "tile_quantize")
    k = len(tile)
    grid = _tile_grid(v.shape, tile)
    lead = v.shape[:-k]
    a = np.abs(v)
    pad = [(0, 0)] * len(lead) + [(0, g * t - n) for g, t, n in zip(grid, tile, v.shape[-k:])]
    a = np.pad(a, pad)
    interleaved = lead + tuple(d for g, t in zip(grid, tile) for d in (g, t))
    a = a.reshape(interleaved)
    tile_axes = tuple(len(lead) + 2 * i + 1 for i in range(k))
    amax = a.max(axis=tile_axes) if a.size else np.zeros(lead + grid)
    with np.errstate(over="ignore", invalid="ignore"):
        amax32 = amax.astype(np.float32)
        s = amax32 / np.float32(f.max)
    s = np.where(amax32 == 0, np.float32(1.0), s)
    s = np.where(np.isfinite(amax32), s, np.float32(np.nan)).astype(np.float32)
    per_element = _tile_expand(s.astype(np.float64), tile, v.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        codes = encode(v / per_element, f.name, saturate=True)
    return codes, s


def tile_dequantize(codes, scales, tile=(1, 128), fmt="e4m3"):
    """The values (float32) of tile-quantised ``codes``: ``decode(codes) * s`` tilewise, the
    inverse of :func:`tile_quantize` (same ``tile`` and ``fmt``)."""
    f = _element_format(fmt, "tile_dequantize")
    c = _codes(codes, "tile_dequantize")
    tile = _tile_args(tile, c.ndim, "tile_dequantize")
    s = real_array(scales, "tile_dequantize (scales)")
    want = c.shape[: -len(tile)] + _tile_grid(c.shape, tile)
    if s.shape != want:
        raise CollectivesError(
            f"tile_dequantize: codes of shape {c.shape} in tiles of {tile} need scales of "
            f"shape {want}, got {s.shape}"
        )
    per_element = _tile_expand(s.astype(np.float32).astype(np.float64), tile, c.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(decode(c, f.name) * per_element, dtype=np.float32)
