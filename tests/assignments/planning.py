"""planning (exercises/source/planning/plan_a_training_run.ipynb, 10 points): what the pipeline
test expects. Format: the docstring of tests/assignments/__init__.py.

Tasks 1-4 are solved without the collectives package (each hidden test re-runs the learner's
function with ``_grading.call(f, ..., isolated=True)``); tasks 5 and 6 may use the planner but
not ``collectives.grading`` or ``cl.plan.sensitivity`` (``forbid=...``). Every expected value
comes from ``collectives.grading.plan_tasks``, i.e. from ``cl.plan.training_step`` in the
re-check process; tasks 4-6 check the consequence of the learner's decision (it fits with no
more changes than the fewest; the verdict flips under the assumption named; the two steps are
within 0.5 % at the efficiency given), so any answer with that consequence passes, and their
hidden tests add cases drawn from the course seed. Submissions:

- *correct*, *blank*;
- *partial*: the step's collectives, the all-to-alls and the flipping assumption right, the
  memory with one micro-batch of activations in flight instead of min(pp, m), the written
  answer half right, the rest blank (2 + 1 + 2 + 0.5 = 5.5);
- *hostile*: wrong answers behind patched checks (``TAMPERING``, then each cell patches the
  checks and ``run_isolated`` its own visible test reads), lying floats, rebound names, edited
  test cells; its ``ep_all_to_all`` is genuinely right, in the cell that disables every check
  (1);
- *wrong*, *wrong_bytes*, *wrong_shard*: three plausible mistakes per task, 0 each:
  the backward all-reduces forgotten, gradients in 4 bytes, all parameters instead of the
  shard (task 1); the backward all-to-alls forgotten, ``top_k`` forgotten, the bytes to one
  destination (task 2); FSDP taken as ZeRO 1, one micro-batch of activations, the whole model
  per GPU (task 3); more micro-batches until it fits, the logits left out, the first stage
  plus the logits whatever the pipeline (task 4); the slowest matmuls named whatever the
  rival, the verdict read off the exposed communication, the routing what-ifs planned as the
  fabric is built (task 5); no crossing ever, the exposed communication held at its peak
  value, a scan 0.1 at a time (task 6);
- *variant*: right answers written differently (phases listed then summed, lists instead of
  tuples and an entry with count 0, numpy arrays of bytes; a breadth-first search that returns
  another fitting layout than the reference's, with only its non-default keys; the *last*
  flipping assumption, the package imported inside the function; a fine scan interpolated
  linearly, with numpy): 10;
- *shortcut*: the package called from every graded function (``cl.plan.training_step``,
  ``from collectives.plan import``, ``import collectives`` inside, ``cl.plan.sensitivity``
  for task 5 and the reference answer ``collectives.grading.plan_tasks.breakeven_mfu`` for
  task 6): 0.

No "better than the reference" submission: the reference of task 4 searches every change of
one or two settings (no answer changes fewer), and tasks 5 and 6 accept every answer with the
consequence asked for (the variant's differ from the reference's).
"""

from collectives.grading.isolation import FORBIDDEN, NO_PACKAGE

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "plan_a_training_run"

POINTS = {
    NOTEBOOK: {
        "test_step_collectives": 2,
        "test_ep_all_to_all": 1,
        "test_memory_per_device": 1,
        "test_make_it_fit": 2,
        "test_flipping_assumption": 2,
        "test_breakeven_mfu": 1,
        "written_sensitivity": 1,
    }
}
MAX_SCORE = 10
SOLUTIONS = {
    NOTEBOOK: (
        "step_collectives",
        "ep_all_to_all",
        "memory_per_device",
        "make_it_fit",
        "flipping_assumption",
        "breakeven_mfu",
    )
}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_sensitivity",)}
ALL = SOLUTIONS[NOTEBOOK]

ADVICE = (
    "; use the package in scratch cells to check your answers, not inside the functions "
    "that are graded"
)

# ---- answers made from one template, with one mistake each -----------------------------------


def _step(tp_count="4", grad_bytes="2", held="params / (tp * pp)", note=""):
    """step_collectives with the tensor-parallel count per block and micro-batch, the bytes
    per reduced gradient and the parameters a GPU holds as given."""
    return f"""
def step_collectives(shape, layout, seq_len, global_batch):
    dp, fsdp = layout.get("dp", 1), layout.get("fsdp", 1)
    tp, pp = layout.get("tp", 1), layout.get("pp", 1)
    zero, m = layout.get("zero_stage", 0), layout.get("micro_batches", 1)
    sp = layout.get("sequence_parallel", False)
    h, layers = shape["hidden"], shape["layers"]
    per_block = (2 * h * h + 2 * h * shape["kv_heads"] * (h // shape["heads"])
                 + 3 * h * shape["ffn"])
    params = layers * per_block + 2 * shape["vocab"] * h
    b = global_batch // (dp * fsdp * m)
    blocks = layers // pp
    activation = b * seq_len * h * 2
    out = {{}}
    if tp > 1:
        names = (["tp activation all-gather", "tp activation reduce-scatter"] if sp
                 else ["tp activation all-reduce"])
        for name in names:
            out[name] = (activation, {tp_count} * blocks * m)
    if pp > 1:
        sent = activation / tp if sp else activation
        out["pp activation send"] = (sent, m)
        out["pp gradient send"] = (sent, m)
    held = {held}{note}
    if fsdp > 1:
        out["fsdp weight all-gather"] = (held / blocks * 2, 2 * blocks * m)
        out["fsdp grad reduce-scatter"] = (held / blocks * {grad_bytes}, blocks * m)
        held = held / fsdp
    if dp > 1:
        if zero == 0:
            out["dp grad all-reduce"] = (held * {grad_bytes}, 1)
        else:
            out["dp grad reduce-scatter"] = (held * {grad_bytes}, m if zero == 2 else 1)
            out["dp weight all-gather"] = (held * 2, 1)
    return out
"""


def _experts(buffer='tokens * shape["top_k"] * shape["hidden"] * 2', count="4", note=""):
    return f"""
def ep_all_to_all(shape, layout, seq_len, global_batch):
    ep = layout.get("ep", 1)
    replicas = layout.get("dp", 1) * layout.get("fsdp", 1) * ep
    m, pp = layout.get("micro_batches", 1), layout.get("pp", 1)
    tokens = global_batch // (replicas * m) * seq_len
    if layout.get("sequence_parallel", False):
        tokens = tokens / layout.get("tp", 1)
    moe_blocks = -(-(shape["layers"] - shape.get("dense_layers", 0)) // pp){note}
    return {buffer}, {count} * moe_blocks * m
"""


def _memory(
    held='(layers * per_block + 2 * shape["vocab"] * h) / (tp * pp)',
    fsdp_shards="out[part] = value / fsdp",
    in_flight=" * min(pp, m)",
):
    return f"""
_RECIPES = {{"bf16": {{"weights": 2, "master": 4, "grads": 4, "optimizer": 8}},
            "fp8": {{"weights": 2, "master": 0, "grads": 1, "optimizer": 3}}}}

def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    dp, fsdp = layout.get("dp", 1), layout.get("fsdp", 1)
    tp, pp = layout.get("tp", 1), layout.get("pp", 1)
    zero, m = layout.get("zero_stage", 0), layout.get("micro_batches", 1)
    h, layers = shape["hidden"], shape["layers"]
    per_block = (2 * h * h + 2 * h * shape["kv_heads"] * (h // shape["heads"])
                 + 3 * h * shape["ffn"])
    held = {held}
    sharded = {{1: ("master", "optimizer"), 2: ("master", "optimizer", "grads")}}.get(zero, ())
    out = {{}}
    for part, per in _RECIPES[recipe].items():
        value = held * per / (dp if part in sharded else 1)
        {fsdp_shards}
    b = global_batch // (dp * fsdp * m)
    if layout.get("sequence_parallel", False):
        per_layer = 34 * seq_len * b * h / tp
    else:
        per_layer = seq_len * b * h * (10 + 24 / tp)
    out["activations"] = per_layer * (layers // pp){in_flight}
    return out
"""


# ---- task 4: make it fit ---------------------------------------------------------------------


# the search of the reference, with the memory model as given (one of three plausible ones)
def _fit(total, note=""):
    return f'''
import itertools

_DEFAULTS = {{"dp": 1, "fsdp": 1, "tp": 1, "pp": 1, "zero_stage": 0,
             "sequence_parallel": False, "micro_batches": 1}}

def make_it_fit(shape, layout, seq_len, global_batch, hbm_bytes):
    base = dict(_DEFAULTS, **layout)
    gpus = base["dp"] * base["fsdp"] * base["tp"] * base["pp"]
    sizes = [d for d in range(1, gpus + 1) if gpus % d == 0]
    choices = {{"dp": sizes, "fsdp": sizes, "tp": sizes, "pp": sizes, "zero_stage": [0, 1, 2],
               "sequence_parallel": [False, True],
               "micro_batches": [m for m in range(1, global_batch + 1) if global_batch % m == 0]}}
    for count in (1, 2):
        best, least = None, float("inf")
        for keys in itertools.combinations(choices, count):
            for values in itertools.product(*(choices[k] for k in keys)):
                new = dict(base, **dict(zip(keys, values)))
                if any(new[k] == base[k] for k in keys):
                    continue
                L = new
                if not (L["dp"] * L["fsdp"] * L["tp"] * L["pp"] == gpus and L["tp"] <= 8
                        and shape["heads"] % L["tp"] == 0 and shape["layers"] % L["pp"] == 0
                        and global_batch % (L["dp"] * L["fsdp"] * L["micro_batches"]) == 0
                        and not (L["sequence_parallel"] and L["tp"] == 1)):
                    continue
                memory = _total_memory(shape, new, seq_len, global_batch)
                if memory <= hbm_bytes and memory < least:
                    best, least = new, memory
        if best is not None:
            return best
    return None


def _parts(shape, layout, seq_len, global_batch):
    """Task 3's parts in BF16 (as the solution of Task 3: this cell stands on its own)."""
    dp, fsdp, tp, pp = layout["dp"], layout["fsdp"], layout["tp"], layout["pp"]
    zero, m = layout["zero_stage"], layout["micro_batches"]
    h = shape["hidden"]
    per_block = (2 * h * h + 2 * h * shape["kv_heads"] * (h // shape["heads"])
                 + 3 * h * shape["ffn"])
    held = (shape["layers"] * per_block + 2 * shape["vocab"] * h) / (tp * pp)
    sharded = {{1: ("master", "optimizer"), 2: ("master", "optimizer", "grads")}}.get(zero, ())
    out = {{part: held * per / fsdp / (dp if part in sharded else 1)
           for part, per in (("weights", 2), ("master", 4), ("grads", 4), ("optimizer", 8))}}
    b = global_batch // (dp * fsdp * m)
    per_layer = (34 * seq_len * b * h / tp if layout["sequence_parallel"]
                 else seq_len * b * h * (10 + 24 / tp))
    out["activations"] = per_layer * (shape["layers"] // pp) * min(pp, m)
    return out


def _total_memory(shape, layout, seq_len, global_batch):{note}
    parts = _parts(shape, layout, seq_len, global_batch)
    states = parts["weights"] + parts["master"] + parts["grads"] + parts["optimizer"]
    b = global_batch // (layout["dp"] * layout["fsdp"] * layout["micro_batches"])
    one_micro_batch = parts["activations"] / min(layout["pp"], layout["micro_batches"])
    logits = 4 * b * seq_len * shape["vocab"] / layout["tp"]
    return {total}
'''


# the logits left out: the five parts of Task 3 only
FIT_NO_LOGITS = _fit(
    'states + parts["activations"]', note="\n    # Task 3's five parts: that is all a GPU holds"
)
# the first stage's activations and the logits added, whatever the pipeline
FIT_FIRST_STAGE = _fit(
    'states + parts["activations"] + logits',
    note="\n    # the first stage's micro-batches, plus the logits",
)

# more micro-batches until it fits: the activations are the big part, are they not?
FIT_MICRO_BATCHES = """
def make_it_fit(shape, layout, seq_len, global_batch, hbm_bytes):
    new = dict(layout)
    data = layout.get("dp", 1) * layout.get("fsdp", 1)
    m = layout.get("micro_batches", 1)
    while global_batch % (data * m * 2) == 0:
        m *= 2
        new["micro_batches"] = m
        parts = memory_per_device(shape, new, seq_len, global_batch, "bf16")
        if sum(parts.values()) <= hbm_bytes:
            break
    return new
"""

# right, written otherwise: a breadth-first search over single changes that returns the
# first layout that fits (not the one with the least memory), with only non-default keys
FIT_VARIANT = '''
_BASE = {"dp": 1, "fsdp": 1, "tp": 1, "pp": 1, "zero_stage": 0, "sequence_parallel": False,
         "micro_batches": 1}

def _gpu_bytes(shape, L, seq_len, global_batch):
    parts = memory_per_device(shape, L, seq_len, global_batch, "bf16")
    b = global_batch / (L["dp"] * L["fsdp"] * L["micro_batches"])
    logits = 4.0 * b * seq_len * shape["vocab"] / L["tp"]
    last = parts.pop("activations") / min(L["pp"], L["micro_batches"]) + logits
    first = memory_per_device(shape, L, seq_len, global_batch, "bf16")["activations"]
    return sum(parts.values()) + max(first, last)

def _moves(shape, L, gpus, global_batch):
    """Every layout one setting away from L on the same GPUs (a pair of sizes traded counts
    as two settings, so it is two moves)."""
    for key, values in (("zero_stage", (0, 1, 2)), ("sequence_parallel", (False, True)),
                        ("micro_batches", range(1, global_batch + 1)),
                        ("dp", range(1, gpus + 1)), ("fsdp", range(1, gpus + 1)),
                        ("tp", (1, 2, 4, 8)), ("pp", range(1, gpus + 1))):
        for value in values:
            if value != L[key]:
                yield {**L, key: value}

def _ok(shape, L, gpus, global_batch):
    return (L["dp"] * L["fsdp"] * L["tp"] * L["pp"] == gpus and L["tp"] <= 8
            and shape["heads"] % L["tp"] == 0 and shape["layers"] % L["pp"] == 0
            and global_batch % (L["dp"] * L["fsdp"] * L["micro_batches"]) == 0
            and (L["tp"] > 1 or not L["sequence_parallel"]))

def make_it_fit(shape, layout, seq_len, global_batch, hbm_bytes):
    start = {**_BASE, **layout}
    gpus = start["dp"] * start["fsdp"] * start["tp"] * start["pp"]
    frontier = [start]
    for _ in range(2):
        reached = []
        for L in frontier:
            reached.extend(_moves(shape, L, gpus, global_batch))
        for L in reached:
            if _ok(shape, L, gpus, global_batch) and _gpu_bytes(shape, L, seq_len,
                                                                 global_batch) <= hbm_bytes:
                return {k: v for k, v in L.items() if v != _BASE[k]}
        frontier = reached
    return dict(layout)
'''

FIT_SHORTCUT = """
def make_it_fit(shape, layout, seq_len, global_batch, hbm_bytes):
    for micro_batches in (2, 4, 8, 16, 32):
        new = dict(layout, micro_batches=micro_batches)
        L = cl.plan.Layout(**new)
        plan = cl.plan.training_step(cl.plan.Transformer(**shape), L,
                                     cl.topology.switch(L.devices, 1e11), seq_len=seq_len,
                                     global_batch=global_batch, flops_per_device=1e15)
        if plan.memory_per_device <= hbm_bytes:
            return new
    return layout
"""

# ---- task 5: the assumption that flips a verdict -------------------------------------------


def _flip(compare="plan.step_seconds", routing='knobs.get("ecmp")', order="ASSUMPTIONS", note=""):
    return f"""
_SETS = {{"matmul efficiency 0.6": ("line", 0.6, None, "bf16"),
         "matmul efficiency 0.4": ("line", 0.4, None, "bf16"),
         "effective link rates": ("effective", 1.0, None, "bf16"),
         "enhanced ECMP, 16 QPs": ("line", 1.0, "e-ecmp", "bf16"),
         "adaptive routing": ("line", 1.0, "adaptive", "bf16"),
         "FP8 matmuls": ("line", 1.0, None, "fp8")}}

def _seconds(case, which, label, clusters):
    rates, mfu, ecmp, compute = _SETS[label] if label else ("line", 1.0, None, "bf16")
    knobs = {{"ecmp": ecmp}}
    plan = cl.plan.training_step(case["model"], cl.plan.Layout(**case[which]), clusters[rates],
                                 seq_len=case["seq_len"], global_batch=case["global_batch"],
                                 mfu=mfu, compute=compute, ecmp={routing}){note}
    return {compare}

def _verdict(case, label, clusters):
    mine = _seconds(case, "layout", label, clusters)
    if "rival" in case:
        return mine < _seconds(case, "rival", label, clusters)
    return mine <= case["target"]

def flipping_assumption(case):
    clusters = {{r: cl.hardware.preset("superpod-h100", units=case["units"], rates=r)
                for r in ("line", "effective")}}
    planned = _verdict(case, None, clusters)
    for label in {order}:
        if _verdict(case, label, clusters) != planned:
            return label
    return None
"""


# the verdict read off the exposed communication, not the step
FLIP_EXPOSED = _flip(
    compare="plan.exposed_seconds", note="\n    # the layout with less exposed communication wins"
)
# the routing schemes planned as the cluster is built (ecmp never passed on)
FLIP_NO_ROUTING = _flip(routing="None", note="\n    # the fabric routes as built")
# "flips" read as "moves the step the most": the slowest matmuls, whatever the rival
FLIP_SLOWEST = """
def flipping_assumption(case):
    return "matmul efficiency 0.4"     # the biggest change of the step time
"""
# right, written otherwise: the last flipping assumption, the package imported inside
FLIP_VARIANT = """
def flipping_assumption(case):
    from collectives.hardware import preset
    from collectives.plan import Layout, training_step
    settings = {"matmul efficiency 0.6": {"mfu": 0.6}, "matmul efficiency 0.4": {"mfu": 0.4},
                "effective link rates": {}, "enhanced ECMP, 16 QPs": {"ecmp": "e-ecmp"},
                "adaptive routing": {"ecmp": "adaptive"}, "FP8 matmuls": {"compute": "fp8"}}

    def margin(label):
        rates = "effective" if label == "effective link rates" else "line"
        cluster = preset("superpod-h100", units=case["units"], rates=rates)
        extra = settings.get(label, {})
        step = lambda layout: training_step(case["model"], Layout(**layout), cluster,
                                            seq_len=case["seq_len"],
                                            global_batch=case["global_batch"],
                                            **extra).step_seconds
        mine = step(case["layout"])
        theirs = step(case["rival"]) if "rival" in case else case["target"]
        return theirs - mine

    def holds(label):   # shorter than the rival's step; at most the target
        return margin(label) > 0 if "rival" in case else margin(label) >= 0

    flips = [label for label in settings if holds(label) != holds(None)]
    return flips[-1] if flips else None
"""
FLIP_SHORTCUT = """
def flipping_assumption(case):
    rows = {}
    for which in ("layout", "rival"):
        if which in case:
            rows[which] = cl.plan.sensitivity(
                case["model"], cl.plan.Layout(**case[which]), "superpod-h100",
                preset_options={"units": case["units"]}, seq_len=case["seq_len"],
                global_batch=case["global_batch"])
    theirs = [r["step"] for r in rows["rival"]] if "rival" in case else None
    held = [mine < (theirs[i] if theirs else case["target"] + 1e-12)
            for i, mine in enumerate(r["step"] for r in rows["layout"])]
    return next((rows["layout"][i]["what if"] for i in range(1, len(held))
                 if held[i] != held[0]), None)
"""

# ---- task 6: the break-even matmul efficiency ------------------------------------------------

# both steps scale as 1 / mfu, so the order never changes
EVEN_NEVER = """
def breakeven_mfu(case):
    return None      # compute is the same for both layouts and scales both steps alike
"""
# the exposed communication held at its value at peak: only compute and bubble scale
EVEN_FIXED_EXPOSED = """
def breakeven_mfu(case):
    cluster = cl.hardware.preset("superpod-h100", units=case["units"])
    parts = {}
    for which in ("layout", "rival"):
        plan = cl.plan.training_step(case["model"], cl.plan.Layout(**case[which]), cluster,
                                     seq_len=case["seq_len"], global_batch=case["global_batch"])
        parts[which] = (plan.compute_seconds + plan.bubble_seconds, plan.exposed_seconds)
    step = lambda which, mfu: parts[which][0] / mfu + parts[which][1]
    low, high = 0.2, 1.0
    if step("rival", low) > step("layout", low):
        return None
    for _ in range(40):
        mid = (low + high) / 2
        if step("rival", mid) <= step("layout", mid):
            low = mid
        else:
            high = mid
    return (low + high) / 2
"""
# a coarse scan, 0.1 at a time, down from the peak
EVEN_COARSE = """
def breakeven_mfu(case):
    cluster = cl.hardware.preset("superpod-h100", units=case["units"])
    def step(which, mfu):
        return cl.plan.training_step(case["model"], cl.plan.Layout(**case[which]), cluster,
                                     seq_len=case["seq_len"], global_batch=case["global_batch"],
                                     mfu=mfu).step_seconds
    for tenths in range(10, 1, -1):
        if step("rival", tenths / 10) <= step("layout", tenths / 10):
            return tenths / 10
    return None
"""
# right, written otherwise: a fine scan, then the crossing interpolated linearly
EVEN_VARIANT = """
import numpy as np

def breakeven_mfu(case):
    from collectives.hardware import preset
    from collectives.plan import Layout, training_step
    cluster = preset("superpod-h100", units=case["units"])

    def lead(mfu):      # how much longer the rival's step is than the layout's
        a, b = (training_step(case["model"], Layout(**case[w]), cluster, mfu=float(mfu),
                              seq_len=case["seq_len"],
                              global_batch=case["global_batch"]).step_seconds
                for w in ("layout", "rival"))
        return b - a

    grid = np.linspace(1.0, 0.2, 81)
    leads = [lead(x) for x in grid]
    for x0, x1, y0, y1 in zip(grid, grid[1:], leads, leads[1:]):
        if y0 > 0 >= y1:
            return float(x0 + (x1 - x0) * y0 / (y0 - y1))
    return None
"""
EVEN_SHORTCUT = """
def breakeven_mfu(case):
    import collectives.grading.plan_tasks as reference
    return reference.breakeven_mfu(case)
"""


# ---- partial -----------------------------------------------------------------------------------

# one micro-batch of activations in flight, not min(pp, m)
PARTIAL_MEMORY = _memory(in_flight="")
PARTIAL_WRITTEN = """At matmul efficiency 0.6 FSDP wins (6.86 s against 7.62 s): its exposed
FSDP gathers (0.80 s at peak) hide behind the longer compute, while ZeRO 2's 1.34 s of
tensor-parallel collectives sit on the critical path. Adaptive routing speeds FSDP's rings up
(4.74 s). With FP8 matmuls ZeRO 2 wins, 3.55 s against 5.14 s: the shorter windows expose
FSDP's gathers. I would run ZeRO 2, it is the fastest."""

# ---- hostile -----------------------------------------------------------------------------------

# what each cell's own visible test reads, patched (every hidden test before it reloads the
# grading package, so each cell patches again)
PATCH = """
import collectives.grading
import collectives.grading.plan_tasks
for _name in dir(collectives.grading.plan_tasks):
    if _name.startswith("check"):
        setattr(collectives.grading.plan_tasks, _name, lambda *args, **kwargs: 1.0)
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
"""
LIAR = """
class _Liar(float):                    # equal to everything
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
"""
HOSTILE = {
    "step_collectives": PATCH + _step(tp_count="2"),
    "ep_all_to_all": TAMPERING + _experts(),
    "memory_per_device": PATCH
    + LIAR
    + """
def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    return dict.fromkeys(["weights", "master", "grads", "optimizer", "activations"], _Liar(0))
""",
    "make_it_fit": PATCH
    + """
import math
math.isclose = lambda *args, **kwargs: True
range = lambda *args: ()
def make_it_fit(shape, layout, seq_len, global_batch, hbm_bytes):
    return layout
""",
    "flipping_assumption": PATCH
    + """
ASSUMPTIONS = ("FP8 matmuls",)
def flipping_assumption(case):
    return "FP8 matmuls"
""",
    "breakeven_mfu": PATCH
    + LIAR
    + """
def breakeven_mfu(case):
    return 0.5
""",
    "written_sensitivity": "All tests passed.",
}
HOSTILE_TESTS = {
    "test_step_collectives": "print('all tests passed')",
    "test_flipping_assumption": "pass",
}

# ---- wrong: three plausible mistakes per task --------------------------------------------------

WRONG = {
    # two all-reduces per block and micro-batch: the backward pass's two forgotten
    "step_collectives": _step(tp_count="2"),
    "ep_all_to_all": _experts(count="2", note="   # dispatch and combine, forward only"),
    # FSDP taken as ZeRO 1: only the master weights and optimizer states sharded over it
    "memory_per_device": _memory(
        fsdp_shards='out[part] = value / fsdp if part in ("master", "optimizer") else value'
    ),
    "make_it_fit": FIT_MICRO_BATCHES,
    "flipping_assumption": FLIP_SLOWEST,
    "breakeven_mfu": EVEN_NEVER,
}
WRONG_BYTES = {
    "step_collectives": _step(grad_bytes="4", note="   # gradients reduced in FP32 below"),
    "ep_all_to_all": _experts(
        buffer='tokens * shape["hidden"] * 2', note="   # one copy of each token: top_k forgotten"
    ),
    "memory_per_device": PARTIAL_MEMORY,
    "make_it_fit": FIT_NO_LOGITS,
    "flipping_assumption": FLIP_EXPOSED,
    "breakeven_mfu": EVEN_FIXED_EXPOSED,
}
WRONG_SHARD = {
    "step_collectives": _step(held="params", note="   # the whole model, not this GPU's shard"),
    "ep_all_to_all": _experts(
        buffer='tokens * shape["top_k"] * shape["hidden"] * 2 / ep',
        note="   # what goes to one destination",
    ),
    "memory_per_device": _memory(held='layers * per_block + 2 * shape["vocab"] * h'),
    "make_it_fit": FIT_FIRST_STAGE,
    "flipping_assumption": FLIP_NO_ROUTING,
    "breakeven_mfu": EVEN_COARSE,
}

# ---- variant: right, written differently -------------------------------------------------------

VARIANT = {
    # every pass's collectives listed, then summed; lists, float counts, an empty entry
    "step_collectives": """
from collections import defaultdict

def step_collectives(shape, layout, seq_len, global_batch):
    size = {k: layout.get(k, 1) for k in ("dp", "fsdp", "tp", "pp", "micro_batches")}
    zero, sp = layout.get("zero_stage", 0), bool(layout.get("sequence_parallel", False))
    h = shape["hidden"]
    attention = 2 * h**2 + 2 * h * shape["kv_heads"] * h / shape["heads"]
    params = shape["layers"] * (attention + 3 * h * shape["ffn"]) + 2 * shape["vocab"] * h
    micro = size["micro_batches"]
    blocks = shape["layers"] / size["pp"]
    act = 2.0 * global_batch / (size["dp"] * size["fsdp"] * micro) * seq_len * h
    mine = params / (size["tp"] * size["pp"])
    events = []
    for phase in ("forward", "backward"):
        if size["tp"] > 1:
            for kind in (("all-gather", "reduce-scatter") if sp else ("all-reduce",)):
                events.append(("tp activation " + kind, act, 2 * blocks * micro))
        if size["pp"] > 1:
            name = "pp activation send" if phase == "forward" else "pp gradient send"
            events.append((name, act / size["tp"] if sp else act, micro))
        if size["fsdp"] > 1:
            events.append(("fsdp weight all-gather", 2 * mine / blocks, blocks * micro))
    if size["fsdp"] > 1:
        events.append(("fsdp grad reduce-scatter", 2 * mine / blocks, blocks * micro))
    grads = 2 * mine / size["fsdp"]
    if size["dp"] > 1 and zero == 0:
        events.append(("dp grad all-reduce", grads, 1))
    elif size["dp"] > 1:
        events.append(("dp grad reduce-scatter", grads, micro if zero == 2 else 1))
        events.append(("dp weight all-gather", grads, 1))
    totals = defaultdict(lambda: [0.0, 0.0])
    for purpose, nbytes, count in events:
        totals[purpose][0] = nbytes
        totals[purpose][1] += count
    out = {purpose: [nbytes, count] for purpose, (nbytes, count) in totals.items()}
    out.setdefault("dp grad all-reduce", [0.0, 0])
    return out
""",
    "ep_all_to_all": """
import math

def ep_all_to_all(shape, layout, seq_len, global_batch):
    get = lambda key, default=1: layout.get(key, default)
    per_micro_batch = global_batch * seq_len / (get("dp") * get("fsdp") * get("ep")
                                                * get("micro_batches"))
    if get("sequence_parallel", False):
        per_micro_batch /= get("tp")
    moe_blocks = math.ceil((shape["layers"] - shape.get("dense_layers", 0)) / get("pp"))
    dispatch_and_combine, forward_and_backward = 2, 2
    return [per_micro_batch * shape["top_k"] * shape["hidden"] * 2,
            moe_blocks * get("micro_batches") * dispatch_and_combine * forward_and_backward]
""",
    "memory_per_device": """
import numpy as np

_BYTES = {"bf16": np.array([2.0, 4.0, 4.0, 8.0]), "fp8": np.array([2.0, 0.0, 1.0, 3.0])}

def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    L = {"dp": 1, "fsdp": 1, "tp": 1, "pp": 1, "zero_stage": 0, "micro_batches": 1,
         "sequence_parallel": False}
    L.update(layout)
    h = shape["hidden"]
    block = 2 * h * h + 2 * h * shape["kv_heads"] * h // shape["heads"] + 3 * h * shape["ffn"]
    n = (shape["layers"] * block + 2 * shape["vocab"] * h) / L["tp"] / L["pp"] / L["fsdp"]
    divisor = np.ones(4)                     # weights, master, grads, optimizer
    if L["zero_stage"] >= 1:
        divisor[[1, 3]] = L["dp"]
    if L["zero_stage"] >= 2:
        divisor[2] = L["dp"]
    states = n * _BYTES[recipe] / divisor
    b = global_batch / (L["dp"] * L["fsdp"] * L["micro_batches"])
    factor = 34 / L["tp"] if L["sequence_parallel"] else 10 + 24 / L["tp"]
    activations = (factor * seq_len * b * h * shape["layers"] / L["pp"]
                   * min(L["pp"], L["micro_batches"]))
    return dict(zip(["weights", "master", "grads", "optimizer"], states.tolist()),
                activations=activations)
""",
    "make_it_fit": FIT_VARIANT,
    "flipping_assumption": FLIP_VARIANT,
    "breakeven_mfu": EVEN_VARIANT,
    "written_sensitivity": """As planned the two are a tie, 5.14 s each: ZeRO 2 exposes 1.34 s
of tensor-parallel all-gathers and reduce-scatters over 8 GPUs (the next matmul waits for
them) and 0.03 s of gradient traffic; FSDP exposes only 0.57 s of TP (4 GPUs) but 0.80 s of
its cross-node weight gathers and gradient reduce-scatters. Slower matmuls make FSDP the faster
(0.6: 6.86 s vs 7.62 s; 0.4: 10.01 vs 10.77 s) because its exposed part is data-parallel
traffic that hides once the compute (6.29 s at 0.6) is long enough, while TP stays on the
critical path. Adaptive routing makes FSDP's rings bidirectional and cuts its exposed FSDP to
0.39 s: 4.74 s. FP8 matmuls do the opposite: compute 2.02 s, FSDP exposes 2.55 s of gathers
and stays at 5.14 s, ZeRO 2 drops to 3.55 s.

I would launch FSDP (52 GB per GPU instead of 69 GB, and faster at any efficiency below
about 0.998, which every real job is below), then profile the GEMMs of a few steps to measure
the achieved matmul efficiency; if the run will use FP8, that measurement decides for ZeRO 2.""",
}

# ---- shortcut: the package called from the graded functions ----------------------------------

SHORTCUT = {
    "step_collectives": """
def step_collectives(shape, layout, seq_len, global_batch):
    lay = cl.plan.Layout(**layout)
    plan = cl.plan.training_step(cl.plan.Transformer(**shape), lay,
                                 cl.topology.switch(lay.devices, 1e11), seq_len=seq_len,
                                 global_batch=global_batch, flops_per_device=1e15)
    out = {}
    for r in plan.collectives:
        nbytes, count = out.get(r.purpose, (r.nbytes, 0))
        out[r.purpose] = (nbytes, count + r.count)
    return out
""",
    "ep_all_to_all": """
from collectives.plan import Layout, Transformer, training_step

def ep_all_to_all(shape, layout, seq_len, global_batch):
    lay = Layout(**layout)
    plan = training_step(Transformer(**shape), lay, "dgx-h100", seq_len=seq_len,
                         global_batch=global_batch)
    records = plan.records("all-to-all")
    return records[0].nbytes, sum(r.count for r in records)
""",
    "memory_per_device": """
def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    import collectives
    lay = collectives.plan.Layout(**layout)
    plan = collectives.plan.training_step(
        collectives.plan.Transformer(**shape), lay, collectives.topology.switch(lay.devices, 1e11),
        seq_len=seq_len, global_batch=global_batch, recipe=recipe, flops_per_device=1e15)
    memory = plan.memory.breakdown()
    return {k: memory[k] for k in ("weights", "master", "grads", "optimizer", "activations")}
""",
    "make_it_fit": FIT_SHORTCUT,
    "flipping_assumption": FLIP_SHORTCUT,
    "breakeven_mfu": EVEN_SHORTCUT,
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("step_collectives", "ep_all_to_all", "flipping_assumption"),
            replaced={"memory_per_device": PARTIAL_MEMORY, "written_sensitivity": PARTIAL_WRITTEN},
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    # the written answer handed in untouched: 0 by nbgrader itself
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "wrong_bytes": {NOTEBOOK: submission(replaced=WRONG_BYTES)},
    "wrong_shard": {NOTEBOOK: submission(replaced=WRONG_SHARD)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

_ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(_ZERO)},
    # steps, all-to-alls and the flipping assumption right (2 + 1 + 2); the written answer
    # gives part 1 only, its choice contradicting it (0.5 by hand)
    "partial": {
        NOTEBOOK: {
            **_ZERO,
            "test_step_collectives": 2,
            "test_ep_all_to_all": 1,
            "test_flipping_assumption": 2,
            "written_sensitivity": 0.5,
        }
    },
    # every tampering fails; only its genuinely right ep_all_to_all earns its point
    "hostile": {NOTEBOOK: {**_ZERO, "test_ep_all_to_all": 1}},
    "wrong": {NOTEBOOK: dict(_ZERO)},
    "wrong_bytes": {NOTEBOOK: dict(_ZERO)},
    "wrong_shard": {NOTEBOOK: dict(_ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(_ZERO)},
}

_S8 = "SHAPE_8B, {'dp': 4, 'tp': 4, 'pp': 2, 'micro_batches': 4}, 4096, 64"
_MIXTRAL = "SHAPE_MIXTRAL, {'dp': 2, 'ep': 8, 'tp': 2, 'micro_batches': 2}, 4096, 64"
_M8 = "SHAPE_8B, {'dp': 4, 'tp': 4, 'pp': 2, 'zero_stage': 1, 'micro_batches': 4}, 4096, 64, 'bf16'"
_M70 = (
    "SHAPE_70B, {'fsdp': 16, 'tp': 8, 'sequence_parallel': True, 'micro_batches': 2}, 8192, "
    "32, 'fp8'"
)

# the arguments as a re-run names them (plain data: dict keys sorted)
_SHAPE_8B = (
    "{'ffn': 14336, 'heads': 32, 'hidden': 4096, 'kv_heads': 8, 'layers': 32, 'vocab': 128000}"
)
_ARGS_S8 = f"{_SHAPE_8B}, {{'dp': 4, 'micro_batches': 4, 'pp': 2, 'tp': 4}}, 4096, 64"
_ARGS_M8 = (
    f"{_SHAPE_8B}, {{'dp': 4, 'micro_batches': 4, 'pp': 2, 'tp': 4, 'zero_stage': 1}}, "
    "4096, 64, 'bf16'"
)
_ARGS_MIXTRAL = (
    "{'experts': 8, 'ffn': 14336, 'heads': 32, 'hidden': 4096, 'kv_heads': 8, "
    "'layers': 32, 'top_k': 2, 'vocab': 32000}, {'dp': 2, 'ep': 8, "
    "'micro_batches': 2, 'tp': 2}, 4096, 64"
)


_L70 = "{'dp': 16, 'tp': 8, 'zero_stage': 1, 'sequence_parallel': True, 'micro_batches': 4}"
_FIT_VISIBLE = f"SHAPE_70B, {_L70}, 8192, 128"
_FIT_HIDDEN = f"llama3-70b, {_L70}, 8192, 128"
_ZERO2 = "{'dp': 32, 'zero_stage': 2, 'tp': 8, 'sequence_parallel': True, 'micro_batches': 4}"
_PIPE = (
    "{'dp': 16, 'zero_stage': 1, 'tp': 4, 'pp': 4, 'sequence_parallel': True, 'micro_batches': 16}"
)
_CASE_TARGET_53 = (
    "{'model': 'llama3-70b', 'units': 1, 'seq_len': 8192, 'global_batch': 256, "
    f"'layout': {_ZERO2}, 'target': 5.3}}"
)
_CASE_8B = (
    "{'model': 'llama3-8b', 'units': 1, 'seq_len': 8192, 'global_batch': 256, 'layout': "
    "{'dp': 64, 'zero_stage': 1, 'tp': 2, 'pp': 2, 'sequence_parallel': True, "
    "'micro_batches': 4}, 'rival': {'dp': 32, 'zero_stage': 1, 'tp': 4, 'pp': 2, "
    "'sequence_parallel': True, 'micro_batches': 8}}"
)
# the re-runs' arguments (plain data: dict keys sorted)
_SHAPE_70B = (
    "{'ffn': 28672, 'heads': 64, 'hidden': 8192, 'kv_heads': 8, 'layers': 80, 'vocab': 128000}"
)
_ARGS_FIT = (
    f"{_SHAPE_70B}, {{'dp': 16, 'micro_batches': 4, 'sequence_parallel': True, "
    "'tp': 8, 'zero_stage': 1}, 8192, 128, 80000000000.0"
)
_ARGS_CASE_RIVAL = (
    "{'global_batch': 256, 'layout': {'dp': 32, 'micro_batches': 4, "
    "'sequence_parallel': True, 'tp': 8, 'zero_stage': 2}, 'model': "
    "'llama3-70b', 'rival': {'dp': 16, 'micro_batches': 16, 'pp': 4, "
    "'sequence_parallel': True, 'tp': 4, 'zero_stage': 1}, 'seq_len': 8192, "
    "'units': 1}"
)
_ARGS_CASE_8B = (
    "{'global_batch': 256, 'layout': {'dp': 64, 'micro_batches': 4, 'pp': 2, "
    "'sequence_parallel': True, 'tp': 2, 'zero_stage': 1}, 'model': 'llama3-8b', "
    "'rival': {'dp': 32, 'micro_batches': 8, 'pp': 2, 'sequence_parallel': True, "
    "'tp': 4, 'zero_stage': 1}, 'seq_len': 8192, 'units': 1}"
)


def refused(call, why):
    """The message of a graded function that used the package."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    "partial": {
        NOTEBOOK: {
            "test_memory_per_device": Error(
                f"memory_per_device({_M8})['activations'] is 17179869184.0 bytes, expected "
                "34359738368.0; yours is 1/2 of that: under 1F1B the first stage holds min(pp, "
                "micro_batches) micro-batches' activations"
            )
        }
    },
    # the in-kernel checks were patched: these are the isolated re-check's verdicts
    "hostile": {
        NOTEBOOK: {
            "test_step_collectives": Error(
                "step_collectives(8B, {'dp': 4, 'tp': 4, 'pp': 2, 'micro_batches': 4}, 4096, 64)"
                "['tp activation all-reduce'] happens 128 times per step, expected 256; yours is "
                "half: two in the forward pass of each block and micro-batch, and two more in the "
                "backward"
            ),
            "test_memory_per_device": Error(
                f"memory_per_device({_ARGS_M8}) raised NameError: _Liar is a class defined in the "
                "notebook, which the graded re-run cannot rebuild; define what your function needs "
                "inside it"
            ),
            "test_make_it_fit": Error(
                f"make_it_fit({_FIT_HIDDEN}, 8e+10) = {_L70} needs 106.2 GB per GPU (weights 17.6 "
                "GB, master 2.2 GB, grads 35.3 GB, optimizer 4.4 GB, activations 45.6 GB, logits "
                "1.0 GB), more than the 80.0 GB limit"
            ),
            "test_flipping_assumption": Error(
                startswith=f"flipping_assumption({_CASE_TARGET_53}) is 'FP8 matmuls', but under it "
                f"the verdict ({_ZERO2} meets the 5.300 s target) still holds: 3.5496 s "
                "vs 5.3000 s (as planned 5.1365 s vs 5.3000 s); 3 assumptions of the "
                "list do"
            ),
            "test_breakeven_mfu": Error(
                f"breakeven_mfu({_CASE_8B}) is 0.5000, but at that matmul efficiency the steps "
                "take 1.1696 s (the layout) and 1.1341 s (the rival): the rival is faster by 3.0%, "
                "more than the 0.5% accepted"
            ),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_step_collectives": Error(
                f"step_collectives({_S8})['tp activation all-reduce'] happens 128 times per step, "
                "expected 256; yours is half: two in the forward pass of each block and "
                "micro-batch, and two more in the backward"
            ),
            "test_ep_all_to_all": Error(
                f"the count of ep_all_to_all({_MIXTRAL}) is 128, expected 256; yours is half: "
                "dispatch and combine run in the backward pass too"
            ),
            "test_memory_per_device": Error(
                f"memory_per_device({_M70})['weights'] is 17637048320.0 bytes, expected "
                "1102315520.0; yours is fsdp = 16 times that: FSDP (ZeRO 3) shards every model "
                "state over its ranks"
            ),
            "test_make_it_fit": Error(
                f"make_it_fit({_FIT_VISIBLE}, 8e+10) = {{'dp': 16, 'tp': 8, 'zero_stage': 1, "
                "'sequence_parallel': True, 'micro_batches': 8} needs 82.9 GB per GPU (weights "
                "17.6 GB, master 2.2 GB, grads 35.3 GB, optimizer 4.4 GB, activations 22.8 GB, "
                "logits 0.5 GB), more than the 80.0 GB limit"
            ),
            "test_flipping_assumption": Error(
                f"flipping_assumption(CASE_RIVAL) is 'matmul efficiency 0.4', but under it the "
                f"verdict ({_ZERO2} beats {_PIPE}) still holds: 10.7686 s vs 11.8381 s (as planned "
                "5.1365 s vs 5.2124 s); 2 assumptions of the list do"
            ),
            "test_breakeven_mfu": Error(
                "breakeven_mfu(CASE_8B) is None, but the rival catches up inside 0.2-1: at a lower "
                "matmul efficiency the two steps take the same time (as planned: 0.6098 s vs "
                "0.6452 s)"
            ),
        }
    },
    "wrong_bytes": {
        NOTEBOOK: {
            "test_step_collectives": Error(
                f"step_collectives({_S8})['dp grad all-reduce'] has 4013948928.0 bytes, expected "
                "2006974464.0; yours is twice that: gradients are reduced in BF16, 2 bytes each, "
                "not 4"
            ),
            "test_ep_all_to_all": Error(
                f"the bytes of ep_all_to_all({_MIXTRAL}) are 67108864.0, expected 134217728.0; "
                "yours is 1/top_k = 1/2 of that: every token goes to top_k experts, so top_k "
                "copies of it leave the rank"
            ),
            "test_memory_per_device": Error(
                f"memory_per_device({_M8})['activations'] is 17179869184.0 bytes, expected "
                "34359738368.0; yours is 1/2 of that: under 1F1B the first stage holds min(pp, "
                "micro_batches) micro-batches' activations"
            ),
            "test_make_it_fit": Error(
                f"make_it_fit({_FIT_HIDDEN}, 7.26e+10) = {{'dp': 16, 'fsdp': 1, 'tp': 8, 'pp': 1, "
                "'zero_stage': 2, 'sequence_parallel': True, 'micro_batches': 4} needs 73.1 GB per "
                "GPU (weights 17.6 GB, master 2.2 GB, grads 2.2 GB, optimizer 4.4 GB, activations "
                "45.6 GB, logits 1.0 GB), more than the 72.6 GB limit"
            ),
            "test_flipping_assumption": Error(
                f"flipping_assumption(CASE_RIVAL) is None, but the verdict ({_ZERO2} beats "
                f"{_PIPE}: as planned it holds, 5.1365 s vs 5.2124 s) flips under 2 assumptions of "
                "the list; plan each one"
            ),
            "test_breakeven_mfu": Error(
                "breakeven_mfu(CASE_8B) is 0.6150, but at that matmul efficiency the steps take "
                "0.9581 s (the layout) and 0.9508 s (the rival): the rival is faster by 0.8%, more "
                "than the 0.5% accepted"
            ),
        }
    },
    "wrong_shard": {
        NOTEBOOK: {
            "test_step_collectives": Error(
                f"step_collectives({_S8})['dp grad all-reduce'] has 16055795712.0 bytes, expected "
                "2006974464.0; yours is tp x pp = 8 times that: each device holds only 1/(tp x pp) "
                "of the parameters, and only its shard takes part"
            ),
            "test_ep_all_to_all": Error(
                f"the bytes of ep_all_to_all({_MIXTRAL}) are 16777216.0, expected 134217728.0; "
                "yours is 1/ep = 1/8 of that: the buffer (nccl-tests' S) is all a rank sends, to "
                "every rank of its group together"
            ),
            "test_memory_per_device": Error(
                f"memory_per_device({_M8})['weights'] is 16055795712.0 bytes, expected "
                "2006974464.0; yours is tp x pp = 8 times that: a device holds 1/(tp x pp) of the "
                "parameters"
            ),
            "test_make_it_fit": Error(
                "make_it_fit(llama3-8b, {'dp': 2, 'fsdp': 2, 'tp': 2, 'pp': 4, 'zero_stage': 1, "
                "'micro_batches': 2}, 4096, 16, 1.65e+10) = {'dp': 2, 'fsdp': 2, 'tp': 2, 'pp': 4, "
                "'zero_stage': 1, 'sequence_parallel': True, 'micro_batches': 4} fits (15.1 GB per "
                "GPU) but changes 2 settings (micro_batches, sequence_parallel); changing 1 "
                "setting is enough here"
            ),
            "test_flipping_assumption": Error(
                startswith="flipping_assumption({'model': 'llama3-8b', 'units': 1, 'seq_len': "
                "4096, 'global_batch': 512, 'layout': {'fsdp': 32, 'tp': 8, ",
                contains=(
                    "is None, but the verdict",
                    "as planned it holds, 0.6929 s vs 0.7235 s) "
                    "flips under 2 assumptions of the list",
                ),
            ),
            "test_breakeven_mfu": Error(
                "breakeven_mfu(CASE_8B) is 0.6000, but at that matmul efficiency the steps take "
                "0.9811 s (the layout) and 0.9707 s (the rival): the rival is faster by 1.1%, more "
                "than the 0.5% accepted"
            ),
        }
    },
    # each re-run refuses the package (or, in task 4, its grading part) by the name it used
    "shortcut": {
        NOTEBOOK: {
            "test_step_collectives": refused(
                f"step_collectives({_ARGS_S8})",
                "your code uses cl, which is the collectives package",
            ),
            "test_ep_all_to_all": refused(
                f"ep_all_to_all({_ARGS_MIXTRAL})",
                "your code uses Layout, which is collectives.plan.layout.Layout",
            ),
            "test_memory_per_device": refused(
                f"memory_per_device({_ARGS_M8})", "your code imports 'collectives'"
            ),
            "test_make_it_fit": refused(
                f"make_it_fit({_ARGS_FIT})", "your code uses cl, which is the collectives package"
            ),
            "test_flipping_assumption": Error(
                startswith=f"flipping_assumption({_ARGS_CASE_RIVAL}) raised ImportError: "
                "collectives.plan.sensitivity",
                contains=(FORBIDDEN,),
            ),
            "test_breakeven_mfu": Error(
                startswith=f"breakeven_mfu({_ARGS_CASE_8B}) raised ImportError: "
                "collectives.grading",
                contains=(FORBIDDEN,),
            ),
        }
    },
}
PRINTED = {
    "hostile": {
        NOTEBOOK: (
            "step_collectives agrees with cl.plan.training_step on the examples.",
            "ep_all_to_all agrees with cl.plan.training_step on the example.",
            "memory_per_device agrees with cl.plan.training_step on the examples.",
            "make_it_fit fits both limits with as few changes as possible.",
            "flipping_assumption names an assumption that flips each verdict.",
            "breakeven_mfu finds where the rival catches up.",
        )
    }
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack("planning", SOLUTIONS)
