"""collectives/transforms.py: dual, pipelined, parallel, embed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.algorithms import CATALOG, supports
from collectives.transforms import dual, embed, parallel, pipelined

ALL_GATHERS = sorted(n for n, a in CATALOG.items() if a.collective == "all_gather")
REDUCE_SCATTERS = sorted(n for n, a in CATALOG.items() if a.collective == "reduce_scatter")


@pytest.mark.parametrize("name", ALL_GATHERS)
def test_dual_of_every_all_gather_is_a_reduce_scatter(name):
    for n in range(1, 65):
        if supports(name, n):
            rs = dual(CATALOG[name].build(n))
            assert rs.collective == "reduce_scatter"
            cl.verify(rs)


@pytest.mark.parametrize("name", REDUCE_SCATTERS)
def test_dual_of_every_reduce_scatter_is_an_all_gather(name):
    for n in (1, 2, 3, 4, 7, 8, 16, 30):
        if supports(name, n):
            ag = dual(CATALOG[name].build(n))
            assert ag.collective == "all_gather"
            cl.verify(ag)


def test_dual_is_an_involution_on_transfers():
    s = cl.algorithms.ring_all_gather(6)
    assert dual(dual(s)).to_lists() == s.to_lists()


def test_dual_of_broadcast_is_reduce_and_of_all_to_all_its_inverse():
    b = cl.algorithms.binomial_tree_broadcast(11, root=4)
    r = dual(b)
    assert (r.collective, r.root) == ("reduce", 4)
    cl.verify(r)
    cl.verify(dual(cl.algorithms.bruck_all_to_all(11)))


def test_dual_of_staging_through_scratch_starts_with_a_copy():
    # all-gather that stages rank 0's shard in rank 1's scratch slot before placing it
    ag = cl.Schedule(
        "all_gather", 2, 2, [[(0, 1, 0, 2), (1, 0, 1, 1)], [(1, 1, 2, 0)]], n_scratch=1
    )
    cl.verify(ag)
    rs = dual(ag)
    assert rs.to_lists()[0] == [(1, 1, 0, 2, False)]  # first write into scratch: a copy
    cl.verify(rs)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(CATALOG)), st.integers(1, 12), st.integers(1, 4))
def test_pipelining_keeps_every_algorithm_correct(name, n, k):
    if not supports(name, n):
        return
    s = CATALOG[name].build(n)
    p = pipelined(s, k)
    assert p.n_steps == (s.n_steps + k - 1 if s.n_steps else 0)
    assert p.n_chunks == s.n_chunks * k and p.n_transfers == s.n_transfers * k
    cl.verify(p)


def test_pipelining_helps_a_chain_but_not_a_binomial_tree():
    topo = cl.topology.switch(8, 1.0)
    chain = cl.algorithms.chain_broadcast(8)
    assert cl.time(chain, topo, 8.0).seconds == pytest.approx(56.0)  # 7 x 8 B
    assert cl.time(pipelined(chain, 4), topo, 8.0).seconds == pytest.approx(20.0)  # 10 x 2 B
    # the binomial root sends to 1, 2 and 4 in consecutive steps: pipelined, those sends
    # overlap on its one up-link (2 + 4 + 6 + 6 + 4 + 2 bytes), so nothing is gained
    tree = cl.algorithms.binomial_tree_broadcast(8)
    assert cl.time(tree, topo, 8.0).seconds == pytest.approx(24.0)
    assert cl.time(pipelined(tree, 4), topo, 8.0).seconds == pytest.approx(24.0)


def test_parallel_runs_two_halves_at_once():
    # forward ring on even slots, mirrored ring on odd slots = a bidirectional ring
    n = 6
    steps = cl.algorithms.ring_all_gather(n).to_lists()
    forward = [[(s, d, 2 * c, 2 * c) for s, d, c, _, _ in step] for step in steps]
    backward = [
        [
            ((n - s) % n, (n - d) % n, 2 * ((n - c) % n) + 1, 2 * ((n - c) % n) + 1)
            for s, d, c, _, _ in step
        ]
        for step in steps
    ]
    a = cl.Schedule("all_gather", n, 2 * n, forward)
    b = cl.Schedule("all_gather", n, 2 * n, backward)
    both = parallel(a, b)
    assert both.n_steps == n - 1 and both.n_transfers == 2 * a.n_transfers
    cl.verify(both)
    ring = cl.topology.ring(n, 1.0)
    bidirectional = cl.algorithms.bidirectional_ring_all_gather(n)
    assert cl.time(both, ring, 12.0).seconds == pytest.approx(
        cl.time(bidirectional, ring, 12.0).seconds
    )
    with pytest.raises(cl.ScheduleError, match="is written by 2 transfers"):
        parallel(a, a)  # the same slots twice in one step


def test_parallel_refuses_mismatches():
    with pytest.raises(cl.ScheduleError, match="must share n_ranks and n_chunks"):
        parallel(cl.algorithms.ring_all_gather(4), cl.algorithms.ring_all_gather(5))
    with pytest.raises(cl.ScheduleError, match="compute all_gather and reduce_scatter"):
        parallel(cl.algorithms.ring_all_gather(4), cl.algorithms.ring_reduce_scatter(4))


def test_embed_runs_a_ring_on_each_row():
    # two rows of three ranks: an all-gather along each row only gathers that row
    small = cl.algorithms.ring_all_gather(3)
    groups = np.array([[0, 1, 2], [3, 4, 5]])
    blocks = groups[:, :, None]  # small chunk c = the big shard of rank
    rows = embed(small, groups, blocks, collective="all_gather", n_ranks=6, n_chunks=6)
    states = cl.trace(rows)
    assert [int(states[-1].label[4, c]) for c in range(6)] == [-1, -1, -1, 3, 4, 5]
    with pytest.raises(cl.ScheduleError, match=r"groups must have shape \(G, 3\)"):
        embed(small, groups[:, :2], blocks, collective="all_gather", n_ranks=6, n_chunks=6)


@pytest.mark.parametrize(
    "call, message",
    [
        # the depth is named as the caller wrote it: n_segments, or the old keyword k
        (
            lambda: pipelined(cl.algorithms.ring_all_gather(3), 0),
            r"^n_segments \(number of pipeline segments\) must be an integer >= 1, got 0$",
        ),
        (
            lambda: pipelined(cl.algorithms.ring_all_gather(3), k=0),
            r"^k \(number of pipeline segments\) must be an integer >= 1, got 0$",
        ),
        (
            lambda: pipelined(cl.algorithms.ring_all_gather(3), 2, k=3),
            "n_segments and its old name k were both given",
        ),
        (lambda: pipelined(cl.algorithms.ring_all_gather(3)), "needs n_segments"),
        (lambda: dual([1, 2]), r"dual\(\)'s schedule must be a collectives.Schedule, got list"),
    ],
)
def test_bad_transform_arguments(call, message):
    with pytest.raises(cl.ScheduleError, match=message):
        call()


def test_n_segments_is_the_current_name_and_k_still_works():
    s = cl.algorithms.chain_broadcast(4)
    new = pipelined(s, n_segments=3)
    for old in (pipelined(s, k=3), pipelined(s, 3)):
        assert old.to_lists() == new.to_lists() and old.name == new.name
    # Traffic.pipelined too: 3 steps of the chain, 3 segments -> 3 + 3 - 1 = 5 steps
    assert s.traffic.pipelined(3).n_steps == s.traffic.pipelined(k=3).n_steps == 5
    assert new.traffic.n_steps == 5
