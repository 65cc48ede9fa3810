"""ECMP collisions as balls into bins: flows hashed uniformly onto equal-cost paths.

When a switch hashes each flow onto one of ``paths`` equal-cost links, ``flows`` flows are
balls thrown independently and uniformly into bins. Here: the probability that no two share
a path (:func:`ecmp_no_collision_probability`) or that some do
(:func:`ecmp_collision_probability`); the distribution of the busiest path's flow count
(:func:`max_load_distribution`, computed exactly to float precision) and its mean
(:func:`expected_max_load_exact`, or sampled: :func:`expected_max_load`);
:func:`load_imbalance`, the max/mean of measured link loads; :func:`ecmp_efficiency`, the
share of the even spread a synchronous step keeps (the mean link load over the expected
busiest: with 16 connections on 18 uplinks, one per uplink at link speed scores 16/18,
not 100 %), and :func:`qps_for_efficiency`, the queue pairs per connection that reach a
target.

**Many racks, one step.** A synchronous collective that spans several racks waits for the
busiest uplink of *all* of them, not of a typical one. Every function that takes ``groups``
computes that statistic: ``groups`` independent ECMP groups (one per rack, each hashing its
own ``flows`` onto its own ``paths`` uplinks), and the busiest link among all of them. The
groups are independent, so ``P(busiest of all <= k) = P(busiest of one <= k) ** groups``
exactly; the expected maximum grows with the racks a job spans (an extreme value), which is
why a ring over 192 racks runs far slower than one rack's mean busiest link suggests.
:func:`max_load_estimate` gives the two approximations the chapter derives beside the
exact value: the Poisson (extreme-value) estimate ``sum_k 1 - exp(-N P(X >= k))`` over the
``N = groups * paths`` links, each carrying ``X ~ Binomial(flows, 1/paths)``, and the
heavy-load closed form ``m/n + sqrt(2 (m/n) ln N)``: the leading term of Raab and Steger's
bound ("Balls into bins: a simple and tight analysis", RANDOM 1998), which holds with high
probability, up to a factor (1 + o(1)), for one group of many more balls than bins; read
here as an estimate of the expectation, which that paper does not give.

Left out: flows of different sizes, hashes that are not uniform or not independent
(polarisation), and adaptive routing (the ``"adaptive"`` routing of
:func:`collectives.topology.gpu_cluster` models its ideal instead). Taught in chapter
"Designing the fabric".
"""

import math

import numpy as np

from ..errors import CollectivesError

__all__ = [
    "ecmp_no_collision_probability",
    "ecmp_collision_probability",
    "expected_max_load",
    "max_load_distribution",
    "expected_max_load_exact",
    "max_load_estimate",
    "ESTIMATES",
    "load_imbalance",
    "ecmp_efficiency",
    "qps_for_efficiency",
]

#: the approximations :func:`max_load_estimate` offers
ESTIMATES = ("poisson", "gaussian")


def _whole(what, v, low):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
        raise CollectivesError(f"{what} must be an integer >= {low}, got {v!r}")
    return int(v)


def _flows_paths(flows, paths):
    return _whole("flows", flows, 0), _whole("paths", paths, 1)


def ecmp_no_collision_probability(flows, paths):
    """P(no two of ``flows`` share a path) when each hashes uniformly onto one of ``paths``:
    ``n! / ((n-m)! n^m)`` for m flows on n paths (4 on 4: 24/256 = 9.375 %)."""
    m, n = _flows_paths(flows, paths)
    if m > n:
        return 0.0
    return math.perm(n, m) / n**m


def ecmp_collision_probability(flows, paths):
    """P(at least two of ``flows`` hash onto the same one of ``paths``):
    ``1 - n! / ((n-m)! n^m)`` (4 flows on 4 paths: 90.625 %)."""
    m, n = _flows_paths(flows, paths)
    if m > n:
        return 1.0
    return (n**m - math.perm(n, m)) / n**m


def expected_max_load(flows, paths, trials=100_000, seed=0, *, groups=1):
    """Monte Carlo estimate of E[flows on the busiest path] when ``flows`` hash uniformly and
    independently onto ``paths``, from ``trials`` seeded draws (numpy's default_rng); with
    ``groups`` > 1, the busiest path of that many independent groups (module docstring).
    For flows = paths it is about 1.5 (2), 2.125 (4), 2.597 (8), 3.078 (16); the standard
    error is ``std / sqrt(trials)``. :func:`expected_max_load_exact` computes it instead."""
    m, n = _flows_paths(flows, paths)
    g = _whole("groups", groups, 1)
    if (
        isinstance(trials, (bool, np.bool_))
        or not isinstance(trials, (int, np.integer))
        or trials < 1
    ):
        raise CollectivesError(f"trials must be an integer >= 1, got {trials!r}")
    if m == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    bins_per_trial = g * n  # every group's own paths
    batch = max(1, 2_000_000 // max(g * m, bins_per_trial))
    offset = n * np.repeat(np.arange(g), m)  # ball i belongs to group i // m
    total, done = 0.0, 0
    while done < trials:
        t = min(batch, trials - done)
        bins = rng.integers(0, n, size=(t, g * m)) + offset + bins_per_trial * np.arange(t)[:, None]
        total += (
            np.bincount(bins.ravel(), minlength=t * bins_per_trial)
            .reshape(t, bins_per_trial)
            .max(axis=1)
            .sum()
        )
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
    p[0] = 1.0  # p[s]: P(first bins hold s balls, none above c)
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
        log_pmf = (
            logfact[rr]
            - logfact[jj]
            - logfact[rr - jj]
            + jj * math.log(1 / k)
            + (rr - jj) * math.log1p(-1 / k)
        )
        weight = (p[live][:, None] * np.exp(log_pmf))[ok]
        p = np.bincount((s + j)[ok], weights=weight, minlength=m + 1)
    return float(p[m - c :].sum())  # the last bin takes the rest: <= c


def _busiest_cdf(m, n):
    """P(the busiest of n bins holds <= k of m balls), k = 0..m (one group)."""
    cdf = np.ones(m + 1)
    if m == 0 or n == 1:
        cdf[:m] = 0.0
        return cdf
    logfact = _log_factorials(m)
    cdf[: -(-m // n)] = 0.0  # below ceil(m/n) it is impossible
    for c in range(-(-m // n), m):
        cdf[c] = _prob_all_at_most(m, n, c, logfact)
        if 1.0 - cdf[c] < 1e-16:
            cdf[c:] = 1.0
            break
    return cdf


def max_load_distribution(flows, paths, groups=1):
    """P(the busiest of ``paths`` carries exactly k of ``flows``), k = 0..flows, for uniform
    independent hashing; with ``groups`` > 1, P(the busiest path of ``groups`` independent
    groups, each hashing its own ``flows`` onto its own ``paths``, carries exactly k):
    the one-group distribution function raised to the power ``groups``. Computed (not
    sampled) to float precision."""
    m, n = _flows_paths(flows, paths)
    g = _whole("groups", groups, 1)
    cdf = _busiest_cdf(m, n) ** g
    out = np.empty(m + 1)
    out[0] = cdf[0]
    out[1:] = np.diff(cdf)
    return np.clip(out, 0.0, 1.0)


def expected_max_load_exact(flows, paths, groups=1):
    """E[flows on the busiest path] from :func:`max_load_distribution` (not sampled); with
    ``groups``, the busiest path of that many independent groups."""
    dist = max_load_distribution(flows, paths, groups)
    return float(np.arange(len(dist)) @ dist)


def _binomial_tail(m, p):
    """P(X >= k), k = 0..m, for X ~ Binomial(m, p): one link's flow count."""
    k = np.arange(m + 1)
    logfact = _log_factorials(m)
    pmf = (
        np.exp(
            logfact[m] - logfact[k] - logfact[m - k] + k * math.log(p) + (m - k) * math.log1p(-p)
        )
        if p < 1
        else (k == m).astype(float)
    )
    return np.cumsum(pmf[::-1])[::-1]


def max_load_estimate(flows, paths, groups=1, method="poisson"):
    """An approximation of :func:`expected_max_load_exact` (module docstring), for the
    ``N = groups * paths`` links of ``groups`` groups, one link carrying
    ``X ~ Binomial(flows, 1/paths)``.

    ``method="poisson"``: the extreme-value estimate. The number of links carrying at
    least k flows has mean ``N P(X >= k)``; taken as Poisson (links nearly independent),
    ``P(max < k) = exp(-N P(X >= k))`` and ``E[max] = sum_k 1 - exp(-N P(X >= k))``. It
    ignores that one group's loads add up to ``flows`` exactly: within a few percent for one
    group, closer for many. ``method="gaussian"``: the heavy-load closed form
    ``m/n + sqrt(2 (m/n) ln N)`` (the leading term of Raab and Steger's high-probability
    bound, 1998), which needs ``m/n`` well above ``ln N`` and can be far off below that, in
    either direction: for 16 flows on 18 links it is 3.16 for one group against an exact
    2.93 (too high), 4.69 for 192 groups against 5.43 (too low)."""
    m, n = _flows_paths(flows, paths)
    g = _whole("groups", groups, 1)
    if method not in ESTIMATES:
        raise CollectivesError(
            f"method must be one of {', '.join(map(repr, ESTIMATES))}, got {method!r}"
        )
    if m == 0:
        return 0.0
    big_n = g * n
    if method == "gaussian":
        mean = m / n
        return mean + math.sqrt(2 * mean * math.log(big_n)) if big_n > 1 else float(m)
    tail = _binomial_tail(m, 1.0 / n)[1:]  # P(X >= k), k = 1..m
    return float(np.sum(-np.expm1(-big_n * tail)))


def load_imbalance(loads, where=None):
    """``max / mean`` of ``loads`` over the links selected by ``where`` (mask or indices;
    default all). 1 means perfectly even; a synchronous collective runs at about
    ``1 / imbalance`` of the bandwidth that even spreading would give."""
    loads = np.asarray(loads, dtype=float)
    chosen = loads if where is None else loads[where]
    if chosen.size == 0 or chosen.mean() <= 0:
        raise CollectivesError("load_imbalance needs at least one link with load")
    return float(chosen.max() / chosen.mean())


def ecmp_efficiency(flows, paths, groups=1):
    """Expected share of the even spread a synchronous step keeps when ``flows`` equal flows
    hash onto ``paths`` links in each of ``groups`` racks (the step waits for the busiest
    link of all of them): ``(flows / paths) / E[busiest]`` (exact)."""
    m, n = _flows_paths(flows, paths)
    if m == 0:
        raise CollectivesError("ecmp_efficiency needs at least one flow")
    return (m / n) / expected_max_load_exact(m, n, groups)


def qps_for_efficiency(connections, paths, target, max_qps=64, *, groups=1):
    """The fewest queue pairs per connection (1..``max_qps``) for which ``connections``
    connections per rack, each split into that many equal flows hashed independently
    (enhanced ECMP), keep an expected :func:`ecmp_efficiency` of at least ``target`` in a
    step that spans ``groups`` racks; None if none does."""
    c, n = _flows_paths(connections, paths)
    g = _whole("groups", groups, 1)
    if isinstance(target, bool) or not (isinstance(target, (int, float)) and 0 < target <= 1):
        raise CollectivesError(
            f"target must be a share of the even spread in (0, 1], got {target!r}"
        )
    for q in range(1, int(max_qps) + 1):
        if ecmp_efficiency(c * q, n, g) >= target:
            return q
    return None
