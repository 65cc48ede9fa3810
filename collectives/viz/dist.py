"""Figures of real processes: a measured sweep, and the processes and their messages.

:func:`plot_sweep` draws a sweep (:func:`collectives.dist.sweep`): one line per
implementation (the Schedule, torch.distributed's own collective), bus bandwidth in GB/s
(or the median time, with the fastest and slowest repeat as a bar) against the buffer size
on a log2 axis, as nccl-tests' tables are usually plotted; ``models`` adds modelled curves
(from :func:`collectives.dist.fit_alpha_beta` or :func:`collectives.time`, computed by the
caller) and an optional dashed line marks a published bandwidth. What is drawn is only what
was measured or modelled below viz: on gloo over loopback that is memory copies and TCP on
one machine's CPU, not a link (chapter "From the model to real processes").

:func:`draw_processes` draws one step of a Schedule as the processes run it: each rank a
box, each message (:func:`collectives.dist.programs.messages`: the chunks a rank packs for
one peer) an arrow labelled with its chunks, blue where the receiver overwrites, vermillion
where it adds; :func:`process_stepper` steps through a Schedule that way with the book's
stepper (:func:`collectives.viz.animation.frame_stepper`). :func:`draw_failure` draws a
failed run's report: the step each rank had reached (``DistError.reached``, the workers'
board). matplotlib is imported inside the functions.
"""

import numpy as np

from ..errors import CollectivesError
from .style import FIG_WIDTH, FRAME_WIDTH, PALETTE, font_size

__all__ = [
    "plot_sweep",
    "SWEEP_COLOURS",
    "MODEL_COLOURS",
    "draw_processes",
    "process_stepper",
    "MESSAGE_COLOURS",
    "draw_failure",
]

#: the Schedule's line, then torch's
SWEEP_COLOURS = (PALETTE["blue"], PALETTE["orange"])
#: modelled curves, in order
MODEL_COLOURS = (PALETTE["blue"], PALETTE["orange"], PALETTE["grey"], PALETTE["bluish green"])
#: a message the receiver overwrites with (copy), and one it adds (reduce)
MESSAGE_COLOURS = {"copy": PALETTE["blue"], "reduce": PALETTE["vermillion"]}
_MARKERS = ("o", "s")


def _size_label(nbytes):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def plot_sweep(
    result,
    ax=None,
    reference=None,
    reference_label=None,
    title=None,
    *,
    metric="busbw",
    models=None,
):
    """Draw ``result`` (a :class:`~collectives.dist.SweepResult`) against size, one line per
    implementation: ``metric="busbw"`` (GB/s) or ``"time"`` (the median time of one
    iteration in milliseconds, with a bar from the fastest to the slowest repeat, log
    scale). ``models``: ``{label: (sizes, values)}`` drawn as dashed curves without markers
    (values in the metric's unit: GB/s, or milliseconds). ``reference`` (GB/s) adds a
    dashed horizontal line named ``reference_label``. Returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    rows = getattr(result, "rows", None)
    if not rows:
        raise CollectivesError(f"plot_sweep needs a SweepResult with rows, got {result!r:.80}")
    if metric not in ("busbw", "time"):
        raise CollectivesError(f"metric must be 'busbw' or 'time', got {metric!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, 3.2), constrained_layout=True)
    impls = list(dict.fromkeys(r.impl for r in rows))
    for i, impl in enumerate(impls):
        mine = sorted((r for r in rows if r.impl == impl), key=lambda r: r.size)
        x = [r.size for r in mine]
        style = dict(marker=_MARKERS[i % 2], color=SWEEP_COLOURS[i % 2], label=impl)
        if metric == "busbw":
            ax.plot(x, [r.busbw for r in mine], **style)
            continue
        y = np.array([r.time_us for r in mine]) / 1e3  # milliseconds
        low = np.array([r.time_us if r.time_min_us is None else r.time_min_us for r in mine])
        high = np.array([r.time_us if r.time_max_us is None else r.time_max_us for r in mine])
        ax.errorbar(x, y, yerr=[y - low / 1e3, high / 1e3 - y], capsize=3, **style)
    for k, (label, (sizes_, values)) in enumerate((models or {}).items()):
        if len(sizes_) != len(values) or not len(sizes_):
            raise CollectivesError(f"model {label!r} needs as many values as sizes")
        ax.plot(sizes_, values, linestyle="--", color=MODEL_COLOURS[k % 4], label=label)
    if reference is not None:
        ax.axhline(
            reference,
            color=PALETTE["grey"],
            linestyle="--",
            label=reference_label or f"{reference:g} GB/s",
        )
    ax.set_xscale("log", base=2)
    if metric == "time":
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(_two_and_five))
    sizes = sorted({r.size for r in rows})
    ticks = sizes[:: -(-len(sizes) // 4)]  # at most 4 labels: they fit a phone's width
    ax.set_xticks(ticks, [_size_label(s) for s in ticks])
    ax.set_xlabel("buffer size S")
    ax.set_ylabel("busbw (GB/s)" if metric == "busbw" else "time (ms)")
    ax.set_title(title or f"{result.collective}, {result.group_size} ranks, {result.backend}")
    # under the axes, where no line runs
    ax.legend(
        fontsize=font_size("small"),
        loc="upper left",
        bbox_to_anchor=(-0.15, -0.25),
        frameon=False,
    )
    ax.grid(True, alpha=0.3)
    return ax


def _two_and_five(value, _position=None):
    """A log axis's minor tick label: 2 and 5 times a power of ten, no other."""
    if value <= 0:
        return ""
    lead = value / 10 ** np.floor(np.log10(value))
    return f"{value:g}" if round(lead) in (2, 5) else ""


def _positions(n):
    """Rank ``r``'s box centre: on a circle, rank 0 at the top, clockwise."""
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    return np.c_[np.cos(angles), np.sin(angles)]


#: how far a message's arrow bends (matplotlib's arc3 ``rad``): outwards, so that two
#: messages between the same ranks in opposite directions do not overlap
_BEND = -0.3


def _chunks(chunks):
    return ("chunk " if len(chunks) == 1 else "chunks ") + ",".join(map(str, chunks))


def draw_processes(schedule, step=None, ax=None, *, title=None, groups=True):
    """Step ``step`` of ``schedule`` as its processes run it (module text): rank ``r`` a
    box on a circle (rank 0 at the top, clockwise), one arrow per message of the step
    (:func:`collectives.dist.programs.messages`) labelled with the chunks it carries, blue
    where the receiver overwrites them, vermillion where it adds them (an arrow that does
    both is vermillion). ``step=None``: the processes alone. ``groups``: outline each
    group's boxes in a colour of its own when the schedule runs over groups. Returns the
    Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ..dist.programs import messages
    from ..schedule import schedule_arg

    schedule = schedule_arg(schedule)
    sent = () if step is None else messages(schedule, step)
    n = schedule.n_ranks
    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, FIG_WIDTH * 0.8), constrained_layout=True)
    xy = _positions(n) * (1.0, 0.78)
    group_of = np.zeros(n, dtype=int)
    many = groups and schedule.groups.shape[0] > 1
    if many:
        for g, members in enumerate(schedule.groups):
            group_of[members] = g
    outline = (
        PALETTE["black"],
        PALETTE["bluish green"],
        PALETTE["reddish purple"],
        PALETTE["orange"],
    )
    w, h = 0.58, 0.24  # a box holds "rank 15" at the figure's text size in a frame
    for r, (x, y) in enumerate(xy):
        edge = outline[group_of[r] % len(outline)] if many else PALETTE["black"]
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle="round,pad=0.02",
                facecolor="white",
                edgecolor=edge,
                linewidth=2.5 if many else 1.2,
                zorder=3,
            )
        )
        ax.text(x, y, f"rank {r}", ha="center", va="center", zorder=4)
    for msg in sent:
        kind = "reduce" if any(msg.reduce) else "copy"
        a, b = xy[msg.src], xy[msg.dst]
        arrow = FancyArrowPatch(
            a,
            b,
            connectionstyle=f"arc3,rad={_BEND}",
            arrowstyle="-|>,head_length=6,head_width=3.5",
            color=MESSAGE_COLOURS[kind],
            linewidth=1.8,
            shrinkA=22,
            shrinkB=22,
            zorder=2,
        )
        ax.add_patch(arrow)
        # the label on the arc's middle, over a white box: a quadratic Bezier through the
        # control point mid + rad (dy, -dx) passes half way to it
        mid, chord = (a + b) / 2, b - a
        normal = np.array([chord[1], -chord[0]]) * _BEND * 0.5
        ax.text(
            *(mid + normal),
            _chunks(msg.src_chunks) + (" +" if kind == "reduce" else ""),
            ha="center",
            va="center",
            color=MESSAGE_COLOURS[kind],
            fontsize=font_size("label"),
            zorder=5,
            bbox=dict(facecolor="white", edgecolor="none", pad=1.0),
        )
    if sent:
        ax.text(
            0,
            -1.15,
            "+: the receiver adds (vermillion);\nelse it overwrites (blue)",
            ha="center",
            va="center",
            fontsize=font_size("note"),
            color=PALETTE["black"],
        )
    ax.set_xlim(-1.4, 1.4)
    ax.set_ylim(-1.3, 1.12)
    ax.set_aspect("equal")
    ax.axis("off")
    if title is None:
        title = "the processes" if step is None else f"step {step}: {len(sent)} messages"
    ax.set_title(title)
    return ax


def process_stepper(schedule, steps=None, dpi=100, *, groups=True):
    """One tab per chosen step of ``schedule`` (default every step), the processes alone
    first, each drawn by :func:`draw_processes` (click a tab to step; the frames are drawn
    up front, so it works in the static book). A phone's tab bar fits
    :data:`~collectives.viz.animation.PHONE_TABS` tabs. Returns the ipywidgets ``Tab``."""
    import matplotlib.pyplot as plt

    from ..schedule import schedule_arg
    from .animation import (
        chosen_frames,
        figure_png,
        frame_stepper,
        frame_titles,
        schedule_descriptions,
    )

    schedule = schedule_arg(schedule)
    frames = chosen_frames(schedule, steps)

    def render(i):
        # a stepper frame's width, whose text stays legible on a phone
        size = (FRAME_WIDTH, FRAME_WIDTH * 0.9)
        fig, ax = plt.subplots(figsize=size, constrained_layout=True)
        k = frames[i] - 1
        draw_processes(schedule, None if k < 0 else k, ax=ax, groups=groups)
        return figure_png(fig, dpi)

    titles = frame_titles(schedule.n_steps + 1)
    descriptions = schedule_descriptions(schedule, frames)
    return frame_stepper(render, [titles[i] for i in frames], descriptions)


def draw_failure(error, schedule, ax=None, *, title=None):
    """Where every rank of a failed run of ``schedule`` was (``error``: the
    :class:`~collectives.DistError` it raised, whose ``reached`` is the workers' board):
    one bar per rank, top to bottom, as long as the steps it had finished, labelled with the
    step it was in; the rank the error names in vermillion, the others in blue (green: in
    the final barrier, every step done). Returns the Axes."""
    import matplotlib.pyplot as plt

    from ..schedule import schedule_arg

    schedule = schedule_arg(schedule)
    reached = getattr(error, "reached", None)
    if not reached:
        raise CollectivesError(
            f"draw_failure needs a DistError with the ranks' positions (reached), got "
            f"{type(error).__name__}"
        )
    n = schedule.n_steps
    ranks = sorted(reached)
    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, 0.5 * len(ranks) + 1.5), constrained_layout=True)
    for y, rank in enumerate(ranks):
        _, step, phase = reached[rank]
        if phase == "finishing":
            done, text, colour = n, "finished", PALETTE["bluish green"]
        elif phase == "running" and step >= 0:
            done, text, colour = step, f"in step {step}", PALETTE["blue"]
        else:
            done, text, colour = 0, "starting", PALETTE["grey"]
        if rank == error.rank:
            colour = PALETTE["vermillion"]
            text += f": {error.exception or 'failed'}"
        ax.barh(y, done, height=0.55, color=colour)
        ax.text(done + 0.1, y, text, va="center", fontsize=font_size("small"))
    ax.set_yticks(range(len(ranks)), [f"rank {r}" for r in ranks])
    ax.set_ylim(len(ranks) - 0.5, -0.5)
    ax.set_xlim(0, n + 0.1 + 0.45 * n)
    ax.set_xticks(range(n + 1))
    ax.set_xlabel(f"steps finished, of {n}")
    ax.grid(True, axis="x", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title(title if title is not None else f"{schedule.name}: where each rank was")
    return ax
