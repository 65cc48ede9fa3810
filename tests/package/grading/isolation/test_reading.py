"""collectives.grading.isolation.reading: what of a learner's function and of the notebook
travels to the learner's process, what cannot, and the rules of a task (allow/forbid).

The learner's functions here live in small modules written to a temporary directory (a module
is what a notebook's namespace is to inspect.getsource).
"""

import re

import pytest

from collectives import GradingError
from collectives.grading import call, run_isolated


def test_helpers_constants_modules_and_library_objects_travel_with_the_function(learner):
    m = learner("""
        import functools
        import math
        import numpy as np
        from math import comb
        from itertools import product as cartesian

        LINK = 4.5e10
        SIZES = {"full": 16, "axes": [1, 2, 4, 8, 16]}

        def _wraps(size):
            return size == SIZES["full"]

        def axis_seconds(m, nbytes):
            return 0.0 if m == 1 else (m - 1) * (1e-6 + nbytes / m / (2 if _wraps(m) else 1) / LINK)

        @functools.lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        alias = axis_seconds

        def everything(n):
            pairs = list(cartesian(SIZES["axes"], repeat=2))
            return (alias(16, 0.0), axis_seconds(8, 8 * LINK), fib(n), comb(n, 2),
                    float(np.prod([2, 3])), math.floor(2.5), len(pairs))
    """)
    assert run_isolated(m.everything, 10) == pytest.approx(
        (15e-6, 7 * (1e-6 + 1.0), 55, 45, 6.0, 2, 25), rel=1e-12
    )
    assert run_isolated(m.fib, 20) == 6765  # decorated, recursive
    assert run_isolated(m.alias, 16, 0.0) == pytest.approx(15e-6)


def test_what_cannot_be_re_run_is_refused_in_the_kernel(learner):
    m = learner("""
        def outer():
            k = 3
            def inner(n):
                return n + k
            return inner
    """)
    with pytest.raises(GradingError, match="is defined inside another function"):
        run_isolated(m.outer(), 1, name="inner")
    with pytest.raises(GradingError, match="not a function written in the notebook"):
        run_isolated(len, [1])
    with pytest.raises(GradingError, match=r"f is an int \(3\), not a function"):
        call(3, 1, name="f", isolated=True)
    namespace = {}
    exec("def made(n):\n    return n", namespace)
    with pytest.raises(GradingError, match="the source code of made cannot be read"):
        run_isolated(namespace["made"], 1)


@pytest.mark.parametrize(
    "rules, message",
    [
        (dict(allow="collectives.Schedule"), "allow must be a tuple of dotted names"),
        (dict(allow=("Schedule",)), "allow: 'Schedule' is not a dotted name inside collectives"),
        (
            dict(forbid=("collectives.no_such_thing",)),
            "forbid: collectives has no 'collectives.no_such_thing'",
        ),
    ],
)
def test_bad_rules_are_a_bug_in_the_test(learner, rules, message):
    m = learner("def f(n):\n    return n\n")
    with pytest.raises(GradingError, match=re.escape(message)):
        call(m.f, 1, isolated=True, **rules)


# ---- no code of the learner's runs while the bundle is read ------------------------------------
# (the review of 2026-12-03: a dict subclass's items(), or an object's __getattr__, ran while a
# test cell graded, after the cell's key to the cohort's cases was set, and filled the table)

WATCHED = """
    import collections

    RAN = []

    class Answers(dict):
        def items(self):
            RAN.append("items")
            return super().items()

        def __iter__(self):
            RAN.append("iter")
            return super().__iter__()

    class Lurker:
        def __getattr__(self, name):
            RAN.append("getattr " + name)
            raise AttributeError(name)

        @property
        def __class__(self):
            RAN.append("__class__")
            return dict

        def __call__(self, n):
            return n

    TABLE = Answers(a=1.0)
    LURKER = Lurker()
    COUNTS = collections.defaultdict(int, a=2)

    def from_table(n):
        return TABLE["a"] * n

    def from_lurker(n):
        return LURKER

    def wrapped(n):
        return n

    wrapped.__wrapped__ = LURKER

    def from_counts(n):
        return COUNTS["a"] * n  # (it travels as a plain dict: its default factory does not)

    graded = Lurker()
"""


def test_a_dict_subclass_of_the_notebooks_is_refused_without_calling_it(learner):
    m = learner(WATCHED)
    with pytest.raises(AssertionError, match=r"TABLE \(Answers\) cannot be sent"):
        run_isolated(m.from_table, 2)
    assert m.RAN == []


def test_an_object_with_getattr_is_refused_without_calling_it(learner):
    m = learner(WATCHED)
    with pytest.raises(AssertionError, match=r"LURKER \(Lurker\) cannot be sent"):
        run_isolated(m.from_lurker, 2)
    assert run_isolated(m.wrapped, 3) == 3  # its __wrapped__ is not followed into the object
    with pytest.raises(GradingError, match="an object of a class of your own, not a function"):
        call(m.graded, 1, isolated=True)
    assert m.RAN == []


def test_library_containers_still_travel(learner):
    assert run_isolated(learner(WATCHED).from_counts, 5) == 10


def test_trusted_types_are_the_librarys_and_not_a_look_alike():
    import collections
    import functools
    import sys
    import types

    import numpy as np

    from collectives.grading.isolation.trust import trusted_type

    for cls in (
        int,
        dict,
        bool,
        collections.OrderedDict,
        collections.defaultdict,
        np.ndarray,
        np.float64,
        functools.partial,
        type(np.random.default_rng(0)),
        types.FunctionType,
    ):
        assert trusted_type(cls), cls

    class LookAlike(dict):
        pass

    LookAlike.__module__, LookAlike.__qualname__ = "collections", "OrderedDict"
    assert not trusted_type(LookAlike)
    made = types.ModuleType("made_at_run_time")
    exec("class Box(dict):\n    pass\n", vars(made))
    sys.modules["made_at_run_time"] = made
    try:
        assert not trusted_type(made.Box)  # in sys.modules, but no file outside your reach
    finally:
        del sys.modules["made_at_run_time"]
