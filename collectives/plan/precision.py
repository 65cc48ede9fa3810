"""Precision recipes of a plan: bytes on the wire per gradient, weight and activation, and
the model-state recipe of :mod:`collectives.fp8.memory` behind each.

``"bf16"``
    BF16 weights and activations; gradients reduced in BF16 (2 bytes), as The Scaling Book
    counts data-parallel traffic and as PyTorch FSDP does with ``reduce_dtype=bfloat16``.
    Megatron-LM keeps FP32 ``main_grad`` (the memory recipe's 4 bytes) and by default
    reduces it in FP32 (unless ``--grad-reduce-in-bf16``), as torchtitan's FSDP
    (``mixed_precision_reduce = "float32"``) and Llama 3 do: pass ``grad_reduce_bytes=4``
    to plan that.
``"fp8"``
    FP8-LM's O2 (arXiv 2310.18313; :data:`collectives.fp8.memory.RECIPES` ``"fp8lm-o2"``):
    FP8 gradients and an FP8 all-reduce (1 byte), FP8 first moment, FP16 second moment;
    weights gathered in 16 bits (2 bytes). ``"fp8lm-o1"``, ``"fp8lm-o2"``, ``"fp8lm-o3"``
    and ``"te-fp8"`` name the memory recipes directly; O3 also gathers FP8 weights (1 byte,
    FP8-LM's FP8 ZeRO); ``"te-fp8"`` communicates as ``"bf16"``.

Activations cross tensor-, context-, expert- and pipeline-parallel links in BF16 (2 bytes)
in every recipe: FP8 dispatch (DeepSeek-V3) and Transformer Engine's FP8 all-gathers are
left out. The recipes do not change the matmuls' speed (compute at the chip's BF16 peak);
``training_step(compute="fp8")`` does, a what-if at the chip's dense FP8 peak
(:data:`collectives.plan.builder.FP8_PEAK`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CollectivesError

__all__ = ["Precision", "PRECISIONS", "precision"]


@dataclass(frozen=True)
class Precision:
    """``memory``: a :data:`collectives.fp8.memory.RECIPES` name; bytes per element of
    the reduced gradients, the gathered weights and the exchanged activations."""

    name: str
    memory: str
    grad_bytes: float
    weight_bytes: float
    activation_bytes: float = 2.0


PRECISIONS = {
    "bf16": Precision("bf16", "bf16", 2, 2),
    "fp8": Precision("fp8", "fp8lm-o2", 1, 2),
    "te-fp8": Precision("te-fp8", "te-fp8", 2, 2),
    "fp8lm-o1": Precision("fp8lm-o1", "fp8lm-o1", 1, 2),
    "fp8lm-o2": Precision("fp8lm-o2", "fp8lm-o2", 1, 2),
    "fp8lm-o3": Precision("fp8lm-o3", "fp8lm-o3", 1, 1),
    "te-fp8-params": Precision("te-fp8-params", "te-fp8-params", 2, 1),
}


def precision(recipe) -> Precision:
    """The :class:`Precision` named ``recipe`` (a Precision passes through)."""
    if isinstance(recipe, Precision):
        return recipe
    if not isinstance(recipe, str) or recipe not in PRECISIONS:
        raise CollectivesError(
            f"recipe must be one of {', '.join(map(repr, PRECISIONS))}, got {recipe!r}"
        )
    return PRECISIONS[recipe]
