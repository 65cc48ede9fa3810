"""TPU slices and multislices from the published numbers: which axes wrap, which chips
share a host, and the slice (or slices over the data-center network) as a Topology.

Sources: The Scaling Book, "How to Think About TPUs" (2026-07 version), Google's TPU v5p page
for the 3-D wraparound rule, and Google's Cloud TPU and GKE pages for TPU7x's hosts (the
records in :mod:`collectives.hardware.systems`). The ICI hop latency of the presets, 1 us, is
an assumption after The Scaling Book's "typically around 1us" per hop: Google publishes none.
The DCN latency is not published either and is 0 unless ``dcn_latency=`` gives one. Modelled:
the ICI torus of a slice with the published wraparound rule, hosts (tiles of chips sharing
PCIe and DCN), multislice as a product topology (DCN first, then the slice's ICI torus). Left
out: the hosts and NICs the DCN traffic really crosses (the per-chip DCN figure already shares
a host's bandwidth among its chips), contention inside the data-center network, and twisted
tori. Taught in chapter "TPU cluster topology".
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import TopologyError
from ..topology import Topology, product, switch, torus
from ..validation import integer
from .systems import System, lookup, no_more_options

__all__ = ["tpu_wraparound", "tpu_hosts", "tpu_slices"]


def tpu_wraparound(kind: str, shape: Sequence[int]) -> tuple[bool, ...]:
    """Which axes of a TPU slice have wraparound links (Scaling Book, 2026-07; Google's
    TPU v5p page).

    2D chips (v5e, v6e): an axis wraps only when it is the full 16 chips (The Scaling Book).
    3D chips (v4, v5p, TPU7x) are built from 4x4x4 cubes joined by optical circuit switches:
    a slice made of whole cubes (every axis a multiple of 4) wraps on every axis; smaller
    slices (2x2x1, 2x2x2, 2x2x4, ...) have none. Google's v5p page states the same rule: "All
    4x4x4 and larger slices (one cube) have full 3D torus connectivity. Slices smaller than a
    full cube ... don't have wrap-around links". Its v4 page's condition "2A=B=C or 2A=2B=C,
    where each dimension is a multiple of 4" names the shapes the v5p table marks as
    supporting a twisted torus. For TPU7x the rule is assumed (no Google page states its
    topology). Twisted tori are not modelled.
    """
    if kind == "tpu-2d":
        return tuple(size == 16 for size in shape)
    whole_cubes = all(size % 4 == 0 for size in shape)
    return tuple(whole_cubes for _ in shape)


def tpu_hosts(name: str, shape: Sequence[int] | None = None) -> np.ndarray:
    """The host of every chip of a TPU slice (row-major chip order): chips are grouped into
    tiles of the system's ``host_shape`` (2x2x1 on v4, v5p and TPU7x; 8 chips on v5e/v6e,
    The Scaling Book's "4x2", laid 2x4 so that Google's v5e slice table holds: 2x4 on one
    host, 4x4 on 2, 8x16 on 16; The Scaling Book, 2026-07; TPU7x: 4 chips and 2 NICs per VM,
    Google's GKE Ironwood page),
    host ids row-major over the tiles. An axis shorter than the tile leaves its
    hosts partly used, as in a small slice. Hosts share their PCIe and DCN bandwidth among
    their chips; ``spec(name).pcie_bandwidth`` and ``dcn_bandwidth`` are per chip."""
    system = lookup(name)
    if system.host_shape is None:
        raise TopologyError(
            f"{system.name}: hosts are not published in the pinned source ({system.source})"
            if system.kind.startswith("tpu")
            else f"{system.name} is a GPU system; its nodes are its hosts"
        )
    shape = (
        system.default_shape
        if shape is None
        else tuple(integer(size, "shape", minimum=1, error=TopologyError) for size in shape)
    )
    if len(shape) != len(system.host_shape):
        raise TopologyError(
            f"{system.name} slices are {len(system.host_shape)}-D; got shape {shape}"
        )
    coords = np.indices(shape).reshape(len(shape), -1)
    tile = np.array(system.host_shape)[:, None]
    tiles_per_axis = -(-np.array(shape) // np.array(system.host_shape))
    return np.ravel_multi_index(tuple(coords // tile), tuple(tiles_per_axis))


def tpu_slices(system: System, hop_latency: float, options: dict[str, Any], name: str) -> Topology:
    """The slice (or multislice) a TPU preset builds from ``options`` (``shape``,
    ``wraparound``, ``slices``, ``dcn_latency``; see :func:`collectives.hardware.preset`);
    any other option is refused, naming preset ``name``."""
    shape = tuple(options.pop("shape", system.default_shape))
    want = 2 if system.kind == "tpu-2d" else 3
    if len(shape) != want:
        raise TopologyError(f"{system.name} slices are {want}-D; got shape {shape}")
    wrap = options.pop("wraparound", None)
    if wrap is None:
        wrap = tpu_wraparound(system.kind, shape)
    slices = integer(options.pop("slices", 1), "slices", minimum=1, error=TopologyError)
    dcn_latency = options.pop("dcn_latency", 0.0)
    no_more_options(options, name)
    topo = torus(shape, system.link_bandwidth, hop_latency, wrap)
    if slices > 1:
        if system.dcn_bandwidth is None:
            raise TopologyError(f"{system.name}: no DCN bandwidth is published; use slices=1")
        dcn = switch(slices, system.dcn_bandwidth, dcn_latency)
        label = f"{slices} slices of {topo.name} over DCN"
        topo = product(dcn, topo, level_names=("dcn", "ici"), name=label)
    return topo
