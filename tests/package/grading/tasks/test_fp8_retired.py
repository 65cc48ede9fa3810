"""collectives.grading.tasks.fp8_retired: the checks of the FP8 notebook's tasks before issue 22
(delayed scales, the all-reduce over the ranks in rank order, the ranks at which pre-scaling
flushes a value), kept for released copies of that notebook (moved from test_fp8.py with the
code).

Values are derived by hand from Transformer Engine's delayed-scaling rules, FP8-LM's all-reduce
and the OCP OFP8 tables.
"""

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading.tasks import fp8_retired
from collectives.grading.tasks.fp8_retired import (
    check_delayed_scales,
    check_flushing_ranks,
    check_fp8_all_reduce,
    delayed_scales_reference,
    flushing_ranks,
    fp8_all_reduce_reference,
    fp8_error_bound,
)

# ---- delayed scaling (Task 2 before issue 22) ----------------------------------------------------


def test_delayed_scales_by_hand():
    # the notebook's example: step 0 knows nothing (1.0); step 1 knows amax 2 (448 / 2);
    # steps 2 and 3 have 4 in their window of two; step 4 sees only the 1.0s
    assert delayed_scales_reference([2.0, 4.0, 1.0, 1.0, 1.0], 2).tolist() == [
        1.0,
        224.0,
        112.0,
        112.0,
        448.0,
    ]
    # margin 1 halves every scale it computes (not the starting 1.0); zeros keep the scale
    assert delayed_scales_reference([0.0, 0.0, 3.5, 0.0], 1, 1).tolist() == [1.0, 1.0, 1.0, 64.0]
    # E5M2: 57344 / 2**2 / 1024
    assert delayed_scales_reference([1024.0, 1.0], 4, 2, "e5m2").tolist() == [1.0, 14.0]


def test_delayed_scales_pass_in_float64_and_fail_with_why():
    amaxes = [1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0]
    # float64 by hand: within 1e-6 of TE's float32
    assert (
        check_delayed_scales([1.0, 224.0, 224.0, 28.0, 28.0, 28.0, 224.0], "s", amaxes, 3, 1) == 1.0
    )
    call = (
        "collectives.fp8.delayed_scales([1.0, 1.0, 8.0, 1.0, 1.0, 1.0, 1.0], fmt='e4m3', "
        "history_len=3, margin=1)"
    )
    with pytest.raises(AssertionError) as info:
        check_delayed_scales([1.0, 448.0, 448.0, 56.0, 56.0, 56.0, 448.0], "s", amaxes, 3, 1)
    assert str(info.value) == (
        f"s: the scale at step 1 is 448.0, expected 224.0 = {call}[1]; "
        "yours is 2**1 times that: the margin divides the scale by "
        "2**margin"
    )
    with pytest.raises(
        AssertionError,
        match=r"step 2 is 28\.0, expected 224\.0 = .*\[2\]; that "
        r"is the scale of this step's own amax",
    ):
        check_delayed_scales([1.0, 224.0, 28.0, 28.0, 28.0, 224.0, 224.0], "s", amaxes, 3, 1)
    with pytest.raises(
        AssertionError,
        match=r"step 6 is 28\.0, expected 224\.0 = .*; the "
        r"history holds the amaxes of the last 3 steps",
    ):
        check_delayed_scales([1.0, 224.0, 224.0, 28.0, 28.0, 28.0, 28.0], "s", amaxes, 3, 1)
    with pytest.raises(GradingError, match=r"s has shape \(6,\); expected shape \(7,\)"):
        check_delayed_scales([1.0] * 6, "s", amaxes, 3, 1)


# ---- the FP8 all-reduce (Task 3 before issue 22) -------------------------------------------------

EXAMPLE = [[1.0, -0.3], [4.0, 0.01]]


def test_the_all_reduce_by_hand():
    # shared scale 448 / 4 = 112, mu = 1/2: rank 0 casts [56, -16.8] -> [56, -16], rank 1
    # [224, 0.56] -> [224, 0.5625]; the sums [280, -15.4375] are stored as [288, -15] (spacing
    # 32 above 256, 1 between 8 and 16); divided by N mu s = 112
    assert fp8_all_reduce_reference(EXAMPLE, 0.5) == pytest.approx([288 / 112, -15 / 112], rel=1e-7)
    assert check_fp8_all_reduce([288 / 112, -15 / 112], "r", EXAMPLE, 0.5) == 1.0
    # the bound: the casts err by 0, 0.8, 0, 0.0025 and the sums by 8, 0.4375, all within
    # |x| / 16 (or 2**-10) each
    bound = fp8_error_bound(EXAMPLE, 0.5)
    assert bound == pytest.approx(
        [(56 / 16 + 224 / 16 + 280 / 16) / 112, (16.8 / 16 + 0.56 / 16 + 15.4375 / 16) / 112]
    )


@pytest.mark.parametrize(
    "answer, text",
    [
        ([2.5, -0.145], "; that is the exact mean: the gradients must travel as FP8 codes"),
        (
            [576 / 112, -30 / 112],
            "; that is the sum: what a rank holds stands for the mean, the sum "
            "over 2 ranks divided by 2",
        ),
        ([1.0, -0.13392857142857142], "; that is what the largest of the ranks' scales gives"),
        ([288 / 224, -15 / 224], "; yours is 0.5 times that: the sum stands for mu * N * s times"),
    ],
)
def test_the_usual_mistakes_are_named(answer, text):
    with pytest.raises(AssertionError) as info:
        check_fp8_all_reduce(answer, "r", EXAMPLE, 0.5)
    message = str(info.value)
    assert message.startswith(
        f"r: element 0 is {answer[0]!r}, expected 2.5714285373687744 = "
        "collectives.fp8.fp8_all_reduce([[1.0, -0.3], [4.0, 0.01]], "
        "collectives.grading.tasks.fp8.chain_all_reduce(2), fmt='e4m3', "
        "scaling='auto', mu=0.5, quantize='per_hop', accumulate='fp8')"
        ".output[:, 0] (shared scale 112)"
    )
    assert message.endswith(text) or text in message


def test_a_sum_not_stored_in_fp8_is_named():
    # three ranks, mu = 1/4: the exact sums of the casts, not cast again
    grads = [[0.5, -0.25, 0.125], [-3.0, 2.0, 0.75], [0.001, -0.002, 0.0005]]
    unstored = fp8_retired._by_hand(np.array(grads), 0.25, 448 / 3, per_hop=False, recast=False)[0]
    assert not np.allclose(unstored, fp8_all_reduce_reference(grads, 0.25), rtol=1e-3)
    with pytest.raises(
        AssertionError,
        match="; that is the exact sum of the casts: every "
        "partial sum, the last one too, is an E4M3 number",
    ):
        check_fp8_all_reduce(unstored, "r", grads, 0.25)


THREE = [[6.0, 1.5], [0.25, 3.0], [0.3, 0.1]]


def test_every_partial_sum_is_cast_by_hand():
    # amaxes 6, 3, 0.3: shared scale 448 / 6; mu = 1/2: multiplier 37.333. Casts (E4M3 steps:
    # 16 in [128, 256), 1 in [8, 16), 0.25 in [2, 4)): rank 0 [224, 56] (exact), rank 1
    # [9.333 -> 9, 112], rank 2 [11.2 -> 11, 3.733 -> 3.75].
    # In rank order, every partial sum cast: 224 + 9 = 233 -> 240, 240 + 11 = 251 -> 256;
    # 56 + 112 = 168, a tie of 160 (1.010b) and 176 (1.011b): 160, + 3.75 = 163.75 -> 160.
    # Divided by N mu s = 3 x 37.333 = 112: [256/112, 160/112] = [2.2857, 1.4286]
    want = [256 / 112, 160 / 112]
    assert fp8_all_reduce_reference(THREE, 0.5) == pytest.approx(want, rel=1e-7)
    assert check_fp8_all_reduce(want, "r", THREE, 0.5) == 1.0
    # the bound: the input casts' half steps |x| / 16 (224, 9.333, 11.2 | 56, 112, 3.733) and
    # the partial sums' (233, 251 | 168, 163.75), over 112
    bound = fp8_error_bound(THREE, 0.5)
    assert bound == pytest.approx(
        [
            (224 + 28 / 3 + 11.2 + 233 + 251) / 16 / 112,
            (56 + 112 + 56 / 15 + 168 + 163.75) / 16 / 112,
        ],
        rel=1e-12,
    )
    # casting once instead: 224 + 9 + 11 = 244 -> 240; 56 + 112 + 3.75 = 171.75 -> 176
    once = [240 / 112, 176 / 112]
    with pytest.raises(
        AssertionError,
        match="; that is the sum of the casts rounded to E4M3 "
        "once: with an FP8 datatype NCCL's ring and "
        "tree kernels narrow every partial sum back to "
        "E4M3",
    ):
        check_fp8_all_reduce(once, "r", THREE, 0.5)


def test_chain_all_reduce():
    # rank r sends to r + 1 at step r (reducing), the last rank then copies to all: n steps
    for n in (1, 2, 5):
        s = fp8_retired.chain_all_reduce(n)
        assert (s.collective, s.n_ranks, s.n_chunks, s.n_steps) == (
            "all_reduce",
            n,
            1,
            n if n > 1 else 0,
        )
        x = np.arange(n, dtype=np.float64)[:, None] + 1
        assert cl.simulate(s, x).tolist() == [[n * (n + 1) / 2]] * n
    with pytest.raises(GradingError, match="chain_all_reduce needs at least one rank"):
        fp8_retired.chain_all_reduce(0)


def test_own_scales_are_named():
    # rank 0 alone: scale 448 * mu = 224, -0.3 * 224 = -67.2 -> -64; rank 1: 56, as above
    own = [(224 / 224 + 224 / 56) / 2, (-64 / 224 + 0.5625 / 56) / 2]
    with pytest.raises(AssertionError, match="that is what each rank's own scale gives"):
        check_fp8_all_reduce(own, "r", EXAMPLE, 0.5)


@pytest.mark.parametrize(
    "n, mu", [(2, 0.5), (4, 0.25), (8, 1 / 8), (8, 0.5), (16, 1.0), (3, 1 / 3)]
)
def test_the_package_is_within_the_bound_where_the_sum_does_not_saturate(n, mu):
    rng = np.random.default_rng(n)
    grads = (rng.standard_normal((n, 64)) * 10.0 ** rng.uniform(-4, 1, (n, 1))).astype(np.float32)
    grads[0, 0] = 0.0
    mean = grads.astype(np.float64).mean(axis=0)
    got = fp8_all_reduce_reference(grads, mu)
    bound = fp8_error_bound(grads, mu)
    ok = np.isnan(bound) | (np.abs(got - mean) <= bound)
    assert ok.all()
    if mu * n <= 1:  # pre-scaling: no sum can saturate
        assert not np.isnan(bound).any()
    assert check_fp8_all_reduce(got, "r", grads, mu) == 1.0


def test_post_scaling_saturates_the_sums():
    grads = [[1.0, 0.5]] * 16
    # every rank casts 448 (and 224); the sums 7168 and 3584 are stored as 448: the mean
    # comes back as 448 / (16 * 448) = 1/16, not 1; the bound does not apply there
    assert fp8_all_reduce_reference(grads, 1.0).tolist() == [1 / 16, 1 / 16]
    assert np.isnan(fp8_error_bound(grads, 1.0)).all()
    assert check_fp8_all_reduce([1 / 16, 1 / 16], "r", grads, 1.0) == 1.0


def test_the_form_of_an_all_reduced_mean():
    with pytest.raises(GradingError, match=r"r has shape \(2, 2\); expected shape \(2,\)"):
        check_fp8_all_reduce([[1.0, 2.0], [1.0, 2.0]], "r", EXAMPLE, 0.5)
    with pytest.raises(GradingError, match="not one row per rank, not all zero"):
        check_fp8_all_reduce([0.0, 0.0], "r", [[0.0, 0.0]], 0.5)


# ---- when pre-scaling flushes a gradient (Task 4 before issue 22) --------------------------------


@pytest.mark.parametrize(
    "ratio, fmt, n",
    [
        (1e-3, "e4m3", 459),  # 448e-3 / N <= 2**-10: N >= 458.752
        (1e-3, "e5m2", 7516193),  # 57.344 * 2**17 = 7516192.768
        (2.0**-4, "e4m3", 28672),  # 28 / 28672 = 2**-10 exactly: the tie goes to 0
        (1.0, "e4m3", 458752),  # 448 * 1024, a tie too
        (2.0**-10, "e5m2", 7340032),  # 56 * 2**17, a tie
        (1e-5, "e4m3", 5),
        (1e-6, "e4m3", 1),  # 4.48e-4 < 2**-10 = 9.77e-4 on one rank already
    ],
)
def test_flushing_ranks_by_hand(ratio, fmt, n):
    assert flushing_ranks(ratio, fmt) == n
    top = cl.fp8.max_value(fmt) * ratio
    assert cl.fp8.encode(top / n, fmt) & 0x7F == 0
    if n > 1:
        assert cl.fp8.encode(top / (n - 1), fmt) & 0x7F != 0


def test_flushing_ranks_checks_and_hints():
    assert check_flushing_ranks(459, "f", 1e-3, "e4m3") == 1.0
    assert check_flushing_ranks(459.0, "f", 1e-3, "e4m3") == 1.0
    with pytest.raises(
        AssertionError,
        match=r"^f is 28673, expected 28672 = collectives\."
        r"grading\.flushing_ranks\(0\.0625, 'e4m3'\); with "
        r"28672 ranks the cast sees exactly half",
    ):
        check_flushing_ranks(28673, "f", 2.0**-4, "e4m3")
    with pytest.raises(AssertionError, match="a value below the smallest subnormal is not zero"):
        check_flushing_ranks(230, "f", 1e-3, "e4m3")
    with pytest.raises(AssertionError, match=r"that is the answer in e4m3, not e5m2$"):
        check_flushing_ranks(459, "f", 1e-3, "e5m2")
    with pytest.raises(AssertionError, match=r"^f is 458\.752, not a whole number of ranks$"):
        check_flushing_ranks(458.752, "f", 1e-3, "e4m3")
    with pytest.raises(GradingError, match=r"ratio must be in \(0, 1\]"):
        flushing_ranks(2.0)
