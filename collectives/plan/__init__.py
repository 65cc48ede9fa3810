"""``collectives.plan``: every collective of a training or inference step on a cluster, costed.

Give a transformer's shape (:func:`model` or :class:`Transformer`), a parallelism
:class:`Layout` (dp, fsdp, tp, pp, ep, cp laid out as a named device mesh), a precision
recipe and a cluster (a hardware preset): :func:`training_step` lists every collective one
step issues (which, over which mesh axis, how many bytes, how many times), places each
group on the topology with the mesh, picks and costs the algorithm with
:func:`collectives.time` (all groups of an axis at once, sharing links), and reports the
communication time, what is exposed after overlap, the bottleneck link level, memory per
device and the compute/communication ratio. :func:`inference` does the same for prefill
and decode; :func:`sensitivity` re-plans a step under other assumptions (MFU, link
rates, how the fabric spreads flows, FP8 matmuls); :func:`collectives_table` and
:func:`verdict` put a plan and a what-if in a table; :func:`timeline` lays a step out
in time, lane by lane (what a Gantt chart draws). Taught in the capstone chapter.
"""

from ..errors import LayoutError
from .costing import ECMP_SCHEMES, Coster, Costing, domains, qp_timing
from .inference import InferencePlan, inference
from .layout import AXES, DEFAULT_ORDER, Layout
from .model import MODEL_SOURCES, Transformer, model, models
from .precision import PRECISIONS, Precision, precision
from .report import Memory, Plan, Record
from .sensitivity import WHAT_IFS, WhatIf, sensitivity
from .step import training_step
from .tables import collectives_table, verdict
from .timeline import Span, Timeline, timeline

__all__ = [
    "Transformer",
    "model",
    "models",
    "MODEL_SOURCES",
    "Layout",
    "LayoutError",
    "AXES",
    "DEFAULT_ORDER",
    "training_step",
    "inference",
    "InferencePlan",
    "Plan",
    "Record",
    "Memory",
    "Precision",
    "PRECISIONS",
    "precision",
    "Costing",
    "Coster",
    "domains",
    "qp_timing",
    "ECMP_SCHEMES",
    "sensitivity",
    "WhatIf",
    "WHAT_IFS",
    "collectives_table",
    "verdict",
    "timeline",
    "Timeline",
    "Span",
]
