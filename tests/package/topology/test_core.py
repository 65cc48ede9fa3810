"""The Topology itself (collectives.topology.core): declared info, routing contract, link
shares, route levels, the networkx view."""

import numpy as np
import pytest

import collectives as cl
from collectives import topology as tp


def test_to_networkx_carries_bandwidth():
    g = tp.switch(3, 5.0, hop_latency=1e-6).to_networkx()
    assert g.number_of_nodes() == 4 and g.number_of_edges() == 6
    assert {d["bandwidth"] for _, _, d in g.edges(data=True)} == {5.0}
