"""collectives/algorithms/ring.py: the ring moves the chunk the textbook says at each step."""

import collectives as cl


def test_ring_all_gather_moves_the_chunk_it_should_at_each_step():
    # Derived by hand: at step s rank r forwards chunk (r - s) mod n to rank r + 1.
    s = cl.algorithms.ring_all_gather(4)
    assert s.to_lists()[1] == [(0, 1, 3, 3, False), (1, 2, 0, 0, False),
                               (2, 3, 1, 1, False), (3, 0, 2, 2, False)]
