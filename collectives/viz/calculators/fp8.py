"""The FP8 explorer: the reader types a number and sees its bits and its rounding in E4M3, E5M2
and BF16, with or without Transformer Engine's per-tensor scale, in the static book.

:func:`fp8_explorer` returns an :class:`FP8Explorer`, whose ``_repr_html_`` is one page block:
two text boxes (the value x; the tensor's amax, empty for no scale), a line naming the
scales, a table with a row per format (the bits coloured by field, sign, exponent and
mantissa, with the code as their tooltip; the stored value, the value read back, the
relative error and the two values of the format x lies between) and an inline script,
``fp8_explorer.js`` next to this module, that redraws the table as the reader types. The
script is the package's codec written again for the browser: the formats' constants come from
:data:`collectives.fp8.FORMATS` (put in the block's data by :func:`explorer_formats`), and
tests/package/viz/test_fp8_explorer.py runs it under node against :func:`explain` (the
package: :func:`collectives.fp8.quantize_scaled`, :func:`collectives.fp8.dequantize_scaled`,
:func:`collectives.fp8.scale_for`, :func:`collectives.viz.fp8.bf16_round`) and ml_dtypes on a
grid of values. No library and no network: the block works offline.

Modelled: saturating round-to-nearest-even casts (as TE's are) and TE's scale
``FP8_MAX / amax`` in float32 (margin 0). Left out: the fnuz formats, margins, delayed
scaling's amax history (chapter "The FP8 training format" covers them).
"""

from __future__ import annotations

import html
import itertools
import json
from importlib import resources
from typing import Optional, Sequence

import numpy as np

from ...errors import CollectivesError

__all__ = [
    "EXPLORER_FORMATS",
    "explorer_formats",
    "explorer_script",
    "explain",
    "FP8Explorer",
    "fp8_explorer",
]

#: the formats the explorer shows, in its order, with their names on the page
EXPLORER_FORMATS = {"e4m3": "E4M3", "e5m2": "E5M2", "bf16": "BF16"}

_ids = itertools.count()


def explorer_formats(names: Sequence[str] = ("e4m3", "e5m2")) -> dict[str, dict]:
    """The constants the explorer's script rounds with, per FP8 format, from
    :data:`collectives.fp8.FORMATS`; ``nan_out``, the pattern a NaN input gets, from the
    package's own :func:`collectives.fp8.encode`."""
    from ...fp8 import FORMATS, encode

    out = {}
    for name in names:
        if name not in ("e4m3", "e5m2"):
            raise CollectivesError(f"the explorer rounds to 'e4m3' and 'e5m2', got {name!r}")
        f = FORMATS[name]
        out[name] = {
            "exponent_bits": f.exponent_bits,
            "mantissa_bits": f.mantissa_bits,
            "bias": f.bias,
            "max": f.max,
            "max_pattern": f.max_pattern,
            "nan_patterns": list(f.nan_patterns),
            "inf_patterns": list(f.inf_patterns),
            "nan_out": int(encode(np.nan, name, saturate=True)),
        }
    return out


def explorer_script() -> str:
    """The explorer's JavaScript (``fp8_explorer.js``), as inlined in every block."""
    return resources.files(__package__).joinpath("fp8_explorer.js").read_text(encoding="utf-8")


def explain(x: float, fmt: str, amax: Optional[float] = None) -> dict:
    """What the explorer shows for ``x`` in ``fmt`` ("e4m3", "e5m2", "bf16"), computed by the
    package: ``code`` (the bit pattern), ``scale`` (TE's ``FP8_MAX / amax`` in float32, 1
    without ``amax``; always 1 for BF16), ``stored`` (the format's value of the code) and
    ``back`` (the value read back: ``stored / scale`` as TE dequantises, in float32)."""
    from ...fp8 import decode, dequantize_scaled, quantize_scaled, scale_for
    from ..fp8 import bf16_round

    x = float(x)
    if fmt == "bf16":
        value = bf16_round(np.float32(x) if np.isfinite(x) else x)
        code = int(np.asarray(value, dtype=np.float32).view(np.uint32)) >> 16
        return {"code": code, "scale": 1.0, "stored": float(value), "back": float(value)}
    if fmt not in ("e4m3", "e5m2"):
        raise CollectivesError(f"the explorer shows 'e4m3', 'e5m2' and 'bf16', got {fmt!r}")
    scale = 1.0 if amax is None else float(scale_for(amax, fmt))
    codes, scale = quantize_scaled(np.array([x]), scale, fmt)
    back = dequantize_scaled(codes, scale, fmt)
    return {
        "code": int(codes[0]),
        "scale": float(scale),
        "stored": float(decode(codes, fmt)[0]),
        "back": float(back[0]),
    }


_STYLE = (
    ".cl-fp8-explorer{margin:1em 0;font-size:0.95em}"
    ".cl-fp8-explorer label{margin-right:1em;white-space:nowrap}"
    ".cl-fp8-explorer input{width:11em;font-family:monospace}"
    ".cl-fp8-scroll{overflow-x:auto;max-width:100%}"
    ".cl-fp8-explorer table{border-collapse:collapse;margin-top:0.5em}"
    ".cl-fp8-explorer th,.cl-fp8-explorer td{padding:0.15em 0.5em;text-align:right;"
    "white-space:nowrap}"
    ".cl-fp8-explorer th:first-child{text-align:left}"
    ".cl-fp8-bits{font-family:monospace;letter-spacing:0.05em}"
    ".cl-fp8-sign{background:#f4c7b2}.cl-fp8-exponent{background:#c6e4f5}"
    ".cl-fp8-mantissa{background:#eee2b3}"
)


class FP8Explorer:
    """One explorer block (:func:`fp8_explorer`): ``value`` and ``amax`` fill the boxes when
    the page opens."""

    def __init__(self, value: float, amax: Optional[float], title: str):
        self.value = float(value)
        self.amax = None if amax is None else float(amax)
        self.title = title
        self.id = f"cl-fp8-{next(_ids)}"

    def data(self) -> dict:
        """The block's data: the formats' constants and the rows' order and names."""
        return {
            "formats": explorer_formats(),
            "order": list(EXPLORER_FORMATS),
            "labels": list(EXPLORER_FORMATS.values()),
        }

    def _repr_html_(self) -> str:
        payload = json.dumps(self.data(), separators=(",", ":")).replace("</", "<\\/")
        amax = "" if self.amax is None else repr(self.amax)
        heads = "".join(
            f'<th scope="col">{h}</th>'
            for h in ("", "bits", "stored", "read back", "error", "x lies in")
        )
        return (
            f'<div class="cl-fp8-explorer" id="{self.id}"><style>{_STYLE}</style>'
            f'<p class="cl-fp8-title">{html.escape(self.title)}</p>'
            f'<label>x <input type="text" inputmode="decimal" data-control="value" '
            f'aria-label="the number to round" value="{self.value!r}"></label>'
            f'<label>amax <input type="text" inputmode="decimal" data-control="amax" '
            f'aria-label="the tensor\'s amax, for the scale (empty: no scale)" '
            f'value="{amax}"></label>'
            f'<p class="cl-fp8-note"></p>'
            f'<div class="cl-fp8-scroll"><table><thead><tr>{heads}</tr></thead>'
            f"<tbody></tbody></table></div>"
            f'<script type="application/json" class="cl-fp8-data">{payload}</script>'
            f"<script>{explorer_script()}</script></div>"
        )


def fp8_explorer(
    value: float = float(np.pi),
    amax: Optional[float] = None,
    title: str = "Type a number: its bits and rounding in E4M3, E5M2 and BF16",
) -> FP8Explorer:
    """The explorer block, opened on ``value`` (and ``amax``, for TE's scale; None: no
    scale). Display it (the last line of a cell does)."""
    if not isinstance(value, (int, float, np.floating, np.integer)) or isinstance(value, bool):
        raise CollectivesError(f"fp8_explorer: value must be a number, got {value!r}")
    if amax is not None and not (float(amax) > 0 and np.isfinite(float(amax))):
        raise CollectivesError(f"fp8_explorer: amax must be finite and > 0, got {amax!r}")
    return FP8Explorer(value, amax, title)
