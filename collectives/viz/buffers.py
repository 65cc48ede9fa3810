"""Buffers step by step: every participant's buffer slots in one symbolic state.

The state comes from :func:`collectives.trace` (the symbolic replay behind ``verify``), so a
cell shows exactly what the Schedule has put there: colours identify the logical chunk (in an
all-gather, chunk c is rank c's shard); in reductions a cell shows how many ranks'
contributions it holds; in an all-to-all, where a part comes from and goes to. Switch
participants (in-network reduction) are extra rows below the ranks. matplotlib is imported
inside the functions. Taught from chapter "Cost models and the ring all-gather" on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..semantics import collective_spec
from .style import font_size

__all__ = ["MAX_CHUNK_LABELS", "chunk_colour", "shard_size", "cell_text", "fits", "draw_buffers"]

#: above this many chunk slots per buffer, an all-gather's cells name the shard (the rank it
#: came from) instead of the chunk, so that the numbers fit their cells
MAX_CHUNK_LABELS = 12


def chunk_colour(label, n_labels):
    """The colour of logical chunk ``label`` (a qualitative palette, cycled if needed)."""
    import matplotlib

    palette = matplotlib.colormaps["tab10" if n_labels <= 10 else "tab20"]
    return palette(int(label) % palette.N)


def shard_size(schedule) -> int:
    """Chunks per shard when an all-gather's cells are labelled by shard (more than
    :data:`MAX_CHUNK_LABELS` slots of several chunks per shard), else 1."""
    per_shard = schedule.n_chunks // max(schedule.group_size, 1)
    if (
        collective_spec(schedule.collective).name == "all_gather"
        and per_shard > 1
        and schedule.n_chunks > MAX_CHUNK_LABELS
    ):
        return per_shard
    return 1


def cell_text(schedule, state, r, c) -> str:
    """What cell (participant ``r``, slot ``c``) of ``state`` shows: its chunk (or shard),
    ``chunk\\ncontributions/m`` in a reduction, ``source→destination`` in an all-to-all,
    "" when empty."""
    label = state.label[r, c]
    if label < 0:
        return ""
    ranks = state.contributors(r, c)
    spec = collective_spec(schedule.collective)
    per_shard = shard_size(schedule)
    if per_shard > 1:
        return str(label // per_shard)
    if spec.reducing:
        return f"{label}\n{len(ranks)}/{schedule.group_size}"
    if spec.name in ("all_to_all", "all_to_all_v"):
        k = schedule.n_chunks // schedule.group_size
        return f"{ranks[0]}→{label // k}"
    return str(label)


def _cell_points(ax, rows: int, slots: int, square: bool) -> tuple[float, float]:
    """(width, height) in points of a cell of a ``rows`` x ``slots`` grid filling ``ax`` as
    laid out now; ``square``: the equal aspect shrinks the longer side."""
    box = ax.get_position()
    fw, fh = ax.figure.get_size_inches()
    w, h = box.width * fw * 72 / slots, box.height * fh * 72 / rows
    return (min(w, h), min(w, h)) if square else (w, h)


def fits(text: str, size: float, width: float, height: float) -> bool:
    """Whether ``text`` at ``size`` points fits a box of ``width`` x ``height`` points, with a
    point to spare on each side: a character is about 0.62 of the size wide (an arrow
    counts as one), a line 1.25 of it high."""
    lines = text.split("\n")
    wide = max(len(line) for line in lines) * 0.62 * size
    return wide <= width - 2 and len(lines) * 1.25 * size <= height - 2


def draw_buffers(schedule, state, ax=None, title=None, *, square: bool = True):
    """Every rank's buffer (rows) and slots (columns) in one symbolic ``state``.

    A cell's colour is its chunk (in an all-gather of more than ``MAX_CHUNK_LABELS`` slots,
    its shard: the cell shows the rank the shard came from, and thicker lines separate the
    shards); reductions show ``label`` and ``contributions/m`` (m ranks
    per group); all-to-all cells show ``source→destination``; empty cells are white. Switch
    participants (in-network reduction) are drawn as extra rows below the ranks. Text sizes
    are the "cell", "tiny" and "note" roles of :func:`~collectives.viz.style.font_size`; a
    cell whose text does not fit it at that size (:func:`fits`) shows its colour alone, and
    a whole shard held by a rank (cells labelled by shard) is labelled once, across its
    cells. ``square``: square cells (else the cells fill ``ax``, as a stepper's frame lays
    them out, :func:`~collectives.viz.animation.frame_figure`).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    ax = ax or plt.gca()
    n, slots = state.label.shape
    counts = state.counts()
    reducing = collective_spec(schedule.collective).reducing
    per_shard = shard_size(schedule)
    cell, tiny = font_size("cell"), font_size("tiny")
    cell_w, cell_h = _cell_points(ax, n, slots, square)
    for r in range(n):
        for c in range(slots):
            label = state.label[r, c]
            face: Any = "white"  # a colour name, or an RGBA tuple
            if label >= 0:
                face = chunk_colour(label // per_shard, schedule.n_chunks // per_shard)
                if reducing:
                    share = min(1.0, counts[r, c] / schedule.group_size)
                    face = (*face[:3], 0.25 + 0.75 * share)
            ax.add_patch(
                Rectangle((c, n - 1 - r), 1, 1, facecolor=face, edgecolor="0.3", linewidth=0.8)
            )
        texts = [cell_text(schedule, state, r, c) for c in range(slots)]
        for first in range(0, slots, per_shard):  # a shard's cells (one cell if unlabelled)
            run = texts[first : first + per_shard]
            if len(set(run)) == 1:  # one label across the shard
                spans = [(first, len(run), run[0])]
            else:
                spans = [(first + k, 1, text) for k, text in enumerate(run)]
            for c, span, text in spans:
                size = tiny if "\n" in text else cell
                if text and n * slots <= 144 and fits(text, size, span * cell_w, cell_h):
                    x = c + span / 2
                    ax.text(x, n - 0.5 - r, text, ha="center", va="center", fontsize=size)
    if per_shard > 1:  # shard boundaries
        for c in range(per_shard, slots, per_shard):
            ax.plot([c, c], [0, n], color="0.1", linewidth=1.6, zorder=3)
    ax.set_xlim(0, slots)
    ax.set_ylim(0, n)
    ax.set_aspect("equal" if square else "auto")
    ticks = np.arange(0, slots, 1 if slots <= MAX_CHUNK_LABELS else per_shard)
    ax.set_xticks(ticks + 0.5, [str(c) for c in ticks], fontsize=tiny)
    ax.set_yticks(
        np.arange(n) + 0.5,
        [schedule.where(r) if r >= schedule.n_ranks else f"rank {r}" for r in reversed(range(n))],
        fontsize=tiny,
    )
    ax.tick_params(length=0)
    ax.set_xlabel(
        "chunk slot"
        if per_shard == 1
        else f"chunk slot ({per_shard} per shard; a cell shows its shard)",
        fontsize=tiny,
    )
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title, fontsize=font_size("note"))
    return ax
