"""collectives/algorithms/choose.py: `cl.algorithms.fastest` picks by size, uses torus
algorithms on a torus, names bad candidates, and searches every variant the torus builders
offer.

The concurrent torus reduce-scatter and all-reduce (every axis at once) were missing from the
catalogue, so on a v5e pod `fastest("all_reduce", ...)` picked the one-axis-at-a-time schedule
at about twice the time of a schedule the package could build. These tests would have failed.
"""

import inspect

import pytest

import collectives as cl
from collectives.algorithms import CATALOG, torus

TORUS_COLLECTIVES = ["all_gather", "reduce_scatter", "all_reduce"]


@pytest.mark.parametrize("collective", TORUS_COLLECTIVES)
def test_every_concurrent_torus_builder_has_a_catalogue_entry(collective):
    builder = getattr(torus, f"torus_{collective}")
    assert "concurrent" in inspect.signature(builder).parameters
    entry = CATALOG.get(f"torus_{collective}_concurrent")
    assert entry is not None, f"torus_{collective}_concurrent is not in the catalogue"
    assert (entry.collective, entry.topology) == (collective, "torus")
    schedule = entry.build(16)
    assert schedule.n_ranks == 16
    cl.verify(schedule)


@pytest.mark.parametrize("collective", TORUS_COLLECTIVES)
@pytest.mark.parametrize("shape", [(4, 4), (4, 8), (4, 4, 4)])
@pytest.mark.parametrize("nbytes", [1e4, 1e8])
def test_fastest_is_no_slower_than_any_torus_variant(collective, shape, nbytes):
    topo = cl.topology.torus(shape, 4.5e10, 1e-6)
    builder = getattr(torus, f"torus_{collective}")
    best = cl.algorithms.fastest(collective, topo, nbytes).timing.seconds
    for concurrent in (False, True):
        direct = cl.time(builder(shape, concurrent=concurrent), topo, nbytes).seconds
        assert best <= direct * (1 + 1e-12), (collective, shape, nbytes, concurrent)


# The v5e pod: 16x16, wraparound on both axes, 4.5e10 B/s per link and direction, 1 us per hop
# (The Scaling Book, "How to Think About TPUs"). S = 1e9 bytes, B = 4.5e10, S/B = 22.22 ms.
# Concurrent torus reduce-scatter: half of every shard goes x first, half y first, each on a
# latency-optimal bidirectional ring of 16 (both directions, so 2B per link pair): phase 1
# moves (15/16)(S/2)/(2B), phase 2 a sixteenth of that; the two halves use different links.
#   = (15/64)(1 + 1/16) S/B = 255/1024 S/B, in 16/2 + 16/2 = 16 steps of 1 us (the split-halves
# rings of the older schedule take 15 + 15 = 30).
# All-reduce = reduce-scatter + all-gather: 510/1024 S/B + 32 us = 11.100 ms.
# One axis at a time: (15/32)(1 + 1/16) S/B = 255/512 S/B per half: 22.167 ms for all-reduce.
S, B, HOP = 1e9, 4.5e10, 1e-6


def test_fastest_all_reduce_on_a_v5e_pod_is_the_concurrent_torus():
    pod = cl.hardware.preset("tpu-v5e")
    choice = cl.algorithms.fastest("all_reduce", pod, S)
    assert choice.name == "torus_all_reduce_concurrent"
    assert choice.timing.seconds == pytest.approx(510 / 1024 * S / B + 32 * HOP, rel=1e-9)
    table = dict(choice.table)
    assert table["torus_all_reduce"] == pytest.approx(510 / 512 * S / B + 32 * HOP, rel=1e-9)


def test_the_split_halves_torus_pays_twice_the_steps():
    pod = cl.hardware.preset("tpu-v5e")
    older = torus.torus_all_reduce((16, 16), concurrent=True, latency_optimal=False)
    assert older.name == "torus_all_reduce_concurrent_split_halves"
    assert cl.time(older, pod, S).seconds == pytest.approx(510 / 1024 * S / B + 60 * HOP, rel=1e-9)


def test_fastest_reduce_scatter_on_a_v5e_pod_is_the_concurrent_torus():
    pod = cl.hardware.preset("tpu-v5e")
    choice = cl.algorithms.fastest("reduce_scatter", pod, S)
    assert choice.name == "torus_reduce_scatter_concurrent"
    assert choice.timing.seconds == pytest.approx(255 / 1024 * S / B + 16 * HOP, rel=1e-9)


def test_chooser_switches_algorithm_with_size():
    topo = cl.topology.switch(8, 450e9, hop_latency=1e-6)
    small = cl.algorithms.fastest("all_reduce", topo, 1e3)
    large = cl.algorithms.fastest("all_reduce", topo, 1e9)
    # small: log2(8) = 3 exchanges of 1 kB beat 2 x 3 halving/doubling steps
    assert small.name == "recursive_doubling_all_reduce"
    assert large.name == "rabenseifner_all_reduce"
    assert [s for _, s in small.table] == sorted(s for _, s in small.table)
    assert small.timing.seconds == small.table[0][1]


def test_chooser_uses_torus_algorithms_on_a_torus():
    topo = cl.hardware.preset("tpu-v5e", shape=(4, 4))
    choice = cl.algorithms.fastest("all_gather", topo, 1e8)
    assert choice.name == "torus_all_gather_concurrent"
    assert choice.schedule.n_ranks == 16


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(collective="all_reduce", candidates=["nope"]), "unknown algorithm 'nope'"),
        (
            dict(collective="all_reduce", candidates=["ring_all_gather"]),
            "computes all_gather, not all_reduce",
        ),
        (
            dict(collective="all_reduce", candidates=["rabenseifner_all_reduce"]),
            "no algorithm in the catalogue",
        ),
    ],
)
def test_chooser_errors(kwargs, message):
    with pytest.raises(cl.CollectivesError, match=message):
        cl.algorithms.fastest(topology=cl.topology.switch(6, 1.0), nbytes=1.0, **kwargs)
