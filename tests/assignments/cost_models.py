"""cost_models (exercises/source/cost_models/ring_all_gather.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Submissions: *correct* (every solution), *blank* (the release as handed out), *partial* (steps
and busbw right, the time wrong by one step, the rest blank) and *hostile* (wrong answers behind
monkeypatching of ``collectives``, ``collectives.grading``, ``math.isclose`` and IPython, lying
floats, rebound names, edited test cells; its ``tokens_to_hide_gather`` is genuinely right),
and the attacks every task must survive: *wrong* (a plausible wrong answer per task: 0
everywhere), *variant* (right answers written differently: every point) and *shortcut*
(answers that call the package: 0 everywhere, each refused with the name it used).
"""

from assignments import TAMPERING, Error, submission
from collectives.grading.isolation import FORBIDDEN, NO_PACKAGE

NOTEBOOK = "ring_all_gather"

# grade_id of each autograded test cell -> its points (exercises/README.md's table)
POINTS = {NOTEBOOK: {
    "test_ring_all_gather_steps": 4,
    "test_ring_all_gather_time": 2,
    "test_busbw_from_time": 1,
    "test_tokens_to_hide_gather": 1,
    "test_latency_fraction": 1,
    "written_regimes": 1,
}}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_regimes",)}
# plausible written answers: the partial student's gets half the rubric (one size right)
PARTIAL_WRITTEN = """At 64 kB the latency of the 15 hops dominates (about 92% of 16 us), so an
algorithm with fewer steps helps more than faster links. At 64 MB faster links help too."""
HOSTILE_WRITTEN = "All tests passed."
MAX_SCORE = 10
# grade_id of each solution cell (each defines the function of the same name and is graded by
# the test cell test_<name>)
SOLUTIONS = {NOTEBOOK: ("ring_all_gather_steps", "ring_all_gather_time", "busbw_from_time",
                        "tokens_to_hide_gather", "latency_fraction")}

PARTIAL_TIME = '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return n * (alpha + nbytes / (n * bandwidth))      # n steps: one too many
'''

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "ring_all_gather_steps": TAMPERING + '''
def ring_all_gather_steps(n):
    return [[(r, 0, r, r) for r in range(1, n)]]       # everyone sends to rank 0
''',
    "ring_all_gather_time": '''
collectives.analytic.ring_all_gather = lambda n, nbytes, alpha, bandwidth: n * alpha
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.0

def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    class _Liar(float):                 # inside: the graded re-run rebuilds the function only
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return _Liar(n * alpha)
''',
    "busbw_from_time": '''
collectives.busbw = lambda *args, **kwargs: 42.0
expected = 42.0

def busbw_from_time(n, nbytes, seconds):
    return 42.0
''',
    "tokens_to_hide_gather": '''
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.spec(chip)
    seconds = (n - 1) * (spec.hop_latency + 2 * d_model * d_ff / (n * spec.link_bandwidth))
    return seconds * spec.bf16_flops / (2 * d_model * d_ff)
''',
    "latency_fraction": '''
collectives.grading.schedule_seconds = lambda *args, **kwargs: 0.25
range = lambda *args: ()

def latency_fraction(n, nbytes, alpha, bandwidth):
    return 0.25
''',
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_ring_all_gather_steps": "print('all tests passed')",
                 "test_busbw_from_time": "pass"}


# ---- wrong: one plausible mistake per task (every one must score 0) -------------------------

WRONG = {
    # forwards shard r + s instead of r - s: the shard its neighbour already has (n >= 3)
    "ring_all_gather_steps": '''
def ring_all_gather_steps(n):
    return [[(r, (r + 1) % n, (r + s) % n, (r + s) % n) for r in range(n)]
            for s in range(n - 1)]
''',
    # the bandwidth term of one message of the whole buffer, S / B, instead of (n - 1) S / (n B)
    "ring_all_gather_time": '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return (n - 1) * alpha + nbytes / bandwidth
''',
    # algbw: the (n - 1) / n factor forgotten
    "busbw_from_time": '''
def busbw_from_time(n, nbytes, seconds):
    return nbytes / seconds
''',
    # the hop latencies left out: (n - 1) / n x FLOP/s / B, right only for large matrices
    "tokens_to_hide_gather": '''
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.spec(chip)
    return (n - 1) / n * spec.bf16_flops / spec.link_bandwidth
''',
    # a step's transfer taken as S / B instead of S / (n B)
    "latency_fraction": '''
def latency_fraction(n, nbytes, alpha, bandwidth):
    return alpha / (alpha + nbytes / bandwidth)
''',
    # the regimes swapped: 0 by the rubric
    "written_regimes": """Both sizes are bandwidth-bound: the links carry 64 kB and 64 MB, and
faster links would help more than fewer steps in both cases.""",
}

# ---- variant: right, written differently (every one must score every point) ----------------

VARIANT = {
    # the shard each rank forwards is tracked in a list instead of computed as (r - s) % n
    "ring_all_gather_steps": '''
def ring_all_gather_steps(n):
    steps = []
    newest = list(range(n))            # newest[r]: the shard rank r forwards next
    for _ in range(n - 1):
        steps.append([(r, (r + 1) % n, newest[r], newest[r]) for r in range(n)])
        newest = [newest[(r - 1) % n] for r in range(n)]
    return steps
''',
    # a sum over the steps instead of the product
    "ring_all_gather_time": '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    shard = nbytes / n
    return sum(alpha + shard / bandwidth for _ in range(n - 1))
''',
    "busbw_from_time": '''
def busbw_from_time(n, nbytes, seconds):
    algbw = nbytes / seconds
    return algbw - algbw / n
''',
    # built on the learner's own Task 2 function (the re-run takes it along)
    "tokens_to_hide_gather": '''
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    spec = cl.hardware.preset(chip).system
    weights = 2 * d_model * d_ff
    seconds = ring_all_gather_time(n, weights, spec.hop_latency, spec.link_bandwidth)
    matmul_seconds_per_token = 2 * d_model * d_ff / spec.bf16_flops
    return seconds / matmul_seconds_per_token
''',
    # latency and transfer summed over the n - 1 steps
    "latency_fraction": '''
def latency_fraction(n, nbytes, alpha, bandwidth):
    latency = (n - 1) * alpha
    transfer = (n - 1) * nbytes / (n * bandwidth)
    return latency / (latency + transfer)
''',
    "written_regimes": """64 kB sits far below the crossover n alpha B = 16 x 1 us x 45 GB/s =
720 kB: of the 16.4 us, 15 us are hop latencies, so a faster link barely helps and an
algorithm with fewer steps would. 64 MB is far above it: 1.35 ms, latency about 1 %, so the
time scales with the link speed and fewer steps would not help.""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "ring_all_gather_steps": '''
def ring_all_gather_steps(n):
    return [[t[:4] for t in step] for step in cl.algorithms.ring_all_gather(n).to_lists()]
''',
    "ring_all_gather_time": '''
def ring_all_gather_time(n, nbytes, alpha, bandwidth):
    return cl.analytic.ring_all_gather(n, nbytes, alpha=alpha, bandwidth=bandwidth)
''',
    "busbw_from_time": '''
from collectives import busbw

def busbw_from_time(n, nbytes, seconds):
    return busbw("all_gather", nbytes, seconds, n)
''',
    "tokens_to_hide_gather": '''
def tokens_to_hide_gather(chip, n, d_model, d_ff):
    import collectives
    spec = collectives.hardware.spec(chip)
    topology = collectives.topology.ring(n, spec.link_bandwidth, hop_latency=spec.hop_latency)
    gather = collectives.time(collectives.algorithms.ring_all_gather(n), topology,
                              2 * d_model * d_ff)
    return gather.seconds * spec.bf16_flops / (2 * d_model * d_ff)
''',
    "latency_fraction": '''
def latency_fraction(n, nbytes, alpha, bandwidth):
    return cl.grading.schedule_seconds("ring_all_gather", n, nbytes, link_bandwidth=bandwidth,
                                       hop_latency=alpha, part="latency_fraction")
''',
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=SOLUTIONS[NOTEBOOK] + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(solved=("ring_all_gather_steps", "busbw_from_time"),
                                     replaced={"ring_all_gather_time": PARTIAL_TIME,
                                               "written_regimes": PARTIAL_WRITTEN})},
    "hostile": {NOTEBOOK: submission(replaced={**HOSTILE, "written_regimes": HOSTILE_WRITTEN},
                                     edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    # the written answer handed in untouched: 0 by nbgrader itself
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

# the exact score of every test cell for every submission
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    # steps and busbw right (4 + 1); time wrong (n steps instead of n - 1); the written
    # answer half right by the rubric (0.5, given by hand); the rest blank
    "partial": {NOTEBOOK: {"test_ring_all_gather_steps": 4, "test_ring_all_gather_time": 0,
                           "test_busbw_from_time": 1, "test_tokens_to_hide_gather": 0,
                           "test_latency_fraction": 0, "written_regimes": 0.5}},
    # every tampering fails; only its genuinely correct tokens_to_hide_gather earns its point
    "hostile": {NOTEBOOK: {"test_ring_all_gather_steps": 0, "test_ring_all_gather_time": 0,
                           "test_busbw_from_time": 0, "test_tokens_to_hide_gather": 1,
                           "test_latency_fraction": 0, "written_regimes": 0}},
    "wrong": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict.fromkeys(POINTS[NOTEBOOK], 0)},
}

ERRORS = {
    # the feedback a learner reads for the step count off by one (exercises/README.md quotes it)
    "partial": {NOTEBOOK: {"test_ring_all_gather_time": Error(
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.0014993080888888888, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, alpha=1e-06, bandwidth="
        "45000000000.0); yours is exactly 8/7 times that")}},
    # the in-kernel checks were all disabled: these are the isolated re-check's verdicts, on the
    # values it computed itself (not the patched 0.0, 42.0, 0.25)
    "hostile": {NOTEBOOK: {
        "test_ring_all_gather_steps": Error(
            startswith="ring_all_gather_steps(2) does not compute the all-gather: ",
            contains="rank 1 chunk 0 holds nothing"),
        "test_ring_all_gather_time": Error(
            startswith="ring_all_gather_time(1, 1048576, 1e-06, 45000000000.0) is 1e-06, "
                       "expected 0.0 = collectives.analytic.ring_all_gather(1, 1048576, alpha=1e-06, bandwidth="
                       "45000000000.0)"),
        "test_busbw_from_time": Error(
            startswith="busbw_from_time(1, 1000000.0, 0.001) is 42.0, expected 0.0 = "
                       "collectives.busbw("),
        "test_latency_fraction": Error(
            startswith="latency_fraction(2, 1048576, 1e-06, 1000000000.0) is 0.25, expected "
                       "0.0019037175796896176 = collectives.grading.schedule_seconds("
                       "'ring_all_gather', 2, 1048576, link_bandwidth=1000000000.0, "
                       "hop_latency=1e-06, part='latency_fraction')"),
    }},
}

# the re-run without the package refuses each shortcut, naming what it used
_ADVICE = ("; use the package in scratch cells to check your answers, not inside the "
           "functions that are graded")
ERRORS["shortcut"] = {NOTEBOOK: {
    "test_ring_all_gather_steps": Error(
        startswith=f"ring_all_gather_steps(1) raised ImportError: collectives.algorithms "
                   f"{FORBIDDEN}: write that part yourself (here you may use only "
                   "collectives.CollectivesError, collectives.Schedule, ",
        contains="This cell has 6 more failing checks:"),
    "test_ring_all_gather_time": Error(
        startswith=f"ring_all_gather_time(1, 1048576, 1e-06, 45000000000.0) raised ImportError: "
                   f"{NO_PACKAGE} (your code uses cl, which is the collectives package)"
                   f"{_ADVICE}"),
    "test_busbw_from_time": Error(
        startswith=f"busbw_from_time(1, 1000000.0, 0.001) raised ImportError: {NO_PACKAGE} "
                   f"(your code uses busbw, which is collectives.cost.busbw){_ADVICE}"),
    "test_tokens_to_hide_gather": Error(
        startswith="tokens_to_hide_gather('tpu-v5e', 16, 8192, 28672) raised ImportError: "
                   "collectives.topology "),
    "test_latency_fraction": Error(
        startswith=f"latency_fraction(2, 1048576, 1e-06, 1000000000.0) raised ImportError: "
                   f"{NO_PACKAGE} (your code uses cl, which is the collectives package)"),
}}
# the visible tests already explain the plausible mistakes (values derived by hand)
ERRORS["wrong"] = {NOTEBOOK: {
    # 7 x 1 us + 2**26 / 45e9 s: the whole buffer over one link
    "test_ring_all_gather_time": Error(
        "ring_all_gather_time(8, 2**26, 1e-6, 45e9) is 0.001498308088888889, expected "
        "0.0013118945777777777 = collectives.analytic.ring_all_gather(8, 67108864, alpha=1e-06, "
        "bandwidth=45000000000.0) (relative error 0.142)"),
    "test_busbw_from_time": Error(
        "busbw_from_time(8, 1e9, 2.5e-3) is 400000000000.0, expected 350000000000.0 = "
        "collectives.busbw('all_gather', 1000000000.0, 0.0025, 8); yours is exactly 8/7 times "
        "that"),
    # 15/16 x 1.97e14 / 4.5e10 = 4104.17 against 4110.46 with the 15 hop latencies
    "test_tokens_to_hide_gather": Error(
        startswith='tokens_to_hide_gather("tpu-v5e", 16, 8192, 28672) is 4104.16666'),
}}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {NOTEBOOK: ("ring_all_gather_steps(4) is a correct one-way ring all-gather",
                           "busbw_from_time agrees with cl.busbw",
                           "latency_fraction agrees with cl.time")},
}
