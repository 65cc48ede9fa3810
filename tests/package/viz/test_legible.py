"""Stepper frames are legible on a phone: the steppers of the book's chapters, built here from
the same schedules, topologies and layouts the chapters pass (and the chapters' dpi), are
measured from what matplotlib draws.

How a frame is shown: the stepper's ``<img>`` is at most 100 % of its tab panel, which is
322 CSS px wide in a 390 x 844 viewport, so a frame whose natural width is ``w`` pixels shows at
``min(w, 322)`` CSS px. A text of ``p`` points in a frame saved at ``d`` dpi is ``p * d / 72``
natural pixels high, and so ``p * d / 72 * min(w, 322) / w`` CSS px on the phone. Every text a
frame draws (``Text.draw``, so hidden and empty texts do not count) must be at least 9 CSS px,
and no two texts of a frame may overlap (their drawn boxes, at the frame's dpi).
"""

import functools
from unittest import mock

import matplotlib

matplotlib.use("Agg")

import matplotlib.figure
import matplotlib.text
import pytest

import collectives as cl
from collectives import fabric as fb
from collectives import viz
from collectives.viz import style
from collectives.viz.dist import process_stepper
from collectives.viz.loads import load_stepper

#: CSS px of a stepper's tab panel in a 390 px wide viewport (measured in the built book)
PHONE_PANEL = 322
#: the smallest text a reader can read on a phone, CSS px
SMALLEST = 9

A = cl.algorithms


@functools.lru_cache(maxsize=None)
def drawn(name):
    """Build stepper ``name`` of :data:`STEPPERS` (once per test session) and record every
    frame it saves: its width in inches, its dpi, and the font size (points), string and
    box (pixels) of every text drawn into it."""
    frames = []
    save, draw = matplotlib.figure.Figure.savefig, matplotlib.text.Text.draw

    def savefig(self, *args, **kwargs):
        # savefig's dpi, or the figure's (the book leaves rcParams["savefig.dpi"] "figure")
        dpi = kwargs.get("dpi") or self.dpi
        frames.append({"width": self.get_size_inches()[0], "dpi": dpi, "drawn": {}})
        save(self, *args, **kwargs)

    def text_draw(self, renderer):
        draw(self, renderer)
        if frames and self.get_visible() and self.get_text().strip():
            box = self.get_window_extent(renderer)
            # by artist: a layout pass may draw a text before the final draw does
            frames[-1]["drawn"][id(self)] = (self.get_fontsize(), self.get_text(), box)

    with (
        mock.patch.object(matplotlib.figure.Figure, "savefig", savefig),
        mock.patch.object(matplotlib.text.Text, "draw", text_draw),
        style.fonts(),  # the book's fonts, as every chapter sets them
    ):
        STEPPERS[name]()
    return tuple(frames)


def css_px(points, frame):
    natural = frame["width"] * frame["dpi"]
    return points * frame["dpi"] / 72 * min(natural, PHONE_PANEL) / natural


def _dgx():
    return cl.hardware.preset("dgx-h100")


def _toy(pxn=False):
    system = cl.hardware.preset("superpod-h100", units=1).system
    return cl.topology.cluster(
        2,
        4,
        nvlink_bandwidth=system.link_bandwidth,
        pcie_bandwidth=system.pcie_bandwidth,
        nic_bandwidth=system.nic_bandwidth,
        pxn=pxn,
    )


def _cube():
    return cl.hardware.preset("tpu-v5p", shape=(4, 4, 4))


def _multislice():
    three = cl.hardware.preset("tpu-v5e", shape=(2, 2), slices=3)
    wrap = cl.hardware.preset("tpu-v5e", shape=(2, 2)).wraparound
    inner = A.torus_reduce_scatter((2, 2), wraparound=wrap, concurrent=all(wrap))
    staged = A.hierarchical_all_reduce(inner, A.ring_all_reduce(3))
    layout = viz.wiring_of(
        three,
        ("ici",),
        panels_per_row=3,
        radius=0.2,
        bridge=True,
        max_fan=2,
        panel_captions=[f"slice {s}" for s in range(3)],
    )
    titles = [f"ICI reduce-scatter, {k} MB a link, 22 ms" for k in range(staged.n_steps)]
    return viz.stepper(
        staged, three, buffers=False, dpi=100, steps=[0, 2, 5, 7], layout=layout, step_titles=titles
    )


def _superpod_sharp():
    su = cl.hardware.preset("superpod-h100", units=1)
    n1, g = su.shape[0], 8
    rails = cl.Mesh({"node": n1, "gpu": g}).collective(A.sharp_all_reduce(n1), "node")
    return viz.stepper(
        rails,
        su,
        switch_placement=su.switches[n1 : n1 + g],
        buffers=False,
        dpi=100,
        layout=viz.wiring_of(su, ("pcie", "leaf"), nodes=(0, 1, 2, 31)),
        step_titles=[
            "up the NICs, each rail leaf adds (Σ)",
            f"each leaf multicasts the sum (1→{n1})",
        ],
    )


def _two_zones():
    zones = fb.layered(4, 50e9, [fb.Tier(4, 4), fb.Tier(2, 2, bandwidth=50e9)])
    return load_stepper(
        A.pairwise_all_to_all(32),
        zones,
        32e6,
        steps=[0, 3, 15, 30],
        dpi=100,
        step_titles=[f"partner r xor {k}" for k in range(1, 32)],
    )


#: the book's steppers, by chapter (the same calls, with the chapters' arguments)
STEPPERS = {
    "all_gather": lambda: viz.stepper(A.bidirectional_ring_all_gather(6), cl.topology.ring(6, 1.0)),
    "tpu_topology: one axis of a cube": lambda: viz.stepper(
        A.torus_all_gather((4, 4, 4), axes=(2,), wraparound=_cube().wraparound),
        _cube(),
        layout=viz.wiring_of(_cube(), panels_per_row=2, radius=0.22),
        buffers=False,
        dpi=100,
        step_titles=["16 MB a link, 89 µs", "8 MB a link, 45 µs"],
    ),
    "tpu_topology: two axes of a cube": lambda: viz.stepper(
        A.torus_all_gather((4, 4, 4), axes=(1, 2), concurrent=True),
        _cube(),
        layout=viz.wiring_of(_cube(), panels_per_row=2, radius=0.22),
        buffers=False,
        dpi=100,
        step_titles=[f"{b} MB a link, {t} µs" for b, t in ((2, 22), (1, 11), (8, 89), (4, 45))],
    ),
    "tpu_topology: multislice": _multislice,
    "collectives_in_node: ring": lambda: viz.stepper(
        A.ring_all_reduce(8),
        _dgx(),
        layout=viz.wiring_of(_dgx(), ("nvlink", "pcie"), chips=(5, 4, 4, 5), max_fan=3),
        dpi=100,
        steps=[0, 6, 7, 13],
    ),
    "collectives_in_node: chain": lambda: viz.stepper(
        A.nccl_tree_all_reduce(1, 8, n_segments=4),
        _dgx(),
        layout=viz.wiring_of(_dgx(), ("nvlink",), max_fan=4),
        dpi=100,
        steps=[0, 8, 9, 16],
    ),
    "collectives_in_node: nvls": lambda: viz.stepper(
        A.nvls_all_reduce(8),
        _dgx(),
        layout=viz.wiring_of(_dgx(), ("nvlink", "pcie"), chips=(5, 4, 4, 5), max_fan=3),
        dpi=100,
        step_titles=[
            "multimem.ld_reduce, the chips add (Σ)",
            "GPU c gets slice c back",
            "multimem.st: GPU c stores slice c",
            "the switch multicasts it (1→8)",
        ],
    ),
    "collectives_across_nodes: two-level ring": lambda: viz.stepper(
        A.two_level_ring_all_reduce(2, 4),
        _toy(),
        layout=viz.wiring_of(_toy(), max_fan=3),
        dpi=100,
        steps=[0, 2, 3, 4, 7],
        step_titles=["reduce-scatter in the nodes"] * 3
        + ["all-reduce along the rails"] * 2
        + ["all-gather in the nodes"] * 3,
    ),
    "collectives_across_nodes: hierarchical all-to-all": lambda: viz.stepper(
        A.hierarchical_all_to_all(2, 4),
        _toy(),
        layout=viz.wiring_of(_toy(), max_fan=4),
        dpi=100,
        step_titles=["inside the nodes, to each rail's GPU", "along the rails, between the nodes"],
    ),
    "collectives_across_nodes: SHARP on the rails": _superpod_sharp,
    "collectives_across_nodes: NCCL rings with PXN": lambda: viz.stepper(
        A.nccl_ring_all_reduce(2, 4, n_channels=4),
        _toy(pxn=True),
        buffers=False,
        dpi=100,
        steps=[0, 6, 7, 13],
        layout=viz.wiring_of(_toy(pxn=True), max_fan=4),
    ),
    "real_processes": lambda: process_stepper(A.ring_all_reduce(4), steps=[0, 2, 3, 5]),
    "fabric_design": _two_zones,
}


@pytest.mark.parametrize("name", list(STEPPERS))
def test_every_text_of_a_stepper_frame_is_legible_on_a_phone(name):
    frames = drawn(name)
    assert frames, "the stepper saved no frame"
    too_small = sorted(
        {
            (round(css_px(size, frame), 1), text)
            for frame in frames
            for size, text, _ in frame["drawn"].values()
            if css_px(size, frame) < SMALLEST
        }
    )
    assert not too_small, f"text below {SMALLEST} CSS px at 390 px: {too_small[:8]}"


def _overlap(a, b):
    """Pixels two boxes share in each direction (both positive when they overlap)."""
    return min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)


@pytest.mark.parametrize("name", list(STEPPERS))
def test_no_two_texts_of_a_stepper_frame_overlap(name):
    clashes = set()
    for frame in drawn(name):
        texts = list(frame["drawn"].values())
        for i, (_, text_a, a) in enumerate(texts):
            for _, text_b, b in texts[i + 1 :]:
                dx, dy = _overlap(a, b)
                if dx > 1 and dy > 1:  # more than a pixel each way
                    clashes.add((text_a, text_b))
    assert not clashes, f"overlapping texts: {sorted(clashes)[:8]}"
