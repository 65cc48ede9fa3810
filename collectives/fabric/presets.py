"""Compatibility module: Meta's RoCE cluster moved to :mod:`collectives.hardware.meta`
(built with the one GPU-cluster builder, with its NVLink servers)."""

from ..hardware.meta import GBPS_400, META_SOURCES, meta_cluster

__all__ = ["meta_cluster", "META_SOURCES", "GBPS_400"]
