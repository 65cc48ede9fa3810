"""A Schedule step by step: a figure with one row per step, a JavaScript animation and a
widget stepper, all of which still work in the static book.

Each frame shows the step's transfers on the wiring (:func:`~collectives.viz.wiring.draw_topology`,
any Topology) beside every buffer after the step (:func:`~collectives.viz.buffers.draw_buffers`,
from :func:`collectives.trace`). :func:`animate` returns a matplotlib animation whose
``to_jshtml()`` plays without a kernel; :func:`stepper` draws every frame once, up front, into
an ipywidgets ``Tab`` that switches in the browser. The frame machinery is general
(:func:`frame_animation`, :func:`frame_stepper` take any function that draws frame ``i``), so
figures of other kinds (link loads step by step, a timeline) animate the same way.
matplotlib and ipywidgets are imported inside the functions. Taught from chapter "Cost models
and the ring all-gather" on.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import CollectivesError
from ..replay import trace
from .buffers import draw_buffers
from .style import FIG_WIDTH
from .wiring import draw_topology, frame_limits, wiring_of

__all__ = [
    "draw_schedule",
    "PHONE_TABS",
    "chosen_frames",
    "step_title",
    "check_step_titles",
    "frame_figure",
    "draw_frame",
    "frame_titles",
    "animate",
    "stepper",
    "frame_animation",
    "frame_stepper",
    "figure_png",
    "PANEL_WIDTH",
    "panel_figsize",
    "panel_figure",
    "TITLE_ROOM",
]


def step_title(k: int, step_titles=None) -> str:
    """The wiring's title in the frame after step ``k`` (-1: the start): "step k", or
    "step k: " and ``step_titles[k]`` when titles are given (one per step)."""
    if k < 0:
        return "start"
    if step_titles is None:
        return f"step {k}"
    return f"step {k}: {step_titles[k]}"


def check_step_titles(schedule, step_titles):
    """``step_titles`` as a tuple of strings, one per step of ``schedule`` (None stays
    None); raises :class:`~collectives.CollectivesError` otherwise."""
    if step_titles is None:
        return None
    titles = tuple(step_titles)
    if len(titles) != schedule.n_steps or not all(isinstance(t, str) for t in titles):
        raise CollectivesError(
            f"step_titles must be {schedule.n_steps} strings, one per step of "
            f"{schedule.name}, got {len(titles)}"
        )
    return titles


#: the most tabs a stepper's tab bar fits in a phone's 390-pixel page without clipping their
#: titles: the column is 354 pixels wide and "step 13" needs a tab of about 75 (6 tabs fit
#: while every step number has one digit)
PHONE_TABS = 5


def chosen_frames(schedule, steps=None) -> list[int]:
    """The frames (states of :func:`collectives.trace`: 0 before step 0, ``k + 1`` after
    step ``k``) that show ``steps`` of ``schedule``: the start, then each chosen step in
    order (default every step). Raises :class:`~collectives.CollectivesError` for a step
    the schedule does not have."""
    if steps is None:
        return list(range(schedule.n_steps + 1))
    chosen = sorted({int(k) for k in steps})
    if not chosen or chosen[0] < 0 or chosen[-1] >= schedule.n_steps:
        raise CollectivesError(
            f"steps must be steps 0..{schedule.n_steps - 1} of {schedule.name}, got {list(steps)}"
        )
    return [0] + [k + 1 for k in chosen]


def frame_titles(n_frames: int) -> list[str]:
    """ "start", "step 0", "step 1", ...: the names of a schedule's frames."""
    return ["start"] + [f"step {k}" for k in range(n_frames - 1)]


def draw_schedule(
    schedule,
    topology=None,
    steps=None,
    figsize_per_row=(7.5, 2.2),
    *,
    placement=None,
    switch_placement=None,
    levels=None,
    layout=None,
):
    """One row per step: (left) the step's transfers on ``topology``, (right) every
    buffer after the step. The first row is the starting state. ``placement``,
    ``switch_placement``: where the ranks run (as in :func:`collectives.time`); ``levels``:
    the link levels drawn, or a whole ``layout`` (:func:`~collectives.viz.wiring.wiring_of`:
    chips, a window of a cluster's nodes). Returns the Figure."""
    import matplotlib.pyplot as plt

    states = trace(schedule)
    shown = list(range(schedule.n_steps)) if steps is None else list(steps)
    rows = 1 + len(shown)
    cols = 2 if topology is not None else 1
    w, h = figsize_per_row
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(w if cols == 2 else w / 1.6, h * rows),
        squeeze=False,
        gridspec_kw={"width_ratios": [1, 1.6]} if cols == 2 else None,
    )
    if layout is None and topology is not None:
        layout = wiring_of(topology, levels)
    for row, k in enumerate([None] + shown):
        state = states[0 if k is None else k + 1]
        label = "before step 0" if k is None else f"after step {k}"
        if topology is not None:
            draw_topology(
                topology,
                step=k,
                schedule=schedule if k is not None else None,
                ax=axes[row, 0],
                title="start" if k is None else f"step {k}",
                placement=placement,
                switch_placement=switch_placement,
                layout=layout,
            )
        draw_buffers(schedule, state, ax=axes[row, -1], title=label)
    fig.tight_layout()
    return fig


#: the width (inches) of a frame that draws planes of a torus or slices of a multislice
#: alone: the book's one-column width, whose text stays legible on a phone
PANEL_WIDTH = FIG_WIDTH


def panel_figsize(layout, width: float = PANEL_WIDTH) -> tuple[float, float]:
    """(width, height) in inches of a figure whose one axes (:func:`panel_figure`) draws
    ``layout`` (a Wiring whose nodes sit in panels: the planes of a torus, the slices of a
    multislice) at its own aspect ratio, with :data:`TITLE_ROOM` above it for a title."""
    left, right, bottom, top = frame_limits(layout)
    drawing = width * (top - bottom) / (right - left)
    return width, float(np.clip(drawing + TITLE_ROOM, 2.4, 1.6 * width))


#: inches above a panel figure's axes, for its title
TITLE_ROOM = 0.4


def panel_figure(layout, width: float = PANEL_WIDTH):
    """A figure of one axes for ``layout`` drawn alone (:func:`panel_figsize`), the axes
    filling it but for the title. Returns (figure, axes of shape (1, 1))."""
    import matplotlib.pyplot as plt

    size = panel_figsize(layout, width)
    fig, axes = plt.subplots(1, 1, figsize=size, squeeze=False)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=1 - TITLE_ROOM / size[1])
    return fig, axes


def frame_figure(schedule, topology=None, buffers: bool = True, layout=None):
    """The figure of one frame: the topology (if any) and the buffers side by side, or the
    topology above the buffers when a rank's buffer has many slots (the buffer panel gets
    about 0.3 inch per slot) or the topology is drawn wide or tier by tier (a cluster's
    rows of NICs and switches); the wiring alone (``buffers=False``) of a layout in panels
    (planes of a torus, slices of a multislice) at the layout's aspect ratio
    (:func:`panel_figsize`). Returns (figure, axes) with axes of shape (1, 2) (the
    buffers in ``axes[0, -1]``), or (1, 1) with one panel."""
    import matplotlib.pyplot as plt

    buffers_width = max(4.8, 0.3 * schedule.n_chunks + 1.2)
    if topology is None:
        return plt.subplots(1, 1, figsize=(buffers_width, 3.2), squeeze=False)
    lay = layout or wiring_of(topology)
    if not buffers and lay.panels and not lay.rows:
        return panel_figure(lay)
    if not buffers:
        wide = lay.width > 8
        # a wide cluster stretches to any width: 5 inches keep its text legible on a phone
        width = (5.0 if lay.rows else 7.0) if wide else 4.6
        return plt.subplots(1, 1, figsize=(width, 3.6 if wide else 3.4), squeeze=False)
    if buffers_width <= 6 and lay.width <= 8 and not lay.rows:
        return plt.subplots(
            1,
            2,
            figsize=(buffers_width + 3.2, 3.2),
            squeeze=False,
            gridspec_kw={"width_ratios": [3.2, buffers_width]},
        )
    # a cluster's tiers above a buffer grid: both get room to be read, in a frame narrow
    # enough that its text stays legible on a phone
    width, height, ratios = (
        (max(buffers_width, 5.0), 6.4, [1.15, 1])
        if lay.rows
        else (max(buffers_width, 6.4), 5.4, [1.3, 1])
    )
    fig, axes = plt.subplots(2, 1, figsize=(width, height), gridspec_kw={"height_ratios": ratios})
    return fig, axes.reshape(1, 2)


def draw_frame(
    schedule,
    topology,
    states,
    i,
    axes,
    *,
    placement=None,
    switch_placement=None,
    layout=None,
    buffers: bool = True,
    step_titles=None,
):
    """Frame ``i`` (0: before step 0) into ``axes`` (from :func:`frame_figure`);
    ``step_titles``: a title per step for the wiring (default "step k")."""
    k = i - 1
    if topology is not None:
        draw_topology(
            topology,
            step=k if k >= 0 else None,
            schedule=schedule,
            ax=axes[0, 0],
            title=step_title(k, step_titles),
            placement=placement,
            switch_placement=switch_placement,
            layout=layout,
        )
    if buffers or topology is None:
        draw_buffers(
            schedule,
            states[i],
            ax=axes[0, -1],
            title="before step 0" if k < 0 else f"after step {k}",
        )


def frame_animation(
    draw: Callable[[int, object], None], n_frames: int, figure, axes, interval: int = 900
):
    """A matplotlib animation of ``n_frames`` frames: before frame ``i`` every axes of
    ``axes`` (an array) is cleared, then ``draw(i, axes)`` draws it. The figure is closed
    (the animation keeps it); ``to_jshtml()`` gives a player that needs no kernel."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    def frame(i):
        for ax in axes.ravel():
            ax.clear()
        draw(i, axes)
        return []

    anim = FuncAnimation(figure, frame, frames=n_frames, interval=interval, blit=False)
    plt.close(figure)
    return anim


def figure_png(figure, dpi: Optional[float] = None) -> bytes:
    """``figure`` as PNG bytes (at ``dpi``, default the figure's), then closed."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    plt.close(figure)
    return buffer.getvalue()


def frame_stepper(render: Callable[[int], bytes], titles: Sequence[str]):
    """One tab per frame (``render(i)``: PNG bytes of frame ``i``), named by ``titles``;
    every frame is rendered once, up front, and switching tabs happens in the browser, so
    the stepper works in the static book as well as in a live kernel (a slider linked with
    ``jslink`` would not: the book's embedded widget manager does not run links)."""
    import ipywidgets as widgets

    frames = [
        widgets.Image(
            value=render(i), format="png", layout=widgets.Layout(max_width="100%", height="auto")
        )
        for i in range(len(titles))
    ]
    return widgets.Tab(frames, selected_index=0, titles=list(titles))


def animate(
    schedule,
    topology=None,
    interval=900,
    *,
    placement=None,
    switch_placement=None,
    buffers: bool = True,
    levels=None,
    layout=None,
    step_titles=None,
    steps=None,
):
    """A matplotlib animation of the whole schedule (or of the chosen ``steps``), one frame
    per step (the starting state first), on any ``topology`` (ranks placed by ``placement`` /
    ``switch_placement`` as in :func:`collectives.time`; ``buffers=False``: the wiring
    alone, for schedules too large for their buffers to be read; ``levels``: the link
    levels drawn, or a whole ``layout`` from :func:`~collectives.viz.wiring.wiring_of`,
    with a switch's chips or a window of a cluster's nodes; ``step_titles``: one title per
    step, after "step k: "). In a notebook,
    ``IPython.display.HTML(animate(...).to_jshtml())`` plays in the static book without a
    kernel."""
    states = trace(schedule)
    step_titles = check_step_titles(schedule, step_titles)
    if layout is None and topology is not None:
        layout = wiring_of(topology, levels)
    fig, axes = frame_figure(schedule, topology, buffers, layout)
    frames = chosen_frames(schedule, steps)

    def draw(i, axes):
        draw_frame(
            schedule,
            topology,
            states,
            frames[i],
            axes,
            placement=placement,
            switch_placement=switch_placement,
            layout=layout,
            buffers=buffers,
            step_titles=step_titles,
        )

    return frame_animation(draw, len(frames), fig, axes, interval)


def stepper(
    schedule,
    topology=None,
    dpi=80,
    *,
    placement=None,
    switch_placement=None,
    buffers: bool = True,
    levels=None,
    layout=None,
    step_titles=None,
    steps=None,
):
    """One tab per step of ``schedule`` (the starting state first) showing every buffer and,
    with ``topology``, the step's transfers; click a tab to step (:func:`frame_stepper`).
    ``placement``, ``switch_placement``, ``buffers``, ``levels``, ``layout`` and
    ``step_titles`` as in :func:`animate`; ``steps``: only these steps' frames (a tab bar
    fits :data:`PHONE_TABS` tabs on a phone; each tab says which step it shows). Returns
    the ipywidgets ``Tab``; display it (the last line of a cell does)."""
    states = trace(schedule)
    step_titles = check_step_titles(schedule, step_titles)
    if layout is None and topology is not None:
        layout = wiring_of(topology, levels)

    frames = chosen_frames(schedule, steps)

    def render(i):
        fig, axes = frame_figure(schedule, topology, buffers, layout)
        draw_frame(
            schedule,
            topology,
            states,
            frames[i],
            axes,
            placement=placement,
            switch_placement=switch_placement,
            layout=layout,
            buffers=buffers,
            step_titles=step_titles,
        )
        return figure_png(fig, dpi)

    return frame_stepper(render, [frame_titles(len(states))[i] for i in frames])
