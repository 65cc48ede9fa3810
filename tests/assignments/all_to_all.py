"""all_to_all (exercises/source/all_to_all/bruck_all_to_all.ipynb, 10 points): what the pipeline
test expects. Format: the docstring of tests/assignments/__init__.py.

The tasks must be solved without the collectives package: every hidden test re-runs the
learner's function from its source code in a process where ``collectives`` cannot be imported
(``_grading.call(f, ..., isolated=True)``), and the schedules are judged by
``collectives.grading.collective_tasks``, which accepts any correct answer of the kind a task
asks. Submissions, besides the four every spec has:

- *correct* (every solution and the model written answer), *blank* (the release as handed out);
- *partial*: Bruck and pairwise exchange right, the chain forwarding the nearest part first
  (more steps than the cut bound), the dispatch blank, the written answer half right by its
  rubric (3 + 2 + 0.5 = 5.5);
- *hostile*: wrong answers behind monkeypatching of ``collectives``, ``collectives.grading``
  (``collective_tasks`` too), ``math.isclose`` and IPython, rebound names, edited test cells;
  its ``dispatch_time`` is genuinely right (1), its written answer "All tests passed." (0);
- *wrong* and *wrong2*: two plausible wrong answers per task (Bruck without its un-rotation,
  or sending behind while indexing ahead; pairwise partners r XOR s, right only for powers of
  two, or receiving straight into slot r; the chain forwarding the nearest part first, or
  relaying every waiting part at once; the dispatch counting only what ranks send, or the
  tokens that stay on their rank too), written answers left untouched: 0;
- *variant*: every answer right but written differently (Bruck with the rotations folded into
  the first and last exchanges; pairwise with Bruck's rotations around the exchanges; the
  chain with heaps, ties to the higher source and another scratch layout; the dispatch with
  numpy; a terser written answer that meets the rubric): 10;
- *shortcut*: every answer computed by calling the package (the notebook's ``cl``, ``from
  collectives... import``, ``import collectives`` inside the function, ``importlib``): 0,
  each cell failing with "this task must be solved without the collectives package".
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "bruck_all_to_all"

# grade_id of each graded cell -> its points (exercises/README.md's table)
POINTS = {
    NOTEBOOK: {
        "test_bruck_steps": 3,
        "test_pairwise_steps": 2,
        "test_chain_steps": 3,
        "test_dispatch_time": 1,
        "written_choice": 1,
    }
}
# the written answer, graded by hand in the formgrader (its rubric is in the source notebook)
MANUAL = {NOTEBOOK: ("written_choice",)}
MAX_SCORE = 10
# each solution cell defines the function of the same name and is graded by test_<name>
SOLUTIONS = {NOTEBOOK: ("bruck_steps", "pairwise_steps", "chain_steps", "dispatch_time")}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

# plausible written answers: the partial student's earns half the rubric (the winners, with
# times; the reason and the crossover missing)
PARTIAL_WRITTEN = """At 64 kB Bruck takes about 6.2 us and pairwise about 14.1 us, so Bruck
wins. At 16 MB pairwise takes about 45 us and Bruck about 59 us, so pairwise wins."""
HOSTILE_WRITTEN = "All tests passed."
VARIANT_WRITTEN = """Bruck: 3 steps x (2 us + 4 parts x S/8 / 450 GB/s); pairwise: 7 steps x
(2 us + S/8 / 450 GB/s). 64 kB: Bruck 6.2 us, pairwise 14.1 us, Bruck wins since only the
message count matters when parts are tiny. 16 MB: Bruck 59.3 us, pairwise 45.1 us, pairwise
wins because Bruck forwards most parts more than once (12 parts sent per rank against 7).
Equal when 4 x 2 us = (1.5 - 0.875) S / 450 GB/s, S = 5.76 MB."""

# ---- wrong answers (each also serves the partial and hostile students) ----------------------

BRUCK_NO_UNROTATE = """
def bruck_steps(n):
    if n == 1:
        return []
    steps = [[(r, r, (r + i) % n, i) for r in range(n) for i in range(n) if (r + i) % n != i]]
    b = 0
    while (1 << b) < n:
        steps.append([(r, (r + (1 << b)) % n, i, i) for r in range(n) for i in range(n)
                      if i & (1 << b)])
        b += 1
    return steps                          # the parts arrive, in the slots of their distance
"""
BRUCK_BACKWARDS = """
def bruck_steps(n):
    if n == 1:
        return []
    steps = [[(r, r, (r + i) % n, i) for r in range(n) for i in range(n) if (r + i) % n != i]]
    b = 0
    while (1 << b) < n:
        # sends 2**b ranks behind, although slot i holds the part for i ranks ahead
        steps.append([(r, (r - (1 << b)) % n, i, i) for r in range(n) for i in range(n)
                      if i & (1 << b)])
        b += 1
    steps.append([(r, r, i, (r - i) % n) for r in range(n) for i in range(n)
                  if (r - i) % n != i])
    return steps
"""
BRUCK_DIRECT = """
def bruck_steps(n):
    # a correct all-to-all, but the direct one: a single step, not Bruck's exchanges
    return [[(s, d, d, s) for s in range(n) for d in range(n) if s != d]] if n > 1 else []
"""
PAIRWISE_XOR = """
def pairwise_steps(n):
    # partners r XOR s: right for powers of two only
    return [[(r, r ^ s, r ^ s, r) for r in range(n)] for s in range(1, n)]
"""
PAIRWISE_SLOT_R = """
def pairwise_steps(n):
    # straight into slot r of the receiver, which may not have sent that slot yet
    return [[(r, (r + s) % n, (r + s) % n, r) for r in range(n)] for s in range(1, n)]
"""
CHAIN_NEAREST = """
def chain_steps(n):
    def scratch(s, d):
        return n + n * s + d
    waiting = [[(r, d) for d in range(n) if d != r] for r in range(n)]
    steps = []
    while any(waiting):
        step, arrived = [], [[] for _ in range(n)]
        for r in range(n):
            for way in (+1, -1):
                going = [(s, d) for s, d in waiting[r] if (d - r) * way > 0]
                if not going:
                    continue
                # the nearest destination first: delivers early, but the middle link idles
                s, d = min(going, key=lambda part: ((part[1] - r) * way, part[0]))
                waiting[r].remove((s, d))
                step.append((r, r + way, d if s == r else scratch(s, d), scratch(s, d)))
                if d != r + way:
                    arrived[r + way].append((s, d))
        for r in range(n):
            waiting[r] += arrived[r]
        steps.append(step)
    steps.append([(d, d, scratch(s, d), s) for d in range(n) for s in range(n) if s != d])
    return steps
"""
CHAIN_RELAY = """
def chain_steps(n):
    # every waiting part moves on at every step: n - 1 steps, but several parts per link
    def scratch(s, d):
        return n + n * s + d
    steps = []
    for k in range(1, n):
        step = []
        for s in range(n):
            for d in range(n):
                if abs(d - s) >= k:
                    way = 1 if d > s else -1
                    r = s + way * (k - 1)            # where the part is now
                    step.append((r, r + way, d if r == s else scratch(s, d), scratch(s, d)))
        steps.append(step)
    steps.append([(d, d, scratch(s, d), s) for d in range(n) for s in range(n) if s != d])
    return steps
"""
DISPATCH_SENT_ONLY = """
def dispatch_time(counts, token_bytes, alpha, bandwidth):
    n = len(counts)
    sent = [sum(counts[s][d] for d in range(n) if d != s) for s in range(n)]
    if max(sent) == 0:
        return 0.0
    return alpha + max(sent) * token_bytes / bandwidth   # forgets what the ranks receive
"""
DISPATCH_WITH_DIAGONAL = """
def dispatch_time(counts, token_bytes, alpha, bandwidth):
    n = len(counts)
    # the tokens that stay on their rank counted as traffic too
    sent = [sum(counts[s]) for s in range(n)]
    received = [sum(counts[s][d] for s in range(n)) for d in range(n)]
    busiest = max(sent + received)
    return alpha + busiest * token_bytes / bandwidth if busiest else 0.0
"""

WRONG = {
    "bruck_steps": BRUCK_NO_UNROTATE,
    "pairwise_steps": PAIRWISE_XOR,
    "chain_steps": CHAIN_NEAREST,
    "dispatch_time": DISPATCH_SENT_ONLY,
}
WRONG2 = {
    "bruck_steps": BRUCK_BACKWARDS,
    "pairwise_steps": PAIRWISE_SLOT_R,
    "chain_steps": CHAIN_RELAY,
    "dispatch_time": DISPATCH_WITH_DIAGONAL,
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "bruck_steps": """
def bruck_steps(n):
    # the rotations folded into the first and the last exchange: rank r keeps the part at
    # distance i in slot (r + i) % n until the first exchange, in slot i after it, and the
    # last exchange writes every part straight into its final slot
    k = (n - 1).bit_length()
    steps = []
    for b in range(k):
        step = []
        for r in range(n):
            q = (r + (1 << b)) % n
            for i in range(n):
                src = (r + i) % n if b == 0 else i
                if i & (1 << b):
                    step.append((r, q, src, (q - i) % n if b == k - 1 else i))
                elif b == k - 1:
                    if src != (r - i) % n:
                        step.append((r, r, src, (r - i) % n))
                elif b == 0 and src != i:
                    step.append((r, r, src, i))
        steps.append(step)
    return steps
""",
    "pairwise_steps": """
def pairwise_steps(n):
    # Bruck's rotation first (slot i: the part for r + i), then step s swaps slot s, which
    # every rank sends and receives into, then the un-rotation
    if n == 1:
        return []
    steps = [[(r, r, (r + i) % n, i) for r in range(n) for i in range(n) if (r + i) % n != i]]
    steps += [[(r, (r + s) % n, s, s) for r in range(n)] for s in range(1, n)]
    steps.append([(r, r, i, (r - i) % n) for r in range(n) for i in range(n)
                  if (r - i) % n != i])
    return [step for step in steps if step]
""",
    "chain_steps": """
import heapq

def chain_steps(n):
    # farthest destination first, ties to the higher source, with heaps; parts wait in slot
    # n + n * dest + source, and each rank's own parts leave from their data slots
    right = [[] for _ in range(n)]
    left = [[] for _ in range(n)]
    for r in range(n):
        for d in range(n):
            if d > r:
                heapq.heappush(right[r], (-d, -r))
            elif d < r:
                heapq.heappush(left[r], (d, -r))
    steps = []
    while any(right) or any(left):
        step, moved = [], []
        for r in range(n):
            if right[r]:
                neg_d, neg_s = heapq.heappop(right[r])
                d, s = -neg_d, -neg_s
                step.append((r, r + 1, d if s == r else n + n * d + s, n + n * d + s))
                if d != r + 1:
                    moved.append((right, r + 1, (neg_d, neg_s)))
            if left[r]:
                d, neg_s = heapq.heappop(left[r])
                s = -neg_s
                step.append((r, r - 1, d if s == r else n + n * d + s, n + n * d + s))
                if d != r - 1:
                    moved.append((left, r - 1, (d, neg_s)))
        for heaps, r, item in moved:
            heapq.heappush(heaps[r], item)
        steps.append(step)
    steps.append([(d, d, n + n * d + s, s) for d in range(n) for s in range(n) if s != d])
    return steps
""",
    "dispatch_time": """
import numpy as np

def dispatch_time(counts, token_bytes, alpha, bandwidth):
    tokens = np.array(counts, dtype=float)
    off = tokens - np.diag(np.diag(tokens))     # what leaves its rank
    busiest = max(off.sum(axis=1).max(), off.sum(axis=0).max())
    return float(alpha + busiest * token_bytes / bandwidth) if busiest > 0 else 0.0
""",
}

# ---- shortcut: the package's answers, called from the graded functions ----------------------

SHORTCUT = {
    "bruck_steps": """
def bruck_steps(n):
    return cl.algorithms.bruck_all_to_all(n).to_lists()
""",
    "pairwise_steps": """
from collectives.algorithms import pairwise_all_to_all

def pairwise_steps(n):
    return pairwise_all_to_all(n).to_lists()
""",
    "chain_steps": """
def chain_steps(n):
    import collectives
    return collectives.algorithms.chain_farthest_first_all_to_all(n).to_lists()
""",
    "dispatch_time": """
import importlib

def dispatch_time(counts, token_bytes, alpha, bandwidth):
    grading = importlib.import_module("collectives.grading")
    return grading.dispatch_seconds(counts, token_bytes, link_bandwidth=bandwidth,
                                    hop_latency=alpha / 2)
""",
}

# ---- hostile ---------------------------------------------------------------------------------

# Wrong answers, made to pass the visible tests by tampering with everything in reach.
HOSTILE = {
    "bruck_steps": "import collectives.grading.collective_tasks\n" + TAMPERING + BRUCK_DIRECT,
    "pairwise_steps": """
expected = _expected = []
"""
    + PAIRWISE_XOR,
    # (the visible test's own check stays patched: collective_tasks is not reloaded in the
    # kernel; the hidden re-check imports it afresh)
    "chain_steps": """
collectives.algorithms.chain_farthest_first_all_to_all = lambda n: None
"""
    + CHAIN_RELAY,
    # genuinely right, in a way of its own
    "dispatch_time": VARIANT["dispatch_time"],
}
# test cells the hostile student edits (nbgrader restores them from the gradebook)
HOSTILE_TESTS = {"test_bruck_steps": "print('all tests passed')", "test_chain_steps": "pass"}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("bruck_steps", "pairwise_steps"),
            replaced={"chain_steps": CHAIN_NEAREST, "written_choice": PARTIAL_WRITTEN},
        )
    },
    "hostile": {
        NOTEBOOK: submission(
            replaced={**HOSTILE, "written_choice": HOSTILE_WRITTEN}, edited_tests=HOSTILE_TESTS
        )
    },
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong2": {NOTEBOOK: submission(replaced=WRONG2)},
    "variant": {NOTEBOOK: submission(replaced={**VARIANT, "written_choice": VARIANT_WRITTEN})},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    # the written answer half right by the rubric (0.5, given by hand)
    "partial": {
        NOTEBOOK: {**ZERO, "test_bruck_steps": 3, "test_pairwise_steps": 2, "written_choice": 0.5}
    },
    # every tampering fails; only its genuinely correct dispatch_time earns its point
    "hostile": {NOTEBOOK: {**ZERO, "test_dispatch_time": 1}},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "wrong2": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}


def refused(call, why):
    """The message of a graded function that used the package (the visible test's, which
    re-runs it without the package too)."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    "partial": {
        NOTEBOOK: {
            "test_chain_steps": Error(
                "chain_steps(4) computes the all-to-all on the chain, one part per link and "
                "direction per step, but in 5 steps that move data; the cut bound is floor(n**2 / "
                "4) = 4: the 4 parts that cross the middle link each way need a step each, so that "
                "link must carry one at every step"
            )
        }
    },
    "hostile": {
        NOTEBOOK: {
            "test_bruck_steps": Error(
                startswith="bruck_steps(3) computes the all-to-all, but in 1 step"
            ),
            "test_pairwise_steps": Error(startswith="pairwise_steps(3): step 0, transfer 2"),
            "test_chain_steps": Error(
                startswith="chain_steps(3): in step 0 the link from rank 0 "
                "to rank 1 carries 2 parts"
            ),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_bruck_steps": Error(startswith="bruck_steps(4) does not compute the all-to-all"),
            "test_pairwise_steps": Error(startswith="pairwise_steps(5): step 0, transfer 4"),
            "test_dispatch_time": Error(
                startswith="dispatch_time([[10, 3, 2, 1], [40, 5, 1, 2], [35, 4, 6, 0], [50, 2, 2, "
                "3]], 8192, 2e-06, 450000000000.0) is "
            ),
        }
    },
    "wrong2": {
        NOTEBOOK: {
            "test_chain_steps": Error(
                startswith="chain_steps(4): in step 0 the link from rank 0 "
                "to rank 1 carries 3 parts"
            ),
        }
    },
    # each re-run refuses the package, in the words of the way it was used
    "shortcut": {
        NOTEBOOK: {
            "test_bruck_steps": refused(
                "bruck_steps(4)", "your code uses cl, which is the collectives package"
            ),
            "test_pairwise_steps": refused(
                "pairwise_steps(4)",
                "your code uses pairwise_all_to_all, which is "
                "collectives.algorithms.alltoall.pairwise_all_to_all",
            ),
            "test_chain_steps": refused("chain_steps(4)", "your code imports 'collectives'"),
            "test_dispatch_time": refused(
                "dispatch_time([[10, 3, 2, 1], [40, 5, 1, 2], [35, 4, 6, 0], [50, 2, 2, 3]], 8192, "
                "2e-06, 450000000000.0)",
                "your code imports 'collectives'",
            ),
        }
    },
}

PRINTED = {
    # the tampering did fool the visible, in-kernel checks: each printed its success line
    "hostile": {
        NOTEBOOK: (
            "bruck_steps(4) and bruck_steps(5) are correct all-to-alls in ceil(log2 n) exchanges.",
            "pairwise_steps(4) and pairwise_steps(5) are pairwise exchanges in n - 1 steps.",
            "chain_steps(4) and chain_steps(5) reach the cut bound: 4 and 6 steps.",
        )
    },
    # what a learner's right answers, written their own way, are told
    "variant": {
        NOTEBOOK: (
            "bruck_steps(4) and bruck_steps(5) are correct all-to-alls in ceil(log2 n) exchanges.",
        )
    },
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack("all_to_all", SOLUTIONS)
