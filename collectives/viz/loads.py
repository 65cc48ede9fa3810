"""Link loads drawn on the wiring: how much every link of a Topology carries, over a whole
Schedule or in one step, as hot cables.

:func:`draw_link_loads` draws any Topology as :func:`~collectives.viz.wiring.wiring_of`
places it (chips, a window of a cluster's nodes and levels included) with every line
coloured and thickened by its load: a per-link array the model computed, e.g.
:attr:`collectives.Timing.link_bytes` (a whole schedule), :func:`collectives.cost.step_link_bytes`
(one step, routed and placed as :func:`collectives.time` does), those bytes over
``topology.link_bandwidth`` (seconds a link is busy: the hottest links are the level that
bounds the time) or :func:`collectives.fabric.link_loads` (flows). A line stands for the
two directions of a cable and for parallel cables between the same two nodes, so it shows
the busiest of them (:func:`line_loads`); idle lines stay thin and grey. The lines of a
switch drawn as chips show the load of the link they split (each chip carries its share of
the bytes over its share of the links, the same utilisation). :func:`load_stepper` and
:func:`animate_loads` step through a schedule's link loads, one frame per step, on
:mod:`collectives.viz.animation`'s frame machinery (every frame on the same scale). Nothing
here computes a load; matplotlib is imported inside the functions. Taught in chapters "GPU
nodes and clusters", "Collectives inside a node" and "Collectives across nodes".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from ..cost import step_link_bytes
from ..errors import CollectivesError
from ..topology import ROLES, Topology
from .animation import check_step_titles, figure_png, frame_animation, frame_stepper, step_title
from .style import FRAME_WIDTH, font_size
from .wiring import Wiring, draw_wiring, points_per_unit, wiring_of

__all__ = [
    "LOAD_CMAP",
    "loads_arg",
    "IDLE_COLOUR",
    "FAILED_COLOUR",
    "line_loads",
    "load_colour",
    "draw_link_loads",
    "load_colourbar",
    "step_loads",
    "load_stepper",
    "load_description",
    "animate_loads",
]

#: the colour map of loads: the upper three quarters of matplotlib's "YlOrRd" (yellow to dark
#: red, lightness falling with the load, so it reads without colour vision too)
LOAD_CMAP = "YlOrRd"
_CMAP_RANGE = (0.25, 1.0)
#: colour of a line that carries nothing
IDLE_COLOUR = "0.85"


def _cmap():
    import matplotlib
    from matplotlib.colors import LinearSegmentedColormap

    base = matplotlib.colormaps[LOAD_CMAP]
    lo, hi = _CMAP_RANGE
    return LinearSegmentedColormap.from_list("loads", base(np.linspace(lo, hi, 256)))


def load_colour(fraction):
    """The colour of a load ``fraction`` of the scale's top (0..1; 0 is the palest): an RGBA
    tuple, or for an array of fractions an array of RGBA rows of its shape plus (4,)."""
    if np.ndim(fraction) == 0:
        return _cmap()(float(np.clip(fraction, 0.0, 1.0)))
    return _cmap()(np.clip(np.asarray(fraction, dtype=float), 0.0, 1.0))


def loads_arg(topology, loads):
    """``loads`` as a float array, one finite non-negative value per link of ``topology``, or a
    :class:`~collectives.CollectivesError` saying what is wrong."""
    if not isinstance(topology, Topology):
        raise CollectivesError(f"expected a collectives Topology, got {type(topology).__name__}")
    try:
        values = np.asarray(loads, dtype=float)
    except (TypeError, ValueError):
        raise CollectivesError("loads must be numbers, one per link of the topology") from None
    if values.shape != (topology.n_links,):
        raise CollectivesError(
            f"loads must have one value per link of {topology.name} ({topology.n_links}), "
            f"got shape {values.shape}"
        )
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise CollectivesError("loads must be finite and >= 0")
    return values


def line_loads(topology: Topology, loads, layout: Optional[Wiring] = None) -> dict:
    """What each line of the drawing shows: ``{(u, v): load}`` for every pair of drawn nodes
    ``u < v`` joined by a link the layout does not hide, the load being the largest of
    ``loads`` (one per link) over the links between them, both directions and parallel
    cables."""
    values = loads_arg(topology, loads)
    lay = layout or wiring_of(topology)
    pos = lay.positions
    out: dict = {}
    for i, (u, v) in enumerate(zip(topology.link_src.tolist(), topology.link_dst.tolist())):
        if lay.hidden is not None and lay.hidden[i]:
            continue
        if np.isnan(pos[[u, v], 0]).any() or lay.arc[i] or lay.stub[i].any():
            continue
        key = (min(u, v), max(u, v))
        out[key] = max(out.get(key, 0.0), float(values[i]))
    return out


def draw_link_loads(
    topology: Topology,
    loads,
    ax=None,
    *,
    layout: Optional[Wiring] = None,
    unit: float = 1.0,
    unit_label: str = "bytes",
    vmax: Optional[float] = None,
    title: Optional[str] = None,
    colorbar: bool = True,
    vmin: float = 0.0,
):
    """``topology``'s wiring with every line coloured and thickened by its load (``loads``:
    one number per link, in any unit; drawn divided by ``unit`` on a scale from ``vmin``,
    default 0, to ``vmax``, default the largest; a load at or below ``vmin`` gets the
    palest colour): the busiest of the links it stands for (:func:`line_loads`); idle
    lines thin and grey; on a fabric after :meth:`~collectives.topology.Cluster.fail`, the
    failed cables dashed black with a cross. ``layout`` from
    :func:`~collectives.viz.wiring.wiring_of` (chips, a window of nodes, levels);
    ``colorbar``: a colour bar labelled ``unit_label`` below the drawing (several panels on
    one scale share one with :func:`load_colourbar`). Returns the Axes."""
    import matplotlib.pyplot as plt

    values = loads_arg(topology, loads)
    if not (isinstance(unit, (int, float)) and np.isfinite(unit) and unit > 0):
        raise CollectivesError(f"unit must be a number > 0, got {unit!r}")
    ax = ax or plt.gca()
    lay = layout or wiring_of(topology)
    per_line = line_loads(topology, values, lay)
    top = max(per_line.values(), default=0.0) / unit if vmax is None else float(vmax)
    if not np.isfinite(top) or top < 0:
        raise CollectivesError(f"vmax must be a number >= 0, got {vmax!r}")
    if not (isinstance(vmin, (int, float)) and 0 <= vmin and (vmin < top or vmin == top == 0)):
        raise CollectivesError(
            f"vmin must be a number from 0 to below vmax ({top:g}), got {vmin!r}"
        )
    nodes_only = replace(lay, hidden=np.ones(topology.n_links, bool))
    draw_wiring(topology, ax=ax, layout=nodes_only, title=title)
    pos = lay.positions
    r_end = lay.radius * points_per_unit(ax)
    base = float(np.clip(r_end / 5, 0.6, 2.0))
    for (u, v), load in sorted(per_line.items(), key=lambda item: item[1]):
        fraction = max(load / unit - vmin, 0.0) / (top - vmin) if top > vmin else 0.0
        colour = IDLE_COLOUR if load <= 0 else load_colour(fraction)
        line = base * (0.7 if load <= 0 else 1.0 + 2.2 * min(fraction, 1.0))
        split = lay.chips_of(u) or lay.chips_of(v)
        if split is None:
            ax.plot(*pos[[u, v]].T, color=colour, linewidth=line, zorder=1.5 + fraction)
            continue
        other = v if split.switch == u else u
        for xy, share in zip(split.positions, split.shares):
            ax.plot(
                *np.stack([pos[other], xy]).T,
                color=colour,
                linewidth=line * share * len(split.links),
                zorder=1.5 + fraction,
            )
    _draw_failed(topology, lay, ax, base)
    if colorbar:
        load_colourbar(ax.figure, [ax], top, unit_label, vmin=vmin)
    return ax


#: colour of a failed cable (dashed, with a cross at its middle)
FAILED_COLOUR = "black"


def _draw_failed(topology, lay, ax, base):
    """Every drawn cable of a fabric after ``Cluster.fail`` (``topology.failed``) as a
    dashed black line with a cross at its middle and the word "failed" beside it (a cross
    alone is a few pixels on a phone)."""
    failed = getattr(topology, "failed", None)
    if failed is None or not np.any(failed):
        return
    pos = lay.positions
    done = set()
    for i in np.flatnonzero(failed).tolist():
        u, v = int(topology.link_src[i]), int(topology.link_dst[i])
        key = (min(u, v), max(u, v))
        hidden = lay.hidden is not None and lay.hidden[i]
        if key in done or hidden or np.isnan(pos[[u, v], 0]).any() or lay.arc[i]:
            continue
        done.add(key)
        ax.plot(*pos[[u, v]].T, color=FAILED_COLOUR, linewidth=base, ls=(0, (3, 2)), zorder=3.5)
        middle = pos[[u, v]].mean(axis=0)
        ax.plot(
            *middle,
            marker="X",
            markersize=max(9.0, 3 * base + 6),
            color=FAILED_COLOUR,
            markeredgecolor="white",
            zorder=3.6,
        )
        ax.annotate(
            "failed",
            middle,
            xytext=(-7, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=font_size("small"),
            color=FAILED_COLOUR,
            zorder=3.6,
        )


def load_colourbar(
    figure, axes: Sequence, vmax: float, unit_label: str, vmin: float = 0.0, pad: float = 0.04
):
    """One horizontal colour bar of the load scale (``vmin``, default 0, to ``vmax``,
    labelled ``unit_label``) below ``axes`` of ``figure``, ``pad`` (a fraction of the axes'
    height) below them: more when the lowest axes has an x label. Returns the colour bar."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    mappable = ScalarMappable(
        norm=Normalize(vmin, vmax if vmax > vmin else vmin + 1.0), cmap=_cmap()
    )
    bar = figure.colorbar(
        mappable,
        ax=list(axes),
        orientation="horizontal",
        fraction=0.06,
        pad=pad,
        aspect=30,
        shrink=0.8,
    )
    bar.set_label(unit_label, fontsize=font_size("small"))
    bar.ax.tick_params(labelsize=font_size("small"))
    return bar


def step_loads(
    schedule, topology: Topology, nbytes: float, steps=None, placement=None, switch_placement=None
):
    """``{step: bytes on every link}`` for the chosen ``steps`` (default all) of
    ``schedule``, from :func:`collectives.cost.step_link_bytes`."""
    shown = list(range(schedule.n_steps)) if steps is None else [int(k) for k in steps]
    return {
        k: step_link_bytes(
            schedule, topology, nbytes, k, placement=placement, switch_placement=switch_placement
        )
        for k in shown
    }


def _frames(schedule, topology, nbytes, steps, placement, switch_placement, layout, unit, titles):
    loads = step_loads(schedule, topology, nbytes, steps, placement, switch_placement)
    titles = check_step_titles(schedule, titles)
    lay = layout or wiring_of(topology)
    unit = nbytes / schedule.n_chunks if unit is None else unit
    top = max((float(v.max()) for v in loads.values() if v.size), default=0.0) / unit
    return loads, titles, lay, unit, top


def _figure(lay):
    import matplotlib.pyplot as plt

    # a frame's width, whose text stays legible on a phone; a wide fabric stretches to it
    return plt.subplots(1, 1, figsize=(FRAME_WIDTH, 4.0 if lay.width > 8 else 3.6), squeeze=False)


def load_stepper(
    schedule,
    topology: Topology,
    nbytes: float,
    steps=None,
    *,
    placement=None,
    switch_placement=None,
    layout: Optional[Wiring] = None,
    unit: Optional[float] = None,
    unit_label: str = "chunks on the link",
    step_titles=None,
    dpi: float = 100,
):
    """One tab per chosen step (``steps``, default all) of ``schedule`` on ``topology``,
    showing the bytes every link carries in that step (:func:`draw_link_loads` of
    :func:`collectives.cost.step_link_bytes`, ranks placed as in :func:`collectives.time`),
    every frame on the same scale; ``unit`` (default one chunk, ``nbytes /
    schedule.n_chunks``: a load of 2 is two chunks on one link in one step). Click a tab to
    step (:func:`~collectives.viz.animation.frame_stepper`). Returns the ipywidgets Tab."""
    loads, titles, lay, unit, top = _frames(
        schedule, topology, nbytes, steps, placement, switch_placement, layout, unit, step_titles
    )

    def render(i):
        k = list(loads)[i]
        fig, axes = _figure(lay)
        draw_link_loads(
            topology,
            loads[k],
            axes[0, 0],
            layout=lay,
            unit=unit,
            unit_label=unit_label,
            vmax=top,
            title=step_title(k, titles),
        )
        return figure_png(fig, dpi)

    descriptions = [load_description(topology, loads[k], k, unit, unit_label) for k in loads]
    return frame_stepper(render, [f"step {k}" for k in loads], descriptions)


def load_description(topology: Topology, link_bytes, k: int, unit: float, unit_label: str) -> str:
    """Step ``k``'s link loads in words, for a screen reader: how many links carry data and
    the busiest one (its ends, its level, its bytes and its load in ``unit``)."""
    link_bytes = np.asarray(link_bytes, dtype=float)
    busy = np.flatnonzero(link_bytes > 0)
    if busy.size == 0:
        return f"step {k}: no link carries data"
    top = int(busy[np.argmax(link_bytes[busy])])
    ties = int(np.count_nonzero(link_bytes == link_bytes[top]))

    def node(v: int) -> str:
        return f"{ROLES[int(topology.node_role[v])]} {v}"

    level = topology.info.levels[int(topology.link_level[top])]
    same = f" (as do {ties - 1} other links)" if ties > 1 else ""
    return (
        f"step {k}: {busy.size} of {topology.n_links} links carry data; the busiest, "
        f"{level} link {node(int(topology.link_src[top]))} to "
        f"{node(int(topology.link_dst[top]))}, carries {link_bytes[top]:.4g} bytes, "
        f"{link_bytes[top] / unit:.3g} {unit_label}{same}"
    )


def animate_loads(
    schedule,
    topology: Topology,
    nbytes: float,
    steps=None,
    *,
    placement=None,
    switch_placement=None,
    layout: Optional[Wiring] = None,
    unit: Optional[float] = None,
    unit_label: str = "chunks on the link",
    step_titles=None,
    interval: int = 900,
):
    """:func:`load_stepper`'s frames as a matplotlib animation (play, pause, step; its
    ``to_jshtml()`` plays in the static book without a kernel)."""
    loads, titles, lay, unit, top = _frames(
        schedule, topology, nbytes, steps, placement, switch_placement, layout, unit, step_titles
    )
    fig, axes = _figure(lay)
    load_colourbar(fig, [axes[0, 0]], top, unit_label)
    order = list(loads)

    def draw(i, axes):
        k = order[i]
        draw_link_loads(
            topology,
            loads[k],
            axes[0, 0],
            layout=lay,
            unit=unit,
            unit_label=unit_label,
            vmax=top,
            title=step_title(k, titles),
            colorbar=False,
        )

    return frame_animation(draw, len(order), fig, axes, interval)
