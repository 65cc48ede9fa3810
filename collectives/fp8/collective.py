"""An FP8 gradient all-reduce over any all-reduce Schedule, in the modes FP8-LM's paper, MS-AMP's
code and this course describe, and what it costs on the wire.

What is modelled
----------------
Peng et al., "FP8-LM: Training FP8 Large Language Models" (arXiv:2310.18313; Microsoft's
MS-AMP), section 2.1. Each data-parallel rank ``r`` holds a gradient ``g_r`` (one tensor, a
row of ``grads``). The ranks agree on one shared scale ``s_g``: FP8-LM's global minimum of
the ranks' scales, which is TE's scale of the group's amax (``FP8_MAX / max_r amax_r``,
found here with :func:`~collectives.fp8.amax_all_reduce` over the same schedule; a rank
whose gradient is all zeros, to which TE would give scale 1, cannot lower it). With
``power_of_two_scale=True`` the scale is rounded down to a power of two,
``2**floor(log2(FP8_MAX / amax))``, as MS-AMP's ``ScalingMeta.compute_scaling_factor``
(``msamp/common/tensor/meta.py``) computes it. Every rank casts ``mu * s_g * g_r`` to FP8,
the FP8 values are summed by the schedule, and the result (an FP8 tensor, FP8-LM's ``g``
with scale ``s = N * mu * s_g``) stands for the mean gradient ``sum_r g_r / N``. The factor
``mu`` is what the ways of averaging differ in:

``scaling="pre"``
    ``mu = 1/N``: each rank divides by the group size ``N`` before the sum, so the sum
    never exceeds FP8_MAX but small values fall below the smallest subnormal (underflow
    grows with ``N``).
``scaling="post"``
    ``mu = 1``: sum first, divide after, so inputs keep the full range but partial sums of
    up to ``N * FP8_MAX`` are clipped (overflow grows with ``N``). MS-AMP's DeepSpeed ZeRO
    path (``msamp/deepspeed/runtime/zero/fp8_stage_1_and_2.py``: the owner's ``grad.div_``
    on the scale only, then one FP8 ``DistOp.reduce`` per tensor to its owner, an
    ``ncclReduce``) and its Megatron distributed optimizer (``msamp/megatron/optimizer/
    distrib_optimizer.py``: MIN all-reduce of the scales, re-cast, ``scale_inv * 1/DP``, an
    FP8 reduce-scatter) post-scale.
``scaling="sqrt"``
    ``mu = 1/sqrt(N)``: MS-AMP's data-parallel wrapper (``msamp/nn/distributed.py``,
    ``pre_scale = 1.0 / math.sqrt(world_size)``), "an empirical factor" in place of the
    paper's auto-scaling, as a maintainer put it (Azure/MS-AMP issue #117). MS-AMP's
    Megatron integration also stores ``meta.pre_scale = 1/sqrt(DP)`` but nothing in the
    repository reads it (the pull request that would, #140, was not merged).
``scaling="auto"``
    FP8-LM's auto-scaling factor. The paper: count the fraction of values that "attains the
    maximum feasible value" of FP8; above 0.001% mu "is set to 1/2 in the subsequent
    training step", and while it stays below, mu is increased "exponentially ... to 2 over
    the span of 1,000 training steps". Read here as: halve mu, or multiply it by 2^(1/1000)
    per step (:class:`AutoScaling`). Which values are counted the paper does not say; here,
    as in the authors' own implementation (MS-AMP pull request #140, not merged:
    ``msamp/megatron/optimizer/distrib_optimizer.py`` counts the codes of magnitude 448,
    ``(g.value & 0x7f) == 126``, in the reduced E4M3 gradient over its number of elements,
    then ``pre_scale.div_(2.0)`` or ``mul_(2.0**(1.0 / window))``; threshold 1e-5 and window
    1000 are the defaults of its Megatron-LM patch, Azure/MS-AMP-Examples pull request #21),
    the elements of the reduced result at FP8_MAX over all its elements. With the shared
    scale only the sums can exceed FP8_MAX. With ``mu=None`` the call uses the value the
    rule settles at for these gradients held fixed: the largest power of two with at most
    0.001% of the exact sums at FP8_MAX once cast; the rule then moves within a factor of 2
    of it. Pass ``mu=`` to use the value of a particular step.

How the schedule moves the values (every transfer of a step at once, steps in order):
``quantize="once"`` casts the inputs to FP8 and lets transfers carry partial sums in the
accumulation precision; ``quantize="per_hop"`` re-casts every transfer's payload to FP8, as
hardware that sends FP8 on the wire does (reduce-scatter partial sums and all-gather copies
alike). ``accumulate`` is the precision a receiver adds and holds values in: ``"fp32"``
(IEEE float32 addition), ``"bf16"`` (each sum correctly rounded to bfloat16: float32
addition then round-to-nearest-even on the bits, exact because two bfloat16 values differing
by more than 2^16 in magnitude cannot change the rounded sum) or ``"fp8"`` (each exact sum
rounded to the FP8 format, saturating). ``"fp8"`` is what NCCL does with an FP8 datatype: the
FP8 ``FuncSum`` of the MSCCL executor MS-AMP builds against
(``src/collectives/device/reduce_kernel.h`` of Azure/msccl-executor-nccl, branch
msccl-v2.17, for ``__CUDA_ARCH__ >= 800``) and of NCCL 2.30 on Hopper
(``src/device/reduce_kernel.h``) is ``__nv_fp8_e4m3(__hadd(__half(x), __half(y)))``: add in
half precision, narrow back to FP8 with ``__NV_SATFINITE``, at every hop. For two FP8
operands the half-precision rounding never changes the result (the tests check every pair of
finite values of each format), so that is the exact sum rounded once to FP8. That is the
sum of NCCL's ring and tree kernels. NCCL's symmetric-memory kernels (NCCL 2.27 and later,
for buffers registered with ``ncclCommWindowRegister`` and ``NCCL_WIN_COLL_SYMMETRIC``) do
otherwise: the 2.27.3 release notes read "Floating point summation is always done in fp32
accumulators (with the exception of fp8 on NVLS, where it uses fp16 inside the switch)";
in 2.30 ``ncclSymkAccumType<FuncSum, __nv_fp8_e4m3, false>`` is ``float``
(``src/device/symmetric/primitives.cuh``), and the network (GIN) kernels accumulate FP8 in
FP16. Each rank there loads its peers' FP8 values of a shard, adds them wide and casts the
sum once, which is ``quantize="once", accumulate="fp32"`` here (up to the order of the
float32 additions); the FP16 accumulation of NVLS and GIN is not modelled.

The modes, by who uses them:

* FP8-LM / MS-AMP as released: :func:`msamp_all_reduce` (= :data:`MSAMP_OPTIONS`): the
  uint8 FP8 buffer goes to ``ncclAllReduce`` with the datatype replaced by ``ncclFp8E4M3``
  (``msamp/operators/dist_op/dist.cpp``), so every hop adds in FP16 and narrows back to
  E4M3 (``quantize="per_hop", accumulate="fp8"``); E4M3, the power-of-two scale and
  ``scaling="sqrt"``.
* The course's recommendation, "cast once, sum wide" (the defaults ``quantize="once",
  accumulate="fp32"``): one rounding at the input and one at the output, as NCCL's
  symmetric-memory kernels sum FP8 (above). Megatron Core's
  ``reduce_scatter_with_fp32_accumulation`` sums low-precision (BF16) inputs in FP32 after an
  all-to-all, which would keep FP8's wire bytes for the reduce-scatter; an FP8 version (each
  shard sent with its sender's scale) is this course's extrapolation, not a deployed feature.
  A ring that carries FP32 partial sums would send four times the bytes.

The stored result is FP8 in every mode (FP8-LM keeps the reduced gradient in FP8). Every cast
rounds to nearest-even and saturates (TE's, torch's and CUDA's ``__NV_SATFINITE`` e4m3 casts
do); a value clipped at any cast on its way is counted in ``overflow_rate``.

The result is compared with the float32 all-reduce of the same inputs over the same schedule
(``cl.simulate`` on float32 rows, divided by ``N``), as FP8-LM's Fig. 7 compares SNR,
underflow and overflow rates of the three methods.

:func:`wire_bytes` and :func:`all_reduce_times` cost the same all-reduce with 1-, 2- and
4-byte elements with :func:`collectives.time` on any topology or hardware preset (FP8-LM,
section 3.2.2: 75% less traffic than FP32 in theory, 63-65% measured on weight-related
communication, Table 5).

What is left out
----------------
Gradients of several tensors (one tensor per call: FP8-LM keeps one scale per tensor), the
all-reduce of the scales themselves (one float per tensor), NCCL's chunking, pipelining and
protocols (the schedule's own chunks are the unit, and NCCL's own choice of ring or tree for
the FP8 datatype is the caller's ``schedule``), delayed or per-rank scales inside the sum,
stochastic rounding, non-saturating casts (NaN/Inf propagation), the 4-byte scale that
travels with an FP8 tensor, any time spent casting, MS-AMP's FP8 accumulation of micro-batch
gradients before the reduction (``Arithmetic.add_to_fp8`` in its Megatron path) and the
float32 rounding of ``x * scale`` before TE's cast (here the exact product is rounded once).

Taught in the FP8 chapter.
"""

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..errors import CollectivesError
from ..replay import step_rows
from ..schedule import schedule_arg
from ..validation import integer
from .checks import check_bool, real_array, real_number
from .formats import ELEMENT_FORMATS, decode, encode, get_format, scale_from_amax
from .metrics import relative_error, snr_db
from .scaling import amax_all_reduce

__all__ = [
    "FP8AllReduceResult",
    "AutoScaling",
    "fp8_all_reduce",
    "msamp_all_reduce",
    "wire_bytes",
    "all_reduce_times",
    "WIRE_BYTES",
    "AUTO_SCALING_THRESHOLD",
    "MSAMP_OPTIONS",
]

#: bytes per element on the wire for each element type :func:`wire_bytes` knows
WIRE_BYTES = {"fp8": 1, "bf16": 2, "fp16": 2, "fp32": 4}

#: FP8-LM's auto-scaling threshold: more than 0.001% of values at FP8_MAX halves mu
AUTO_SCALING_THRESHOLD = 1e-5

#: the options of :func:`fp8_all_reduce` that make it MS-AMP's FP8 all-reduce as released
#: (module text): E4M3, power-of-two scale times 1/sqrt(N), every hop adds and narrows back
#: to E4M3
MSAMP_OPTIONS = MappingProxyType(
    {
        "fmt": "e4m3",
        "scaling": "sqrt",
        "quantize": "per_hop",
        "accumulate": "fp8",
        "power_of_two_scale": True,
    }
)

_SCALINGS = ("pre", "post", "sqrt", "auto")
_QUANTIZE = ("once", "per_hop")
_ACCUMULATE = ("fp32", "bf16", "fp8")


# ----------------------------------------------------------------------------- rounding


def _round_bf16(x):
    """float32 -> the nearest bfloat16 value (ties to even), still as float32; bit-exact."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    rounded = (
        (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    ).view(np.float32)
    return np.where(np.isnan(x), x, rounded)


def _power_of_two_below(scale):
    """``2**floor(log2(scale))`` for positive finite float32 scales, exactly (``frexp``):
    MS-AMP's ``compute_scaling_factor`` with margin 0 (``msamp/common/tensor/meta.py``)."""
    mantissa, exponent = np.frexp(np.asarray(scale, dtype=np.float64))
    return np.ldexp(1.0, exponent - 1).astype(np.float32)


def _overflows(v, f):
    """Where the finite values ``v`` round beyond the largest finite value of ``f``: above
    ``max + half a step``, or at it when the tie goes to the (even) code beyond max."""
    top = decode(np.array([f.max_pattern - 1, f.max_pattern]), f.name).astype(np.float64)
    half_step = (top[1] - top[0]) / 2
    limit = f.max + half_step
    a = np.abs(v)
    return a >= limit if (f.max_pattern + 1) % 2 == 0 else a > limit


def _round_fp8(v, f):
    """``v`` rounded to ``f`` with a saturating cast: (float32 values, clipped?)."""
    v = np.asarray(v, dtype=np.float64)
    values = decode(encode(v, f.name, saturate=True), f.name)
    return values, _overflows(v, f)


def _attains_max(values, f):
    return np.abs(values) >= np.float32(f.max)


# ----------------------------------------------------------------------------- auto-scaling


class AutoScaling:
    """FP8-LM's auto-scaling factor ``mu``, step by step.

    ``AutoScaling(mu=1.0, threshold=1e-5, growth_steps=1000)``. :meth:`update` takes the
    fraction of values that reached FP8_MAX at this step (e.g.
    :attr:`FP8AllReduceResult.saturated_fraction`) and returns ``mu`` for the next step:
    halved when the fraction exceeds ``threshold`` (0.001%), otherwise multiplied by
    ``2 ** (1 / growth_steps)`` so that it doubles over ``growth_steps`` quiet steps. This
    reads the paper's "mu is set to 1/2" as a halving and "exponentially increase mu to 2
    over the span of 1,000 training steps" as a doubling over 1,000 steps; the paper's text
    allows other readings (mu set to exactly 1/2; growth only after 1,000 quiet steps).
    """

    __slots__ = ("_mu", "_threshold", "_growth")

    def __init__(self, mu=1.0, threshold=AUTO_SCALING_THRESHOLD, growth_steps=1000):
        self._mu = _positive(mu, "mu")
        self._threshold = float(real_number(threshold, "threshold"))
        if not 0 <= self._threshold < 1:
            raise CollectivesError(
                f"threshold is a fraction of values and must be in [0, 1), got {threshold!r}"
            )
        steps = integer(growth_steps, "growth_steps", minimum=1)
        self._growth = 2.0 ** (1.0 / steps)

    mu = property(lambda self: self._mu, doc="The factor for the current step.")
    threshold = property(lambda self: self._threshold, doc="The fraction that halves mu.")

    def update(self, saturated_fraction):
        """Return (and keep) ``mu`` for the next step, given this step's fraction of values
        at FP8_MAX (a number in [0, 1])."""
        frac = float(real_number(saturated_fraction, "saturated_fraction"))
        if not 0 <= frac <= 1:
            raise CollectivesError(
                f"saturated_fraction must be in [0, 1], got {saturated_fraction!r}"
            )
        self._mu = self._mu / 2 if frac > self._threshold else self._mu * self._growth
        return self._mu

    def __repr__(self):
        return f"AutoScaling(mu={self._mu:.6g}, threshold={self._threshold:g})"


def _positive(value, name):
    value = float(real_number(value, name))
    if value <= 0:
        raise CollectivesError(f"{name} must be > 0, got {value!r}")
    return value


def _settled_mu(sums, f, threshold):
    """The largest power of two ``mu`` with at most ``threshold`` of the elements of
    ``mu * sums`` (the exact reduced sums, float64) reaching FP8_MAX when cast (MS-AMP pull
    request #140 counts the reduced gradient's elements, zeros included)."""
    mags = np.abs(sums.ravel())
    if not np.any(mags > 0):
        return 1.0
    allowed = int(np.floor(threshold * mags.size))
    # the (allowed + 1)-th largest magnitude must stay below FP8_MAX after rounding
    w = float(np.partition(mags, mags.size - 1 - allowed)[mags.size - 1 - allowed])
    k = int(np.floor(np.log2(f.max / w)))
    for candidate in (k + 1, k, k - 1, k - 2):
        value = np.ldexp(w, candidate)
        if abs(float(decode(encode(value, f.name, saturate=True), f.name))) < f.max:
            return float(np.ldexp(1.0, candidate))
    return float(np.ldexp(1.0, k - 2))  # not reached: w * 2**(k-2) <= FP8_MAX / 4


# ----------------------------------------------------------------------------- the all-reduce


@dataclass(frozen=True, eq=False)
class FP8AllReduceResult:
    """What :func:`fp8_all_reduce` computed and how far it is from float32.

    ``output``: (n_ranks, size) float32, every rank's averaged gradient after the FP8
    all-reduce. ``reference``: the float32 all-reduce of the same inputs over the same
    schedule, divided by the group size. ``rank_scales``: each rank's own current scale
    ``FP8_MAX / amax_r`` (float32; 1.0 for an all-zero gradient, as TE; rounded down to a
    power of two with ``power_of_two_scale``). ``shared_scale``: ``s_g``, the scale of the
    group's amax (the minimum of ``rank_scales`` over ranks with a nonzero gradient), per
    rank. ``mu``: the averaging factor used (``1/N``, 1, ``1/sqrt(N)`` or the auto-scaling
    value). ``scale``: what the inputs were multiplied by before the cast,
    ``mu * s_g``, per rank; ``output_scale``: ``N * mu * s_g`` per rank (FP8-LM's ``s``), so
    that ``output = fp8_result / output_scale``. For a schedule with one group the three
    per-rank arrays hold one value each repeated; :attr:`shared_scale` etc. stay arrays.
    ``underflow_rate``: fraction of the nonzero input elements (all ranks) cast to zero.
    ``overflow_rate``: fraction of the output elements (all ranks) clipped at some cast on
    their way. ``saturated_fraction``: fraction of the elements of the reduced FP8
    result (all ranks, zeros included) at FP8_MAX, the statistic auto-scaling watches (as
    MS-AMP's pull request #140 counts it). ``snr_db``, ``rel_error``:
    :func:`~collectives.fp8.snr_db` and :func:`~collectives.fp8.relative_error` of
    ``output`` against ``reference``. ``step_errors`` (with ``step_errors=True``, else None):
    per step of the schedule, the relative error (:func:`~collectives.fp8.relative_error`)
    of the values sent in that step (the partial sums a hop carries, in the scaled domain)
    against the same values summed exactly from the unrounded scaled inputs; NaN for a
    step that sends nothing.
    """

    output: np.ndarray
    reference: np.ndarray
    rank_scales: np.ndarray
    shared_scale: np.ndarray
    mu: float
    scale: np.ndarray
    output_scale: np.ndarray
    underflow_rate: float
    overflow_rate: float
    saturated_fraction: float
    snr_db: float
    rel_error: float
    fmt: str
    scaling: str
    quantize: str
    accumulate: str
    schedule_name: str
    power_of_two_scale: bool = False
    step_errors: np.ndarray | None = None

    def __repr__(self):
        return (
            f"FP8AllReduceResult({self.schedule_name}, {self.output.shape[0]} ranks x "
            f"{self.output.shape[1]}, fmt={self.fmt!r}, scaling={self.scaling!r}, "
            f"quantize={self.quantize!r}, accumulate={self.accumulate!r}"
            f"{', power_of_two_scale=True' if self.power_of_two_scale else ''}: mu={self.mu:.6g}, "
            f"SNR {self.snr_db:.2f} dB, underflow {self.underflow_rate:.3g}, overflow "
            f"{self.overflow_rate:.3g})"
        )


def _grads(grads):
    g = real_array(grads, "fp8_all_reduce (grads)")
    if g.ndim != 2 or g.shape[0] < 1 or g.shape[1] < 1:
        raise CollectivesError(
            "fp8_all_reduce takes grads of shape (n_ranks, size): one gradient row per rank, "
            f"got shape {g.shape}"
        )
    with np.errstate(over="ignore"):
        g32 = g.astype(np.float32)
    if not np.all(np.isfinite(g32)):
        raise CollectivesError(
            "fp8_all_reduce: grads must be finite in float32 (no NaN or Inf; a step with "
            "non-finite gradients is skipped, not all-reduced)"
        )
    return g32


def _option(value, name, options):
    if not isinstance(value, str) or value not in options:
        raise CollectivesError(
            f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}"
        )
    return value


def _all_reduce_schedule(schedule, n_ranks):
    from ..algorithms import ring_all_reduce

    if schedule is None:
        return ring_all_reduce(n_ranks)
    schedule = schedule_arg(schedule)
    if schedule.collective != "all_reduce":
        raise CollectivesError(
            f"fp8_all_reduce needs an all_reduce schedule, got {schedule.name!r} "
            f"({schedule.collective})"
        )
    if schedule.op != "sum":
        raise CollectivesError(
            f"fp8_all_reduce sums gradients; the schedule {schedule.name!r} reduces with "
            f"op={schedule.op!r}"
        )
    if schedule.n_ranks != n_ranks:
        raise CollectivesError(
            f"fp8_all_reduce: the schedule {schedule.name!r} has {schedule.n_ranks} ranks but "
            f"grads has {n_ranks} rows (one per rank)"
        )
    return schedule


def fp8_all_reduce(
    grads,
    schedule=None,
    *,
    fmt="e4m3",
    scaling="auto",
    quantize="once",
    accumulate="fp32",
    mu=None,
    power_of_two_scale=False,
    step_errors=False,
):
    """An FP8 gradient all-reduce with one shared scale, run over ``schedule``; returns
    :class:`FP8AllReduceResult`.

    The defaults are the course's "cast once, sum wide" (one cast at the input, FP32 partial
    sums, FP8 result) with FP8-LM's auto-scaling; MS-AMP's released mode is
    :func:`msamp_all_reduce` (the module text says what each option models).

    ``grads``: (n_ranks, size) real array, one gradient per rank (taken as float32, finite).
    ``schedule``: any all-reduce :class:`~collectives.Schedule` (op "sum") over n_ranks,
    over groups too (each group averages on its own); default
    :func:`~collectives.algorithms.ring_all_reduce`. A size that does not split into the
    schedule's chunks is padded with zeros (they change no statistic). ``fmt``: the FP8
    format of gradients and wire (E4M3 by default, as MS-AMP's code uses for weight
    gradients, ``msamp/nn/distributed.py``; any element format). ``scaling``: "pre",
    "post", "sqrt" or "auto" (see the module text); ``mu``: only with "auto", the factor to
    use (default: the value auto-scaling settles at). ``quantize``: "once" or "per_hop";
    ``accumulate``: "fp32", "bf16" or "fp8".
    ``power_of_two_scale``: round the shared scale down to a power of two (MS-AMP).
    ``step_errors``: also replay the schedule exactly (float64 sums of the unrounded scaled
    inputs) and give the error of every step's sent values
    (:attr:`FP8AllReduceResult.step_errors`: the error hop by hop).

    Vectorised over the transfers of each step; the steps run in order.
    """
    from ..replay import simulate
    from ..semantics import collective_spec

    g = _grads(grads)
    n_ranks, size = g.shape
    schedule = _all_reduce_schedule(schedule, n_ranks)
    f = get_format(fmt, allowed=ELEMENT_FORMATS, what="fp8_all_reduce (element formats)")
    scaling = _option(scaling, "scaling", _SCALINGS)
    quantize = _option(quantize, "quantize", _QUANTIZE)
    accumulate = _option(accumulate, "accumulate", _ACCUMULATE)
    power_of_two_scale = check_bool(power_of_two_scale, "power_of_two_scale")
    record = check_bool(step_errors, "step_errors")
    if mu is not None:
        if scaling != "auto":
            raise CollectivesError(
                f"mu is the auto-scaling factor, for scaling='auto' only; scaling={scaling!r} "
                "fixes it (pre: 1/N, post: 1, sqrt: 1/sqrt(N))"
            )
        mu = _positive(mu, "mu")

    # the chunk layout: pad each row to a multiple of the schedule's chunks
    padded_size = -(-size // schedule.n_chunks) * schedule.n_chunks
    rows = np.zeros((n_ranks, padded_size), np.float32)
    rows[:, :size] = g
    group_size = schedule.group_size

    # the shared scale: the scale of the group's amax (MAX all-reduce over the schedule)
    amax = np.abs(g).max(axis=1)
    rank_scales = scale_from_amax(amax, f, 0.0, np.float32(1.0))
    group_amax = amax_all_reduce(amax, schedule)
    shared = scale_from_amax(group_amax, f, 0.0, np.float32(1.0))
    if power_of_two_scale:
        rank_scales, shared = _power_of_two_below(rank_scales), _power_of_two_below(shared)

    # exact group sums in the scaled domain, for the settled auto-scaling factor
    scaled_inputs = rows.astype(np.float64) * shared.astype(np.float64)[:, None]
    if scaling == "pre":
        mu = 1.0 / group_size
    elif scaling == "post":
        mu = 1.0
    elif scaling == "sqrt":
        mu = 1.0 / np.sqrt(group_size)
    elif mu is None:
        group_sums = scaled_inputs[schedule.groups].sum(axis=1)  # (groups, size)
        mu = _settled_mu(group_sums[:, :size], f, AUTO_SCALING_THRESHOLD)
    multiplier = mu * shared.astype(np.float64)  # per rank

    # cast the inputs
    inputs, clipped_in = _round_fp8(rows.astype(np.float64) * multiplier[:, None], f)
    nonzero_in = rows != 0
    n_nonzero_in = int(nonzero_in.sum())
    underflow = (
        float(np.count_nonzero(nonzero_in & (inputs == 0))) / n_nonzero_in if n_nonzero_in else 0.0
    )

    # run the schedule
    spec = collective_spec("all_reduce")
    sent = [] if record else None
    values, clipped = _replay(schedule, spec, inputs, clipped_in, f, quantize, accumulate, sent)
    errors = None
    if record:  # the same schedule on the unrounded scaled inputs: float64 sums, no rounding
        exact = []
        _replay(
            schedule,
            spec,
            rows.astype(np.float64) * multiplier[:, None],
            clipped_in,
            f,
            "once",
            "fp32",
            exact,
        )
        errors = np.full(schedule.n_steps, np.nan)
        for (k, rounded), (_, true) in zip(sent, exact):
            errors[k] = relative_error(true, rounded)

    # the stored result is FP8
    result, clipped_out = _round_fp8(values, f)
    clipped = clipped | clipped_out
    output_scale = group_size * multiplier
    with np.errstate(over="ignore"):
        output = (result.astype(np.float64) / output_scale[:, None]).astype(np.float32)
    reference = (simulate(schedule, rows) / np.float32(group_size)).astype(np.float32)

    output, reference = output[:, :size], reference[:, :size]
    clipped, result, inputs = clipped[:, :size], result[:, :size], inputs[:, :size]
    at_max = int(np.count_nonzero(_attains_max(result, f)))
    return FP8AllReduceResult(
        output=output,
        reference=reference,
        rank_scales=np.asarray(rank_scales, np.float32),
        shared_scale=np.asarray(shared, np.float32),
        mu=float(mu),
        scale=multiplier,
        output_scale=output_scale,
        underflow_rate=underflow,
        overflow_rate=float(np.count_nonzero(clipped)) / clipped.size,
        saturated_fraction=at_max / result.size,
        snr_db=snr_db(reference, output),
        rel_error=relative_error(reference, output),
        fmt=f.name,
        scaling=scaling,
        quantize=quantize,
        accumulate=accumulate,
        schedule_name=schedule.name,
        power_of_two_scale=power_of_two_scale,
        step_errors=errors,
    )


def msamp_all_reduce(grads, schedule=None, *, scaling="sqrt", mu=None, step_errors=False):
    """MS-AMP's FP8 gradient all-reduce as its code runs it: :func:`fp8_all_reduce` with
    :data:`MSAMP_OPTIONS` (E4M3; the scale of the group's amax rounded down to a power of
    two; every hop of ``schedule`` adds and narrows back to E4M3, as the NCCL fork it calls
    with ``ncclFp8E4M3`` does, and NCCL's own ring and tree kernels). ``schedule``: the
    default ring, or NCCL's tree (:func:`~collectives.algorithms.nccl_tree_all_reduce`: a
    chain inside each node, a double binary tree across nodes). ``scaling="sqrt"`` (its
    data-parallel wrapper, ``msamp/nn/distributed.py``) by default; ``"post"`` is its
    Megatron path (an FP8 reduce-scatter) and its DeepSpeed ZeRO path (an FP8 reduce of each
    tensor to its owner), both the first half of an all-reduce narrowed the same way;
    ``"pre"`` and ``"auto"`` are the paper's alternatives run in the same hardware mode.
    ``step_errors``: as in :func:`fp8_all_reduce` (the error hop by hop)."""
    options = dict(MSAMP_OPTIONS, scaling=scaling)
    return fp8_all_reduce(grads, schedule, mu=mu, step_errors=step_errors, **options)


def _replay(schedule, spec, inputs, clipped_in, f, quantize, accumulate, sent=None):
    """Run ``schedule`` on the FP8 ``inputs`` (n_ranks, length) with rounding at every hop;
    returns each rank's output row and where a value was clipped on its way. ``sent``: a
    list to which every step's ``(step, values sent)`` is appended (float64 copies). The
    sums are in the inputs' precision (float32; float64 inputs give float64 sums)."""
    buffer, filled = spec.place_inputs(
        inputs,
        schedule.groups,
        schedule.n_chunks,
        schedule.n_slots,
        schedule.root,
        schedule.n_participants,
    )
    flags, _ = spec.place_inputs(
        clipped_in,
        schedule.groups,
        schedule.n_chunks,
        schedule.n_slots,
        schedule.root,
        schedule.n_participants,
    )
    width = buffer.shape[-1]
    rows = buffer.reshape(-1, width)  # float32 values on the accumulation grid
    flag_rows = flags.reshape(-1, width)
    filled = filled.reshape(-1)
    for k, src, dst, reduce in step_rows(schedule, filled):
        values = rows[src]  # every read happens before any write
        carried = flag_rows[src]
        if quantize == "per_hop":
            values, wire = _round_fp8(values, f)
            carried = carried | wire
        if sent is not None:
            sent.append((k, np.asarray(values, dtype=np.float64).copy()))
        copy = ~reduce
        if copy.any():
            rows[dst[copy]] = values[copy]
            flag_rows[dst[copy]] = carried[copy]
        if reduce.any():
            _reduce_into(
                rows, flag_rows, dst[reduce], values[reduce], carried[reduce], f, accumulate
            )
        filled[dst] = True
    out = spec.take_outputs(buffer, schedule.groups, schedule.n_chunks)
    out_flags = spec.take_outputs(flags, schedule.groups, schedule.n_chunks)
    return out, out_flags


def _reduce_into(rows, flag_rows, dst, values, carried, f, accumulate):
    """rows[dst] += values, rounded to the accumulation precision after every addition; when
    several transfers of a step target one slot they are added one after another, in the
    order the step lists them."""
    order = np.argsort(dst, kind="stable")
    sorted_dst = dst[order]
    starts = np.r_[True, sorted_dst[1:] != sorted_dst[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(dst.size), 0))
    occurrence = np.empty(dst.size, np.int64)
    occurrence[order] = np.arange(dst.size) - group_start
    for turn in range(int(occurrence.max()) + 1):
        pick = occurrence == turn
        d = dst[pick]
        total = rows[d] + values[pick]  # float32 addition
        clipped = flag_rows[d] | carried[pick]
        if accumulate == "bf16":
            total = _round_bf16(total)
        elif accumulate == "fp8":
            total, over = _round_fp8(rows[d].astype(np.float64) + values[pick], f)
            clipped = clipped | over
        rows[d] = total
        flag_rows[d] = clipped


# ----------------------------------------------------------------------------- cost


def wire_bytes(n_elements, dtype):
    """Bytes of ``n_elements`` elements of ``dtype`` on the wire: "fp8" 1, "bf16"/"fp16" 2,
    "fp32" 4 per element (the scale an FP8 tensor carries, 4 bytes per tensor, left out)."""
    n = integer(n_elements, "n_elements", minimum=0)
    if not isinstance(dtype, str) or dtype not in WIRE_BYTES:
        raise CollectivesError(
            f"dtype must be one of {', '.join(map(repr, WIRE_BYTES))}, got {dtype!r}"
        )
    return n * WIRE_BYTES[dtype]


def all_reduce_times(
    n_elements, topology, schedule=None, dtypes=("fp8", "bf16", "fp32"), **preset_options
):
    """The same all-reduce of ``n_elements`` gradient elements costed with each element type.

    ``topology``: a :class:`~collectives.Topology`, or a hardware preset name such as
    ``"dgx-h100"`` (built with ``cl.hardware.preset(name, **preset_options)``).
    ``schedule``: an all-reduce over the topology's ranks (default: a ring all-reduce over
    all of them). Returns ``{dtype: Timing}`` from :func:`collectives.time` with ``nbytes =
    wire_bytes(n_elements, dtype)``: the model's times scale with bytes, so FP8 takes a
    quarter of FP32's bandwidth term and the same latency term.
    """
    from ..algorithms import ring_all_reduce
    from ..cost import time
    from ..hardware import preset
    from ..topology import Topology

    if isinstance(topology, str):
        topology = preset(topology, **preset_options)
    elif preset_options:
        raise CollectivesError(
            "preset options (" + ", ".join(sorted(preset_options)) + ") are for a preset "
            "name; a Topology is already built"
        )
    if not isinstance(topology, Topology):
        raise CollectivesError(
            f"topology must be a collectives Topology or a preset name, got "
            f"{type(topology).__name__}"
        )
    if schedule is None:
        schedule = ring_all_reduce(topology.n_ranks)
    schedule = schedule_arg(schedule)
    if schedule.collective != "all_reduce":
        raise CollectivesError(
            f"all_reduce_times costs an all_reduce, got {schedule.name!r} ({schedule.collective})"
        )
    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    try:
        dtypes = tuple(dtypes)
    except TypeError:
        raise CollectivesError(
            f"dtypes must be a list of names such as 'fp8', got {dtypes!r}"
        ) from None
    if not dtypes:
        raise CollectivesError("dtypes must name at least one element type")
    return {d: time(schedule, topology, wire_bytes(n_elements, d)) for d in dtypes}
