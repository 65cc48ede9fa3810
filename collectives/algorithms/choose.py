"""Pick the fastest algorithm for a collective on a topology at a buffer size.

Every catalogue algorithm for the collective that accepts the topology's rank count is
built and costed with :func:`collectives.time`; the fastest wins. This is how NCCL
chooses too (its tuning model costs each algorithm and protocol as latency + bytes /
bandwidth and takes the minimum), with our cost model in place of NCCL's tables.
Torus algorithms are considered only on torus topologies (built for their shape).
Taught in chapter "All-reduce".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..cost import time
from ..errors import CollectivesError, TopologyError
from ..semantics import collective_spec
from . import torus
from .catalog import CATALOG, supports

if TYPE_CHECKING:
    from ..cost import Timing
    from ..schedule import Schedule
    from ..topology import Topology

__all__ = ["Choice", "fastest"]


@dataclass(frozen=True)
class Choice:
    """The winner (``name``, ``schedule``, ``timing``) and every candidate's time in
    ``table``, fastest first, as (name, seconds) pairs."""

    name: str
    schedule: Schedule
    timing: Timing
    table: tuple[tuple[str, float], ...]


def fastest(
    collective: str,
    topology: Topology,
    nbytes: float,
    candidates: Iterable[str] | None = None,
    root: int = 0,
) -> Choice:
    """The fastest catalogue algorithm for ``collective`` on ``topology`` at ``nbytes``
    (bytes: each rank's full buffer ``S``, as for :func:`collectives.time`).

    ``candidates``: names to choose among (default: every applicable one). ``root``: for
    broadcast and reduce.
    """
    spec = collective_spec(collective)
    from ..topology import Topology

    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    n = topology.n_ranks
    if candidates is None:
        names = [name for name, a in CATALOG.items() if a.collective == spec.name]
    else:
        names = list(candidates)
        unknown = [c for c in names if c not in CATALOG]
        if unknown:
            raise CollectivesError(
                f"unknown algorithm {unknown[0]!r}; see collectives.algorithms.CATALOG"
            )
        wrong = [c for c in names if CATALOG[c].collective != spec.name]
        if wrong:
            raise CollectivesError(
                f"{wrong[0]} computes {CATALOG[wrong[0]].collective}, not {spec.name}"
            )
    rows = []
    for name in names:
        algorithm = CATALOG[name]
        if not supports(name, n):
            continue
        if algorithm.topology == "torus":
            if not topology.info.is_torus:
                continue
            schedule = _build_torus(name, topology.shape, topology.wraparound)
        elif spec.rooted:
            schedule = algorithm.build(n, root=root)
        else:
            schedule = algorithm.build(n)
        rows.append((time(schedule, topology, nbytes).seconds, name, schedule))
    if not rows:
        raise CollectivesError(
            f"no algorithm in the catalogue computes {spec.name} on {n} ranks of {topology.name}"
        )
    rows.sort(key=lambda row: row[0])
    seconds, name, schedule = rows[0]
    return Choice(
        name, schedule, time(schedule, topology, nbytes), tuple((n_, s) for s, n_, _ in rows)
    )


def _build_torus(name, shape, wraparound):
    wrap = wraparound if wraparound is not None else True
    builders = {
        "torus_all_gather": lambda: torus.torus_all_gather(shape, wraparound=wrap),
        "torus_all_gather_concurrent": lambda: torus.torus_all_gather(
            shape, concurrent=True, wraparound=wrap
        ),
        "torus_reduce_scatter": lambda: torus.torus_reduce_scatter(shape, wraparound=wrap),
        "torus_reduce_scatter_concurrent": lambda: torus.torus_reduce_scatter(
            shape, concurrent=True, wraparound=wrap
        ),
        "torus_all_reduce": lambda: torus.torus_all_reduce(shape, wraparound=wrap),
        "torus_all_reduce_concurrent": lambda: torus.torus_all_reduce(
            shape, concurrent=True, wraparound=wrap
        ),
        "torus_all_to_all": lambda: torus.torus_all_to_all(shape),
    }
    return builders[name]()
