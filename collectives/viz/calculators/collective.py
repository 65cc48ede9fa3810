"""Calculators a reader can change: time and bus bandwidth of a collective, offline.

A calculator is a grid computed when the book is built by :func:`collectives.cost.time_grid`:
for every algorithm, number of ranks, link speed and buffer size, :func:`collectives.time` on
the algorithm's own topology, and :func:`collectives.busbw` of that time; this module only
labels the grid and draws it. The page shows it with Plotly (values on hover) and
four controls: ranks, buffer size, link speed and algorithm. Moving a control only switches
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
them). What is modelled is exactly what :func:`collectives.time` models; a case that does not
apply to some ranks (a power-of-two algorithm at 12 ranks) returns ``None`` and is left out
there. Taught from chapter "Cost models and the ring all-gather" on.
"""

from __future__ import annotations

import html
import itertools
import json
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ...cost import time_grid
from ...errors import CollectivesError
from ..style import algorithm_colour
from .formats import format_bytes, format_rate, format_seconds

__all__ = [
    "Grid",
    "case",
    "power_of_two",
    "compute_grid",
    "calculator",
    "Calculator",
    "rank_label",
    "DEFAULT_SIZES",
]

#: buffer sizes of a calculator by default: 1 KiB to 1 GiB, every power of two
DEFAULT_SIZES = tuple(2**k for k in range(10, 31))

_counter = itertools.count()


@dataclass(frozen=True)
class Grid:
    """Precomputed results: ``seconds[a, r, b, s]`` and ``busbw[a, r, b, s]`` for algorithm
    ``a``, ranks ``r``, link speed ``b`` and buffer size ``s`` (NaN where a case does not
    apply); ``group_sizes[r]`` is the number of ranks taking part."""

    collective: str
    algorithms: tuple[str, ...]
    rank_labels: tuple[str, ...]
    group_sizes: tuple[int, ...]
    bandwidth_labels: tuple[str, ...]
    bandwidths: tuple[float, ...]
    sizes: tuple[int, ...]
    seconds: np.ndarray
    busbw: np.ndarray


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
    timed = time_grid(collective, cases, ranks, bws, sizes)
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
    )


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
    ):
        self.grid = grid
        self.names = {"rank": rank_name, "bandwidth": bandwidth_name}
        self.colours = {a: (colours or {}).get(a) or algorithm_colour(a) for a in grid.algorithms}
        self.title = title
        self.defaults = {
            "rank": rank_index,
            "bandwidth": bandwidth_index,
            "size": size_index,
            "algorithm": -1,
            "metric": metric,
        }
        self.id = f"cl-calc-{next(_counter)}"

    # -- the numbers ------------------------------------------------------------------
    def readout(self, rank: int, bandwidth: int, size: int, algorithm: int = -1):
        """``[(algorithm, seconds, busbw), ...]`` at one setting (``algorithm=-1``: all)."""
        g = self.grid
        picked = range(len(g.algorithms)) if algorithm < 0 else [algorithm]
        return [
            (
                g.algorithms[a],
                float(g.seconds[a, rank, bandwidth, size]),
                float(g.busbw[a, rank, bandwidth, size]),
            )
            for a in picked
            if np.isfinite(g.seconds[a, rank, bandwidth, size])
        ]

    def figure(
        self,
        rank: int | None = None,
        bandwidth: int | None = None,
        metric: str | None = None,
        algorithm: int = -1,
    ):
        """The Plotly figure: one line per algorithm over buffer size, values on hover."""
        import plotly.graph_objects as go

        g, d = self.grid, self.defaults
        rank = d["rank"] if rank is None else rank
        bandwidth = d["bandwidth"] if bandwidth is None else bandwidth
        metric = metric or d["metric"]
        values = g.seconds if metric == "seconds" else g.busbw / 1e9
        hover = "%{x:.3s}B: %{y:.3s}s" if metric == "seconds" else "%{x:.3s}B: %{y:.3g} GB/s"
        # ticks at every 32x (1 KiB, 32 KiB, 1 MiB, ...) inside the grid, in the slider's units
        ticks = [2**k for k in range(0, 64, 5) if min(g.sizes) <= 2**k <= max(g.sizes)] or list(
            g.sizes
        )
        fig = go.Figure()
        for a, name in enumerate(g.algorithms):
            fig.add_trace(
                go.Scatter(
                    x=list(g.sizes),
                    y=_nan_to_none(values[a, rank, bandwidth]),
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
            yaxis={
                "type": "log" if metric == "seconds" else "linear",
                "title": {"text": "time" if metric == "seconds" else "busbw (GB/s)"},
                "tickformat": "~s" if metric == "seconds" else "~g",
                "dtick": 1 if metric == "seconds" else None,  # log axis: powers of 10
                "ticksuffix": "s" if metric == "seconds" else "",
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
                "metric", "plot", [("seconds", "time"), ("busbw", "bus bandwidth")], d["metric"]
            ),
        ]
        return "".join(parts)

    def _readout_html(self) -> str:
        d = self.defaults
        rows = "".join(
            f'<tr><th scope="row">{html.escape(a)}</th><td>{format_seconds(t)}</td>'
            f"<td>{format_rate(b)}</td></tr>"
            for a, t, b in self.readout(d["rank"], d["bandwidth"], d["size"], d["algorithm"])
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
        readout = w.HTML()
        plot = w.Output()

        def update(_change=None):
            self.defaults = {
                "rank": rank.value,
                "bandwidth": bandwidth.value,
                "size": size.value,
                "algorithm": algorithm.value,
                "metric": metric.value,
            }
            readout.value = self._readout_html()
            plot.clear_output(wait=True)
            with plot:
                display(self.figure(rank.value, bandwidth.value, metric.value, algorithm.value))

        for control in (rank, size, bandwidth, algorithm, metric):
            control.observe(update, names="value")
        update()
        box = w.VBox([rank, size, bandwidth, algorithm, metric, readout, plot])
        box.controls = {
            "rank": rank,
            "size": size,
            "bandwidth": bandwidth,
            "algorithm": algorithm,
            "metric": metric,
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
):
    """A calculator of ``collective`` over ``cases`` (see the module's example). ``rank``,
    ``size`` and ``bandwidth`` are the indices shown first (default: the middle rank count,
    the size closest to 1 MiB, the first link speed). Returns a :class:`Calculator` (static,
    offline) or, with ``live=True``, its ipywidgets version. Lines take the book's colour of
    each algorithm (:func:`~collectives.viz.style.algorithm_colour`) unless ``colours`` names
    one. ``rank_name`` and ``bandwidth_name`` label those two controls."""
    if metric not in ("seconds", "busbw"):
        raise CollectivesError(f"metric must be 'seconds' or 'busbw', got {metric!r}")
    grid = compute_grid(collective, cases, ranks, link_bandwidths, sizes)
    rank = len(grid.rank_labels) // 2 if rank is None else rank
    if size is None:
        size = int(np.argmin(np.abs(np.log2(grid.sizes) - 20)))
    for name, index, count in (
        ("rank", rank, len(grid.rank_labels)),
        ("size", size, len(grid.sizes)),
        ("bandwidth", bandwidth, len(grid.bandwidths)),
    ):
        if not 0 <= index < count:
            raise CollectivesError(f"{name} index {index} is outside 0..{count - 1}")
    title = title or f"{grid.collective.replace('_', '-')}: time and bus bandwidth"
    calc = Calculator(
        grid, title, rank, bandwidth, size, metric, colours, rank_name, bandwidth_name
    )
    return calc.widget() if live else calc
