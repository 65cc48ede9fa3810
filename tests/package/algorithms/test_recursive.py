"""collectives/algorithms/recursive.py: recursive doubling doubles its blocks step by step."""

import collectives as cl


def test_recursive_doubling_sends_doubling_blocks():
    s = cl.algorithms.recursive_doubling_all_gather(8)
    sizes = [len(step) for step in s.steps]
    assert sizes == [8, 16, 32]  # n ranks x 2^i shards each
