"""A self-check for learners studying alone: a score per task, on fresh random cases.

``python -m collectives.grading.selfcheck <notebook.ipynb>`` reads a graded notebook as the
site offers it (the student version, with the learner's answers filled in), runs its setup
cells and its answer cells (not its test cells, not the learner's scratch cells) in a fresh
namespace, and checks each task's functions on cases drawn at random here, with the same
checks and the same rules as grading: every function is re-run from its source in a process
where ``collectives`` cannot be imported (:func:`~collectives.grading.call` with
``isolated=True``), and its answers are checked in another against the package
(:func:`~collectives.grading.recheck`). It prints, per task, the points it would earn and,
when it fails, the first thing that is wrong; then the total of the autograded points.

It never reads the instructor's notebooks, so it cannot reveal their hidden tests: its cases
are its own (``--seed`` repeats a run), and they differ from the instructor's. A task that
passes here can still fail the instructor's hidden tests (they check other cases), and the
other way round only if a case here was unlucky. Written answers (graded by hand) are not
scored; ``--model-answers`` prints a model answer and its rubric for each, to read after
writing one's own (:data:`collectives.grading.model_answers.MODEL_ANSWERS`).

What each task checks is in :data:`TASKS`, by notebook name (the file's name without
``.ipynb``, as the site names it), one :class:`Task` per graded test cell. Left out: the
tampering the hidden tests resist (a learner fools only themselves here), and the nbgrader
sandbox's limits on time and memory.
"""

from __future__ import annotations

import argparse
import builtins
import json
import linecache
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import CollectivesError, GradingError
from .isolation import SCHEDULE_TOOLS, call, recheck, run_isolated
from .model_answers import MODEL_ANSWERS
from .tasks import fp8 as fp8_tasks

__all__ = ["Task", "TaskResult", "TASKS", "read_notebook", "load_answers", "check_notebook", "main"]


@dataclass(frozen=True)
class Task:
    """One graded test cell of a notebook: the functions it grades and how to check them on
    fresh cases. ``build(rng, answers)`` returns the checks for
    :func:`~collectives.grading.recheck` (``answers`` maps the notebook's names to the
    learner's values); it may raise an ``AssertionError`` itself."""

    test: str
    functions: tuple[str, ...]
    build: Callable
    timeout: float = 120.0


@dataclass(frozen=True)
class TaskResult:
    """What :func:`check_notebook` found for one task: ``passed``, ``points`` (of the test
    cell), ``message`` (the first failing check's first line, or how many cases passed)."""

    test: str
    functions: tuple[str, ...]
    points: float
    passed: bool
    message: str


# ---- drawing cases ---------------------------------------------------------------------------


def _log_uniform(rng, low, high):
    """A float between ``low`` and ``high``, uniform in its logarithm, with 3 significant
    digits (cases read well in messages)."""
    return float(f"{math.exp(rng.uniform(math.log(low), math.log(high))):.3g}")


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _draws(rng, count, draw, valid=lambda case: True, tries=200):
    """``count`` cases from ``draw(rng)`` for which ``valid(case)`` holds (a case the reference
    cannot answer, or answers by a hair, is drawn again)."""
    cases = []
    for _ in range(tries):
        if len(cases) == count:
            break
        case = draw(rng)
        try:
            ok = valid(case)
        except (GradingError, CollectivesError):
            ok = False
        if ok and case not in cases:
            cases.append(case)
    if len(cases) < count:
        raise GradingError("the self-check could not draw its cases (a bug in the self-check)")
    return cases


def _apart(times, margin=0.03):
    """True if the fastest of ``times`` beats every other by ``margin`` at least."""
    ordered = sorted(times)
    return len(ordered) < 2 or ordered[1] > (1 + margin) * ordered[0]


def _c(answers, name, *args, **options):
    """The learner's ``name(*args)``, to be made in a process without the package."""
    return call(answers[name], *args, name=name, isolated=True, **options)


def _ref(answers, name, args, reference, ref_args=None, ref_kwargs=None, **options):
    """``check_reference`` of the learner's ``name(*args)`` against the package's
    ``reference(*ref_args, **ref_kwargs)`` (``ref_args`` default: ``args``)."""
    what = f"{name}{_args_text(args)}"
    check_args = (
        _c(answers, name, *args),
        what,
        reference,
        tuple(args if ref_args is None else ref_args),
    )
    if ref_kwargs is not None:
        check_args += (ref_kwargs,)
    return ("check_reference", check_args, options) if options else ("check_reference", check_args)


def _checked(answers, name, args, checker, extra=(), **call_options):
    """``checker(answer, what, *extra)`` of the package on the learner's ``name(*args)``
    (``extra`` default: ``args``)."""
    what = f"{name}{_args_text(args)}"
    answer = _c(answers, name, *args, **call_options)
    return ("check_reference", (1.0, what, checker, (answer, what, *(extra or args))))


def _args_text(args):
    return "(" + ", ".join(repr(a) for a in args) + ")"


# ---- cost_models: ring_all_gather -----------------------------------------------------------


def _ring_seconds(n, nbytes, alpha, bandwidth):
    return (n - 1) * (alpha + nbytes / (n * bandwidth))


def _ring_all_gather_steps(rng, a):
    return [
        (
            "check_schedule",
            (_c(a, "ring_all_gather_steps", n, allow=SCHEDULE_TOOLS), "all_gather", n),
            {
                "neighbours": "ring",
                "reference": "ring_all_gather",
                "n_steps": n - 1,
                "max_sends_per_step": 1,
                "what": f"ring_all_gather_steps({n})",
            },
        )
        for n in _draws(rng, 3, lambda r: int(r.integers(2, 21)))
    ]


def _fit_ring(rng, a):
    checks = []
    for n, alpha, bandwidth, small, large in _draws(
        rng,
        3,
        lambda r: (
            int(r.integers(2, 33)),
            _pick(r, (0.0, 1e-6, 2e-6, 5e-6, 1.5e-5)),
            _log_uniform(r, 1e9, 5e11),
            _log_uniform(r, 1e3, 1e5),
            _log_uniform(r, 1e7, 1e9),
        ),
    ):
        rows = [(s, _ring_seconds(n, s, alpha, bandwidth) * 1e6) for s in (small, large)]
        checks.append(
            _checked(
                a,
                "fit_ring_all_gather",
                (n, rows),
                "grading.collective_tasks.check_ring_fit",
                (n, rows, alpha, bandwidth),
            )
        )
    return checks


def _largest_ring(rng, a):
    def draw(r):
        nbytes, alpha = _log_uniform(r, 1e5, 1e9), _pick(r, (1e-6, 2e-6, 5e-6))
        bandwidth, n = _pick(r, (2.5e10, 4.5e10, 9e10)), int(r.integers(2, 150))
        budget = (
            _ring_seconds(n, nbytes, alpha, bandwidth)
            + _ring_seconds(n + 1, nbytes, alpha, bandwidth)
        ) / 2
        return nbytes, alpha, bandwidth, float(f"{budget:.6g}")

    return [
        _checked(a, "largest_ring_within", case, "grading.collective_tasks.check_largest_ring")
        for case in _draws(rng, 4, draw)
    ]


def _tokens_to_hide(rng, a):
    from ..algorithms import ring_all_gather
    from ..cost import time
    from ..hardware import spec
    from ..topology import ring

    checks = []
    for chip, n, d, f in _draws(
        rng,
        3,
        lambda r: (
            _pick(r, ("tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e")),
            int(r.integers(2, 33)),
            int(r.integers(4, 129)) * 128,
            int(r.integers(4, 449)) * 128,
        ),
    ):
        chip_spec = spec(chip)
        gather = time(
            ring_all_gather(n), ring(n, chip_spec.link_bandwidth, chip_spec.hop_latency), 2 * d * f
        ).seconds
        args = (chip, n, d, f)
        checks.append(
            (
                "check_close",
                (
                    _c(a, "tokens_to_hide_gather", *args, allow=("collectives.hardware",)),
                    gather * chip_spec.bf16_flops / (2 * d * f),
                    f"tokens_to_hide_gather{args}",
                ),
            )
        )
    return checks


def _better_upgrade(rng, a):
    def draw(r):
        # buffers within 20 times the crossover S* = n alpha B, where the choice is hard
        n, alpha, bandwidth = (
            _pick(r, (4, 8, 16, 32)),
            _pick(r, (1e-6, 2e-6)),
            _pick(r, (4.5e10, 4.5e11)),
        )
        return (
            n,
            _log_uniform(r, n * alpha * bandwidth / 20, n * alpha * bandwidth * 20),
            alpha,
            bandwidth,
            _pick(r, (1.25, 2, 4, 10)),
            _pick(r, (1.25, 2, 4)),
        )

    def apart(case):
        n, s, alpha, bandwidth, gain_l, gain_b = case
        return _apart(
            [
                _ring_seconds(n, s, alpha / gain_l, bandwidth),
                _ring_seconds(n, s, alpha, bandwidth * gain_b),
            ],
            0.04,
        )

    return [
        _checked(a, "better_upgrade", case, "grading.collective_tasks.check_better_upgrade")
        for case in _draws(rng, 6, draw, apart)
    ]


# ---- all_gather_reduce_scatter: rings_and_duality -------------------------------------------


def _bidirectional_steps(rng, a):
    checks = []
    for n in _draws(rng, 2, lambda r: int(r.integers(3, 13))):
        steps = run_isolated(
            a["bidirectional_ring_all_gather_steps"],
            n,
            name="bidirectional_ring_all_gather_steps",
            allow=SCHEDULE_TOOLS,
        )
        what = f"bidirectional_ring_all_gather_steps({n})"
        checks.append(
            (
                "check_schedule",
                (steps, "all_gather", n),
                {
                    "n_chunks": 2 * n,
                    "neighbours": "bidirectional_ring",
                    "n_steps": n - 1,
                    "max_sends_per_step": 2,
                    "reference": "bidirectional_ring_all_gather",
                    "what": what,
                },
            )
        )
        if not isinstance(steps, (list, tuple)):
            continue
        # the even slots travel forward and the odd slots backward, one per rank and step: each
        # half is a one-way ring all-gather (the odd half after renaming rank r to (n - r) % n
        # and slot 2c + 1 to (n - c) % n)
        try:
            even = [
                [(t[0], t[1], t[2] // 2, t[3] // 2) for t in step if t[2] % 2 == 0]
                for step in steps
            ]
            odd = [
                [
                    ((n - t[0]) % n, (n - t[1]) % n, (n - t[2] // 2) % n, (n - t[3] // 2) % n)
                    for t in step
                    if t[2] % 2 == 1
                ]
                for step in steps
            ]
        except (TypeError, IndexError):
            continue  # the form check above says what is wrong
        for half, way in ((even, "its even slots, forward"), (odd, "its odd slots, backward")):
            checks.append(
                (
                    "check_schedule",
                    (half, "all_gather", n),
                    {
                        "neighbours": "ring",
                        "n_steps": n - 1,
                        "max_sends_per_step": 1,
                        "what": f"{what} ({way}, one per rank and step)",
                    },
                )
            )
    return checks


def _all_gathers(rng):
    """All-gathers written out as plain data: (description, n, data slots, scratch slots,
    steps, steps that move data)."""
    n = int(rng.integers(2, 10))
    order = [int(x) for x in rng.permutation(n)]
    k = int(rng.integers(1, 4))
    m = 2**k
    staged = int(rng.integers(2, 7))
    staged_steps = []
    for s in range(staged - 1):
        staged_steps.append(
            [
                (r, (r + 1) % staged, (r - s) % staged, staged + (r - s) % staged)
                for r in range(staged)
            ]
        )
        staged_steps.append(
            [(r, r, staged + (r - 1 - s) % staged, (r - 1 - s) % staged) for r in range(staged)]
        )
    return [
        (
            f"ring all-gather of {n} ranks in the order {order}",
            n,
            n,
            0,
            [
                [
                    (order[p], order[(p + 1) % n], order[(p - s) % n], order[(p - s) % n])
                    for p in range(n)
                ]
                for s in range(n - 1)
            ],
            n - 1,
        ),
        (
            f"recursive-doubling all-gather of {m} ranks",
            m,
            m,
            0,
            [
                [(r, r ^ b, r // b * b + j, r // b * b + j) for r in range(m) for j in range(b)]
                for b in (2**i for i in range(k))
            ],
            k,
        ),
        (
            f"direct all-gather of {n} ranks",
            n,
            n,
            0,
            [[(s, d, s, s) for s in range(n) for d in range(n) if s != d]],
            1,
        ),
        (
            f"ring all-gather of {staged} ranks through scratch slots {staged} to {2 * staged - 1}",
            staged,
            staged,
            staged,
            staged_steps,
            2 * (staged - 1),
        ),
    ]


def _dual(rng, a):
    return [
        (
            "check_schedule",
            (_c(a, "dual", steps, chunks, allow=SCHEDULE_TOOLS), "reduce_scatter", n),
            {
                "n_chunks": chunks,
                "n_scratch": scratch,
                "n_steps": used,
                "what": f"dual({what}, {chunks})",
            },
        )
        for what, n, chunks, scratch, steps, used in _all_gathers(rng)
    ]


def _all_axes(rng, a):
    from ..hardware import spec

    checks = []
    for chip, shape, nbytes in _draws(
        rng,
        3,
        lambda r: (
            *_pick(
                r,
                (
                    ("tpu-v5e", (16, 16)),
                    ("tpu-v6e", (16, 16)),
                    ("tpu-v4", (4, 4, 4)),
                    ("tpu-v5p", (4, 4, 4)),
                    ("tpu-v5p", (8, 8, 8)),
                ),
            ),
            _log_uniform(r, 1e4, 2e9),
        ),
    ):
        chip_spec = spec(chip)
        what = f"all_axes_all_gather_seconds({chip!r}, {shape}, {nbytes!r})"
        checks.append(
            (
                "check_reference",
                (
                    _c(
                        a,
                        "all_axes_all_gather_seconds",
                        chip,
                        shape,
                        nbytes,
                        allow=("collectives.hardware",),
                    ),
                    what,
                    "analytic.torus_all_gather",
                    (shape, nbytes),
                    {
                        "alpha": chip_spec.hop_latency,
                        "bandwidth": chip_spec.link_bandwidth,
                        "concurrent": True,
                        "latency_optimal": False,
                    },
                ),
            )
        )
    return checks


_GATHERS = ["direct_all_gather", "bidirectional_ring_all_gather"]


def _candidate_seconds(names, n, nbytes, topology):
    from ..algorithms import CATALOG
    from ..cost import time

    return [time(CATALOG[name].build(n), topology, nbytes).seconds for name in names]


def _faster_gather(rng, a):
    from ..topology import ring

    def draw(r):
        # buffers within 30 times n alpha B either way, where the choice changes
        n, alpha, bandwidth = (
            int(r.integers(3, 49)),
            _pick(r, (1e-6, 2e-6)),
            _pick(r, (4.5e10, 9e10, 1e11)),
        )
        return (
            n,
            _log_uniform(r, n * alpha * bandwidth / 30, n * alpha * bandwidth * 30),
            alpha,
            bandwidth,
        )

    def apart(case):
        n, s, alpha, bandwidth = case
        return _apart(_candidate_seconds(_GATHERS, n, s, ring(n, bandwidth, alpha)))

    return [
        (
            "check_choice",
            (
                _c(a, "faster_all_gather_on_ring", *case),
                None,
                f"faster_all_gather_on_ring{_args_text(case)}",
            ),
            {
                "options": _GATHERS,
                "reference": "grading.fastest_name",
                "args": ("all_gather", case[0], case[1]),
                "kwargs": {
                    "topology": "ring",
                    "link_bandwidth": case[3],
                    "hop_latency": case[2],
                    "candidates": _GATHERS,
                },
            },
        )
        for case in _draws(rng, 6, draw, apart)
    ]


# ---- all_reduce: rabenseifner_all_reduce -----------------------------------------------------


def _rabenseifner(rng, a):
    return [
        _checked(
            a, "rabenseifner_steps", (n,), "grading.collective_tasks.check_rabenseifner_all_reduce"
        )
        for n in _draws(rng, 3, lambda r: 2 ** int(r.integers(1, 6)))
    ]


def _hierarchical(rng, a):
    return [
        _checked(
            a,
            "hierarchical_steps",
            (n,),
            "grading.collective_tasks.check_hierarchical_all_reduce",
            (n, nbytes),
        )
        for n, nbytes in _draws(
            rng, 2, lambda r: (int(r.integers(1, 5)), _pick(r, (2**30, 1e9, 2**28)))
        )
    ]


_ALL_REDUCES = ["ring_all_reduce", "rabenseifner_all_reduce", "recursive_doubling_all_reduce"]


def _fastest_all_reduce(rng, a):
    from ..algorithms import rabenseifner_all_reduce, recursive_doubling_all_reduce
    from ..algorithms import ring_all_reduce as ring_schedule
    from ..cost import time
    from ..topology import switch

    def draw(r):
        return (
            int(r.integers(2, 65)),
            _log_uniform(r, 1e3, 1e9),
            _pick(r, (1e-6, 2e-6, 5e-6)),
            _pick(r, (4.5e10, 9e10, 4.5e11)),
        )

    def apart(case):
        n, s, alpha, bandwidth = case
        topology = switch(n, bandwidth, alpha / 2)
        builders = [ring_schedule] + (
            [rabenseifner_all_reduce, recursive_doubling_all_reduce] if n & (n - 1) == 0 else []
        )
        return _apart([time(b(n), topology, s).seconds for b in builders])

    return [
        (
            "check_choice",
            (_c(a, "fastest_all_reduce", *case), None, f"fastest_all_reduce{_args_text(case)}"),
            {
                "options": _ALL_REDUCES,
                "reference": "grading.fastest_name",
                "args": ("all_reduce", case[0], case[1]),
                "kwargs": {
                    "link_bandwidth": case[3],
                    "hop_latency": case[2] / 2,
                    "candidates": _ALL_REDUCES,
                },
            },
        )
        for case in _draws(rng, 5, draw, apart)
    ]


def _hierarchical_busbw(rng, a):
    return [
        _ref(a, "hierarchical_busbw", (n,), "grading.collective_tasks.hierarchical_busbw")
        for n in _draws(rng, 3, lambda r: int(r.integers(1, 33)))
    ]


# ---- all_to_all: bruck_all_to_all ------------------------------------------------------------


def _all_to_all(name, checker):
    def build(rng, a):
        return [
            _checked(a, name, (n,), checker)
            for n in _draws(rng, 3, lambda r: int(r.integers(2, 17)))
        ]

    return build


def _dispatch(rng, a):
    from ..moe import dispatch_counts

    checks = []
    for n, tokens, top_k, seed, token_bytes, alpha, bandwidth in _draws(
        rng,
        3,
        lambda r: (
            int(r.integers(2, 7)),
            int(r.integers(8, 97)),
            int(r.integers(1, 3)),
            int(r.integers(1000)),
            _pick(r, (4096, 8192)),
            _pick(r, (1e-6, 2e-6)),
            _pick(r, (4.5e10, 4.5e11)),
        ),
    ):
        counts = dispatch_counts(n, tokens, 2 * n, top_k, skew=float(seed % 2), seed=seed).tolist()
        checks.append(
            _ref(
                a,
                "dispatch_time",
                (counts, token_bytes, alpha, bandwidth),
                "grading.dispatch_seconds",
                (counts, token_bytes),
                {"link_bandwidth": bandwidth, "hop_latency": alpha / 2},
                abs_tol=1e-18,
            )
        )
    return checks


# ---- cluster_collectives ---------------------------------------------------------------------


def _cluster_cases(rng, kind, count):
    """``count`` cases of the notebook's ``<kind>_cases``, drawn from a seed of the
    self-check's own (never the fixed cases of the hidden tests)."""
    from .tasks import cluster_collectives

    seed = f"selfcheck {int(rng.integers(1 << 62))}"
    cases = getattr(cluster_collectives, f"{kind}_cases")
    return cases(count, seed)[len(cases(0, seed)) :]


def _level_seconds(rng, a):
    return [
        _ref(a, "level_seconds", (n, nbytes, level), "grading.hierarchical_level_seconds")
        for n, nbytes in _cluster_cases(rng, "level", 3)
        for level in ("nvlink", "nic")
    ]


def _pipelined(rng, a):
    return [
        _ref(a, "pipelined_seconds", case, "grading.pipelined_hierarchical_seconds")
        for case in _cluster_cases(rng, "pipelined", 3)
    ]


def _cluster_decision(name, kind, checker, count=3):
    def build(rng, a):
        return [
            _checked(a, name, case, f"grading.tasks.cluster_collectives.{checker}")
            for case in _cluster_cases(rng, kind, count)
        ]

    return build


# ---- fabric ----------------------------------------------------------------------------------
# The cases come from the checks' own case generators (collectives.grading.tasks.fabric), under
# a course seed of the self-check's own drawn from its rng: other cases than the instructor's.


def _fabric_cases(rng, kind, count):
    from .tasks import fabric

    seed = f"selfcheck {int(rng.integers(1 << 62))}"
    cases = getattr(fabric, f"{kind}_cases")
    return cases(count, seed)[len(cases(0, seed)) :]


def _all_to_all_seconds(rng, a):
    return [
        _ref(a, "all_to_all_seconds", case, "grading.tasks.fabric.all_to_all_seconds")
        for case in _fabric_cases(rng, "all_to_all", 4)
    ]


def _simulated_busiest(rng, a):
    return [
        _ref(
            a,
            "simulated_busiest",
            (flows, paths, racks, 20_000, seed),
            "fabric.expected_max_load_exact",
            (flows, paths, racks),
            rel=0.02,
        )
        for flows, paths, racks, seed in _fabric_cases(rng, "busiest", 3)
    ]


def _fabric_decision(name, kind, checker, count=3):
    def build(rng, a):
        return [
            _checked(a, name, case, f"grading.tasks.fabric.{checker}")
            for case in _fabric_cases(rng, kind, count)
        ]

    return build


# ---- fp8 -------------------------------------------------------------------------------------


def _decode(rng, a):
    checks = []
    for _ in range(2):
        codes = [int(c) for c in rng.integers(0, 256, size=24)]
        what = "decode_e4m3(codes)"
        checks.append(
            (
                "check_reference",
                (
                    1.0,
                    what,
                    "grading.check_e4m3_values",
                    (_c(a, "decode_e4m3", codes), what, codes),
                ),
            )
        )
    return checks


def _encode(values):
    def build(rng, a):
        checks = []
        for saturate in (False, True):
            x = values(rng)
            what = f"encode_e4m3(x, saturate={saturate!r})"
            checks.append(
                (
                    "check_reference",
                    (
                        1.0,
                        what,
                        "grading.check_e4m3_codes",
                        (_c(a, "encode_e4m3", x, saturate), what, x, saturate),
                    ),
                )
            )
        return checks

    return build


def _normal_values(rng):
    """Values in E4M3's normal range, both signs: random ones and exact ties."""
    plain = [
        float(s * math.exp(rng.uniform(math.log(2.0**-6), math.log(448.0))))
        for s in rng.choice([-1.0, 1.0], size=12)
    ]
    ties = [
        float(s * (17 + 2 * int(m)) * 2.0 ** (int(e) - 11))
        for s, m, e in zip(
            rng.choice([-1.0, 1.0], size=6), rng.integers(0, 8, size=6), rng.integers(1, 14, size=6)
        )
    ]
    return plain + ties


def _edge_values(rng):
    """Subnormals and their ties, overflow, infinities and NaN."""
    sub = [float(int(k) * 2.0**-10) for k in rng.integers(1, 16, size=6)]
    tiny = [float(math.exp(rng.uniform(math.log(1e-6), math.log(2.0**-6)))) for _ in range(4)]
    big = [float(rng.uniform(448.0, 600.0)) for _ in range(3)] + [
        464.0,
        1e6,
        math.inf,
        -math.inf,
        math.nan,
    ]
    return [v * s for v, s in zip(sub + tiny, rng.choice([-1.0, 1.0], size=10))] + big


def _fresh_seed(rng):
    """A course seed of the self-check's own (never the instructor's), for the task modules'
    case generators."""
    return f"self-check {int(rng.integers(1 << 62))}"


def _drawn(cases, rng, count):
    """``count`` cases of a task module's generator ``cases(count, course_seed)``, without
    its fixed cases (those are the instructor's hidden tests'), from a fresh seed."""
    fixed = len(cases(0))
    return cases(count, course_seed=_fresh_seed(rng))[fixed:]


def _drawn_encoding(label, values):
    """:func:`_encode`'s checks of ``values``, plus lists drawn as the hidden test ``label``
    draws them (a fresh seed)."""

    def build(rng, a):
        checks = _encode(values)(rng, a)
        for x in fp8_tasks.e4m3_value_cases(label, 1, course_seed=_fresh_seed(rng)):
            for saturate in (False, True):
                what = f"encode_e4m3(drawn x, saturate={saturate!r})"
                answer = _c(a, "encode_e4m3", x, saturate)
                checks.append(
                    (
                        "check_reference",
                        (1.0, what, "grading.check_e4m3_codes", (answer, what, x, saturate)),
                    )
                )
        return checks

    return build


def _e4m3_codec(rng, a):
    return _decode(rng, a) + _drawn_encoding("test_e4m3_codec", _normal_values)(rng, a)


def _block_recipe(rng, a):
    checks = []
    for name, x, snr, flushed in _drawn(fp8_tasks.block_recipe_cases, rng, 2):
        what = f"block_recipe({name}, {snr!r}, {flushed!r})"
        answer = _c(a, "block_recipe", x, snr, flushed)
        checks.append(
            (
                "check_reference",
                (
                    1.0,
                    what,
                    "grading.tasks.fp8.check_block_recipe",
                    (answer, what, x, snr, flushed),
                ),
            )
        )
    return checks


def _delayed_recipe(rng, a):
    checks = []
    for name, amaxes in _drawn(fp8_tasks.delayed_recipe_cases, rng, 3):
        what = f"delayed_recipe({name})"
        answer = _c(a, "delayed_recipe", amaxes)
        checks.append(
            (
                "check_reference",
                (1.0, what, "grading.tasks.fp8.check_delayed_recipe", (answer, what, amaxes)),
            )
        )
    return checks


def _safe_mu(rng, a):
    checks = []
    for name, grads, merges in _drawn(fp8_tasks.safe_mu_cases, rng, 3):
        what = f"safe_mu({name})"
        answer = _c(a, "safe_mu", grads, merges)
        checks.append(
            (
                "check_reference",
                (1.0, what, "grading.tasks.fp8.check_safe_mu", (answer, what, grads, merges)),
            )
        )
    return checks


def _all_reduce_design(rng, a):
    checks = []
    for name, grads in _drawn(fp8_tasks.design_cases, rng, 3):
        what = f"design_all_reduce({name})"
        answer = _c(a, "design_all_reduce", grads)
        checks.append(
            (
                "check_reference",
                (1.0, what, "grading.tasks.fp8.check_all_reduce_design", (answer, what, grads)),
            )
        )
    return checks


# ---- planning: plan_a_training_run -----------------------------------------------------------


def _dense_layout(rng):
    layout = {}
    for axis, options in (
        ("dp", (1, 2, 4, 8)),
        ("fsdp", (1, 2, 4)),
        ("tp", (1, 2, 4, 8)),
        ("pp", (1, 1, 2, 4)),
    ):
        size = _pick(rng, options)
        if size > 1:
            layout[axis] = size
    layout = layout or {"dp": 2}
    if rng.integers(2):
        layout["zero_stage"] = _pick(rng, (1, 2))
    if layout.get("tp", 1) > 1 and rng.integers(2):
        layout["sequence_parallel"] = True
    layout["micro_batches"] = _pick(rng, (1, 2, 4)) * layout.get("pp", 1)
    return layout


def _plan_case(rng, shapes, layout_of, recipes=None):
    name = _pick(rng, tuple(shapes))
    layout = layout_of(rng)
    data = layout.get("dp", 1) * layout.get("fsdp", 1)
    batch = data * layout["micro_batches"] * _pick(rng, (1, 2, 4))
    case = (name, layout, _pick(rng, (1024, 2048, 4096, 8192)), batch)
    return case + ((_pick(rng, recipes),) if recipes else ())


def _shapes(a, *names):
    return {name: a[name] for name in names if isinstance(a.get(name), dict)}


def _planned(task, checker, shapes, layout_of, recipes=None, count=3):
    from .tasks import planning

    def build(rng, a):
        known = _shapes(a, *shapes)
        if not known:
            raise GradingError(
                f"the notebook's setup cells define none of {shapes}: run the "
                "self-check on the course's notebook"
            )
        reference = getattr(planning, task)
        checks = []
        for case in _draws(
            rng,
            count,
            lambda r: _plan_case(r, known, layout_of, recipes),
            lambda c: reference(known[c[0]], *c[1:]) is not None,
        ):
            name, *rest = case
            what = f"{task}({name}, {', '.join(repr(x) for x in rest)})"
            answer = _c(a, task, known[name], *rest)
            checks.append(
                ("check_reference", (1.0, what, checker, (answer, what, known[name], *rest)))
            )
        return checks

    return build


def _moe_layout(rng):
    layout = {"ep": _pick(rng, (2, 4, 8))}
    for axis, options in (("dp", (1, 2)), ("tp", (1, 2, 4)), ("pp", (1, 2))):
        size = _pick(rng, options)
        if size > 1:
            layout[axis] = size
    layout["micro_batches"] = _pick(rng, (1, 2)) * layout.get("pp", 1)
    return layout


_PLANNER = ("collectives.grading", "collectives.plan.sensitivity")


def _make_it_fit(rng, a):
    from .tasks import planning

    checks = []
    for _ in range(3):
        name, layout, seq_len, batch, hbm = planning.fit_case(rng)
        shape = planning.SHAPES[name]
        what = f"make_it_fit({name}, {layout}, {seq_len}, {batch}, {hbm:.4g})"
        answer = _c(a, "make_it_fit", shape, layout, seq_len, batch, hbm)
        checks.append(
            (
                "check_reference",
                (
                    1.0,
                    what,
                    "grading.plan_tasks.check_fit_change",
                    (answer, what, shape, layout, seq_len, batch, hbm),
                ),
            )
        )
    return checks


def _rival_task(function, checker, kind, count):
    def build(rng, a):
        from .tasks import planning

        checks = []
        for i in range(count):
            # the first break-even case always crosses: a None for every case fails here too
            case = planning.rival_case(rng, kind, crossing=True if i == 0 else None)
            what = f"{function}({case})"
            answer = _c(a, function, case, forbid=_PLANNER)
            checks.append(("check_reference", (1.0, what, checker, (answer, what, case))))
        return checks

    return build


# ---- real_processes --------------------------------------------------------------------------


def _own_seed(rng):
    """A course seed of the self-check's own, for the task module's drawn cases."""
    return f"selfcheck-{int(rng.integers(2**62))}"


def _recorded_sweep(a):
    from .tasks.real_processes import recorded

    if "MEASUREMENTS" not in a:
        raise AssertionError("MEASUREMENTS is not defined: record your sweep in its cell")
    return recorded(a["MEASUREMENTS"])


def _fit_alpha_beta(rng, a):
    from .tasks import real_processes as rp

    rows = _recorded_sweep(a)
    checker = "grading.tasks.real_processes.check_fit"
    checks = [
        (
            "check_reference",
            (1.0, "MEASUREMENTS", "grading.tasks.real_processes.check_sweep", (rows,)),
        )
    ]
    cases = [
        (nbytes, seconds, 4, f"MEASUREMENTS' {name} column")
        for nbytes, seconds, name in rp.sweep_columns(rows)
    ]
    cases += [
        (nbytes, seconds, n, f"a sweep on {n} ranks")
        for nbytes, seconds, n in rp.fit_cases(3, _own_seed(rng))[2:]
    ]
    for nbytes, seconds, n, label in cases:
        what = f"fit_alpha_beta of {label}"
        answer = _c(a, "fit_alpha_beta", nbytes, seconds, n)
        checks.append(("check_reference", (1.0, what, checker, (answer, what, nbytes, seconds, n))))
    return checks


def _choose_all_reduce(rng, a):
    from .tasks import real_processes as rp

    checks = []
    for table, size in rp.choice_cases(_recorded_sweep(a), 2, _own_seed(rng)):
        what = f"choose_all_reduce(<a sweep of {table[0][0]} to {table[-1][0]} bytes>, {size})"
        answer = _c(a, "choose_all_reduce", table, size)
        checks.append(
            (
                "check_reference",
                (
                    1.0,
                    what,
                    "grading.tasks.real_processes.check_choice",
                    (answer, what, table, size),
                ),
            )
        )
    return checks


def _diagnose(rng, a):
    from .tasks import real_processes as rp

    checks = []
    seed = _own_seed(rng)
    drawn = rp.diagnosis_cases(6, seed)[len(rp.diagnosis_cases(0)) :]
    for report, case in rp.broken_reports(drawn, course_seed=seed):
        what = f"diagnose(<the report of a broken ring all-reduce on {case[0]} ranks>)"
        answer = _c(a, "diagnose", report)
        checks.append(
            (
                "check_reference",
                (1.0, what, "grading.tasks.real_processes.check_diagnosis", (answer, what, *case)),
            )
        )
    return checks


def _ring_all_reduce(rng, a):
    from .tasks.real_processes import ring_cases, run_on_ranks

    report = run_on_ranks(
        call(a["ring_all_reduce"], name="ring_all_reduce", isolated=True),
        cases=ring_cases(3, _own_seed(rng))[1:],
        world_size=4,
    )
    return [
        (
            "check_reference",
            (
                1.0,
                "ring_all_reduce on 4 processes",
                "grading.processes.check_ring_all_reduce",
                (report,),
            ),
        )
    ]


# ---- topology_reasoning ----------------------------------------------------------------------


def _torus_case(rng, dims=None):
    dims = dims or int(rng.integers(1, 4))
    shape = tuple(int(x) for x in rng.integers(1, 17 if dims < 3 else 9, size=dims))
    wrap = tuple(bool(w) for w in rng.integers(0, 2, size=dims))
    return shape, wrap


def _hops(rng, a):
    def draw(r):
        shape, wrap = _torus_case(r)
        return (
            shape,
            wrap,
            tuple(int(r.integers(0, s)) for s in shape),
            tuple(int(r.integers(0, s)) for s in shape),
        )

    return [_ref(a, "slice_hops", case, "grading.slice_hops") for case in _draws(rng, 8, draw)]


def _diameter(rng, a):
    return [
        _ref(a, "slice_diameter", case, "grading.slice_diameter")
        for case in _draws(rng, 5, _torus_case)
    ]


def _even_torus(rng):
    shape, wrap = _torus_case(rng, int(rng.integers(2, 4)))
    return tuple(2 * ((s + 1) // 2) for s in shape), wrap


def _bisection(rng, a):
    return [
        _ref(
            a,
            "slice_bisection_bandwidth",
            (*case, _pick(rng, (1e9, 4.5e10, 9e10))),
            "grading.slice_bisection_bandwidth",
        )
        for case in _draws(rng, 5, _even_torus)
    ]


def _all_gather_plan(rng, a):
    from .tasks.topology_reasoning import PLAN_CHIPS, largest_all_gather_within

    # graded by what the plan does: its time within the budget, its bytes against the best order
    def draw(r):
        chip = _pick(r, PLAN_CHIPS)
        sizes = (1, 2, 4, 8, 16)
        shape = tuple(_pick(r, sizes) for _ in range(2 if chip == "tpu-v5e" else 3))
        return (chip, shape, _log_uniform(r, 3e-5, 5e-3))

    def mixed(r):
        # a v5e slice with a ring and a chain, where the order of the axes matters
        shape = _pick(r, ((_pick(r, (2, 4, 8)), 16), (16, _pick(r, (2, 4, 8)))))
        return ("tpu-v5e", shape, _log_uniform(r, 3e-5, 5e-3))

    fits = lambda c: largest_all_gather_within(*c)[1] > 0
    cases = _draws(rng, 1, mixed, fits)
    cases += _draws(rng, 3, draw, lambda c: fits(c) and c not in cases)

    return [
        (
            "check_reference",
            (
                1.0,
                f"slice_all_gather_plan{_args_text(case)}",
                "grading.tasks.topology_reasoning.check_all_gather_plan",
                (
                    _c(a, "slice_all_gather_plan", *case),
                    f"slice_all_gather_plan{_args_text(case)}",
                    *case,
                ),
            ),
        )
        for case in cases
    ]


def _best_shape(rng, a):
    from .tasks.topology_reasoning import best_v5e_slice_shape

    # graded by cost: a shape as fast as the package's best passes
    return [
        (
            "check_no_worse",
            (_c(a, "best_v5e_slice_shape", *case), f"best_v5e_slice_shape{_args_text(case)}"),
            {
                "cost": "grading.v5e_slice_all_reduce_seconds",
                "reference": "grading.best_v5e_slice_shape",
                "args": case,
            },
        )
        for case in _draws(
            rng,
            5,
            lambda r: (2 ** int(r.integers(3, 9)), _log_uniform(r, 1e3, 1e9)),
            lambda c: best_v5e_slice_shape(*c) is not None,
        )
    ]


def _wrapped_axis(rng, a):
    from .tasks.topology_reasoning import wrapped_axis_for

    return [
        (
            "check_no_worse",
            (_c(a, "wrapped_axis_for", *case), f"wrapped_axis_for{_args_text(case)}"),
            {
                "cost": "grading.wrapped_axis_step_seconds",
                "reference": "grading.wrapped_axis_for",
                "args": case,
                "options": ("data", "model"),
            },
        )
        for case in _draws(
            rng,
            6,
            lambda r: (
                # many small gathers half the time: where the hops' latency decides
                _pick(r, (2, 4, 8)),
                _log_uniform(r, 1e4, 1e9),
                _pick(r, (_log_uniform(r, 1e3, 1e5), _log_uniform(r, 1e5, 1e8))),
                int(r.integers(1, 101)),
            ),
            lambda c: wrapped_axis_for(*c) is not None,
        )
    ]


#: every graded notebook's tasks, by the notebook's name (one Task per autograded test cell)
TASKS = {
    "ring_all_gather": (
        Task("test_ring_all_gather_steps", ("ring_all_gather_steps",), _ring_all_gather_steps),
        Task("test_fit_ring_all_gather", ("fit_ring_all_gather",), _fit_ring),
        Task("test_largest_ring_within", ("largest_ring_within",), _largest_ring),
        Task("test_tokens_to_hide_gather", ("tokens_to_hide_gather",), _tokens_to_hide),
        Task("test_better_upgrade", ("better_upgrade",), _better_upgrade),
    ),
    "rings_and_duality": (
        Task(
            "test_bidirectional_ring_all_gather_steps",
            ("bidirectional_ring_all_gather_steps",),
            _bidirectional_steps,
        ),
        Task("test_dual", ("dual",), _dual),
        Task("test_all_axes_all_gather_seconds", ("all_axes_all_gather_seconds",), _all_axes),
        Task("test_faster_all_gather_on_ring", ("faster_all_gather_on_ring",), _faster_gather),
    ),
    "rabenseifner_all_reduce": (
        Task("test_rabenseifner_steps", ("rabenseifner_steps",), _rabenseifner),
        Task("test_hierarchical_steps", ("hierarchical_steps",), _hierarchical),
        Task("test_fastest_all_reduce", ("fastest_all_reduce",), _fastest_all_reduce),
        Task("test_hierarchical_busbw", ("hierarchical_busbw",), _hierarchical_busbw),
    ),
    "bruck_all_to_all": (
        Task(
            "test_bruck_steps",
            ("bruck_steps",),
            _all_to_all("bruck_steps", "grading.collective_tasks.check_bruck_all_to_all"),
        ),
        Task(
            "test_pairwise_steps",
            ("pairwise_steps",),
            _all_to_all("pairwise_steps", "grading.collective_tasks.check_pairwise_all_to_all"),
        ),
        Task(
            "test_chain_steps",
            ("chain_steps",),
            _all_to_all("chain_steps", "grading.collective_tasks.check_chain_all_to_all"),
        ),
        Task("test_dispatch_time", ("dispatch_time",), _dispatch),
    ),
    "cluster_collectives": (
        Task("test_level_seconds", ("level_seconds",), _level_seconds),
        Task("test_pipelined_seconds", ("pipelined_seconds",), _pipelined),
        Task(
            "test_choose_segments",
            ("choose_segments",),
            _cluster_decision("choose_segments", "segments", "check_segments"),
        ),
        Task(
            "test_mesh_placement",
            ("mesh_placement",),
            _cluster_decision("mesh_placement", "placement", "check_mesh_placement"),
        ),
        Task(
            "test_rail_plan",
            ("rail_plan",),
            _cluster_decision("rail_plan", "rail_plan", "check_rail_plan"),
        ),
    ),
    "fabric": (
        Task("test_all_to_all_seconds", ("all_to_all_seconds",), _all_to_all_seconds),
        Task("test_simulated_busiest", ("simulated_busiest",), _simulated_busiest),
        Task(
            "test_design_fabric",
            ("design_fabric",),
            _fabric_decision("design_fabric", "design", "check_design"),
        ),
        Task(
            "test_ring_qps",
            ("ring_qps",),
            _fabric_decision("ring_qps", "ring_qps", "check_ring_qps"),
        ),
        Task(
            "test_worst_cable",
            ("worst_cable",),
            _fabric_decision("worst_cable", "worst_cable", "check_worst_cable", 2),
        ),
    ),
    "fp8": (
        Task("test_e4m3_codec", ("decode_e4m3", "encode_e4m3"), _e4m3_codec),
        Task("test_e4m3_edges", ("encode_e4m3",), _drawn_encoding("test_e4m3_edges", _edge_values)),
        Task("test_block_recipe", ("block_recipe",), _block_recipe, timeout=200.0),
        Task("test_delayed_recipe", ("delayed_recipe",), _delayed_recipe),
        Task("test_safe_mu", ("safe_mu",), _safe_mu),
        Task("test_all_reduce_design", ("design_all_reduce",), _all_reduce_design, timeout=200.0),
    ),
    "plan_a_training_run": (
        Task(
            "test_step_collectives",
            ("step_collectives",),
            _planned(
                "step_collectives",
                "grading.plan_tasks.check_step_collectives",
                ("SHAPE_8B", "SHAPE_70B"),
                _dense_layout,
            ),
        ),
        Task(
            "test_ep_all_to_all",
            ("ep_all_to_all",),
            _planned(
                "ep_all_to_all",
                "grading.plan_tasks.check_ep_all_to_all",
                ("SHAPE_MIXTRAL",),
                _moe_layout,
            ),
        ),
        Task(
            "test_memory_per_device",
            ("memory_per_device",),
            _planned(
                "memory_per_device",
                "grading.plan_tasks.check_memory_per_device",
                ("SHAPE_8B", "SHAPE_70B"),
                _dense_layout,
                recipes=("bf16", "fp8"),
                count=4,
            ),
        ),
        Task("test_make_it_fit", ("make_it_fit",), _make_it_fit, timeout=200.0),
        Task(
            "test_flipping_assumption",
            ("flipping_assumption",),
            _rival_task(
                "flipping_assumption", "grading.plan_tasks.check_flipping_assumption", "flip", 2
            ),
            timeout=200.0,
        ),
        Task(
            "test_breakeven_mfu",
            ("breakeven_mfu",),
            _rival_task("breakeven_mfu", "grading.plan_tasks.check_breakeven_mfu", "breakeven", 2),
            timeout=200.0,
        ),
    ),
    "real_processes": (
        Task("test_fit_alpha_beta", ("fit_alpha_beta",), _fit_alpha_beta),
        Task("test_choose_all_reduce", ("choose_all_reduce",), _choose_all_reduce),
        Task("test_diagnose", ("diagnose",), _diagnose),
        Task("test_ring_all_reduce", ("ring_all_reduce",), _ring_all_reduce),
    ),
    "topology_reasoning": (
        Task("test_slice_hops", ("slice_hops",), _hops),
        Task("test_slice_diameter", ("slice_diameter",), _diameter),
        Task("test_slice_bisection_bandwidth", ("slice_bisection_bandwidth",), _bisection),
        Task("test_slice_all_gather_plan", ("slice_all_gather_plan",), _all_gather_plan),
        Task("test_best_v5e_slice_shape", ("best_v5e_slice_shape",), _best_shape),
        Task("test_wrapped_axis_for", ("wrapped_axis_for",), _wrapped_axis),
    ),
}


# ---- running a notebook ----------------------------------------------------------------------


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def read_notebook(path):
    """The notebook at ``path`` as a dict; a :class:`~collectives.GradingError` if it is not
    one the self-check knows."""
    path = Path(path)
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GradingError(f"cannot read {path} as a notebook: {exc}") from None
    if path.stem not in TASKS:
        raise GradingError(
            f"{path.name} is not one of the course's graded notebooks "
            f"({', '.join(n + '.ipynb' for n in sorted(TASKS))}); keep its name"
        )
    return notebook


def load_answers(notebook, name="notebook"):
    """Run the notebook's setup cells and answer cells (in order, in a fresh namespace, each
    registered with :mod:`linecache` so that a function's source can be read back as in
    Jupyter) and return the namespace. An answer cell that raises leaves its names undefined;
    a setup cell that raises stops with a :class:`~collectives.GradingError` (a package it
    needs is missing, for instance)."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    for k, cell in enumerate(notebook.get("cells", [])):
        meta = _nbgrader(cell)
        if cell.get("cell_type") != "code" or meta.get("grade"):
            continue  # test cells and markdown
        answer = bool(meta.get("solution"))
        if not answer and not meta.get("locked"):
            continue  # the learner's scratch cells
        source = _source(cell)
        filename = f"<{name} cell {k}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), namespace)
        except Exception as exc:  # reported, never raised
            if not answer:
                raise GradingError(
                    f"the notebook's setup cell {k} fails: {type(exc).__name__}: {exc}"
                ) from None
    return namespace


def _first_line(exc):
    text = str(exc).strip() or type(exc).__name__
    line = text.split("\n", 1)[0]
    return line if len(line) <= 400 else line[:397] + "..."


def check_notebook(path, seed=None):
    """``(results, written)``: a :class:`TaskResult` per autograded task of the notebook at
    ``path`` (on fresh cases from ``seed``, random if None) and ``{grade_id: points}`` of its
    written answers (not scored here)."""
    path = Path(path)
    notebook = read_notebook(path)
    points, written = {}, {}
    for cell in notebook.get("cells", []):
        meta = _nbgrader(cell)
        if meta.get("grade"):
            (written if meta.get("solution") else points)[meta["grade_id"]] = meta.get("points", 0)
    answers = load_answers(notebook, path.stem)
    rng = np.random.default_rng(seed)
    results = []
    for task in TASKS[path.stem]:
        worth = points.get(task.test, 0)
        missing = [n for n in task.functions if not callable(answers.get(n))]
        if missing:
            results.append(
                TaskResult(
                    task.test,
                    task.functions,
                    worth,
                    False,
                    f"{', '.join(missing)} is not defined: its cell did not run (an error in it?)",
                )
            )
            continue
        try:
            checks = task.build(rng, answers)
            recheck(*checks, timeout=task.timeout)
        except Exception as exc:  # a failing task, reported
            results.append(TaskResult(task.test, task.functions, worth, False, _first_line(exc)))
            continue
        results.append(
            TaskResult(task.test, task.functions, worth, True, f"{len(checks)} fresh checks passed")
        )
    return results, written


def _report(path, results, written, seed):
    lines = [f"Self-check of {Path(path).name} on fresh cases (seed {seed}):"]
    for r in results:
        got = r.points if r.passed else 0
        label = ", ".join(r.functions)
        lines.append(
            f"  {got:g}/{r.points:g}  {label}: {'passed' if r.passed else 'FAILED'} - {r.message}"
        )
    for grade_id, worth in written.items():
        lines.append(
            f"  -/{worth:g}  {grade_id}: a written answer, graded by hand; "
            "--model-answers shows a model answer after you have written yours"
        )
    total = sum(r.points for r in results)
    earned = sum(r.points for r in results if r.passed)
    lines.append(
        f"Score: {earned:g} of {total:g} autograded points"
        + (f" (written answers: {sum(written.values()):g} more, graded by hand)" if written else "")
        + "."
    )
    lines.append(
        "These cases are the self-check's own; your instructor's hidden tests check others."
    )
    return "\n".join(lines)


def main(argv=None):
    """The command line: ``python -m collectives.grading.selfcheck NOTEBOOK [--seed N]
    [--model-answers]``. Exit status 0 when every autograded task passed, 1 otherwise, 2 for a
    notebook it cannot check."""
    parser = argparse.ArgumentParser(
        prog="python -m collectives.grading.selfcheck",
        description="Score a graded notebook of the course on fresh random cases (a self-check "
        "for learners; it does not know the instructor's hidden tests).",
    )
    parser.add_argument("notebook", help="the .ipynb file, with its name as downloaded")
    parser.add_argument("--seed", type=int, default=None, help="repeat a run's cases")
    parser.add_argument(
        "--model-answers",
        action="store_true",
        help="print a model answer and rubric for each written answer",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(10**6))
    try:
        if args.model_answers:
            stem = Path(args.notebook).stem
            if stem not in MODEL_ANSWERS:
                raise GradingError(f"{Path(args.notebook).name} has no written answer")
            for grade_id, text in MODEL_ANSWERS[stem].items():
                print(f"--- {grade_id}: a model answer ---\n{text}\n")
            return 0
        results, written = check_notebook(args.notebook, seed)
    except GradingError as exc:
        print(f"selfcheck: {exc}", file=sys.stderr)
        return 2
    print(_report(args.notebook, results, written, seed))
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
