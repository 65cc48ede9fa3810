"""What the grading tests share: schedules written out by hand, and the error a check raises."""

import pytest

from collectives import GradingError

#: check_schedule's options for a one-way ring all-gather
RING = {"neighbours": "ring", "reference": "ring_all_gather", "max_sends_per_step": 1}
#: how the tests name an answer in messages
WHAT = {"what": "ring_all_gather_steps(4)"}
#: the end of every refusal of the package
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)
#: a task's allowed part of the package, and how the refusal names it
TOOLS = ("collectives.Schedule", "collectives.verify", "collectives.topology.ring")
ONLY_TOOLS = (
    "here you may use only collectives.Schedule, collectives.topology.ring, "
    "collectives.verify; use the rest in scratch cells to check your answers"
)


def ring_steps(n):
    """The one-way ring all-gather written out by hand: step s, rank r sends chunk r - s."""
    return [[(r, (r + 1) % n, (r - s) % n, (r - s) % n) for r in range(n)] for s in range(n - 1)]


def failure(check, *args, **kwargs):
    """The exception ``check`` raises (it must raise AssertionError or GradingError)."""
    with pytest.raises((AssertionError, GradingError)) as info:
        check(*args, **kwargs)
    return info.value


def message(check, *args, **kwargs):
    return str(failure(check, *args, **kwargs))


def refusal(text):
    """The error run_isolated raises for a call that used the package."""
    with pytest.raises(AssertionError) as info:
        text()
    return str(info.value)


class Lying(float):
    """A float that claims to equal anything."""

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__
