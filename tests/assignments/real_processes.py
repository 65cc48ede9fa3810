"""real_processes (exercises/source/real_processes/real_processes.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Task 1 (3 points): the learner's recorded sweep (``MEASUREMENTS``, literal numbers; checked
only for plausibility, never against a time measured at grading) and ``fit_alpha_beta``,
judged by its relative error on both columns of that table and on sweeps drawn from the
course seed, against the least possible. Task 2 (2): ``choose_all_reduce``, timed by the best
fits of the table's columns, on the learner's table and on drawn sweeps with a crossover, at
sizes inside each sweep where one side wins by more than the fits' error.
Task 3 (3): ``diagnose``, on broken runs the package renders (the fixed ones and some drawn
from the course seed). Task 4 (2): a ring all-reduce written with torch.distributed's
point-to-point operations, re-run from its source on 4 local processes
(collectives.grading.processes: collectives forbidden in the run, bytes sent counted) and
checked in the re-check. Submissions:

- *correct*, *blank*;
- *partial*: the sweep and the fit right (3), ``choose_all_reduce`` always torch's (right on
  the learner's own table, wrong where the Schedule wins), ``diagnose`` blank, and a ring
  all-reduce that sends the whole tensor to every other rank (right sum, 2x the bytes of a
  ring): 3;
- *hostile*: wrong answers behind the usual tampering (every check of the task module
  patched in the kernel, liars, a patched ``collectives.grading.processes`` and torch's
  ``dist.all_reduce`` in the ring); its ``diagnose`` is genuinely right (3);
- *wrong*: sizes recorded in KiB (not a sweep a float32 ring can run), a fit of the times
  themselves (absolute least squares: off in relative terms), a choice by the fitted
  latencies alone, a diagnosis that names the rank that reported (the receiver of a long
  message, the first rank stuck in a hang), a ring all-reduce that stops after the
  reduce-scatter: 0;
- *variant*: right in other shapes (the table as lists with sizes written ``2**12``, the
  weighted normal equations solved by hand, ``np.polyfit`` with weights ``1/t``, a diagnosis
  that splits the text instead of matching it, and recursive halving and doubling instead of
  the ring, which sends exactly as many bytes from every rank): 10. No answer can be better
  than the reference here: the reference fit is the least-squares optimum, the choice is the
  faster side, a diagnosis is right or wrong and no all-reduce's busiest rank sends less than
  the ring's 2(n-1)/n S; the variants show that any answer as good scores;
- *shortcut*: every answer through the package (the task module's own fit and prediction),
  a diagnosis that looks the report up in a table of every broken run the package renders
  with its defaults (960 reports, built in the answer cell with ``broken_run`` and carried
  into the learner's process as a plain dict: the hidden reports carry a job label, Schedule
  name, chunk size and timeout drawn from the course seed, so none is in it) and, for the
  ring, torch's functional all-reduce (``torch.distributed._functional_collectives``, which
  no replaced function sees: it sends no counted byte, below the 2(n-1)/n S every
  all-reduce's busiest rank sends; torch's own ``dist.all_reduce`` is *hostile*'s): 0.
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "real_processes"

POINTS = {
    NOTEBOOK: {
        "test_fit_alpha_beta": 3,
        "test_choose_all_reduce": 2,
        "test_diagnose": 3,
        "test_ring_all_reduce": 2,
    }
}
MAX_SCORE = 10
SOLUTIONS = {
    NOTEBOOK: {
        "measurements": ("test_fit_alpha_beta", "test_choose_all_reduce"),
        "fit_alpha_beta": "test_fit_alpha_beta",
        "choose_all_reduce": "test_choose_all_reduce",
        "diagnose": "test_diagnose",
        "ring_all_reduce": "test_ring_all_reduce",
    }
}
ALL = tuple(SOLUTIONS[NOTEBOOK])

NO_PACKAGE = "this task must be solved without the collectives package"
RING = "ring_all_reduce on 4 processes, a float32 tensor of 4000 elements"
FORBIDDEN = (
    "your function called torch.distributed.all_reduce; only point-to-point "
    "operations (send, recv, isend, irecv, batch_isend_irecv) are allowed"
)

# ---- partial ---------------------------------------------------------------------------------

ALWAYS_TORCH = """
def choose_all_reduce(measurements, nbytes):
    return "torch"                      # torch won every size of my sweep
"""

NAIVE_RING = """
def ring_all_reduce(tensor):
    # every rank sends its whole tensor to every other rank: right sum, (n-1) S bytes sent
    rank, n = dist.get_rank(), dist.get_world_size()
    total = tensor.clone()
    for peer in range(n):
        if peer != rank:
            spare = torch.empty_like(tensor)
            ops = [dist.P2POp(dist.isend, tensor, peer), dist.P2POp(dist.irecv, spare, peer)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
            total += spare
    tensor.copy_(total)
    return tensor
"""

# ---- hostile ---------------------------------------------------------------------------------

RIGHT_TABLE = """
MEASUREMENTS = [
    (4096, 0.02623, 0.00589),
    (16384, 0.02609, 0.006554),
    (65536, 0.02703, 0.003928),
    (262144, 0.02566, 0.004569),
    (1048576, 0.02424, 0.006971),
    (4194304, 0.03402, 0.01269),
]
"""

RIGHT_DIAGNOSE = """
def diagnose(report):
    import re

    if "had not finished" in report:
        n = int(re.search(r"running (\\d+) ranks", report).group(1))
        steps = {int(r): int(k) for r, k in
                 re.findall(r"rank (\\d+) in job \\d+ \\(.*?\\) at step (\\d+)", report)}
        low = min(steps.values())
        for rank, step in steps.items():
            if step == low and steps.get((rank - 1) % n) == steps.get((rank + 1) % n) == low:
                return rank, step, "hang"
    first = re.match(r"rank (\\d+) of (\\d+) failed .*? at step (\\d+) of", report)
    rank, n, step = (int(g) for g in first.groups())
    if "Received data size doesn't match" in report:
        return (rank - 1) % n, step, "mismatch"
    return rank, step, "die"
"""

HOSTILE = {
    # every check* of every loaded collectives.grading module patched, before the test cells
    # import them; the table itself is right
    "measurements": TAMPERING
    + """
import collectives.grading.tasks.real_processes as _rp
_rp.check_sweep = _rp.check_fit = lambda *args, **kwargs: 1.0
"""
    + RIGHT_TABLE,
    "fit_alpha_beta": """
collectives.grading.run_isolated = lambda function, *args, **kwargs: (1.0, 1.0)
expected = 1.0

def fit_alpha_beta(nbytes, seconds, world_size):
    class _Liar(float):                 # equal to everything
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return _Liar(1.0), _Liar(1.0)
""",
    "choose_all_reduce": """
import collectives.grading.tasks.real_processes as _rp   # the cells above reloaded it

_rp.check_choice = lambda *args, **kwargs: 1.0
_rp.predicted_seconds = lambda *args, **kwargs: {"schedule": 1.0, "torch": 1.0}

def choose_all_reduce(measurements, nbytes):
    return "both"
""",
    # genuinely right: 3 points
    "diagnose": RIGHT_DIAGNOSE,
    "ring_all_reduce": """
import collectives.grading.processes
collectives.grading.processes.run_on_ranks = lambda *args, **kwargs: {"fake": True}
collectives.grading.processes.check_ring_all_reduce = lambda report: 1.0

def ring_all_reduce(tensor):
    dist.all_reduce(tensor)            # the library's own collective
    return tensor
""",
}
HOSTILE_TESTS = {"test_diagnose": "print('all tests passed')"}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "measurements": """
MEASUREMENTS = [                       # sizes in KiB, as the sweep's first column read
    (4, 0.02623, 0.00589),
    (16, 0.02609, 0.006554),
    (64, 0.02703, 0.003928),
    (256, 0.02566, 0.004569),
    (1024, 0.02424, 0.006971),
    (4096, 0.03402, 0.01269),
]
""",
    "fit_alpha_beta": """
def fit_alpha_beta(nbytes, seconds, world_size):
    # least squares on the times themselves: the largest sizes decide the fit
    s, t, n = np.asarray(nbytes, float), np.asarray(seconds, float), world_size
    a = np.stack([np.full_like(s, 2 * (n - 1)), 2 * (n - 1) / n * s], axis=1)
    (alpha, beta), *_ = np.linalg.lstsq(a, t, rcond=None)
    return float(alpha), float(beta)
""",
    "choose_all_reduce": """
def choose_all_reduce(measurements, nbytes):
    # the side with the smaller latency: forgets that the bytes count too
    sizes = [row[0] for row in measurements]
    s = np.asarray(sizes, float)
    alphas = []
    for column in (1, 2):
        t = np.asarray([row[column] for row in measurements], float)
        a = np.stack([np.ones_like(s), s], axis=1) / t[:, None]
        (alpha, _), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
        alphas.append(alpha)
    return "schedule" if alphas[0] < alphas[1] else "torch"
""",
    "diagnose": """
def diagnose(report):
    # the rank the report names, and for a hang the first rank at the lowest step
    import re

    if "had not finished" in report:
        steps = [(int(k), int(r)) for r, k in
                 re.findall(r"rank (\\d+) in job \\d+ \\(.*?\\) at step (\\d+)", report)]
        step, rank = min(steps)
        return rank, step, "hang"
    rank, step = (int(g) for g in re.match(r"rank (\\d+) of \\d+ failed .*? at step (\\d+) of",
                                            report).groups())
    return rank, step, "mismatch" if "Received data size" in report else "die"
""",
    "ring_all_reduce": """
def ring_all_reduce(tensor):
    # the reduce-scatter only: each rank ends with one chunk of the sum, the rest partial
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = tensor.chunk(n)
    spare = torch.empty_like(chunks[0])
    for s in range(n - 1):
        ops = [dist.P2POp(dist.isend, chunks[(rank - s) % n], (rank + 1) % n),
               dist.P2POp(dist.irecv, spare, (rank - 1) % n)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        chunks[(rank - s - 1) % n].add_(spare)
    return tensor
""",
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "measurements": """
MEASUREMENTS = [
    [2**12, 2.623e-2, 5.89e-3],
    [2**14, 2.609e-2, 6.554e-3],
    [2**16, 2.703e-2, 3.928e-3],
    [2**18, 2.566e-2, 4.569e-3],
    [2**20, 2.424e-2, 6.971e-3],
    [2**22, 3.402e-2, 1.269e-2],
]
""",
    "fit_alpha_beta": """
def fit_alpha_beta(nbytes, seconds, world_size):
    # minimise sum((a x_i + b y_i) / t_i - 1)^2 by its 2x2 normal equations
    n = world_size
    xs = [2 * (n - 1) / t for t in seconds]
    ys = [2 * (n - 1) / n * s / t for s, t in zip(nbytes, seconds)]
    sxx = sum(x * x for x in xs)
    sxy = sum(x * y for x, y in zip(xs, ys))
    syy = sum(y * y for y in ys)
    sx, sy = sum(xs), sum(ys)
    det = sxx * syy - sxy * sxy
    return (sx * syy - sy * sxy) / det, (sy * sxx - sx * sxy) / det
""",
    "choose_all_reduce": """
import numpy as np

def choose_all_reduce(measurements, nbytes):
    # a line t = c0 + c1 S through each column, weighted by 1/t: the same relative fit
    table = np.asarray(measurements, dtype=float)
    times = [np.polyval(np.polyfit(table[:, 0], table[:, k], 1, w=1 / table[:, k]), nbytes)
             for k in (1, 2)]
    return ("schedule", "torch")[int(np.argmin(times))]
""",
    "diagnose": """
def diagnose(report):
    words = report.replace("(", " ").replace(")", " ").replace(";", " ").split()
    if report.startswith("timed out") or report.startswith("no progress"):
        n = int(words[words.index("running") + 1])
        where = {}
        for i, word in enumerate(words):
            if word == "rank" and words[i + 2] == "in" and words[i + 3] == "job":
                where[int(words[i + 1])] = int(words[words.index("step", i) + 1])
        for rank in sorted(where, key=lambda r: (where[r], r)):
            if all(where.get((rank + d) % n) == where[rank] for d in (-1, 1)):
                return rank, where[rank], "hang"
    rank, n = int(words[1]), int(words[3])
    step = int(words[words.index("step") + 1])
    if "doesn't match expected size" in report:
        return (rank + n - 1) % n, step, "mismatch"
    return rank, step, "die"
""",
    "ring_all_reduce": """
def ring_all_reduce(tensor):
    # recursive halving (reduce-scatter) and doubling (all-gather) for a power of two of
    # ranks: S/2 + S/4 + ... sent in each half, 2(n-1)/n S in all, as the ring
    rank, n = dist.get_rank(), dist.get_world_size()
    lo, hi, d, levels = 0, tensor.numel(), n // 2, []
    while d >= 1:
        partner, mid = rank ^ d, (lo + hi) // 2
        keep, give = ((lo, mid), (mid, hi)) if rank & d == 0 else ((mid, hi), (lo, mid))
        spare = torch.empty(keep[1] - keep[0], dtype=tensor.dtype)
        ops = [dist.P2POp(dist.isend, tensor[give[0]:give[1]], partner),
               dist.P2POp(dist.irecv, spare, partner)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        tensor[keep[0]:keep[1]].add_(spare)
        levels.append((partner, keep, give))
        (lo, hi), d = keep, d // 2
    for partner, keep, give in reversed(levels):
        ops = [dist.P2POp(dist.isend, tensor[keep[0]:keep[1]], partner),
               dist.P2POp(dist.irecv, tensor[give[0]:give[1]], partner)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
    return tensor
""",
}

# ---- shortcut: the package (and torch's own collective) -------------------------------------

SHORTCUT = {
    "measurements": RIGHT_TABLE,
    "fit_alpha_beta": """
import collectives.grading.tasks.real_processes as _rp

def fit_alpha_beta(nbytes, seconds, world_size):
    return _rp.reference_fit(nbytes, seconds, world_size)
""",
    "choose_all_reduce": """
def choose_all_reduce(measurements, nbytes):
    times = cl.grading.tasks.real_processes.predicted_seconds(measurements, nbytes)
    return min(times, key=times.get)
""",
    "diagnose": """
# every report the package renders (its defaults), with its answer: a plain dict, which the
# re-run of diagnose in a process without the package receives
from collectives.grading.tasks.real_processes import broken_run

ANSWERS = {broken_run(n, kind, rank, step): (rank, step, kind)
           for n in range(4, 9) for kind in ("die", "hang", "mismatch")
           for rank in range(n) for step in range(2 * (n - 1))}

def diagnose(report):
    return ANSWERS.get(report, (0, 0, "die"))
""",
    "ring_all_reduce": """
def ring_all_reduce(tensor):
    # torch's functional all-reduce: through torch.ops._c10d_functional, not dist.all_reduce
    import torch.distributed._functional_collectives as fc
    tensor.copy_(fc.wait_tensor(fc.all_reduce(tensor, "sum", dist.group.WORLD)))
    return tensor
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("measurements", "fit_alpha_beta"),
            replaced={"choose_all_reduce": ALWAYS_TORCH, "ring_all_reduce": NAIVE_RING},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {NOTEBOOK: dict(ZERO, test_fit_alpha_beta=3)},
    "hostile": {NOTEBOOK: dict(ZERO, test_diagnose=3)},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}

ERRORS = {
    "partial": {
        NOTEBOOK: {
            "test_choose_all_reduce": Error(
                startswith="choose_all_reduce(..., 16777216) is 'torch': at 16777216 bytes "
                "the best fits of the sweep's columns predict"
            ),
            "test_ring_all_reduce": Error(
                "ring_all_reduce on 4 processes, a float32 tensor of 8 elements: rank 0 sent 96 "
                "bytes; a ring all-reduce of S = 32 bytes sends 2(n-1)/n S = 48 bytes from every "
                "rank (yours is 2 times that)"
            ),
        }
    },
    "hostile": {
        NOTEBOOK: {
            "test_fit_alpha_beta": Error(
                startswith="fit_alpha_beta of MEASUREMENTS' ring_all_reduce (your Schedule) "
                "column is alpha = 1 s, beta = 1 s/B: the model"
            ),
            "test_choose_all_reduce": Error(startswith="choose_all_reduce(<a sweep of 4096 to "),
            "test_ring_all_reduce": Error(f"{RING}: {FORBIDDEN}"),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_fit_alpha_beta": Error(
                "MEASUREMENTS has 4 bytes, which a float32 ring all-reduce on 4 ranks cannot "
                "run (sizes are multiples of 16 bytes)"
            ),
            # the mismatch (the second example, drawn from the course seed) named by its
            # receiver
            "test_diagnose": Error(
                startswith="diagnose(broken run 2) names rank ",
                contains="reported the failure: it received the message that was too long",
            ),
            "test_ring_all_reduce": Error(
                startswith="ring_all_reduce on 4 processes, a float32 tensor of 8 elements: "
                "rank 0 holds"
            ),
        }
    },
    "shortcut": {
        NOTEBOOK: {
            "test_fit_alpha_beta": Error(contains=NO_PACKAGE),
            # the first example (a die, drawn from the course seed, never at rank 0) is not
            # in the table
            "test_diagnose": Error(startswith="diagnose(broken run 1) names rank 0, but rank "),
            "test_ring_all_reduce": Error(
                startswith="ring_all_reduce on 4 processes, a float32 tensor of 8 elements: "
                "your ranks sent fewer bytes than any point-to-point all-reduce can (the "
                "busiest, rank 0, sent 0 bytes"
            ),
        }
    },
}
PRINTED = {
    "hostile": {
        NOTEBOOK: (
            "MEASUREMENTS is a plausible sweep, and fit_alpha_beta fits it as well as the best "
            "fit.",
            "choose_all_reduce picks the faster all-reduce by the fits.",
            "ring_all_reduce sums over 4 processes with point-to-point messages, sending no "
            "more than 2(n-1)/n S bytes from any rank.",
        )
    }
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "real_processes", SOLUTIONS, enames={"test_ring_all_reduce": "AssertionError"}
)  # the ranks' check reports it so
