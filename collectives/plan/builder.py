"""What training and inference plans are built from: the cluster, its chip's numbers, and
the records of the collectives a step issues.

:func:`resolve_cluster` takes a Topology or a preset name; :func:`chip_numbers` reads the
peak FLOP/s, HBM capacity and bandwidth from the topology's hardware record unless given;
:func:`fp8_peak` gives the chip's dense FP8 peak for the FP8-compute what-if
(:data:`FP8_PEAK`: only the H100 presets have one in the course's sources);
:class:`RecordBuilder` costs each collective of a step (one
:class:`~collectives.plan.costing.Coster` shared by all, so that a kind of collective is
costed once) and keeps the :class:`~collectives.plan.report.Record` lines of the plan. Used by
:func:`collectives.plan.training_step` and :func:`collectives.plan.inference`.
"""

from __future__ import annotations

import math

from ..errors import CollectivesError
from ..topology import Topology
from ..validation import number
from .costing import Coster
from .report import Record

__all__ = [
    "RecordBuilder",
    "resolve_cluster",
    "chip_numbers",
    "fp8_peak",
    "FP8_PEAK",
    "H100_FP8_SOURCE",
]

H100_FP8_SOURCE = (
    "NVIDIA H100 Tensor Core GPU page, https://www.nvidia.com/en-us/data-center/"
    "h100/ (H100 SXM: FP8 Tensor Core 3,958 TFLOP/s with sparsity; dense is half)"
)
#: dense FP8 tensor-core peak per chip (FLOP/s), by hardware record: H100 SXM 1,979 TFLOP/s
#: (H100_FP8_SOURCE), twice its dense BF16 989. TPU v5p has no FP8 matmul in the course's
#: sources (The Scaling Book lists BF16 and INT8), so it has no entry
FP8_PEAK = {
    "dgx-h100": 1.979e15,
    "superpod-h100": 1.979e15,
    "meta-roce-32k": 1.979e15,
    "meta-roce-24k": 1.979e15,
}


def resolve_cluster(cluster) -> Topology:
    """A Topology, or a hardware preset name (built with its defaults)."""
    if isinstance(cluster, Topology):
        return cluster
    if isinstance(cluster, str):
        from ..hardware import preset

        return preset(cluster)
    raise CollectivesError(
        f"cluster must be a Topology (cl.hardware.preset(...)) or a preset "
        f"name, got {type(cluster).__name__}"
    )


def chip_numbers(topology, flops, hbm, hbm_bandwidth=None):
    """(peak FLOP/s, HBM bytes, HBM bytes/s) from the topology's hardware record unless
    given."""
    system = topology.system
    if flops is None:
        if system is None:
            raise CollectivesError(
                f"{topology.name} has no hardware record: give flops_per_device=... (FLOP/s)"
            )
        flops = system.bf16_flops
    flops = number(flops, "flops_per_device", positive=True)
    if hbm is None and system is not None:
        hbm = system.hbm_bytes
    if hbm_bandwidth is None and system is not None:
        hbm_bandwidth = system.hbm_bandwidth
    if hbm is not None:
        hbm = number(hbm, "hbm_bytes", positive=True)
    if hbm_bandwidth is not None:
        hbm_bandwidth = number(hbm_bandwidth, "hbm_bandwidth", positive=True)
    return flops, hbm, hbm_bandwidth


def fp8_peak(topology) -> float:
    """The dense FP8 peak (FLOP/s) of the topology's chip, from :data:`FP8_PEAK`."""
    system = topology.system
    name = None if system is None else system.name
    if name not in FP8_PEAK:
        raise CollectivesError(
            f"no FP8 peak is recorded for {name or topology.name} (the "
            f"H100 presets have one: {H100_FP8_SOURCE}); give "
            "flops_per_device=... for compute='fp8'"
        )
    return FP8_PEAK[name]


class RecordBuilder:
    """Collects a plan's records: :meth:`add` costs each (collective, mesh axes, bytes) with
    one shared :class:`~collectives.plan.costing.Coster` and keeps a
    :class:`~collectives.plan.report.Record` of it in :attr:`records`."""

    def __init__(self, coster: Coster, mesh):
        self.coster, self.mesh = coster, mesh
        self.records: list[Record] = []

    def add(
        self, purpose, collective, axes, nbytes, count, phase, hidden_behind=None, stream="data"
    ):
        """Record ``count`` runs of ``collective`` of ``nbytes`` over the mesh ``axes`` (axes
        of size 1 dropped; nothing is recorded if none is left or ``count`` is 0), issued in
        ``phase``, that the compute of ``hidden_behind`` can hide (None: exposed; the
        windows of :mod:`collectives.plan.report`), in overlap ``stream``."""
        axes = tuple(a for a in axes if self.mesh.axis_size(a) > 1)
        if not axes or count == 0:
            return
        c = self.coster.cost(collective, axes, nbytes)
        size = math.prod(self.mesh.axis_size(a) for a in axes)
        self.records.append(
            Record(
                purpose,
                collective,
                ",".join(axes),
                size,
                float(nbytes),
                int(count),
                phase,
                hidden_behind,
                c.span,
                c.algorithm,
                c.seconds,
                c.bottleneck_level,
                c.level_seconds(),
                c.schedule,
                stream,
            )
        )
