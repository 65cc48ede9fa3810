"""The FP8 all-gather of one tensor's shards: FP8 primary weights gathered for the forward pass,
and sequence-parallel activations gathered before a tensor-parallel GEMM; its numbers and its
cost.

What is modelled
----------------
This is the FP8 communication most deployed today: Transformer Engine keeps FP8 weights with
``quantized_model_init`` (``fp8_model_init`` before TE 2.x) and all-gathers FP8 activations
for sequence parallelism ("For sequence parallelism, TE supports all-gather of quantized
tensors", its performance-considerations docs); Megatron-LM's ``--fp8-param-gather`` ("Keep
the compute param in fp8 ... and perform the param all-gather in fp8") casts each data-parallel
rank's shard of the FP32 master weights to FP8 and all-gathers it
(``megatron/core/fp8_utils.py``); FSDP2 with torchao's float8 ("cast high precision weights
(1/N on each rank) into float8, and perform float8 all-gather", torchtitan's
``docs/float8.md``).

:func:`fp8_all_gather`: each rank holds a shard of one tensor (a row of ``shards``). With
``scales="shared"`` the ranks first MAX-all-reduce their amaxes
(:func:`~collectives.fp8.amax_all_reduce`) and cast with the one scale ``FP8_MAX / amax``
(TE's formula); the FP8 codes are all-gathered by ``schedule`` (copies only: no rounding on
the way) and decoded with that scale. The gathered tensor is then exactly the single-device
cast of the whole tensor, which a per-tensor FP8 GEMM needs (one scale per operand: TE's
``Float8Tensor``, ``torch._scaled_mm`` with tensor-wise scales). TE's docs: "All nodes use
this synchronized amax to compute identical scaling factors, enabling quantized all-gather".
With ``scales="local"`` every rank casts with its own scale: each shard is cast well, but the
gathered tensor carries one scale per shard, which a per-tensor GEMM cannot take
(:attr:`FP8AllGatherResult.single_scale` is False).

:func:`fp8_all_gather_cost`: the same all-gather in BF16 and in FP8 with
:func:`collectives.time`, plus the scale exchange: a MAX all-reduce of ``n_tensors`` float32
amaxes. Where it sits decides what it costs:

``amax="per_gather"``
    before every gather, on its critical path: TE's current scaling with sequence
    parallelism (the input quantizer of a column-parallel ``Linear`` reduces its amax over
    the tensor-parallel group, ``transformer_engine/pytorch/module/linear.py``, and waits for
    it before casting, ``csrc/quantizer.cpp``: ``allreduce(tensors, opts)->wait()``), and
    FSDP2 float8 without precomputed scales ("many small all-reduce for each parameter").
``amax="per_step"``
    once per training step for all tensors, not in front of each gather: TE's delayed scaling
    (amaxes "reduced at the end of each training step", its ``autocast`` docstring),
    Megatron's ``--fp8-param-gather`` (one MAX all-reduce of all parameters' amaxes over the
    data-parallel group per step: after the cast with delayed scaling, before it with current
    scaling; TE's ``cast_master_weights_to_fp8``, which ``fp8_utils.py`` calls), FSDP2 with
    ``precompute_float8_dynamic_scale_for_fsdp`` ("a single all-reduce for all
    parameters"). Its time is reported, not added to the gather's.

What is left out
----------------
Block-scaled recipes (MXFP8, DeepSeek-V3's 128x128 blocks: each block's scale travels with
it, 1/32 or 4/16384 of a byte per element more, and no amax exchange is needed), the
transposed copy Hopper needs for the backward GEMM (TE gathers row-wise data and transposes
it), the 4-byte scale sent with each tensor, cast kernels' time, and overlap of the gather with
compute (FSDP and Megatron prefetch the next layer's weights).

Taught in the FP8 chapter.
"""

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..errors import CollectivesError
from ..schedule import schedule_arg
from ..validation import integer
from .checks import real_array
from .collective import wire_bytes
from .formats import ELEMENT_FORMATS, decode, encode, get_format, scale_from_amax
from .metrics import snr_db
from .scaling import amax_all_reduce

__all__ = [
    "FP8AllGatherResult",
    "FP8AllGatherCost",
    "fp8_all_gather",
    "fp8_all_gather_cost",
    "AMAX_BYTES",
]

#: bytes of one amax in the scale exchange (TE and Megatron reduce float32 amaxes)
AMAX_BYTES = 4

_SCALES = ("shared", "local")
_AMAX = ("per_gather", "per_step")


@dataclass(frozen=True, eq=False)
class FP8AllGatherResult:
    """What :func:`fp8_all_gather` computed.

    ``values``: (n_ranks, total) float32, the gathered tensor each rank decodes.
    ``codes``: (n_ranks, total) uint8, the FP8 codes it holds. ``shard_scales``: the scale
    each shard was cast with (one per shard, in gathered order). ``single_scale``: whether
    every shard of the gathered tensor has the same scale (what a per-tensor FP8 GEMM needs).
    ``matches_single_device``: whether ``values`` equal the cast of the whole tensor, on one
    device, with the group's scale. ``reference``: the exact gathered tensor (float32);
    ``snr_db``: of ``values`` against it.
    """

    values: np.ndarray
    codes: np.ndarray
    shard_scales: np.ndarray
    single_scale: bool
    matches_single_device: bool
    reference: np.ndarray
    snr_db: float
    fmt: str
    scales: str
    schedule_name: str

    def __repr__(self):
        return (
            f"FP8AllGatherResult({self.schedule_name}, {self.values.shape[0]} ranks x "
            f"{self.values.shape[1]}, fmt={self.fmt!r}, scales={self.scales!r}: single scale "
            f"{self.single_scale}, matches one device {self.matches_single_device}, SNR "
            f"{self.snr_db:.2f} dB)"
        )


def _option(value, name, options):
    if not isinstance(value, str) or value not in options:
        raise CollectivesError(
            f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}"
        )
    return value


def _all_gather_schedule(schedule, n_ranks, what):
    from ..algorithms import ring_all_gather

    if schedule is None:
        return ring_all_gather(n_ranks)
    schedule = schedule_arg(schedule)
    if schedule.collective != "all_gather":
        raise CollectivesError(
            f"{what} needs an all_gather schedule, got {schedule.name!r} ({schedule.collective})"
        )
    if schedule.n_ranks != n_ranks:
        raise CollectivesError(
            f"{what}: the schedule {schedule.name!r} has {schedule.n_ranks} ranks but "
            f"{n_ranks} were given"
        )
    return schedule


def _amax_schedule(schedule):
    """A ring MAX all-reduce over the same groups as ``schedule``."""
    from ..algorithms import ring_all_reduce
    from ..transforms import grouped

    if len(schedule.groups) == 1:
        return ring_all_reduce(schedule.n_ranks)
    return grouped(ring_all_reduce(schedule.group_size), schedule.groups.tolist())


def fp8_all_gather(shards, schedule=None, *, fmt="e4m3", scales="shared"):
    """All-gather one tensor's shards in FP8; returns :class:`FP8AllGatherResult`.

    ``shards``: (n_ranks, shard_size) real array, rank ``r``'s shard in row ``r`` (finite).
    ``schedule``: any all-gather :class:`~collectives.Schedule` over n_ranks, over groups too
    (each group gathers its own tensor); default
    :func:`~collectives.algorithms.ring_all_gather`; a shard that does not split into the
    schedule's chunks is padded with zeros. ``fmt``: an FP8 element format.
    ``scales``: ``"shared"`` (the MAX all-reduce of the amaxes first, one scale) or
    ``"local"`` (each rank's own scale). Casts round to nearest-even and saturate.
    """
    from ..replay import simulate

    x = real_array(shards, "fp8_all_gather (shards)")
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise CollectivesError(
            "fp8_all_gather takes shards of shape (n_ranks, shard_size): one shard per rank, "
            f"got shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise CollectivesError("fp8_all_gather: shards must be finite (no NaN or Inf)")
    f = get_format(fmt, allowed=ELEMENT_FORMATS, what="fp8_all_gather (element formats)")
    scales = _option(scales, "scales", _SCALES)
    n, size = x.shape
    schedule = _all_gather_schedule(schedule, n, "fp8_all_gather")

    amax = np.abs(x).max(axis=1).astype(np.float32)
    own = scale_from_amax(amax, f, 0.0, np.float32(1.0))
    group = scale_from_amax(
        amax_all_reduce(amax, _amax_schedule(schedule)), f, 0.0, np.float32(1.0)
    )
    used = group if scales == "shared" else own
    codes = encode(x * used.astype(np.float64)[:, None], f.name, saturate=True)
    # a shard that does not split into the schedule's chunks is padded with zero codes
    per_shard = max(1, schedule.n_chunks // schedule.group_size)
    padded = np.zeros((n, -(-size // per_shard) * per_shard), np.float32)
    padded[:, :size] = codes
    gathered = simulate(schedule, padded).reshape(n, schedule.group_size, -1)[:, :, :size]
    gathered = gathered.reshape(n, -1).astype(np.uint8)
    order = schedule.groups[schedule.group_of]  # (n, group_size) ranks
    shard_scales = used[order]  # the scale of each shard
    values = (
        (decode(gathered, f.name).reshape(n, schedule.group_size, size) / shard_scales[:, :, None])
        .reshape(n, -1)
        .astype(np.float32)
    )
    reference = x[order].reshape(n, -1).astype(np.float32)
    one_device = (
        decode(
            encode(
                reference.astype(np.float64) * group.astype(np.float64)[:, None],
                f.name,
                saturate=True,
            ),
            f.name,
        )
        / group[:, None]
    )
    return FP8AllGatherResult(
        values=values,
        codes=gathered,
        shard_scales=shard_scales,
        single_scale=bool(np.all(shard_scales == shard_scales[:, :1])),
        matches_single_device=bool(np.array_equal(values, one_device.astype(np.float32))),
        reference=reference,
        snr_db=snr_db(reference, values),
        fmt=f.name,
        scales=scales,
        schedule_name=schedule.name,
    )


@dataclass(frozen=True, eq=False)
class FP8AllGatherCost:
    """What :func:`fp8_all_gather_cost` costed.

    ``n_elements``: elements of the gathered tensor (what one rank holds afterwards);
    ``n_tensors``: how many tensors' amaxes the scale exchange carries. ``wire_bytes``:
    ``{"bf16", "fp8", "amax"}``: the bytes of the gathered buffer (nccl-tests' S) in BF16
    and FP8, and of the amax message. ``gather``: ``{"bf16", "fp8"}`` Timings of the
    all-gather. ``amax``: the Timing of the MAX all-reduce of the amaxes. ``amax_placement``:
    "per_gather" or "per_step" (module text). ``fp8_seconds``: the FP8 gather plus, per
    gather, the amax all-reduce on its path; ``saving_seconds``: BF16 minus that.
    """

    n_elements: int
    n_tensors: int
    wire_bytes: MappingProxyType
    gather: MappingProxyType
    amax: object
    amax_placement: str

    @property
    def fp8_seconds(self):
        extra = self.amax.seconds if self.amax_placement == "per_gather" else 0.0
        return self.gather["fp8"].seconds + extra

    @property
    def saving_seconds(self):
        return self.gather["bf16"].seconds - self.fp8_seconds

    def __repr__(self):
        return (
            f"FP8AllGatherCost({self.n_elements} elements, {self.n_tensors} tensors, amax "
            f"{self.amax_placement}: BF16 {self.gather['bf16'].seconds:.6g} s, FP8 "
            f"{self.fp8_seconds:.6g} s)"
        )


def fp8_all_gather_cost(
    n_elements,
    topology,
    schedule=None,
    *,
    n_tensors=1,
    amax="per_gather",
    amax_schedule=None,
    **preset_options,
):
    """An all-gather of ``n_elements`` elements in BF16 and in FP8, with the FP8 scale
    exchange; returns :class:`FP8AllGatherCost`.

    ``topology``: a :class:`~collectives.Topology` or a hardware preset name (built with
    ``cl.hardware.preset(name, **preset_options)``). ``schedule``: an all-gather over the
    topology's ranks (default: a ring over all of them). ``n_tensors``: the tensors whose
    amaxes travel in the scale exchange (one per gathered tensor with ``amax="per_gather"``;
    all of a model's with ``"per_step"``). ``amax_schedule``: the all-reduce that carries
    them (default: a ring over the same ranks).
    """
    from ..algorithms import ring_all_gather, ring_all_reduce
    from ..cost import time
    from ..hardware import preset
    from ..topology import Topology

    n = integer(n_elements, "n_elements", minimum=0)
    k = integer(n_tensors, "n_tensors", minimum=1)
    placement = _option(amax, "amax", _AMAX)
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
    schedule = _all_gather_schedule(
        ring_all_gather(topology.n_ranks) if schedule is None else schedule,
        topology.n_ranks,
        "fp8_all_gather_cost",
    )
    if amax_schedule is None:
        amax_schedule = ring_all_reduce(topology.n_ranks)
    amax_schedule = schedule_arg(amax_schedule)
    if amax_schedule.collective != "all_reduce":
        raise CollectivesError(
            f"amax_schedule must be an all_reduce schedule, got {amax_schedule.name!r} "
            f"({amax_schedule.collective})"
        )
    sizes = {"bf16": wire_bytes(n, "bf16"), "fp8": wire_bytes(n, "fp8"), "amax": k * AMAX_BYTES}
    gather = {d: time(schedule, topology, sizes[d]) for d in ("bf16", "fp8")}
    return FP8AllGatherCost(
        n_elements=n,
        n_tensors=k,
        wire_bytes=MappingProxyType(sizes),
        gather=MappingProxyType(gather),
        amax=time(amax_schedule, topology, sizes["amax"]),
        amax_placement=placement,
    )
