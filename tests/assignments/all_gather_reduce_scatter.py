"""all_gather_reduce_scatter (exercises/source/all_gather_reduce_scatter/rings_and_duality.ipynb,
10 points): what the pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (the
bidirectional ring and the all-axes estimate right, a ``dual`` that forgets to reverse the order
of the steps, the choice blank, the written answer half right), *visible_only* (answers that
pass every visible test but fail hidden ones: link speeds written in for the two chips of the
visible test, a choice by a fixed size threshold), *hostile* (wrong answers behind
monkeypatching of ``collectives``, ``collectives.grading``, ``math.isclose``, builtins the
visible tests use and IPython, lying floats, edited test cells; its choice of algorithm is
genuinely right), and the attacks every task must survive: *wrong* and *wrong_loads* (two
plausible wrong answers per task: 0 everywhere), *variant* (right answers written differently:
every point) and *shortcut* (answers that call the package: 0 everywhere, each refused with
the name it used).

A ``dual`` that reverses the ranks but not the slots (``(dst, src, src_chunk, dst_chunk)``)
is right on every all-gather without scratch slots in which each rank receives each chunk once
(there every transfer keeps its slot number: a slot that receives another shard would have to
be overwritten, and the dual of an overwrite is not a reduce-scatter). The tests therefore also
give ``dual`` all-gathers that stage chunks through scratch slots (``check_schedule(...,
n_scratch=...)``), where every transfer's two slots differ; *wrong_loads* hands in that dual.
"""

from collectives.grading.isolation import FORBIDDEN, NO_PACKAGE

from assignments import Error, origin_attack, submission

NOTEBOOK = "rings_and_duality"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_bidirectional_ring_all_gather_steps": 3,
        "test_dual": 2,
        "test_all_axes_all_gather_seconds": 2,
        "written_axes": 1,
        "test_faster_all_gather_on_ring": 2,
    }
}
MAX_SCORE = 10
# each solution cell defines the function of its name, graded by the test cell test_<name>
SOLUTIONS = {
    NOTEBOOK: (
        "bidirectional_ring_all_gather_steps",
        "dual",
        "all_axes_all_gather_seconds",
        "faster_all_gather_on_ring",
    )
}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_axes",)}
# half right by the rubric: the 64 MB reason is missing
PARTIAL_WRITTEN = """At 64 kB both take about 30 us: the time is the 30 hop latencies, the
same number of steps either way, so halving the bytes changes little. At 64 MB it is faster
(384 us instead of 738 us)."""

# Reversed transfers, but the steps in their original order: the partial sums start moving
# before they have been formed.
PARTIAL_DUAL = """
def dual(steps, n_chunks):
    return [[(dst, src, dst_chunk, src_chunk, "reduce") for src, dst, src_chunk, dst_chunk in step]
            for step in steps]
"""

# Right for the two chips of the visible test, whose link speeds it writes in; wrong for a
# v4 slice (45 GB/s links, not 90).
VISIBLE_ONLY_ALL_AXES = """
def all_axes_all_gather_seconds(chip, shape, nbytes):
    bandwidth = 45e9 if chip == "tpu-v5e" else 90e9
    d, m = len(shape), shape[0]
    n = m ** d
    return d * (m - 1) * 1e-6 + (nbytes / d) * (n - 1) / n / (2 * bandwidth)
"""

# A rule of thumb instead of the two costs: right for 8 chips, wrong for 3.
VISIBLE_ONLY_CHOICE = """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    return "direct_all_gather" if nbytes < 1e6 else "bidirectional_ring_all_gather"
"""

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "bidirectional_ring_all_gather_steps": '''
import builtins
import math
import sys
import types
import collectives
import collectives.analytic
import collectives.grading
import collectives.transforms

def _always_pass(*args, **kwargs):
    return None

class _Equal(list):
    def __eq__(self, other):
        return True

_real_time = collectives.time

def _tamper():
    """Disable every check in reach (again: each hidden test reloads collectives.grading)."""
    global check_schedule, check_close, check_reference, check_choice
    collectives.verify = _always_pass
    collectives.simulate = lambda schedule, inputs: inputs
    collectives.transforms.dual = lambda schedule, **kwargs: schedule
    collectives.analytic.torus_all_gather = lambda *args, **kwargs: 1.0
    # cl.time says 1 s on every torus (and tells the truth elsewhere)
    collectives.time = lambda schedule, topology, nbytes: (
        types.SimpleNamespace(seconds=1.0) if topology.kind == "torus"
        else _real_time(schedule, topology, nbytes))
    for module in [collectives.grading] + [m for key, m in list(sys.modules.items())
                                           if key.startswith("collectives.grading.")]:
        for name in dir(module):
            if name.startswith("check") or name in ("recheck", "call", "_compare"):
                setattr(module, name, _always_pass)
    check_schedule = check_close = check_reference = check_choice = _always_pass
    math.isclose = lambda *args, **kwargs: True

_tamper()
sorted = lambda *args, **kwargs: _Equal()     # the visible direction check compares sorted(...)
get_ipython().showtraceback = lambda *args, **kwargs: None
get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)

def bidirectional_ring_all_gather_steps(n):
    # a correct all-gather, but both halves travel forward: one direction of every link idles
    return [[(r, (r + 1) % n, 2 * ((r - s) % n) + h, 2 * ((r - s) % n) + h)
             for r in range(n) for h in (0, 1)] for s in range(n - 1)]
''',
    "dual": """
_tamper()

def dual(steps, n_chunks):
    # copies instead of additions: every copy overwrites the receiver's contribution
    return [[(dst, src, dst_chunk, src_chunk, "copy")
             for src, dst, src_chunk, dst_chunk, *_ in step]
            for step in reversed(steps)]
""",
    "all_axes_all_gather_seconds": """
_tamper()

range = lambda *args: ()
expected = 1.0

def all_axes_all_gather_seconds(chip, shape, nbytes):
    class _Liar(float):                 # inside: the graded re-run rebuilds the function only
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return _Liar(1.0)
""",
    "faster_all_gather_on_ring": """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    ring = (n - 1) * (alpha + nbytes / (2 * n * bandwidth))
    busiest = n * (n + 2) / 8 if n % 2 == 0 else (n * n - 1) / 8
    direct = (n // 2) * alpha + busiest * nbytes / (n * bandwidth)
    return "direct_all_gather" if direct < ring else "bidirectional_ring_all_gather"
""",
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {
    "test_bidirectional_ring_all_gather_steps": "print('all tests passed')",
    "test_all_axes_all_gather_seconds": "pass",
}


# ---- wrong: plausible mistakes, two per task (every one must score 0) -----------------------

WRONG = {
    # the backward halves forward the shard that came from behind, as the forward ones do
    "bidirectional_ring_all_gather_steps": """
def bidirectional_ring_all_gather_steps(n):
    return [[t for r in range(n) for t in ((r, (r + 1) % n, 2 * ((r - s) % n), 2 * ((r - s) % n)),
                                           (r, (r - 1) % n, 2 * ((r - s) % n) + 1,
                                            2 * ((r - s) % n) + 1))]
            for s in range(n - 1)]
""",
    # steps run backwards, but every transfer keeps its direction
    "dual": """
def dual(steps, n_chunks):
    return [[(src, dst, src_chunk, dst_chunk, "reduce") for src, dst, src_chunk, dst_chunk in step]
            for step in reversed(steps)]
""",
    # one axis after another with the whole buffer: the shards are not cut into parts
    "all_axes_all_gather_seconds": """
def all_axes_all_gather_seconds(chip, shape, nbytes):
    topology = cl.hardware.preset(chip, shape=shape)
    bandwidth, alpha = topology.link_bandwidth[0], topology.link_latency[0]
    n, seconds, gathered = 1, 0.0, 1
    for m in shape:
        n *= m
    for m in shape:
        gathered *= m
        seconds += (m - 1) * (alpha + nbytes * gathered / n / (2 * m * bandwidth))
    return float(seconds)
""",
    # the direct all-gather charged one hop of latency, as if every destination were next door
    "faster_all_gather_on_ring": """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    ring = (n - 1) * (alpha + nbytes / (2 * n * bandwidth))
    busiest = n * (n + 2) / 8 if n % 2 == 0 else (n * n - 1) / 8
    direct = alpha + busiest * nbytes / (n * bandwidth)
    return "direct_all_gather" if direct < ring else "bidirectional_ring_all_gather"
""",
    # the reasons swapped: 0 by the rubric
    "written_axes": """Gathering both axes at once needs fewer steps, so it wins at 64 MB (384 us
instead of 738 us); at 64 kB the links are the bottleneck, so it cannot help.""",
}

WRONG_LOADS = {
    # a correct all-gather, but both halves travel forward: one direction of every link idles
    "bidirectional_ring_all_gather_steps": """
def bidirectional_ring_all_gather_steps(n):
    return [[(r, (r + 1) % n, 2 * ((r - s) % n) + h, 2 * ((r - s) % n) + h)
             for r in range(n) for h in (0, 1)] for s in range(n - 1)]
""",
    # ranks reversed but not the slots: right wherever a transfer keeps its slot number, wrong
    # through scratch slots (and the first write into a scratch slot taken as a copy, as the
    # task says, but judged by the slot it writes, dst_chunk)
    "dual": """
def dual(steps, n_chunks):
    out, filled = [], set()
    for step in reversed(steps):
        new = []
        for src, dst, src_chunk, dst_chunk in step:
            first = dst_chunk >= n_chunks and (src, dst_chunk) not in filled
            filled.add((src, dst_chunk))
            new.append((dst, src, src_chunk, dst_chunk, "copy" if first else "reduce"))
        out.append(new)
    return out
""",
    # The Scaling Book's bandwidth term V / (W x axes) alone: the hop latencies forgotten
    "all_axes_all_gather_seconds": """
def all_axes_all_gather_seconds(chip, shape, nbytes):
    topology = cl.hardware.preset(chip, shape=shape)
    return nbytes / (2 * float(topology.link_bandwidth[0]) * len(shape))
""",
    # the odd-n load (n^2 - 1) / 8 of the busiest link used for even n too
    "faster_all_gather_on_ring": """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    ring = (n - 1) * (alpha + nbytes / (2 * n * bandwidth))
    direct = (n // 2) * alpha + (n * n - 1) / 8 * nbytes / (n * bandwidth)
    return "direct_all_gather" if direct < ring else "bidirectional_ring_all_gather"
""",
}

# ---- variant: right, written differently (every one must score every point) ----------------

VARIANT = {
    # the backward halves first, each direction from its own list of newest shards
    "bidirectional_ring_all_gather_steps": """
def bidirectional_ring_all_gather_steps(n):
    forward, backward = list(range(n)), list(range(n))   # the shard each rank passes on next
    steps = []
    for _ in range(n - 1):
        step = [(r, (r - 1) % n, 2 * backward[r] + 1, 2 * backward[r] + 1) for r in range(n)]
        step += [(r, (r + 1) % n, 2 * forward[r], 2 * forward[r]) for r in range(n)]
        steps.append(step)
        forward = [forward[(r - 1) % n] for r in range(n)]
        backward = [backward[(r + 1) % n] for r in range(n)]
    return steps
""",
    # the copies found first: the last read of each scratch slot in the all-gather is the
    # first write into it in the reduce-scatter
    "dual": """
def dual(steps, n_chunks):
    last_read = {}
    for s, step in enumerate(steps):
        for i, t in enumerate(step):
            if t[2] >= n_chunks:
                last_read[(t[0], t[2])] = (s, i)
    return [[(t[1], t[0], t[3], t[2],
              "copy" if last_read.get((t[0], t[2])) == (s, i) else "reduce")
             for i, t in enumerate(steps[s])] for s in range(len(steps) - 1, -1, -1)]
""",
    # the closed form: d (m - 1) hops, and the bandwidth term (S / d)(n - 1) / n / (2B)
    "all_axes_all_gather_seconds": """
def all_axes_all_gather_seconds(chip, shape, nbytes):
    topology = cl.hardware.preset(chip, shape=shape)
    bandwidth = float(topology.link_bandwidth.max())
    alpha = float(topology.link_latency.max())
    d, m = len(shape), shape[0]
    n = m ** d
    return d * (m - 1) * alpha + (nbytes / d) * (n - 1) / n / (2 * bandwidth)
""",
    # the busiest link's load counted: transfers of 1 .. n // 2 hops forward
    "faster_all_gather_on_ring": """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    shard_seconds = nbytes / n / bandwidth
    ring = (n - 1) * (alpha + shard_seconds / 2)
    busiest = sum(range(1, n // 2 + 1))
    direct = (n // 2) * alpha + busiest * shard_seconds
    return "bidirectional_ring_all_gather" if ring <= direct else "direct_all_gather"
""",
    "written_axes": """64 MB is bandwidth-bound: one axis at a time (738 us) the last stage pushes
almost the whole buffer through the axis-1 links while the axis-0 links do nothing; with the
shards split in two halves going round the axes in opposite orders, both axes carry half of
the bytes all the time, so about 384 us. 64 kB is latency-bound: 30 hops of 1 us either way
(30.7 vs 30.4 us), and the transfer time that gets halved is tiny.""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "bidirectional_ring_all_gather_steps": """
def bidirectional_ring_all_gather_steps(n):
    schedule = cl.algorithms.bidirectional_ring_all_gather(n)
    return [[t[:4] for t in step] for step in schedule.to_lists()]
""",
    "dual": """
from collectives.transforms import dual as _package_dual

def dual(steps, n_chunks):
    n = 1 + max([max(t[0], t[1]) for step in steps for t in step] + [0])
    slots = 1 + max([max(t[2], t[3]) for step in steps for t in step] + [n_chunks - 1])
    return _package_dual(cl.Schedule("all_gather", n, n_chunks, steps,
                                     n_scratch=slots - n_chunks)).to_lists()
""",
    "all_axes_all_gather_seconds": """
def all_axes_all_gather_seconds(chip, shape, nbytes):
    schedule = cl.algorithms.torus_all_gather(shape, concurrent=True, latency_optimal=False)
    return cl.time(schedule, cl.hardware.preset(chip, shape=shape), nbytes).seconds
""",
    "faster_all_gather_on_ring": """
def faster_all_gather_on_ring(n, nbytes, alpha, bandwidth):
    import collectives
    return collectives.grading.fastest_name(
        "all_gather", n, nbytes, topology="ring", link_bandwidth=bandwidth, hop_latency=alpha,
        candidates=["direct_all_gather", "bidirectional_ring_all_gather"])
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK] + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("bidirectional_ring_all_gather_steps", "all_axes_all_gather_seconds"),
            replaced={"dual": PARTIAL_DUAL, "written_axes": PARTIAL_WRITTEN},
        )
    },
    "visible_only": {
        NOTEBOOK: submission(
            solved=("bidirectional_ring_all_gather_steps", "dual"),
            replaced={
                "all_axes_all_gather_seconds": VISIBLE_ONLY_ALL_AXES,
                "faster_all_gather_on_ring": VISIBLE_ONLY_CHOICE,
            },
        )
    },
    "hostile": {
        NOTEBOOK: submission(
            replaced={**HOSTILE, "written_axes": "All tests passed."}, edited_tests=HOSTILE_TESTS
        )
    },
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong_loads": {NOTEBOOK: submission(replaced=WRONG_LOADS)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    # the written answer handed in untouched: 0 by nbgrader itself
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # ring and all-axes estimate right (3 + 2); dual wrong; the choice blank; the written
    # answer half right by the rubric (0.5, given by hand)
    "partial": {
        NOTEBOOK: {
            "test_bidirectional_ring_all_gather_steps": 3,
            "test_dual": 0,
            "test_all_axes_all_gather_seconds": 2,
            "written_axes": 0.5,
            "test_faster_all_gather_on_ring": 0,
        }
    },
    # ring and dual right (3 + 2); the estimate and the choice pass their visible tests only;
    # no written answer
    "visible_only": {
        NOTEBOOK: {
            "test_bidirectional_ring_all_gather_steps": 3,
            "test_dual": 2,
            "test_all_axes_all_gather_seconds": 0,
            "written_axes": 0,
            "test_faster_all_gather_on_ring": 0,
        }
    },
    # every tampering fails; only its genuinely right choice earns its 2 points
    "hostile": {
        NOTEBOOK: {
            "test_bidirectional_ring_all_gather_steps": 0,
            "test_dual": 0,
            "test_all_axes_all_gather_seconds": 0,
            "written_axes": 0,
            "test_faster_all_gather_on_ring": 2,
        }
    },
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "wrong_loads": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
}

ERRORS = {
    # the visible test explains the unreversed dual step by step against the correct one
    "partial": {
        NOTEBOOK: {
            "test_dual": Error(
                startswith="dual(ring all-gather of 4 ranks, 4) does not compute the "
                "reduce-scatter: after the last step, rank 0 chunk 0 holds chunk 0 summed over 2 "
                "of 4 ranks (0, 1); ",
                contains="Step by step against the reference dual(ring_all_gather): after step 0, "
                "rank 0 chunk 0 holds chunk 0 summed over 2 of 4 ranks (0, 1); in the reference it "
                "holds chunk 0 of rank 0.",
            )
        }
    },
    "visible_only": {
        NOTEBOOK: {
            # a v4 cube: 9 us of hops + (1e6)(63/64)/(2 x 90e9) = 14.46875 us instead of
            # + (1e6)(63/64)/(2 x 45e9) = 19.9375 us
            "test_all_axes_all_gather_seconds": Error(
                startswith="all_axes_all_gather_seconds('tpu-v4', (4, 4, 4), 3000000.0) is 1.44687",
                contains="expected 1.99374",
            ),
            # (in fragments without quotes: the feedback HTML shows quotes unescaped)
            "test_faster_all_gather_on_ring": Error(
                startswith="faster_all_gather_on_ring(3, 1000000000.0, 1e-06, 45000000000.0) is ",
                contains=(
                    "bidirectional_ring_all_gather",
                    ", but the answer is ",
                    "direct_all_gather",
                ),
            ),
        }
    },
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts
    "hostile": {
        NOTEBOOK: {
            "test_bidirectional_ring_all_gather_steps": Error(
                startswith="bidirectional_ring_all_gather_steps(3) (odd slots, which must travel "
                "backward, one per rank and step; checked as a forward ring after "
                "renaming rank r to (n - r) % n and slot 2c + 1 to (n - c) % n): step 0 "
                "sends from rank 0 to rank 2"
            ),
            "test_dual": Error(
                startswith="dual(ring all-gather of 2 ranks, 2) does not compute the "
                "reduce-scatter: after the last step, rank 0 chunk 0 holds chunk 0 of rank 1; "
                "reduce_scatter needs chunk 0 summed over all 2 ranks there (last written at step "
                "0)\n\nThis cell has 16 more failing checks:"
            ),
            # the lying float arrives as the plain 1.0; a v5e pod with no bytes: 30 hops of 1 us
            "test_all_axes_all_gather_seconds": Error(
                startswith="all_axes_all_gather_seconds('tpu-v5e', (16, 16), 0.0) is 1.0, "
                "expected 2.99999"
            ),
        }
    },
}

# the re-run refuses each shortcut, naming what it used and what the task allows
_SCHEDULE_TOOLS = (
    "collectives.CollectivesError, collectives.Schedule, "
    "collectives.ScheduleError, collectives.Step, collectives.simulate, "
    "collectives.topology, collectives.verify"
)
ERRORS["shortcut"] = {
    NOTEBOOK: {
        "test_bidirectional_ring_all_gather_steps": Error(
            startswith=f"bidirectional_ring_all_gather_steps(1) raised ImportError: "
            f"collectives.algorithms {FORBIDDEN}: write that part yourself (here you may "
            f"use only {_SCHEDULE_TOOLS}; "
        ),
        "test_dual": Error(
            startswith=f"dual([], 1) raised ImportError: collectives.transforms.dual {FORBIDDEN} "
            f"(your code uses _package_dual): write that part yourself (here you may use only "
            f"{_SCHEDULE_TOOLS}; "
        ),
        "test_all_axes_all_gather_seconds": Error(
            startswith=f"all_axes_all_gather_seconds('tpu-v5e', (16, 16), 0.0) raised ImportError: "
            f"collectives.algorithms {FORBIDDEN}: write that part yourself (here you may "
            f"use only collectives.hardware; "
        ),
        "test_faster_all_gather_on_ring": Error(
            startswith=f"faster_all_gather_on_ring(3, 1000000000.0, 1e-06, 45000000000.0) raised "
            f"ImportError: {NO_PACKAGE} (your code imports 'collectives')",
            contains="This cell has 22 more failing checks:",
        ),
    }
}
# each plausible slip is caught where it matters (values checked by hand)
ERRORS["wrong"] = {
    NOTEBOOK: {
        # one axis at a time: the chapter's 738 us on the pod, not 384 us
        "test_all_axes_all_gather_seconds": Error(
            "all_axes_all_gather_seconds('tpu-v5e', (16, 16), 64000000.0) is "
            "0.0007383333333333334, expected 0.00038416666666666666 (relative error 0.922)"
        ),
        # one hop of latency for the direct all-gather: wrong near the crossover for n = 6, 10, 7,
        # 8 and 16
        "test_faster_all_gather_on_ring": Error(
            startswith="faster_all_gather_on_ring(6, 200000.0, 1e-06, 45000000000.0) is ",
            contains=(
                "direct_all_gather",
                ", but the answer is ",
                "bidirectional_ring_all_gather",
                "This cell has 4 more failing checks:",
            ),
        ),
    }
}
ERRORS["wrong_loads"] = {
    NOTEBOOK: {
        # the slots kept: the dual's step 0 reverses the last local copies (r, r, 4 + (r - 3) % 4,
        # (r - 3) % 4) of the ring through scratch, and reduces rank 0's empty scratch slot 5
        "test_dual": Error(
            startswith="dual(ring all-gather of 4 ranks through scratch slots 4 to 7, 4) does not "
            "compute the reduce-scatter: step 0, transfer 0 (reduce rank 0 chunk 5 -> "
            "rank 0 chunk 1): rank 0 chunk 5 holds nothing yet",
            contains="in the reference it holds chunk 1 of rank 0.",
        ),
        # V / (2B x 2) = 64e6 / 1.8e11 s, without the 30 us of hops
        "test_all_axes_all_gather_seconds": Error(
            startswith="all_axes_all_gather_seconds('tpu-v5e', (16, 16), 64000000.0) is "
            "0.00035555555555555557, expected 0.00038416666666666666"
        ),
        # the odd-n load for even n: wrong near the crossover for n = 4, 6 and 10
        "test_faster_all_gather_on_ring": Error(
            startswith="faster_all_gather_on_ring(4, 300000.0, 1e-06, 45000000000.0) is ",
            contains=("direct_all_gather", "This cell has 2 more failing checks:"),
        ),
    }
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {
        NOTEBOOK: (
            "bidirectional_ring_all_gather_steps is a correct bidirectional ring all-gather",
            "dual turns the ring and recursive-doubling all-gathers, a ring through scratch slots "
            "into correct reduce-scatters.",
            "all_axes_all_gather_seconds agrees with cl.time on a v5e pod and a v5p cube.",
        )
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "all_gather_reduce_scatter", SOLUTIONS
)
