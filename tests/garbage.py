"""Garbage arguments and the check that a function turns every one into a CollectivesError
(shared by the bad-input tests of the whole package)."""

import numpy as np
import pytest

from collectives import CollectivesError

#: arguments of every wrong kind: missing, wrong type, out of range, not finite, ragged, ...
GARBAGE = [
    None,
    "x",
    -1,
    0,
    2.5,
    float("nan"),
    float("inf"),
    [],
    [[1, 2], [3]],
    np.array([[1]]),
    object(),
    True,
    (4, -1),
    {"a": 1},
    np.float32(3),
]


def check_every_bad_argument(name, function, args):
    """``function(*args)`` works; replacing any one argument by any item of GARBAGE either
    still works or raises a CollectivesError, never another exception."""
    function(*args)  # the good call works
    for position in range(len(args)):
        for bad in GARBAGE:
            call = list(args)
            call[position] = bad
            try:
                function(*call)
            except CollectivesError:
                pass
            except Exception as e:
                pytest.fail(
                    f"{name} with argument {position} = {bad!r:.40} raised {type(e).__name__}: {e}"
                )
