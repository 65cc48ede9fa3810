"""Compatibility module: products and GPU clusters now live in :mod:`collectives.topology`
(:mod:`collectives.topology.product`, :mod:`collectives.topology.cluster`)."""

from .topology.cluster import cluster
from .topology.product import product

__all__ = ["product", "cluster"]
