"""FP8 for collective communication: formats, scaling recipes, FP8 collectives, memory.

A subpackage with one concern per module (taught in the FP8 chapter):

``formats``
    the 8-bit formats bit-exactly: :func:`encode`, :func:`decode`, :func:`quantize`,
    :data:`FORMATS`, :func:`max_value`, Transformer Engine's per-tensor scale
    (:func:`scale_for`) and the MXFP8 block scale (:func:`mx_block_scale`).

Every public name of every module is re-exported here, so ``collectives.fp8.encode`` and
``from collectives.fp8 import encode`` work as they did when this was one module.
"""

from .formats import (FORMATS, Format, decode, encode, max_value, mx_block_scale, quantize,
                      scale_for)

__all__ = [
    "Format", "FORMATS", "encode", "decode", "quantize", "max_value",
    "scale_for", "mx_block_scale",
]
