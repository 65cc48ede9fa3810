"""A parallelism layout: how many ways each parallelism splits the work, laid out as a mesh.

Axes (``Layout(dp=, fsdp=, tp=, pp=, ep=, cp=)``):

* ``tp``: tensor parallelism (Megatron-style: each block's matrices split over ``tp``
  ranks), with ``sequence_parallel`` (norms and dropout split over the sequence,
  Korthikanti et al. 2022) **on by default whenever tp > 1**, as Megatron-LM users run it
  (its parallelism guide, docs/user-guide/parallelism-guide.md: "Always enable when using
  TP"; with tp = 1 Megatron switches it off, megatron/training/arguments.py, and so does
  the planner). ``sequence_parallel=False`` plans plain Megatron TP. ``tp_overlap``:
  the tensor-parallel all-gathers and reduce-scatters overlapped with the GEMMs that
  need them (Megatron's ``--tp-comm-overlap``, Transformer Engine's userbuffers), which
  needs sequence parallelism ("Tensor parallel communication/GEMM overlap can happen only
  when sequence parallelism is enabled", arguments.py);
* ``cp``: context parallelism (the sequence split over ``cp`` ranks; keys and values
  all-gathered, as Llama 3 trains long contexts);
* ``pp``: pipeline parallelism (``layers / pp`` consecutive blocks per stage,
  ``micro_batches`` per step, 1F1B); ``virtual_stages`` = v > 1 is Megatron's interleaved
  1F1B (``--num-layers-per-virtual-pipeline-stage``: each stage holds v chunks of
  ``layers / (pp v)`` blocks; Narayanan et al. 2021, arXiv 2104.04473, section 2.2.2),
  which needs ``micro_batches`` a multiple of ``pp`` (Megatron's schedule runs them in
  groups of ``pp`` by default and refuses a last group of fewer,
  megatron/core/pipeline_parallel/schedules.py);
  ``uneven_stages=True`` allows ``pp`` not dividing the layers, the busiest stage holding
  ``ceil(layers / pp)`` (Llama 3 405B trained its 126 layers on 16 stages, arXiv
  2407.21783 table 4);
* ``ep``: expert parallelism (the routed experts split over ``ep`` ranks, tokens exchanged
  with all-to-alls). Expert-parallel ranks also split the batch, as in Megatron-Core and
  DeepSpeed-MoE, so the dense layers are data-parallel over ``dp x fsdp x ep``;
* ``fsdp``: fully sharded data parallelism (weights, gradients and optimizer states
  sharded, weights all-gathered before use: ZeRO stage 3 over this axis);
* ``dp``: replicated data parallelism, with ZeRO ``zero_stage`` 0-3 over it (1: optimizer
  states sharded, gradients reduce-scattered and weights all-gathered after the update, as
  Megatron's distributed optimizer; 2: gradients sharded too, so they are reduce-scattered
  after every micro-batch, as Megatron-FSDP's ZeRO-2 strategy ``optim_grads`` does: "Gradient
  reduce-scatter is overlapped with backward compute and accumulated during every backward
  pass", docs/user-guide/features/megatron_fsdp.md; 3: as ``fsdp``). **ZeRO 2 with pipeline
  parallelism** is accepted and planned the same way, with a note naming who runs it
  (:data:`ZERO2_WITH_PP`): DeepSpeed's pipeline engine refuses it ("ZeRO-2 and ZeRO-3 are
  incompatible with pipeline parallelism", deepspeed/runtime/pipe/engine.py) and
  Megatron-LM's distributed optimizer is ZeRO 1, but Llama 3 trained with PP 16 and an FSDP
  that "shards optimizer states and gradients" (arXiv 2407.21783, section 3.3.2), and
  torchtitan combines FSDP with pipeline parallelism (torchtitan/distributed/fsdp.py: "For
  PP, by default do not reshard after forward").

The device count is ``dp x fsdp x ep x tp x pp x cp``. ``order`` lists the mesh axes
outermost first; the default ``("dp", "fsdp", "pp", "ep", "cp", "tp")`` puts ``tp``
innermost, so that on a GPU cluster (ranks numbered node by node) a tensor-parallel group
of up to 8 shares a node, and data parallelism is outermost, the order Llama 3 chose
([TP, CP, PP, DP] from the inside out). Mesh rank r sits on device r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence, cast

from ..errors import LayoutError
from ..mesh import Mesh
from ..validation import flag, integer

__all__ = ["Layout", "LayoutError", "AXES", "DEFAULT_ORDER", "ZERO2_WITH_PP"]

AXES = ("dp", "fsdp", "ep", "tp", "pp", "cp")
DEFAULT_ORDER = ("dp", "fsdp", "pp", "ep", "cp", "tp")
#: the note a plan of ZeRO stage 2 with pipeline parallelism carries: which frameworks run it
ZERO2_WITH_PP = (
    "ZeRO 2 with pipeline parallelism: DeepSpeed's pipeline engine refuses it (\"ZeRO-2 and "
    'ZeRO-3 are incompatible with pipeline parallelism", deepspeed/runtime/pipe/engine.py) '
    "and Megatron-LM's distributed optimizer shards only the optimizer states (ZeRO 1); "
    "Llama 3's FSDP sharded gradients with PP 16 (arXiv 2407.21783, section 3.3.2) and "
    "torchtitan runs FSDP with PP. Planned as ZeRO 2: a reduce-scatter every micro-batch "
    "(PyTorch's pipeline schedules, which torchtitan uses, instead keep the gradients "
    "unsharded and reduce them once after the last micro-batch, "
    "torch/distributed/pipelining/stage.py)"
)

# LayoutError (a layout that does not fit) lives in collectives.errors; it is re-exported here
# and from collectives.plan, its old homes


@dataclass(frozen=True)
class Layout:
    """Parallelism sizes and options (see the module text for their meaning).
    ``sequence_parallel=None`` (the default) means on when ``tp > 1``."""

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1
    zero_stage: int = 0
    sequence_parallel: Optional[bool] = None
    micro_batches: int = 1
    order: Optional[Sequence[str]] = field(default=None)
    uneven_stages: bool = False
    virtual_stages: int = 1
    tp_overlap: bool = False
    _sp_default: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self):
        for key in AXES + ("micro_batches", "virtual_stages"):
            object.__setattr__(
                self, key, integer(getattr(self, key), key, minimum=1, error=LayoutError)
            )
        object.__setattr__(
            self,
            "zero_stage",
            integer(self.zero_stage, "zero_stage", minimum=0, maximum=3, error=LayoutError),
        )
        for key in ("uneven_stages", "tp_overlap"):
            object.__setattr__(self, key, flag(getattr(self, key), key, error=LayoutError))
        sp = self.sequence_parallel
        object.__setattr__(self, "_sp_default", sp is None)
        sp = self.tp > 1 if sp is None else flag(sp, "sequence_parallel", error=LayoutError)
        # Megatron-LM turns sequence parallelism off when tp = 1 (nothing to split over)
        object.__setattr__(self, "sequence_parallel", sp and self.tp > 1)
        if self.tp_overlap and not self.sequence_parallel:
            raise LayoutError(
                "tp_overlap needs sequence parallelism with tp > 1: Megatron-LM "
                'asserts "Tensor parallel communication/GEMM overlap can '
                'happen only when sequence parallelism is enabled"'
            )
        if self.virtual_stages > 1:
            if self.pp == 1:
                raise LayoutError(
                    f"virtual_stages = {self.virtual_stages} needs pipeline "
                    "parallelism (pp > 1): the interleaved schedule splits "
                    "each stage's blocks into model chunks"
                )
            if self.micro_batches % self.pp:
                raise LayoutError(
                    f"interleaved 1F1B (virtual_stages = {self.virtual_stages}) needs "
                    f"micro_batches a multiple of pp = {self.pp}, got {self.micro_batches}: "
                    "Megatron-LM's schedule runs micro-batches in groups of pp (its default "
                    "microbatch_group_size_per_vp_stage) and refuses a last group of fewer "
                    "(megatron/core/pipeline_parallel/schedules.py)"
                )
        order = DEFAULT_ORDER if self.order is None else self.order
        if not isinstance(order, (tuple, list)) or sorted(map(str, order)) != sorted(AXES):
            raise LayoutError(
                f"order must name each of {', '.join(AXES)} once (outermost "
                f"first), got {self.order!r}"
            )
        object.__setattr__(self, "order", tuple(order))

    @property
    def sequence_parallel_default(self) -> bool:
        """Whether ``sequence_parallel`` was left to its default (on when ``tp > 1``), not
        given: :func:`collectives.plan.inference` plans all-reduces then."""
        return self._sp_default

    @property
    def devices(self) -> int:
        """``dp x fsdp x ep x tp x pp x cp``."""
        return math.prod(getattr(self, a) for a in AXES)

    @property
    def data_parallel(self) -> int:
        """Ranks that split the batch: ``dp x fsdp x ep``."""
        return self.dp * self.fsdp * self.ep

    @property
    def model_parallel(self) -> int:
        """Ranks that split one replica's weights of a dense block: ``tp x pp``."""
        return self.tp * self.pp

    def layers_per_stage(self, model) -> int:
        """Blocks on the busiest pipeline stage: ``ceil(layers / pp)``."""
        return -(-model.layers // self.pp)

    @property
    def bubble_fraction(self) -> float:
        """The pipeline bubble as a fraction of the compute: ``(pp - 1) / (v m)``, with v
        the virtual stages (1F1B: v = 1; Narayanan et al. 2021, section 2.2.2)."""
        return (self.pp - 1) / (self.virtual_stages * self.micro_batches)

    def sizes(self) -> dict[str, int]:
        order = cast(Sequence[str], self.order)  # a tuple once built (__post_init__)
        return {a: getattr(self, a) for a in order}

    def mesh(self) -> Mesh:
        """The named device mesh, axes in :attr:`order` (size-1 axes included)."""
        return Mesh(self.sizes())

    def check(self, model, n_devices: int) -> None:
        """Raise :class:`LayoutError` naming what does not fit ``model`` on ``n_devices``."""
        if self.devices != n_devices:
            raise LayoutError(
                f"dp x fsdp x ep x tp x pp x cp = {self.dp} x {self.fsdp} x {self.ep} x "
                f"{self.tp} x {self.pp} x {self.cp} = {self.devices} devices, but the "
                f"cluster has {n_devices}"
            )
        if model.heads % self.tp:
            raise LayoutError(
                f"tp = {self.tp} must divide the {model.heads} attention heads of {model.name}"
            )
        if model.layers % self.pp and not self.uneven_stages:
            raise LayoutError(
                f"pp = {self.pp} must divide the {model.layers} layers of "
                f"{model.name} (or pass uneven_stages=True: the busiest stage "
                f"then holds {-(-model.layers // self.pp)})"
            )
        if self.layers_per_stage(model) % self.virtual_stages:
            raise LayoutError(
                f"virtual_stages = {self.virtual_stages} must divide the "
                f"{self.layers_per_stage(model)} blocks of a pipeline stage of {model.name} "
                "(each model chunk holds layers / (pp x virtual_stages) blocks)"
            )
        if self.ep > 1 and not model.is_moe:
            raise LayoutError(
                f"ep = {self.ep} needs a mixture-of-experts model; {model.name} is dense"
            )
        if model.experts % self.ep:
            raise LayoutError(
                f"ep = {self.ep} must divide the {model.experts} experts of {model.name}"
            )

    def __repr__(self):
        parts = [f"{a}={getattr(self, a)}" for a in self.order if getattr(self, a) > 1]
        extra = []
        if self.zero_stage:
            extra.append(f"ZeRO {self.zero_stage}")
        if self.sequence_parallel:
            extra.append("sequence parallel")
        if self.tp_overlap:
            extra.append("TP overlap")
        if self.micro_batches > 1:
            extra.append(f"{self.micro_batches} micro-batches")
        if self.virtual_stages > 1:
            extra.append(f"interleaved x{self.virtual_stages}")
        return (
            f"Layout({', '.join(parts) or 'one device'}{'; ' if extra else ''}{', '.join(extra)})"
        )
