"""The figure of a measured sweep (:func:`collectives.dist.sweep`): busbw against size.

One line per implementation (the Schedule, torch.distributed's own collective), bus
bandwidth in GB/s against the buffer size on a log2 axis, as nccl-tests' tables are usually
plotted; an optional dashed line marks a modelled or published bandwidth to compare with.
What is drawn is only what was measured: on gloo over loopback that is memory copies and
TCP on one machine's CPU, not a link (chapter "From the model to real processes").
matplotlib is imported inside the function.
"""

from ..errors import CollectivesError
from .style import FIG_WIDTH, PALETTE, font_size

__all__ = ["plot_sweep", "SWEEP_COLOURS"]

#: the Schedule's line, then torch's
SWEEP_COLOURS = (PALETTE["blue"], PALETTE["orange"])
_MARKERS = ("o", "s")


def _size_label(nbytes):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def plot_sweep(result, ax=None, reference=None, reference_label=None, title=None):
    """Draw ``result`` (a :class:`~collectives.dist.SweepResult`): busbw (GB/s) against
    size, one line per implementation. ``reference`` (GB/s) adds a dashed horizontal line
    named ``reference_label``. Returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    rows = getattr(result, "rows", None)
    if not rows:
        raise CollectivesError(f"plot_sweep needs a SweepResult with rows, got {result!r:.80}")
    if ax is None:
        _, ax = plt.subplots(figsize=(FIG_WIDTH, 3.2), constrained_layout=True)
    impls = list(dict.fromkeys(r.impl for r in rows))
    for i, impl in enumerate(impls):
        mine = sorted((r for r in rows if r.impl == impl), key=lambda r: r.size)
        ax.plot(
            [r.size for r in mine],
            [r.busbw for r in mine],
            marker=_MARKERS[i % 2],
            color=SWEEP_COLOURS[i % 2],
            label=impl,
        )
    if reference is not None:
        ax.axhline(
            reference,
            color=PALETTE["grey"],
            linestyle="--",
            label=reference_label or f"{reference:g} GB/s",
        )
    ax.set_xscale("log", base=2)
    sizes = sorted({r.size for r in rows})
    ticks = sizes[:: max(1, len(sizes) // 5)]
    ax.set_xticks(ticks, [_size_label(s) for s in ticks])
    ax.set_xlabel("buffer size S")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(title or f"{result.collective}, {result.group_size} ranks, {result.backend}")
    ax.legend(fontsize=font_size("small"))
    ax.grid(True, alpha=0.3)
    return ax
