"""Layered fabrics: any number of tiers, each with its own switch count, parallel links and
link speed, so oversubscription can sit at any tier; dual-plane and rail-optimised hosts;
links and switches that fail.

**What is modelled.** Tier 1 is the leaf (ToR, "RTSW") tier: ``hosts_per_leaf`` hosts per
leaf on host cables of ``host_bandwidth`` bytes/s per direction. Every tier above is a
:class:`Tier`: a tier-t *block* joins ``blocks`` blocks of the tier below (a zone joins 252
racks, the aggregation tier joins 8 zones) through ``switches`` switches, and every switch
of those child blocks has ``links`` parallel cables to every switch of its block (a full
mesh between adjacent tiers, the way leaf-spine fabrics are cabled), each of ``bandwidth``
bytes/s per direction. The top tier has one block. A tier-(t-1) switch thus has
``switches * links`` uplinks, and its downlink:uplink capacity ratio is that tier's
*oversubscription* (:attr:`LayeredFabric.oversubscription`, one value per tier below
the top; below 1 means spare uplinks, as Meta's racks have).

``planes`` > 1 repeats everything above the hosts: each host has one port into each plane
(Alibaba HPN's dual-plane design) and a flow stays in the plane its hash picks.
``gpus_per_node`` makes the leaves rail-optimised: GPU ``g`` of every node under a rail
group shares leaf ``g`` of that group (NVIDIA SuperPOD wiring); ranks stay
``node * gpus_per_node + g``. NVLink inside the node is not part of this Topology
(:func:`collectives.topology.cluster` models it).

**Routing** is up/down: up to the lowest tier whose block holds both leaves, then down. At
each hop with a choice (which uplink, which parallel cable, which switch of the child
block on the way down) a seeded 64-bit hash of ``(src, dst, flow_id)`` picks among the
usable candidates, re-mixed per hop, like per-flow ECMP. After :meth:`LayeredFabric.fail`
only live links are usable, and only towards switches that can still reach the
destination's leaf (the way routing protocols withdraw routes), so traffic reroutes.

**Left out:** queues, buffers, PFC, ECN and congestion control; packet spraying and
adaptive routing; NIC and PCIe limits; cabling other than the full mesh between adjacent
tiers. Taught in chapter "Designing the fabric".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TopologyError
from ..topology import Topology, TopologyInfo
from ..validation import integer, number
from .builders import _as_u64, _mix64

__all__ = ["Tier", "LayeredFabric", "layered"]

_GOLDEN = 0x9E3779B97F4A7C15
_SALT_DST = np.uint64(0xD6E8FEB86659FD93)
_SALT_FLOW = np.uint64(0xA0761D6478BD642F)


@dataclass(frozen=True)
class Tier:
    """One tier above the leaves: a block of it joins ``blocks`` blocks of the tier below
    through ``switches`` switches; ``links`` parallel cables from every child switch to
    every switch of the block, ``bandwidth`` bytes/s per direction each (None: the host
    cables' speed)."""

    blocks: int
    switches: int
    links: int = 1
    bandwidth: float | None = None


def _hash_keys(src, dst, flow, seed):
    salt = np.uint64((int(seed) + 1) * _GOLDEN % 2 ** 64)
    key = _mix64(_as_u64(src) + salt)
    key = _mix64(key ^ (_as_u64(dst) * _SALT_DST))
    return _mix64(key ^ (_as_u64(flow) * _SALT_FLOW))


def _hop_hash(key, hop):
    return _mix64(key + np.uint64((hop + 1) * _GOLDEN % 2 ** 64))


class LayeredFabric(Topology):
    """A Topology built by :func:`layered`. Beyond the Topology contract:

    ``hosts_per_leaf``, ``tiers`` (the :class:`Tier` s, bottom up), ``planes``,
    ``gpus_per_node``, ``n_tiers``; counts ``switches_per_tier`` and ``cables_per_tier``
    (tier 1 = host cables; all planes); ``oversubscription`` per tier below the top;
    ``tier_bandwidth`` (bytes/s per link, tier 1 first); per node ``node_tier`` (0 hosts);
    per link ``link_tier`` (1 = host cable, t = between tiers t-1 and t), ``link_up``;
    ``failed`` (a bool per link). ``paths``/``route`` take ``flow_id`` (the ECMP flow
    label, e.g. the queue pair).
    """

    def __init__(self, *args, layout, **kwargs):
        super().__init__(*args, **kwargs)
        self._layout = layout
        self._reach = None

    # ---- shape ---------------------------------------------------------------------------
    hosts_per_leaf = property(lambda self: self._layout["a"])
    tiers = property(lambda self: self._layout["tiers"])
    planes = property(lambda self: self._layout["planes"])
    gpus_per_node = property(lambda self: self._layout["gpus_per_node"])
    n_tiers = property(lambda self: len(self._layout["n"]) - 1)
    node_tier = property(lambda self: self._layout["node_tier"])
    link_tier = property(lambda self: self._layout["link_tier"])
    link_up = property(lambda self: self._layout["link_up"])
    failed = property(lambda self: self._layout["failed"])

    @property
    def n_leaves(self) -> int:
        """Leaves in one plane."""
        return self._layout["n"][1]

    @property
    def switches_per_tier(self) -> tuple[int, ...]:
        """Switches of each tier, leaves first, all planes."""
        return tuple(n * self.planes for n in self._layout["n"][1:])

    @property
    def cables_per_tier(self) -> tuple[int, ...]:
        """Cables (one link each way) of each tier: host cables first, all planes."""
        return tuple(int(k) for k in self._layout["cables"][1:])

    @property
    def tier_bandwidth(self) -> tuple[float, ...]:
        """Bytes/s per direction of one cable at each tier (host cables first)."""
        return tuple(self._layout["bw"][1:])

    @property
    def oversubscription(self) -> tuple[float, ...]:
        """Downlink:uplink capacity of a switch at each tier below the top (leaf first)."""
        lay = self._layout
        out = []
        for t in range(1, self.n_tiers):
            if t == 1:
                down = lay["a"] * lay["bw"][1]
            else:
                down = lay["g"][t] * lay["w"][t - 1] * lay["m"][t] * lay["bw"][t]
            up = lay["w"][t + 1] * lay["m"][t + 1] * lay["bw"][t + 1]
            out.append(down / up)
        return tuple(out)

    def leaf_of(self, rank) -> np.ndarray:
        """The leaf (index within a plane) each rank is cabled to."""
        pos = self._layout["position"][np.asarray(rank, dtype=np.int64)]
        return pos // self.hosts_per_leaf

    def block_of(self, rank, tier: int) -> np.ndarray:
        """The tier-``tier`` block (1 = the leaf itself) each rank sits under."""
        tier = integer(tier, "tier", minimum=1, maximum=self.n_tiers, error=TopologyError)
        return self.leaf_of(rank) // self._layout["span"][tier]

    # ---- routing -------------------------------------------------------------------------
    def paths(self, src, dst, flow_id=None):
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays.

        ``flow_id``: None (0), an int, or one int per pair: the ECMP flow label.
        """
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        if len(src) != len(dst):
            raise TopologyError(f"src has {len(src)} ranks but dst has {len(dst)}")
        bad = np.flatnonzero((src < 0) | (src >= self.n_ranks) | (dst < 0)
                             | (dst >= self.n_ranks) | (src == dst))
        if bad.size:
            i = int(bad[0])
            if src[i] == dst[i]:
                raise TopologyError("paths() takes pairs of distinct nodes")
            raise TopologyError(f"pair ({src[i]}, {dst[i]}) is not two endpoints "
                                f"(0..{self.n_ranks - 1}) of {self.name}")
        if flow_id is None:
            flow = np.zeros(len(src), dtype=np.int64)
        else:
            flow = np.asarray(flow_id)
            if flow.dtype == bool or not np.issubdtype(flow.dtype, np.integer):
                raise TopologyError(f"flow_id must be an integer or one integer per pair, "
                                    f"got {flow_id!r}")
            flow = np.broadcast_to(flow.astype(np.int64), src.shape) if flow.ndim == 0 \
                else flow.ravel().astype(np.int64)
            if len(flow) != len(src):
                raise TopologyError(f"flow_id has {len(flow)} entries for {len(src)} pairs")
        key = _hash_keys(src, dst, flow, self._layout["seed"])
        plane_key = _hash_keys(src, dst, np.zeros_like(flow), self._layout["seed"])
        return walk(self, src, dst, _hash_chooser(key, plane_key))

    def route(self, src, dst, flow_id=0):
        """The links from ``src`` to ``dst`` (flow ``flow_id``), in order."""
        if src == dst:
            return []
        return self.paths([src], [dst], flow_id=flow_id)[1].tolist()

    # ---- failures ------------------------------------------------------------------------
    def fail(self, links=(), switches=()):
        """A copy of this fabric with these cables and switches down.

        ``links``: directed link ids (its cable fails: both directions); ``switches``: node
        ids (every cable of the switch fails). Failed links stay in the link list (so loads
        line up with the intact fabric) but routing avoids them.
        """
        links = np.asarray(links, dtype=np.int64).ravel()
        switches = np.asarray(switches, dtype=np.int64).ravel()
        if np.any((links < 0) | (links >= self.n_links)):
            raise TopologyError(f"link ids must be 0..{self.n_links - 1}, got "
                                f"{links[(links < 0) | (links >= self.n_links)][:3].tolist()}")
        is_switch = (switches >= self.n_ranks) & (switches < self.n_nodes)
        if not np.all(is_switch):
            raise TopologyError(f"switch ids must be {self.n_ranks}..{self.n_nodes - 1}, "
                                f"got {switches[~is_switch][:3].tolist()}")
        dead = self.failed.copy()
        dead[links] = True
        dead[self._layout["twin"][links]] = True
        dead |= np.isin(self.link_src, switches) | np.isin(self.link_dst, switches)
        layout = dict(self._layout, failed=dead)
        dead.flags.writeable = False
        other = object.__new__(type(self))
        for key, value in vars(self).items():
            object.__setattr__(other, key, value)
        object.__setattr__(other, "_layout", layout)
        object.__setattr__(other, "_reach", None)
        n_dead = int(dead.sum()) // 2
        object.__setattr__(other, "name", f"{self.name.split(' [')[0]} [{n_dead} cables down]")
        return other

    def live_capacity(self) -> float:
        """Bytes/s (one direction) of all live links, summed."""
        return float(self.link_bandwidth[~self.failed].sum())




def _hash_chooser(key, plane_key):
    """ECMP: hop ``hop`` picks the (hash mod usable)-th usable candidate. The plane is
    hashed on (src, dst) only, so every flow of a connection stays in one plane."""
    def choose(hop, rows, cand, ok):
        h = _hop_hash((plane_key if hop == 0 else key)[rows], hop)
        if ok is None:
            return (h % np.uint64(cand.shape[1])).astype(np.int64)
        count = ok.sum(axis=1)
        want = (h % np.maximum(count, 1).astype(np.uint64)).astype(np.int64)
        return np.argmax(np.cumsum(ok, axis=1) > want[:, None], axis=1)
    return choose


def _reach(fab):
    """Reachability after failures: ``down[t][s, l]`` switch s of tier t (global index over
    planes) reaches local leaf l of its block going down; ``up[t][s, L]`` it reaches leaf L
    of its plane up then down. None when nothing has failed."""
    if fab._reach is not None or not fab.failed.any():
        return fab._reach
    lay, dead = fab._layout, fab.failed
    T = fab.n_tiers
    down = [None, np.ones((lay["n"][1] * fab.planes, 1), bool)]
    for t in range(2, T + 1):
        alive = (~dead[lay["down_table"][t]]).any(axis=3)          # (S, g, kc)
        r = alive[..., None] & down[t - 1][lay["child_table"][t]]   # (S, g, kc, span)
        down.append(r.any(axis=2).reshape(len(alive), -1))
    up = [None] * (T + 1)
    up[T] = down[T]
    for t in range(T - 1, 1, -1):
        alive = (~dead[lay["up_table"][t]]).any(axis=2)            # (S, u)
        reach = (alive[..., None] & up[t + 1][lay["parent_table"][t]]).any(axis=1)
        span, n_s = lay["span"][t], len(alive)
        block = (np.arange(n_s) % lay["n"][t]) // lay["w"][t]
        cols = block[:, None] * span + np.arange(span)[None, :]
        reach[np.arange(n_s)[:, None], cols] = down[t]
        up[t] = reach
    object.__setattr__(fab, "_reach", (down, up))
    return fab._reach


def walk(fab, src, dst, choose):
    """Route pairs hop by hop; ``choose(hop, rows, cand, ok)`` returns a column of ``cand``
    per row (``ok``: usable candidates, None when all are). Returns ``(pair, link)`` in
    path order. ECMP hashes (:meth:`LayeredFabric.paths`); traffic engineering
    (:mod:`collectives.fabric.flows`) picks by load."""
    lay = fab._layout
    T, P, a, H = fab.n_tiers, fab.planes, lay["a"], fab.n_ranks
    n1 = lay["n"][1]
    leaf_s, leaf_d = lay["position"][src] // a, lay["position"][dst] // a
    top = np.ones(len(src), dtype=np.int64)
    for t in range(2, T + 1):
        top += (leaf_s // lay["span"][t - 1]) != (leaf_d // lay["span"][t - 1])
    reach = _reach(fab)
    dead = lay["failed"]
    length = 2 * top                                      # links on each pair's path
    offset = np.concatenate([[0], np.cumsum(length)[:-1]])
    out = np.empty(int(length.sum()), dtype=np.int64)

    def record(hop, rows, chosen):
        # hop 0 and the up hops sit at their own index; the down hop of tier t at
        # 2 top - t; the last (into the host) at 2 top - 1
        if hop < T:
            where = hop
        elif hop == 2 * T:
            where = length[rows] - 1
        else:
            where = 2 * top[rows] - (2 * T - hop)
        out[offset[rows] + where] = chosen

    def pick(hop, rows, cand, ok):
        if ok is not None and np.any(~ok.any(axis=1)):
            raise TopologyError(
                f"no live path for {int(np.count_nonzero(~ok.any(axis=1)))} pair(s) (first "
                f"{int(src[rows][~ok.any(axis=1)][0])} -> {int(dst[rows][~ok.any(axis=1)][0])})"
                f" after the failures: every candidate link at hop {hop} is down or leads "
                f"nowhere")
        col = choose(hop, rows, cand, ok)
        return col, cand[np.arange(len(rows)), col]

    rows = np.arange(len(src))
    cand = lay["up_base"][1] + np.arange(P)[None, :] * H + src[:, None]
    ok = None
    if reach is not None:
        ok = ~dead[cand] & ~dead[lay["down_base"][1] + np.arange(P)[None, :] * H
                                 + dst[:, None]]
        for p in range(P):
            sw = p * n1 + leaf_s
            if T > 1:
                alive = (~dead[lay["up_table"][1][sw]]).any(axis=2)
                far = reach[1][2][lay["parent_table"][1][sw], leaf_d[:, None]]
                ok[:, p] &= (leaf_s == leaf_d) | (alive & far).any(axis=1)
            else:
                ok[:, p] &= leaf_s == leaf_d
    plane, chosen = pick(0, rows, cand, ok)
    record(0, rows, chosen)
    cur = plane * n1 + leaf_s
    for t in range(2, T + 1):                               # up
        rows = np.flatnonzero(top >= t)
        if not rows.size:
            break
        sw = cur[rows]
        m = lay["m"][t]
        cand = lay["up_table"][t - 1][sw].reshape(len(rows), -1)
        parents = lay["parent_table"][t - 1][sw]
        ok = None
        if reach is not None:
            ok = ~dead[cand] & np.repeat(reach[1][t][parents, leaf_d[rows, None]], m, axis=1)
        col, chosen = pick(t - 1, rows, cand, ok)
        record(t - 1, rows, chosen)
        cur[rows] = parents[np.arange(len(rows)), col // m]
    for t in range(T, 1, -1):                               # down
        rows = np.flatnonzero(top >= t)
        if not rows.size:
            continue
        sw = cur[rows]
        k = (leaf_d[rows] // lay["span"][t - 1]) % lay["g"][t]
        m = lay["m"][t]
        cand = lay["down_table"][t][sw, k].reshape(len(rows), -1)
        children = lay["child_table"][t][sw, k]
        ok = None
        if reach is not None:
            local = (leaf_d[rows] % lay["span"][t - 1])[:, None]
            ok = ~dead[cand] & np.repeat(reach[0][t - 1][children, local], m, axis=1)
        col, chosen = pick(2 * T - t, rows, cand, ok)
        record(2 * T - t, rows, chosen)
        cur[rows] = children[np.arange(len(rows)), col // m]
    rows = np.arange(len(src))
    record(2 * T, rows, lay["down_base"][1] + plane * H + dst)
    return np.repeat(np.arange(len(src)), length), out


def _positions(hosts, a, gpus_per_node):
    """Where each rank is cabled: position p = leaf * a + slot."""
    r = np.arange(hosts, dtype=np.int64)
    if gpus_per_node is None:
        return r
    node, g = r // gpus_per_node, r % gpus_per_node
    return ((node // a) * gpus_per_node + g) * a + node % a


def layered(hosts_per_leaf, host_bandwidth, tiers=(), *, planes=1, gpus_per_node=None,
            wiring="mesh", hop_latency=0.0, hash_seed=0, name=None, sources=()):
    """A layered fabric (see the module docstring): leaves of ``hosts_per_leaf`` hosts on
    ``host_bandwidth`` bytes/s cables, then one :class:`Tier` per tier above.

    ``wiring``: "mesh" (every child switch to every switch of its parent block) or
    "striped" (child switch i to parent switches ``i*q .. i*q+q-1``, ``q`` = parent
    switches / child switches per block, as a fat tree's planes; the leaves always mesh).
    ``planes``: copies of the switch fabric, one host port into each. ``gpus_per_node``:
    rail-optimised leaves. ``hop_latency``: seconds per link. ``hash_seed``: the ECMP seed.
    """
    a = integer(hosts_per_leaf, "hosts_per_leaf", minimum=1, error=TopologyError)
    bw1 = number(host_bandwidth, "host_bandwidth", positive=True,
                 unit="bytes/s per direction", error=TopologyError)
    latency = number(hop_latency, "hop_latency", unit="seconds", error=TopologyError)
    P = integer(planes, "planes", minimum=1, error=TopologyError)
    if wiring not in ("mesh", "striped"):
        raise TopologyError(f"wiring must be 'mesh' or 'striped', got {wiring!r}")
    if isinstance(hash_seed, bool) or not isinstance(hash_seed, (int, np.integer)):
        raise TopologyError(f"hash_seed must be an integer, got {hash_seed!r}")
    tiers = tuple(tiers)
    for i, tier in enumerate(tiers):
        if not isinstance(tier, Tier):
            raise TopologyError(f"tiers[{i}] must be a fabric.Tier(blocks, switches, links, "
                                f"bandwidth), got {tier!r}")
    T = len(tiers) + 1
    g = [None, 1] + [integer(x.blocks, f"tiers[{i}].blocks", minimum=1, error=TopologyError)
                     for i, x in enumerate(tiers)]
    w = [None, 1] + [integer(x.switches, f"tiers[{i}].switches", minimum=1,
                             error=TopologyError) for i, x in enumerate(tiers)]
    m = [None, 1] + [integer(x.links, f"tiers[{i}].links", minimum=1, error=TopologyError)
                     for i, x in enumerate(tiers)]
    bw = [None, bw1] + [bw1 if x.bandwidth is None else number(
        x.bandwidth, f"tiers[{i}].bandwidth", positive=True, unit="bytes/s per direction",
        error=TopologyError) for i, x in enumerate(tiers)]
    span = [None, 1]
    for t in range(2, T + 1):
        span.append(span[-1] * g[t])
    n = [None] + [span[T] // span[t] * w[t] for t in range(1, T + 1)]
    hosts = a * n[1]
    q = [None, None] + [w[t] if wiring == "mesh" or t == 2 else w[t] // w[t - 1]
                        for t in range(2, T + 1)]
    for t in range(3, T + 1):
        if wiring == "striped" and w[t] % w[t - 1]:
            raise TopologyError(f"striped wiring needs each tier's switches per block to be "
                                f"a multiple of the tier below's: tier {t} has {w[t]}, tier "
                                f"{t - 1} has {w[t - 1]}")
    if gpus_per_node is not None:
        G = integer(gpus_per_node, "gpus_per_node", minimum=1, error=TopologyError)
        if n[1] % G or (T > 1 and g[2] % G):
            raise TopologyError(f"rail-optimised leaves come in groups of gpus_per_node={G}: "
                                f"the leaves ({n[1]}) and the leaves per tier-2 block "
                                f"({g[2] if T > 1 else 1}) must be multiples of it")
    # links: host cables, then per tier t the cables from tier t-1 up, all planes
    up_base, down_base, cables = [None] * (T + 1), [None] * (T + 1), [None] * (T + 1)
    srcs, dsts, bws, tier_of, up_flag = [], [], [], [], []
    base = 0
    sw_base = [None, hosts]
    for t in range(2, T + 1):
        sw_base.append(sw_base[-1] + n[t - 1] * P)
    host = np.tile(np.arange(hosts, dtype=np.int64), P)
    plane_of = np.repeat(np.arange(P, dtype=np.int64), hosts)
    position = _positions(hosts, a, gpus_per_node)
    leaf_node = sw_base[1] + plane_of * n[1] + position[host] // a
    cables[1] = hosts * P
    up_base[1], down_base[1] = 0, cables[1]
    srcs += [host, leaf_node]
    dsts += [leaf_node, host]
    base = 2 * cables[1]
    up_table, parent_table, down_table, child_table = [None] * T, [None] * T, \
        [None] * (T + 1), [None] * (T + 1)
    for t in range(2, T + 1):
        nc = n[t - 1] * P                                   # child switches, all planes
        c = np.arange(nc, dtype=np.int64)
        p_of, local = c // n[t - 1], c % n[t - 1]
        block = local // w[t - 1] // g[t]
        first = 0 if q[t] == w[t] else (local % w[t - 1]) * q[t]
        j = first if np.ndim(first) else np.zeros(nc, np.int64)
        j = j[:, None] + np.arange(q[t])[None, :]          # (nc, q) parent positions
        parent = p_of[:, None] * n[t] + block[:, None] * w[t] + j
        cables[t] = nc * q[t] * m[t]
        up_base[t], down_base[t] = base, base + cables[t]
        ids = np.arange(cables[t], dtype=np.int64).reshape(nc, q[t], m[t])
        up_table[t - 1] = up_base[t] + ids
        parent_table[t - 1] = parent
        par = np.repeat(parent[:, :, None], m[t], axis=2).ravel()
        child = np.repeat(c, q[t] * m[t])
        srcs += [sw_base[t - 1] + child, sw_base[t] + par]
        dsts += [sw_base[t] + par, sw_base[t - 1] + child]
        base += 2 * cables[t]
        # down tables: parent s -> its children in each of its g child blocks
        ns = n[t] * P
        s = np.arange(ns, dtype=np.int64)
        sp, sl = s // n[t], s % n[t]
        sblock, sj = sl // w[t], sl % w[t]
        kc = w[t - 1] if q[t] == w[t] else 1
        child_pos = np.arange(kc)[None, None, :] if kc > 1 or q[t] == w[t] else \
            (sj // q[t])[:, None, None]
        child_pos = np.broadcast_to(child_pos, (ns, g[t], kc))
        cblock = sblock[:, None, None] * g[t] + np.arange(g[t])[None, :, None]
        ch = sp[:, None, None] * n[t - 1] + cblock * w[t - 1] + child_pos
        jj = sj[:, None, None] - (0 if q[t] == w[t] else (child_pos * q[t]))
        link = (ch * q[t] + jj)[..., None] * m[t] + np.arange(m[t])
        child_table[t] = ch
        down_table[t] = down_base[t] + link
    for t in range(1, T + 1):
        k = cables[t]
        bws.append(np.full(2 * k, bw[t]))
        tier_of.append(np.full(2 * k, t, dtype=np.int64))
        up_flag.append(np.repeat([True, False], k))
    link_src, link_dst = np.concatenate(srcs), np.concatenate(dsts)
    n_links = len(link_src)
    twin = np.concatenate([np.concatenate([np.arange(k) + b + k, np.arange(k) + b])
                           for b, k in ((up_base[t], cables[t]) for t in range(1, T + 1))])
    node_tier = np.concatenate([np.zeros(hosts, np.int64)]
                               + [np.full(n[t] * P, t, np.int64) for t in range(1, T + 1)])
    failed = np.zeros(n_links, bool)
    failed.flags.writeable = False
    layout = dict(a=a, tiers=tiers, planes=P, gpus_per_node=gpus_per_node, n=n, g=g, w=w,
                  m=m, bw=bw, span=span, cables=[None] + [c * 1 for c in cables[1:]],
                  up_base=up_base, down_base=down_base, up_table=up_table,
                  parent_table=parent_table, down_table=down_table, child_table=child_table,
                  position=position, seed=int(hash_seed), node_tier=node_tier,
                  link_tier=np.concatenate(tier_of), link_up=np.concatenate(up_flag),
                  twin=twin, failed=failed, wiring=wiring)
    for key in ("position", "node_tier", "link_tier", "link_up", "twin"):
        layout[key].flags.writeable = False
    if name is None:
        name = (f"{T}-tier layered fabric, {hosts} hosts"
                + (f", {P} planes" if P > 1 else "")
                + (", rail-optimised" if gpus_per_node else ""))
    levels = ("host",) + tuple(f"tier {t}" for t in range(2, T + 1))
    info = TopologyInfo(family="layered", levels=levels, sources=tuple(sources))
    return LayeredFabric(hosts, link_src, link_dst, np.concatenate(bws), latency, None,
                         n_switches=int(sum(n[1:]) * P), link_level=np.concatenate(tier_of) - 1,
                         info=info, name=name, layout=layout)
