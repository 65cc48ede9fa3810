"""collectives.grading.checks: the check primitives (numbers, references, choices, shapes) and
the package computations several assignments compare with.

Messages are asserted exactly where a learner reads them first, by key phrases elsewhere.
"""

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import collectives as cl
import collectives.analytic
import collectives.grading
from collectives import GradingError
from collectives.grading import (
    check_close,
    check_estimate,
    check_no_worse,
    check_number,
    check_reference,
    check_shape,
    recheck,
    schedule_seconds,
)

from .helpers import failure, message


# ---- numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [3, 3.0, np.int64(3), np.float32(3), np.float64(3), Fraction(3), Decimal(3), np.array(3.0)],
)
def test_check_number_accepts_real_numbers(value):
    assert check_number(value, "x") == 3.0 and type(check_number(value, "x")) is float


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "f(2) is None: nothing was returned (did you forget `return`?)"),
        (True, "f(2) is True, a bool; expected a number"),
        ("1.5", "f(2) is the string '1.5'; expected a number"),
        ([1.0], "f(2) is a list of 1 item ([1.0]); expected a number"),
        ((1.0, 2.0), "f(2) is a tuple of 2 items ((1.0, 2.0)); expected a number"),
        (
            np.array([1.0, 2.0]),
            "f(2) is a numpy array of shape (2,) and dtype float64; expected a single number",
        ),
        (1j, "f(2) is the complex number 1j; expected a real number"),
        ({"a": 1}, "f(2) is a dict of 1 item ({'a': 1}); expected a number"),
        (object, "f(2) is a type (<class 'object'>); expected a number"),
    ],
)
def test_check_number_names_what_it_got(value, expected):
    error = failure(check_number, value, "f(2)")
    assert isinstance(error, GradingError) and str(error) == expected


def test_nan_and_infinity_fail_as_answers():
    assert message(check_number, math.nan, "f(2)") == (
        "f(2) is nan (not a number); check for 0/0 or a nan input"
    )
    assert message(check_number, np.float64("inf"), "f(2)") == (
        "f(2) is inf; expected a finite number (a division by zero?)"
    )
    assert check_number(math.inf, "f(2)", finite=False) == math.inf


def test_check_close_tolerance_and_hints():
    check_close(1.0 + 5e-10, 1.0, "x")
    check_close(0.0, 0.0, "x")
    check_close(1e-12, 0.0, "x", abs_tol=1e-9)
    assert message(check_close, 1.0 + 5e-9, 1.0, "x") == (
        "x is 1.000000005, expected 1.0 (relative error 5e-09)"
    )
    assert message(check_close, 8.0, 7.0, "t(8)") == (
        "t(8) is 8.0, expected 7.0; yours is exactly 8/7 times that"
    )
    assert message(check_close, 4.0, 1.0, "x") == (
        "x is 4.0, expected 1.0; yours is exactly 4 times that"
    )
    assert message(check_close, 0.25, 1.0, "x") == (
        "x is 0.25, expected 1.0; yours is exactly 1/4 times that"
    )
    assert message(check_close, 3.3, 1.0, "x") == "x is 3.3, expected 1.0; yours is 3.3 times that"
    assert message(check_close, 8e9, 1e9, "b") == (
        "b is 8000000000.0, expected 1000000000.0; yours is 8 times that: bits versus bytes?"
    )
    assert message(check_close, 2e-6, 2.0, "t").endswith(
        "yours is 1/10**6 of that: a unit prefix (M, micro)?"
    )
    assert message(check_close, 2.0**21, 2.0, "s").endswith(
        "yours is 2**20 times that: MiB versus bytes?"
    )
    assert message(check_close, 1.0, 0.0, "x") == "x is 1.0, expected 0.0"
    assert "a bug in the test" in message(check_close, 1.0, None, "x")
    assert "a bug in the test" in message(check_close, 1.0, math.nan, "x")


def test_check_reference_names_the_function_and_its_arguments():
    n, s, a, b = 8, 2**26, 1e-6, 45e9
    check_reference(
        cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
        "t",
        "analytic.ring_all_gather",
        (n, s),
        {"alpha": a, "bandwidth": b},
    )
    assert message(
        check_reference,
        2 * cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b),
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9)",
        "analytic.ring_all_gather",
        (n, s),
        {"alpha": a, "bandwidth": b},
    ) == (
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0026237891555555555, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, "
        "alpha=1e-06, bandwidth=45000000000.0); yours is exactly 2 times that"
    )
    assert message(check_reference, 1.0, "f", "busbw", ("all_gather", 1e9, 2.5e-3, 8)) == (
        "f is 1.0, expected 350000000000.0 = collectives.busbw('all_gather', 1000000000.0, "
        "0.0025, 8); yours is 2.85714e-12 times that"
    )
    for bad, why in (
        ("_private", "must name a public function"),
        ("analytic._check", "must name a public function"),
        ("no.such.thing", "collectives has no 'no.such.thing'"),
        ("__version__", "must name a public function"),
        ("analytic", "is not a function"),
        (3, "must be a dotted name"),
    ):
        error = failure(check_reference, 1.0, "f", bad)
        assert isinstance(error, GradingError) and why in str(error), bad


# ---- schedule_seconds ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 8, 17])
def test_schedule_seconds_agrees_with_the_closed_form(n):
    s, a, b = 3e6 + n, 2e-6, 25e9
    total = schedule_seconds("ring_all_gather", n, s, link_bandwidth=b, hop_latency=a)
    assert math.isclose(
        total, cl.analytic.ring_all_gather(n, s, alpha=a, bandwidth=b), rel_tol=1e-12
    )
    latency = schedule_seconds(
        "ring_all_gather", n, s, part="latency", link_bandwidth=b, hop_latency=a
    )
    transfer = schedule_seconds(
        "ring_all_gather", n, s, part="transfer", link_bandwidth=b, hop_latency=a
    )
    assert math.isclose(latency, (n - 1) * a) and math.isclose(latency + transfer, total)


def test_latency_is_half_the_time_at_the_crossover():
    n, a, b = 16, 1e-6, 45e9
    s_star = cl.analytic.ring_crossover_bytes(n, alpha=a, bandwidth=b)
    assert math.isclose(
        schedule_seconds(
            "ring_all_gather", n, s_star, part="latency_fraction", link_bandwidth=b, hop_latency=a
        ),
        0.5,
    )
    on_switch = schedule_seconds(
        "direct_all_gather", n, s_star, topology="switch", link_bandwidth=b, hop_latency=a
    )
    assert math.isclose(
        on_switch, cl.analytic.direct_all_gather(n, s_star, alpha=2 * a, bandwidth=b)
    )


def test_schedule_seconds_rejects_unknown_names():
    assert "unknown algorithm 'ring'" in message(
        schedule_seconds, "ring", 4, 1e6, link_bandwidth=1e9
    )
    assert "topology must be one of ring, chain, switch" in message(
        schedule_seconds, "ring_all_gather", 4, 1e6, topology="torus", link_bandwidth=1e9
    )
    assert "part must be one of" in message(
        schedule_seconds, "ring_all_gather", 4, 1e6, part="all", link_bandwidth=1e9
    )
    assert "takes no time" in message(
        schedule_seconds, "ring_all_gather", 1, 1e6, part="latency_fraction", link_bandwidth=1e9
    )


def test_check_choice_messages_and_isolated_recheck():
    from collectives import grading as g

    assert g.check_choice("ring", "ring", "best") == "ring"
    with pytest.raises(g.GradingError, match="best should be a string \\(a name\\), but it is"):
        g.check_choice(3, "ring", "best")
    with pytest.raises(
        AssertionError, match="best is 'rng', which is not one of the choices: 'ring', 'tree'"
    ):
        g.check_choice("rng", "ring", "best", options=["ring", "tree"])
    with pytest.raises(AssertionError, match="best is 'tree', but the answer is 'ring'"):
        g.recheck(("check_choice", ("tree", "ring", "best")))


# ---- check_shape -------------------------------------------------------------------------
def test_check_shape():
    assert check_shape((8, 16), "s", expected=(8, 16)) == (8, 16)
    assert check_shape([np.int64(1), 16], "s", expected=(1, 16)) == (1, 16)
    assert check_shape(np.array([4, 4]), "s", expected=[4, 4]) == (4, 4)
    for value, text in [
        ((8.0, 16), r"s\[0\] is a float \(8.0\); expected an int \(use // "),
        ("8x16", "s should be a tuple of ints such as (8, 16), but it is the string '8x16'"),
        ((True, 16), r"s\[0\] is a bool \(True\); expected an int"),
        (None, "s should be a tuple of ints"),
    ]:
        with pytest.raises(GradingError, match=text.replace("(8, 16)", r"\(8, 16\)")):
            check_shape(value, "s", expected=(8, 16))
    with pytest.raises(AssertionError, match=r"^s is \(4, 4\), but the answer is \(1, 16\)$"):
        check_shape((4, 4), "s", reference="grading.best_v5e_slice_shape", args=(16, 1e8))
    with pytest.raises(AssertionError, match=r"is \(3, 3\), but the answer is \(1, 1\)"):
        recheck(("check_shape", ((3, 3), "s"), {"expected": (1, 1)}))


def test_top_level_references_are_the_functions_the_top_level_re_exports():
    """The checks resolve "busbw" without importing collectives' top level: their table must
    name, for each, the module whose function the top level re-exports."""
    import importlib

    from collectives.grading.checks import TOP_LEVEL, check_reference

    for name, module in TOP_LEVEL.items():
        assert getattr(importlib.import_module(f"collectives.{module}"), name) is getattr(cl, name)
    # busbw of an all-reduce of 1 GB in 10 ms on 8 ranks: 2 (8-1)/8 x 1e9 / 0.01 = 175 GB/s
    assert check_reference(175e9, "busbw", "busbw", ("all_reduce", 1e9, 0.01, 8)) == 175e9
    assert check_reference(175e9, "busbw", "cost.busbw", ("all_reduce", 1e9, 0.01, 8)) == 175e9


# ---- graded by cost: check_estimate, check_no_worse -------------------------------------------
RING16 = ((16, 2**20), {"alpha": 1e-6, "bandwidth": 45e9})


def test_check_estimate_accepts_anything_between_the_bound_and_the_reference():
    # 16 ranks, 1 MiB, 45e9 B/s, 1 us. The split bidirectional ring (the reference): 15 steps,
    # 15 us + 15/32 MiB / 45e9 = 25.92 us; the latency-optimal ring (the bound here): 8 us +
    # the same 10.92 us. A learner who finds the faster schedule passes, one who is slower
    # than the reference or faster than the bound does not.
    args, kwargs = RING16
    slow = cl.analytic.bidirectional_ring_all_gather(*args, **kwargs)
    fast = cl.analytic.latency_optimal_ring_all_gather(*args, **kwargs)
    assert math.isclose(slow - fast, 7e-6)
    options = dict(bound="analytic.latency_optimal_ring_all_gather")
    for value in (slow, fast, (slow + fast) / 2):
        assert (
            check_estimate(
                value, "t", "analytic.bidirectional_ring_all_gather", args, kwargs, **options
            )
            == value
        )
    with pytest.raises(
        AssertionError,
        match=r"^t is .*, slower than .* = collectives\.analytic\."
        r"bidirectional_ring_all_gather\(16, 1048576, "
        r"alpha=1e-06, bandwidth=45000000000\.0\), the "
        r"time of a schedule the wiring allows: a faster "
        r"schedule exists",
    ):
        check_estimate(
            slow * 1.01, "t", "analytic.bidirectional_ring_all_gather", args, kwargs, **options
        )
    with pytest.raises(
        AssertionError,
        match=r"below .* = collectives\.analytic\.latency_"
        r"optimal_ring_all_gather\(.*\), less than any "
        r"schedule can take; yours is exactly 1/2 times",
    ):
        check_estimate(
            fast / 2, "t", "analytic.bidirectional_ring_all_gather", args, kwargs, **options
        )
    with pytest.raises(GradingError, match="t is None"):
        check_estimate(None, "t", "analytic.bidirectional_ring_all_gather", args, kwargs, **options)
    with pytest.raises(AssertionError, match="slower than"):  # the same, in isolation
        recheck(
            (
                "check_estimate",
                (slow * 2, "t", "analytic.bidirectional_ring_all_gather", args, kwargs),
                options,
            )
        )


def test_check_no_worse_grades_a_choice_by_its_cost_not_by_the_references_choice():
    # 16 v5e chips at 100 MB: (1, 16) costs 2 (8 us + 15/32 x 1e8 / 45e9) = 2.0993 ms, (4, 4)
    # 2 x (6 us + (3/16 + 3/4) x 1e8 / 45e9) = 4.1787 ms
    shape = dict(
        cost="grading.v5e_slice_all_reduce_seconds",
        reference="grading.best_v5e_slice_shape",
        args=(16, 1e8),
    )
    assert check_no_worse([1, 16], "s", **shape) == (1, 16)
    with pytest.raises(
        AssertionError,
        match=r"^s is \(4, 4\), which costs 0\.00417867 "
        r"\(collectives\.grading\.v5e_slice_all_reduce_"
        r"seconds\(\(4, 4\), 16, 100000000\.0\)\), more "
        r"than the 0\.00209933 of \(1, 16\)",
    ):
        check_no_worse((4, 4), "s", **shape)
    with pytest.raises(
        AssertionError,
        match=r"s is \(3, 3\): \(3, 3\) is not a v5e slice of "
        r"16 chips",
    ):
        check_no_worse((3, 3), "s", **shape)
    with pytest.raises(GradingError, match=r"s\[0\] is a float"):
        check_no_worse((1.0, 16), "s", **shape)
    # a (k, 16) slice with nothing to move: the data axis on the ring pays 2 x 8 steps for its
    # all-reduce and n (k - 1) for the gathers on the chain; the model axis on the ring pays
    # 2 (k - 1) and 8 n. k = 8, n = 1: 23 us against 22 us; k = 2, n = 2: 18 us each, a tie,
    # so either answer passes whichever the reference names
    layout = dict(
        cost="grading.wrapped_axis_step_seconds",
        reference="grading.wrapped_axis_for",
        options=("data", "model"),
    )
    assert check_no_worse("model", "w", args=(8, 0.0, 0.0, 1), **layout) == "model"
    with pytest.raises(AssertionError, match=r"w is 'data', which costs 2\.3e-05"):
        check_no_worse("data", "w", args=(8, 0.0, 0.0, 1), **layout)
    tie = (2, 0.0, 0.0, 2)
    assert cl.grading.wrapped_axis_step_seconds("data", *tie) == pytest.approx(18e-6)
    assert cl.grading.wrapped_axis_step_seconds("model", *tie) == pytest.approx(18e-6)
    assert check_no_worse("data", "w", args=tie, **layout) == "data"
    assert check_no_worse("model", "w", args=tie, **layout) == "model"
    with pytest.raises(AssertionError, match="which is not one of the choices: 'data', 'model'"):
        check_no_worse("neither", "w", args=tie, **layout)
    with pytest.raises(GradingError, match="w should be a string"):
        check_no_worse(3, "w", args=tie, **layout)
    with pytest.raises(AssertionError, match=r"is \(4, 4\), which costs"):
        recheck(("check_no_worse", ((4, 4), "s"), shape))
