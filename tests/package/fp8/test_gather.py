"""collectives/fp8/gather.py: the FP8 all-gather of one tensor's shards (one shared scale after a
MAX all-reduce of the amaxes, or each rank's own) and its cost with the scale exchange: golden
values by hand, the single-device property over many schedules, negative tests."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
import collectives.fp8 as fp8
from collectives.errors import CollectivesError

from garbage import check_every_bad_argument


def test_two_ranks_by_hand():
    # rank 0 holds [1, 2] (amax 2, own scale 448 / 2 = 224), rank 1 holds [4, -3] (amax 4,
    # own scale 112). Shared: the MAX all-reduce gives amax 4, scale 112 for both.
    # Casts: 112, 224 | 448, -336; 336 = 1.3125 x 2^8 is halfway between 320 (1.010b) and
    # 352 (1.011b): the even mantissa, 320. Decoded: 1, 2, 4, -320 / 112 = -2.857...
    shared = fp8.fp8_all_gather([[1.0, 2.0], [4.0, -3.0]])
    want = np.float32([1.0, 2.0, 4.0, -320 / 112])
    np.testing.assert_array_equal(shared.values, [want, want])
    assert shared.shard_scales.tolist() == [[112.0, 112.0]] * 2
    assert shared.single_scale and shared.matches_single_device
    assert shared.codes[0].tolist() == shared.codes[1].tolist()
    assert shared.reference.tolist() == [[1.0, 2.0, 4.0, -3.0]] * 2
    # local: rank 0 casts with 224 (224 and 448, exact), rank 1 with 112 as above: the
    # same values here, but two scales in one tensor
    local = fp8.fp8_all_gather([[1.0, 2.0], [4.0, -3.0]], scales="local")
    np.testing.assert_array_equal(local.values[0], want)
    assert local.shard_scales.tolist() == [[224.0, 112.0]] * 2
    assert not local.single_scale and local.matches_single_device  # values equal by luck
    assert "scales='local'" in repr(local)


def test_local_scales_do_not_match_one_device():
    # rank 0 [0.1], rank 1 [10]: shared scale 44.8, 0.1 x 44.8 = 4.48 -> 4.5 (steps of 0.5
    # in [4, 8)), back 4.5 / 44.8 = 0.10045; local scale 4480: 448 exactly, back 0.1 (to
    # float32). The local cast is better for rank 0, but its tensor has two scales.
    shared = fp8.fp8_all_gather([[0.1], [10.0]])
    local = fp8.fp8_all_gather([[0.1], [10.0]], scales="local")
    assert shared.values[0, 0] == np.float32(4.5 / np.float32(44.8))
    assert local.values[0, 0] == np.float32(448 / np.float32(4480))
    assert shared.matches_single_device and not local.matches_single_device


GATHERS = {
    "ring": lambda n: cl.algorithms.ring_all_gather(n),
    "bidirectional ring": lambda n: cl.algorithms.bidirectional_ring_all_gather(n),
    "recursive doubling": lambda n: cl.algorithms.recursive_doubling_all_gather(n),
    "direct": lambda n: cl.algorithms.direct_all_gather(n),
}


@pytest.mark.parametrize("name", sorted(GATHERS))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_shared_scale_gathers_the_single_device_cast(name, data):
    # Whatever the algorithm, an all-gather only copies: every rank ends with the cast of the
    # whole tensor with the group's scale, bit for bit (TE's docs: identical scaling factors
    # enable the quantized all-gather)
    n = data.draw(st.sampled_from([2, 4, 8]))
    size = data.draw(st.integers(1, 6))
    x = np.array(
        data.draw(st.lists(st.floats(-1e4, 1e4, width=32), min_size=n * size, max_size=n * size)),
        np.float32,
    ).reshape(n, size)
    fmt = data.draw(st.sampled_from(["e4m3", "e5m2"]))
    r = fp8.fp8_all_gather(x, GATHERS[name](n), fmt=fmt)
    whole = x.reshape(-1).astype(np.float64)
    amax = np.abs(whole).max()
    scale = fp8.scale_for(amax, fmt)  # TE's scale of the group's amax
    by_hand = fp8.quantize(whole * scale, fmt) / np.float32(scale)
    assert r.single_scale and r.matches_single_device
    np.testing.assert_array_equal(
        r.values, np.broadcast_to(by_hand.astype(np.float32), r.values.shape)
    )
    np.testing.assert_array_equal(r.codes, np.broadcast_to(r.codes[0], r.codes.shape))


def test_groups_gather_their_own_tensors():
    schedule = cl.grouped(cl.algorithms.ring_all_gather(2), [[0, 2], [1, 3]])
    # group {0, 2}: [1] and [4]: amax 4, scale 112, values 1 and 4 (112 and 448 exact);
    # group {1, 3}: [0.5] and [-0.25]: amax 0.5, scale 896: 448 and -224, exact
    r = fp8.fp8_all_gather([[1.0], [0.5], [4.0], [-0.25]], schedule)
    assert r.values.tolist() == [[1.0, 4.0], [0.5, -0.25], [1.0, 4.0], [0.5, -0.25]]
    assert r.shard_scales[:, 0].tolist() == [112.0, 896.0, 112.0, 896.0]
    assert r.single_scale and r.matches_single_device


def test_cost_by_hand():
    # A ring of 8 at 1e9 B/s without latency. All-gather of S bytes: (n - 1)/n x S / B.
    # 2^20 elements: BF16 S = 2 MiB -> 7/8 x 2,097,152 / 1e9 = 1.835008 ms, FP8 0.917504 ms.
    # The scale exchange: one float32 amax, a ring all-reduce of 4 B: 2 x 7/8 x 4 / 1e9 = 7 ns
    ring = cl.topology.ring(8, 1e9)
    c = fp8.fp8_all_gather_cost(2**20, ring)
    assert dict(c.wire_bytes) == {"bf16": 2**21, "fp8": 2**20, "amax": 4}
    assert c.gather["bf16"].seconds == pytest.approx(1.835008e-3, rel=1e-12)
    assert c.gather["fp8"].seconds == pytest.approx(0.917504e-3, rel=1e-12)
    assert c.amax.seconds == pytest.approx(7e-9, rel=1e-12)
    assert c.fp8_seconds == pytest.approx(0.917504e-3 + 7e-9, rel=1e-12)
    assert c.saving_seconds == pytest.approx(0.917504e-3 - 7e-9, rel=1e-12)
    # once per step (delayed scaling, Megatron --fp8-param-gather): off the gather's path
    step = fp8.fp8_all_gather_cost(2**20, ring, n_tensors=300, amax="per_step")
    assert step.wire_bytes["amax"] == 1200 and step.fp8_seconds == step.gather["fp8"].seconds
    assert step.amax.seconds == pytest.approx(2 * 7 / 8 * 1200 / 1e9, rel=1e-12)
    assert "amax per_step" in repr(step)


def test_the_blocking_amax_costs_latency():
    # With 1 us per hop the 4-byte MAX all-reduce costs its 2 (n - 1) = 14 steps of latency
    # before the gather's own 7: for a small sequence-parallel tensor that decides the result
    ring = cl.topology.ring(8, 1e9, hop_latency=1e-6)
    c = fp8.fp8_all_gather_cost(2**13, ring)
    assert c.amax.seconds == pytest.approx(14e-6 + 7e-9, rel=1e-9)
    # FP8: 7 us + 7/8 x 8,192 / 1e9 = 14.168 us; BF16: 7 us + 14.336 us = 21.336 us;
    # FP8 with the exchange: 14.168 + 14.007 = 28.175 us, 6.839 us slower than BF16
    assert c.gather["fp8"].seconds == pytest.approx(7e-6 + 7.168e-6, rel=1e-9)
    assert c.gather["bf16"].seconds == pytest.approx(7e-6 + 14.336e-6, rel=1e-9)
    assert c.saving_seconds == pytest.approx(-6.839e-6, rel=1e-9)
    # delayed scaling moves the exchange off the path: 7.168 us saved
    assert fp8.fp8_all_gather_cost(2**13, ring, amax="per_step").saving_seconds == pytest.approx(
        7.168e-6, rel=1e-9
    )
    # a large gather saves almost half: 2^26 elements, 7/8 x 2^26 / 1e9 = 58.72 ms in FP8
    big = fp8.fp8_all_gather_cost(2**26, ring)
    assert big.saving_seconds == pytest.approx(7 / 8 * 2**26 / 1e9 - 14.007e-6, rel=1e-9)


def test_cost_on_a_preset():
    c = fp8.fp8_all_gather_cost(10**9, "dgx-h100")
    # no latency in the preset: FP8 halves the gather's time
    assert c.gather["fp8"].seconds == pytest.approx(c.gather["bf16"].seconds / 2, rel=1e-12)


X = np.ones((4, 2))
ERRORS = [
    (
        lambda: fp8.fp8_all_gather(np.ones(4)),
        r"takes shards of shape \(n_ranks, shard_size\): one shard per rank, got shape \(4,\)",
    ),
    (lambda: fp8.fp8_all_gather([[1.0], [np.nan]]), r"shards must be finite"),
    (
        lambda: fp8.fp8_all_gather(X, scales="each"),
        r"scales must be one of 'shared', 'local', got 'each'",
    ),
    (
        lambda: fp8.fp8_all_gather(X, cl.algorithms.ring_all_reduce(4)),
        r"needs an all_gather schedule, got 'ring_all_reduce' \(all_reduce\)",
    ),
    (
        lambda: fp8.fp8_all_gather(X, cl.algorithms.ring_all_gather(2)),
        r"the schedule 'ring_all_gather' has 2 ranks but 4 were given",
    ),
    (lambda: fp8.fp8_all_gather(X, fmt="e8m0"), r"fp8_all_gather \(element formats\)"),
    (
        lambda: fp8.fp8_all_gather_cost(8, cl.topology.ring(4, 1e9), amax="never"),
        r"amax must be one of 'per_gather', 'per_step', got 'never'",
    ),
    (
        lambda: fp8.fp8_all_gather_cost(8, cl.topology.ring(4, 1e9), n_tensors=0),
        r"n_tensors must be an integer >= 1, got 0",
    ),
    (
        lambda: fp8.fp8_all_gather_cost(8, cl.topology.ring(4, 1e9), shape=(2, 2)),
        r"preset options \(shape\) are for a preset name",
    ),
    (
        lambda: fp8.fp8_all_gather_cost(
            8, cl.topology.ring(4, 1e9), amax_schedule=cl.algorithms.ring_all_gather(4)
        ),
        r"amax_schedule must be an all_reduce schedule, got 'ring_all_gather'",
    ),
    (lambda: fp8.fp8_all_gather_cost(8, 42), r"topology must be a collectives Topology"),
]


@pytest.mark.parametrize("call, message", ERRORS)
def test_errors_name_the_problem(call, message):
    with pytest.raises(CollectivesError, match=message):
        call()


@pytest.mark.parametrize(
    "name, call, args",
    [
        (
            "fp8_all_gather",
            lambda x, s, fmt, scales: fp8.fp8_all_gather(x, s, fmt=fmt, scales=scales),
            [np.ones((4, 2)), cl.algorithms.ring_all_gather(4), "e4m3", "shared"],
        ),
        (
            "fp8_all_gather_cost",
            lambda n, t, s, k, a: fp8.fp8_all_gather_cost(n, t, s, n_tensors=k, amax=a),
            [8, cl.topology.ring(4, 1e9), cl.algorithms.ring_all_gather(4), 1, "per_gather"],
        ),
    ],
)
def test_every_bad_argument_raises_a_collectives_error(name, call, args):
    check_every_bad_argument(name, call, args)
