"""The compact Traffic of a Schedule (collectives.traffic): it equals the traffic of the
listed transfers, survives pipelining, costs the same, and lets a 32k-rank ring be costed
without listing its transfers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import topology as tp
from collectives.algorithms import CATALOG, supports
from collectives.traffic import Traffic
from collectives.transforms import pipelined


def listed_traffic(schedule):
    """The traffic derived from the schedule's listed transfers (the slow, explicit way)."""
    return Traffic.from_transfers(
        schedule.step_of_transfer, schedule.src, schedule.dst, schedule.n_steps
    ).per_step()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(CATALOG)), st.integers(1, 12), st.integers(1, 6))
def test_compact_traffic_equals_the_listed_traffic(name, n, k):
    if not supports(name, n):
        return
    s = CATALOG[name].build(n)
    assert s.traffic.per_step() == listed_traffic(s)
    p = pipelined(s, k)
    assert p.traffic.per_step() == listed_traffic(p)
    assert p.n_transfers == s.n_transfers * k


def test_pipelining_a_schedule_whose_window_straddles_runs():
    # torus all-reduce on 3x4: runs of 3, 4 and 3 steps; with 4 segments every window of
    # steps 3..9 straddles a run boundary (a case an earlier version got wrong)
    s = cl.algorithms.torus_all_reduce((3, 4))
    p = pipelined(s, 4)
    assert p.traffic.per_step() == listed_traffic(p)
    assert p.n_transfers == 4 * s.n_transfers


# the 64-ring's time by hand (the ring all-reduce's closed form, 2 (n-1) (alpha + S/(n B))):
# 126 x (1e-6 + 3e6 / (64 x 45e9)) = 2.5725e-4 s; the tori are held to their listings
@pytest.mark.parametrize(
    "build, topology, expected",
    [
        (
            lambda: cl.algorithms.ring_all_reduce(64),
            lambda: tp.ring(64, 45e9, 1e-6),
            126 * (1e-6 + 3e6 / (64 * 45e9)),
        ),
        (
            lambda: cl.algorithms.torus_all_reduce((4, 4, 4), axes=(2, 0)),
            lambda: tp.torus((4, 4, 4), 45e9, 1e-6),
            None,
        ),
        (
            lambda: cl.algorithms.torus_all_to_all((4, 6)),
            lambda: tp.torus((4, 6), 45e9, 1e-6),
            None,
        ),
    ],
)
def test_costing_from_traffic_equals_costing_the_listed_transfers(build, topology, expected):
    s, topo = build(), topology()
    assert not s.is_listed  # built from its compact traffic, nothing listed
    a = cl.time(s, topo, 3e6)  # costed from the traffic alone
    assert not s.is_listed
    explicit = cl.Schedule.from_arrays(
        s.collective,
        s.n_ranks,
        s.n_chunks,
        s.step_of_transfer,
        s.src,
        s.dst,
        s.src_chunk,
        s.dst_chunk,
        s.reduce,
        n_steps=s.n_steps,
        n_scratch=s.n_scratch,
        groups=None if s.n_groups == 1 else s.groups,
    )
    assert s.is_listed and explicit.is_listed
    b = cl.time(explicit, topo, 3e6)
    assert a.seconds == pytest.approx(b.seconds, rel=1e-12)
    np.testing.assert_allclose(a.link_bytes, b.link_bytes, rtol=1e-12)
    if expected is not None:
        assert a.seconds == pytest.approx(expected, rel=1e-12)


def test_a_32k_ring_is_costed_without_listing_its_transfers():
    n = 32768
    s = cl.algorithms.ring_all_reduce(n)
    t = cl.time(s, tp.ring(n, 45e9, 1e-6), 2**30)
    # closed form: 2(n-1)(alpha + S/(n B))
    assert t.seconds == pytest.approx(
        cl.analytic.ring_all_reduce(n, 2**30, alpha=1e-6, bandwidth=45e9), rel=1e-9
    )
    assert s.n_transfers == 2 * (n - 1) * n and not s.is_listed
    with pytest.raises(cl.CollectivesError, match="more than the 50,000,000 a Schedule lists"):
        cl.verify(s)
