"""The alpha-beta model fitted to a measured sweep: :func:`fit_alpha_beta`.

A sweep (:func:`collectives.dist.sweep`) measures how long a Schedule takes at each size on
real processes. :func:`fit_alpha_beta` finds the one per-step latency ``alpha`` (seconds)
and the one link bandwidth (bytes/s) for which :func:`collectives.time` of that Schedule on
a ring of its ranks (:func:`collectives.topology.ring`, both directions) comes closest to the
measured median times, in relative terms (least squares of ``model / measured - 1``, so a
4 KiB point counts as much as a 1 MiB one). The model is linear in ``alpha`` and in ``1 /
bandwidth``: ``cl.time`` of the Schedule is ``L alpha + c(S) / bandwidth`` on that ring,
with ``L`` the latency terms it counts and ``c(S)`` its bytes over the busiest link of each
step, both read from ``cl.time`` itself; so the fit is a linear least-squares problem.

What it is: a summary of a machine's measured behaviour in the two numbers the course's
cost model has, to draw the model beside the measurements and to see where they part.
What it is not: a measurement of a link. On gloo over loopback ``alpha`` is a scheduling
round of the processes and the "bandwidth" the CPU's memory copies and TCP stack
(chapter "From the model to real processes"); a fit over few sizes, or sizes of one
regime, says little beyond them. Negative values are not physical: a coefficient that
would come out negative is set to its bound (``alpha = 0``, or an unbounded bandwidth is
refused) and the other refitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cost import time as cost_time
from ..errors import CollectivesError
from ..schedule import schedule_arg
from ..topology import ring

__all__ = ["AlphaBetaFit", "fit_alpha_beta"]

#: the bandwidth (bytes/s) and latency (s) of the probe rings the fit reads ``cl.time`` on
_PROBE_BANDWIDTH, _PROBE_LATENCY = 1e9, 1e-6


@dataclass(frozen=True)
class AlphaBetaFit:
    """``alpha`` (seconds per step), ``bandwidth`` (bytes/s per direction of each link) of
    the fitted ring, the ``schedule`` and the measured ``sizes`` and ``seconds`` it was
    fitted to, and ``rms_relative_error`` of the fit at those sizes."""

    alpha: float
    bandwidth: float
    schedule: Any
    sizes: tuple
    seconds: tuple
    rms_relative_error: float

    @property
    def topology(self):
        """The fitted ring: :func:`collectives.topology.ring` of the schedule's ranks."""
        return ring(self.schedule.n_ranks, self.bandwidth, self.alpha)

    def predict(self, sizes) -> np.ndarray:
        """Seconds :func:`collectives.time` gives the schedule on :attr:`topology` at each of
        ``sizes`` (bytes)."""
        topo = self.topology
        return np.array([cost_time(self.schedule, topo, float(s)).seconds for s in sizes])


def _basis(schedule, size):
    """``(L, c)``: the latency terms and the bandwidth seconds x bytes/s of ``schedule`` at
    ``size`` on a ring, read from :func:`collectives.time` (the model is ``L alpha + c /
    bandwidth``)."""
    n = schedule.n_ranks
    plain = cost_time(schedule, ring(n, _PROBE_BANDWIDTH, 0.0), size).seconds
    with_latency = cost_time(schedule, ring(n, _PROBE_BANDWIDTH, _PROBE_LATENCY), size).seconds
    return (with_latency - plain) / _PROBE_LATENCY, plain * _PROBE_BANDWIDTH


def fit_alpha_beta(result, schedule, impl=None) -> AlphaBetaFit:
    """Fit ``alpha`` and the link bandwidth of a ring to the median times of ``impl`` (the
    Schedule's name by default) in ``result`` (a :class:`~collectives.dist.SweepResult`),
    ``schedule`` being the Schedule measured (module text). Needs at least two sizes.
    Raises :class:`~collectives.CollectivesError` if the rows are missing or no positive
    bandwidth fits them."""
    schedule = schedule_arg(schedule)
    rows = getattr(result, "rows", None)
    if not rows:
        raise CollectivesError(f"fit_alpha_beta needs a SweepResult with rows, got {result!r:.80}")
    impl = schedule.name if impl is None else impl
    mine = sorted((r for r in rows if r.impl == impl), key=lambda r: r.size)
    if len({r.size for r in mine}) < 2:
        impls = sorted({r.impl for r in rows})
        raise CollectivesError(
            f"fit_alpha_beta needs rows of {impl!r} at two sizes or more; the sweep has "
            f"{len(mine)} (its implementations: {impls})"
        )
    sizes = np.array([r.size for r in mine], dtype=float)
    seconds = np.array([r.time_us for r in mine], dtype=float) * 1e-6
    if not np.all(seconds > 0):
        raise CollectivesError("fit_alpha_beta needs positive measured times")
    basis = np.array([_basis(schedule, s) for s in sizes])  # columns: L, c
    a = basis / seconds[:, None]  # relative residuals: a @ (alpha, 1/B) - 1
    coef, *_ = np.linalg.lstsq(a, np.ones(len(sizes)), rcond=None)
    if coef[0] < 0:  # no latency: fit 1/B alone
        coef = np.array([0.0, float(a[:, 1] @ np.ones(len(sizes)) / (a[:, 1] @ a[:, 1]))])
    if coef[1] <= 0:
        raise CollectivesError(
            f"no positive bandwidth fits {impl!r}: its times do not grow with the size "
            f"({dict(zip(sizes.astype(int).tolist(), (seconds * 1e6).round(1).tolist()))} us)"
        )
    alpha, bandwidth = float(coef[0]), float(1.0 / coef[1])
    error = float(np.sqrt(np.mean((a @ coef - 1.0) ** 2)))
    return AlphaBetaFit(
        alpha, bandwidth, schedule, tuple(sizes.tolist()), tuple(seconds.tolist()), error
    )
