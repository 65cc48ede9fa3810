"""FP8 for collective communication: formats, scaling recipes, FP8 collectives, memory.

A subpackage with one concern per module (taught in the FP8 chapter):

``formats``
    the 8-bit formats bit-exactly: :func:`encode`, :func:`decode`, :func:`quantize`,
    :data:`FORMATS`, :func:`max_value`, Transformer Engine's per-tensor scale
    (:func:`scale_for`) and the MXFP8 block scale (:func:`mx_block_scale`).
``scaling``
    the recipes: TE's current and delayed scaling (:func:`current_scale`,
    :class:`DelayedScaling`, :func:`delayed_scales`), the amax MAX all-reduce over a Schedule
    (:func:`amax_all_reduce`), scaled casts, MXFP8 blocks and DeepSeek-V3's tiles.
``metrics``
    SNR, relative error, underflow and overflow rates.
``collective``
    FP8-LM's FP8 gradient all-reduce over any all-reduce Schedule (:func:`fp8_all_reduce`)
    and its cost in FP8, BF16 and FP32 bytes (:func:`wire_bytes`, :func:`all_reduce_times`).
``memory``
    bytes per parameter of BF16, TE FP8 and FP8-LM O1-O3 (:func:`bytes_per_parameter`,
    :func:`training_memory`).

Every public name of every module is re-exported here, so ``collectives.fp8.encode`` and
``from collectives.fp8 import fp8_all_reduce`` both work.
"""

from . import collective, formats, memory, metrics, scaling
from .collective import (AUTO_SCALING_THRESHOLD, WIRE_BYTES, AutoScaling, FP8AllReduceResult,
                         all_reduce_times, fp8_all_reduce, wire_bytes)
from .formats import (FORMATS, Format, decode, encode, max_value, mx_block_scale, quantize,
                      scale_for)
from .memory import FP8LM_GPT175B, RECIPES, bytes_per_parameter, training_memory
from .metrics import overflow_rate, relative_error, snr_db, underflow_rate
from .scaling import (DelayedScaling, amax_all_reduce, current_scale, delayed_scales,
                      dequantize_scaled, mx_dequantize, mx_quantize, quantize_scaled,
                      tile_dequantize, tile_quantize)

__all__ = (formats.__all__ + scaling.__all__ + metrics.__all__ + collective.__all__
           + memory.__all__)
