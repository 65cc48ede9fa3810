"""collectives.viz.trees: reduction trees read from a Schedule, held to what a reader needs
(issue 12): no edge crosses a rank's circle (where its number is) and every circle lies
inside the axes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import trees


def _distance_to_segment(point, a, b):
    t = np.clip(np.dot(point - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return np.hypot(*(point - (a + t * (b - a))))


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 16])
def test_tree_edges_stay_off_every_node(n):
    schedule = cl.algorithms.double_binary_tree_all_reduce(n)
    for half in (0, 1):
        edges = trees.reduction_edges(schedule, half)
        assert len(edges) == n - 1  # a tree over all n ranks
        pos = trees.tree_layout(edges, n)
        for (a, b), (child, par) in zip(trees.edge_segments(pos, edges), edges):
            # the drawn segment ends on the two circles' rims ...
            assert np.isclose(np.hypot(*(a - pos[child])), trees.NODE_RADIUS)
            assert np.isclose(np.hypot(*(b - pos[par])), trees.NODE_RADIUS)
            # ... and comes no closer than the radius to any rank's centre
            for r in range(n):
                assert _distance_to_segment(pos[r], a, b) >= trees.NODE_RADIUS - 1e-9, (half, r)


@pytest.mark.parametrize("stacked", [True, False])
def test_tree_nodes_inside_the_axes_and_labels_on_top(stacked):
    fig = trees.draw_double_binary_tree(
        cl.algorithms.double_binary_tree_all_reduce(8), stacked=stacked
    )
    first, second = (ax.get_position() for ax in fig.axes)
    # stacked: the second tree below the first; otherwise to its right
    assert (second.y1 <= first.y0) if stacked else (second.x0 >= first.x1)
    for ax in fig.axes:
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        circles = [p for p in ax.patches if isinstance(p, matplotlib.patches.Circle)]
        assert len(circles) == 8
        for c in circles:
            (x, y), r = c.center, c.radius
            assert x0 <= x - r and x + r <= x1 and y0 <= y - r and y + r <= y1
            assert c.get_facecolor()[3] == 1.0  # opaque: no edge shows through
        labels = [t for t in ax.texts if t.get_text().isdigit()]
        assert sorted(int(t.get_text()) for t in labels) == list(range(8))
        assert min(t.get_zorder() for t in labels) > max(c.get_zorder() for c in circles)
    plt.close(fig)


def test_tree_layout_rejects_a_cycle():
    with pytest.raises(cl.CollectivesError):
        trees.tree_layout([(0, 1), (1, 0)], 2)
