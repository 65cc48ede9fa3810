"""Hardware presets: topologies built from published numbers, each with its source.

``cl.hardware.preset(name, **options)``, ``presets()`` and ``spec(name)``
(:mod:`.presets`); the records and their sources (:mod:`.systems`); TPU slices, hosts and
wraparound (:mod:`.tpu`); the SuperPOD's switch and cable counts (:mod:`.superpod`);
Meta's RoCE cluster with its NVLink servers (:mod:`.meta`); NCCL's tuner latency model
(:mod:`.nccl_tuner`). Taught in the hardware
chapters (TPU cluster topology, GPU clusters, Designing the fabric).
"""

from . import nccl_tuner, nvswitch, published
from .meta import META_SOURCES, meta_cluster
from .presets import dgx_nodes, preset, presets, spec
from .superpod import SuperPODPlan, superpod_plan
from .systems import System
from .tpu import tpu_hosts, tpu_slices, tpu_wraparound

# Public names report their public home, as before the package was split into modules
# (learners' feedback names them "collectives.hardware.preset" and so on).
for _public in (
    System,
    SuperPODPlan,
    preset,
    presets,
    spec,
    superpod_plan,
    tpu_hosts,
    tpu_wraparound,
    tpu_slices,
    meta_cluster,
    dgx_nodes,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "System",
    "SuperPODPlan",
    "preset",
    "presets",
    "spec",
    "superpod_plan",
    "tpu_hosts",
    "tpu_wraparound",
    "tpu_slices",
    "meta_cluster",
    "META_SOURCES",
    "dgx_nodes",
    "published",
    "nvswitch",
    "nccl_tuner",
]
