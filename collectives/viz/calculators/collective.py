"""Calculators a reader can change: time and bus bandwidth of a collective, offline.

A calculator is a grid computed when the book is built by :func:`collectives.cost.time_grid`:
for every algorithm, number of ranks, link speed and buffer size, :func:`collectives.time` on
the algorithm's own topology, and :func:`collectives.busbw` of that time; this module only
labels the grid and draws it. The page shows it with Plotly (values on hover) and
five controls: ranks, buffer size, link speed, algorithm and a latency added to every step
(the alpha of the alpha-beta model, one message per rank per step; its settings by default are
0 and the per-step latencies NCCL's tuner assumes,
:data:`collectives.hardware.systems.NCCL_STEP_LATENCY`), above a line that says what is
modelled: each case's latency per link and per message, read from its topology (one switch
at 1 µs per hop: 2 µs per message). Moving a control only switches
between precomputed numbers, so no kernel is needed; plotly.js itself is served from the book
(``_static/vendor/plotly/``, copied by ``scripts/vendor_assets.py``) and drawn by
``_static/calculators.js``, which loads it once per page, through require.js when the page
has it. In a live kernel, ``live=True`` gives the same calculator as ipywidgets.

Example (a chapter cell)::

    import collectives as cl
    from collectives.viz.calculators import calculator, case, power_of_two

    A, T = cl.algorithms, cl.topology
    cases = {
        "ring": case(A.ring_all_gather, T.ring, hop_latency=1e-6),
        "direct": case(A.direct_all_gather, T.switch, hop_latency=1e-6),
        "recursive doubling": case(A.recursive_doubling_all_gather, T.switch, 1e-6,
                                   when=power_of_two),
        # any callable (rank_key, link_bandwidth) -> (schedule, topology) or None works too
        "bidirectional ring": lambda n, B: (A.bidirectional_ring_all_gather(n), T.ring(n, B)),
    }
    calculator("all_gather", cases, ranks=[4, 8, 16], link_bandwidths=[25e9, 50e9])

``ranks`` items are passed to each case as given (an int, or a torus shape such as
``(4, 4)``); ``link_bandwidths`` in bytes/s per direction (a ``{label: value}`` mapping names
them). What is modelled is exactly what :func:`collectives.time` models, plus the latency
control's ``α`` per step that moves data (a step-synchronous time is additive in it:
``t + α k`` for a schedule of ``k`` such steps, and busbw scales by ``t / (t + α k)``); a case
that does not apply to some ranks (a power-of-two algorithm at 12 ranks) returns ``None`` and
is left out there. Taught from chapter "Cost models and the ring all-gather" on.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...cost import time, time_grid
from ...errors import CollectivesError
from ...hardware.systems import NCCL_STEP_LATENCY
from ..style import algorithm_colour
from .formats import format_bytes, format_latency, format_rate, format_seconds

__all__ = [
    "Grid",
    "case",
    "power_of_two",
    "compute_grid",
    "calculator",
    "Calculator",
    "rank_label",
    "DEFAULT_SIZES",
    "DEFAULT_LATENCIES",
    "data_steps",
    "model_text",
    "time_axis",
    "busbw_range",
]

#: buffer sizes of a calculator by default: 1 KiB to 1 GiB, every power of two
DEFAULT_SIZES = tuple(2**k for k in range(10, 31))

_PATHS = {"nvlink": "NVLink", "network": "network"}

#: the latency control's settings by default, seconds added to every step that moves data:
#: none (the topologies' own latencies alone), then what NCCL's tuner assumes per ring step
#: (NCCL 2.30.7, src/graph/tuning.cc: :data:`collectives.hardware.systems.NCCL_STEP_LATENCY`)
DEFAULT_LATENCIES = {"none": 0.0} | {
    f"{format_latency(v)} (NCCL {_PATHS[path]}, {protocol})": v
    for (path, protocol), v in sorted(NCCL_STEP_LATENCY.items(), key=lambda item: item[1])
}

_counter = itertools.count()

#: the hover text of a point, by plotted metric: the size as the slider names it (binary units)
HOVER = {"seconds": "%{customdata}: %{y:.3s}s", "busbw": "%{customdata}: %{y:.3g} GB/s"}


@dataclass(frozen=True)
class Grid:
    """Precomputed results: ``seconds[a, r, b, s]`` and ``busbw[a, r, b, s]`` for algorithm
    ``a``, ranks ``r``, link speed ``b`` and buffer size ``s`` (NaN where a case does not
    apply); ``group_sizes[r]`` is the number of ranks taking part. ``steps[a, r]``: the
    steps that move data (each costs the latency control's ``α`` once; NaN where the case does
    not apply); ``link_latency[a]``: ``((level, seconds), ...)`` of the case's topology at the
    most ranks it applies to, and ``message_latency[a]`` its schedule's longest step latency
    there (the latency of one message)."""

    collective: str
    algorithms: tuple[str, ...]
    rank_labels: tuple[str, ...]
    group_sizes: tuple[int, ...]
    bandwidth_labels: tuple[str, ...]
    bandwidths: tuple[float, ...]
    sizes: tuple[int, ...]
    seconds: np.ndarray
    busbw: np.ndarray
    steps: np.ndarray
    link_latency: tuple[tuple[tuple[str, float], ...], ...]
    message_latency: tuple[float, ...]


def power_of_two(n) -> bool:
    """True for 1, 2, 4, 8, ...: where recursive doubling and halving apply."""
    return int(n) > 0 and int(n) & (int(n) - 1) == 0


def case(
    algorithm: Callable,
    topology: Callable,
    hop_latency: float = 0.0,
    when: Callable | None = None,
    wire_bytes: float = 1.0,
) -> Callable:
    """A calculator case: ``algorithm(key)`` timed on ``topology(key, link_bandwidth,
    hop_latency)``, left out where ``when(key)`` is false. ``wire_bytes`` is the bytes sent
    per byte of the reader's buffer (0.5: the buffer is sent in a format half as wide, such as
    FP8 for a BF16 gradient); busbw is then counted on the reader's buffer."""

    def build(key, link_bandwidth):
        if when is not None and not when(key):
            return None
        return algorithm(key), topology(key, link_bandwidth, hop_latency), wire_bytes

    return build


def rank_label(key) -> str:
    """A calculator's name of a ranks setting: ``"8"``, or ``"4×4"`` for a torus shape."""
    if isinstance(key, (tuple, list)):
        return "×".join(str(int(k)) for k in key)
    return str(int(key))


def compute_grid(
    collective: str,
    cases: Mapping[str, Callable],
    ranks: Sequence,
    link_bandwidths,
    sizes: Sequence[int] = DEFAULT_SIZES,
) -> Grid:
    """The labelled grid of :func:`collectives.cost.time_grid`: ``cases[name](rank_key,
    link_bandwidth) -> (schedule, topology)``, or ``(schedule, topology, wire_bytes)`` (see
    :func:`case`), or ``None`` where the case does not apply, for every ``ranks`` key (a
    ``{label: key}`` mapping names them), link speed (``{label: bytes/s}`` names them) and
    buffer size. Raises :class:`~collectives.CollectivesError` on an empty or bad grid."""
    if isinstance(ranks, Mapping):
        rank_labels, ranks = tuple(str(k) for k in ranks), list(ranks.values())
    else:
        rank_labels = tuple(rank_label(k) for k in ranks)
    if isinstance(link_bandwidths, Mapping):
        bw_labels = tuple(link_bandwidths)
        bws = tuple(link_bandwidths.values())
    else:
        bws = tuple(link_bandwidths)
        bw_labels = None
    names = tuple(cases)
    steps = np.full((len(names), len(ranks)), np.nan)
    built_last: dict[str, tuple] = {}

    def recording(c, name):
        def build(key, link_bandwidth):
            built = cases[name](ranks[key.index], link_bandwidth)
            if built is not None:
                steps[c, key.index] = data_steps(built[0])
                built_last[name] = built
            return built

        return build

    recorded = {name: recording(c, name) for c, name in enumerate(names)}
    timed = time_grid(collective, recorded, [_Key(k, r) for k, r in enumerate(ranks)], bws, sizes)
    link_latency, message_latency = [], []
    for name in names:
        if name not in built_last:
            raise CollectivesError(f"case {name!r} applies at none of the ranks settings")
        schedule, topology = built_last[name][:2]
        link_latency.append(_link_latencies(topology))
        message_latency.append(
            float(np.max(time(schedule, topology, 1.0).step_latency, initial=0.0))
        )
    if bw_labels is None:
        bw_labels = tuple(f"{v / 1e9:g} GB/s" for v in timed.link_bandwidths)
    return Grid(
        collective,
        tuple(cases),
        rank_labels,
        timed.group_sizes,
        bw_labels,
        timed.link_bandwidths,
        timed.sizes,
        timed.seconds,
        timed.busbw,
        steps,
        tuple(link_latency),
        tuple(message_latency),
    )


@dataclass(frozen=True)
class _Key:
    """A ranks setting as :func:`compute_grid` hands it to ``time_grid``: its index, and the
    key itself for messages."""

    index: int
    key: object

    def __repr__(self) -> str:
        return repr(self.key)


def _link_latencies(topology) -> tuple[tuple[str, float], ...]:
    """``((level, seconds), ...)``: each link level of ``topology`` and the latency of its
    first link (the builders give every link of a level one latency)."""
    levels = topology.info.levels
    found: dict[str, float] = {}
    for level, latency in zip(topology.link_level.tolist(), topology.link_latency.tolist()):
        found.setdefault(levels[level] if level < len(levels) else str(level), float(latency))
    return tuple(found.items())


def data_steps(schedule) -> int:
    """The steps of ``schedule`` that move data between ranks (a step of local copies only
    sends no message)."""
    return int(sum(run.repeat for run in schedule.traffic.runs if np.any(run.src != run.dst)))


def model_text(grid: Grid, latencies: Mapping[str, float] | None = None) -> str:
    """The calculator's line on what it models: the cost model, each case's latency per link
    and per message (cases with the same latencies named together), the latency control
    (and where its settings come from, when they are :data:`DEFAULT_LATENCIES`)."""
    groups: dict[tuple, list[str]] = {}
    for name, links, message in zip(grid.algorithms, grid.link_latency, grid.message_latency):
        groups.setdefault((links, message), []).append(name)
    parts = []
    for (links, message), names in groups.items():
        by_value: dict[float, list[str]] = {}
        for level, latency in links:
            by_value.setdefault(latency, []).append(level)
        if not any(by_value):
            parts.append(f"{', '.join(names)}: none on any link (bytes over bandwidth alone)")
            continue
        hops = ", ".join(
            f"{format_latency(v)} per {'' if levels == ['link'] else '/'.join(levels) + ' '}link"
            for v, levels in sorted(by_value.items(), reverse=True)
        )
        parts.append(
            f"{', '.join(names)}: {hops}, so {format_latency(message)} for the slowest message "
            "of a step"
        )
    return (
        "Modelled with cl.time: a step takes the latency of its slowest path plus the bytes "
        "on its busiest link over that link's bandwidth (transfers that share a link share "
        "its bandwidth). Latency in the topologies: " + "; ".join(parts) + ". The latency "
        "setting adds its α to every step that moves data (one message per rank per step)"
        + (
            "; its NCCL values are what NCCL 2.30.7's tuner assumes for one ring step over "
            "NVLink or the network, with its LL (small messages) or Simple protocol"
            if latencies is not None and dict(latencies) == DEFAULT_LATENCIES
            else ""
        )
        + ". Left out: protocol overheads, overlap between steps, the time to reduce."
    )


#: tick mantissas of the log time axis, tried in turn until three ticks span the values shown
TIME_TICK_MANTISSAS = ((1,), (1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9))


def time_axis(seconds) -> tuple[list[float], list[float] | None]:
    """The ticks and the range of a calculator's log time axis over the ``seconds`` shown
    (NaN and None left out): powers of ten where three of them span the values, else 1, 2
    and 5 per decade, else every digit; the range runs from the tick at or below the smallest
    value to the tick at or above the largest (a little beyond), so that every axis labels
    between two and fifteen ticks, however flat its lines. Returns ``(ticks, [log10 low,
    log10 high])``, or ``([], None)`` when nothing is shown. ``_static/calculators.js``
    chooses the same ticks (``timeAxis``)."""
    values = np.array([x for x in np.ravel(np.asarray(seconds, dtype=float)) if x > 0])
    values = values[np.isfinite(values)]
    if not values.size:
        return [], None
    lo, hi = float(values.min()), float(values.max())
    for mantissas in TIME_TICK_MANTISSAS:
        exponents = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
        # m / 10**-e rather than m * 10**e: 5e-06, not 4.9999999999999996e-06
        candidates = sorted(
            m * 10.0**e if e >= 0 else m / 10.0**-e for e in exponents for m in mantissas
        )
        below = max(c for c in candidates if c <= lo * (1 + 1e-9))
        above = min(c for c in candidates if c >= hi * (1 - 1e-9) and c > below)
        ticks = [c for c in candidates if below <= c <= above]
        if len(ticks) >= 3:
            break
    low, high = math.log10(below), math.log10(above)
    pad = 0.03 * (high - low)
    return ticks, [low - pad, high + pad]


def busbw_range(values) -> list[float]:
    """The range of a calculator's linear busbw axis over the values shown: from 0 to a
    little above the largest (``[0, 1]`` when there is none), so that a flat line gets
    ticks too (Plotly's own range around a constant shows one). ``_static/calculators.js``
    does the same."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    top = float(finite.max()) if finite.size else 0.0
    return [0.0, 1.08 * top if top > 0 else 1.0]


def _nan_to_none(a: np.ndarray):
    return [None if not np.isfinite(x) else float(x) for x in a]


class Calculator:
    """A precomputed calculator: ``_repr_html_`` is the offline page block; :meth:`figure` the
    Plotly figure at one setting; :meth:`readout` the numbers a reader sees at one setting."""

    def __init__(
        self,
        grid: Grid,
        title: str,
        rank_index: int,
        bandwidth_index: int,
        size_index: int,
        metric: str = "seconds",
        colours: Mapping[str, str] | None = None,
        rank_name: str = "ranks",
        bandwidth_name: str = "link",
        latencies: Mapping[str, float] | None = None,
        latency_index: int = 0,
    ):
        self.grid = grid
        self.latencies = dict(DEFAULT_LATENCIES if latencies is None else latencies)
        self.names = {"rank": rank_name, "bandwidth": bandwidth_name}
        self.colours = {a: (colours or {}).get(a) or algorithm_colour(a) for a in grid.algorithms}
        self.title = title
        self.defaults: dict[str, Any] = {
            "rank": rank_index,
            "bandwidth": bandwidth_index,
            "size": size_index,
            "algorithm": -1,
            "metric": metric,
            "latency": latency_index,
        }
        self.id = f"cl-calc-{next(_counter)}"

    # -- the numbers ------------------------------------------------------------------
    def values(self, rank: int, bandwidth: int, latency: int = 0):
        """``(seconds[a, s], busbw[a, s])`` over algorithms and buffer sizes at one setting,
        the latency setting's ``α`` added to every step that moves data: ``t + α k``, and
        busbw scaled by ``t / (t + α k)`` (``_static/calculators.js`` computes the same, in
        the same order, so that both print the same digits)."""
        g = self.grid
        alpha = list(self.latencies.values())[latency]
        t = g.seconds[:, rank, bandwidth, :]
        total = t + alpha * g.steps[:, rank, None]
        return total, g.busbw[:, rank, bandwidth, :] * (t / total)

    def readout(self, rank: int, bandwidth: int, size: int, algorithm: int = -1, latency: int = 0):
        """``[(algorithm, seconds, busbw), ...]`` at one setting (``algorithm=-1``: all;
        ``latency``: the index of the latency setting, 0 by default: none added)."""
        g = self.grid
        seconds, busbw = self.values(rank, bandwidth, latency)
        picked = range(len(g.algorithms)) if algorithm < 0 else [algorithm]
        return [
            (g.algorithms[a], float(seconds[a, size]), float(busbw[a, size]))
            for a in picked
            if np.isfinite(seconds[a, size])
        ]

    def figure(
        self,
        rank: int | None = None,
        bandwidth: int | None = None,
        metric: str | None = None,
        algorithm: int = -1,
        latency: int | None = None,
    ):
        """The Plotly figure: one line per algorithm over buffer size, values on hover (the
        size as the slider names it, in binary units)."""
        import plotly.graph_objects as go

        g, d = self.grid, self.defaults
        rank = d["rank"] if rank is None else rank
        bandwidth = d["bandwidth"] if bandwidth is None else bandwidth
        latency = d["latency"] if latency is None else latency
        metric = metric or d["metric"]
        seconds, busbw = self.values(rank, bandwidth, latency)
        values = seconds if metric == "seconds" else busbw / 1e9
        hover = HOVER[metric]
        size_labels = [format_bytes(s) for s in g.sizes]
        # ticks at every 32x (1 KiB, 32 KiB, 1 MiB, ...) inside the grid, in the slider's units
        ticks = [2**k for k in range(0, 64, 5) if min(g.sizes) <= 2**k <= max(g.sizes)] or list(
            g.sizes
        )
        shown = [a for a in range(len(g.algorithms)) if algorithm in (-1, a)]
        time_ticks, time_range = time_axis(values[shown]) if metric == "seconds" else ([], None)
        fig = go.Figure()
        for a, name in enumerate(g.algorithms):
            fig.add_trace(
                go.Scatter(
                    x=list(g.sizes),
                    y=_nan_to_none(values[a]),
                    customdata=size_labels,
                    name=name,
                    mode="lines+markers",
                    marker={"size": 5},
                    line={"color": self.colours[name], "width": 2.5},
                    visible=True if algorithm in (-1, a) else "legendonly",
                    hovertemplate=f"<b>{html.escape(name)}</b><br>{hover}<extra></extra>",
                )
            )
        fig.update_layout(
            template="none",
            autosize=True,
            height=400,
            margin={"l": 64, "r": 12, "t": 12, "b": 96},
            font={"size": 14, "family": "system-ui, sans-serif"},
            hovermode="closest",
            hoverlabel={"font": {"size": 14}},
            legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
            xaxis={
                "type": "log",
                "title": {"text": "buffer size S"},
                "tickvals": ticks,
                "ticktext": [format_bytes(t) for t in ticks],
                "gridcolor": "#e5e5e5",
            },
            # time: a log axis with the ticks of time_axis; busbw: a linear axis with
            # Plotly's automatic ticks
            # automargin: the left margin grows to fit the widest tick ("100 ms") and the
            # title beside it, which a phone's narrow plot would otherwise overlap
            yaxis={
                "type": "log",
                "automargin": True,
                "title": {"text": "time", "standoff": 6},
                "tickmode": "array",
                "tickvals": time_ticks,
                "ticktext": [format_latency(t) for t in time_ticks],
                "range": time_range,
                "gridcolor": "#e5e5e5",
            }
            if metric == "seconds"
            else {
                "type": "linear",
                "automargin": True,
                "title": {"text": "busbw (GB/s)", "standoff": 6},
                "tickformat": "~g",
                "range": busbw_range(values[shown]),
                "gridcolor": "#e5e5e5",
            },
        )
        return fig

    # -- the offline page block ---------------------------------------------------------
    def data(self) -> dict:
        """Everything ``_static/calculators.js`` needs (JSON-ready)."""
        import plotly.io as pio

        g = self.grid
        return {
            "id": self.id,
            "title": self.title,
            "collective": g.collective,
            "algorithms": list(g.algorithms),
            "colours": [self.colours[a] for a in g.algorithms],
            "ranks": list(g.rank_labels),
            "group_sizes": list(g.group_sizes),
            "bandwidths": list(g.bandwidth_labels),
            "sizes": list(g.sizes),
            "size_labels": [format_bytes(s) for s in g.sizes],
            "seconds": [
                [[_nan_to_none(row) for row in per_r] for per_r in per_a] for per_a in g.seconds
            ],
            "busbw": [
                [[_nan_to_none(row) for row in per_r] for per_r in per_a] for per_a in g.busbw
            ],
            "steps": [_nan_to_none(row) for row in g.steps],
            "latencies": list(self.latencies.values()),
            "latency_labels": list(self.latencies),
            "model": model_text(g, self.latencies),
            "hover": HOVER,
            "defaults": self.defaults,
            "figure": json.loads(pio.to_json(self.figure(), validate=False)),
        }

    def _controls_html(self) -> str:
        g, d, i = self.grid, self.defaults, self.id

        def select(name, label, options, chosen):
            opts = "".join(
                f'<option value="{k}"{" selected" if k == chosen else ""}>{html.escape(o)}</option>'
                for k, o in options
            )
            return (
                f'<label>{label} <select data-control="{name}" id="{i}-{name}">'
                f"{opts}</select></label>"
            )

        def slider(name, label, labels, chosen):
            return (
                f'<label>{label} <input type="range" data-control="{name}" id="{i}-{name}" '
                f'min="0" max="{len(labels) - 1}" step="1" value="{chosen}"> '
                f'<output data-show="{name}">{html.escape(labels[chosen])}</output></label>'
            )

        parts = [
            slider("rank", html.escape(self.names["rank"]), g.rank_labels, d["rank"]),
            slider("size", "buffer S", [format_bytes(s) for s in g.sizes], d["size"]),
            select(
                "bandwidth",
                html.escape(self.names["bandwidth"]),
                list(enumerate(g.bandwidth_labels)),
                d["bandwidth"],
            ),
            select(
                "algorithm",
                "algorithm",
                [(-1, "all")] + list(enumerate(g.algorithms)),
                d["algorithm"],
            ),
            select(
                "latency",
                "latency +",
                list(enumerate(self.latencies)),
                d["latency"],
            ),
            select(
                "metric", "plot", [("seconds", "time"), ("busbw", "bus bandwidth")], d["metric"]
            ),
        ]
        return "".join(parts)

    def _readout_html(self) -> str:
        d = self.defaults
        rows = "".join(
            f'<tr><th scope="row">{html.escape(a)}</th><td>{format_seconds(t)}</td>'
            f"<td>{format_rate(b)}</td></tr>"
            for a, t, b in self.readout(
                d["rank"], d["bandwidth"], d["size"], d["algorithm"], d["latency"]
            )
        )
        return (
            '<table class="cl-calc-readout"><thead><tr><th scope="col">algorithm</th>'
            '<th scope="col">time</th><th scope="col">busbw</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )

    def _repr_html_(self) -> str:
        payload = json.dumps(self.data(), separators=(",", ":"), allow_nan=False)
        payload = payload.replace("</", "<\\/")
        return (
            f'<div class="cl-calculator" id="{self.id}">'
            f'<p class="cl-calc-title">{html.escape(self.title)}</p>'
            f'<div class="cl-calc-controls">{self._controls_html()}</div>'
            f'<p class="cl-calc-model">{html.escape(model_text(self.grid, self.latencies))}</p>'
            f"{self._readout_html()}"
            f'<div class="cl-calc-plot" id="{self.id}-plot" role="img" '
            f'aria-label="{html.escape(self.title)}: time or bus bandwidth against buffer '
            f'size, one line per algorithm"></div>'
            f'<script type="application/json" class="cl-calc-data">{payload}</script>'
            "</div>"
        )

    # -- live kernel ------------------------------------------------------------------
    def widget(self):
        """The same calculator as ipywidgets (for a live kernel): the controls update the
        readout table and redraw the Plotly figure."""
        import ipywidgets as w
        from IPython.display import display

        g, d = self.grid, self.defaults
        rank = w.SelectionSlider(
            options=[(lab, k) for k, lab in enumerate(g.rank_labels)],
            value=d["rank"],
            description=self.names["rank"],
        )
        size = w.SelectionSlider(
            options=[(format_bytes(s), k) for k, s in enumerate(g.sizes)],
            value=d["size"],
            description="buffer S",
        )
        bandwidth = w.Dropdown(
            options=[(lab, k) for k, lab in enumerate(g.bandwidth_labels)],
            value=d["bandwidth"],
            description=self.names["bandwidth"],
        )
        algorithm = w.Dropdown(
            options=[("all", -1)] + [(a, k) for k, a in enumerate(g.algorithms)],
            value=-1,
            description="algorithm",
        )
        metric = w.Dropdown(
            options=[("time", "seconds"), ("bus bandwidth", "busbw")],
            value=d["metric"],
            description="plot",
        )
        latency = w.Dropdown(
            options=[(label, k) for k, label in enumerate(self.latencies)],
            value=d["latency"],
            description="latency +",
        )
        readout = w.HTML()
        plot = w.Output()

        def update(_change=None):
            self.defaults: dict[str, Any] = {
                "rank": rank.value,
                "bandwidth": bandwidth.value,
                "size": size.value,
                "algorithm": algorithm.value,
                "metric": metric.value,
                "latency": latency.value,
            }
            readout.value = self._readout_html()
            plot.clear_output(wait=True)
            with plot:
                display(
                    self.figure(
                        rank.value, bandwidth.value, metric.value, algorithm.value, latency.value
                    )
                )

        for control in (rank, size, bandwidth, algorithm, latency, metric):
            control.observe(update, names="value")
        update()
        model = w.HTML(f"<p>{html.escape(model_text(g, self.latencies))}</p>")
        box = w.VBox([rank, size, bandwidth, algorithm, latency, metric, model, readout, plot])
        box.controls = {
            "rank": rank,
            "size": size,
            "bandwidth": bandwidth,
            "algorithm": algorithm,
            "metric": metric,
            "latency": latency,
        }
        box.readout = readout
        return box


def calculator(
    collective: str,
    cases: Mapping[str, Callable],
    ranks: Sequence,
    link_bandwidths,
    sizes: Sequence[int] = DEFAULT_SIZES,
    title: str | None = None,
    rank: int | None = None,
    size: int | None = None,
    bandwidth: int = 0,
    metric: str = "seconds",
    colours: Mapping[str, str] | None = None,
    rank_name: str = "ranks",
    bandwidth_name: str = "link",
    live: bool = False,
    latencies: Mapping[str, float] | None = None,
    latency: int = 0,
):
    """A calculator of ``collective`` over ``cases`` (see the module's example). ``rank``,
    ``size`` and ``bandwidth`` are the indices shown first (default: the middle rank count,
    the size closest to 1 MiB, the first link speed). Returns a :class:`Calculator` (static,
    offline) or, with ``live=True``, its ipywidgets version. Lines take the book's colour of
    each algorithm (:func:`~collectives.viz.style.algorithm_colour`) unless ``colours`` names
    one. ``rank_name`` and ``bandwidth_name`` label those two controls. ``latencies``
    (``{label: seconds}``, :data:`DEFAULT_LATENCIES` by default) are the latency control's
    settings, each added to every step that moves data, and ``latency`` the index of the one
    shown first (default 0: the first, "none" by default)."""
    if metric not in ("seconds", "busbw"):
        raise CollectivesError(f"metric must be 'seconds' or 'busbw', got {metric!r}")
    grid = compute_grid(collective, cases, ranks, link_bandwidths, sizes)
    rank = len(grid.rank_labels) // 2 if rank is None else rank
    if size is None:
        size = int(np.argmin(np.abs(np.log2(grid.sizes) - 20)))
    latencies = dict(DEFAULT_LATENCIES if latencies is None else latencies)
    for label, value in latencies.items():
        if not (isinstance(value, (int, float)) and np.isfinite(value) and value >= 0):
            raise CollectivesError(f"latency {label!r} must be finite seconds >= 0, got {value!r}")
    for name, index, count in (
        ("rank", rank, len(grid.rank_labels)),
        ("size", size, len(grid.sizes)),
        ("bandwidth", bandwidth, len(grid.bandwidths)),
        ("latency", latency, len(latencies)),
    ):
        if not 0 <= index < count:
            raise CollectivesError(f"{name} index {index} is outside 0..{count - 1}")
    title = title or f"{grid.collective.replace('_', '-')}: time and bus bandwidth"
    calc = Calculator(
        grid,
        title,
        rank,
        bandwidth,
        size,
        metric,
        colours,
        rank_name,
        bandwidth_name,
        latencies,
        latency,
    )
    return calc.widget() if live else calc
