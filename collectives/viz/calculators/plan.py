"""The capstone's calculator: whole training steps planned by :mod:`collectives.plan`, offline.

A grid of :func:`collectives.plan.training_step` plans is computed when the book is built:
for every model, cluster, layout (a few per model and cluster), precision recipe and global
batch. The page shows one plan at a time: a readout (step time, compute, exposed
communication, pipeline bubble, compute/communication ratio, bottleneck link level, memory
against HBM), the collectives of the step, two Plotly bar charts (where the step's time
goes, by parallelism and by link level; memory per device against the HBM) and the step's
timeline (:func:`collectives.plan.timeline`: compute and each parallelism's collectives on
their own lanes, pale where hidden, solid where exposed, the pipeline bubble). Moving a
control only switches between precomputed plans, so no kernel is needed;
``_static/calculators.js`` draws it with the book's own plotly.js, as it draws the other
calculators. ``live=True`` gives the same calculator as ipywidgets.

Example (the chapter's cell)::

    from collectives.viz.calculators import plan_calculator
    plan_calculator()                       # DEFAULT_MODELS on DEFAULT_CLUSTERS

What is modelled is what :func:`collectives.plan.training_step` models (its docstring;
on Meta's fabric-only RoCE preset it costs the groups inside a server on NVLink, as the
Llama 3 paper describes Meta's servers). Taught in chapter "Putting it together".
"""

from __future__ import annotations

import html
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ...errors import CollectivesError
from ...plan.layout import Layout
from ..style import LEVEL_COLOURS, PALETTE
from .formats import format_seconds

__all__ = [
    "ClusterChoice",
    "PlanGrid",
    "PlanCalculator",
    "plan_grid",
    "plan_calculator",
    "summarise",
    "purpose_class",
    "level_label",
    "readout_rows",
    "DEFAULT_MODELS",
    "DEFAULT_CLUSTERS",
    "DEFAULT_RECIPES",
    "CLASS_COLOURS",
    "STEP_PARTS",
    "MEMORY_PARTS",
    "timeline_summary",
    "timeline_traces",
    "TIMELINE_LANES",
]

_counter = itertools.count()

#: the parallelism a collective serves, by the first word of its purpose, with its colour
CLASSES = {
    "tp": "tensor (TP)",
    "fsdp": "FSDP / ZeRO-3",
    "dp": "data (DP)",
    "ep": "expert all-to-all (EP)",
    "pp": "pipeline (PP)",
    "cp": "context (CP)",
}
CLASS_COLOURS = {
    "tp": PALETTE["blue"],
    "fsdp": PALETTE["bluish green"],
    "dp": PALETTE["reddish purple"],
    "ep": PALETTE["vermillion"],
    "pp": PALETTE["orange"],
    "cp": PALETTE["sky blue"],
}
#: link levels as the readout names them; Meta's layered fabric numbers its tiers
LEVEL_LABELS = {
    "nvlink": "NVLink",
    "pcie": "PCIe",
    "leaf": "NIC to rail leaf",
    "spine": "leaf to spine",
    "core": "spine to core",
    "ici": "ICI",
    "dcn": "DCN",
    "host": "GPU to rack switch",
    "tier 2": "rack to zone spine",
    "tier 3": "zone to aggregation",
}
_LEVEL_COLOURS = dict(
    LEVEL_COLOURS,
    host=LEVEL_COLOURS["leaf"],
    **{"tier 2": LEVEL_COLOURS["spine"], "tier 3": LEVEL_COLOURS["dcn"]},
)
#: the parts of a step, ``(key, label, colour)``, as the calculator and
#: :func:`collectives.viz.plan.plot_stacked` draw them
STEP_PARTS = (
    ("compute", "compute", PALETTE["grey"]),
    ("bubble", "pipeline bubble", PALETTE["olive"]),
    ("exposed", "exposed communication", PALETTE["vermillion"]),
)
_STEP = tuple((label, colour) for _, label, colour in STEP_PARTS)
#: the kinds of memory per device, ``(key of Memory.breakdown(), label, colour)``
MEMORY_PARTS = (
    ("weights", "weights", PALETTE["blue"]),
    ("master", "master weights", PALETTE["sky blue"]),
    ("grads", "gradients", PALETTE["bluish green"]),
    ("optimizer", "optimizer", PALETTE["orange"]),
    ("activations", "activations", PALETTE["reddish purple"]),
    ("logits", "logits", PALETTE["wine"]),
    ("kv_cache", "KV cache", PALETTE["teal"]),
)
_MEMORY = tuple((key, colour) for key, _, colour in MEMORY_PARTS)


def purpose_class(purpose: str) -> str:
    """ "tp", "fsdp", "dp", "ep", "pp" or "cp": the parallelism a record's purpose names."""
    key = purpose.split()[0] if purpose.split() else ""
    if key not in CLASSES:
        raise CollectivesError(f"no parallelism class for purpose {purpose!r}")
    return key


def level_label(level: str) -> str:
    """A link level as the readout names it ("leaf" -> "NIC to rail leaf")."""
    return LEVEL_LABELS.get(level, level)


def summarise(plan) -> dict:
    """Everything the calculator shows of one plan (JSON-ready)."""
    classes: dict[str, float] = {}
    for r in plan.collectives:
        key = purpose_class(r.purpose)
        classes[key] = classes.get(key, 0.0) + r.total_seconds
    levels = plan.level_seconds()
    mem = plan.memory
    return {
        "step": plan.step_seconds,
        "compute": plan.compute_seconds,
        "bubble": plan.bubble_seconds,
        "exposed": plan.exposed_seconds,
        "communication": plan.communication_seconds,
        "ratio": (
            None if math.isinf(plan.compute_to_communication) else plan.compute_to_communication
        ),
        "bottleneck": level_label(plan.bottleneck) if plan.bottleneck else "none",
        "tokens_per_device": plan.tokens / plan.devices,
        "memory": [
            [name, getattr(mem, name), colour] for name, colour in _MEMORY if getattr(mem, name) > 0
        ],
        "memory_total": mem.total,
        "hbm": mem.hbm,
        "fits": mem.fits,
        "classes": [[CLASSES[k], s, CLASS_COLOURS[k]] for k, s in classes.items()],
        "levels": [
            [level_label(k), s, _LEVEL_COLOURS.get(k, PALETTE["grey"])]
            for k, s in sorted(levels.items(), key=lambda kv: -kv[1])
        ],
        "collectives": [
            [r.purpose, r.phase, r.level, r.count, r.seconds, r.total_seconds]
            for r in plan.collectives
        ],
        "timeline": timeline_summary(plan),
    }


#: the timeline's lanes as the calculator names them (the Gantt chart's names)
TIMELINE_LANES = {
    "compute": "compute",
    "tp": "TP",
    "cp": "CP",
    "ep": "EP all-to-all",
    "pp": "PP sends",
    "fsdp": "FSDP",
    "dp": "DP",
}
#: span kinds as the summary codes them
_KINDS = {"compute": "c", "bubble": "b", "hidden": "h", "exposed": "e"}


def timeline_summary(plan) -> dict:
    """The step's timeline (:func:`collectives.plan.timeline`) as the calculator draws it
    (JSON-ready): ``lanes`` ``[[label, colour], ...]`` top to bottom, ``spans`` ``[[lane
    index, start, end, kind], ...]`` (kind "c" compute, "b" bubble, "h" hidden, "e"
    exposed; spans of one lane and kind that touch are joined into one bar) and ``step``,
    the plan's step time."""
    from ...plan.timeline import timeline

    tl = timeline(plan)
    colours = dict(compute=PALETTE["grey"], **CLASS_COLOURS)
    index = {lane: k for k, lane in enumerate(tl.lanes)}
    spans: list[list] = []
    last: dict[tuple[int, str], list] = {}
    for span in tl.spans:
        key = (index[span.lane], _KINDS[span.kind])
        prev = last.get(key)
        if prev is not None and prev[2] == span.start:
            prev[2] = span.end
            continue
        row = [key[0], span.start, span.end, key[1]]
        spans.append(row)
        last[key] = row
    return {
        "lanes": [[TIMELINE_LANES[lane], colours[lane]] for lane in tl.lanes],
        "spans": spans,
        "step": plan.step_seconds,
    }


@dataclass(frozen=True)
class ClusterChoice:
    """One cluster of the calculator: its ``label``, the ``cluster`` (a Topology, a preset
    name or a callable returning a Topology), ``layouts[model name] = {label: Layout}``,
    and ``batches = {label: global batch in sequences}``."""

    label: str
    cluster: object
    layouts: Mapping[str, Mapping[str, Layout]]
    batches: Mapping[str, int]

    def topology(self):
        from ...plan.step import resolve_cluster

        built = self.cluster() if callable(self.cluster) else self.cluster
        return resolve_cluster(built)


@dataclass(frozen=True)
class PlanGrid:
    """Precomputed plans: ``plans[(model, cluster, layout, recipe, batch)]`` (indices into
    ``models``, ``clusters``, ``layouts[model][cluster]``, ``recipes`` and
    ``batches[cluster]``) -> the :class:`collectives.plan.Plan`."""

    models: tuple[str, ...]
    clusters: tuple[str, ...]
    layouts: tuple[tuple[tuple[str, ...], ...], ...]
    recipes: tuple[str, ...]
    batches: tuple[tuple[str, ...], ...]
    plans: dict = field(repr=False)
    seq_len: int = 4096

    def plan(self, model: int, cluster: int, layout: int, recipe: int, batch: int):
        key = (model, cluster, layout, recipe, batch)
        if key not in self.plans:
            raise CollectivesError(
                f"no plan at model={model}, cluster={cluster}, "
                f"layout={layout}, recipe={recipe}, batch={batch}"
            )
        return self.plans[key]


def plan_grid(
    models: Sequence[str],
    clusters: Sequence[ClusterChoice],
    recipes: Sequence[str] = ("bf16", "fp8"),
    *,
    seq_len: int = 4096,
    recompute: str = "full",
) -> PlanGrid:
    """Plan every setting with :func:`collectives.plan.training_step`. Every cluster must
    name at least one layout for every model. Raises
    :class:`~collectives.CollectivesError` (a layout that does not fit says which)."""
    from ...plan import model as named_model
    from ...plan import training_step
    from ...plan.precision import precision

    models, clusters, recipes = tuple(models), tuple(clusters), tuple(recipes)
    if not models or not clusters or not recipes:
        raise CollectivesError("a plan calculator needs at least one model, cluster and recipe")
    for c in clusters:
        if not isinstance(c, ClusterChoice):
            raise CollectivesError(f"clusters must be ClusterChoice(...), got {c!r}")
        if not c.batches or any(not isinstance(b, int) or b < 1 for b in c.batches.values()):
            raise CollectivesError(
                f"{c.label}: batches must map labels to positive "
                f"numbers of sequences, got {dict(c.batches)!r}"
            )
    for r in recipes:
        precision(r)  # a bad name raises here
    names = tuple(named_model(m).name for m in models)
    plans, layouts = {}, []
    for name in names:
        per_cluster = []
        for c in clusters:
            chosen = c.layouts.get(name) or {}
            if not chosen:
                raise CollectivesError(f"{c.label} names no layout for model {name!r}")
            per_cluster.append(tuple(chosen))
        layouts.append(tuple(per_cluster))
    for j, c in enumerate(clusters):
        topology = c.topology()
        for i, name in enumerate(names):
            for k, layout in enumerate(c.layouts[name].values()):
                for p, recipe in enumerate(recipes):
                    for b, batch in enumerate(c.batches.values()):
                        try:
                            plan = training_step(
                                models[i],
                                layout,
                                topology,
                                seq_len=seq_len,
                                global_batch=batch,
                                recipe=recipe,
                                recompute=recompute,
                            )
                        except CollectivesError as err:
                            raise type(err)(
                                f"{c.label}, {name}, {list(c.layouts[name])[k]}: {err}"
                            ) from err
                        plans[(i, j, k, p, b)] = plan
    return PlanGrid(
        names,
        tuple(c.label for c in clusters),
        tuple(layouts),
        recipes,
        tuple(tuple(c.batches) for c in clusters),
        plans,
        seq_len,
    )


def _gb(x) -> str:
    return "n/a" if x is None else f"{x / 1e9:.1f} GB"


class PlanCalculator:
    """A precomputed plan calculator: ``_repr_html_`` is the offline page block,
    :meth:`readout` the numbers a reader sees, :meth:`figures` its three Plotly figures."""

    CONTROLS = ("model", "cluster", "layout", "recipe", "batch")

    def __init__(self, grid: PlanGrid, title: str, setting: Mapping[str, int] | None = None):
        self.grid = grid
        self.title = title
        self.setting = {k: 0 for k in self.CONTROLS}
        for key, value in (setting or {}).items():
            self.choose(key, value)
        self.id = f"cl-plan-{next(_counter)}"

    def _count(self, key, s):
        g = self.grid
        return {
            "model": len(g.models),
            "cluster": len(g.clusters),
            "layout": len(g.layouts[s["model"]][s["cluster"]]),
            "recipe": len(g.recipes),
            "batch": len(g.batches[s["cluster"]]),
        }[key]

    def choose(self, key: str, index: int) -> None:
        """Set control ``key`` to option ``index`` (a layout index is kept in range when
        the model or cluster changes, as the page does)."""
        if key not in self.CONTROLS:
            raise CollectivesError(f"no control {key!r}; the controls are {self.CONTROLS}")
        count = self._count(key, self.setting)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise CollectivesError(f"{key} index {index!r} is outside 0..{count - 1}")
        self.setting[key] = index
        for dependent in ("layout", "batch"):
            self.setting[dependent] = min(
                self.setting[dependent], self._count(dependent, self.setting) - 1
            )

    def plan(self):
        s = self.setting
        return self.grid.plan(s["model"], s["cluster"], s["layout"], s["recipe"], s["batch"])

    def readout(self) -> list[tuple[str, str]]:
        """``[(quantity, value as shown), ...]`` at the current setting."""
        return readout_rows(summarise(self.plan()))

    # -- figures ---------------------------------------------------------------------------
    def figures(self):
        """(time figure, memory figure, timeline figure) at the current setting, as the page
        draws them."""
        import plotly.graph_objects as go

        spec = _figure_spec(summarise(self.plan()))
        out = []
        for part in ("time", "memory", "timeline"):
            fig = go.Figure([go.Bar(**t) for t in spec[part]["traces"]])
            fig.update_layout(spec[part]["layout"])
            out.append(fig)
        return tuple(out)

    # -- the offline page block ---------------------------------------------------------
    def data(self) -> dict:
        """Everything ``_static/calculators.js`` needs for it (JSON-ready)."""
        g = self.grid
        plans = {",".join(map(str, key)): summarise(p) for key, p in g.plans.items()}
        return {
            "id": self.id,
            "title": self.title,
            "models": list(g.models),
            "clusters": list(g.clusters),
            "layouts": [[list(c) for c in m] for m in g.layouts],
            "recipes": [_RECIPE_LABELS.get(r, r) for r in g.recipes],
            "batches": [list(b) for b in g.batches],
            "setting": dict(self.setting),
            "plans": plans,
        }

    def _select(self, key, options, chosen) -> str:
        opts = "".join(
            f'<option value="{k}"{" selected" if k == chosen else ""}>{html.escape(o)}</option>'
            for k, o in enumerate(options)
        )
        return (
            f"<label>{key if key != 'recipe' else 'precision'} "
            f'<select data-plan-control="{key}" id="{self.id}-{key}">{opts}</select></label>'
        )

    def _repr_html_(self) -> str:
        g, s = self.grid, self.setting
        options = {
            "model": g.models,
            "cluster": g.clusters,
            "layout": g.layouts[s["model"]][s["cluster"]],
            "recipe": [_RECIPE_LABELS.get(r, r) for r in g.recipes],
            "batch": g.batches[s["cluster"]],
        }
        controls = "".join(self._select(k, options[k], s[k]) for k in self.CONTROLS)
        summary = summarise(self.plan())
        payload = json.dumps(self.data(), separators=(",", ":"), allow_nan=False)
        payload = payload.replace("</", "<\\/")
        return (
            f'<div class="cl-calculator-plan" id="{self.id}">{_STYLE}'
            f'<p class="cl-plan-title">{html.escape(self.title)}</p>'
            f'<div class="cl-plan-controls">{controls}</div>'
            f'<table class="cl-plan-readout"><tbody>{_readout_html(summary)}</tbody></table>'
            f'<div class="cl-plan-time" role="img" aria-label="{html.escape(self.title)}: '
            f'where the step time goes, by parallelism and by link level"></div>'
            f'<div class="cl-plan-memory" role="img" aria-label="memory per device '
            f'against the HBM"></div>'
            f'<div class="cl-plan-timeline" role="img" aria-label="a timeline of one step: '
            f"compute and each parallelism's collectives on their own lanes, pale where "
            f'hidden behind compute, solid where exposed"></div>'
            f'<details class="cl-plan-details"><summary>the collectives of one step</summary>'
            f'<div class="cl-plan-scroll"><table class="cl-plan-collectives">'
            f"{_collectives_html(summary)}</table></div></details>"
            f'<script type="application/json" class="cl-plan-data">{payload}</script>'
            "</div>"
        )

    # -- live kernel ------------------------------------------------------------------
    def widget(self):
        """The same calculator as ipywidgets: the controls update the readout, the table
        of collectives and both figures."""
        import ipywidgets as w
        from IPython.display import display

        g = self.grid
        drops = {}

        def options(key):
            s = self.setting
            return list(
                enumerate(
                    {
                        "model": g.models,
                        "cluster": g.clusters,
                        "layout": g.layouts[s["model"]][s["cluster"]],
                        "recipe": [_RECIPE_LABELS.get(r, r) for r in g.recipes],
                        "batch": g.batches[s["cluster"]],
                    }[key]
                )
            )

        for key in self.CONTROLS:
            drops[key] = w.Dropdown(
                options=[(o, k) for k, o in options(key)],
                value=self.setting[key],
                description="precision" if key == "recipe" else key,
            )
        readout, plot = w.HTML(), w.Output()
        busy = []

        def update(change=None):
            if busy:
                return
            busy.append(1)
            try:
                if change is not None:
                    self.choose(change.owner._cl_key, change.new)
                for key in ("layout", "batch"):
                    drops[key].options = [(o, k) for k, o in options(key)]
                    drops[key].value = self.setting[key]
            finally:
                busy.clear()
            summary = summarise(self.plan())
            readout.value = (
                f"<table>{_readout_html(summary)}</table>"
                f"<table>{_collectives_html(summary)}</table>"
            )
            plot.clear_output(wait=True)
            with plot:
                for fig in self.figures():
                    display(fig)

        for key, d in drops.items():
            d._cl_key = key
            d.observe(update, names="value")
        update()
        box = w.VBox([*drops.values(), readout, plot])
        box.controls, box.readout = drops, readout
        return box


_RECIPE_LABELS = {
    "bf16": "BF16",
    "fp8": "FP8 (FP8-LM O2)",
    "te-fp8": "FP8 (TE)",
    "fp8lm-o1": "FP8-LM O1",
    "fp8lm-o2": "FP8-LM O2",
    "fp8lm-o3": "FP8-LM O3",
}

# scoped to the block, so the page needs no stylesheet of its own (reading.css styles
# .cl-calculator, the collective calculators)
_STYLE = (
    "<style>.cl-calculator-plan{border:1px solid var(--pst-color-border,#ccc);"
    "border-radius:.4rem;padding:.6rem .8rem;margin:1rem 0}"
    ".cl-calculator-plan .cl-plan-title{font-weight:600;margin:0 0 .4rem}"
    ".cl-calculator-plan .cl-plan-controls{display:flex;flex-wrap:wrap;"
    "gap:.4rem 1.2rem;align-items:center}"
    ".cl-calculator-plan label{display:inline-flex;align-items:center;gap:.4rem;"
    "margin:0;max-width:100%}"
    ".cl-calculator-plan select{width:auto;max-width:100%;min-width:0}"
    ".cl-calculator-plan table{margin:.6rem 0;font-variant-numeric:tabular-nums}"
    ".cl-calculator-plan td,.cl-calculator-plan th{padding:.15rem .8rem .15rem 0;"
    "text-align:left}"
    ".cl-calculator-plan .cl-plan-scroll{overflow-x:auto;max-width:100%}"
    ".cl-calculator-plan .cl-plan-time{width:100%;min-height:300px}"
    ".cl-calculator-plan .cl-plan-memory{width:100%;min-height:190px}"
    ".cl-calculator-plan .cl-plan-timeline{width:100%;min-height:240px}</style>"
)


def _time(t) -> str:
    """``format_seconds``, with "none" for zero (no pipeline, no communication)."""
    return "none" if t == 0 else format_seconds(t)


def _ratio(r) -> str:
    return "no communication" if r is None else f"{r:.2f}"


def readout_rows(s) -> list[tuple[str, str]]:
    """``[(quantity, value as shown), ...]`` of a :func:`summarise` d plan."""
    fits = "" if s["fits"] is None else (": fits" if s["fits"] else ": does NOT fit")
    return [
        ("step time", format_seconds(s["step"])),
        ("compute at peak", format_seconds(s["compute"])),
        ("exposed communication", _time(s["exposed"])),
        ("pipeline bubble", _time(s["bubble"])),
        ("all communication, serial", _time(s["communication"])),
        ("compute / communication", _ratio(s["ratio"])),
        ("bottleneck link level", s["bottleneck"]),
        ("memory per device", f"{_gb(s['memory_total'])} of {_gb(s['hbm'])}{fits}"),
        ("tokens per device", f"{s['tokens_per_device']:,.0f}"),
    ]


def _readout_html(s) -> str:
    return "".join(
        f'<tr><th scope="row">{html.escape(k)}</th><td>{html.escape(v)}</td></tr>'
        for k, v in readout_rows(s)
    )


def _collectives_html(s) -> str:
    head = (
        '<thead><tr><th scope="col">collective</th><th scope="col">where</th>'
        '<th scope="col">count × each</th><th scope="col">total</th></tr></thead>'
    )
    rows = "".join(
        f"<tr><td>{html.escape(p)} ({html.escape(ph)})</td><td>{html.escape(lv)}</td>"
        f"<td>{n:,} × {format_seconds(each)}</td><td>{format_seconds(total)}</td></tr>"
        for p, ph, lv, n, each, total in s["collectives"]
    )
    return f"{head}<tbody>{rows}</tbody>"


def _figure_spec(s) -> dict:
    """Plotly traces and layouts of both figures; ``_static/calculators.js`` builds the
    same from the same summary."""
    rows = ("step", "by parallelism", "by link level")
    step = [
        ("compute", s["compute"], _STEP[0][1]),
        ("pipeline bubble", s["bubble"], _STEP[1][1]),
        ("exposed communication", s["exposed"], _STEP[2][1]),
    ]
    traces = []
    for row, items in zip(rows, (step, s["classes"], s["levels"])):
        for name, seconds, colour in items:
            traces.append(
                {
                    "x": [seconds],
                    "y": [row],
                    "name": name,
                    "orientation": "h",
                    "marker": {"color": colour},
                    "legendgroup": row,
                    "hovertemplate": f"{html.escape(name)}: %{{x:.3s}}s<extra></extra>",
                }
            )
    base: dict[str, object] = {
        "template": "none",
        "barmode": "stack",
        "autosize": True,
        "font": {"size": 14, "family": "system-ui, sans-serif"},
        "hoverlabel": {"font": {"size": 14}},
        # at the foot of the figure, below the axis title
        "legend": {"orientation": "h", "x": 0, "yref": "container", "y": 0, "yanchor": "bottom"},
    }
    time_layout = dict(
        base,
        height=420,
        margin={"l": 120, "r": 12, "t": 12, "b": 150},
        xaxis={
            "title": {"text": "seconds per step"},
            "tickformat": "~s",
            "ticksuffix": "s",
            "gridcolor": "#e5e5e5",
        },
        yaxis={"autorange": "reversed"},
    )
    mem = [
        {
            "x": [v / 1e9],
            "y": ["memory"],
            "name": name,
            "orientation": "h",
            "marker": {"color": colour},
            "hovertemplate": f"{name}: %{{x:.1f}} GB<extra></extra>",
        }
        for name, v, colour in s["memory"]
    ]
    hbm = s["hbm"]
    memory_axis_end: float = 1.05 * max(s["memory_total"], hbm or 0) / 1e9
    mem_layout: dict[str, object] = dict(
        base,
        height=210,
        margin={"l": 120, "r": 12, "t": 12, "b": 100},
        xaxis={
            "title": {"text": "GB per device"},
            "gridcolor": "#e5e5e5",
            "range": [0, memory_axis_end],
        },
        shapes=[]
        if hbm is None
        else [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": hbm / 1e9,
                "x1": hbm / 1e9,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#000000", "width": 2, "dash": "dash"},
            }
        ],
        annotations=[]
        if hbm is None
        else [
            {
                "x": hbm / 1e9,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": "HBM",
                "showarrow": False,
                "yanchor": "bottom",
            }
        ],
    )
    return {
        "time": {"traces": traces, "layout": time_layout},
        "memory": {"traces": mem, "layout": mem_layout},
        "timeline": {
            "traces": timeline_traces(s["timeline"]),
            "layout": dict(
                base,
                height=120 + 44 * len(s["timeline"]["lanes"]),
                barmode="overlay",
                margin={"l": 120, "r": 12, "t": 12, "b": 110},
                xaxis={
                    "title": {"text": "seconds into the step"},
                    "tickformat": "~s",
                    "ticksuffix": "s",
                    "gridcolor": "#e5e5e5",
                    "range": [0, 1.02 * s["timeline"]["step"]],
                },
                yaxis={
                    "autorange": "reversed",
                    "type": "category",
                    "categoryorder": "array",
                    "categoryarray": [label for label, _ in s["timeline"]["lanes"]],
                },
                shapes=[
                    {
                        "type": "line",
                        "xref": "x",
                        "yref": "paper",
                        "x0": s["timeline"]["step"],
                        "x1": s["timeline"]["step"],
                        "y0": 0,
                        "y1": 1,
                        "line": {"color": "#000000", "width": 2, "dash": "dash"},
                    }
                ],
            ),
        },
    }


#: how each kind of span is named and drawn: (name suffix, opacity)
_KIND_LOOK = {"c": ("", 1.0), "b": ("", 0.45), "h": (", hidden", 0.3), "e": (", exposed", 1.0)}


def timeline_traces(t) -> list[dict]:
    """Plotly traces of a :func:`timeline_summary`: one horizontal bar trace per lane and
    kind (in the order they first appear), each bar from its span's start (``base``) for its
    length (``x``); ``_static/calculators.js`` builds the same."""
    traces: dict[tuple[int, str], dict] = {}
    for lane, start, end, kind in t["spans"]:
        label, colour = t["lanes"][lane]
        if (lane, kind) not in traces:
            suffix, opacity = _KIND_LOOK[kind]
            name = "pipeline bubble" if kind == "b" else label + suffix
            traces[(lane, kind)] = {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": [],
                "base": [],
                "x": [],
                "marker": {"color": PALETTE["olive"] if kind == "b" else colour},
                "opacity": opacity,
                "hovertemplate": f"{html.escape(name)}: %{{x:.3s}}s<extra></extra>",
            }
        trace = traces[(lane, kind)]
        trace["y"].append(label)
        trace["base"].append(start)
        trace["x"].append(end - start)
    return list(traces.values())


# ---- the chapter's grid ------------------------------------------------------------------

#: the models of the chapter's calculator: a dense 70B and an 8-expert MoE
DEFAULT_MODELS = ("llama3-70b", "mixtral-8x7b")
DEFAULT_RECIPES = ("bf16", "fp8")


def _v5p():
    from ... import hardware

    return hardware.preset("tpu-v5p", shape=(16, 8, 8))


def _superpod():
    from ... import hardware

    return hardware.preset("superpod-h100")


def _meta():
    from ... import hardware

    # the Llama 3 cluster cut to two AI zones of 28 racks; each zone spine sends 28 / 7 = 4
    # cables up, one to each of 4 aggregation switches: 7:1 between the zones, as the Llama 3
    # paper's cluster
    return hardware.preset("meta-roce-24k", zones=2, racks_per_zone=28, aggregators=4)


def _gpu_layouts(replicas):
    """Three layouts for each model on a GPU cluster of ``8 x replicas`` GPUs."""
    z1 = dict(zero_stage=1)
    return {
        "llama3-70b": {
            f"TP 8 × FSDP {replicas}": Layout(fsdp=replicas, tp=8),
            f"TP 8 × DP {replicas}, ZeRO-1": Layout(dp=replicas, tp=8, **z1),
            f"TP 8 × PP 4 × DP {replicas // 4}, ZeRO-1": Layout(
                dp=replicas // 4, pp=4, tp=8, micro_batches=8, **z1
            ),
        },
        "mixtral-8x7b": {
            f"EP 4 × TP 2 × FSDP {replicas}": Layout(fsdp=replicas, ep=4, tp=2),
            f"EP 4 × TP 2 × DP {replicas}, ZeRO-1": Layout(dp=replicas, ep=4, tp=2, **z1),
            f"TP 8 × FSDP {replicas}": Layout(fsdp=replicas, tp=8),
        },
    }


DEFAULT_CLUSTERS = (
    ClusterChoice(
        "TPU v5p slice 16×8×8 (1,024 chips)",
        _v5p,
        {
            "llama3-70b": {
                "FSDP 512 × TP 2": Layout(fsdp=512, tp=2),
                "FSDP 256 × TP 4": Layout(fsdp=256, tp=4),
                "FSDP 128 × TP 8": Layout(fsdp=128, tp=8),
            },
            "mixtral-8x7b": {
                "FSDP 512 × TP 2": Layout(fsdp=512, tp=2),
                "EP 4 × TP 2 × FSDP 128": Layout(fsdp=128, ep=4, tp=2),
                "EP 8 × TP 2 × FSDP 64": Layout(fsdp=64, ep=8, tp=2),
            },
        },
        {"2,048 tokens per chip": 512, "4,096 tokens per chip": 1024},
    ),
    ClusterChoice(
        "H100 SuperPOD, 4 SUs (1,024 GPUs)",
        _superpod,
        _gpu_layouts(128),
        {"2,048 tokens per GPU": 512, "4,096 tokens per GPU": 1024},
    ),
    ClusterChoice(
        "Meta-style RoCE, 2 zones, 1:7 (896 GPUs)",
        _meta,
        _gpu_layouts(112),
        {"2,048 tokens per GPU": 448, "4,096 tokens per GPU": 896},
    ),
)


def plan_calculator(
    models: Sequence[str] = DEFAULT_MODELS,
    clusters: Sequence[ClusterChoice] = DEFAULT_CLUSTERS,
    recipes: Sequence[str] = DEFAULT_RECIPES,
    *,
    seq_len: int = 4096,
    recompute: str = "full",
    title: str | None = None,
    setting: Mapping[str, int] | None = None,
    live: bool = False,
):
    """The capstone's calculator (module text): plans of ``models`` on ``clusters`` under
    each ``recipe``, ``seq_len`` tokens per sequence. ``setting`` picks the indices shown
    first (``{"model": 0, "cluster": 1, "layout": 0, "recipe": 0, "batch": 1}``). Returns a
    :class:`PlanCalculator` (offline) or, with ``live=True``, its ipywidgets version."""
    grid = plan_grid(models, clusters, recipes, seq_len=seq_len, recompute=recompute)
    calc = PlanCalculator(
        grid, title or "A training step: where the time and the memory go", setting
    )
    return calc.widget() if live else calc
