"""The product of topologies: each one a dimension of one multi-dimensional topology.

:func:`product` stacks existing topologies as the dimensions of one topology, as ASTRA-sim
builds a system from ring, switch and fully-connected building blocks (one per dimension),
routed dimension by dimension; a TPU multislice is the product of a DCN switch and the
slice's ICI torus. The dimensions are declared in ``info.dimensions``. Every bandwidth is
bytes/s per direction of one link, every latency seconds per link. Taught in chapters
"TPU cluster topology" and "Collectives across nodes".
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ..errors import TopologyError
from .core import Topology, TopologyInfo

__all__ = ["product"]


class _ProductRouter:
    """Dimension-order routing: along dimension 0 first (that dimension's own router on the
    local coordinates, in the copy the packet is in), then dimension 1, and so on."""

    def __init__(self, dimensions, strides, link_offsets):
        self.dimensions = dimensions
        self.strides = strides
        self.link_offsets = link_offsets

    def __call__(self, src, dst):
        node = src.copy()
        pairs, links = [], []
        for dim, stride, offset in zip(self.dimensions, self.strides, self.link_offsets):
            size = dim.n_ranks
            here, there = (node // stride) % size, (dst // stride) % size
            moving = np.flatnonzero(here != there)
            if moving.size:
                pair, link = dim.paths(here[moving], there[moving])
                copy = _copy_index(node[moving], stride, size)
                pairs.append(moving[pair])
                links.append(offset + copy[pair] * dim.n_links + link)
            node = node + (there - here) * stride
        pair, link = np.concatenate(pairs), np.concatenate(links)
        order = np.argsort(pair, kind="stable")  # each pair's hops stay in dimension order
        return pair[order], link[order]


def _copy_index(node, stride, size):
    """Which copy of a dimension (of the given stride and size) an endpoint sits in: its
    row-major index over the other dimensions' coordinates."""
    return node // (stride * size) * stride + node % stride


def product(
    *dimensions: Topology, name: Optional[str] = None, level_names: Optional[Sequence[str]] = None
) -> Topology:
    """The multi-dimensional topology whose dimension ``d`` is ``dimensions[d]``.

    Endpoints are numbered row-major over ``(dimensions[0].n_ranks, dimensions[1].n_ranks,
    ...)`` (dimension 0 most significant). For every dimension there is one copy of its
    topology for every combination of the other coordinates, with that dimension's links
    (bandwidth, latency) and switches; switches come after all endpoints, dimension by
    dimension, copy by copy. A route moves along dimension 0 with that dimension's own
    router, then along dimension 1, and so on, skipping dimensions already in place.

    ``info.shape`` is the dimensions' sizes, ``info.dimensions`` the dimension topologies,
    ``info.levels`` one name per dimension
    (``level_names``, default ``"dim0"``, ``"dim1"``, ...), ``link_level`` each link's
    dimension. A product of two rings is wired and routed as the 2-D torus of that shape.

    Modelled: per-dimension link speeds and routing, shared links. Left out: routes to the
    dimensions' switches (in-network reduction inside one dimension is costed on that
    dimension alone), routing that mixes dimensions, dimensions with NICs.
    """
    if not dimensions:
        raise TopologyError("product() needs at least one dimension (a Topology)")
    for d, dim in enumerate(dimensions):
        if not isinstance(dim, Topology):
            raise TopologyError(
                f"dimension {d} of product() must be a Topology, got {type(dim).__name__}"
            )
        if dim.n_nics:
            raise TopologyError(
                f"dimension {d} of product() ({dim.name}) has NICs; only topologies of "
                "endpoints, switches and links can be dimensions"
            )
    levels = _level_names(level_names, len(dimensions))
    sizes = tuple(dim.n_ranks for dim in dimensions)
    n_ranks = math.prod(sizes)
    strides = [math.prod(sizes[d + 1 :]) for d in range(len(sizes))]
    srcs, dsts, bandwidths, latencies, link_levels, link_offsets = [], [], [], [], [], []
    n_links = 0
    n_switches = 0
    for d, (dim, stride) in enumerate(zip(dimensions, strides)):
        size = dim.n_ranks
        n_copies = n_ranks // size
        copy = np.arange(n_copies)[:, None]
        # a copy's local endpoint j is the global endpoint with coordinate j on dimension d
        first = copy // stride * stride * size + copy % stride
        ends = []
        for local in (dim.link_src, dim.link_dst):
            local = local[None, :]
            ends.append(
                np.where(
                    local < size,
                    first + local * stride,
                    n_ranks + n_switches + copy * dim.n_switches + local - size,
                )
            )
        srcs.append(ends[0].ravel())
        dsts.append(ends[1].ravel())
        bandwidths.append(np.tile(dim.link_bandwidth, n_copies))
        latencies.append(np.tile(dim.link_latency, n_copies))
        link_levels.append(np.full(n_copies * dim.n_links, d))
        link_offsets.append(n_links)
        n_links += n_copies * dim.n_links
        n_switches += n_copies * dim.n_switches
    label = " x ".join(dim.name for dim in dimensions)
    return Topology(
        n_ranks,
        np.concatenate(srcs),
        np.concatenate(dsts),
        np.concatenate(bandwidths),
        np.concatenate(latencies),
        _ProductRouter(tuple(dimensions), strides, link_offsets),
        n_switches=n_switches,
        link_level=np.concatenate(link_levels),
        info=TopologyInfo(
            family="product", shape=sizes, levels=levels, dimensions=tuple(dimensions)
        ),
        name=f"product ({label})" if name is None else name,
    )


def _level_names(level_names, n_dimensions):
    if level_names is None:
        return tuple(f"dim{d}" for d in range(n_dimensions))
    if isinstance(level_names, str):
        raise TopologyError(f"level_names must be a sequence of names, got {level_names!r}")
    names = tuple(level_names)
    if (
        len(names) != n_dimensions
        or len(set(names)) != len(names)
        or not all(isinstance(n, str) and n for n in names)
    ):
        raise TopologyError(
            f"level_names must be {n_dimensions} distinct non-empty strings (one per "
            f"dimension), got {names!r}"
        )
    return names
