"""Cost one collective over a mesh axis of a cluster: choose the algorithm, place it, time it.

A collective "over axis ``tp``" runs inside every group of that axis at once, so it is one
grouped Schedule over all the cluster's devices (:meth:`collectives.Mesh.collective`),
placed with ``mesh.placement`` and costed by :func:`collectives.time` on the whole
topology: groups that share links (a rail, a spine, a torus line) are counted together.

Which algorithm: the fastest, by :func:`collectives.time`, of a stated candidate list (the
package's rule, as :func:`collectives.algorithms.fastest` and NCCL choose by modelled time):

* all-reduce: ring, bidirectional ring; the two-level ring (reduce-scatter in each node,
  ring across nodes on every rail, all-gather in each node) when the group spans several
  nodes with the same local GPUs in each; the torus algorithm (one axis after another, and
  all axes at once) when the group is a box of a torus; on TPU slices joined over DCN, the
  multislice form (torus reduce-scatter in each slice, ring over DCN, torus all-gather)
  when the group's chips in each slice form a box.
* all-gather and reduce-scatter: ring, bidirectional ring, hierarchical (across nodes along
  the rails, then inside; on multislice TPUs with the torus form inside), torus.
* all-to-all: direct (every pair at once), hierarchical (inside the node, then along the
  rails), torus.
* pipeline send/recv: stage s to s + 1, every pipeline at once.

Every GPU preset carries its NVLink nodes (Meta's RoCE cluster included: its servers join
eight H100s with NVLink, Llama 3 paper, section 3.3.1), so a group inside a server is
costed on the same topology as every other, over its NVSwitch.

**How the fabric spreads the flows** (``ecmp``, GPU clusters only; a TPU torus has no
choice of path and is costed as built):

* None (default): the cluster as built; every GPU preset hashes (ECMP) one flow per
  connection, the low-entropy case (a ring's 8 or 16 NIC-to-NIC connections per node each
  one elephant flow);
* ``"plain"``: hashed ECMP, one flow per connection (the cluster re-routed ``"hash"``);
* ``"e-ecmp"``: every connection split over ``qps`` queue pairs (16 by default: Meta's
  collective library opens 16 network flows between two GPUs, and its Enhanced-ECMP hashes
  further fields of the RoCE header so that they take different paths, Llama 3 paper,
  arXiv 2407.21783, section 3.3.1; NCCL's knob is ``NCCL_IB_QPS_PER_CONNECTION``), each
  routed on its own hashed path (:func:`collectives.fabric.route_flows` with
  ``hash_qp=True``) and costed by :func:`qp_timing`;
* ``"adaptive"``: the ideal of adaptive routing and packet spraying (the cluster re-routed
  ``"adaptive"``: every connection spread evenly over its equal-cost paths).

Costings are cached per topology (while it lives) by mesh, scheme, collective, axes and
bytes, so plans of many layouts on one cluster share them. Left out: NVLink SHARP and InfiniBand
SHARP (switch participants: see ``nvls_all_reduce``), NCCL's own ring and tree schedules
(``collectives.algorithms.nccl``), protocol overheads, and any overlap between the phases
of the hierarchical algorithms.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import algorithms as A
from ..cost import Timing, time
from ..errors import CollectivesError
from ..fabric.flows import route_flows
from ..mesh import Mesh
from ..topology import Cluster
from ..validation import integer

__all__ = ["Costing", "Coster", "domains", "forget_costings", "qp_timing", "ECMP_SCHEMES"]

#: how a GPU fabric spreads a collective's flows (module text); None: as built
ECMP_SCHEMES = (None, "plain", "e-ecmp", "adaptive")
#: queue pairs per connection of the "e-ecmp" scheme: Meta's 16 flows per GPU pair (Llama 3
#: paper, section 3.3.1)
META_QPS = 16


@dataclass(frozen=True, eq=False)
class Costing:
    """One collective over one mesh axis, costed: the ``algorithm`` chosen, its
    ``seconds``, the :class:`~collectives.cost.Timing`, the ``span`` of its groups
    ("inside a node", "across nodes", "across pods"; "ici"/"dcn" on TPUs), every
    candidate's seconds in ``candidates``, and the grouped ``schedule`` chosen."""

    algorithm: str
    seconds: float
    timing: Optional[Timing]
    span: str
    candidates: tuple[tuple[str, float], ...]
    schedule: object = None
    rename: tuple[tuple[str, str], ...] = ()

    @property
    def bottleneck_level(self) -> Optional[str]:
        """The link level (e.g. "nvlink", "leaf", "spine", "ici") bounding the most time."""
        seconds = self.level_seconds()
        return max(seconds, key=lambda level: seconds[level]) if seconds else None

    def level_seconds(self) -> dict[str, float]:
        """Transfer seconds per link level (:meth:`collectives.Timing.level_seconds`)."""
        t = self.timing
        if t is None:
            return {}
        names = dict(self.rename)
        return {names.get(k, k): v for k, v in t.level_seconds().items()}


def domains(topology) -> tuple[str, int, int, str, str, str]:
    """How the topology nests: ``(kind, node_size, pod_size, inside, across, far)``: the
    endpoints of a node (GPUs sharing an NVSwitch; a TPU slice's host), of a pod (a
    spine-leaf group of a SuperPOD, an AI zone of Meta's cluster, a TPU slice), and the
    span labels. Read from the topology's declared info (``gpus_per_node``, the fabric's
    ``endpoints_per_block``, a product's dimensions)."""
    info = topology.info
    family = info.family
    n = topology.n_ranks
    if info.fabric is not None and family in ("cluster", "layered"):  # GPUs on a fabric
        g = info.gpus_per_node or (8 if family == "layered" else 1)  # Llama 3: 8 per server
        blocks = info.fabric.endpoints_per_block
        pod = blocks[1] if len(blocks) > 2 else n  # a tier-2 block, under a higher tier
        return "gpu", g, min(pod, n), "inside a node", "across nodes", "across pods"
    if family == "product" and info.levels == ("dcn", "ici"):
        chips = info.shape[1]
        return "tpu", chips, chips, "ici", "ici", "dcn"
    if family == "torus":
        return "tpu", n, n, "ici", "ici", "ici"
    if family == "switch":
        return "gpu", n, n, "inside a node", "inside a node", "inside a node"
    return "gpu", 1, n, "inside a node", "across nodes", "across pods"  # one per host


#: costings shared by every Coster of a topology, while the topology lives
_SHARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
#: each cluster re-routed "hash" or "adaptive", while it lives
_REROUTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def forget_costings() -> None:
    """Drop every shared costing (benchmarks time plans from cold with it)."""
    _SHARED.clear()
    _REROUTED.clear()


def qp_timing(schedule, topology, nbytes: float, *, placement=None, qps: int = META_QPS) -> Timing:
    """:func:`collectives.time`'s model (each step as long as its busiest link) with every
    transfer split over ``qps`` queue pairs that the ECMP hash tells apart (enhanced ECMP):
    the flows of each step routed by :func:`collectives.fabric.route_flows` (``hash_qp=True``)
    on ``topology`` (a GPU cluster), rank r on endpoint ``placement[r]``. With equal flows
    this is also :func:`collectives.fabric.collective_time`'s max-min fair step (the slowest
    flow is on the busiest link). Returns a :class:`~collectives.cost.Timing` with its
    per-level detail."""
    if not isinstance(topology, Cluster):
        raise CollectivesError(
            f"qp_timing needs a GPU cluster (its fabric hashes flows), got "
            f"{getattr(topology, 'name', type(topology).__name__)}"
        )
    qps = integer(qps, "qps", minimum=1)
    n = schedule.n_ranks
    nodes = np.arange(n) if placement is None else np.asarray(placement, dtype=np.int64)
    traffic = schedule.traffic.placed(nodes)
    chunk = float(nbytes) / schedule.n_chunks
    bandwidth = topology.link_bandwidth
    runs = traffic.runs
    latency, transfer = np.zeros(len(runs)), np.zeros(len(runs))
    busiest, busiest_bytes = np.full(len(runs), -1), np.zeros(len(runs))
    link_bytes = np.zeros(topology.n_links)
    for i, run in enumerate(runs):
        flows = route_flows(topology, run.src, run.dst, run.chunks * chunk, qps=qps, hash_qp=True)
        if not flows.n_flows:
            continue
        loads = flows.link_bytes()
        link = int(np.argmax(loads / bandwidth))
        busiest[i], busiest_bytes[i] = link, loads[link]
        transfer[i] = loads[link] / bandwidth[link]
        hops = np.bincount(
            flows.pair, weights=topology.link_latency[flows.link], minlength=flows.n_flows
        )
        latency[i] = hops.max()
        link_bytes += loads * run.repeat
    per_step = traffic.run_of_step()
    repeat = np.array([r.repeat for r in runs], dtype=np.int64)
    return Timing(
        float(np.dot(repeat, latency + transfer)),
        float(nbytes),
        (latency + transfer)[per_step],
        latency[per_step],
        transfer[per_step],
        busiest[per_step],
        busiest_bytes[per_step],
        link_bytes,
        f"{schedule.name}, {qps} QPs (E-ECMP)",
        topology.name,
        tuple(topology.info.levels),
        topology.link_level,
    )


def _mesh_key(mesh: Mesh):
    placement = mesh.placement.ravel()
    identity = np.array_equal(placement, np.arange(placement.size))
    return mesh.axis_names, mesh.shape, None if identity else placement.tobytes()


class Coster:
    """Costs collectives over the axes of ``mesh`` laid on ``topology``, with a cache;
    ``ecmp`` and ``qps``: how a GPU fabric spreads the flows (module text)."""

    def __init__(self, topology, mesh: Mesh, *, ecmp: Optional[str] = None, qps: int = META_QPS):
        if ecmp not in ECMP_SCHEMES:
            raise CollectivesError(
                f"ecmp must be one of {', '.join(map(repr, ECMP_SCHEMES))}, got {ecmp!r}"
            )
        self.qps = integer(qps, "qps", minimum=1)
        self.topology = topology
        self.mesh = mesh
        # the schemes choose among a fabric's equal-cost paths: a torus has none to choose
        self.ecmp = ecmp if isinstance(topology, Cluster) else None
        self.kind, self.node_size, self.pod_size, *self.labels = domains(topology)
        scheme = (self.ecmp, self.qps if self.ecmp == "e-ecmp" else None)
        self._cache: dict = _SHARED.setdefault(topology, {}).setdefault(
            (_mesh_key(mesh), scheme), {}
        )

    def _routed(self):
        """The topology the costs are computed on (re-routed for "plain" and "adaptive")."""
        if self.ecmp not in ("plain", "adaptive"):
            return self.topology
        routing = "hash" if self.ecmp == "plain" else "adaptive"
        variants = _REROUTED.setdefault(self.topology, {})
        if routing not in variants:
            variants[routing] = (
                self.topology
                if self.topology.routing == routing
                else self.topology.with_routing(routing)
            )
        return variants[routing]

    def _time(self, schedule, nbytes):
        if self.ecmp == "e-ecmp":
            return qp_timing(
                schedule, self.topology, nbytes, placement=self.mesh.placement, qps=self.qps
            )
        return time(schedule, self._routed(), nbytes, placement=self.mesh.placement)

    def span(self, axes: tuple[str, ...]) -> str:
        """Where the groups of ``axes`` reach: inside a node, across nodes, across pods."""
        devices = self.mesh.device_groups(*axes)
        inside, across, far = self.labels
        if (devices // self.node_size == devices[:, :1] // self.node_size).all():
            return inside
        if (devices // self.pod_size == devices[:, :1] // self.pod_size).all():
            return across
        return far

    def cost(self, collective: str, axes: tuple[str, ...], nbytes: float) -> Costing:
        """The fastest candidate for ``collective`` over the groups of ``axes`` at
        ``nbytes`` (each rank's buffer, as :func:`collectives.time` takes it)."""
        axes = tuple(a for a in axes if self.mesh.axis_size(a) > 1)
        key = (collective, axes, float(nbytes))
        if key not in self._cache:
            self._cache[key] = self._cost(collective, axes, float(nbytes))
        return self._cache[key]

    def _cost(self, collective, axes, nbytes):
        if not axes:
            return Costing("none (group of 1)", 0.0, None, self.labels[0], (), None)
        m = int(np.prod([self.mesh.axis_size(a) for a in axes]))
        span = self.span(axes)
        rows = []
        for name, build in self._candidates(collective, axes, m):
            schedule = self.mesh.collective(build(), *axes)
            timing = self._time(schedule, nbytes)
            rows.append((timing.seconds, name, timing, schedule))
        if not rows:
            raise CollectivesError(f"no algorithm for {collective} over {axes}")
        rows.sort(key=lambda row: row[0])
        seconds, name, timing, schedule = rows[0]
        # a bare torus names its one link level "link": on a TPU slice that is ICI
        rename = (("link", "ici"),) if self.kind == "tpu" and self.topology.info.is_torus else ()
        return Costing(
            name, seconds, timing, span, tuple((row[1], row[0]) for row in rows), schedule, rename
        )

    # ---- candidates ----------------------------------------------------------------------
    def _two_levels(self, axes, m):
        """(nodes, per node) if every group spans several nodes with the same number of
        members in each, node-major, and the same local positions in every node (rails
        line up); else None."""
        devices = self.mesh.device_groups(*axes)
        g = self.node_size
        node, local = devices // g, devices % g
        per = int((node == node[:, :1]).sum(axis=1).min())
        if per <= 1 or per >= m or m % per:
            return None
        n_nodes = m // per
        node3, local3 = node.reshape(-1, n_nodes, per), local.reshape(-1, n_nodes, per)
        if not (node3 == node3[:, :, :1]).all() or not (local3 == local3[:, :1, :]).all():
            return None
        if (np.diff(np.sort(node3[:, :, 0], axis=1), axis=1) == 0).any():
            return None  # a node twice in one group
        return n_nodes, per

    def _torus_box(self, axes, m):
        """(shape, wraparound) if every group is a row-major box of the torus, else None."""
        topo = self.topology
        members = self.mesh.device_groups(*axes)[0]
        if topo.info.is_torus:
            return self._box(members, topo.shape, topo.wraparound)
        slices = members // self.node_size
        if topo.info.family == "product" and self.kind == "tpu" and (slices == slices[0]).all():
            inner = topo.info.dimensions[-1]  # the groups stay in one slice
            if inner.info.is_torus:
                return self._box(members % self.node_size, inner.shape, inner.wraparound)
        return None

    def _box(self, members, shape, wraparound):
        """(box shape, wraparound per box axis) if ``members`` (endpoint ids of one torus
        of ``shape``) enumerate a box of it row-major, else None."""
        m = len(members)
        coords = np.stack(np.unravel_index(members, shape))  # (dims, m)
        varying = [i for i in range(len(shape)) if len(np.unique(coords[i])) > 1]
        sizes = [len(np.unique(coords[i])) for i in varying]
        if not varying or int(np.prod(sizes)) != m:
            return None
        order = np.lexsort(coords[varying][::-1])
        if not (order == np.arange(m)).all():
            return None
        wrap = wraparound or (False,) * len(shape)
        wraps = tuple(
            bool(wrap[i]) and sizes[k] == shape[i] and self._contiguous(coords[i])
            for k, i in enumerate(varying)
        )
        return tuple(sizes), wraps

    def _inner_box(self, axes, levels):
        """On a multislice TPU (slices of a torus joined over DCN): the box that each
        group's members inside one slice form, or None."""
        topo = self.topology
        if topo.info.family != "product" or levels is None:
            return None
        inner = topo.info.dimensions[-1]
        if not inner.info.is_torus:
            return None
        n_nodes, per = levels
        local = self.mesh.device_groups(*axes)[0][:per] % self.node_size
        return self._box(local, inner.shape, inner.wraparound)

    @staticmethod
    def _contiguous(values):
        u = np.unique(values)
        return u[-1] - u[0] + 1 == len(u)

    def _candidates(self, collective, axes, m):
        box = self._torus_box(axes, m)
        levels = None if box else self._two_levels(axes, m)
        inner = self._inner_box(axes, levels)
        out = []
        if collective == "all_reduce":
            out += [
                ("ring_all_reduce", lambda: A.ring_all_reduce(m)),
                ("bidirectional_ring_all_reduce", lambda: A.bidirectional_ring_all_reduce(m)),
            ]
            if levels:
                out.append(
                    ("two_level_ring_all_reduce", lambda: A.two_level_ring_all_reduce(*levels))
                )
            if inner:
                shape, wrap = inner
                out.append(
                    (
                        "multislice_all_reduce",
                        lambda: A.hierarchical_all_reduce(
                            A.torus_reduce_scatter(shape, concurrent=True, wraparound=wrap),
                            A.ring_all_reduce(levels[0]),
                            A.torus_all_gather(shape, concurrent=True, wraparound=wrap),
                        ),
                    )
                )
            if box:
                out += self._torus(A.torus_all_reduce, "torus_all_reduce", box)
        elif collective in ("all_gather", "reduce_scatter"):
            ring = getattr(A, f"ring_{collective}")
            bidir = getattr(A, f"bidirectional_ring_{collective}")
            out += [
                (f"ring_{collective}", lambda: ring(m)),
                (f"bidirectional_ring_{collective}", lambda: bidir(m)),
            ]
            if levels:
                n_nodes, per = levels
                if collective == "all_gather":
                    build = lambda: A.hierarchical_all_gather(
                        A.ring_all_gather(n_nodes), A.ring_all_gather(per)
                    )
                else:
                    build = lambda: A.hierarchical_reduce_scatter(
                        A.ring_reduce_scatter(per), A.ring_reduce_scatter(n_nodes)
                    )
                out.append((f"hierarchical_{collective}", build))
            if inner:
                shape, wrap = inner
                n_nodes = levels[0]
                if collective == "all_gather":
                    build = lambda: A.hierarchical_all_gather(
                        A.ring_all_gather(n_nodes),
                        A.torus_all_gather(shape, concurrent=True, wraparound=wrap),
                    )
                else:
                    build = lambda: A.hierarchical_reduce_scatter(
                        A.torus_reduce_scatter(shape, concurrent=True, wraparound=wrap),
                        A.ring_reduce_scatter(n_nodes),
                    )
                out.append((f"multislice_{collective}", build))
            if box:
                out += self._torus(getattr(A, f"torus_{collective}"), f"torus_{collective}", box)
        elif collective == "all_to_all":
            out.append(("direct_all_to_all", lambda: A.direct_all_to_all(m)))
            if levels:
                out.append(("hierarchical_all_to_all", lambda: A.hierarchical_all_to_all(*levels)))
            if box:
                out.append(("torus_all_to_all", lambda: A.torus_all_to_all(box[0])))
        elif collective == "send_recv":
            out.append(("pipeline_shift", lambda: A.pipeline_shift(m)))
        else:
            raise CollectivesError(f"the planner does not cost {collective!r}")
        return out

    @staticmethod
    def _torus(builder, name, box):
        shape, wrap = box
        out = [(name, lambda: builder(shape, wraparound=wrap))]
        if len(shape) > 1:
            out.append(
                (name + "_concurrent", lambda: builder(shape, concurrent=True, wraparound=wrap))
            )
        return out
