"""How long a Schedule takes on a Topology, and the nccl-tests bandwidth figures.

The model is step-synchronous: a step starts when the previous one has finished, and takes

    max over its transfers of path latency  +  max over links of (bytes on the link / bandwidth)

where a transfer moves ``nbytes / schedule.n_chunks`` bytes over every link of its route,
and transfers that share a link share its bandwidth. Local transfers (src == dst) are free.
This is the alpha-beta model generalised to contention: on an uncontended topology it
equals the closed forms in :mod:`collectives.analytic`. A transfer to or from a switch
participant (in-network reduction) crosses the links between the endpoint and that switch.
Costing works from the schedule's :class:`~collectives.traffic.Traffic` (runs of identical
steps), never from its list of transfers, so a 32,768-rank ring costs one routed pattern.
A collective can be placed on some endpoints of a bigger topology (``placement``), and
several collectives that run at the same time are costed together by
:func:`time_concurrent`. Left out: overlap between steps (see ``pipelined`` algorithms),
protocol overheads, compute time of reductions, congestion control. Taught in chapter "Cost
models and the ring all-gather".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional, Sequence, TypeVar, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollectivesError, TopologyError
from .schedule import schedule_arg
from .semantics import collective_spec
from .validation import check_nbytes, int_array, integer

if TYPE_CHECKING:
    from .schedule import Schedule
    from .topology import Topology
    from .traffic import Traffic

__all__ = [
    "Timing",
    "time",
    "Job",
    "ConcurrentTiming",
    "time_concurrent",
    "algbw",
    "busbw",
    "bus_factor",
    "placement_nodes",
    "step_link_bytes",
    "TimeGrid",
    "time_grid",
]

#: runs x links up to which per-link loads are counted densely (no sort)
_DENSE_LIMIT = 8_000_000


@dataclass(frozen=True, eq=False)
class Timing:
    """The result of :func:`time`: total seconds plus per-step and per-link detail.

    Per step ``i``: ``step_seconds[i] = step_latency[i] + step_transfer[i]``;
    ``step_bottleneck_link[i]`` is the most loaded link (-1 if the step uses none) carrying
    ``step_bottleneck_bytes[i]``. Per link: ``link_bytes`` over the whole schedule. Per link
    level of the topology (``levels``, e.g. "nvlink", "leaf" in a cluster): which level
    bounds the steps (:meth:`level_seconds`, :attr:`bottleneck_level`) and the bytes each
    level carries (:meth:`level_bytes`).
    """

    seconds: float
    nbytes: float
    step_seconds: NDArray[np.float64]
    step_latency: NDArray[np.float64]
    step_transfer: NDArray[np.float64]
    step_bottleneck_link: NDArray[np.int64]
    step_bottleneck_bytes: NDArray[np.float64]
    link_bytes: NDArray[np.float64]
    schedule_name: str
    topology_name: str
    levels: tuple[str, ...] = ("link",)
    link_level: Optional[NDArray[np.int64]] = None

    @property
    def n_steps(self) -> int:
        return len(self.step_seconds)

    def level_seconds(self) -> dict[str, float]:
        """Transfer seconds of the steps whose busiest link is on each level (latency
        apart): where the time goes. Levels no step is bounded by are left out."""
        used = self.step_bottleneck_link >= 0
        if self.link_level is None or not used.any():
            return {}
        level = self.link_level[self.step_bottleneck_link[used]]
        seconds = np.bincount(level, weights=self.step_transfer[used], minlength=len(self.levels))
        return {self.levels[i]: float(seconds[i]) for i in np.flatnonzero(seconds)}

    @property
    def bottleneck_level(self) -> str | None:
        """The level that bounds the most transfer time (None if nothing moves)."""
        seconds = self.level_seconds()
        return max(seconds, key=seconds.__getitem__) if seconds else None

    def level_bytes(self) -> dict[str, float]:
        """Bytes carried by the links of each level over the whole schedule."""
        if self.link_level is None:
            return {}
        total = np.bincount(self.link_level, weights=self.link_bytes, minlength=len(self.levels))
        return {name: float(total[i]) for i, name in enumerate(self.levels)}

    @property
    def algbw(self) -> float:
        """``nbytes / seconds`` (bytes/s)."""
        return algbw(self.nbytes, self.seconds)

    def endpoint_link_bytes(
        self, topology: Topology, level: Optional[str] = None, endpoint: Optional[int] = None
    ) -> tuple[float, float]:
        """Bytes this timing puts on an endpoint's own links of ``level`` (a name of
        ``topology.info.levels``; default the first): ``(out, in)``, the busiest link leaving
        the endpoint and the busiest link arriving at it (on a DGX node's "nvlink" level: GPU
        to NVSwitch and back). ``endpoint=None``: the busiest such links over all endpoints
        (what bounds the time). ``topology`` is the one the timing was computed on."""
        from .topology import Topology

        if not isinstance(topology, Topology):
            raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
        if topology.n_links != len(self.link_bytes) or topology.name != self.topology_name:
            raise TopologyError(
                f"this timing is of {self.topology_name!r}, not of {topology.name!r}"
            )
        levels = tuple(topology.info.levels)
        level = levels[0] if level is None else level
        if level not in levels:
            raise TopologyError(
                f"{topology.name} has no {level!r} links (levels: {', '.join(levels)})"
            )
        on_level = topology.link_level == levels.index(level)
        out = on_level & (topology.link_src < topology.n_ranks)
        into = on_level & (topology.link_dst < topology.n_ranks)
        if endpoint is not None:
            endpoint = integer(
                endpoint, "endpoint", minimum=0, maximum=topology.n_ranks - 1, error=TopologyError
            )
            out &= topology.link_src == endpoint
            into &= topology.link_dst == endpoint
        if not out.any() or not into.any():
            where = "any endpoint" if endpoint is None else f"endpoint {endpoint}"
            raise TopologyError(f"no {level!r} link out of and into {where} of {topology.name}")
        return float(self.link_bytes[out].max()), float(self.link_bytes[into].max())

    def rows(self) -> list[dict[str, float]]:
        """One dict per step (for tables in the book)."""
        return [
            {
                "step": i,
                "seconds": float(self.step_seconds[i]),
                "latency": float(self.step_latency[i]),
                "transfer": float(self.step_transfer[i]),
                "bottleneck_link": int(self.step_bottleneck_link[i]),
                "bottleneck_bytes": float(self.step_bottleneck_bytes[i]),
            }
            for i in range(self.n_steps)
        ]

    def __repr__(self) -> str:
        return (
            f"Timing({self.schedule_name!r} on {self.topology_name!r}, "
            f"nbytes={self.nbytes:g}: {self.seconds:.6g} s over {self.n_steps} steps)"
        )


def _placement(
    schedule: Schedule,
    topology: Topology,
    placement: Optional[ArrayLike],
    switch_placement: Optional[ArrayLike],
    what: str,
) -> NDArray[np.int64]:
    """participant -> topology node, checked: ranks onto distinct endpoints, switch
    participants onto distinct switches."""
    n = schedule.n_ranks
    if placement is None:
        if topology.n_ranks != n:
            raise TopologyError(
                f"{what} has {n} ranks but {topology.name} has {topology.n_ranks} endpoints; "
                "give placement=... (which endpoint plays each rank) to run it on some of them"
            )
        ranks = np.arange(n, dtype=np.int64)
    else:
        ranks = int_array(
            placement,
            "placement",
            shape=(n,),
            minimum=0,
            maximum=topology.n_ranks - 1,
            error=TopologyError,
        )
        if len(np.unique(ranks)) != n:
            raise TopologyError("placement must put every rank on a different endpoint")
    switches = topology.switches
    if switch_placement is None:
        if schedule.n_switches > len(switches):
            raise TopologyError(
                f"{what} reduces in {schedule.n_switches} switches but {topology.name} has "
                f"{len(switches)}"
            )
        nodes = switches[: schedule.n_switches]
    else:
        nodes = int_array(
            switch_placement, "switch_placement", shape=(schedule.n_switches,), error=TopologyError
        )
        if not np.isin(nodes, switches).all() or len(np.unique(nodes)) != len(nodes):
            raise TopologyError(
                f"switch_placement must name distinct switch nodes of {topology.name}"
            )
    return np.concatenate([ranks, nodes]).astype(np.int64)


def placement_nodes(
    schedule: Schedule,
    topology: Topology,
    placement: Optional[ArrayLike] = None,
    switch_placement: Optional[ArrayLike] = None,
) -> NDArray[np.int64]:
    """The topology node of every participant of ``schedule`` (ranks, then switch
    participants), placed as :func:`time` places them: ``placement`` (which endpoint plays
    each rank; default rank r on endpoint r), ``switch_placement`` (which switch plays each
    switch participant; default the topology's switches in order). Raises
    :class:`~collectives.TopologyError` for a placement that does not fit."""
    from .topology import Topology

    schedule_arg(schedule)
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    return _placement(schedule, topology, placement, switch_placement, "the schedule")


def _max_per_run(
    values: NDArray[np.float64], run: NDArray[np.int64], n_runs: int
) -> NDArray[np.float64]:
    """The largest of ``values`` in each run (0 for a run without any); ``run`` is sorted."""
    out = np.zeros(n_runs)
    if len(values):
        starts = np.flatnonzero(np.concatenate([[True], run[1:] != run[:-1]]))
        out[run[starts]] = np.maximum.reduceat(values, starts)
    return out


#: per-run link bytes of one step of each run, sparse: (run, link, bytes) of each loaded link
_RunLinkBytes = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]


def _run_costs(
    traffic: Traffic, topology: Topology, chunk_bytes: float
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], _RunLinkBytes
]:
    """Per run: (latency s, transfer s, bottleneck link, bytes on it), and per-run link
    bytes as a sparse (run, link, bytes) triple, for one step of each run."""
    runs = traffic.runs
    n_runs, n_links = len(runs), topology.n_links
    src = np.concatenate([r.src for r in runs]) if runs else np.zeros(0, np.int64)
    dst = np.concatenate([r.dst for r in runs]) if runs else np.zeros(0, np.int64)
    chunks = np.concatenate([r.chunks for r in runs]) if runs else np.zeros(0, np.int64)
    run_of_pair = np.repeat(np.arange(n_runs, dtype=np.int64), [r.n_pairs for r in runs])
    remote = np.flatnonzero(src != dst)  # local copies are free
    pair, link, share = topology.link_shares(src[remote], dst[remote])  # adaptive: < 1
    run_of_hop = run_of_pair[remote][pair]
    # (numpy's stubs type a weighted bincount as integer: the casts below copy nothing)
    latency = np.bincount(
        pair, weights=topology.link_latency[link] * share, minlength=len(remote)
    ).astype(np.float64, copy=False)
    run_latency = _max_per_run(latency, run_of_pair[remote], n_runs)
    key = run_of_hop * n_links + link
    weight = chunks[remote][pair] * share
    bottleneck = np.full(n_runs, -1, dtype=np.int64)
    bottleneck_bytes = np.zeros(n_runs)
    transfer = np.zeros(n_runs)
    if n_runs * n_links <= _DENSE_LIMIT:  # a (runs, links) table, no sort
        dense = np.bincount(key, weights=weight, minlength=n_runs * n_links).astype(
            np.float64, copy=False
        )
        keys = np.flatnonzero(dense).astype(np.int64, copy=False)
        k_bytes = dense[keys] * chunk_bytes
        table = dense.reshape(n_runs, n_links)
        load = table * (chunk_bytes / topology.link_bandwidth)
        busiest = np.argmax(load, axis=1) if n_links else np.zeros(n_runs, np.int64)
        used = table.any(axis=1) if n_links else np.zeros(n_runs, bool)
        rows = np.flatnonzero(used)
        bottleneck[rows] = busiest[rows]
        bottleneck_bytes[rows] = table[rows, busiest[rows]] * chunk_bytes
        transfer[rows] = load[rows, busiest[rows]]
        k_run, k_link = keys // n_links, keys % n_links
    else:
        keys, inverse = np.unique(key, return_inverse=True)
        k_bytes = (
            np.bincount(inverse, weights=weight, minlength=len(keys)).astype(np.float64, copy=False)
            * chunk_bytes
        )
        k_run, k_link = keys // n_links, keys % n_links
        load = k_bytes / topology.link_bandwidth[k_link]
        order = np.lexsort((-load, k_run))  # per run, the busiest link first
        first = (
            order[np.concatenate([[True], k_run[order][1:] != k_run[order][:-1]])]
            if len(order)
            else order
        )
        bottleneck[k_run[first]] = k_link[first]
        bottleneck_bytes[k_run[first]] = k_bytes[first]
        transfer[k_run[first]] = load[first]
    return run_latency, transfer, bottleneck, bottleneck_bytes, (k_run, k_link, k_bytes)


def _timing(
    traffic: Traffic, topology: Topology, nbytes: float, chunk_bytes: float, schedule_name: str
) -> Timing:
    repeat = np.array([r.repeat for r in traffic.runs], dtype=np.int64)
    latency, transfer, bottleneck, b_bytes, (k_run, k_link, k_bytes) = _run_costs(
        traffic, topology, chunk_bytes
    )
    link_bytes = np.bincount(
        k_link, weights=k_bytes * repeat[k_run], minlength=topology.n_links
    ).astype(np.float64, copy=False)
    per_step = traffic.run_of_step()
    step_latency, step_transfer = latency[per_step], transfer[per_step]
    step_seconds = step_latency + step_transfer
    seconds = float(np.dot(repeat, latency + transfer))
    return Timing(
        seconds,
        nbytes,
        step_seconds,
        step_latency,
        step_transfer,
        bottleneck[per_step],
        b_bytes[per_step],
        link_bytes,
        schedule_name,
        topology.name,
        tuple(topology.info.levels),
        topology.link_level,
    )


def time(
    schedule: Schedule,
    topology: Topology,
    nbytes: float,
    *,
    placement: Optional[ArrayLike] = None,
    switch_placement: Optional[ArrayLike] = None,
) -> Timing:
    """Seconds ``schedule`` takes on ``topology`` when each rank's full buffer is ``nbytes``.

    ``nbytes`` is nccl-tests' ``S``: the all-gather output, the reduce-scatter input, the
    all-reduce buffer, the all-to-all send buffer (for a collective over groups, the buffer
    of one rank's own group collective). ``placement``: which endpoint of ``topology`` plays
    each rank (default: rank r on endpoint r, when the counts match), so that an 8-rank
    collective can be costed on 8 GPUs of a large cluster; ``switch_placement``: which
    switch node plays each switch participant (default: the topology's switches in order).
    Works from the schedule's :class:`~collectives.traffic.Traffic`, so it never lists the
    transfers of a large regular schedule. Returns a :class:`Timing`.
    """
    from .topology import Topology

    schedule_arg(schedule)
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    nbytes = check_nbytes(nbytes)
    nodes = _placement(schedule, topology, placement, switch_placement, "the schedule")
    traffic = schedule.traffic.placed(nodes)
    return _timing(traffic, topology, nbytes, nbytes / schedule.n_chunks, schedule.name)


@dataclass(frozen=True)
class Job:
    """One collective of several that run at once: its ``schedule``, ``nbytes`` (as for
    :func:`time`), its ``placement`` on the topology (and ``switch_placement``) and a
    ``name`` for the per-link detail (default the schedule's)."""

    schedule: Schedule
    nbytes: float
    placement: Optional[ArrayLike] = None
    switch_placement: Optional[ArrayLike] = None
    name: Optional[str] = None


@dataclass(frozen=True, eq=False)
class ConcurrentTiming:
    """The result of :func:`time_concurrent`: the jobs run together, and each alone.

    ``seconds``: together; ``alone``: one :class:`Timing` per job on the same topology
    without the others; ``link_bytes``: (jobs, links) bytes each job puts on each link over
    the whole run; ``components``: groups of job indices that share links (directly or
    through each other), with ``component_seconds`` each. :meth:`shared_links` says who
    shares what.
    """

    seconds: float
    alone: tuple[Timing, ...]
    link_bytes: NDArray[np.float64]
    names: tuple[str, ...]
    components: tuple[tuple[int, ...], ...]
    component_seconds: tuple[float, ...]
    topology_name: str

    @property
    def slowdown(self) -> float:
        """Seconds together over the slowest job's seconds alone (1.0: no interference)."""
        slowest = max(t.seconds for t in self.alone)
        return self.seconds / slowest if slowest > 0 else 1.0

    def shared_links(self) -> list[dict[str, float]]:
        """Links used by more than one job: one dict per link, busiest first, with the bytes
        each job puts on it."""
        used = self.link_bytes > 0
        shared = np.flatnonzero(used.sum(axis=0) > 1)
        order = shared[np.argsort(-self.link_bytes[:, shared].sum(axis=0), kind="stable")]
        return [
            {
                "link": int(link),
                **{name: float(self.link_bytes[j, link]) for j, name in enumerate(self.names)},
            }
            for link in order
        ]

    def __repr__(self) -> str:
        return (
            f"ConcurrentTiming({len(self.names)} jobs on {self.topology_name!r}: "
            f"{self.seconds:.6g} s together, slowdown {self.slowdown:.3g}x)"
        )


def _sharing_components(link_bytes: NDArray[np.float64]) -> tuple[tuple[int, ...], ...]:
    """Groups of jobs connected by shared links (union of overlapping link sets)."""
    used = link_bytes > 0
    n_jobs = len(used)
    label = list(range(n_jobs))

    def root(j: int) -> int:
        while label[j] != j:
            j = label[j]
        return j

    overlap = (used[:, None, :] & used[None, :, :]).any(axis=2)
    for a, b in zip(*np.nonzero(np.triu(overlap, 1))):
        label[root(int(b))] = root(int(a))
    groups: dict[int, list[int]] = {}
    for j in range(n_jobs):
        groups.setdefault(root(j), []).append(j)
    return tuple(tuple(g) for g in groups.values())


def time_concurrent(jobs: Iterable[Job], topology: Topology) -> ConcurrentTiming:
    """Seconds for several collectives that run at the same time and share ``topology``.

    Model: all jobs start together. Jobs that share no link with any other run as if alone.
    Jobs that share links (directly or through a chain of jobs) advance in lockstep: step i of
    each in one combined step that lasts as long as its slowest link (the bytes of all of
    them on a link share its bandwidth) plus its longest path latency, as :func:`time` costs
    one schedule. The result is the slowest group. Left out: within a group, a job running
    ahead while another is still in an earlier step (a flow-level model would let it), and
    contention inside switches. Returns a :class:`ConcurrentTiming`.
    """
    from .topology import Topology

    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    try:
        job_list = list(jobs)
    except TypeError:
        raise CollectivesError("jobs must be a list of collectives.Job") from None
    if not job_list or not all(isinstance(j, Job) for j in job_list):
        raise CollectivesError(
            "jobs must be a non-empty list of collectives.Job(schedule, nbytes, placement=...)"
        )
    for i, job in enumerate(job_list):
        schedule_arg(job.schedule, f"job {i}'s schedule")
    names = tuple(str(j.name or j.schedule.name) for j in job_list)
    placed: list[tuple[Traffic, float]] = []
    alone: list[Timing] = []
    for i, job in enumerate(job_list):
        nbytes = check_nbytes(job.nbytes)
        nodes = _placement(
            job.schedule, topology, job.placement, job.switch_placement, f"job {i} ({names[i]})"
        )
        chunk_bytes = nbytes / job.schedule.n_chunks
        traffic = job.schedule.traffic.placed(nodes)
        alone.append(_timing(traffic, topology, nbytes, chunk_bytes, names[i]))
        placed.append((traffic, chunk_bytes))
    link_bytes = np.stack([t.link_bytes for t in alone])
    components = _sharing_components(link_bytes)
    seconds: list[float] = []
    for members in components:
        if len(members) == 1:
            seconds.append(alone[members[0]].seconds)
            continue
        # chunk sizes differ between jobs: count every job's traffic in bytes
        scaled = [placed[j][0].scaled(placed[j][1]) for j in members]
        together = scaled[0].together(*scaled[1:])
        seconds.append(_timing(together, topology, 0.0, 1.0, "").seconds)
    return ConcurrentTiming(
        max(seconds), tuple(alone), link_bytes, names, components, tuple(seconds), topology.name
    )


def step_link_bytes(
    schedule: Schedule,
    topology: Topology,
    nbytes: float,
    step: int,
    *,
    placement: Optional[ArrayLike] = None,
    switch_placement: Optional[ArrayLike] = None,
) -> NDArray[np.float64]:
    """Bytes on every link of ``topology`` during step ``step`` of ``schedule`` (an array of
    ``topology.n_links``), routed and placed exactly as :func:`time` routes and places them
    (``nbytes``, ``placement`` and ``switch_placement`` as there; an adaptive router's shares
    included). The step's transfer time is the largest of these over the link bandwidths,
    and the sum over the steps is :attr:`Timing.link_bytes`: what a figure of one step's
    link loads draws. Raises :class:`~collectives.CollectivesError` for a step the schedule
    does not have."""
    from .topology import Topology

    schedule_arg(schedule)
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    nbytes = check_nbytes(nbytes)
    step = integer(step, "step", minimum=0, maximum=schedule.n_steps - 1)
    nodes = _placement(schedule, topology, placement, switch_placement, "the schedule")
    traffic = schedule.traffic.placed(nodes)
    run = traffic.runs[int(traffic.run_of_step()[step])]
    remote = np.flatnonzero(run.src != run.dst)
    pair, link, share = topology.link_shares(run.src[remote], run.dst[remote])
    weight = run.chunks[remote][pair] * share * (nbytes / schedule.n_chunks)
    return np.bincount(link, weights=weight, minlength=topology.n_links).astype(
        np.float64, copy=False
    )


def algbw(nbytes: float, seconds: float) -> float:
    """Algorithm bandwidth, nccl-tests' ``algbw = S / t`` (bytes/s)."""
    nbytes = check_nbytes(nbytes)
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float, np.integer, np.floating))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise CollectivesError(f"seconds must be a finite number > 0, got {seconds!r}")
    return nbytes / float(seconds)


def bus_factor(collective: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce,
    (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce."""
    spec = collective_spec(collective)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise CollectivesError(f"n (number of ranks) must be an integer >= 1, got {n!r}")
    return spec.bus_factor(int(n))


def busbw(collective: str, nbytes: float, seconds: float, n: int) -> float:
    """Bus bandwidth, nccl-tests' ``busbw = algbw x factor`` (bytes/s): comparable to link
    speed whatever the collective and rank count (see :func:`bus_factor`)."""
    return algbw(nbytes, seconds) * bus_factor(collective, n)


@dataclass(frozen=True, eq=False)
class TimeGrid:
    """The result of :func:`time_grid`: ``seconds[c, k, b, s]`` and ``busbw[c, k, b, s]``
    for case ``c``, key ``k``, link bandwidth ``b`` and buffer size ``s`` (NaN where a case
    does not apply); ``group_sizes[k]``: the ranks of one group's collective at key ``k``;
    ``cases``, ``link_bandwidths`` (bytes/s per direction) and ``sizes`` (bytes) as timed."""

    cases: tuple[str, ...]
    group_sizes: tuple[int, ...]
    link_bandwidths: tuple[float, ...]
    sizes: tuple[int, ...]
    seconds: NDArray[np.float64]
    busbw: NDArray[np.float64]


#: what a case of :func:`time_grid` builds: (schedule, topology) or (schedule, topology,
#: wire bytes per buffer byte), or None where the case does not apply
_GridCase = Optional[Union[tuple["Schedule", "Topology"], tuple["Schedule", "Topology", float]]]

_Key = TypeVar("_Key")


def time_grid(
    collective: str,
    cases: Mapping[str, Callable[[_Key, float], _GridCase]],
    keys: Sequence[_Key],
    link_bandwidths: Sequence[float],
    sizes: Sequence[int],
) -> TimeGrid:
    """:func:`time` and :func:`busbw` of every case at every key, link bandwidth and size.

    ``cases[name](key, link_bandwidth)`` builds the case: ``(schedule, topology)``,
    ``(schedule, topology, wire_bytes)`` (``wire_bytes``: bytes sent per byte of the buffer,
    0.5 for a buffer sent in a format half as wide; busbw is still counted on the whole
    buffer) or ``None`` where the case does not apply (a power-of-two algorithm at 12 ranks).
    ``keys``: what each case is built from (a number of ranks, a torus shape, ...);
    ``link_bandwidths`` in bytes/s per direction; ``sizes`` in bytes (nccl-tests' S). Every
    schedule must be a ``collective``; at every key some case must apply. What is modelled
    is what :func:`time` models. Raises :class:`~collectives.CollectivesError` on an empty
    or bad grid. The book's calculators show such grids (:mod:`collectives.viz.calculators`).
    """
    key_list = list(keys)
    if not cases or not len(key_list) or not len(sizes):
        raise CollectivesError("a grid needs at least one case, one key and one size")
    bws = tuple(float(v) for v in link_bandwidths)
    if not bws or min(bws) <= 0:
        raise CollectivesError(f"link bandwidths must be positive bytes/s, got {bws}")
    buffer_sizes = tuple(int(s) for s in sizes)
    if min(buffer_sizes) <= 0:
        raise CollectivesError(f"buffer sizes must be positive bytes, got {buffer_sizes}")
    names = tuple(cases)
    shape = (len(names), len(key_list), len(bws), len(buffer_sizes))
    seconds = np.full(shape, np.nan)
    bus = np.full(shape, np.nan)
    group_sizes: list[int] = []
    for k, key in enumerate(key_list):
        n: Optional[int] = None
        for c, name in enumerate(names):
            for b, bw in enumerate(bws):
                built = cases[name](key, bw)
                if built is None:
                    continue
                schedule, topology, *wire_bytes = built
                wire = wire_bytes[0] if wire_bytes else 1.0
                if schedule.collective != collective:
                    raise CollectivesError(
                        f"case {name!r} builds a {schedule.collective} schedule, not {collective}"
                    )
                n = schedule.group_size
                t = np.array([time(schedule, topology, s * wire).seconds for s in buffer_sizes])
                seconds[c, k, b] = t
                bus[c, k, b] = [
                    busbw(collective, s, float(ts), n) for s, ts in zip(buffer_sizes, t)
                ]
        if n is None:
            raise CollectivesError(f"no case applies at ranks={key!r}")
        group_sizes.append(int(n))
    return TimeGrid(names, tuple(group_sizes), bws, buffer_sizes, seconds, bus)
