"""How long a Schedule takes on a Topology, and the nccl-tests bandwidth figures.

The model is step-synchronous: a step starts when the previous one has finished, and takes

    max over its transfers of path latency  +  max over links of (bytes on the link / bandwidth)

where a transfer moves ``nbytes / schedule.n_chunks`` bytes over every link of its route,
and transfers that share a link share its bandwidth. Local transfers (src == dst) are free.
This is the alpha-beta model generalised to contention: on an uncontended topology it
equals the closed forms in :mod:`collectives.analytic`. Left out: overlap between steps
(see ``pipelined`` algorithms), protocol overheads, compute time of reductions, congestion
control. Taught in chapter "Cost models and the ring all-gather".
"""

import math
from dataclasses import dataclass

import numpy as np

from .errors import CollectivesError, TopologyError
from .semantics import collective_spec
from .validation import schedule_arg

__all__ = ["Timing", "time", "algbw", "busbw", "bus_factor"]

_DENSE_LIMIT = 20_000_000     # steps x links above which per-step loads are kept sparse


@dataclass(frozen=True, eq=False)
class Timing:
    """The result of :func:`time`: total seconds plus per-step and per-link detail.

    Per step ``i``: ``step_seconds[i] = step_latency[i] + step_transfer[i]``;
    ``step_bottleneck_link[i]`` is the most loaded link (-1 if the step uses none) carrying
    ``step_bottleneck_bytes[i]``. Per link: ``link_bytes`` over the whole schedule.
    """

    seconds: float
    nbytes: float
    step_seconds: np.ndarray
    step_latency: np.ndarray
    step_transfer: np.ndarray
    step_bottleneck_link: np.ndarray
    step_bottleneck_bytes: np.ndarray
    link_bytes: np.ndarray
    schedule_name: str
    topology_name: str

    @property
    def n_steps(self):
        return len(self.step_seconds)

    @property
    def algbw(self):
        """``nbytes / seconds`` (bytes/s)."""
        return algbw(self.nbytes, self.seconds)

    def rows(self):
        """One dict per step (for tables in the book)."""
        return [
            {"step": i, "seconds": float(self.step_seconds[i]),
             "latency": float(self.step_latency[i]), "transfer": float(self.step_transfer[i]),
             "bottleneck_link": int(self.step_bottleneck_link[i]),
             "bottleneck_bytes": float(self.step_bottleneck_bytes[i])}
            for i in range(self.n_steps)
        ]

    def __repr__(self):
        return (f"Timing({self.schedule_name!r} on {self.topology_name!r}, "
                f"nbytes={self.nbytes:g}: {self.seconds:.6g} s over {self.n_steps} steps)")


def _check_nbytes(nbytes):
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, float, np.integer, np.floating)):
        raise CollectivesError(f"nbytes must be a number of bytes, got {nbytes!r}")
    if not math.isfinite(nbytes) or nbytes < 0:
        raise CollectivesError(f"nbytes must be finite and >= 0, got {nbytes!r}")
    return float(nbytes)


def time(schedule, topology, nbytes):
    """Seconds ``schedule`` takes on ``topology`` when each rank's full buffer is ``nbytes``.

    ``nbytes`` is nccl-tests' ``S``: the all-gather output, the reduce-scatter input, the
    all-reduce buffer, the all-to-all send buffer. Returns a :class:`Timing`.
    """
    from .topology import Topology

    schedule_arg(schedule)
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    if topology.n_ranks != schedule.n_ranks:
        raise TopologyError(
            f"the schedule has {schedule.n_ranks} ranks but {topology.name} has "
            f"{topology.n_ranks} endpoints")
    nbytes = _check_nbytes(nbytes)
    chunk_bytes = nbytes / schedule.n_chunks
    n_steps, n_links = schedule.n_steps, topology.n_links

    remote = np.flatnonzero(schedule.src != schedule.dst)
    pair, link = topology.paths(schedule.src[remote], schedule.dst[remote])
    step_of_transfer = schedule.step_of_transfer[remote]
    step_of_hop = step_of_transfer[pair]

    latency = np.bincount(pair, weights=topology.link_latency[link], minlength=len(remote))
    step_latency = np.zeros(n_steps)
    np.maximum.at(step_latency, step_of_transfer, latency)

    bottleneck_link = np.full(n_steps, -1, dtype=np.int64)
    bottleneck_count = np.zeros(n_steps)
    step_transfer = np.zeros(n_steps)
    if not len(link):
        pass                                          # no step uses a link
    elif n_steps * n_links <= _DENSE_LIMIT:
        count = np.bincount(step_of_hop * n_links + link, minlength=n_steps * n_links)
        load = count.reshape(n_steps, n_links) * (chunk_bytes / topology.link_bandwidth)
        busiest = np.argmax(load, axis=1)
        used = count.reshape(n_steps, n_links).any(axis=1)
        bottleneck_link[used] = busiest[used]
        bottleneck_count[used] = count.reshape(n_steps, n_links)[used, busiest[used]]
        step_transfer = load[np.arange(n_steps), busiest] * used
    else:
        keys, count = np.unique(step_of_hop * n_links + link, return_counts=True)
        k_step, k_link = keys // n_links, keys % n_links
        load = count * chunk_bytes / topology.link_bandwidth[k_link]
        order = np.lexsort((-load, k_step))           # per step, the busiest link first
        first = order[np.concatenate([[True], k_step[order][1:] != k_step[order][:-1]])]
        bottleneck_link[k_step[first]] = k_link[first]
        bottleneck_count[k_step[first]] = count[first]
        step_transfer[k_step[first]] = load[first]

    step_seconds = step_latency + step_transfer
    link_bytes = np.bincount(link, minlength=n_links) * chunk_bytes
    return Timing(float(step_seconds.sum()), nbytes, step_seconds, step_latency, step_transfer,
                  bottleneck_link, bottleneck_count * chunk_bytes, link_bytes, schedule.name,
                  topology.name)


def algbw(nbytes, seconds):
    """Algorithm bandwidth, nccl-tests' ``algbw = S / t`` (bytes/s)."""
    nbytes = _check_nbytes(nbytes)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)) \
            or not math.isfinite(seconds) or seconds <= 0:
        raise CollectivesError(f"seconds must be a finite number > 0, got {seconds!r}")
    return nbytes / float(seconds)


def bus_factor(collective, n):
    """nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce,
    (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce."""
    spec = collective_spec(collective)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise CollectivesError(f"n (number of ranks) must be an integer >= 1, got {n!r}")
    if spec.name == "all_reduce":
        return 2 * (n - 1) / n
    if spec.name in ("all_gather", "reduce_scatter", "all_to_all", "all_to_all_v"):
        return (n - 1) / n
    return 1.0


def busbw(collective, nbytes, seconds, n):
    """Bus bandwidth, nccl-tests' ``busbw = algbw x factor``: comparable to link speed
    whatever the collective and rank count (see :func:`bus_factor`)."""
    return algbw(nbytes, seconds) * bus_factor(collective, n)
