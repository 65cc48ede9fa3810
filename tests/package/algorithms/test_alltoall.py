"""collectives/algorithms/alltoall.py: the farthest-first chain all-to-all reaches the chain's
cut bound (issue 11).

The chain relay (every part moves at every step) costs what the one-way ring costs; that is
a property of the relay, not of chains. Sending the farthest part first, one part per link
direction per step, keeps the middle link busy at every step: floor(n^2/4) steps of S/n,
n S/(4B) for even n, which no chain schedule can beat.
"""

import numpy as np
import pytest

import collectives as cl
from collectives import analytic
from collectives import topology as tp
from collectives.algorithms import chain_farthest_first_all_to_all as build

from ground_truth import expected_outputs

B = 45e9  # bytes/s per direction
H = 1e-6  # seconds per hop
NS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 33]


def remote_hops(s):
    a = s.transfer_arrays()
    remote = a["src"] != a["dst"]
    return a["step"][remote], a["src"][remote], a["dst"][remote]


@pytest.mark.parametrize("n", NS)
def test_verifies_and_moves_the_right_data(n):
    s = build(n)
    cl.verify(s)
    assert s.n_steps == n * n // 4
    x = np.arange(n * n * 3, dtype=np.int64).reshape(n, n * 3) * 7 + 1
    assert np.array_equal(cl.simulate(s, x), expected_outputs("all_to_all", x))
    from collectives import dist

    assert np.array_equal(dist.run_local(s, x), cl.simulate(s, x))


@pytest.mark.parametrize("n", NS)
def test_one_part_per_link_direction_per_step_and_only_neighbours(n):
    step, src, dst = remote_hops(build(n))
    assert np.all(np.abs(src - dst) == 1)  # chain links only
    keys = np.stack([step, src, dst], axis=1)
    assert len(np.unique(keys, axis=0)) == len(keys)  # at most one part each
    # every part crosses each link between its source and destination once
    assert len(step) == 2 * sum((j - i) for i in range(n) for j in range(i + 1, n))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 16, 33])
def test_busiest_cut_carries_a_quarter_of_n_squared_parts_each_way(n):
    step, src, dst = remote_hops(build(n))
    k = n // 2  # cut between ranks k-1 and k
    per_link = {
        (a, b): int(np.sum((src == a) & (dst == b)))
        for a in range(n)
        for b in (a - 1, a + 1)
        if 0 <= b < n
    }
    assert per_link[(k - 1, k)] == per_link[(k, k - 1)] == n * n // 4
    assert max(per_link.values()) == n * n // 4
    if n % 2 == 0:
        assert per_link[(k - 1, k)] * 4 == n * n
    # the middle link is busy at every step: the schedule cannot be shorter
    middle = np.unique(step[(src == k - 1) & (dst == k)])
    assert np.array_equal(middle, np.arange(n * n // 4))


@pytest.mark.parametrize("nbytes", [0.0, 1e3, 2**20, 1e9])
@pytest.mark.parametrize("n", NS)
def test_time_equals_the_closed_form(n, nbytes):
    got = cl.time(build(n), tp.chain(n, B, H), nbytes).seconds
    want = analytic.chain_farthest_first_all_to_all(n, nbytes, alpha=H, bandwidth=B)
    assert want == pytest.approx((n * n // 4) * (H + nbytes / (n * B)), rel=1e-12)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("n", [2, 4, 6, 8, 16, 32])
def test_reaches_the_cut_bound_and_beats_the_relay(n):
    S = 2**24
    chain = tp.chain(n, B, 0.0)
    t = cl.time(build(n), chain, S)
    assert t.seconds == pytest.approx(n * S / (4 * B), rel=1e-12)  # nS/(4B)
    middle = chain.route(n // 2 - 1, n // 2)[0]
    assert t.link_bytes[middle] == pytest.approx(n * n / 4 * S / n, rel=1e-12)
    relay = cl.time(cl.algorithms.chain_all_to_all(n), chain, S).seconds
    assert relay == pytest.approx((n - 1) * S / (2 * B), rel=1e-9)  # one-way ring's
    if n > 2:
        assert t.seconds < relay


def test_closed_form_checks_its_arguments():
    with pytest.raises(cl.CollectivesError):
        analytic.chain_farthest_first_all_to_all(0, 1.0, alpha=0.0, bandwidth=B)
    with pytest.raises(TypeError):
        analytic.chain_farthest_first_all_to_all(4, 1.0, 0.0, B)


@pytest.mark.parametrize("n", [2, 3, 5, 6, 7, 8, 12])
def test_pairwise_exchange_takes_n_minus_1_exchange_steps_for_any_n(n):
    # MPICH's pairwise exchange (Thakur et al. 2005): r sends to r + s and receives from
    # r - s for s = 1 .. n-1 (partner r XOR s when n is a power of two); an earlier version
    # took n steps when n was not a power of two
    s = cl.algorithms.pairwise_all_to_all(n)
    exchanges = [step for step in s.to_lists() if any(t[0] != t[1] for t in step)]
    assert len(exchanges) == n - 1
    assert all(len(step) == n for step in exchanges)  # one message per rank per step
    hop, bandwidth, S = 1e-6, 1e9, 6e6
    t = cl.time(s, tp.switch(n, bandwidth, hop), S).seconds
    assert t == pytest.approx((n - 1) * (2 * hop + S / (n * bandwidth)), rel=1e-12)
