"""Checks of the graded notebook on planning a training run (``exercises/source/planning``).

Every expected value comes from the package's planner, :func:`collectives.plan.training_step`:

* :func:`step_collectives`: every collective one training step of a dense transformer issues
  per device (data parallelism with ZeRO stage 0-2, FSDP, tensor parallelism with or without
  sequence parallelism, pipeline parallelism), as ``{purpose: (bytes, count)}``: the bytes
  of one collective (the buffer one rank holds, the package's convention) and how many a
  device takes part in per step, forward and backward together;
* :func:`ep_all_to_all`: the expert-parallel all-to-alls of a mixture of experts, as
  ``(bytes, count)``;
* :func:`memory_per_device`: the bytes one device holds (model states by the recipe's bytes
  per parameter and the ZeRO stage, activations by Korthikanti et al.'s count);
* :func:`best_layout`: the fastest layout, by the plan's step time, among
  :func:`layout_candidates` that fit a memory limit, for the notebook's scenario
  (:data:`SCENARIO`: Llama 3 70B on one SuperPOD scalable unit, 32 DGX H100 nodes).

The checks (``check_*``) return 1.0 when the answer is right and raise ``AssertionError``
(a wrong answer, with what differs and, where it is telling, the likely mistake) or
:class:`~collectives.GradingError` (an answer of the wrong form). They run in the isolated
re-check through :func:`~collectives.grading.check_reference`, e.g. ``check_reference(1.0,
what, "grading.plan_tasks.check_step_collectives", (answer, what, shape, layout, seq_len,
global_batch))``. Tasks 1-3 are counted by hand: the notebook re-runs them without the package.

The planner needs a cluster with as many devices as the layout; for the counts and the memory
(which do not depend on the links) it gets one switch of that many devices, 100 GB/s links
and 10**15 FLOP/s per device.
"""

import math
from functools import lru_cache

from ...errors import CollectivesError, GradingError
from ... import hardware, topology
from ... import plan as planner
from ..checks import check_number, in_words, ratio_hint, show

__all__ = ["SHAPE_KEYS", "MOE_KEYS", "LAYOUT_KEYS", "MEMORY_PARTS", "RECIPES", "SCENARIO",
           "WITHIN", "step_collectives", "check_step_collectives", "ep_all_to_all",
           "check_ep_all_to_all", "memory_per_device", "check_memory_per_device",
           "layout_candidates", "scenario_plan", "best_layout", "check_layout_choice"]

#: a dense transformer's shape, as the notebook gives it (a dict of ints)
SHAPE_KEYS = ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab")
#: what a mixture of experts adds
MOE_KEYS = ("experts", "top_k", "expert_ffn", "dense_layers", "shared_experts")
#: a layout, as the notebook gives it (a dict; missing keys take Layout's defaults)
LAYOUT_KEYS = ("dp", "fsdp", "tp", "pp", "ep", "zero_stage", "sequence_parallel",
               "micro_batches")
#: the parts of :func:`memory_per_device` (``optimizer``: Adam's two moments)
MEMORY_PARTS = ("weights", "master", "grads", "optimizer", "activations")
#: the recipes of the memory task (:data:`collectives.plan.PRECISIONS` names)
RECIPES = ("bf16", "fp8")
#: the design task's model, cluster (``preset("superpod-h100", units=1)``: 32 DGX H100 nodes)
#: and batch
SCENARIO = {"model": "llama3-70b", "units": 1, "nodes": 32, "seq_len": 8192,
            "global_batch": 256}
#: how much slower than the best candidate a chosen layout may be
WITHIN = 0.01

_LINK = 100e9            # bytes/s: the switch the counts are planned on (times unused)
_FLOPS = 1e15            # FLOP/s per device on that switch (unused by the counts)


# ---- reading the notebook's plain data ----------------------------------------------------

def _plain_dict(value, what, keys):
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise GradingError(f"{what} must be a dict with string keys, got {in_words(value)} "
                           "(a bug in the test)")
    unknown = [k for k in value if k not in keys]
    if unknown:
        raise GradingError(f"{what} has unknown keys {unknown} (a bug in the test)")
    return dict(value)


def _model(shape):
    shape = _plain_dict(shape, "shape", SHAPE_KEYS + MOE_KEYS)
    return planner.Transformer(name="the model", **shape)


def _layout(layout, error=GradingError):
    """The notebook's layout dict as a Layout; tasks 1-3 read a missing
    ``sequence_parallel`` as False (the notebook says so), not the planner's default."""
    layout = _plain_dict(layout, "layout", LAYOUT_KEYS)
    try:
        return planner.Layout(**{"sequence_parallel": False, **layout})
    except CollectivesError as exc:
        raise error(f"layout {layout}: {exc}") from None


def _key(value):
    """A hashable form of the notebook's dicts (for the caches)."""
    return tuple(sorted(value.items()))


@lru_cache(maxsize=64)
def _switch(devices):
    return topology.switch(devices, _LINK)


@lru_cache(maxsize=256)
def _plan(shape_key, layout_key, seq_len, global_batch, recipe="bf16"):
    m, layout = _model(dict(shape_key)), _layout(dict(layout_key))
    try:
        return planner.training_step(m, layout, _switch(layout.devices), seq_len=seq_len,
                                     global_batch=global_batch, recipe=recipe,
                                     flops_per_device=_FLOPS)
    except CollectivesError as exc:
        raise GradingError(f"the planner refuses this case: {exc} (a bug in the test)") from None


def _plan_for(shape, layout, seq_len, global_batch, recipe="bf16"):
    return _plan(_key(shape), _key(layout), seq_len, global_batch, recipe)


# ---- task 1: the collectives of one step --------------------------------------------------

def step_collectives(shape, layout, seq_len, global_batch):
    """``{purpose: (bytes, count)}`` of one BF16 training step of a dense model, per device:
    each kind of collective (the planner's purposes, e.g. ``"dp grad all-reduce"``,
    ``"tp activation all-reduce"``, ``"fsdp weight all-gather"``), the bytes of one (the
    buffer one rank holds) and how many per step, forward and backward counted together."""
    out = {}
    for r in _plan_for(shape, layout, seq_len, global_batch).collectives:
        nbytes, count = out.get(r.purpose, (r.nbytes, 0))
        if nbytes != r.nbytes:
            raise GradingError(f"{r.purpose} has {nbytes} bytes in one phase and {r.nbytes} "
                               "in another (a bug in the test)")
        out[r.purpose] = (float(r.nbytes), count + r.count)
    return out


def _pair(value, what):
    """``(bytes, count)``: two numbers, the count a whole number."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise GradingError(f"{what} should be a pair (bytes, count), but it is "
                           f"{in_words(value)}")
    nbytes = check_number(value[0], f"the bytes of {what}")
    count = check_number(value[1], f"the count of {what}")
    if count != int(count) or count < 0:
        raise AssertionError(f"the count of {what} is {show(value[1])}; a count is a whole "
                             "number >= 0")
    return nbytes, int(count)


def _axis_sizes(layout):
    L = _layout(layout)
    return {"dp": L.dp, "fsdp": L.fsdp, "tp": L.tp, "pp": L.pp, "ep": L.ep}, L


def _bytes_hint(purpose, ratio, layout, shape):
    """The likely mistakes behind ``ratio`` = learner's bytes / reference bytes (all that
    fit, joined with "or")."""
    sizes, L = _axis_sizes(layout)
    close = lambda x: math.isclose(ratio, x, rel_tol=1e-6)    # noqa: E731
    found = []
    if "grad" in purpose and close(2):
        found.append(("twice that", "gradients are reduced in BF16, 2 bytes each, not 4"))
    if "grad" in purpose or "weight" in purpose:
        if L.tp * L.pp > 1 and close(L.tp * L.pp):
            found.append((f"tp x pp = {L.tp * L.pp} times that", "each device holds only "
                          "1/(tp x pp) of the parameters, and only its shard takes part"))
        per_stage = -(-shape["layers"] // L.pp)
        if purpose.startswith("fsdp") and close(per_stage):
            found.append((f"{per_stage} times that", "FSDP gathers (and reduces) one block at "
                          "a time, the stage's parameters / its layers"))
        if purpose.startswith("dp") and L.fsdp > 1 and close(L.fsdp):
            found.append((f"fsdp = {L.fsdp} times that", "after FSDP's reduce-scatter each "
                          "rank holds 1/fsdp of its gradients, and only that shard crosses dp"))
    if purpose.startswith(("tp", "pp")):
        if L.micro_batches > 1 and close(L.micro_batches):
            found.append((f"{L.micro_batches} times that", "one collective carries one "
                          "micro-batch's activations"))
        if L.sequence_parallel and close(L.tp):
            found.append((f"tp = {L.tp} times that", "with sequence parallelism each rank "
                          "holds 1/tp of the sequence between blocks"))
        if L.sequence_parallel and close(1 / L.tp):
            found.append((f"1/tp = 1/{L.tp} of that", "the all-gather's buffer (nccl-tests' "
                          "S) is the whole gathered activation, the reduce-scatter's its input"))
    if not found:
        return ratio_hint(ratio, 1.0)
    return f"; yours is {found[0][0]}: " + "; or ".join(why for _, why in found)


def _count_hint(purpose, got, want, layout, shape):
    _, L = _axis_sizes(layout)
    if want and got * 2 == want and purpose.startswith("tp"):
        return ("; yours is half: two in the forward pass of each block and micro-batch, and "
                "two more in the backward")
    if want and got * 2 == want and purpose == "fsdp weight all-gather":
        return ("; yours is half: FSDP frees a block's gathered weights after its forward "
                "and gathers them again for its backward")
    if L.micro_batches > 1 and got * L.micro_batches == want:
        return f"; yours is 1/{L.micro_batches} of that: once per micro-batch"
    if L.micro_batches > 1 and got == want * L.micro_batches:
        return f"; yours is {L.micro_batches} times that: once per step, not per micro-batch"
    if L.pp > 1 and got == want * L.pp:
        return (f"; yours is pp = {L.pp} times that: a device runs only its stage's "
                f"{shape['layers'] // L.pp} blocks")
    return ""


def _why_absent(purpose, layout):
    sizes, L = _axis_sizes(layout)
    axis = purpose.split(" ", 1)[0]
    if sizes.get(axis) == 1:
        return f" ({axis} = 1: a group of one rank needs no collective)"
    if purpose == "dp grad all-reduce" and L.zero_stage:
        return (f" (ZeRO stage {L.zero_stage} reduce-scatters the gradients and all-gathers "
                "the updated weights instead)")
    if purpose.startswith("dp") and L.zero_stage == 0 and "all-reduce" not in purpose:
        return " (without ZeRO the replicas all-reduce their gradients)"
    if purpose == "tp activation all-reduce" and L.sequence_parallel:
        return (" (with sequence parallelism each all-reduce becomes an all-gather and a "
                "reduce-scatter)")
    return ""


def check_step_collectives(answer, what, shape, layout, seq_len, global_batch):
    """Check ``answer`` (``{purpose: (bytes, count)}``) against :func:`step_collectives`:
    the same purposes (entries with count 0 are ignored), bytes within 1e-9 relative,
    counts exactly. Returns 1.0."""
    want = step_collectives(shape, layout, seq_len, global_batch)
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(f"{what} should be a dict {{purpose: (bytes, count)}} with string "
                           f"keys, but it is {in_words(answer)}")
    got = {}
    for purpose, value in answer.items():
        nbytes, count = _pair(value, f"{what}[{purpose!r}]")
        if count:
            got[purpose] = (nbytes, count)
    listed = ", ".join(repr(p) for p in want) or "nothing"
    for purpose in got:
        if purpose not in want:
            raise AssertionError(f"{what} lists {purpose!r}, which this step does not issue"
                                 f"{_why_absent(purpose, layout)}; it issues {listed}")
    for purpose in want:
        if purpose not in got:
            raise AssertionError(f"{what} has no {purpose!r}; this step issues {listed}")
    for purpose, (nbytes, count) in want.items():
        mine, times = got[purpose]
        if not math.isclose(mine, nbytes, rel_tol=1e-9):
            hint = _bytes_hint(purpose, mine / nbytes, layout, shape) if nbytes else ""
            raise AssertionError(f"{what}[{purpose!r}] has {mine!r} bytes, expected "
                                 f"{nbytes!r}{hint}")
        if times != count:
            raise AssertionError(f"{what}[{purpose!r}] happens {times} times per step, "
                                 f"expected {count}"
                                 f"{_count_hint(purpose, times, count, layout, shape)}")
    return 1.0


# ---- task 2: expert parallelism ------------------------------------------------------------

def ep_all_to_all(shape, layout, seq_len, global_batch):
    """``(bytes, count)`` of the expert-parallel all-to-alls of one training step of a mixture
    of experts, per device: the send buffer of one (dispatch and combine alike) and how many
    (dispatch and combine, forward and backward)."""
    records = [r for r in _plan_for(shape, layout, seq_len, global_batch).collectives
               if r.collective == "all_to_all"]
    if not records:
        raise GradingError("this case has no expert-parallel all-to-all (a bug in the test)")
    sizes = {r.nbytes for r in records}
    if len(sizes) != 1:
        raise GradingError("the all-to-alls differ in size (a bug in the test)")
    return float(sizes.pop()), sum(r.count for r in records)


def check_ep_all_to_all(answer, what, shape, layout, seq_len, global_batch):
    """Check ``answer`` ``(bytes, count)`` against :func:`ep_all_to_all` (bytes within 1e-9
    relative, the count exactly). Returns 1.0."""
    want_bytes, want_count = ep_all_to_all(shape, layout, seq_len, global_batch)
    nbytes, count = _pair(answer, what)
    _, L = _axis_sizes(layout)
    if not math.isclose(nbytes, want_bytes, rel_tol=1e-9):
        ratio = nbytes / want_bytes
        top_k = shape.get("top_k", 1)
        if top_k > 1 and math.isclose(ratio, 1 / top_k, rel_tol=1e-6):
            hint = (f"; yours is 1/top_k = 1/{top_k} of that: every token goes to top_k "
                    "experts, so top_k copies of it leave the rank")
        elif L.ep > 1 and math.isclose(ratio, 1 / L.ep, rel_tol=1e-6):
            hint = (f"; yours is 1/ep = 1/{L.ep} of that: the buffer (nccl-tests' S) is all "
                    "a rank sends, to every rank of its group together")
        else:
            hint = ratio_hint(nbytes, want_bytes)
        raise AssertionError(f"the bytes of {what} are {nbytes!r}, expected {want_bytes!r}"
                             f"{hint}")
    if count != want_count:
        hint = ""
        if count * 2 == want_count:
            hint = "; yours is half: dispatch and combine run in the backward pass too"
        elif count * 4 == want_count:
            hint = "; yours is a quarter: a dispatch and a combine, forward and backward"
        raise AssertionError(f"the count of {what} is {count}, expected {want_count}{hint}")
    return 1.0


# ---- task 3: memory ------------------------------------------------------------------------

def memory_per_device(shape, layout, seq_len, global_batch, recipe="bf16"):
    """Bytes one device holds, ``{weights, master, grads, optimizer, activations}``, by the
    planner's :class:`~collectives.plan.Memory` (recipe ``"bf16"`` or ``"fp8"``)."""
    if recipe not in RECIPES:
        raise GradingError(f"recipe must be one of {RECIPES}, got {recipe!r} (a bug in the "
                           "test)")
    memory = _plan_for(shape, layout, seq_len, global_batch, recipe).memory
    return {part: float(getattr(memory, part)) for part in MEMORY_PARTS}


def _memory_hint(part, ratio, layout, shape):
    _, L = _axis_sizes(layout)
    close = lambda x: math.isclose(ratio, x, rel_tol=1e-6)    # noqa: E731
    if part != "activations":
        if L.tp * L.pp > 1 and close(L.tp * L.pp):
            return (f"; yours is tp x pp = {L.tp * L.pp} times that: a device holds 1/(tp x "
                    "pp) of the parameters")
        if L.fsdp > 1 and close(L.fsdp):
            return (f"; yours is fsdp = {L.fsdp} times that: FSDP (ZeRO 3) shards every model "
                    "state over its ranks")
        if L.dp > 1 and close(L.dp):
            return (f"; yours is dp = {L.dp} times that: ZeRO stage {L.zero_stage} shards "
                    f"the {part} over the dp ranks")
        if L.dp > 1 and close(1 / L.dp):
            return (f"; yours is 1/dp = 1/{L.dp} of that: ZeRO stage {L.zero_stage} does not "
                    f"shard the {part}")
    else:
        if min(L.pp, L.micro_batches) > 1 and close(1 / min(L.pp, L.micro_batches)):
            return (f"; yours is 1/{min(L.pp, L.micro_batches)} of that: under 1F1B the first "
                    "stage holds min(pp, micro_batches) micro-batches' activations")
        if L.micro_batches > 1 and close(L.micro_batches):
            return (f"; yours is {L.micro_batches} times that: b is the sequences of one "
                    "micro-batch")
    return ratio_hint(ratio, 1.0)


def check_memory_per_device(answer, what, shape, layout, seq_len, global_batch,
                            recipe="bf16"):
    """Check ``answer`` (a dict of :data:`MEMORY_PARTS`, bytes) against
    :func:`memory_per_device`, each part within 1e-6 relative. Returns 1.0."""
    want = memory_per_device(shape, layout, seq_len, global_batch, recipe)
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(f"{what} should be a dict with the keys {', '.join(MEMORY_PARTS)}, "
                           f"but it is {in_words(answer)}")
    if sorted(answer) != sorted(MEMORY_PARTS):
        raise GradingError(f"{what} has the keys {sorted(answer)}; expected exactly "
                           f"{', '.join(MEMORY_PARTS)}")
    for part in MEMORY_PARTS:
        mine = check_number(answer[part], f"{what}[{part!r}]")
        if not math.isclose(mine, want[part], rel_tol=1e-6, abs_tol=1e-3):
            hint = _memory_hint(part, mine / want[part], layout, shape) if want[part] else ""
            raise AssertionError(f"{what}[{part!r}] is {mine!r} bytes, expected "
                                 f"{want[part]!r}{hint}")
    return 1.0


# ---- task 4: choosing a layout -------------------------------------------------------------

@lru_cache(maxsize=1)
def _cluster():
    return hardware.preset("superpod-h100", units=SCENARIO["units"])


def layout_candidates():
    """The layouts the reference search tries for :data:`SCENARIO` (as dicts): ``tp`` in 1,
    2, 4, 8 (inside a node; sequence parallelism on when ``tp > 1``), ``pp`` in 1, 2, 4, 8,
    the remaining ``d = devices / (tp pp)`` ranks as ``dp = d`` with ZeRO stage 1, with
    ZeRO stage 2 (with pp > 1 too: DeepSpeed's pipeline engine refuses it, Llama 3's FSDP
    and torchtitan run sharded gradients with pipelines; it wins no limit the notebook
    checks) or as ``fsdp = d``, and every power of two of micro-batches that splits the
    batch."""
    devices = SCENARIO["nodes"] * 8
    out = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            d = devices // (tp * pp)
            shards = [{"dp": d, "zero_stage": 1}, {"dp": d, "zero_stage": 2}, {"fsdp": d}]
            for shard in shards:
                m = 1
                while SCENARIO["global_batch"] % (d * m) == 0:
                    out.append({**shard, "tp": tp, "pp": pp, "sequence_parallel": tp > 1,
                                "micro_batches": m})
                    m *= 2
    return out


@lru_cache(maxsize=512)
def _scenario_plan(layout_key):
    return planner.training_step(SCENARIO["model"], planner.Layout(**dict(layout_key)),
                                 _cluster(), seq_len=SCENARIO["seq_len"],
                                 global_batch=SCENARIO["global_batch"])


def scenario_plan(layout):
    """:func:`collectives.plan.training_step` of ``layout`` (a dict) in :data:`SCENARIO`."""
    return _scenario_plan(_key(_plain_dict(layout, "layout", LAYOUT_KEYS)))


def best_layout(hbm_bytes):
    """``(layout, step seconds)``: the fastest of :func:`layout_candidates` whose memory per
    device is at most ``hbm_bytes`` (the first of equals in candidate order), or ``(None,
    inf)`` if none fits."""
    best, seconds = None, math.inf
    for layout in layout_candidates():
        plan = scenario_plan(layout)
        if plan.memory_per_device <= hbm_bytes and plan.step_seconds < seconds:
            best, seconds = layout, plan.step_seconds
    return best, seconds


def _gb(x):
    return f"{x / 1e9:.1f} GB"


def check_layout_choice(answer, what, hbm_bytes, within=WITHIN):
    """Check a layout chosen for :data:`SCENARIO` under ``hbm_bytes`` per device: a dict of
    :data:`LAYOUT_KEYS` that the planner accepts (devices, heads, layers and batch divide),
    tensor-parallel groups inside a node, memory per device at most ``hbm_bytes``, and a step
    time within ``within`` of :func:`best_layout`'s. Returns 1.0."""
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(f"{what} should be a dict such as {{'dp': 32, 'tp': 8}}, but it is "
                           f"{in_words(answer)}")
    unknown = [k for k in answer if k not in LAYOUT_KEYS]
    if unknown:
        raise GradingError(f"{what} has the keys {unknown}, which are not layout sizes; use "
                           f"only {', '.join(LAYOUT_KEYS)}")
    try:
        layout = planner.Layout(**answer)
    except CollectivesError as exc:
        raise AssertionError(f"{what} = {answer} is not a layout: {exc}") from None
    try:
        plan = scenario_plan(answer)
    except CollectivesError as exc:
        raise AssertionError(f"{what} = {answer} does not fit the job: {exc}") from None
    across = sorted({r.level for r in plan.records("tp") if r.level != "inside a node"})
    if across:
        raise AssertionError(
            f"{what} = {answer} puts tensor parallelism {across[0]}: tp = {layout.tp} spans "
            f"{-(-layout.tp // 8)} DGX nodes of 8 GPUs, so its activation collectives, on the "
            "critical path, would cross the 50 GB/s NICs instead of 450 GB/s NVLink; keep "
            "tp <= 8")
    mem = plan.memory
    if mem.total > hbm_bytes:
        raise AssertionError(
            f"{what} = {answer} needs {_gb(mem.total)} per device (weights {_gb(mem.weights)}, "
            f"master {_gb(mem.master)}, grads {_gb(mem.grads)}, optimizer "
            f"{_gb(mem.optimizer)}, activations {_gb(mem.activations)}, logits "
            f"{_gb(mem.logits)}), more than the {_gb(hbm_bytes)} limit")
    _, best = best_layout(hbm_bytes)
    if plan.step_seconds > best * (1 + within):
        raise AssertionError(
            f"{what} = {answer} fits ({_gb(mem.total)} per device) but its step takes "
            f"{plan.step_seconds:.4f} s (compute {plan.compute_seconds:.4f} s, pipeline bubble "
            f"{plan.bubble_seconds:.4f} s, exposed communication {plan.exposed_seconds:.4f} s), "
            f"{plan.step_seconds / best - 1:.1%} slower than the best candidate under "
            f"{_gb(hbm_bytes)}, {best:.4f} s; within {within:.0%} is accepted")
    return 1.0
