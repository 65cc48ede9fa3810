"""Flows on a fabric: routing them (hashed ECMP, several queue pairs per connection,
enhanced ECMP, a centrally engineered assignment), max-min fair rates, and how long a
synchronous step or a whole collective takes under those rates.

**What is modelled.** A *connection* (src, dst, bytes) is split over ``qps`` queue pairs
(NCCL's ``NCCL_IB_QPS_PER_CONNECTION``), each a *flow* of an equal share of the bytes. That
equal share is NCCL's split mode (``NCCL_IB_SPLIT_DATA_ON_QPS=1``: "each message will be
split evenly on each queue pair"); NCCL's default since 2.20 is round-robin (``=0``: "queue
pairs will be used in round-robin mode for each message"), whose long-run average over many
messages is the same share. ECMP hashes a flow's header (the package's one flow hash,
:mod:`collectives.topology.hashing`): with ``hash_qp=False`` the hash sees only the pair
``(src, dst)``, so all QPs of a connection share one path: a NIC that gives every QP of a
connection the same UDP source port, the low-entropy case (the upstream Linux mlx5 driver instead
derives each QP's source port from the two QP numbers when the flow label is 0, as NCCL
leaves it, so plain five-tuple ECMP already tells them apart: ``hash_qp=True`` models that
too); with ``hash_qp=True`` each QP gets its own draw, as with Meta's enhanced ECMP, which
makes the switch hash the RoCE header's destination QP. On a cluster routed ``"adaptive"``
each flow is spread evenly over its equal-cost paths (``Flows.share``: the fraction of the
flow on each link it crosses), the ideal of adaptive routing and packet spraying.
``scheme="engineered"`` is a central controller that knows the traffic matrix and places
flows, biggest first, hop by hop on the least-loaded usable candidate (flows with the same
candidates take them in round-robin order of load); it is a greedy heuristic, not an
optimum.

Rates are **max-min fair** (progressive filling): all unfrozen flows grow at the same pace;
when a link fills, the flows crossing it freeze. This is the rate allocation an ideal
per-flow fair transport would reach. A synchronous step ends when its slowest flow drains;
with ``reallocate=True`` rates are recomputed each time a flow finishes (work-conserving),
otherwise every flow keeps its first rate. Where every link's flows are equal and share it
evenly, both equal :func:`collectives.time`'s busiest-link model.

**Left out:** slow start and congestion-control dynamics (DCQCN, PFC pauses), packet loss,
buffers, latency inside a step beyond the path's link latencies, NIC limits other than the
host link. Taught in chapter "Designing the fabric".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import CollectivesError, TopologyError
from ..topology import Cluster, Topology
from ..validation import check_nbytes, int_array, integer

__all__ = [
    "Flows",
    "route_flows",
    "max_min_rates",
    "step_time",
    "collective_time",
    "reroute",
    "cable_flows",
    "SCHEMES",
]

SCHEMES = ("ecmp", "engineered")


@dataclass(frozen=True)
class Flows:
    """Routed flows: ``src``, ``dst``, ``nbytes``, ``qp`` per flow; ``pair``/``link``: for
    every link crossed, the flow index and the link id (grouped by flow, in path order);
    ``share``: the fraction of the flow on that link (None: 1 everywhere, one path per
    flow; adaptive routing spreads a flow over several)."""

    topology: Topology
    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    qp: np.ndarray
    pair: np.ndarray
    link: np.ndarray
    share: Optional[np.ndarray] = None

    @property
    def n_flows(self) -> int:
        return len(self.src)

    def link_bytes(self) -> np.ndarray:
        """Bytes each directed link carries."""
        weights = self.nbytes[self.pair]
        if self.share is not None:
            weights = weights * self.share
        return np.bincount(self.link, weights=weights, minlength=self.topology.n_links)

    def link_flows(self) -> np.ndarray:
        """Flows crossing each directed link (a spread flow counts its share)."""
        if self.share is not None:
            return np.bincount(self.link, weights=self.share, minlength=self.topology.n_links)
        return np.bincount(self.link, minlength=self.topology.n_links)

    def paths_of(self, flows) -> list[list[int]]:
        """The link ids of the given flows (for small cases and tests)."""
        return [self.link[self.pair == f].tolist() for f in np.atleast_1d(flows)]


def _connections(topology, src, dst, nbytes, qps):
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    src = int_array(src, "src", error=TopologyError).ravel()
    dst = int_array(dst, "dst", error=TopologyError).ravel()
    if len(src) != len(dst):
        raise TopologyError(f"src has {len(src)} connections but dst has {len(dst)}")
    qps = integer(qps, "qps", minimum=1, error=CollectivesError)
    try:
        size = np.broadcast_to(np.asarray(nbytes, dtype=float), src.shape).astype(float)
    except (TypeError, ValueError):
        raise CollectivesError(
            f"nbytes must be one number or one per connection ({len(src)}), got {np.shape(nbytes)}"
        ) from None
    if not np.all(np.isfinite(size)) or np.any(size < 0):
        raise CollectivesError("nbytes must be finite and >= 0 bytes")
    keep = src != dst  # local copies cross no link
    src, dst, size = src[keep], dst[keep], size[keep]
    qp = np.tile(np.arange(qps, dtype=np.int64), len(src))
    return (np.repeat(src, qps), np.repeat(dst, qps), np.repeat(size / qps, qps), qp)


def route_flows(topology, src, dst, nbytes, *, qps=1, hash_qp=False, scheme="ecmp"):
    """Route connections ``src[i] -> dst[i]`` of ``nbytes`` (one number or one per
    connection), each split over ``qps`` queue pairs; a :class:`Flows`.

    ``scheme="ecmp"``: the topology's own routing, hashing ``(src, dst)`` and, with
    ``hash_qp``, the QP (clusters and fabrics: :func:`collectives.topology.gpu_cluster`,
    :func:`~collectives.topology.cluster`, :func:`~collectives.fabric.clos`,
    :func:`~collectives.fabric.fat_tree`, :func:`~collectives.fabric.layered`, the GPU
    presets; other topologies route as they always do; a cluster routed "adaptive" spreads
    every flow). ``scheme="engineered"``: the central greedy assignment (clusters only).
    Connections with ``src == dst`` are dropped.
    """
    if scheme not in SCHEMES:
        raise CollectivesError(
            f"scheme must be one of {', '.join(map(repr, SCHEMES))}, got {scheme!r}"
        )
    s, d, size, qp = _connections(topology, src, dst, nbytes, qps)
    share = None
    if scheme == "engineered":
        if not isinstance(topology, Cluster):
            raise TopologyError(
                "scheme='engineered' needs a fabric built by "
                "collectives.fabric.layered (or any cluster of "
                "collectives.topology.gpu_cluster)"
            )
        pair, link = topology.route_with(s, d, _Engineer(topology, s, d, size))
    elif isinstance(topology, Cluster):
        flow = qp if hash_qp else 0
        if topology.routing == "adaptive":
            pair, link, share = topology.link_shares(s, d, flow_id=flow)
        else:
            pair, link = topology.paths(s, d, flow_id=flow)
    else:
        if hash_qp:
            raise TopologyError(f"{topology.name} does not hash flows; hash_qp needs a fabric")
        pair, link = topology.paths(s, d)
    return Flows(topology, s, d, size, qp, pair, link, share)


class _Engineer:
    """The central controller: biggest flows first, in batches; at each hop a flow takes
    the least-loaded usable candidate, flows with the same candidates in round-robin
    order of load. Loads are bytes / bandwidth (seconds of work on each link)."""

    def __init__(self, topology, src, dst, size, batches=8):
        self.load = np.zeros(topology.n_links)
        self.inv_bw = 1.0 / topology.link_bandwidth
        self.size = size
        order = np.argsort(-size, kind="stable")
        self.batch = np.empty(len(size), dtype=np.int64)
        self.batch[order] = np.arange(len(size)) * batches // max(len(size), 1)
        self.batches = batches

    def __call__(self, hop, rows, cand, ok):
        col = np.zeros(len(rows), dtype=np.int64)
        for b in range(self.batches):  # a handful of rounds
            sel = np.flatnonzero(self.batch[rows] == b)
            if not sel.size:
                continue
            c = cand[sel]
            cost = self.load[c].copy()
            n_ok = np.full(len(sel), c.shape[1])
            if ok is not None:
                cost[~ok[sel]] = np.inf
                n_ok = ok[sel].sum(axis=1)
            ranked = np.argsort(cost, axis=1, kind="stable")
            group = c[:, 0]
            order = np.argsort(group, kind="stable")
            g_sorted = group[order]
            starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
            rank = np.empty(len(sel), dtype=np.int64)
            rank[order] = np.arange(len(sel)) - np.repeat(starts, np.diff(np.r_[starts, len(sel)]))
            pick = ranked[np.arange(len(sel)), rank % np.maximum(n_ok, 1)]
            col[sel] = pick
            chosen = c[np.arange(len(sel)), pick]
            self.load += np.bincount(
                chosen, weights=self.size[rows[sel]] * self.inv_bw[chosen], minlength=len(self.load)
            )
        return col


def reroute(flows, topology, *, hash_qp=False):
    """The same flows on ``topology`` (the fabric after :meth:`LayeredFabric.fail`): flows
    whose path crosses a failed link are re-hashed with ECMP around the failure; the others
    keep their paths. This is what a static (engineered or pinned) assignment gets until its
    controller recomputes."""
    dead = getattr(topology, "failed", None)
    if dead is None or topology.n_links != flows.topology.n_links:
        raise TopologyError(
            "reroute needs the same layered fabric with failures (LayeredFabric.fail)"
        )
    hit = np.zeros(flows.n_flows, bool)
    hit[flows.pair[dead[flows.link]]] = True
    keep = ~hit[flows.pair]
    moved = np.flatnonzero(hit)
    pair, link, share = topology.link_shares(
        flows.src[moved], flows.dst[moved], flow_id=flows.qp[moved] if hash_qp else 0
    )
    old_share = np.ones(len(flows.link)) if flows.share is None else flows.share
    pair = np.concatenate([flows.pair[keep], moved[pair]])
    link = np.concatenate([flows.link[keep], link])
    share = np.concatenate([old_share[keep], share])
    order = np.argsort(pair, kind="stable")
    spread = flows.share is not None or topology.routing == "adaptive"
    return Flows(
        topology,
        flows.src,
        flows.dst,
        flows.nbytes,
        flows.qp,
        pair[order],
        link[order],
        share[order] if spread else None,
    )


def cable_flows(topology, src, dst, level="spine"):
    """How many of the flows ``src[i] -> dst[i]`` (one each, routed as
    :func:`route_flows` routes them with one QP) cross each cable of link level ``level``
    (a name of ``topology.info.levels``), for every cable of that level attached to a
    lower-tier switch that any of the flows uses there: the cables a step's flows could
    have spread over. Returns ``{"up": counts, "down": counts}``, one count per cable, up
    (away from the endpoints, ``Cluster.link_up``, e.g. leaf to spine) and down, in link
    order. Counts are whole flows; a cluster routed ``"adaptive"`` spreads each flow, and
    its counts are the flows' shares. Local pairs (``src == dst``) cross nothing.
    Raises :class:`~collectives.TopologyError` for a topology that is not a cluster or
    fabric, or a level it does not have."""
    if not isinstance(topology, Cluster):
        raise TopologyError(
            f"cable_flows counts flows on a cluster's or fabric's cables; "
            f"{getattr(topology, 'name', topology)!r} is not one"
        )
    levels = tuple(topology.info.levels)
    if level not in levels:
        raise TopologyError(
            f"{topology.name} has no link level {level!r}; its levels are {', '.join(levels)}"
        )
    flows = route_flows(topology, src, dst, 1.0)
    counts = flows.link_flows()
    if flows.share is None:
        counts = counts.astype(np.int64)
    on_level = topology.link_level == levels.index(level)
    out = {}
    for direction, cables in (
        ("up", on_level & topology.link_up),
        ("down", on_level & ~topology.link_up),
    ):
        lower_end = topology.link_src if direction == "up" else topology.link_dst
        cables = np.flatnonzero(cables)
        busy = np.unique(lower_end[cables[counts[cables] > 0]])
        out[direction] = counts[cables[np.isin(lower_end[cables], busy)]]
    return out


def max_min_rates(flows, *, active=None, tol=1e-9):
    """Max-min fair rates (bytes/s) of ``flows``; ``active`` (bool per flow) restricts the
    set. Flows that cross no link get ``inf``.

    Progressive filling, many bottlenecks per round: a link whose fair share (capacity
    left / unfrozen flows) is no larger than the share of any other link its flows cross
    fills at that share in the max-min allocation (shares only grow as flows freeze
    elsewhere), so every such link is filled and its flows frozen in the same round.
    Vectorised over flows and links (the incidence products as ``bincount`` and
    ``reduceat``); the loop is over rounds, about as many as the longest chain of
    bottlenecks that depend on one another.
    """
    if not isinstance(flows, Flows):
        raise CollectivesError(f"expected Flows from route_flows, got {type(flows).__name__}")
    n = flows.n_flows
    act = np.ones(n, bool) if active is None else np.asarray(active, bool).copy()
    if act.shape != (n,):
        raise CollectivesError(f"active must be one bool per flow ({n})")
    rate = np.zeros(n)
    crossing = np.bincount(flows.pair, minlength=n)
    rate[act & (crossing == 0)] = np.inf
    act &= crossing > 0
    if not act.any():
        return rate
    # the crossings of unfrozen flows, grouped by flow; frozen ones are dropped each round.
    # A spread flow (adaptive routing) puts the fraction c_share of its rate on a link.
    keep = act[flows.pair]
    c_flow = flows.pair[keep]
    c_link = flows.link[keep]
    c_share = None if flows.share is None else flows.share[keep]
    residual = flows.topology.link_bandwidth.astype(float)
    used = residual  # one entry per link of the topology
    while c_flow.size:
        first = np.r_[True, c_flow[1:] != c_flow[:-1]]
        group = np.cumsum(first) - 1  # crossing -> unfrozen flow
        if c_share is None:
            count = np.bincount(c_link, minlength=len(used))
            share = residual / np.maximum(count, 1)
        else:
            count = np.bincount(c_link, weights=c_share, minlength=len(used))
            share = residual / np.where(count > 0, count, 1.0)
        s_c = share[c_link]
        f_min = np.minimum.reduceat(s_c, np.flatnonzero(first))
        f_min_c = f_min[group]
        # a link is a bottleneck when none of its flows sees a smaller share elsewhere
        beaten = np.bincount(c_link, weights=f_min_c * (1 + tol) < s_c, minlength=len(used)) > 0
        hit = ~beaten[c_link]
        frozen = np.bincount(group, weights=hit, minlength=len(f_min)) > 0
        rate[c_flow[first][frozen]] = f_min[frozen]
        gone = frozen[group]
        taken = f_min_c[gone] if c_share is None else f_min_c[gone] * c_share[gone]
        residual = np.maximum(
            residual - np.bincount(c_link[gone], weights=taken, minlength=len(used)), 0.0
        )
        c_flow, c_link = c_flow[~gone], c_link[~gone]
        if c_share is not None:
            c_share = c_share[~gone]
    return rate


def step_time(flows, *, reallocate=False):
    """Seconds until the slowest flow drains (plus its path's latency): one synchronous
    step. ``reallocate``: recompute max-min rates each time flows finish (work-conserving);
    otherwise each flow keeps its initial rate."""
    if not isinstance(flows, Flows):
        raise CollectivesError(f"expected Flows from route_flows, got {type(flows).__name__}")
    if flows.n_flows == 0:
        return 0.0
    hop_latency = flows.topology.link_latency[flows.link]
    if flows.share is not None:
        hop_latency = hop_latency * flows.share
    latency = np.bincount(flows.pair, weights=hop_latency, minlength=flows.n_flows)
    remaining = flows.nbytes.copy()
    active = remaining > 0
    done_at = np.zeros(flows.n_flows)
    t = 0.0
    while active.any():
        rate = max_min_rates(flows, active=active)
        drain = np.where(active, remaining / np.where(rate > 0, rate, np.inf), np.inf)
        if not reallocate:
            done_at[active] = drain[active]
            break
        dt = float(drain.min())
        t += dt
        remaining[active] -= rate[active] * dt
        finished = active & (remaining <= 1e-9 * flows.nbytes)
        finished[np.argmin(drain)] = True
        done_at[finished] = t
        active &= ~finished
    return float(np.max(done_at + latency))


def collective_time(
    schedule, topology, nbytes, *, qps=1, hash_qp=False, scheme="ecmp", reallocate=False
):
    """Seconds a Schedule takes on ``topology`` under max-min fair flow rates: each step's
    transfers become connections (rank r on endpoint r), routed as :func:`route_flows`
    says; steps run one after another, each as long as :func:`step_time`."""
    from ..schedule import schedule_arg

    schedule_arg(schedule)
    nbytes = check_nbytes(nbytes)
    if schedule.n_ranks > topology.n_ranks:
        raise TopologyError(
            f"{schedule.name} has {schedule.n_ranks} ranks but "
            f"{topology.name} has {topology.n_ranks} endpoints"
        )
    chunk = nbytes / schedule.n_chunks
    total = 0.0
    for run in schedule.traffic.runs:
        if not len(run.src):
            continue
        flows = route_flows(
            topology, run.src, run.dst, run.chunks * chunk, qps=qps, hash_qp=hash_qp, scheme=scheme
        )
        total += run.repeat * step_time(flows, reallocate=reallocate)
    return total
