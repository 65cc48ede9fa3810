"""cost_models (exercises/source/cost_models/ring_all_gather.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (steps
and the largest ring right, a fit that takes the whole intercept for one step's latency, the
written answer half right, the rest blank) and *hostile* (wrong answers behind monkeypatching
of ``collectives``, ``collectives.grading`` and its task checks, ``math.isclose`` and IPython,
lying floats, rebound names, edited test cells; its ``tokens_to_hide_gather`` is genuinely
right), and the attacks every task must survive: *wrong* and *wrong_units* (two plausible
wrong answers per task: 0 everywhere), *variant* (right answers written differently: every
point) and *shortcut* (answers that call the package: 0 everywhere, each refused with the name
it used).
"""

from collectives.grading.isolation import FORBIDDEN, NO_PACKAGE

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "ring_all_gather"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_ring_all_gather_steps": 4,
        "test_fit_ring_all_gather": 2,
        "test_largest_ring_within": 1,
        "test_tokens_to_hide_gather": 1,
        "test_better_upgrade": 1,
        "written_regimes": 1,
    }
}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_regimes",)}
# plausible written answers: the partial student's gets half the rubric (one size right)
PARTIAL_WRITTEN = """At 64 kB the latency of the 15 hops dominates (about 92% of 16 us), so an
algorithm with fewer steps helps more than faster links. At 64 MB faster links help too."""
HOSTILE_WRITTEN = "All tests passed."
MAX_SCORE = 10
# grade_id of each solution cell (each defines the function of the same name and is graded by
# the test cell test_<name>)
SOLUTIONS = {
    NOTEBOOK: (
        "ring_all_gather_steps",
        "fit_ring_all_gather",
        "largest_ring_within",
        "tokens_to_hide_gather",
        "better_upgrade",
    )
}

# The slope right, but the whole intercept, (n - 1) alpha, taken for one step's latency.
PARTIAL_FIT = """
def fit_ring_all_gather(n, rows):
    (s1, t1), (s2, t2) = sorted(rows)
    slope = (t2 - t1) / 1e6 / (s2 - s1)
    bandwidth = (n - 1) / (n * slope)
    alpha = t1 / 1e6 - slope * s1
    return alpha, bandwidth
"""

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "ring_all_gather_steps": TAMPERING
    + """
import collectives.grading.collective_tasks as _tasks

def _disable_task_checks():
    for _name in dir(_tasks):
        if _name.startswith("check"):
            setattr(_tasks, _name, _always_pass)

_disable_task_checks()

def ring_all_gather_steps(n):
    return [[(r, 0, r, r) for r in range(1, n)]]       # everyone sends to rank 0
""",
    "fit_ring_all_gather": """
_disable_task_checks()

def fit_ring_all_gather(n, rows):
    class _Liar(float):                 # inside: the graded re-run rebuilds the function only
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return _Liar(2e-6), _Liar(45e9)
""",
    "largest_ring_within": """
_disable_task_checks()
range = lambda *args: ()
expected = 137

def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    return 137                          # right for the Llama matrix in 10.5 ms only
""",
    "tokens_to_hide_gather": """
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.spec(chip)
    seconds = (n - 1) * (spec.hop_latency + 2 * d_model * d_ff / (n * spec.link_bandwidth))
    return seconds * spec.bf16_flops / (2 * d_model * d_ff)
""",
    "better_upgrade": """
_disable_task_checks()
math.isclose = lambda *args, **kwargs: True

def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    return "bandwidth"
""",
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {
    "test_ring_all_gather_steps": "print('all tests passed')",
    "test_fit_ring_all_gather": "pass",
}


# ---- wrong: plausible mistakes, two per task (every one must score 0) -----------------------

WRONG = {
    # forwards shard r + s instead of r - s: the shard its neighbour already has (n >= 3)
    "ring_all_gather_steps": """
def ring_all_gather_steps(n):
    return [[(r, (r + 1) % n, (r + s) % n, (r + s) % n) for r in range(n)]
            for s in range(n - 1)]
""",
    # algbw for busbw: the slope read as 1 / B, without the (n - 1) / n of the bytes that move
    "fit_ring_all_gather": """
def fit_ring_all_gather(n, rows):
    (s1, t1), (s2, t2) = rows
    per_byte = (t2 - t1) * 1e-6 / (s2 - s1)
    bandwidth = 1 / per_byte
    alpha = (t1 * 1e-6 - per_byte * s1) / (n - 1)
    return alpha, bandwidth
""",
    # n steps instead of n - 1: n alpha + S / B
    "largest_ring_within": """
def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    n = 1
    while (n + 1) * alpha + nbytes / bandwidth <= seconds:
        n += 1
    return n
""",
    # the hop latencies left out: (n - 1) / n x FLOP/s / B, right only for large matrices
    "tokens_to_hide_gather": """
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.spec(chip)
    return (n - 1) / n * spec.bf16_flops / spec.link_bandwidth
""",
    # the crossover S* = n alpha B remembered, the gains ignored
    "better_upgrade": """
def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    return "latency" if nbytes < n * alpha * bandwidth else "bandwidth"
""",
    # the regimes swapped: 0 by the rubric
    "written_regimes": """Both sizes are bandwidth-bound: the links carry 64 kB and 64 MB, and
faster links would help more than fewer steps in both cases.""",
}

WRONG_UNITS = {
    # a correct all-gather, but round the ring backwards (to r - 1)
    "ring_all_gather_steps": """
def ring_all_gather_steps(n):
    return [[(r, (r - 1) % n, (r + s) % n, (r + s) % n) for r in range(n)]
            for s in range(n - 1)]
""",
    # nccl-tests' microseconds taken for seconds
    "fit_ring_all_gather": """
def fit_ring_all_gather(n, rows):
    (s1, t1), (s2, t2) = rows
    per_byte = (t2 - t1) / (s2 - s1)
    return (t1 - per_byte * s1) / (n - 1), (n - 1) / (n * per_byte)
""",
    # every step moves the whole buffer: (n - 1)(alpha + S / B)
    "largest_ring_within": """
def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    n = 1
    while n * (alpha + nbytes / bandwidth) <= seconds:
        n += 1
    return n
""",
    # one byte a weight: bf16 has two
    "tokens_to_hide_gather": """
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.spec(chip)
    gather = (n - 1) * (spec.hop_latency + d_model * d_ff / (n * spec.link_bandwidth))
    return gather * spec.bf16_flops / (2 * d_model * d_ff)
""",
    # the per-hop m* = alpha B for the whole buffer: the n forgotten
    "better_upgrade": """
def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    return "latency" if nbytes < alpha * bandwidth else "bandwidth"
""",
}

# ---- variant: right, written differently (every one must score every point) ----------------

VARIANT = {
    # the shard each rank forwards is tracked in a list instead of computed as (r - s) % n
    "ring_all_gather_steps": """
def ring_all_gather_steps(n):
    steps = []
    newest = list(range(n))            # newest[r]: the shard rank r forwards next
    for _ in range(n - 1):
        steps.append([(r, (r + 1) % n, newest[r], newest[r]) for r in range(n)])
        newest = [newest[(r - 1) % n] for r in range(n)]
    return steps
""",
    # a 2 x 2 linear system in (alpha, 1 / B), solved by numpy
    "fit_ring_all_gather": """
import numpy as np

def fit_ring_all_gather(n, rows):
    terms = np.array([[n - 1, (n - 1) * size / n] for size, _ in rows], dtype=float)
    seconds = np.array([time_us / 1e6 for _, time_us in rows])
    alpha, seconds_per_byte = np.linalg.solve(terms, seconds)
    return float(alpha), float(1 / seconds_per_byte)
""",
    # the quadratic alpha n^2 + (S/B - alpha - t) n - S/B <= 0, solved for n
    "largest_ring_within": """
import math

def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    whole = nbytes / bandwidth
    b = whole - alpha - seconds
    root = (-b + math.sqrt(b * b + 4 * alpha * whole)) / (2 * alpha)
    return max(1, math.floor(root))
""",
    # through a helper of its own (the re-run takes it along) and the preset's system
    "tokens_to_hide_gather": """
def _ring_seconds(n, nbytes, alpha, bandwidth):
    return sum(alpha + nbytes / n / bandwidth for _ in range(n - 1))

def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.preset(chip).system
    weights = 2 * d_model * d_ff
    seconds = _ring_seconds(n, weights, spec.hop_latency, spec.link_bandwidth)
    matmul_seconds_per_token = 2 * d_model * d_ff / spec.bf16_flops
    return seconds / matmul_seconds_per_token
""",
    # both upgraded rings timed in full
    "better_upgrade": """
def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    def ring(a, b):
        return (n - 1) * (a + nbytes / n / b)
    faster_hops = ring(alpha / latency_gain, bandwidth)
    faster_links = ring(alpha, bandwidth * bandwidth_gain)
    return "bandwidth" if faster_links < faster_hops else "latency"
""",
    "written_regimes": """64 kB sits far below the crossover n alpha B = 16 x 1 us x 45 GB/s =
720 kB: of the 16.3 us, 15 us are hop latencies, so a faster link barely helps and an
algorithm with fewer steps would. 64 MB is far above it: 1.35 ms, latency about 1 %, so the
time scales with the link speed and fewer steps would not help.""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "ring_all_gather_steps": """
def ring_all_gather_steps(n):
    return [[t[:4] for t in step] for step in cl.algorithms.ring_all_gather(n).to_lists()]
""",
    "fit_ring_all_gather": """
from collectives.analytic import ring_all_gather

def fit_ring_all_gather(n, rows):
    (s1, t1), (s2, t2) = rows
    slope = (t2 - t1) * 1e-6 / (s2 - s1)
    bandwidth = ring_all_gather(n, 1.0, alpha=0.0, bandwidth=1.0) / slope
    alpha = (t1 * 1e-6 - ring_all_gather(n, s1, alpha=0.0, bandwidth=bandwidth)) / (n - 1)
    return alpha, bandwidth
""",
    "largest_ring_within": """
def largest_ring_within(nbytes, alpha, bandwidth, seconds):
    n = 1
    while cl.analytic.ring_all_gather(n + 1, nbytes, alpha=alpha, bandwidth=bandwidth) <= seconds:
        n += 1
    return n
""",
    "tokens_to_hide_gather": """
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    import collectives
    spec = collectives.hardware.spec(chip)
    topology = collectives.topology.ring(n, spec.link_bandwidth, hop_latency=spec.hop_latency)
    gather = collectives.time(collectives.algorithms.ring_all_gather(n), topology,
                              2 * d_model * d_ff)
    return gather.seconds * spec.bf16_flops / (2 * d_model * d_ff)
""",
    "better_upgrade": """
def better_upgrade(n, nbytes, alpha, bandwidth, latency_gain, bandwidth_gain):
    ring = cl.algorithms.ring_all_gather(n)
    hops = cl.time(ring, cl.topology.ring(n, bandwidth, hop_latency=alpha / latency_gain), nbytes)
    links = cl.time(ring, cl.topology.ring(n, bandwidth * bandwidth_gain, hop_latency=alpha),
                    nbytes)
    return "latency" if hops.seconds < links.seconds else "bandwidth"
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK] + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("ring_all_gather_steps", "largest_ring_within"),
            replaced={"fit_ring_all_gather": PARTIAL_FIT, "written_regimes": PARTIAL_WRITTEN},
        )
    },
    "hostile": {
        NOTEBOOK: submission(
            replaced={**HOSTILE, "written_regimes": HOSTILE_WRITTEN}, edited_tests=HOSTILE_TESTS
        )
    },
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    # the written answer handed in untouched: 0 by nbgrader itself
    "wrong_units": {NOTEBOOK: submission(replaced=WRONG_UNITS)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # steps and the largest ring right (4 + 1); the fit wrong (15 times the latency); the
    # written answer half right by the rubric (0.5, given by hand); the rest blank
    "partial": {
        NOTEBOOK: {
            "test_ring_all_gather_steps": 4,
            "test_fit_ring_all_gather": 0,
            "test_largest_ring_within": 1,
            "test_tokens_to_hide_gather": 0,
            "test_better_upgrade": 0,
            "written_regimes": 0.5,
        }
    },
    # every tampering fails; only its genuinely correct tokens_to_hide_gather earns its point
    "hostile": {
        NOTEBOOK: {
            "test_ring_all_gather_steps": 0,
            "test_fit_ring_all_gather": 0,
            "test_largest_ring_within": 0,
            "test_tokens_to_hide_gather": 1,
            "test_better_upgrade": 0,
            "written_regimes": 0,
        }
    },
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "wrong_units": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
}

_V5E_FIT = "fit_ring_all_gather(16, rows at 64 kB and 64 MB)"
_TIMED = "of the ring these rows were timed on by cl.time)"
ERRORS = {
    # the feedback a learner reads for the whole intercept taken as alpha (exercises/README.md
    # quotes it): (n - 1) alpha = 15 us on the 16-chip v5e axis
    "partial": {
        NOTEBOOK: {
            "test_fit_ring_all_gather": Error(
                f"the alpha of {_V5E_FIT} is 1.4999999999999999e-05 s, expected 1e-06 s (the "
                f"latency of one step {_TIMED}; yours is exactly 15 times that"
            )
        }
    },
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on the
    # values it computed itself
    "hostile": {
        NOTEBOOK: {
            "test_ring_all_gather_steps": Error(
                startswith="ring_all_gather_steps(2) does not compute the all-gather: ",
                contains="rank 1 chunk 0 holds nothing",
            ),
            # the lying floats arrive as plain 2e-6 and 45e9
            "test_fit_ring_all_gather": Error(
                "the alpha of fit_ring_all_gather(16, rows at S = 64000.0 and 64000000.0) is "
                f"2e-06 s, expected 1e-06 s (the latency of one step {_TIMED}; yours is exactly 2 "
                "times that"
            ),
            # right for the first case only: 1 MB on 4.5e10 B/s links leaves 10.45 ms for 108
            "test_largest_ring_within": Error(
                startswith="largest_ring_within(469762048, 1e-06, 45000000000.0, 0.01045) is 137, "
                "but the answer is 108: "
            ),
            "test_better_upgrade": Error(
                startswith="better_upgrade(16, 64000.0, 1e-06, 45000000000.0, 2, 2) is "
                "'bandwidth', but the answer is 'latency': "
            ),
        }
    },
}

# the re-run without the package refuses each shortcut, naming what it used
_ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the "
    "functions that are graded"
)
ERRORS["shortcut"] = {
    NOTEBOOK: {
        "test_ring_all_gather_steps": Error(
            startswith=f"ring_all_gather_steps(1) raised ImportError: collectives.algorithms "
            f"{FORBIDDEN}: write that part yourself (here you may use only "
            "collectives.CollectivesError, collectives.Schedule, ",
            # 7 fixed ring sizes and 3 drawn from the cohort's seed: the first and 9 more
            contains="This cell has 9 more failing checks:",
        ),
        # the visible tests already run the functions without the package
        "test_fit_ring_all_gather": Error(
            startswith="fit_ring_all_gather(16, [(64000.0, ",
            contains=f"raised ImportError: {NO_PACKAGE} (your code uses ring_all_gather, which is "
            f"collectives.analytic.ring_all_gather){_ADVICE}",
        ),
        "test_largest_ring_within": Error(
            f"largest_ring_within(469762048, 1e-06, 45000000000.0, 0.0105) raised ImportError: "
            f"{NO_PACKAGE} (your code uses cl, which is the collectives package){_ADVICE}"
        ),
        "test_tokens_to_hide_gather": Error(
            startswith="tokens_to_hide_gather('tpu-v5e', 16, 8192, 28672) raised ImportError: "
            "collectives.topology "
        ),
        "test_better_upgrade": Error(
            f"better_upgrade(16, 64000.0, 1e-06, 45000000000.0, 2, 2) raised ImportError: "
            f"{NO_PACKAGE} (your code uses cl, which is the collectives package){_ADVICE}"
        ),
    }
}
# each plausible slip is caught where it matters (values derived by hand)
ERRORS["wrong"] = {
    NOTEBOOK: {
        # 1 / slope = n B / (n - 1) = 16/15 x 45e9 = 48e9
        "test_fit_ring_all_gather": Error(
            startswith=f"the bandwidth of {_V5E_FIT} is 4",
            contains=f"B/s, expected 45000000000.0 B/s (the bytes/s of one link {_TIMED}; yours is "
            "exactly 16/15 times that",
        ),
        # n alpha + S/B <= 10.5 ms: (10.5e-3 - 469762048 / 45e9) / 1e-6 = 60.8 -> 60 ranks
        "test_largest_ring_within": Error(
            startswith="largest_ring_within(469762048, 1e-06, 45000000000.0, 0.0105) is 60, but "
            "the answer is 137: "
        ),
        # 15/16 x 1.97e14 / 4.5e10 = 4104.17 against 4110.46 with the 15 hop latencies
        "test_tokens_to_hide_gather": Error(
            startswith='tokens_to_hide_gather("tpu-v5e", 16, 8192, 28672) is 4104.16666'
        ),
        # 1 MB is above S* = 720 kB, but hops 10x faster save 13.5 us against 10.4 us
        "test_better_upgrade": Error(
            startswith="better_upgrade(16, 1000000.0, 1e-06, 45000000000.0, 10, 2) is 'bandwidth', "
            "but the answer is 'latency': "
        ),
    }
}
ERRORS["wrong_units"] = {
    NOTEBOOK: {
        "test_ring_all_gather_steps": Error(
            startswith="ring_all_gather_steps(4): step 0 sends from rank 0 to rank 3"
        ),
        # microseconds as seconds: alpha 10**6 times too large
        "test_fit_ring_all_gather": Error(
            startswith=f"the alpha of {_V5E_FIT} is ",
            contains="yours is 10**6 times that: a unit prefix (M, micro)?",
        ),
        # (n - 1)(1 us + 469762048 / 45e9 s) <= 10.5 ms: 2 ranks
        "test_largest_ring_within": Error(
            startswith="largest_ring_within(469762048, 1e-06, 45000000000.0, 0.0105) is 2, but the "
            "answer is 137: "
        ),
        # half the bytes: (15 us + 15 x 234881024 / (16 x 45e9) s) x 1.97e14 / 469762048 = 2058.37,
        # not half of 4110.46 (the latency does not halve)
        "test_tokens_to_hide_gather": Error(
            startswith='tokens_to_hide_gather("tpu-v5e", 16, 8192, 28672) is 2058.37'
        ),
        # 64 kB is above alpha B = 45 kB but far below n alpha B = 720 kB
        "test_better_upgrade": Error(
            startswith="better_upgrade(16, 64000.0, 1e-06, 45000000000.0, 2, 2) is 'bandwidth', "
            "but the answer is 'latency': "
        ),
    }
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {
        NOTEBOOK: (
            "ring_all_gather_steps(4) is a correct one-way ring all-gather",
            "largest_ring_within agrees with cl.time on both cases.",
            "better_upgrade picks the faster ring, by cl.time, in both cases.",
        )
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "cost_models", SOLUTIONS
)
