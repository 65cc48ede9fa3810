"""Figures drawn from Schedules: buffers step by step, transfers on the topology, costs.

Everything is computed from the same objects the rest of the package uses: buffer
contents come from :func:`collectives.trace` (the symbolic replay behind ``verify``),
transfers from the Schedule, times from :func:`collectives.time`. Colours identify the
logical chunk (in an all-gather, chunk c is rank c's shard); in reductions a cell shows
how many ranks' contributions it holds. matplotlib and ipywidgets are imported inside
the functions. Taught from chapter "Cost models and the ring all-gather" on.

Figures of the hardware chapters live beside this module: :mod:`.tpu` (slices, cubes, the
bandwidth hierarchy, hop maps), :mod:`.gpu` (a scalable unit's rails, bandwidth per level,
bytes per link) and :mod:`.cluster` (routes on a rail fabric, time per link level, flows
per cable).
"""


import numpy as np

from ..errors import CollectivesError
from ..replay import trace
from ..semantics import collective_spec

__all__ = [
    "chunk_colour", "draw_buffers", "draw_topology", "draw_schedule", "animate",
    "plot_costs", "case_colour", "stepper", "MAX_CHUNK_LABELS",
]


def chunk_colour(label, n_labels):
    """The colour of logical chunk ``label`` (a qualitative palette, cycled if needed)."""
    import matplotlib

    palette = matplotlib.colormaps["tab10" if n_labels <= 10 else "tab20"]
    return palette(int(label) % palette.N)


#: above this many chunk slots per buffer, an all-gather's cells name the shard (the rank it
#: came from) instead of the chunk, so that the numbers fit their cells
MAX_CHUNK_LABELS = 12


def _shard_of(schedule):
    """Chunks per shard when an all-gather's cells are labelled by shard, else 1."""
    per_shard = schedule.n_chunks // max(schedule.group_size, 1)
    if (collective_spec(schedule.collective).name == "all_gather" and per_shard > 1
            and schedule.n_chunks > MAX_CHUNK_LABELS):
        return per_shard
    return 1


def _cell_text(schedule, state, r, c):
    label = state.label[r, c]
    if label < 0:
        return ""
    ranks = state.contributors(r, c)
    spec = collective_spec(schedule.collective)
    per_shard = _shard_of(schedule)
    if per_shard > 1:
        return str(label // per_shard)
    if spec.reducing:
        return f"{label}\n{len(ranks)}/{schedule.group_size}"
    if spec.name in ("all_to_all", "all_to_all_v"):
        k = schedule.n_chunks // schedule.group_size
        return f"{ranks[0]}→{label // k}"
    return str(label)


def draw_buffers(schedule, state, ax=None, title=None):
    """Every rank's buffer (rows) and slots (columns) in one symbolic ``state``.

    A cell's colour is its chunk (in an all-gather of more than ``MAX_CHUNK_LABELS`` slots,
    its shard: the cell shows the rank the shard came from, and thicker lines separate the
    shards); reductions show ``label`` and ``contributions/m`` (m ranks
    per group); all-to-all cells show ``source→destination``; empty cells are white. Switch
    participants (in-network reduction) are drawn as extra rows below the ranks.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    ax = ax or plt.gca()
    n, slots = state.label.shape
    counts = state.counts()
    reducing = collective_spec(schedule.collective).reducing
    per_shard = _shard_of(schedule)
    for r in range(n):
        for c in range(slots):
            label = state.label[r, c]
            face = "white"
            if label >= 0:
                face = chunk_colour(label // per_shard, schedule.n_chunks // per_shard)
                if reducing:
                    share = min(1.0, counts[r, c] / schedule.group_size)
                    face = (*face[:3], 0.25 + 0.75 * share)
            ax.add_patch(Rectangle((c, n - 1 - r), 1, 1, facecolor=face, edgecolor="0.3",
                                   linewidth=0.8))
            text = _cell_text(schedule, state, r, c)
            if text and n * slots <= 144:
                ax.text(c + 0.5, n - 0.5 - r, text, ha="center", va="center",
                        fontsize=8 if "\n" in text else 9)
    if per_shard > 1:                          # shard boundaries
        for c in range(per_shard, slots, per_shard):
            ax.plot([c, c], [0, n], color="0.1", linewidth=1.6, zorder=3)
    ax.set_xlim(0, slots)
    ax.set_ylim(0, n)
    ax.set_aspect("equal")
    ticks = np.arange(0, slots, 1 if slots <= MAX_CHUNK_LABELS else per_shard)
    ax.set_xticks(ticks + 0.5, [str(c) for c in ticks], fontsize=8)
    ax.set_yticks(np.arange(n) + 0.5, [schedule.where(r) if r >= schedule.n_ranks else f"rank {r}"
                                       for r in reversed(range(n))], fontsize=8)
    ax.tick_params(length=0)
    ax.set_xlabel("chunk slot" if per_shard == 1 else
                  f"chunk slot ({per_shard} per shard; a cell shows its shard)", fontsize=8)
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def _positions(topology):
    """2-D drawing positions for every node of ``topology``."""
    n = topology.n_ranks
    drawing = topology.info.drawing
    if drawing == "circle" or (drawing == "graph" and topology.n_nodes == n
                               and topology.shape is None):
        angle = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
        return np.stack([np.cos(angle), np.sin(angle)], axis=1)
    if drawing == "line":
        return np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1)
    if drawing == "grid":
        rows, cols = (1, topology.shape[0]) if len(topology.shape) == 1 else topology.shape
        r, c = np.divmod(np.arange(n), cols)
        return np.stack([c.astype(float), -r.astype(float)], axis=1)
    if drawing == "star":
        angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
        return np.concatenate([np.stack([np.cos(angle), np.sin(angle)], axis=1), [[0.0, 0.0]]])
    import networkx as nx

    layout = nx.spring_layout(topology.to_networkx().to_undirected(), seed=0)
    return np.array([layout[i] for i in range(topology.n_nodes)])


def draw_topology(topology, step=None, schedule=None, ax=None, title=None):
    """The topology's nodes and links; with ``schedule`` and ``step``, that step's transfers
    as arrows along their routes, coloured by chunk."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    ax = ax or plt.gca()
    pos = _positions(topology)
    drawn = set()
    for u, v in zip(topology.link_src.tolist(), topology.link_dst.tolist()):
        if (v, u) in drawn or (u, v) in drawn:
            continue
        drawn.add((u, v))
        ax.plot(*pos[[u, v]].T, color="0.8", linewidth=2, zorder=1)
    ranks = np.arange(topology.n_ranks)
    ax.scatter(*pos[ranks].T, s=380, color="white", edgecolor="0.2", zorder=3)
    for r in ranks:
        ax.text(*pos[r], str(r), ha="center", va="center", fontsize=9, zorder=4)
    if topology.n_switches:
        sw = np.arange(topology.n_ranks, topology.n_nodes)
        ax.scatter(*pos[sw].T, s=500, marker="s", color="0.85", edgecolor="0.2", zorder=3)
    if schedule is not None and step is not None:
        st = schedule.step(step)
        remote = np.flatnonzero(st.src != st.dst)
        pair, link = topology.paths(st.src[remote], st.dst[remote])
        # several transfers on one link are fanned out by curvature
        # (an all-gather labelled by shard draws one arrow per shard and link)
        per_shard = _shard_of(schedule)
        seen, drawn_arrows = {}, set()
        for p, l in zip(pair.tolist(), link.tolist()):
            i = remote[p]
            key = (l, int(st.src_chunk[i]) // per_shard)
            if per_shard > 1 and key in drawn_arrows:
                continue
            drawn_arrows.add(key)
            k = seen.get(l, 0)
            seen[l] = k + 1
            u, v = topology.link_src[l], topology.link_dst[l]
            colour = chunk_colour(key[1], schedule.n_chunks // per_shard)
            ax.add_patch(FancyArrowPatch(pos[u], pos[v], arrowstyle="-|>", mutation_scale=14,
                                         color=colour, linewidth=2, shrinkA=12, shrinkB=12,
                                         connectionstyle=f"arc3,rad={0.15 + 0.12 * k}",
                                         zorder=2))
    ax.set_aspect("equal")
    ax.margins(0.15)
    if np.ptp(pos[:, 1]) == 0:                 # one row (a chain): give the arrows room
        ax.set_ylim(pos[0, 1] - 0.9, pos[0, 1] + 0.9)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def draw_schedule(schedule, topology=None, steps=None, figsize_per_row=(7.5, 2.2)):
    """One row per step: (left) the step's transfers on ``topology``, (right) every
    buffer after the step. The first row is the starting state. Returns the Figure."""
    import matplotlib.pyplot as plt

    states = trace(schedule)
    shown = list(range(schedule.n_steps)) if steps is None else list(steps)
    rows = 1 + len(shown)
    cols = 2 if topology is not None else 1
    w, h = figsize_per_row
    fig, axes = plt.subplots(rows, cols, figsize=(w if cols == 2 else w / 1.6, h * rows),
                             squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1.6]} if cols == 2 else None)
    for row, k in enumerate([None] + shown):
        state = states[0 if k is None else k + 1]
        label = "before step 0" if k is None else f"after step {k}"
        if topology is not None:
            draw_topology(topology, step=k, schedule=schedule if k is not None else None,
                          ax=axes[row, 0], title="start" if k is None else f"step {k}")
        draw_buffers(schedule, state, ax=axes[row, -1], title=label)
    fig.tight_layout()
    return fig


def animate(schedule, topology=None, interval=900):
    """A matplotlib animation of the whole schedule, one frame per step (the starting
    state first). In a notebook, ``IPython.display.HTML(animate(...).to_jshtml())``
    plays in the static book without a kernel."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    states = trace(schedule)
    fig, axes = _frame_axes(schedule, topology)

    def frame(i):
        for ax in axes[0]:
            ax.clear()
        k = i - 1
        if topology is not None:
            draw_topology(topology, step=k if k >= 0 else None, schedule=schedule,
                          ax=axes[0, 0], title="start" if k < 0 else f"step {k}")
        draw_buffers(schedule, states[i], ax=axes[0, -1],
                     title="before step 0" if k < 0 else f"after step {k}")
        return []

    anim = FuncAnimation(fig, frame, frames=len(states), interval=interval, blit=False)
    plt.close(fig)
    return anim


def _frame_axes(schedule, topology):
    """The figure of one animation frame: the topology (if any) and the buffers side by side,
    or the topology above the buffers when a rank's buffer has many slots (the buffer panel
    gets about 0.3 inch per slot). Returns (figure, axes) with the buffers in ``axes[0, -1]``."""
    import matplotlib.pyplot as plt

    buffers_width = max(4.8, 0.3 * schedule.n_chunks + 1.2)
    if topology is None:
        return plt.subplots(1, 1, figsize=(buffers_width, 3.2), squeeze=False)
    if buffers_width <= 6:
        return plt.subplots(1, 2, figsize=(buffers_width + 3.2, 3.2), squeeze=False,
                            gridspec_kw={"width_ratios": [3.2, buffers_width]})
    fig, axes = plt.subplots(2, 1, figsize=(buffers_width, 5.4),
                             gridspec_kw={"height_ratios": [1.3, 1]})
    return fig, axes.reshape(1, 2)


def case_colour(label, schedule):
    """The book's colour (:func:`collectives.viz.style.algorithm_colour`) for a cost-plot case:
    by its ``label`` if that names an algorithm ("ring", "Rabenseifner"), else by the
    schedule's name without the collective and a "_concurrent" ("torus_all_gather_concurrent"
    is a torus, "double_binary_tree_all_reduce" a tree). Raises
    :class:`~collectives.CollectivesError` if neither is known."""
    from .style import algorithm_colour

    try:
        return algorithm_colour(label)
    except CollectivesError:
        pass
    name = schedule.name.removesuffix("_concurrent").removesuffix("_" + schedule.collective)
    try:
        return algorithm_colour(name.replace("_", " "))
    except CollectivesError:
        raise CollectivesError(
            f"no colour for case {label!r} (schedule {schedule.name!r}): name the algorithm "
            "in the label or add it to collectives/viz/style.py") from None


_REPEAT_STYLES = ("-", "--", ":", "-.")


def plot_costs(cases, sizes, metric="seconds", ax=None):
    """Cost against buffer size for several ``cases`` = [(label, schedule, topology), ...].

    ``metric``: "seconds", "algbw" or "busbw" (bytes/s, nccl-tests' definitions); sizes
    in bytes (nccl-tests' S). Log-log axes. Each line has its algorithm's colour in every
    figure of the book (:func:`case_colour`); two cases of the same algorithm (a torus one
    axis at a time and all axes at once) share the colour and differ in line style.
    """
    import matplotlib.pyplot as plt

    from ..cost import algbw, busbw, time

    if metric not in ("seconds", "algbw", "busbw"):
        raise CollectivesError(f"metric must be 'seconds', 'algbw' or 'busbw', got {metric!r}")
    ax = ax or plt.gca()
    sizes = np.asarray(sizes, dtype=float)
    seen = {}
    for label, schedule, topology in cases:
        colour = case_colour(label, schedule)
        repeat = seen.get(colour, 0)
        seen[colour] = repeat + 1
        seconds = np.array([time(schedule, topology, s).seconds for s in sizes])
        if metric == "seconds":
            y = seconds
        elif metric == "algbw":
            y = np.array([algbw(s, t) for s, t in zip(sizes, seconds)])
        else:
            y = np.array([busbw(schedule.collective, s, t, schedule.n_ranks)
                          for s, t in zip(sizes, seconds)])
        ax.loglog(sizes, y, marker="o", markersize=3, label=label, color=colour,
                  linestyle=_REPEAT_STYLES[repeat % len(_REPEAT_STYLES)])
    ax.set_xlabel("buffer size S (bytes)")
    ax.set_ylabel({"seconds": "time (s)", "algbw": "algbw (bytes/s)",
                   "busbw": "busbw (bytes/s)"}[metric])
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def _frame_png(schedule, topology, states, i, dpi):
    """Frame ``i`` (0: before step 0) as PNG bytes."""
    import io

    import matplotlib.pyplot as plt

    fig, axes = _frame_axes(schedule, topology)
    if topology is not None:
        draw_topology(topology, step=i - 1 if i else None, schedule=schedule, ax=axes[0, 0],
                      title="start" if i == 0 else f"step {i - 1}")
    draw_buffers(schedule, states[i], ax=axes[0, -1],
                 title="before step 0" if i == 0 else f"after step {i - 1}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def stepper(schedule, topology=None, dpi=80):
    """One tab per step of ``schedule`` (the starting state first) showing every buffer and,
    with ``topology``, the step's transfers; click a tab to step.

    Every frame is drawn once, up front, and switching tabs happens in the browser, so the
    stepper works in the static book as well as in a live kernel (a slider linked with
    ``jslink`` would not: the book's embedded widget manager does not run links).
    Returns the ipywidgets ``Tab``; display it (the last line of a cell does).
    """
    import ipywidgets as widgets

    states = trace(schedule)
    frames = [widgets.Image(value=_frame_png(schedule, topology, states, i, dpi), format="png",
                            layout=widgets.Layout(max_width="100%", height="auto"))
              for i in range(len(states))]
    titles = ["start"] + [f"step {k}" for k in range(len(frames) - 1)]
    return widgets.Tab(frames, selected_index=0, titles=titles)
