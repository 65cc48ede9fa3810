"""planning (exercises/source/planning/plan_a_training_run.ipynb, 10 points): what the pipeline
test expects. Format: the docstring of tests/assignments/__init__.py.

Tasks 1-3 are solved without the collectives package (each hidden test re-runs the learner's
function with ``_grading.call(f, ..., isolated=True)``); task 4 may use the package but not
``collectives.grading`` (``forbid=("collectives.grading",)``). Every expected value comes from
``collectives.grading.plan_tasks``, i.e. from ``cl.plan.training_step`` in the re-check
process. Submissions:

- *correct*, *blank*;
- *partial*: the step's collectives and the all-to-alls right, the memory with one micro-batch
  of activations in flight instead of min(pp, m), the written answer half right, the rest
  blank (3 + 1 + 0.5 = 4.5);
- *hostile*: wrong answers behind patched checks (``TAMPERING``, then each cell patches the
  checks and ``run_isolated`` its own visible test reads), lying floats, rebound names, edited
  test cells; its ``ep_all_to_all`` is genuinely right, in the cell that disables every check
  (1);
- *wrong*, *wrong_bytes*, *wrong_shard*: three plausible mistakes per task, 0 each:
  the backward all-reduces forgotten, gradients in 4 bytes, all parameters instead of the
  shard (task 1); the backward all-to-alls forgotten, ``top_k`` forgotten, the bytes to one
  destination (task 2); FSDP taken as ZeRO 1, one micro-batch of activations, the whole model
  per GPU (task 3); a fast layout ignoring the memory limit (98 GB at 80), tensor
  parallelism across two nodes, the least exposed communication with the pipeline bubble
  forgotten (1.5 % slower than the best: task 4);
- *variant*: right answers written differently (phases listed then summed, lists instead of
  tuples and an entry with count 0, numpy arrays of bytes, a search with ``itertools`` that
  imports ``collectives.plan`` inside the function and reads ``plan.fits``): 10;
- *shortcut*: the package called from every graded function (``cl.plan.training_step``,
  ``from collectives.plan import``, ``import collectives`` inside, and the reference answer
  ``cl.grading.plan_tasks.best_layout`` for task 4): 0.
"""

from assignments import TAMPERING, Error, submission, origin_attack
from collectives.grading.isolation import FORBIDDEN, NO_PACKAGE

NOTEBOOK = "plan_a_training_run"

POINTS = {NOTEBOOK: {
    "test_step_collectives": 3,
    "test_ep_all_to_all": 1,
    "test_memory_per_device": 2,
    "test_choose_layout": 3,
    "written_choice": 1,
}}
MAX_SCORE = 10
SOLUTIONS = {NOTEBOOK: ("step_collectives", "ep_all_to_all", "memory_per_device",
                        "choose_layout")}
# the written answer graded by hand in the formgrader (rubric in the source notebook)
MANUAL = {NOTEBOOK: ("written_choice",)}
ALL = SOLUTIONS[NOTEBOOK]

ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
          "that are graded")

# ---- answers made from one template, with one mistake each -----------------------------------


def _step(tp_count="4", grad_bytes="2", held="params / (tp * pp)", note=""):
    """step_collectives with the tensor-parallel count per block and micro-batch, the bytes
    per reduced gradient and the parameters a GPU holds as given."""
    return f'''
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
'''


def _experts(buffer="tokens * shape[\"top_k\"] * shape[\"hidden\"] * 2", count="4", note=""):
    return f'''
def ep_all_to_all(shape, layout, seq_len, global_batch):
    ep = layout.get("ep", 1)
    replicas = layout.get("dp", 1) * layout.get("fsdp", 1) * ep
    m, pp = layout.get("micro_batches", 1), layout.get("pp", 1)
    tokens = global_batch // (replicas * m) * seq_len
    if layout.get("sequence_parallel", False):
        tokens = tokens / layout.get("tp", 1)
    moe_blocks = -(-(shape["layers"] - shape.get("dense_layers", 0)) // pp){note}
    return {buffer}, {count} * moe_blocks * m
'''


def _memory(held="(layers * per_block + 2 * shape[\"vocab\"] * h) / (tp * pp)",
            fsdp_shards="out[part] = value / fsdp", in_flight=" * min(pp, m)"):
    return f'''
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
'''


# ---- partial -----------------------------------------------------------------------------------

# one micro-batch of activations in flight, not min(pp, m)
PARTIAL_MEMORY = _memory(in_flight="")
PARTIAL_WRITTEN = """I chose dp=32 with ZeRO 2, tp=8 and 4 micro-batches: 5.14 s per step
(3.77 s compute, no bubble, 1.36 s exposed communication) in 68.7 GB. It is the fastest
that fits."""

# ---- hostile -----------------------------------------------------------------------------------

# what each cell's own visible test reads, patched (every hidden test before it reloads the
# grading package, so each cell patches again)
PATCH = '''
import collectives.grading
import collectives.grading.plan_tasks
for _name in dir(collectives.grading.plan_tasks):
    if _name.startswith("check"):
        setattr(collectives.grading.plan_tasks, _name, lambda *args, **kwargs: 1.0)
collectives.grading.run_isolated = lambda function, *args, **kwargs: function(*args)
'''
LIAR = '''
class _Liar(float):                    # equal to everything
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
'''
HOSTILE = {
    "step_collectives": PATCH + _step(tp_count="2"),
    "ep_all_to_all": TAMPERING + _experts(),
    "memory_per_device": PATCH + LIAR + '''
def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    return dict.fromkeys(["weights", "master", "grads", "optimizer", "activations"], _Liar(0))
''',
    "choose_layout": PATCH + '''
import math
math.isclose = lambda *args, **kwargs: True
range = lambda *args: ()
def choose_layout(hbm_bytes):
    return {"dp": 256}
''',
    "written_choice": "All tests passed.",
}
HOSTILE_TESTS = {"test_step_collectives": "print('all tests passed')",
                 "test_choose_layout": "pass"}

# ---- wrong: three plausible mistakes per task --------------------------------------------------

_LEAST_EXPOSED = '''
def choose_layout(hbm_bytes):
    cluster = cl.hardware.preset("superpod-h100", units=1)
    best, least = None, float("inf")
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            d = 256 // (tp * pp)
            for shard in ({"dp": d, "zero_stage": 1}, {"dp": d, "zero_stage": 2}, {"fsdp": d}):
                if shard.get("zero_stage") == 2 and pp > 1:
                    continue
                m = 1
                while 256 % (d * m) == 0:
                    layout = dict(shard, tp=tp, pp=pp, sequence_parallel=tp > 1,
                                  micro_batches=m)
                    plan = cl.plan.training_step("llama3-70b", cl.plan.Layout(**layout),
                                                 cluster, seq_len=8192, global_batch=256)
                    # the least exposed communication: the pipeline bubble forgotten
                    if plan.memory_per_device <= hbm_bytes and plan.exposed_seconds < least:
                        best, least = layout, plan.exposed_seconds
                    m *= 2
    return best
'''

WRONG = {
    # two all-reduces per block and micro-batch: the backward pass's two forgotten
    "step_collectives": _step(tp_count="2"),
    "ep_all_to_all": _experts(count="2", note="   # dispatch and combine, forward only"),
    # FSDP taken as ZeRO 1: only the master weights and optimizer states sharded over it
    "memory_per_device": _memory(
        fsdp_shards='out[part] = value / fsdp if part in ("master", "optimizer") else value'),
    # a fast layout, the memory limit ignored: 98.3 GB per GPU
    "choose_layout": '''
def choose_layout(hbm_bytes):
    return {"fsdp": 128, "tp": 2, "sequence_parallel": True, "micro_batches": 2}
''',
}
WRONG_BYTES = {
    "step_collectives": _step(grad_bytes="4", note="   # gradients reduced in FP32 below"),
    "ep_all_to_all": _experts(buffer='tokens * shape["hidden"] * 2',
                              note="   # one copy of each token: top_k forgotten"),
    "memory_per_device": PARTIAL_MEMORY,
    # tensor parallelism over two nodes (it fits in 24.6 GB)
    "choose_layout": '''
def choose_layout(hbm_bytes):
    return {"dp": 16, "zero_stage": 2, "tp": 16, "sequence_parallel": True, "micro_batches": 16}
''',
}
WRONG_SHARD = {
    "step_collectives": _step(held="params", note="   # the whole model, not this GPU's shard"),
    "ep_all_to_all": _experts(buffer='tokens * shape["top_k"] * shape["hidden"] * 2 / ep',
                              note="   # what goes to one destination"),
    "memory_per_device": _memory(held='layers * per_block + 2 * shape["vocab"] * h'),
    "choose_layout": _LEAST_EXPOSED,
}

# ---- variant: right, written differently -------------------------------------------------------

VARIANT = {
    # every pass's collectives listed, then summed; lists, float counts, an empty entry
    "step_collectives": '''
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
''',
    "ep_all_to_all": '''
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
''',
    "memory_per_device": '''
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
''',
    # the package imported inside the function, candidates from itertools, plan.fits
    "choose_layout": '''
import itertools

def choose_layout(hbm_bytes):
    from collectives.hardware import preset
    from collectives.plan import Layout, training_step
    cluster = preset("superpod-h100", units=1)
    found = []
    for tp, pp, zero in itertools.product((8, 4, 2, 1), (8, 4, 2, 1), (3, 2, 1)):
        d = 256 // (tp * pp)
        for m in (2 ** k for k in range(9)):
            if 256 % (d * m):
                continue
            sizes = {"fsdp": d} if zero == 3 else {"dp": d, "zero_stage": zero}
            layout = dict(sizes, tp=tp, pp=pp, micro_batches=m, sequence_parallel=tp > 1)
            plan = training_step("llama3-70b", Layout(**layout), cluster, seq_len=8192,
                                 global_batch=256, hbm_bytes=hbm_bytes)
            if plan.fits:
                found.append((plan.step_seconds, layout))
    return min(found, key=lambda item: item[0])[1]
''',
    "written_choice": """Under 80 GB the search keeps data parallelism over the 32 nodes with
ZeRO 2 (dp = 32) and tensor parallelism over the 8 GPUs of each node with sequence
parallelism, no pipeline, 4 micro-batches. The plan: step 5.136 s = compute 3.773 s + no
bubble + exposed communication 1.364 s; 68.7 GB per GPU. The exposed part is almost all the
tensor-parallel all-gathers and reduce-scatters, 1.34 s, which the next matmul waits for; each
micro-batch's 0.34 s gradient reduce-scatter hides behind its 0.63 s of backward.

Without a limit, FSDP over all 256 GPUs with one micro-batch takes 3.77 s, 27 % less, because
everything hides behind compute, but it needs 192 GB. With full recomputation the same FSDP
fits in 19.9 GB and hides all communication, but pays a second forward: 5.03 s, only 2 %
faster than my layout.""",
}

# ---- shortcut: the package called from the graded functions ----------------------------------

SHORTCUT = {
    "step_collectives": '''
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
''',
    "ep_all_to_all": '''
from collectives.plan import Layout, Transformer, training_step

def ep_all_to_all(shape, layout, seq_len, global_batch):
    lay = Layout(**layout)
    plan = training_step(Transformer(**shape), lay, "dgx-h100", seq_len=seq_len,
                         global_batch=global_batch)
    records = plan.records("all-to-all")
    return records[0].nbytes, sum(r.count for r in records)
''',
    "memory_per_device": '''
def memory_per_device(shape, layout, seq_len, global_batch, recipe):
    import collectives
    lay = collectives.plan.Layout(**layout)
    plan = collectives.plan.training_step(
        collectives.plan.Transformer(**shape), lay, collectives.topology.switch(lay.devices, 1e11),
        seq_len=seq_len, global_batch=global_batch, recipe=recipe, flops_per_device=1e15)
    memory = plan.memory.breakdown()
    return {k: memory[k] for k in ("weights", "master", "grads", "optimizer", "activations")}
''',
    # the reference answer of the grading package
    "choose_layout": '''
def choose_layout(hbm_bytes):
    return cl.grading.plan_tasks.best_layout(hbm_bytes)[0]
''',
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL + MANUAL[NOTEBOOK])},
    "blank": {NOTEBOOK: submission()},
    "partial": {NOTEBOOK: submission(
        solved=("step_collectives", "ep_all_to_all"),
        replaced={"memory_per_device": PARTIAL_MEMORY, "written_choice": PARTIAL_WRITTEN})},
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
    # steps and all-to-alls right (3 + 1); the written answer gives part 1 only (0.5 by hand)
    "partial": {NOTEBOOK: {**_ZERO, "test_step_collectives": 3, "test_ep_all_to_all": 1,
                           "written_choice": 0.5}},
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
_M70 = ("SHAPE_70B, {'fsdp': 16, 'tp': 8, 'sequence_parallel': True, 'micro_batches': 2}, 8192, "
        "32, 'fp8'")

# the arguments as a re-run names them (plain data: dict keys sorted)
_SHAPE_8B = ("{'ffn': 14336, 'heads': 32, 'hidden': 4096, 'kv_heads': 8, 'layers': 32, "
             "'vocab': 128000}")
_ARGS_S8 = f"{_SHAPE_8B}, {{'dp': 4, 'micro_batches': 4, 'pp': 2, 'tp': 4}}, 4096, 64"
_ARGS_M8 = (f"{_SHAPE_8B}, {{'dp': 4, 'micro_batches': 4, 'pp': 2, 'tp': 4, 'zero_stage': 1}}, "
            "4096, 64, 'bf16'")
_ARGS_MIXTRAL = ("{'experts': 8, 'ffn': 14336, 'heads': 32, 'hidden': 4096, 'kv_heads': 8, "
                 "'layers': 32, 'top_k': 2, 'vocab': 32000}, {'dp': 2, 'ep': 8, "
                 "'micro_batches': 2, 'tp': 2}, 4096, 64")


def refused(call, why):
    """The message of a graded function that used the package."""
    return Error(f"{call} raised ImportError: {NO_PACKAGE} ({why}){ADVICE}")


ERRORS = {
    "partial": {NOTEBOOK: {"test_memory_per_device": Error(
        f"memory_per_device({_M8})['activations'] is 17179869184.0 bytes, expected "
        "34359738368.0; yours is 1/2 of that: under 1F1B the first stage holds min(pp, "
        "micro_batches) micro-batches' activations")}},
    # the in-kernel checks were patched: these are the isolated re-check's verdicts
    "hostile": {NOTEBOOK: {
        "test_step_collectives": Error(
            "step_collectives(8B, {'dp': 4, 'tp': 4, 'pp': 2, 'micro_batches': 4}, 4096, 64)"
            "['tp activation all-reduce'] happens 128 times per step, expected 256; yours is "
            "half: two in the forward pass of each block and micro-batch, and two more in the "
            "backward"),
        "test_memory_per_device": Error(
            f"memory_per_device({_ARGS_M8}) raised NameError: _Liar is a class defined in the "
            "notebook, which the graded re-run cannot rebuild; define what your function needs "
            "inside it"),
        "test_choose_layout": Error(
            "choose_layout(80e9) = {'dp': 256} needs 1456.6 GB per device (weights 141.1 GB, "
            "master 282.2 GB, grads 282.2 GB, optimizer 564.4 GB, activations 182.5 GB, logits "
            "4.2 GB), more than the 80.0 GB limit"),
    }},
    "wrong": {NOTEBOOK: {
        "test_step_collectives": Error(
            f"step_collectives({_S8})['tp activation all-reduce'] happens 128 times per step, "
            "expected 256; yours is half: two in the forward pass of each block and "
            "micro-batch, and two more in the backward"),
        "test_ep_all_to_all": Error(
            f"the count of ep_all_to_all({_MIXTRAL}) is 128, expected 256; yours is half: "
            "dispatch and combine run in the backward pass too"),
        "test_memory_per_device": Error(
            f"memory_per_device({_M70})['weights'] is 17637048320.0 bytes, expected "
            "1102315520.0; yours is fsdp = 16 times that: FSDP (ZeRO 3) shards every model "
            "state over its ranks"),
        "test_choose_layout": Error(
            "choose_layout(80e9) = {'fsdp': 128, 'tp': 2, 'sequence_parallel': True, "
            "'micro_batches': 2} needs 98.3 GB per device (weights 0.6 GB, master 1.1 GB, "
            "grads 1.1 GB, optimizer 2.2 GB, activations 91.3 GB, logits 2.1 GB), more than "
            "the 80.0 GB limit"),
    }},
    "wrong_bytes": {NOTEBOOK: {
        "test_step_collectives": Error(
            f"step_collectives({_S8})['dp grad all-reduce'] has 4013948928.0 bytes, expected "
            "2006974464.0; yours is twice that: gradients are reduced in BF16, 2 bytes each, "
            "not 4"),
        "test_ep_all_to_all": Error(
            f"the bytes of ep_all_to_all({_MIXTRAL}) are 67108864.0, expected 134217728.0; "
            "yours is 1/top_k = 1/2 of that: every token goes to top_k experts, so top_k "
            "copies of it leave the rank"),
        "test_memory_per_device": Error(
            f"memory_per_device({_M8})['activations'] is 17179869184.0 bytes, expected "
            "34359738368.0; yours is 1/2 of that: under 1F1B the first stage holds min(pp, "
            "micro_batches) micro-batches' activations"),
        "test_choose_layout": Error(
            "choose_layout(80e9) = {'dp': 16, 'zero_stage': 2, 'tp': 16, 'sequence_parallel': "
            "True, 'micro_batches': 16} puts tensor parallelism across nodes: tp = 16 spans 2 "
            "DGX nodes of 8 GPUs, so its activation collectives, on the critical path, would "
            "cross the 50 GB/s NICs instead of 450 GB/s NVLink; keep tp <= 8"),
    }},
    "wrong_shard": {NOTEBOOK: {
        "test_step_collectives": Error(
            f"step_collectives({_S8})['dp grad all-reduce'] has 16055795712.0 bytes, expected "
            "2006974464.0; yours is tp x pp = 8 times that: each device holds only 1/(tp x pp) "
            "of the parameters, and only its shard takes part"),
        "test_ep_all_to_all": Error(
            f"the bytes of ep_all_to_all({_MIXTRAL}) are 16777216.0, expected 134217728.0; "
            "yours is 1/ep = 1/8 of that: the buffer (nccl-tests' S) is all a rank sends, to "
            "every rank of its group together"),
        "test_memory_per_device": Error(
            f"memory_per_device({_M8})['weights'] is 16055795712.0 bytes, expected "
            "2006974464.0; yours is tp x pp = 8 times that: a device holds 1/(tp x pp) of the "
            "parameters"),
        "test_choose_layout": Error(
            "choose_layout(80e9) = {'dp': 16, 'zero_stage': 1, 'tp': 4, 'pp': 4, "
            "'sequence_parallel': True, 'micro_batches': 16} fits (75.4 GB per device) but its "
            "step takes 5.2124 s (compute 3.7730 s, pipeline bubble 0.7074 s, exposed "
            "communication 0.7320 s), 1.5% slower than the best candidate under 80.0 GB, "
            "5.1365 s; within 1% is accepted"),
    }},
    # each re-run refuses the package (or, in task 4, its grading part) by the name it used
    "shortcut": {NOTEBOOK: {
        "test_step_collectives": refused(f"step_collectives({_ARGS_S8})",
                                         "your code uses cl, which is the collectives package"),
        "test_ep_all_to_all": refused(
            f"ep_all_to_all({_ARGS_MIXTRAL})",
            "your code uses Layout, which is collectives.plan.layout.Layout"),
        "test_memory_per_device": refused(f"memory_per_device({_ARGS_M8})",
                                          "your code imports 'collectives'"),
        "test_choose_layout": Error(
            f"choose_layout(80000000000.0) raised ImportError: collectives.grading {FORBIDDEN}: "
            "write that part yourself (the task forbids collectives.grading; use them in "
            "scratch cells to check your answers)"),
    }},
}
PRINTED = {"hostile": {NOTEBOOK: (
    "step_collectives agrees with cl.plan.training_step on the examples.",
    "ep_all_to_all agrees with cl.plan.training_step on the example.",
    "memory_per_device agrees with cl.plan.training_step on the examples.",
    "choose_layout(80e9) fits and is as fast as the best candidate.",
)}}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack('planning', SOLUTIONS)
