"""PFC deadlock as a cycle of buffer dependencies.

On a lossless fabric (PFC on RoCE, credits on InfiniBand) a packet that waits in the input
buffer of link ``a`` for space on the next link ``b`` of its route makes ``a``'s buffer
depend on ``b``'s: ``b`` full pauses ``a``. When the dependencies of all routes close a
cycle, every buffer of the cycle can be full and paused by the next one at once, and no
packet on it moves again: a deadlock, however small the traffic that filled them. The
cycle is necessary, not sufficient: whether a deadlock forms depends on the traffic too
(Hu et al., HotNets 2016). Up/down routing in a Clos has none: every route climbs and then
descends, so a dependency never leads from a down link back to an up link and no cycle can
close. Routes that leave up/down (down into a leaf and up again, as a reroute around a
failure can) may close one; Guo et al. ("RDMA over Commodity Ethernet at Scale", SIGCOMM
2016, section 4.2) met a PFC deadlock in a Microsoft test cluster, a Clos with up/down
routing, when Ethernet packet flooding broke the up/down routes.

:func:`buffer_dependencies` lists the dependency edges (link a -> link b) of a set of
routes, :func:`dependency_cycle` finds a cycle among them (or None), :func:`node_path_links`
turns a route given as nodes into link ids. The routes are a :class:`~collectives.fabric.Flows`
(one path per flow) or node sequences on a topology. Modelled: which buffers wait on which.
Left out: whether the cycle actually fills (traffic volume and timing), buffer sizes, the
priorities (traffic classes) a real switch keeps apart, and deadlock recovery (PFC
watchdogs). Taught in chapter "Designing the fabric".
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..errors import TopologyError
from ..topology import Topology
from .flows import Flows

__all__ = ["buffer_dependencies", "dependency_cycle", "node_path_links"]


def node_path_links(topology: Topology, nodes: Sequence[int]) -> list[int]:
    """The link ids of a route given as the nodes it visits (endpoints, NICs, switches):
    for each consecutive pair the first directed link between them; a TopologyError names a
    pair that no link joins."""
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    nodes = [int(v) for v in nodes]
    links = []
    for u, v in zip(nodes, nodes[1:]):
        hit = np.flatnonzero((topology.link_src == u) & (topology.link_dst == v))
        if not hit.size:
            raise TopologyError(f"no link of {topology.name} goes from node {u} to node {v}")
        links.append(int(hit[0]))
    return links


def _link_routes(routes, topology):
    """Each route as a sequence of link ids."""
    if isinstance(routes, Flows):
        if routes.share is not None:
            raise TopologyError(
                "buffer dependencies need one path per flow; these flows are "
                "spread over several (adaptive routing)"
            )
        starts = np.flatnonzero(np.r_[True, routes.pair[1:] != routes.pair[:-1]])
        return np.split(routes.link, starts[1:]) if len(routes.link) else []
    if topology is None:
        raise TopologyError("routes given as node sequences need the topology they run on")
    return [node_path_links(topology, r) for r in routes]


def buffer_dependencies(routes, topology: Optional[Topology] = None) -> np.ndarray:
    """The distinct dependency edges ``(a, b)`` (one row each, link ids): some route crosses
    link ``a`` and then link ``b``. ``routes``: :class:`Flows` or node sequences on
    ``topology``."""
    pairs = []
    for path in _link_routes(routes, topology):
        path = np.asarray(path, dtype=np.int64)
        if len(path) > 1:
            pairs.append(np.stack([path[:-1], path[1:]], axis=1))
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(pairs), axis=0)


def dependency_cycle(routes, topology: Optional[Topology] = None) -> Optional[list[int]]:
    """A cycle of buffer dependencies (the link ids, each waiting on the next and the last
    on the first), or None when the routes cannot deadlock this way."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_edges_from(map(tuple, buffer_dependencies(routes, topology).tolist()))
    try:
        return [int(a) for a, _ in nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        return None
