"""collectives/errors.py: the one error hierarchy, and the old homes of its classes."""

import pytest

import collectives as cl
from collectives import errors


def test_errors_form_one_hierarchy():
    assert issubclass(cl.ScheduleError, cl.CollectivesError)
    assert issubclass(cl.TopologyError, cl.CollectivesError)
    assert issubclass(cl.CollectivesError, ValueError)


def test_every_error_class_of_the_package_is_in_errors_and_subclasses_collectives_error():
    # DistError (collectives.dist) and LayoutError (collectives.plan) moved into errors.py
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, cl.CollectivesError) and issubclass(cls, ValueError), name
        assert cls.__module__ == "collectives.errors", name
    assert {"DistError", "LayoutError"} <= set(errors.__all__)


def test_the_old_import_paths_give_the_same_classes():
    from collectives.dist import DistError as from_dist
    from collectives.dist.errors import DistError as from_dist_errors
    from collectives.plan import LayoutError as from_plan
    from collectives.plan.layout import LayoutError as from_layout

    assert from_dist is from_dist_errors is errors.DistError is cl.DistError
    assert from_plan is from_layout is errors.LayoutError is cl.LayoutError


def test_dist_error_keeps_the_failure_details():
    e = errors.DistError(
        "rank 1 failed",
        rank=1,
        exception="RuntimeError",
        task=0,
        failures={1: "RuntimeError: boom"},
        unfinished=[2, 3],
    )
    assert str(e) == "rank 1 failed"
    assert (e.rank, e.exception, e.task, e.failures, e.unfinished) == (
        1,
        "RuntimeError",
        0,
        {1: "RuntimeError: boom"},
        (2, 3),
    )
    timeout = errors.DistError("timed out", unfinished=(0,))
    assert timeout.rank is None and timeout.failures == {} and timeout.unfinished == (0,)


def test_a_layout_that_does_not_fit_raises_layout_error_caught_as_collectives_error():
    with pytest.raises(cl.CollectivesError) as info:
        cl.plan.Layout(tp=0)
    assert type(info.value) is errors.LayoutError
