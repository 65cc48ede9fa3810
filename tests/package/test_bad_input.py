"""Bad input to any public function raises a CollectivesError, never a numpy, KeyError,
AttributeError, TypeError or ZeroDivisionError from deep inside.

Every argument of each call below is replaced, one at a time, by each value of GARBAGE
(tests/garbage.py, shared with the FP8 tests); the call must either work (some garbage is
valid somewhere, e.g. 0 as a root) or raise a :class:`collectives.CollectivesError`.
"""

import numpy as np
import pytest

import collectives as cl
from collectives import topology as tp

from garbage import check_every_bad_argument

RING = tp.ring(4, 1e9)
AG = cl.algorithms.ring_all_gather(4)


def _cluster(n, g):
    return tp.cluster(n, g, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)


CALLS = {
    "time": (cl.time, [AG, RING, 1e6]),
    "time placement": (lambda p: cl.time(AG, tp.ring(8, 1e9), 1e6, placement=p), [[0, 1, 2, 3]]),
    "time_concurrent": (cl.time_concurrent, [[cl.Job(AG, 1e6)], RING]),
    "Job": (
        lambda s, nbytes, p: cl.time_concurrent([cl.Job(s, nbytes, p)], RING),
        [AG, 1e6, [0, 1, 2, 3]],
    ),
    "grouped": (cl.grouped, [cl.algorithms.ring_all_reduce(2), [[0, 1], [2, 3]]]),
    "torus_all_gather": (cl.algorithms.torus_all_gather, [(4, 4), (0,)]),
    "torus_all_to_all": (cl.algorithms.torus_all_to_all, [(4, 4), (0,)]),
    "Mesh": (cl.Mesh, [{"dp": 2, "tp": 2}]),
    "Mesh.groups": (lambda axis: cl.Mesh({"dp": 2, "tp": 2}).groups(axis), ["tp"]),
    "product": (tp.product, [RING, tp.switch(2, 1e9)]),
    "cluster": (_cluster, [2, 2]),
    "nvls_all_reduce": (cl.algorithms.nvls_all_reduce, [4, 2]),
    "collective_permute": (cl.algorithms.collective_permute, [[1, -1]]),
    "send_recv": (cl.algorithms.send_recv, [3, 0, 1]),
    "direct_gather": (cl.algorithms.direct_gather, [4, 0]),
    "Schedule": (
        lambda c, n, k, steps: cl.Schedule(c, n, k, steps),
        ["all_gather", 2, 2, [[(0, 1, 0, 0)]]],
    ),
    "Schedule groups": (
        lambda g: cl.Schedule("all_reduce", 4, 1, [], groups=g),
        [[[0, 1], [2, 3]]],
    ),
    "Schedule peers": (lambda p: cl.Schedule("permute", 2, 1, [], peers=p), [[1, -1]]),
    "Schedule op": (lambda op: cl.Schedule("all_reduce", 2, 1, [], op=op), ["max"]),
    "simulate": (cl.simulate, [AG, np.ones((4, 1))]),
    "verify": (cl.verify, [AG]),
    "trace": (lambda s, stop: cl.trace(s, stop_at_error=stop), [AG, False]),
    "pipelined": (cl.transforms.pipelined, [AG, 2]),
    "dual": (cl.transforms.dual, [AG]),
    "compose": (
        cl.compose,
        [cl.algorithms.ring_reduce_scatter(2), cl.algorithms.ring_all_gather(2)],
    ),
    "embed": (
        lambda g, b: cl.transforms.embed(
            cl.algorithms.ring_all_gather(2), g, b, collective="all_gather", n_ranks=4, n_chunks=4
        ),
        [[[0, 1], [2, 3]], np.arange(8).reshape(2, 2, 2)],
    ),
    "analytic.ring_all_gather": (
        lambda n, s, a, b: cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
        [8, 1e6, 0.0, 1e9],
    ),
    "analytic.nvls_all_reduce": (
        lambda n, s, a, b, k: cl.analytic.nvls_all_reduce(n, s, alpha=a, bandwidth=b, n_segments=k),
        [8, 1e6, 0.0, 1e9, 2],
    ),
    "analytic.torus_all_gather": (
        lambda shape, s, a, b: cl.analytic.torus_all_gather(shape, s, alpha=a, bandwidth=b),
        [(4, 4), 1e6, 0.0, 1e9],
    ),
    "hardware.preset": (cl.hardware.preset, ["tpu-v5e"]),
    "topology.ring": (tp.ring, [4, 1e9]),
    "topology.torus": (tp.torus, [(4, 4), 1e9]),
    "paths": (RING.paths, [[0], [1]]),
    "busbw": (cl.busbw, ["all_reduce", 1e6, 1.0, 8]),
    "fp8.encode": (cl.fp8.encode, [np.ones(4, np.float32), "e4m3"]),
    "moe.direct_all_to_all_v": (cl.moe.direct_all_to_all_v, [np.ones((2, 2), int)]),
    "fabric.clos": (cl.fabric.clos, [8, 2, 1e9]),
    "fabric.link_loads": (lambda s, d: cl.fabric.link_loads(RING, s, d), [[0], [1]]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_bad_argument_raises_a_collectives_error(name):
    function, args = CALLS[name]
    check_every_bad_argument(name, function, args)
