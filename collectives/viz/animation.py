"""A Schedule step by step: a figure with one row per step, a JavaScript animation and a
widget stepper, all of which still work in the static book.

Each frame shows the step's transfers on the wiring (:func:`~collectives.viz.wiring.draw_topology`,
any Topology) beside every buffer after the step (:func:`~collectives.viz.buffers.draw_buffers`,
from :func:`collectives.trace`). :func:`animate` returns a matplotlib animation whose
``to_jshtml()`` plays without a kernel; :func:`stepper` draws every frame once, up front, into
an ipywidgets ``Tab`` that switches in the browser, each frame an image whose alt text says
what it shows, derived from the Schedule (:func:`schedule_descriptions`: what the buffers
hold at the start; each step's transfers, summarised when long, the link levels it uses and
the buffers complete after it), so a screen reader hears the schedule too; the animation's
player has no per-frame text (matplotlib's ``to_jshtml`` gives none). The frame machinery is general
(:func:`frame_animation`, :func:`frame_stepper` take any function that draws frame ``i``), so
figures of other kinds (link loads step by step, a timeline) animate the same way.
matplotlib and ipywidgets are imported inside the functions. Taught from chapter "Cost models
and the ring all-gather" on.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

import numpy as np

from ..cost import step_link_bytes
from ..errors import CollectivesError
from ..replay import trace
from ..semantics import collective_spec
from .buffers import draw_buffers
from .style import FRAME_WIDTH
from .wiring import draw_topology, frame_limits, row_names_points, wiring_of

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
    "DESCRIPTION_LIMIT",
    "summarised",
    "start_description",
    "step_description",
    "schedule_descriptions",
    "frame_png",
    "frame_description",
    "figure_png",
    "PANEL_WIDTH",
    "panel_figsize",
    "panel_figure",
    "TITLE_ROOM",
    "FRAME_ROOM",
    "FRAME_CELL",
    "FRAME_ROW",
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
#: alone: a stepper frame's width, whose text stays legible on a phone
PANEL_WIDTH = FRAME_WIDTH


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


#: inches of a stacked frame (:func:`frame_figure`) around its drawings: room for a title
#: above each, the buffers' rank names on the left and their slot numbers and label below
FRAME_ROOM = {"title": 0.3, "names": 0.8, "right": 0.1, "ticks": 0.45}

#: the largest side of a buffer cell in a frame (inches); narrower when many slots share
#: the frame's width, but never lower than :data:`FRAME_ROW`, which fits a line of text
FRAME_CELL = 0.4

#: the least height of a buffer row in a frame (inches): a line of the "cell" role
FRAME_ROW = 0.19


def _buffer_cells(schedule) -> tuple[int, int]:
    """(rows, slots) of the buffer grid of ``schedule``: its ranks and switch participants,
    its chunk slots (scratch slots included), as :func:`collectives.trace` gives them."""
    rows, slots = trace(schedule)[0].label.shape
    return int(rows), int(slots)


def frame_figure(schedule, topology=None, buffers: bool = True, layout=None):
    """The figure of one frame, :data:`~collectives.viz.style.FRAME_WIDTH` wide whatever it
    shows, so that its text stays legible on a phone: the topology (if any) above the
    buffers, each with its title; the buffers alone; or the wiring alone (``buffers=False``),
    a layout in panels (planes of a torus, slices of a multislice) at the layout's aspect
    ratio (:func:`panel_figsize`). A buffer cell is at most :data:`FRAME_CELL` inches wide,
    less when many slots share the width, and at least :data:`FRAME_ROW` high. Returns
    (figure, axes) with axes of shape (1, 2) (the buffers in ``axes[0, -1]``), or (1, 1)
    with one panel."""
    import matplotlib.pyplot as plt

    width = FRAME_WIDTH
    rows, slots = _buffer_cells(schedule)
    room = FRAME_ROOM
    across = width - room["names"] - room["right"]
    cell = min(FRAME_CELL, across / slots)
    row = max(cell, FRAME_ROW)
    grid = rows * row + room["title"] + room["ticks"]
    lay = None if topology is None else (layout or wiring_of(topology))
    if lay is not None and not buffers and lay.panels and not lay.rows:
        return panel_figure(lay, width)
    if lay is None:
        wiring = 0.0
    else:  # the wiring at its own aspect ratio, within bounds; a cluster's tiers stretch
        left, right, bottom, top = frame_limits(lay)
        if lay.rows:  # the row names' room, in points whatever the drawing's scale
            names = min(row_names_points(lay), 0.35 * 72 * width)
            span = right - (left + 2.4)
            left = min(left, right - span * 72 * width / (72 * width - names))
        natural = (width - 0.1) * (top - bottom) / (right - left)
        wiring = float(np.clip(natural, 1.6, 3.4)) + room["title"]
    shown = [wiring] * (lay is not None) + [grid] * (buffers or lay is None)
    height = sum(shown) + room["title"] * (len(shown) - 1)
    fig = plt.figure(figsize=(width, height))
    axes = []
    top = height
    if lay is not None:
        bottom = top - wiring
        box = (0.05 / width, bottom / height, 1 - 0.1 / width, (wiring - room["title"]) / height)
        axes.append(fig.add_axes(box))
        top = bottom
    if buffers or lay is None:
        box = (
            (room["names"] + (across - cell * slots) / 2) / width,
            room["ticks"] / height,
            cell * slots / width,
            row * rows / height,
        )
        axes.append(fig.add_axes(box))
    return fig, np.array(axes, dtype=object).reshape(1, len(axes))


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
            square=False,
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


def frame_stepper(render: Callable[[int], bytes], titles: Sequence[str], descriptions):
    """One tab per frame (``render(i)``: PNG bytes of frame ``i``), named by ``titles`` and
    described by ``descriptions`` (one string per frame, from the caller, e.g.
    :func:`schedule_descriptions`: what a screen reader says of the frame); every frame is
    rendered once, up front, and switching tabs happens in the browser, so the stepper
    works in the static book as well as in a live kernel (a slider linked with ``jslink``
    would not: the book's embedded widget manager does not run links).

    A frame is an ``HTML`` widget holding ``<img alt="description" src="data:...">``:
    ipywidgets' ``Image`` has no alt text, and the HTML travels in the book's embedded
    widget state. :func:`frame_png` and :func:`frame_description` read a frame back."""
    import base64
    import html

    import ipywidgets as widgets

    descriptions = [str(d) for d in descriptions]
    if len(descriptions) != len(titles) or not all(d.strip() for d in descriptions):
        raise CollectivesError(
            f"descriptions must be {len(titles)} non-empty strings, one per frame, "
            f"got {len(descriptions)}"
        )
    frames = []
    for i, description in enumerate(descriptions):
        data = base64.b64encode(render(i)).decode("ascii")
        frames.append(
            widgets.HTML(
                f'<img class="cl-frame" alt="{html.escape(description, quote=True)}" '
                f'src="data:image/png;base64,{data}" '
                'style="display:block;max-width:100%;height:auto">',
                layout=widgets.Layout(width="100%", margin="0"),
            )
        )
    return widgets.Tab(frames, selected_index=0, titles=list(titles))


def frame_png(frame) -> bytes:
    """The PNG bytes of one frame of :func:`frame_stepper` (a child of its Tab)."""
    import base64

    found = re.search(r'src="data:image/png;base64,([^"]*)"', frame.value)
    if found is None:
        raise CollectivesError("not a frame of frame_stepper: it holds no PNG image")
    return base64.b64decode(found.group(1))


def frame_description(frame) -> str:
    """The alt text (description) of one frame of :func:`frame_stepper`."""
    import html

    found = re.search(r'alt="([^"]*)"', frame.value)
    if found is None:
        raise CollectivesError("not a frame of frame_stepper: its image has no alt text")
    return html.unescape(found.group(1))


#: the most characters of a frame's description: a screen reader reads it whole, so longer
#: lists are summarised (:func:`summarised`)
DESCRIPTION_LIMIT = 300


def summarised(items: Sequence[str], limit: int) -> str:
    """``items`` joined by ", ", as many as fit in ``limit`` characters, then "and N more"."""
    shown: list[str] = []
    for k, item in enumerate(items):
        rest = len(items) - k - 1
        tail = f", and {rest} more" if rest else ""
        if len(", ".join(shown + [item]) + tail) > limit and shown:
            return ", ".join(shown) + f", and {len(items) - k} more"
        shown.append(item)
    return ", ".join(shown)


def _ranks(ranks: Sequence[int]) -> str:
    """ "rank 3", "ranks 0, 2 and 5" or "12 ranks"."""
    ranks = [int(r) for r in ranks]
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if len(ranks) <= 6:
        return "ranks " + ", ".join(map(str, ranks[:-1])) + f" and {ranks[-1]}"
    return f"{len(ranks)} ranks"


def _done(schedule, states, i) -> list[int]:
    """The ranks whose buffers (slots 0..n_chunks-1) hold their final result in state ``i``:
    the same chunks, made of the same contributions, as after the last step."""
    final, now = states[-1], states[i]
    c = schedule.n_chunks
    same = (now.label[:, :c] == final.label[:, :c]).all(axis=1)
    same &= (now.counts()[:, :c] == final.counts()[:, :c]).all(axis=1)
    done = []
    for r in np.flatnonzero(same[: schedule.n_ranks]).tolist():
        if all(
            sorted(now.contributors(r, k)) == sorted(final.contributors(r, k)) for k in range(c)
        ):
            done.append(int(r))
    return done


def _chunks_held(chunks: Sequence[int]) -> str:
    """ "nothing", "chunk 3", "chunks 0, 1 and 2" or "5 chunks"."""
    if not chunks:
        return "nothing"
    if len(chunks) == 1:
        return f"chunk {chunks[0]}"
    if len(chunks) <= 3:
        return "chunks " + ", ".join(map(str, chunks[:-1])) + f" and {chunks[-1]}"
    return f"{len(chunks)} chunks"


def start_description(schedule, states) -> str:
    """What the buffers hold before step 0: per rank, the chunks it holds (summarised)."""
    state = states[0]
    c = schedule.n_chunks
    group = state.group_size
    if group and group < schedule.n_ranks:  # one collective per group, all at once
        head = (
            f"start of {schedule.name}, {schedule.n_ranks // group} {schedule.collective}s at "
            f"once, each over a group of {group} of the {schedule.n_ranks} ranks (chunks "
            "numbered within a group): "
        )
    else:
        head = f"start of {schedule.name}, {schedule.collective} over {schedule.n_ranks} ranks: "
    held = [[k for k in range(c) if state.label[r, k] != -1] for r in range(schedule.n_ranks)]
    if all(len(h) == c for h in held):
        body = f"every rank holds its own contribution to all {c} chunks"
    else:
        words = [f"rank {r} holds {_chunks_held(h)}" for r, h in enumerate(held)]
        body = summarised(words, DESCRIPTION_LIMIT - len(head))
    return head + body


def _shared_labels(start) -> set[int]:
    """The chunk labels that more than one rank holds at the start (every label of an
    all-to-all: each rank has its own chunk 0 to n-1), which need their owner named."""
    labels = start.label[start.label >= 0]
    values, counts = np.unique(labels, return_counts=True)
    return {int(v) for v in values[counts > 1].tolist()}


def _transfer_words(schedule, state, t, shared=frozenset()) -> str:
    """One transfer in words, naming what the sending slot holds before the step (from the
    trace's ``state``): "rank 0 sends chunk 3 to rank 1"; "rank 0 sends rank 1's chunk 4 to
    rank 4 slot 1" when the slot holds another rank's block of a label several ranks have
    (``shared``: a relay, as in Bruck's all-to-all); "rank 2 moves chunk 1 from slot 1 to
    slot 0" for a copy within one buffer; "adds ... into" for a reduction."""
    label = int(state.label[t.src, t.src_chunk])
    chunk = f"chunk {label if label >= 0 else t.src_chunk}"
    owners = state.contributors(t.src, t.src_chunk) if state.owner is not None else []
    if len(owners) == 1 and owners[0] != t.src and label in shared:
        chunk = f"rank {owners[0]}'s {chunk}"
    src, dst = schedule.where(t.src), schedule.where(t.dst)
    if t.src == t.dst:
        return f"{src} moves {chunk} from slot {t.src_chunk} to slot {t.dst_chunk}"
    slot = f" slot {t.dst_chunk}" if t.dst_chunk != label else ""
    if t.reduce:
        return f"{src} adds {chunk} into {dst}{slot}"
    return f"{src} sends {chunk} to {dst}{slot}"


def _fully_reduced(schedule, state) -> list[int]:
    """The ranks that hold, in one of their result slots, a chunk summed over every rank (of
    their group, for a collective over groups): the milestone a reduce-scatter reaches."""
    full = state.group_size or schedule.n_ranks
    counts = state.counts()[: schedule.n_ranks, : schedule.n_chunks]
    labels = state.label[: schedule.n_ranks, : schedule.n_chunks]
    return [int(r) for r in np.flatnonzero(((counts == full) & (labels >= 0)).any(axis=1)).tolist()]


def step_description(
    schedule,
    states,
    k: int,
    topology=None,
    *,
    placement=None,
    switch_placement=None,
    title=None,
) -> str:
    """Step ``k`` of ``schedule`` in words: "step k of 0 to n-1" and the step's ``title``
    when the chapter gave one ("the switch multicasts it"), then its transfers
    (:func:`_transfer_words`; summarised beyond about :data:`DESCRIPTION_LIMIT` characters as
    their count and the first ones), the link levels the step uses on ``topology`` (when it
    has more than one level), and the ranks whose buffers are complete after it (from
    :func:`collectives.trace` ``states``), or for a reduction not yet complete, the ranks
    that hold a fully reduced chunk."""
    step = schedule.step(k)
    head = f"step {k} of steps 0 to {schedule.n_steps - 1}"
    head += f", {title}: " if title else ": "
    shared = _shared_labels(states[0])
    words = [_transfer_words(schedule, states[k], t, shared) for t in step]
    tail = []
    if topology is not None and len(topology.info.levels) > 1:
        loads = step_link_bytes(
            schedule,
            topology,
            float(schedule.n_chunks),
            k,
            placement=placement,
            switch_placement=switch_placement,
        )
        used = sorted({int(v) for v in topology.link_level[loads > 0].tolist()})
        tail.append("over " + ", ".join(topology.info.levels[v] for v in used) + " links")
    done = _done(schedule, states, k + 1)
    reducing = collective_spec(schedule.collective).reducing
    reduced = _fully_reduced(schedule, states[k + 1]) if reducing else []
    group = states[0].group_size
    if len(done) == schedule.n_ranks and group and group < schedule.n_ranks:
        tail.append("after it every buffer holds its group's result")
    elif len(done) == schedule.n_ranks:
        tail.append("after it every buffer is complete")
    elif done:
        tail.append(f"after it the buffers of {_ranks(done)} are complete")
    elif len(reduced) == schedule.n_ranks:
        tail.append("after it every rank holds a fully reduced chunk; no buffer is complete yet")
    elif reduced:
        tail.append(f"after it {_ranks(reduced)} hold a fully reduced chunk")
    else:
        tail.append("no buffer is complete yet")
    ending = "; " + "; ".join(tail)
    room = DESCRIPTION_LIMIT - len(head) - len(ending)
    if len(words) > 3 and len(", ".join(words)) > room:
        count = f"{len(words)} transfers, e.g. "
        body = count + summarised(words, room - len(count))
    else:
        body = ", ".join(words) if words else "no transfer"
    return head + body + ending


def schedule_descriptions(
    schedule,
    frames=None,
    topology=None,
    *,
    placement=None,
    switch_placement=None,
    step_titles=None,
) -> list[str]:
    """One description per frame (``frames``: states of :func:`collectives.trace`, 0 the
    start, ``k + 1`` after step ``k``; default all): :func:`start_description` for frame
    0, :func:`step_description` for the others (with ``step_titles[k]``, when given)."""
    states = trace(schedule)
    frames = range(len(states)) if frames is None else frames
    titles = check_step_titles(schedule, step_titles)
    return [
        start_description(schedule, states)
        if i == 0
        else step_description(
            schedule,
            states,
            i - 1,
            topology,
            placement=placement,
            switch_placement=switch_placement,
            title=titles[i - 1] if titles else None,
        )
        for i in frames
    ]


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
    dpi=100,
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

    descriptions = schedule_descriptions(
        schedule,
        frames,
        topology,
        placement=placement,
        switch_placement=switch_placement,
        step_titles=step_titles,
    )
    return frame_stepper(render, [frame_titles(len(states))[i] for i in frames], descriptions)
