"""Datacenter fabrics: folded-Clos and fat-tree builders, up/down routing with ECMP, the
bytes each link carries, and the bisection bandwidth.

**What is modelled.** :func:`clos` builds a folded Clos of identical switches with ``radix``
ports in ``tiers`` tiers (tier 1 = leaf/ToR, tier ``tiers`` = spine/core); :func:`fat_tree`
is Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008), which is ``clos(k, 3)``. Endpoints are
hosts (GPUs, NICs), ranks ``0..H-1``, numbered so hosts under one leaf are consecutive, and
leaves under one pod are consecutive; switches follow, tier by tier. Every cable is two
directed links of ``link_bandwidth`` bytes/s each and ``hop_latency`` seconds each (host
cables included, so a path inside one leaf costs two hops and a path over the top tier
``2 * tiers``).

Wiring (the k-ary n-tree construction). Let ``h = radix/2``. A leaf has ``a`` host ports
and ``b`` uplinks (``a = b = h`` when non-blocking). A switch of tier ``2..tiers-1`` has
``h`` down and ``h`` up ports; a top-tier switch has all ``radix`` ports down. A tier-t
block (the hosts under one tier-t subtree) holds ``h`` tier-(t-1) blocks (``radix`` at the
top), so there are ``2 h^(tiers-1)`` leaves and ``H = 2 a h^(tiers-1)`` hosts; a non-blocking
Clos has ``2 (R/2)^L`` hosts, ``(2L-1)(R/2)^(L-1)`` switches and ``2 L H`` directed links.
A switch is named by its block and by its *position*, the up-port choices that lead to
it: uplink ``p`` of the switch at position ``q`` in tier t reaches position ``q*fan + p`` in
the parent block (``fan = b`` for leaves, ``h`` above), so the way down from a top switch is
unique.

**Oversubscription** ``d`` (``d:1`` downlink:uplink capacity) exists only at the leaf tier
and is realised by the port split, ``a = R d/(d+1)`` host ports and ``b = R/(d+1)`` uplinks
(e.g. radix 8 at 3:1: 6 hosts and 2 uplinks per leaf). The tiers above stay non-blocking
but hold ``b/h`` as many switches. The split must be whole ports: a requested ratio
within 1 % of a realisable ``a/b`` is rounded to it (``topology.oversubscription`` holds the
realised value); otherwise :class:`~collectives.errors.TopologyError` names the nearest
realisable splits. An oversubscribed fabric has *more* hosts than the non-blocking one on
the same switches (radix 4, 3 tiers: 16 hosts at 1:1, 24 at 3:1).

**Routing** is up/down: up to the lowest tier whose subtree holds both ends (the lowest
common ancestor tier), then down the unique way. At every tier the up-link is chosen by
``ecmp``:

- ``"hash"`` (default): a deterministic 64-bit multiply-xorshift hash (splitmix64 finaliser)
  of ``(src, dst, flow_id, hash_seed)``, re-mixed per tier so tiers are independent (no
  hash polarisation). Like a switch hashing a flow's 5-tuple: a flow keeps its path, and
  distinct flows collide as balls in bins.
- ``"spread"``: idealised, collision-free spreading by destination digits ("d-mod-k"
  routing, Zahavi et al. 2010; OpenSM's ftree engine): the up-port at each tier is a digit
  of the destination's leaf-local index and leaf number, rotated by ``flow_id``. On a
  non-blocking fabric no link carries two flows of any shift permutation
  ``dst = (src + s) mod H`` (so rings, pairwise exchanges and the steps of a shifted
  all-to-all); at ``a:b`` leaf ports none carries more than ``ceil(a/b)``, which the leaf
  uplinks must. An all-to-all loads all links of a tier equally. It is oblivious, so some
  other permutations still collide.

**Left out:** switch buffers, queueing, PFC/ECN and congestion control (a link's bytes
simply share its bandwidth in :func:`collectives.time`), adaptive or packet-level
spraying, in-network reduction; link failures, dual-plane and rail-optimised designs,
per-tier link speeds and oversubscription above the leaves are in
:mod:`collectives.fabric.layered`. How often hashed flows collide is in :mod:`collectives.fabric.ecmp`.
Taught in chapter "Designing the fabric".
"""

import math

import numpy as np

from ..errors import CollectivesError, TopologyError
from ..topology import Topology, TopologyInfo
from ..validation import int_array, integer, number

__all__ = ["FabricTopology", "fat_tree", "clos", "ECMP_MODES", "bisection_bandwidth",
           "link_loads"]

ECMP_MODES = ("hash", "spread")
_RATIO_TOLERANCE = 0.01            # relative: 1.33 is taken as 4:3, 2.0 is not 1.95

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_SALT_DST = np.uint64(0xD6E8FEB86659FD93)
_SALT_FLOW = np.uint64(0xA0761D6478BD642F)


def _mix64(x):
    """splitmix64's finaliser on a uint64 array: a bijective multiply-xorshift mix."""
    x = x ^ (x >> np.uint64(30))
    x = x * _MUL1
    x = x ^ (x >> np.uint64(27))
    x = x * _MUL2
    return x ^ (x >> np.uint64(31))


def _as_u64(v):
    # two's-complement view, so negative flow ids or seeds hash too
    return np.asarray(v, dtype=np.int64).astype(np.uint64)


class FabricTopology(Topology):
    """A :class:`~collectives.topology.Topology` built by :func:`clos` or :func:`fat_tree`.

    Beyond the Topology contract it records the fabric's shape: ``radix``, ``tiers``,
    ``hosts_per_leaf`` (a), ``leaf_uplinks`` (b), ``oversubscription`` (a/b, realised),
    ``n_leaves``, ``switches_per_tier`` (tier 1 first), ``ecmp`` ("hash" or "spread") and
    ``hash_seed``; per node ``node_tier`` (0 for hosts, 1..tiers for switches); per link
    ``link_level`` (1 = host cable, t = between tiers t-1 and t) and ``link_up`` (True
    when it points away from the hosts). ``paths`` and ``route`` also take ``flow_id``
    (default 0): the flow label ECMP hashes with ``(src, dst)``, e.g. one per queue pair.
    """

    def __init__(self, *args, fabric, **kwargs):
        super().__init__(*args, **kwargs)
        if set(fabric) != set(_FABRIC_FIELDS):
            raise TopologyError("FabricTopology needs exactly the fields "
                                + ", ".join(_FABRIC_FIELDS))
        for value in fabric.values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
        self._fabric = dict(fabric)       # read-only: the router was built from these

    def paths(self, src, dst, flow_id=None):
        """Links crossed by each (src, dst) pair: ``(pair, link)`` flat int arrays.

        ``flow_id``: None (every flow 0), an int, or one int per pair.
        """
        if flow_id is None:
            return super().paths(src, dst)
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        flow = _flow_ids(flow_id, len(src))
        if len(src) != len(dst):
            raise TopologyError(f"src has {len(src)} ranks but dst has {len(dst)}")
        bad = np.flatnonzero((src < 0) | (src >= self.n_ranks) | (dst < 0)
                             | (dst >= self.n_ranks) | (src == dst))
        if bad.size:
            super().paths(src[bad[:1]], dst[bad[:1]])     # raises the base class's message
        if len(src) == 0:
            return super().paths(src, dst)
        return self._router(src, dst, flow)

    def route(self, src, dst, flow_id=0):
        """The links from ``src`` to ``dst`` (flow ``flow_id``), in order, as link ids."""
        if src == dst:
            return []
        _, links = self.paths([src], [dst], flow_id=flow_id)
        return links.tolist()


_FABRIC_FIELDS = ("radix", "tiers", "hosts_per_leaf", "leaf_uplinks", "oversubscription",
                  "n_leaves", "switches_per_tier", "ecmp", "hash_seed", "node_tier",
                  "link_level", "link_up")
for _field in _FABRIC_FIELDS:
    setattr(FabricTopology, _field,
            property(lambda self, _f=_field: self._fabric[_f], doc=f"The fabric's {_field}."))
del _field


def _flow_ids(flow_id, n):
    flow = np.asarray(flow_id)
    if flow.dtype == bool or not np.issubdtype(flow.dtype, np.integer):
        raise TopologyError(f"flow_id must be an integer or one integer per pair, got {flow_id!r}")
    if flow.ndim == 0:
        return np.full(n, int(flow), dtype=np.int64)
    flow = flow.ravel().astype(np.int64)
    if len(flow) != n:
        raise TopologyError(f"flow_id has {len(flow)} entries for {n} pairs")
    return flow


class _ClosRouter:
    """Vectorised up/down routing with per-tier ECMP on the Clos built by :func:`_build`."""

    def __init__(self, a, b, h, tiers, ecmp, hash_seed, width, up_base, down_base):
        self.a, self.b, self.h, self.tiers = a, b, h, tiers
        self.ecmp, self.hash_seed = ecmp, hash_seed
        self.width, self.up_base, self.down_base = width, up_base, down_base
        self.fan = [None, b] + [h] * max(tiers - 1, 0)           # up-ports per switch, by tier

    def _choices(self, src, dst, flow):
        """Up-port taken at tiers 1..tiers-1: (pairs, tiers-1) int64."""
        n, levels = len(src), self.tiers - 1
        out = np.zeros((n, levels), dtype=np.int64)
        if levels == 0:
            return out
        if self.ecmp == "spread":
            leaf = dst // self.a
            digit = (dst % self.a) % self.b + flow
            out[:, 0] = digit % self.b
            for t in range(2, self.tiers):
                out[:, t - 1] = ((leaf // self.h ** (t - 2)) % self.h + flow) % self.h
            return out
        seed_salt = np.uint64((self.hash_seed + 1) * int(_GOLDEN) % 2 ** 64)
        key = _mix64(_as_u64(src) + seed_salt)
        key = _mix64(key ^ (_as_u64(dst) * _SALT_DST))
        key = _mix64(key ^ (_as_u64(flow) * _SALT_FLOW))
        for t in range(1, self.tiers):
            per_tier = _mix64(key + np.uint64(t * int(_GOLDEN) % 2 ** 64))
            out[:, t - 1] = (per_tier % np.uint64(self.fan[t])).astype(np.int64)
        return out

    def __call__(self, src, dst, flow=None):
        n = len(src)
        if flow is None:
            flow = np.zeros(n, dtype=np.int64)
        tiers, h = self.tiers, self.h
        leaf_s, leaf_d = src // self.a, dst // self.a
        # lowest common ancestor tier: 1 + the number of tiers below the top where they differ
        top = np.ones(n, dtype=np.int64)
        for t in range(1, tiers):
            top += (leaf_s // h ** (t - 1)) != (leaf_d // h ** (t - 1))
        choice = self._choices(src, dst, flow)
        # columns: up links of levels 1..tiers, then down links of levels tiers..1
        table = np.full((n, 2 * tiers), -1, dtype=np.int64)
        table[:, 0] = self.up_base[1] + src
        table[:, 2 * tiers - 1] = self.down_base[1] + dst
        position = np.zeros(n, dtype=np.int64)      # position of the tier-(t-1) switch
        for t in range(2, tiers + 1):
            p = choice[:, t - 2]
            fan, width = self.fan[t - 1], self.width[t - 1]
            s_up = (leaf_s // h ** (t - 2)) * width + position
            s_down = (leaf_d // h ** (t - 2)) * width + position
            table[:, t - 1] = self.up_base[t] + s_up * fan + p
            table[:, 2 * tiers - t] = self.down_base[t] + s_down * fan + p
            position = position * fan + p
        level = np.concatenate([np.arange(1, tiers + 1), np.arange(tiers, 0, -1)])
        used = level[None, :] <= top[:, None]
        link = table[used]
        pair = np.repeat(np.arange(n), 2 * top)
        return pair, link


def _realise_ratio(radix, oversubscription, tiers):
    """(host ports a, uplinks b) of a leaf for the requested downlink:uplink ratio."""
    if isinstance(oversubscription, bool) or not isinstance(
            oversubscription, (int, float, np.integer, np.floating)):
        raise TopologyError(f"oversubscription must be a number (downlink:uplink capacity at "
                            f"the leaf tier, e.g. 3 for 3:1), got {oversubscription!r}")
    d = float(oversubscription)
    if not math.isfinite(d) or d < 1:
        raise TopologyError(f"oversubscription must be >= 1 (downlink:uplink capacity at the "
                            f"leaf tier; 1 = non-blocking), got {oversubscription!r}")
    h = radix // 2
    if d == 1:
        return h, h
    if tiers == 1:
        raise TopologyError(f"oversubscription {oversubscription!r} needs at least 2 tiers: "
                            f"a 1-tier Clos is a single switch with no uplinks")
    if d > radix - 1:
        raise TopologyError(
            f"oversubscription {oversubscription!r} cannot be realised on radix {radix}: a "
            f"leaf needs at least one uplink, so the most is {radix - 1}:1")
    b = min(max(round(radix / (d + 1)), 1), h)
    candidates = {u for u in (b - 1, b, b + 1) if 1 <= u <= h}
    best = min(candidates, key=lambda u: abs((radix - u) / u - d))
    if abs((radix - best) / best - d) <= _RATIO_TOLERANCE * d:
        return radix - best, best
    lo = int(radix // (d + 1))                     # more uplinks than asked: ratio below d
    options = [f"{radix - u} host ports : {u} uplinks ({(radix - u) / u:.4g}:1)"
               for u in (lo + 1, lo) if 1 <= u <= h]
    raise TopologyError(
        f"oversubscription {oversubscription!r} cannot be realised on radix {radix}: a "
        f"leaf splits its {radix} ports into whole host ports and uplinks; nearest: "
        + " or ".join(options))


def _link_params(link_bandwidth, hop_latency):
    """Every link's bandwidth (bytes/s per direction) and latency (seconds), checked."""
    return (number(link_bandwidth, "link_bandwidth", positive=True,
                   unit="bytes/s per direction", error=TopologyError),
            number(hop_latency, "hop_latency", unit="seconds", error=TopologyError))


def _check_ecmp(ecmp, hash_seed):
    if ecmp not in ECMP_MODES:
        raise TopologyError(f"ecmp must be one of {', '.join(map(repr, ECMP_MODES))}, "
                            f"got {ecmp!r}")
    if isinstance(hash_seed, (bool, np.bool_)) or not isinstance(hash_seed, (int, np.integer)):
        raise TopologyError(f"hash_seed must be an integer, got {hash_seed!r}")
    return ecmp, int(hash_seed)


def _build(radix, tiers, a, b, bandwidth, latency, ecmp, hash_seed, name, kind):
    h = radix // 2
    if tiers == 1:                      # one switch, all ports down: leaf and top at once
        a, b = radix, 0
    n_leaves = 2 * h ** (tiers - 1) if tiers > 1 else 1
    hosts = a * n_leaves
    # switches per tier: blocks x width (positions per block); tier 1 = leaves
    blocks = [None] + [2 * h ** (tiers - t) for t in range(1, tiers)] + [1]
    width = [None, 1] + [b * h ** (t - 2) for t in range(2, tiers + 1)]
    if tiers == 1:
        blocks, width = [None, 1], [None, 1]
    n_sw = [None] + [blocks[t] * width[t] for t in range(1, tiers + 1)]
    sw_base = [None] + list(hosts + np.cumsum([0] + n_sw[1:-1]))
    fan = [None, b] + [h] * max(tiers - 1, 0)

    srcs, dsts, levels, ups = [], [], [], []
    up_base, down_base = [None] * (tiers + 1), [None] * (tiers + 1)
    n_links = 0

    def add(level, child, parent):
        nonlocal n_links
        m = len(child)
        up_base[level], down_base[level] = n_links, n_links + m
        srcs.extend([child, parent])
        dsts.extend([parent, child])
        levels.append(np.full(2 * m, level, dtype=np.int64))
        ups.append(np.repeat([True, False], m))
        n_links += 2 * m

    host = np.arange(hosts, dtype=np.int64)
    add(1, host, sw_base[1] + host // a)
    for t in range(2, tiers + 1):
        s = np.repeat(np.arange(n_sw[t - 1], dtype=np.int64), fan[t - 1])
        p = np.tile(np.arange(fan[t - 1], dtype=np.int64), n_sw[t - 1])
        block, position = s // width[t - 1], s % width[t - 1]
        parent_block = block // h if t < tiers else np.zeros_like(block)
        parent = sw_base[t] + parent_block * width[t] + position * fan[t - 1] + p
        add(t, sw_base[t - 1] + s, parent)

    node_tier = np.concatenate([np.zeros(hosts, dtype=np.int64)]
                               + [np.full(n_sw[t], t, dtype=np.int64) for t in range(1, tiers + 1)])
    router = _ClosRouter(a, b, h, tiers, ecmp, hash_seed, width, up_base, down_base)
    fabric = dict(radix=radix, tiers=tiers, hosts_per_leaf=a, leaf_uplinks=b,
                  oversubscription=a / b if b else 1.0, n_leaves=n_leaves,
                  switches_per_tier=tuple(int(n) for n in n_sw[1:]), ecmp=ecmp,
                  hash_seed=hash_seed, node_tier=node_tier,
                  link_level=np.concatenate(levels), link_up=np.concatenate(ups))
    # Level names indexed by the tier numbers above (level 0 has no links), so that a
    # Timing's per-level seconds and bottleneck name the fabric's tiers.
    levels_named = ("none", "host") + tuple(f"tier {t}" for t in range(2, tiers + 1))
    info = TopologyInfo(family=kind, levels=levels_named)
    return FabricTopology(hosts, np.concatenate(srcs), np.concatenate(dsts), bandwidth, latency,
                          router, n_switches=int(sum(n_sw[1:])), name=name, info=info,
                          link_level=fabric["link_level"], fabric=fabric)


def clos(radix, tiers, link_bandwidth, oversubscription=1.0, hop_latency=0.0, *,
         ecmp="hash", hash_seed=0):
    """A folded Clos of ``radix``-port switches in ``tiers`` tiers, hosts as endpoints.

    Non-blocking (``oversubscription=1``) it holds ``2 (radix/2)^tiers`` hosts. With
    ``oversubscription=d`` each leaf has ``radix d/(d+1)`` host ports and ``radix/(d+1)``
    uplinks (whole ports; see the module docstring), so cross-leaf traffic gets ``1/d`` of
    the host links' capacity. ``link_bandwidth``: bytes/s per link per direction, every
    link; ``hop_latency``: seconds per link. ``ecmp``: ``"hash"`` (per-flow hashing, with
    collisions) or ``"spread"`` (ideal d-mod-k spreading); ``hash_seed`` varies the hash
    like a switch's seed. ``tiers=1`` is a single switch of ``radix`` hosts.
    """
    radix = integer(radix, "radix", minimum=2, error=TopologyError)
    if radix % 2:
        raise TopologyError(f"radix must be even (a switch below the top tier has half its "
                            f"ports down and half up), got {radix}")
    tiers = integer(tiers, "tiers", minimum=1, error=TopologyError)
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    ecmp, hash_seed = _check_ecmp(ecmp, hash_seed)
    a, b = _realise_ratio(radix, oversubscription, tiers)
    ratio = "" if a == b else f", {a} hosts + {b} uplinks per leaf ({a / b:.4g}:1)"
    name = f"{tiers}-tier Clos, radix {radix}{ratio}, {2 * a * (radix // 2) ** (tiers - 1)} hosts"
    return _build(radix, tiers, a, b, bandwidth, latency, ecmp, hash_seed, name, "clos")


def fat_tree(k, link_bandwidth, hop_latency=0.0, *, ecmp="hash", hash_seed=0):
    """Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008): ``clos(k, 3)``, non-blocking.

    ``k`` pods of ``k/2`` edge and ``k/2`` aggregation switches, ``(k/2)^2`` core switches
    (``5k^2/4`` switches), ``k^3/4`` hosts (``k/2`` per edge switch, consecutive ranks),
    ``3k^3/2`` directed links. Core switch ``j*(k/2) + p`` links to aggregation switch ``j``
    of every pod. Options as :func:`clos`.
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TopologyError(f"k must be an integer (the switch radix), got {k!r}")
    if k < 2:
        raise TopologyError(f"k must be >= 2 (the switch radix), got {k}")
    if k % 2:
        raise TopologyError(f"k must be even (each switch has k/2 ports down and k/2 up), "
                            f"got {k}")
    k = int(k)
    bandwidth, latency = _link_params(link_bandwidth, hop_latency)
    ecmp, hash_seed = _check_ecmp(ecmp, hash_seed)
    h = k // 2
    return _build(k, 3, h, h, bandwidth, latency, ecmp, hash_seed,
                  f"fat tree k={k}, {k ** 3 // 4} hosts", "fat_tree")


def _check_fabric(topology, what):
    if not isinstance(topology, FabricTopology):
        raise TopologyError(f"{what} needs a fabric built by fat_tree or clos, got "
                            f"{getattr(topology, 'name', type(topology).__name__)!r}")


def bisection_bandwidth(topology):
    """Bytes/s (one direction) across the worst even cut of a fabric: ``N b / 2 / d``.

    ``N`` hosts on links of ``b`` bytes/s with leaf oversubscription ``d``. The cut splits
    the top-tier subtrees (pods) in halves, i.e. ranks ``[0, N/2)`` from ``[N/2, N)``.
    """
    _check_fabric(topology, "bisection_bandwidth")
    b = float(topology.link_bandwidth[0])
    return topology.n_ranks * b / 2 / topology.oversubscription


def link_loads(topology, src, dst, flow_bytes=1.0, flow_id=None):
    """Bytes each directed link carries when every flow ``src[i] -> dst[i]`` sends
    ``flow_bytes`` (one number, or one per flow); an array of ``topology.n_links``.

    Flows with ``src == dst`` stay local. ``flow_id`` (fabrics only): the ECMP flow
    label, an int or one per flow (e.g. ``np.arange(16)`` repeated for 16 queue pairs).
    Works on any Topology; the load of a link over its bandwidth is its drain time.
    """
    if not isinstance(topology, Topology):
        raise TopologyError(f"expected a collectives Topology, got {type(topology).__name__}")
    src = int_array(src, "src", error=TopologyError).ravel()
    dst = int_array(dst, "dst", error=TopologyError).ravel()
    if len(src) != len(dst):
        raise TopologyError(f"src has {len(src)} flows but dst has {len(dst)}")
    try:
        size = np.asarray(flow_bytes, dtype=float)
    except (TypeError, ValueError):
        raise CollectivesError(f"flow_bytes must be one number or one per flow, got "
                               f"{flow_bytes!r}") from None
    if size.ndim == 0:
        size = np.full(len(src), float(size))
    elif size.ravel().shape != (len(src),):
        raise CollectivesError(f"flow_bytes must be one number or one per flow ({len(src)}), "
                               f"got shape {size.shape}")
    size = size.ravel()
    if not np.all(np.isfinite(size)) or np.any(size < 0):
        raise CollectivesError("flow_bytes must be finite and >= 0")
    remote = np.flatnonzero(src != dst)
    if flow_id is None:
        pair, link = topology.paths(src[remote], dst[remote])
    else:
        _check_fabric(topology, "flow_id")
        flow = _flow_ids(flow_id, len(src))[remote]
        pair, link = topology.paths(src[remote], dst[remote], flow_id=flow)
    return np.bincount(link, weights=size[remote][pair], minlength=topology.n_links)
