"""How a plan's verdicts move with its assumptions: :func:`sensitivity`.

A plan rests on assumptions that no model can settle for a real job: how fast the matmuls run
(``mfu``, peak by default: the kernels' efficiency, recomputation included, not the end-to-end
MFU of Chowdhery et al., which each row reports in ``"MFU"``), how fast the links carry payload
(a GPU preset's line rates, or ``rates="effective"``: NCCL's model rate for Hopper NVLink, 20.6
GB/s per link in its topology search (src/graph/topo.h), and the NICs' rate measured with
nccl-tests, :mod:`collectives.hardware.systems`), and how the fabric spreads the flows (hashed
ECMP with one flow per connection, Meta's 16 queue pairs with enhanced ECMP, or adaptive
routing: :mod:`collectives.plan.costing`), plus FP8 matmuls as a what-if. :func:`sensitivity`
plans the same step under each :class:`WhatIf` of a list (:data:`WHAT_IFS` by default) and
returns one row per what-if: the step time, its compute, bubble and exposed communication, the
exposed data-parallel (DP, FSDP) and tensor-parallel parts, whether the data-parallel
collectives hide, the bottleneck link level and whether the memory fits. A what-if that does not
apply (effective rates on a preset that has none, FP8 compute on a chip without a recorded FP8
peak, routing schemes on a torus) gets a row with its reason in ``note``.

Peak compute is the *pessimistic* end for overlap: slower matmuls lengthen every window,
so a collective hidden at peak stays hidden, and one exposed at peak may hide, while the
step itself grows. Taught in chapter "Putting it together".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..errors import CollectivesError
from ..topology import Cluster
from .builder import fp8_peak
from .costing import ECMP_SCHEMES
from .model import model as named_model
from .step import COMPUTE, training_step

__all__ = ["WhatIf", "WHAT_IFS", "sensitivity", "COLUMNS", "model_flops_utilization"]


@dataclass(frozen=True)
class WhatIf:
    """One set of assumptions: ``mfu`` (fraction of peak), ``rates`` ("line" or
    "effective", GPU presets), ``ecmp`` (a :data:`collectives.plan.costing.ECMP_SCHEMES`
    value), ``compute`` ("bf16" or "fp8")."""

    label: str
    mfu: float = 1.0
    rates: str = "line"
    ecmp: Optional[str] = None
    compute: str = "bf16"

    def __post_init__(self):
        if self.rates not in ("line", "effective"):
            raise CollectivesError(f"rates must be 'line' or 'effective', got {self.rates!r}")
        if self.ecmp not in ECMP_SCHEMES:
            raise CollectivesError(f"ecmp must be one of {ECMP_SCHEMES}, got {self.ecmp!r}")
        if self.compute not in COMPUTE:
            raise CollectivesError(f"compute must be one of {COMPUTE}, got {self.compute!r}")


#: the chapter's what-ifs: peak and two lower matmul efficiencies (``mfu``; assumed values:
#: Llama 3 405B reports 38-43 % BF16 MFU end to end, table 4 of arXiv 2407.21783, which counts
#: the exposed communication and the bubble too), measured link rates, the fabric's three
#: schemes, and FP8 matmuls
WHAT_IFS = (
    WhatIf("as planned: peak BF16, line rates, hashed ECMP"),
    WhatIf("matmul efficiency 0.6", mfu=0.6),
    WhatIf("matmul efficiency 0.4", mfu=0.4),
    WhatIf("effective link rates", rates="effective"),
    WhatIf("enhanced ECMP, 16 QPs", ecmp="e-ecmp"),
    WhatIf("adaptive routing", ecmp="adaptive"),
    WhatIf("FP8 matmuls", compute="fp8"),
)

#: the keys of every row
COLUMNS = (
    "what if",
    "step",
    "compute",
    "bubble",
    "exposed",
    "exposed DP/FSDP",
    "exposed TP",
    "DP/FSDP hidden",
    "bottleneck",
    "fits",
    "MFU",
    "note",
)


def _topology(preset, options, rates, cache):
    from ..hardware import preset as build
    from ..topology import Topology

    if isinstance(preset, Topology):
        if rates != "line":
            raise CollectivesError(
                "give a preset name (not a built Topology) to vary the link rates"
            )
        return preset
    if rates not in cache:
        cache[rates] = build(
            preset, **dict(options or {}), **({} if rates == "line" else {"rates": rates})
        )
    return cache[rates]


def model_flops_utilization(model, seq_len: int, plan, peak_flops: float) -> float:
    """End-to-end MFU of ``plan`` by Chowdhery et al.'s definition (PaLM, arXiv 2204.02311,
    section 4.1: the model's forward and backward FLOPs only, "not rematerialization"):
    ``flops_per_token(seq_len) x tokens / (step_seconds x devices x peak_flops)``. The
    planner's ``mfu`` knob is another thing: the matmuls' efficiency, recomputation
    included, before the bubble and the exposed communication."""
    m = named_model(model)
    return float(
        m.flops_per_token(seq_len) * plan.tokens / (plan.step_seconds * plan.devices * peak_flops)
    )


def sensitivity(
    model,
    layout,
    preset,
    *,
    seq_len: int,
    global_batch: int,
    what_ifs: Sequence[WhatIf] = WHAT_IFS,
    preset_options=None,
    **step_options: Any,
) -> list[dict]:
    """Plan one training step of ``model`` under ``layout`` on ``preset`` (a preset name,
    built with ``preset_options``, or a Topology, which cannot vary its rates) under every
    :class:`WhatIf` of ``what_ifs``; ``step_options`` go to every
    :func:`collectives.plan.training_step` (``recipe``, ``recompute``, ...). Returns one
    dict per what-if with the keys of :data:`COLUMNS` (seconds, a level name, bools; a
    what-if that does not apply has None and its reason in ``"note"``)."""
    what_ifs = tuple(what_ifs)
    if not what_ifs or not all(isinstance(w, WhatIf) for w in what_ifs):
        raise CollectivesError("what_ifs must be a non-empty sequence of cl.plan.WhatIf")
    for key in ("mfu", "compute", "ecmp"):
        if key in step_options:
            raise CollectivesError(f"{key} is set by each WhatIf, not for all of them")
    built: dict = {}
    _topology(preset, preset_options, "line", built)  # a bad preset or option raises
    rows = []
    for w in what_ifs:
        row = dict.fromkeys(COLUMNS)
        row["what if"] = w.label
        why = None
        try:  # does this what-if apply to the cluster?
            topology = _topology(preset, preset_options, w.rates, built)
            if w.compute == "fp8":
                fp8_peak(topology)
            if w.ecmp is not None and not isinstance(topology, Cluster):
                raise CollectivesError(
                    f"{topology.name} has no switch fabric: a routing "
                    "scheme has no paths to choose from"
                )
        except CollectivesError as err:
            why = str(err)
        if why is not None:
            row["note"] = why
            rows.append(row)
            continue
        plan = training_step(
            model,
            layout,
            topology,
            seq_len=seq_len,
            global_batch=global_batch,
            mfu=w.mfu,
            compute=w.compute,
            ecmp=w.ecmp,
            **step_options,
        )
        data = plan.exposed("dp") + plan.exposed("fsdp")
        row.update(
            {
                "step": plan.step_seconds,
                "compute": plan.compute_seconds,
                "bubble": plan.bubble_seconds,
                "exposed": plan.exposed_seconds,
                "exposed DP/FSDP": data,
                "exposed TP": plan.exposed("tp"),
                "DP/FSDP hidden": data == 0,
                "bottleneck": plan.bottleneck,
                "fits": plan.fits,
                "MFU": model_flops_utilization(model, seq_len, plan, topology.system.bf16_flops),
                "note": "",
            }
        )
        rows.append(row)
    return rows
