"""A parallelism layout: how many ways each parallelism splits the work, laid out as a mesh.

Axes (``Layout(dp=, fsdp=, tp=, pp=, ep=, cp=)``):

* ``tp``: tensor parallelism (Megatron-style: each block's matrices split over ``tp``
  ranks), optionally with ``sequence_parallel`` (norms and dropout split over the sequence);
* ``cp``: context parallelism (the sequence split over ``cp`` ranks; keys and values
  all-gathered, as Llama 3 trains long contexts);
* ``pp``: pipeline parallelism (``layers / pp`` consecutive blocks per stage,
  ``micro_batches`` per step, 1F1B); ``uneven_stages=True`` allows ``pp`` not dividing
  the layers, the busiest stage holding ``ceil(layers / pp)`` (Llama 3 405B trained its
  126 layers on 16 stages, arXiv 2407.21783 table 4);
* ``ep``: expert parallelism (the routed experts split over ``ep`` ranks, tokens exchanged
  with all-to-alls). Expert-parallel ranks also split the batch, as in Megatron-Core and
  DeepSpeed-MoE, so the dense layers are data-parallel over ``dp x fsdp x ep``;
* ``fsdp``: fully sharded data parallelism (weights, gradients and optimizer states
  sharded, weights all-gathered before use: ZeRO stage 3 over this axis);
* ``dp``: replicated data parallelism, with ZeRO ``zero_stage`` 0-3 over it (1: optimizer
  states sharded, gradients reduce-scattered and weights all-gathered after the update, as
  Megatron's distributed optimizer; 3: as ``fsdp``).

The device count is ``dp x fsdp x ep x tp x pp x cp``. ``order`` lists the mesh axes
outermost first; the default ``("dp", "fsdp", "pp", "ep", "cp", "tp")`` puts ``tp``
innermost, so that on a GPU cluster (ranks numbered node by node) a tensor-parallel group
of up to 8 shares a node, and data parallelism is outermost, the order Llama 3 chose
([TP, CP, PP, DP] from the inside out). Mesh rank r sits on device r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..errors import LayoutError
from ..mesh import Mesh
from ..validation import flag, integer

__all__ = ["Layout", "LayoutError", "AXES", "DEFAULT_ORDER"]

AXES = ("dp", "fsdp", "ep", "tp", "pp", "cp")
DEFAULT_ORDER = ("dp", "fsdp", "pp", "ep", "cp", "tp")

# LayoutError (a layout that does not fit) lives in collectives.errors; it is re-exported here
# and from collectives.plan, its old homes


@dataclass(frozen=True)
class Layout:
    """Parallelism sizes and options (see the module text for their meaning)."""

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1
    zero_stage: int = 0
    sequence_parallel: bool = False
    micro_batches: int = 1
    order: Optional[Sequence[str]] = field(default=None)
    uneven_stages: bool = False

    def __post_init__(self):
        for key in AXES + ("micro_batches",):
            object.__setattr__(self, key, integer(getattr(self, key), key, minimum=1,
                                                  error=LayoutError))
        object.__setattr__(self, "zero_stage", integer(self.zero_stage, "zero_stage",
                                                       minimum=0, maximum=3, error=LayoutError))
        object.__setattr__(self, "uneven_stages",
                           flag(self.uneven_stages, "uneven_stages", error=LayoutError))
        object.__setattr__(self, "sequence_parallel",
                           flag(self.sequence_parallel, "sequence_parallel", error=LayoutError))
        order = DEFAULT_ORDER if self.order is None else self.order
        if not isinstance(order, (tuple, list)) or sorted(map(str, order)) != sorted(AXES):
            raise LayoutError(f"order must name each of {', '.join(AXES)} once (outermost "
                              f"first), got {self.order!r}")
        object.__setattr__(self, "order", tuple(order))

    @property
    def devices(self) -> int:
        """``dp x fsdp x ep x tp x pp x cp``."""
        return math.prod(getattr(self, a) for a in AXES)

    @property
    def data_parallel(self) -> int:
        """Ranks that split the batch: ``dp x fsdp x ep``."""
        return self.dp * self.fsdp * self.ep

    def layers_per_stage(self, model) -> int:
        """Blocks on the busiest pipeline stage: ``ceil(layers / pp)``."""
        return -(-model.layers // self.pp)

    def sizes(self) -> dict[str, int]:
        return {a: getattr(self, a) for a in self.order}

    def mesh(self) -> Mesh:
        """The named device mesh, axes in :attr:`order` (size-1 axes included)."""
        return Mesh(self.sizes())

    def check(self, model, n_devices: int) -> None:
        """Raise :class:`LayoutError` naming what does not fit ``model`` on ``n_devices``."""
        if self.devices != n_devices:
            raise LayoutError(
                f"dp x fsdp x ep x tp x pp x cp = {self.dp} x {self.fsdp} x {self.ep} x "
                f"{self.tp} x {self.pp} x {self.cp} = {self.devices} devices, but the "
                f"cluster has {n_devices}")
        if model.heads % self.tp:
            raise LayoutError(f"tp = {self.tp} must divide the {model.heads} attention heads "
                              f"of {model.name}")
        if model.layers % self.pp and not self.uneven_stages:
            raise LayoutError(f"pp = {self.pp} must divide the {model.layers} layers of "
                              f"{model.name} (or pass uneven_stages=True: the busiest stage "
                              f"then holds {-(-model.layers // self.pp)})")
        if self.ep > 1 and not model.is_moe:
            raise LayoutError(f"ep = {self.ep} needs a mixture-of-experts model; {model.name} "
                              "is dense")
        if model.experts % self.ep:
            raise LayoutError(f"ep = {self.ep} must divide the {model.experts} experts of "
                              f"{model.name}")

    def __repr__(self):
        parts = [f"{a}={getattr(self, a)}" for a in self.order if getattr(self, a) > 1]
        extra = []
        if self.zero_stage:
            extra.append(f"ZeRO {self.zero_stage}")
        if self.sequence_parallel:
            extra.append("sequence parallel")
        if self.micro_batches > 1:
            extra.append(f"{self.micro_batches} micro-batches")
        return f"Layout({', '.join(parts) or 'one device'}{'; ' if extra else ''}" \
               f"{', '.join(extra)})"
