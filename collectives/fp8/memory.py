"""Bytes per parameter of the model states in BF16, Transformer Engine FP8, FP8-LM O1-O3 and
DeepSeek-V3.

What is modelled
----------------
The model states a data-parallel rank keeps for each parameter with an Adam-style optimizer:
the working weights the forward and backward passes read, a separate master copy the
optimizer updates (where the recipe has one), the weight gradient, and Adam's first (``m``)
and second (``v``) moments. Recipes:

``"bf16"``
    Megatron-LM BF16 mixed precision, FP8-LM's baseline: BF16 weights (2), FP32 master (4),
    FP32 gradients (4: Megatron accumulates and all-reduces ``main_grad`` in FP32, FP8-LM
    section 3.2.2), FP32 ``m`` and ``v`` (4 + 4). The optimizer side is FP8-LM's Eq. (7),
    "4 + 4 + 4 + 4 = 16 bytes"; the BF16 working copy adds 2.
``"te-fp8"``
    NVIDIA Transformer Engine under Megatron-LM: FP8 only inside the GEMMs; weights,
    gradients and optimizer states as ``"bf16"`` (FP8-LM section 1: TE "retains master
    weights and gradients using high precision"): 18. TE's cached FP8 copies of the weights
    (and, on Hopper, their transposes: TE's FP8 current-scaling docs, "On Hopper, columnwise
    usage requires a physical transpose") are left out, so its model states equal BF16's
    here. MS-AMP's optimization-level table lists TE with FP32 weights and no separate
    master: 4 + 4 + 4 + 4 = 16, a deployment without the BF16 working copy (the same count
    as FP8-LM's Eq. (7), which leaves the working copy out).
``"te-fp8-params"``
    TE with FP8 primary weights (``transformer_engine.pytorch.quantized_model_init``, until
    TE 2.x ``fp8_model_init``: modules "hold only quantized copies of its parameters";
    Megatron-LM's ``--fp8-param-gather``: "Keep the compute param in fp8 ... and perform the
    param all-gather in fp8"): FP8 working weights (1) instead of BF16, the FP32 master,
    gradients and moments kept: 17. The Hopper transpose of each FP8 weight is left out
    (one more byte where it is kept).
``"fp8lm-o1"``, ``"fp8lm-o2"``, ``"fp8lm-o3"``
    FP8-LM / MS-AMP's optimization levels (FP8-LM section 2; MS-AMP's
    ``docs/user-tutorial/optimization-level.md``): O1 keeps FP16 weights with tensor
    scaling that the optimizer updates in place (no separate master), FP8 weight gradients
    (1) and FP32 Adam states (4 + 4): 11. O2 adds an FP8 ``m`` (1) and an FP16 ``v`` (2):
    FP8-LM's Eq. (8), "2 + 1 + 1 + 2 = 6 bytes". O3 adds FP8 working weights (1) beside an
    FP16 master (2): 7.
``"deepseek-v3"``
    DeepSeek-V3 (arXiv:2412.19437, section 3.3): FP8 only in the linear layers' GEMMs; the
    report keeps "the master weights (stored by the optimizer) and gradients (used for batch
    size accumulation) ... in FP32" (4 + 4) and tracks "the first and second moments in the
    AdamW optimizer" in BF16 (2 + 2). The working copy the layers read is not sized in the
    text: assumed BF16 (2), as its embedding, output head, gating, normalisation and
    attention run in BF16/FP32 and its FP8 GEMMs quantise online from higher precision. 14.

ZeRO (Rajbhandari et al., arXiv:1910.02054) over ``dp`` data-parallel ranks: stage 1 shards
the optimizer states (master, ``m``, ``v``), stage 2 also the gradients, stage 3 also the
working weights; a recipe whose working weights are the master (O1, O2) keeps them whole
until stage 3. Megatron-LM's distributed optimizer is stage 1. FP8-LM's FP8 ZeRO hands out
whole tensors instead of slices (its Alg. 1), the same bytes on average.

``n_params`` for :func:`training_memory` is what one device holds before ZeRO: divide a
model's parameters by its tensor- and pipeline-parallel degrees first (GPT-175B in FP8-LM's
Table 5: TP 8, PP 4, so 175e9 / 32 per GPU, with DP 4).

What is left out
----------------
Activations, temporary buffers, communication buckets, fragmentation and the per-tensor
scales (4 bytes per tensor): the paper's *measured* GPU memory includes them, so its GPT-175B
saving (-39% in arXiv v2's Table 5, 66.1 -> 40.3 GB; v1's abstract: -42%) is smaller than
the model-state saving computed here (-64% for TP 8, PP 4, DP 4 with ZeRO stage 1, see
:data:`FP8LM_GPT175B`). The ZeRO stage of either run is not published: stage 1 (Megatron's
distributed optimizer) is forced for the BF16 run, whose 18 bytes per parameter unsharded
would not fit in 80 GB, and assumed for the FP8 one. With stage 1 for both, what the count
leaves out is 6 GB larger in the FP8 run than in the BF16 one (23 against 17 GB per GPU);
with stage 2 for the FP8 run (gradients sharded too) it is about 10 GB larger. FP8-specific
buffers, such as the transposed FP8 weight copies Hopper's GEMMs need, may be part of it,
but the paper does not break the measurement down. TE's FP8 weight caches,
gradient-accumulation buffers and embedding tables kept in higher precision are not modelled
either.

Taught in the FP8 chapter.
"""

from types import MappingProxyType

from ..errors import CollectivesError
from ..validation import integer, number

__all__ = [
    "RECIPES",
    "bytes_per_parameter",
    "training_memory",
    "FP8LM_GPT175B",
    "FP8LM_PARALLELISM",
]

_PARTS = ("weights", "master", "grads", "m", "v")

#: bytes per parameter of each model state, before ZeRO sharding (the sources are in the
#: module docstring): weights (working copy), master (separate optimizer copy, 0 if the
#: weights are updated in place), grads, Adam's m and v
RECIPES = MappingProxyType(
    {
        "bf16": MappingProxyType({"weights": 2, "master": 4, "grads": 4, "m": 4, "v": 4}),
        "te-fp8": MappingProxyType({"weights": 2, "master": 4, "grads": 4, "m": 4, "v": 4}),
        "fp8lm-o1": MappingProxyType({"weights": 2, "master": 0, "grads": 1, "m": 4, "v": 4}),
        "fp8lm-o2": MappingProxyType({"weights": 2, "master": 0, "grads": 1, "m": 1, "v": 2}),
        "fp8lm-o3": MappingProxyType({"weights": 1, "master": 2, "grads": 1, "m": 1, "v": 2}),
        # FP8 primary weights (TE quantized_model_init, Megatron --fp8-param-gather): the BF16
        # working copy of "te-fp8" becomes FP8 (1); master, gradients and moments FP32
        "te-fp8-params": MappingProxyType({"weights": 1, "master": 4, "grads": 4, "m": 4, "v": 4}),
        # DeepSeek-V3 section 3.3: FP32 master and gradients (4 + 4), BF16 AdamW moments (2 + 2);
        # the BF16 working copy (2) is an assumption (module text)
        "deepseek-v3": MappingProxyType({"weights": 2, "master": 4, "grads": 4, "m": 2, "v": 2}),
    }
)

#: What FP8-LM reports for GPT-175B against Megatron-LM BF16 on H100 80GB (TP 8, PP 4,
#: DP 4: Table 5 of arXiv v2, whose caption reads "Here, TP, PP, and DP represent tensor,
#: pipeline, and data parallelism respectively"; the same table is MS-AMP's
#: docs/assets/gpt-performance.png). v1 (arXiv:2310.18313v1, submitted 27 Oct 2023)
#: abstract: 42% less memory, 64% faster than BF16, 17% faster than TE. v2 abstract: 39% less
#: memory, 75% faster, 37% faster than TE. The two headline numbers of v2 come from two rows
#: of its Table 5: at micro-batch 1, BF16 66.1 GB and 22.4 samples/s, FP8 40.3 GB (-39%) and
#: 27.1 samples/s (+21%); FP8 at micro-batch 4, spending the saved memory, 57.7 GB and 39.3
#: samples/s (+75%). TE at micro-batch 1: 69.6 GB (so FP8-LM holds 42% less than TE). v1's
#: table was not available to check.
FP8LM_GPT175B = MappingProxyType(
    {
        "tp": 8,
        "pp": 4,
        "dp": 4,
        "v1": MappingProxyType({"memory_saving": 0.42, "speedup": 0.64}),
        "v2": MappingProxyType(
            {
                "memory_saving": 0.39,
                "speedup": 0.75,
                "bf16_memory_gb": 66.1,
                "fp8_memory_gb": 40.3,
                "te_memory_gb": 69.6,
                "bf16_samples_per_s": 22.4,
                "fp8_samples_per_s": 27.1,
                "speedup_same_micro_batch": 0.21,
                "fp8_micro_batch_4_memory_gb": 57.7,
                "fp8_micro_batch_4_samples_per_s": 39.3,
            }
        ),
    }
)


#: The parallel layouts of FP8-LM's Table 5 (arXiv v2; the same image in MS-AMP's
#: docs/assets/gpt-performance.png): the data-parallel degree is the group size of its FP8
#: gradient reduction.
FP8LM_PARALLELISM = MappingProxyType(
    {
        "gpt-7b": MappingProxyType({"tp": 1, "pp": 1, "dp": 32}),
        "gpt-13b": MappingProxyType({"tp": 2, "pp": 1, "dp": 16}),
        "gpt-175b": MappingProxyType({"tp": 8, "pp": 4, "dp": 4}),
    }
)


def _recipe(recipe):
    if not isinstance(recipe, str) or recipe not in RECIPES:
        raise CollectivesError(
            f"recipe must be one of {', '.join(map(repr, RECIPES))}, got {recipe!r}"
        )
    return RECIPES[recipe]


def bytes_per_parameter(recipe, *, zero_stage=0, dp=1):
    """Bytes each device keeps per parameter, by model state, under ``recipe``.

    Returns a dict ``{"weights", "master", "grads", "m", "v"}`` of floats (their sum is the
    total). ``zero_stage`` (0-3) shards over ``dp`` ranks as the module text says; with
    ``zero_stage=0`` ``dp`` changes nothing. Example: ``"bf16"`` gives 2 + 4 + 4 + 4 + 4
    = 18 (FP8-LM's 16 is all but the BF16 weights); ``"fp8lm-o2"`` gives 2 + 0 + 1 + 1 + 2 = 6.
    """
    parts = dict(_recipe(recipe))
    stage = integer(zero_stage, "zero_stage", minimum=0, maximum=3)
    dp = integer(dp, "dp", minimum=1)
    sharded = set()
    if stage >= 1:
        sharded |= {"master", "m", "v"}
    if stage >= 2:
        sharded.add("grads")
    if stage >= 3:
        sharded.add("weights")
    return {k: float(parts[k]) / dp if k in sharded else float(parts[k]) for k in _PARTS}


def training_memory(n_params, recipe, *, zero_stage=0, dp=1):
    """Bytes of model states on one device: ``n_params * sum(bytes_per_parameter(...))``.

    ``n_params``: the parameters one device holds before ZeRO (a model's count divided by
    its tensor- and pipeline-parallel degrees). Activations and buffers are left out (see
    the module text).
    """
    n = number(n_params, "n_params")
    return n * sum(bytes_per_parameter(recipe, zero_stage=zero_stage, dp=dp).values())
