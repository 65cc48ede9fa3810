"""ECMP collisions as balls into bins: flows hashed uniformly onto equal-cost paths.

When a switch hashes each flow onto one of ``paths`` equal-cost links, ``flows`` flows are
balls thrown independently and uniformly into bins. Here: the probability that no two share
a path (:func:`ecmp_no_collision_probability`) or that some do
(:func:`ecmp_collision_probability`); the distribution of the busiest path's flow count
(:func:`max_load_distribution`, computed exactly to float precision) and its mean
(:func:`expected_max_load_exact`, or sampled: :func:`expected_max_load`);
:func:`load_imbalance`, the max/mean of measured link loads; :func:`ecmp_efficiency`, the
share of link speed a synchronous step keeps, and :func:`qps_for_efficiency`, the queue pairs
per connection that reach a target. Left out: flows of different
sizes, hashes that are not uniform or not independent (polarisation), and adaptive routing.
Taught in chapter "Designing the fabric".
"""

import math

import numpy as np

from ..errors import CollectivesError

__all__ = ["ecmp_no_collision_probability", "ecmp_collision_probability", "expected_max_load",
           "max_load_distribution", "expected_max_load_exact", "load_imbalance",
           "ecmp_efficiency", "qps_for_efficiency"]


def _flows_paths(flows, paths):
    for what, v, low in (("flows", flows, 0), ("paths", paths, 1)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
            raise CollectivesError(f"{what} must be an integer >= {low}, got {v!r}")
    return int(flows), int(paths)


def ecmp_no_collision_probability(flows, paths):
    """P(no two of ``flows`` share a path) when each hashes uniformly onto one of ``paths``:
    ``n! / ((n-m)! n^m)`` for m flows on n paths (4 on 4: 24/256 = 9.375 %)."""
    m, n = _flows_paths(flows, paths)
    if m > n:
        return 0.0
    return math.perm(n, m) / n ** m


def ecmp_collision_probability(flows, paths):
    """P(at least two of ``flows`` hash onto the same one of ``paths``):
    ``1 - n! / ((n-m)! n^m)`` (4 flows on 4 paths: 90.625 %)."""
    m, n = _flows_paths(flows, paths)
    if m > n:
        return 1.0
    return (n ** m - math.perm(n, m)) / n ** m


def expected_max_load(flows, paths, trials=100_000, seed=0):
    """Monte Carlo estimate of E[flows on the busiest path] when ``flows`` hash uniformly and
    independently onto ``paths``, from ``trials`` seeded draws (numpy's default_rng).
    For flows = paths it is about 1.5 (2), 2.125 (4), 2.597 (8), 3.078 (16); the standard
    error is ``std / sqrt(trials)``. :func:`expected_max_load_exact` computes it instead."""
    m, n = _flows_paths(flows, paths)
    if isinstance(trials, (bool, np.bool_)) or not isinstance(trials, (int, np.integer)) \
            or trials < 1:
        raise CollectivesError(f"trials must be an integer >= 1, got {trials!r}")
    if m == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    batch = max(1, 2_000_000 // max(m, n))
    total, done = 0.0, 0
    while done < trials:
        t = min(batch, trials - done)
        bins = rng.integers(0, n, size=(t, m)) + n * np.arange(t)[:, None]
        total += np.bincount(bins.ravel(), minlength=t * n).reshape(t, n).max(axis=1).sum()
        done += t
    return float(total / trials)


def _log_factorials(m):
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, m + 1)))])


def _prob_all_at_most(m, n, c, logfact):
    """P(no bin gets more than c) for m balls thrown uniformly into n bins.

    Bins are filled one by one: with r balls left and k bins left, the next bin takes
    Binomial(r, 1/k) of them. All terms are positive, so float error stays at rounding.
    """
    c = min(c, m)
    p = np.zeros(m + 1)
    p[0] = 1.0                      # p[s]: P(first bins hold s balls, none above c)
    j = np.arange(c + 1)[None, :]
    for k in range(n, 1, -1):
        # only totals the filled bins can hold, from which the k bins left can finish
        live = np.flatnonzero(p)
        live = live[(m - live) <= k * c]
        if live.size == 0:
            return 0.0
        s = live[:, None]
        r = m - s
        ok = r >= j
        rr, jj = np.where(ok, r, 0), np.where(ok, j, 0)
        log_pmf = (logfact[rr] - logfact[jj] - logfact[rr - jj]
                   + jj * math.log(1 / k) + (rr - jj) * math.log1p(-1 / k))
        weight = (p[live][:, None] * np.exp(log_pmf))[ok]
        p = np.bincount((s + j)[ok], weights=weight, minlength=m + 1)
    return float(p[m - c:].sum())                  # the last bin takes the rest: <= c


def max_load_distribution(flows, paths):
    """P(the busiest of ``paths`` carries exactly k of ``flows``), k = 0..flows, for uniform
    independent hashing; computed (not sampled) to float precision."""
    m, n = _flows_paths(flows, paths)
    out = np.zeros(m + 1)
    if m == 0:
        out[0] = 1.0
        return out
    if n == 1:
        out[m] = 1.0
        return out
    logfact = _log_factorials(m)
    cdf = np.ones(m + 1)
    cdf[:-(-m // n)] = 0.0                         # below ceil(m/n) it is impossible
    for c in range(-(-m // n), m):
        cdf[c] = _prob_all_at_most(m, n, c, logfact)
        if 1.0 - cdf[c] < 1e-16:
            cdf[c:] = 1.0
            break
    out[0] = cdf[0]
    out[1:] = np.diff(cdf)
    return np.clip(out, 0.0, 1.0)


def expected_max_load_exact(flows, paths):
    """E[flows on the busiest path] from :func:`max_load_distribution` (not sampled)."""
    dist = max_load_distribution(flows, paths)
    return float(np.arange(len(dist)) @ dist)


def load_imbalance(loads, where=None):
    """``max / mean`` of ``loads`` over the links selected by ``where`` (mask or indices;
    default all). 1 means perfectly even; a synchronous collective runs at about
    ``1 / imbalance`` of the bandwidth that even spreading would give."""
    loads = np.asarray(loads, dtype=float)
    chosen = loads if where is None else loads[where]
    if chosen.size == 0 or chosen.mean() <= 0:
        raise CollectivesError("load_imbalance needs at least one link with load")
    return float(chosen.max() / chosen.mean())


def ecmp_efficiency(flows, paths):
    """Expected share of link speed a synchronous step keeps when ``flows`` equal flows hash
    onto ``paths`` links: ``(flows / paths) / E[busiest]`` (exact)."""
    m, n = _flows_paths(flows, paths)
    if m == 0:
        raise CollectivesError("ecmp_efficiency needs at least one flow")
    return (m / n) / expected_max_load_exact(m, n)


def qps_for_efficiency(connections, paths, target, max_qps=64):
    """The fewest queue pairs per connection (1..``max_qps``) for which ``connections``
    connections, each split into that many equal flows hashed independently (enhanced
    ECMP), keep an expected :func:`ecmp_efficiency` of at least ``target``; None if none
    does."""
    c, n = _flows_paths(connections, paths)
    if not (isinstance(target, (int, float)) and 0 < target <= 1):
        raise CollectivesError(f"target must be a share of link speed in (0, 1], got {target!r}")
    for q in range(1, int(max_qps) + 1):
        if ecmp_efficiency(c * q, n) >= target:
            return q
    return None
