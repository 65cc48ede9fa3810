"""FP8 for collective communication: formats, scaling recipes, FP8 collectives, memory.

A subpackage with one concern per module (taught in the FP8 chapter):

``formats``
    the 8-bit formats bit-exactly: :func:`encode`, :func:`decode`, :func:`quantize`,
    :data:`FORMATS` (:func:`get_format` looks one up, :data:`ELEMENT_FORMATS` and
    :data:`MX_ELEMENT_FORMATS` name the element types, :data:`LIBRARY_NAMES` their names in
    ml_dtypes and PyTorch), :func:`max_value`, Transformer Engine's per-tensor scale
    (:func:`scale_for`, :func:`scale_from_amax`) and the MXFP8 block scale
    (:func:`mx_block_scale`).
``scaling``
    the recipes: TE's current and delayed scaling (:func:`current_scale`,
    :class:`DelayedScaling`, :func:`delayed_scales`), the amax MAX all-reduce over a Schedule
    (:func:`amax_all_reduce`), scaled casts, MXFP8 blocks and DeepSeek-V3's tiles.
``metrics``
    SNR, relative error, underflow and overflow rates.
``collective``
    the FP8 gradient all-reduce over any all-reduce Schedule (:func:`fp8_all_reduce`: the
    course's cast once, sum wide; :func:`msamp_all_reduce`: MS-AMP's FP8 datatype
    all-reduce, every hop adding in FP16 and narrowing to E4M3) and its cost in FP8, BF16
    and FP32 bytes (:func:`wire_bytes`, :func:`all_reduce_times`).
``gather``
    the FP8 all-gather of one tensor's shards (FP8 weights, sequence-parallel activations)
    with its scale exchange (:func:`fp8_all_gather`, :func:`fp8_all_gather_cost`).
``memory``
    bytes per parameter of BF16, TE FP8 (with and without FP8 primary weights), FP8-LM
    O1-O3 and DeepSeek-V3 (:func:`bytes_per_parameter`, :func:`training_memory`).

Every public name of these modules is re-exported here, so ``collectives.fp8.encode`` and
``from collectives.fp8 import fp8_all_reduce`` both work; ``checks`` holds the argument checks
they share.
"""

from .collective import (
    AUTO_SCALING_THRESHOLD,
    MSAMP_OPTIONS,
    WIRE_BYTES,
    AutoScaling,
    FP8AllReduceResult,
    all_reduce_times,
    fp8_all_reduce,
    msamp_all_reduce,
    wire_bytes,
)
from .formats import (
    ELEMENT_FORMATS,
    FORMATS,
    LIBRARY_NAMES,
    MX_ELEMENT_FORMATS,
    Format,
    decode,
    encode,
    get_format,
    max_value,
    mx_block_scale,
    quantize,
    scale_for,
    scale_from_amax,
)
from .gather import (
    AMAX_BYTES,
    FP8AllGatherCost,
    FP8AllGatherResult,
    fp8_all_gather,
    fp8_all_gather_cost,
)
from .memory import FP8LM_GPT175B, FP8LM_PARALLELISM, RECIPES, bytes_per_parameter, training_memory
from .metrics import overflow_rate, relative_error, snr_db, underflow_rate
from .scaling import (
    DelayedScaling,
    amax_all_reduce,
    current_scale,
    delayed_scales,
    dequantize_scaled,
    mx_dequantize,
    mx_quantize,
    quantize_scaled,
    tile_dequantize,
    tile_quantize,
)

# every public name of the modules above (tests/package/fp8 checks that none is missing)
__all__ = [
    # formats
    "Format",
    "FORMATS",
    "ELEMENT_FORMATS",
    "MX_ELEMENT_FORMATS",
    "LIBRARY_NAMES",
    "get_format",
    "encode",
    "decode",
    "quantize",
    "max_value",
    "scale_for",
    "scale_from_amax",
    "mx_block_scale",
    # scaling
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
    # metrics
    "snr_db",
    "relative_error",
    "underflow_rate",
    "overflow_rate",
    # collective
    "FP8AllReduceResult",
    "AutoScaling",
    "fp8_all_reduce",
    "msamp_all_reduce",
    "wire_bytes",
    "all_reduce_times",
    "WIRE_BYTES",
    "AUTO_SCALING_THRESHOLD",
    "MSAMP_OPTIONS",
    # gather
    "FP8AllGatherResult",
    "FP8AllGatherCost",
    "fp8_all_gather",
    "fp8_all_gather_cost",
    "AMAX_BYTES",
    # memory
    "RECIPES",
    "bytes_per_parameter",
    "training_memory",
    "FP8LM_GPT175B",
    "FP8LM_PARALLELISM",
]
