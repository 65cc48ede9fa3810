"""collectives.viz.fabric: a layered fabric tier by tier, link loads per routing scheme, and
the histogram of flows per cable."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import collectives as cl
from collectives.viz import fabric as vfab


def test_cable_load_histogram_counts_cables_per_number_of_flows():
    loads = {"up": np.array([0, 1, 1, 3]), "down": np.array([2, 2])}
    ax = vfab.plot_cable_loads(loads, ax=plt.figure().gca())
    # x = flows on one cable 0..3; up: one cable with 0, two with 1, none with 2, one with 3
    up, down = ax.containers
    assert [p.get_height() for p in up] == [1, 2, 0, 1]
    assert [p.get_height() for p in down] == [0, 0, 2, 0]
    with pytest.raises(cl.CollectivesError, match="whole flows"):
        vfab.plot_cable_loads({"up": np.array([0.5, 1.0])}, ax=plt.figure().gca())
    plt.close("all")


def test_link_loads_need_a_scheme_colour():
    ax = vfab.plot_link_loads({"ECMP, 1 QP": [3, 1, 2]}, ax=plt.figure().gca(), even=2)
    # sorted busiest first
    assert list(ax.lines[0].get_ydata()) == [3, 2, 1]
    with pytest.raises(cl.CollectivesError, match="no colour for scheme"):
        vfab.plot_link_loads({"mystery": [1]}, ax=plt.figure().gca())
    plt.close("all")


def test_a_layered_fabric_is_drawn_cable_by_cable():
    toy = cl.fabric.layered(4, 1e9, [cl.fabric.Tier(2, 2)])
    ax = vfab.draw_layered(toy, ax=plt.figure().gca())
    # one line per cable, drawn once (its up direction): 8 host cables + 2 x 2 leaf-spine
    assert len(ax.lines) == np.count_nonzero(toy.link_up) == 8 + 4
    with pytest.raises(cl.CollectivesError, match="layered"):
        vfab.draw_layered(cl.topology.ring(4, 1.0))
    plt.close("all")
