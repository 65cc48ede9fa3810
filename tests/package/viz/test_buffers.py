"""collectives.viz.buffers: every participant's buffer in one symbolic state, held to what a
reader needs (issue 12): in the concurrent torus all-gather no two numbers of the buffer panel
overlap, and every cell's text follows the one font setting."""

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import collectives as cl
from collectives import viz
from collectives.replay import trace
from collectives.viz import buffers, style


def _text_boxes(fig, ax):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text()]


@pytest.mark.parametrize("size", [10, style.FONT_SIZE])  # matplotlib's and the book's
def test_concurrent_torus_buffer_numbers_do_not_touch(size):
    schedule = cl.algorithms.torus_all_gather((2, 3), concurrent=True)
    topology = cl.topology.torus((2, 3), 4.5e10, 1e-6)
    with style.fonts(size):
        fig, axes = viz.frame_figure(schedule, topology)
        ax = viz.draw_buffers(schedule, trace(schedule)[-1], ax=axes[0, -1], square=False)
        boxes = _text_boxes(fig, ax)
    # every slot filled at the end; a rank's whole shard (four slots) labelled once, by the
    # shard (the origin rank), 0..5
    assert len(boxes) == 6 * 6
    assert {text for text, _ in boxes} == {str(r) for r in range(6)}
    for (_, a), (_, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    shard = ax.transData.transform([[0, 0], [4, 1]])
    width, height = abs(shard[1] - shard[0])
    # each number fits its shard's four cells
    assert max(box.width for _, box in boxes) < width
    assert max(box.height for _, box in boxes) < height
    plt.close(fig)


def test_small_schedules_keep_chunk_numbers():
    schedule = cl.algorithms.bidirectional_ring_all_gather(4)  # 8 slots: chunk labels
    state = trace(schedule)[-1]
    ax = viz.draw_buffers(schedule, state, ax=plt.figure().gca())
    assert {t.get_text() for t in ax.texts} == {str(c) for c in range(8)}
    plt.close("all")


def test_cell_text_follows_the_font_setting():
    """No size in points in the module: a cell's number is the "cell" role, 4 points below
    the figure text (9 pt at the book's 13, 11 pt at 15)."""
    schedule = cl.algorithms.ring_all_gather(4)
    state = trace(schedule)[-1]
    for size, expected in ((13, 9), (15, 11)):
        with style.fonts(size):
            ax = viz.draw_buffers(schedule, state, ax=plt.figure().gca())
        assert {t.get_fontsize() for t in ax.texts} == {expected}
        plt.close("all")


def test_cell_texts_name_chunk_contributions_and_routes():
    rs = cl.algorithms.ring_reduce_scatter(3)
    last = trace(rs)[-1]
    # rank r ends with chunk r summed over all 3 ranks
    assert {buffers.cell_text(rs, last, r, r) for r in range(3)} == {"0\n3/3", "1\n3/3", "2\n3/3"}
    a2a = cl.algorithms.direct_all_to_all(3)
    end = trace(a2a)[-1]
    # rank 1's slot 0 holds the part rank 0 sent to rank 1
    assert buffers.cell_text(a2a, end, 1, 0) == "0→1"
    ag = cl.algorithms.torus_all_gather((2, 3), concurrent=True)  # 24 slots, 4 per shard
    assert buffers.shard_size(ag) == 4 and buffers.shard_size(cl.algorithms.ring_all_gather(4)) == 1
