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

from ... import hardware, topology
from ... import plan as planner
from ...errors import CollectivesError, GradingError
from ..checks import check_number, count_text, in_words, ratio_hint, show

__all__ = [
    "SHAPE_KEYS",
    "MOE_KEYS",
    "LAYOUT_KEYS",
    "MEMORY_PARTS",
    "RECIPES",
    "SCENARIO",
    "WITHIN",
    "step_collectives",
    "check_step_collectives",
    "ep_all_to_all",
    "check_ep_all_to_all",
    "memory_per_device",
    "check_memory_per_device",
    "layout_candidates",
    "scenario_plan",
    "best_layout",
    "check_layout_choice",
    "SETTINGS",
    "TP_MAX",
    "HBM_MAX",
    "SHAPES",
    "full_layout",
    "changed_settings",
    "layout_memory",
    "nearby_layouts",
    "fewest_changes",
    "check_fit_change",
    "fit_case",
    "ASSUMPTIONS",
    "MFU_RANGE",
    "EVEN_WITHIN",
    "MARGIN",
    "case_step",
    "verdict",
    "flipping_assumptions",
    "check_flipping_assumption",
    "breakeven_mfu",
    "check_breakeven_mfu",
    "rival_case",
]

#: a dense transformer's shape, as the notebook gives it (a dict of ints)
SHAPE_KEYS = ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab")
#: what a mixture of experts adds
MOE_KEYS = ("experts", "top_k", "expert_ffn", "dense_layers", "shared_experts")
#: a layout, as the notebook gives it (a dict; missing keys take Layout's defaults)
LAYOUT_KEYS = ("dp", "fsdp", "tp", "pp", "ep", "zero_stage", "sequence_parallel", "micro_batches")
#: the parts of :func:`memory_per_device` (``optimizer``: Adam's two moments)
MEMORY_PARTS = ("weights", "master", "grads", "optimizer", "activations")
#: the recipes of the memory task (:data:`collectives.plan.PRECISIONS` names)
RECIPES = ("bf16", "fp8")
#: the design task's model, cluster (``preset("superpod-h100", units=1)``: 32 DGX H100 nodes)
#: and batch
SCENARIO = {"model": "llama3-70b", "units": 1, "nodes": 32, "seq_len": 8192, "global_batch": 256}
#: how much slower than the best candidate a chosen layout may be
WITHIN = 0.01

_LINK = 100e9  # bytes/s: the switch the counts are planned on (times unused)
_FLOPS = 1e15  # FLOP/s per device on that switch (unused by the counts)


# ---- reading the notebook's plain data ----------------------------------------------------


def _plain_dict(value, what, keys):
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise GradingError(
            f"{what} must be a dict with string keys, got {in_words(value)} (a bug in the test)"
        )
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
        return planner.training_step(
            m,
            layout,
            _switch(layout.devices),
            seq_len=seq_len,
            global_batch=global_batch,
            recipe=recipe,
            flops_per_device=_FLOPS,
        )
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
            raise GradingError(
                f"{r.purpose} has {nbytes} bytes in one phase and {r.nbytes} "
                "in another (a bug in the test)"
            )
        out[r.purpose] = (float(r.nbytes), count + r.count)
    return out


def _pair(value, what):
    """``(bytes, count)``: two numbers, the count a whole number."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise GradingError(f"{what} should be a pair (bytes, count), but it is {in_words(value)}")
    nbytes = check_number(value[0], f"the bytes of {what}")
    count = check_number(value[1], f"the count of {what}")
    if count != int(count) or count < 0:
        raise AssertionError(
            f"the count of {what} is {show(value[1])}; a count is a whole number >= 0"
        )
    return nbytes, int(count)


def _axis_sizes(layout):
    L = _layout(layout)
    return {"dp": L.dp, "fsdp": L.fsdp, "tp": L.tp, "pp": L.pp, "ep": L.ep}, L


def _bytes_hint(purpose, ratio, layout, shape):
    """The likely mistakes behind ``ratio`` = learner's bytes / reference bytes (all that
    fit, joined with "or")."""
    sizes, L = _axis_sizes(layout)
    close = lambda x: math.isclose(ratio, x, rel_tol=1e-6)
    found = []
    if "grad" in purpose and close(2):
        found.append(("twice that", "gradients are reduced in BF16, 2 bytes each, not 4"))
    if "grad" in purpose or "weight" in purpose:
        if L.tp * L.pp > 1 and close(L.tp * L.pp):
            found.append(
                (
                    f"tp x pp = {L.tp * L.pp} times that",
                    "each device holds only "
                    "1/(tp x pp) of the parameters, and only its shard takes part",
                )
            )
        per_stage = -(-shape["layers"] // L.pp)
        if purpose.startswith("fsdp") and close(per_stage):
            found.append(
                (
                    f"{per_stage} times that",
                    "FSDP gathers (and reduces) one block at "
                    "a time, the stage's parameters / its layers",
                )
            )
        if purpose.startswith("dp") and L.fsdp > 1 and close(L.fsdp):
            found.append(
                (
                    f"fsdp = {L.fsdp} times that",
                    "after FSDP's reduce-scatter each "
                    "rank holds 1/fsdp of its gradients, and only that shard crosses dp",
                )
            )
    if purpose.startswith(("tp", "pp")):
        if L.micro_batches > 1 and close(L.micro_batches):
            found.append(
                (
                    f"{L.micro_batches} times that",
                    "one collective carries one micro-batch's activations",
                )
            )
        if L.sequence_parallel and close(L.tp):
            found.append(
                (
                    f"tp = {L.tp} times that",
                    "with sequence parallelism each rank holds 1/tp of the sequence between blocks",
                )
            )
        if L.sequence_parallel and close(1 / L.tp):
            found.append(
                (
                    f"1/tp = 1/{L.tp} of that",
                    "the all-gather's buffer (nccl-tests' "
                    "S) is the whole gathered activation, the reduce-scatter's its input",
                )
            )
    if not found:
        return ratio_hint(ratio, 1.0)
    return f"; yours is {found[0][0]}: " + "; or ".join(why for _, why in found)


def _count_hint(purpose, got, want, layout, shape):
    _, L = _axis_sizes(layout)
    if want and got * 2 == want and purpose.startswith("tp"):
        return (
            "; yours is half: two in the forward pass of each block and micro-batch, and "
            "two more in the backward"
        )
    if want and got * 2 == want and purpose == "fsdp weight all-gather":
        return (
            "; yours is half: FSDP frees a block's gathered weights after its forward "
            "and gathers them again for its backward"
        )
    if L.micro_batches > 1 and got * L.micro_batches == want:
        return f"; yours is 1/{L.micro_batches} of that: once per micro-batch"
    if L.micro_batches > 1 and got == want * L.micro_batches:
        return f"; yours is {L.micro_batches} times that: once per step, not per micro-batch"
    if L.pp > 1 and got == want * L.pp:
        return (
            f"; yours is pp = {L.pp} times that: a device runs only its stage's "
            f"{shape['layers'] // L.pp} blocks"
        )
    return ""


def _why_absent(purpose, layout):
    sizes, L = _axis_sizes(layout)
    axis = purpose.split(" ", 1)[0]
    if sizes.get(axis) == 1:
        return f" ({axis} = 1: a group of one rank needs no collective)"
    if purpose == "dp grad all-reduce" and L.zero_stage:
        return (
            f" (ZeRO stage {L.zero_stage} reduce-scatters the gradients and all-gathers "
            "the updated weights instead)"
        )
    if purpose.startswith("dp") and L.zero_stage == 0 and "all-reduce" not in purpose:
        return " (without ZeRO the replicas all-reduce their gradients)"
    if purpose == "tp activation all-reduce" and L.sequence_parallel:
        return (
            " (with sequence parallelism each all-reduce becomes an all-gather and a "
            "reduce-scatter)"
        )
    return ""


def check_step_collectives(answer, what, shape, layout, seq_len, global_batch):
    """Check ``answer`` (``{purpose: (bytes, count)}``) against :func:`step_collectives`:
    the same purposes (entries with count 0 are ignored), bytes within 1e-9 relative,
    counts exactly. Returns 1.0."""
    want = step_collectives(shape, layout, seq_len, global_batch)
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(
            f"{what} should be a dict {{purpose: (bytes, count)}} with string "
            f"keys, but it is {in_words(answer)}"
        )
    got = {}
    for purpose, value in answer.items():
        nbytes, count = _pair(value, f"{what}[{purpose!r}]")
        if count:
            got[purpose] = (nbytes, count)
    listed = ", ".join(repr(p) for p in want) or "nothing"
    for purpose in got:
        if purpose not in want:
            raise AssertionError(
                f"{what} lists {purpose!r}, which this step does not issue"
                f"{_why_absent(purpose, layout)}; it issues {listed}"
            )
    for purpose in want:
        if purpose not in got:
            raise AssertionError(f"{what} has no {purpose!r}; this step issues {listed}")
    for purpose, (nbytes, count) in want.items():
        mine, times = got[purpose]
        if not math.isclose(mine, nbytes, rel_tol=1e-9):
            hint = _bytes_hint(purpose, mine / nbytes, layout, shape) if nbytes else ""
            raise AssertionError(
                f"{what}[{purpose!r}] has {mine!r} bytes, expected {nbytes!r}{hint}"
            )
        if times != count:
            raise AssertionError(
                f"{what}[{purpose!r}] happens {times} times per step, "
                f"expected {count}"
                f"{_count_hint(purpose, times, count, layout, shape)}"
            )
    return 1.0


# ---- task 2: expert parallelism ------------------------------------------------------------


def ep_all_to_all(shape, layout, seq_len, global_batch):
    """``(bytes, count)`` of the expert-parallel all-to-alls of one training step of a mixture
    of experts, per device: the send buffer of one (dispatch and combine alike) and how many
    (dispatch and combine, forward and backward)."""
    records = [
        r
        for r in _plan_for(shape, layout, seq_len, global_batch).collectives
        if r.collective == "all_to_all"
    ]
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
            hint = (
                f"; yours is 1/top_k = 1/{top_k} of that: every token goes to top_k "
                "experts, so top_k copies of it leave the rank"
            )
        elif L.ep > 1 and math.isclose(ratio, 1 / L.ep, rel_tol=1e-6):
            hint = (
                f"; yours is 1/ep = 1/{L.ep} of that: the buffer (nccl-tests' S) is all "
                "a rank sends, to every rank of its group together"
            )
        else:
            hint = ratio_hint(nbytes, want_bytes)
        raise AssertionError(f"the bytes of {what} are {nbytes!r}, expected {want_bytes!r}{hint}")
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
        raise GradingError(f"recipe must be one of {RECIPES}, got {recipe!r} (a bug in the test)")
    memory = _plan_for(shape, layout, seq_len, global_batch, recipe).memory
    return {part: float(getattr(memory, part)) for part in MEMORY_PARTS}


def _memory_hint(part, ratio, layout, shape):
    _, L = _axis_sizes(layout)
    close = lambda x: math.isclose(ratio, x, rel_tol=1e-6)
    if part != "activations":
        if L.tp * L.pp > 1 and close(L.tp * L.pp):
            return (
                f"; yours is tp x pp = {L.tp * L.pp} times that: a device holds 1/(tp x "
                "pp) of the parameters"
            )
        if L.fsdp > 1 and close(L.fsdp):
            return (
                f"; yours is fsdp = {L.fsdp} times that: FSDP (ZeRO 3) shards every model "
                "state over its ranks"
            )
        if L.dp > 1 and close(L.dp):
            return (
                f"; yours is dp = {L.dp} times that: ZeRO stage {L.zero_stage} shards "
                f"the {part} over the dp ranks"
            )
        if L.dp > 1 and close(1 / L.dp):
            return (
                f"; yours is 1/dp = 1/{L.dp} of that: ZeRO stage {L.zero_stage} does not "
                f"shard the {part}"
            )
    else:
        if min(L.pp, L.micro_batches) > 1 and close(1 / min(L.pp, L.micro_batches)):
            return (
                f"; yours is 1/{min(L.pp, L.micro_batches)} of that: under 1F1B the first "
                "stage holds min(pp, micro_batches) micro-batches' activations"
            )
        if L.micro_batches > 1 and close(L.micro_batches):
            return f"; yours is {L.micro_batches} times that: b is the sequences of one micro-batch"
    return ratio_hint(ratio, 1.0)


def check_memory_per_device(answer, what, shape, layout, seq_len, global_batch, recipe="bf16"):
    """Check ``answer`` (a dict of :data:`MEMORY_PARTS`, bytes) against
    :func:`memory_per_device`, each part within 1e-6 relative. Returns 1.0."""
    want = memory_per_device(shape, layout, seq_len, global_batch, recipe)
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(
            f"{what} should be a dict with the keys {', '.join(MEMORY_PARTS)}, "
            f"but it is {in_words(answer)}"
        )
    if sorted(answer) != sorted(MEMORY_PARTS):
        raise GradingError(
            f"{what} has the keys {sorted(answer)}; expected exactly {', '.join(MEMORY_PARTS)}"
        )
    for part in MEMORY_PARTS:
        mine = check_number(answer[part], f"{what}[{part!r}]")
        if not math.isclose(mine, want[part], rel_tol=1e-6, abs_tol=1e-3):
            hint = _memory_hint(part, mine / want[part], layout, shape) if want[part] else ""
            raise AssertionError(
                f"{what}[{part!r}] is {mine!r} bytes, expected {want[part]!r}{hint}"
            )
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
                    out.append(
                        {
                            **shard,
                            "tp": tp,
                            "pp": pp,
                            "sequence_parallel": tp > 1,
                            "micro_batches": m,
                        }
                    )
                    m *= 2
    return out


@lru_cache(maxsize=512)
def _scenario_plan(layout_key):
    return planner.training_step(
        SCENARIO["model"],
        planner.Layout(**dict(layout_key)),
        _cluster(),
        seq_len=SCENARIO["seq_len"],
        global_batch=SCENARIO["global_batch"],
    )


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
        raise GradingError(
            f"{what} should be a dict such as {{'dp': 32, 'tp': 8}}, but it is {in_words(answer)}"
        )
    unknown = [k for k in answer if k not in LAYOUT_KEYS]
    if unknown:
        raise GradingError(
            f"{what} has the keys {unknown}, which are not layout sizes; use "
            f"only {', '.join(LAYOUT_KEYS)}"
        )
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
            "tp <= 8"
        )
    mem = plan.memory
    if mem.total > hbm_bytes:
        raise AssertionError(
            f"{what} = {answer} needs {_gb(mem.total)} per device (weights {_gb(mem.weights)}, "
            f"master {_gb(mem.master)}, grads {_gb(mem.grads)}, optimizer "
            f"{_gb(mem.optimizer)}, activations {_gb(mem.activations)}, logits "
            f"{_gb(mem.logits)}), more than the {_gb(hbm_bytes)} limit"
        )
    _, best = best_layout(hbm_bytes)
    if plan.step_seconds > best * (1 + within):
        raise AssertionError(
            f"{what} = {answer} fits ({_gb(mem.total)} per device) but its step takes "
            f"{plan.step_seconds:.4f} s (compute {plan.compute_seconds:.4f} s, pipeline bubble "
            f"{plan.bubble_seconds:.4f} s, exposed communication {plan.exposed_seconds:.4f} s), "
            f"{plan.step_seconds / best - 1:.1%} slower than the best candidate under "
            f"{_gb(hbm_bytes)}, {best:.4f} s; within {within:.0%} is accepted"
        )
    return 1.0


# ---- task 4: the smallest change that makes a layout fit ----------------------------------

#: what a missing setting of the notebook's layout means (tasks 1-4)
SETTINGS = {
    "dp": 1,
    "fsdp": 1,
    "tp": 1,
    "pp": 1,
    "zero_stage": 0,
    "sequence_parallel": False,
    "micro_batches": 1,
}
#: the largest tensor-parallel group (one DGX node's NVLink)
TP_MAX = 8
#: the largest limit a drawn case of task 4 sets (a choice of the tests, not a device: twice
#: the 80 GB of an H100, ``hardware.spec("dgx-h100").hbm_bytes``)
HBM_MAX = 160e9
#: the dense models the drawn cases of tasks 4-6 use (the Llama 3 herd, as the notebook)
SHAPES = {
    "llama3-8b": {
        "layers": 32,
        "hidden": 4096,
        "ffn": 14336,
        "heads": 32,
        "kv_heads": 8,
        "vocab": 128000,
    },
    "llama3-70b": {
        "layers": 80,
        "hidden": 8192,
        "ffn": 28672,
        "heads": 64,
        "kv_heads": 8,
        "vocab": 128000,
    },
}


def full_layout(layout):
    """Every setting of ``layout`` (a dict of :data:`SETTINGS` keys), missing ones at their
    defaults."""
    layout = _plain_dict(layout, "layout", tuple(SETTINGS))
    return {**SETTINGS, **layout}


def changed_settings(layout, other):
    """The settings (names, sorted) whose values differ between two layouts, missing keys
    read as :data:`SETTINGS`; ``sequence_parallel`` compared as a bool."""
    a, b = full_layout(layout), full_layout(other)
    return sorted(
        k
        for k in SETTINGS
        if (bool(a[k]) != bool(b[k]) if k == "sequence_parallel" else a[k] != b[k])
    )


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def layout_memory(shape, layout, seq_len, global_batch):
    """Bytes per device of ``layout`` in BF16 by the planner (``plan.memory_per_device``:
    the model states, the busier pipeline stage's activations and the output layer's
    logits), or None if the planner refuses the layout (heads, layers or batch do not
    divide) or ``tp`` exceeds :data:`TP_MAX`."""
    layout = full_layout(layout)
    if layout["tp"] > TP_MAX or layout["zero_stage"] not in (0, 1, 2):
        return None
    try:
        return float(_plan_for(shape, layout, seq_len, global_batch).memory_per_device)
    except GradingError:
        return None


def nearby_layouts(shape, layout, seq_len, global_batch, changes=2):
    """``[(settings changed, layout)]``: every layout the planner accepts on the same
    devices (``tp <= 8``, ZeRO 0-2) that differs from ``layout`` in 1 to ``changes``
    settings (1 or 2), fewest changes first."""
    base = full_layout(layout)
    devices = base["dp"] * base["fsdp"] * base["tp"] * base["pp"]
    domain = {
        "dp": _divisors(devices),
        "fsdp": _divisors(devices),
        "tp": [t for t in _divisors(devices) if t <= TP_MAX],
        "pp": _divisors(devices),
        "zero_stage": [0, 1, 2],
        "sequence_parallel": [False, True],
        "micro_batches": _divisors(global_batch),
    }
    found, seen = [], set()
    keys = list(SETTINGS)
    subsets = [(k,) for k in keys]
    if changes >= 2:
        subsets += [(a, b) for i, a in enumerate(keys) for b in keys[i + 1 :]]
    for subset in subsets:
        options = [[v for v in domain[k] if v != base[k]] for k in subset]
        combos = [[]]
        for values in options:
            combos = [c + [v] for c in combos for v in values]
        for combo in combos:
            new = {**base, **dict(zip(subset, combo))}
            if new["dp"] * new["fsdp"] * new["tp"] * new["pp"] != devices:
                continue
            if new["sequence_parallel"] and new["tp"] == 1:
                continue  # no tensor parallelism to split the sequence over
            key = _key(new)
            if key in seen or layout_memory(shape, new, seq_len, global_batch) is None:
                continue
            seen.add(key)
            found.append((len(subset), new))
    return found


def fewest_changes(shape, layout, seq_len, global_batch, hbm_bytes):
    """``(count, layout)``: the fewest settings (1 or 2) to change so that ``layout`` fits
    ``hbm_bytes`` per device, with one such layout (the one with the least memory among
    them), or ``(None, None)`` if no change of up to two settings fits (0 if it fits
    already)."""
    if layout_memory(shape, layout, seq_len, global_batch) <= hbm_bytes:
        return 0, full_layout(layout)
    best = {}
    for count, new in nearby_layouts(shape, layout, seq_len, global_batch):
        memory = layout_memory(shape, new, seq_len, global_batch)
        if memory <= hbm_bytes and (count not in best or memory < best[count][0]):
            best[count] = (memory, new)
    if not best:
        return None, None
    count = min(best)
    return count, best[count][1]


def check_fit_change(answer, what, shape, layout, seq_len, global_batch, hbm_bytes):
    """Check a changed ``layout`` (a dict of :data:`SETTINGS` keys) that should fit
    ``hbm_bytes``: the same devices, ``tp <= 8``, ZeRO 0-2, accepted by the planner, memory
    per device (the planner's) at most ``hbm_bytes``, and no more settings changed than
    :func:`fewest_changes` needs; a layout that changes fewer (it cannot) or as many passes,
    whichever settings it changes. Returns 1.0."""
    want, _ = fewest_changes(shape, layout, seq_len, global_batch, hbm_bytes)
    if want is None or want == 0:
        raise GradingError(
            f"{what}: the case has no fix of one or two settings (a bug in the test)"
        )
    if not isinstance(answer, dict) or not all(isinstance(k, str) for k in answer):
        raise GradingError(
            f"{what} should be a layout dict such as {{'dp': 8, 'tp': 4}}, but "
            f"it is {in_words(answer)}"
        )
    unknown = [k for k in answer if k not in SETTINGS]
    if unknown:
        raise GradingError(
            f"{what} has the keys {unknown}; a layout here has only {', '.join(SETTINGS)}"
        )
    base, new = full_layout(layout), full_layout(answer)
    for k in SETTINGS:
        if k != "sequence_parallel" and (isinstance(new[k], bool) or not isinstance(new[k], int)):
            number = check_number(new[k], f"{what}[{k!r}]")
            if number != int(number):
                raise AssertionError(
                    f"{what}[{k!r}] is {show(new[k])}; a layout's sizes are whole numbers"
                )
            new[k] = int(number)
    devices = base["dp"] * base["fsdp"] * base["tp"] * base["pp"]
    mine = new["dp"] * new["fsdp"] * new["tp"] * new["pp"]
    if mine != devices:
        raise AssertionError(
            f"{what} = {answer} uses dp x fsdp x tp x pp = {mine} GPUs; the job has {devices}"
        )
    if new["tp"] > TP_MAX:
        raise AssertionError(
            f"{what} = {answer} has tp = {new['tp']}: a tensor-parallel group "
            f"must stay inside a node, tp <= {TP_MAX}"
        )
    if new["zero_stage"] not in (0, 1, 2):
        raise AssertionError(
            f"{what} = {answer} has zero_stage = {new['zero_stage']}; use 0, "
            "1 or 2 (fsdp is the fully sharded one)"
        )
    memory = layout_memory(shape, new, seq_len, global_batch)
    if memory is None:
        try:
            planner.Layout(**new).check(_model(shape), devices)
            why = (
                f"the {global_batch} sequences do not split into dp x fsdp x micro_batches "
                "equal micro-batches"
            )
        except CollectivesError as exc:
            why = str(exc)
        raise AssertionError(f"{what} = {answer} is not a layout the planner accepts: {why}")
    changed = changed_settings(base, new)
    if memory > hbm_bytes:
        plan = _plan_for(shape, new, seq_len, global_batch)
        mem = plan.memory
        raise AssertionError(
            f"{what} = {answer} needs {_gb(memory)} per GPU (weights {_gb(mem.weights)}, "
            f"master {_gb(mem.master)}, grads {_gb(mem.grads)}, optimizer "
            f"{_gb(mem.optimizer)}, activations {_gb(mem.activations)}, logits "
            f"{_gb(mem.logits)}), more than the {_gb(hbm_bytes)} limit"
        )
    if len(changed) > want:
        raise AssertionError(
            f"{what} = {answer} fits ({_gb(memory)} per GPU) but changes "
            f"{len(changed)} settings ({', '.join(changed)}); changing "
            f"{count_text(want, 'setting', 'settings')} is enough here"
        )
    return 1.0


def fit_case(generator, attempts=400):
    """A drawn case of task 4, ``(model name, layout, seq_len, global_batch, hbm_bytes)``: a
    Llama 3 8B or 70B layout over 16 to 128 GPUs that does not fit ``hbm_bytes`` and
    needs one or two settings changed to fit, the limit at least 1 % from every nearby
    layout's memory (a rounding never decides)."""
    pick = lambda values: values[int(generator.integers(0, len(values)))]
    for _ in range(attempts):
        name = pick(sorted(SHAPES))
        shape = SHAPES[name]
        devices = pick([16, 32, 64, 128])
        tp = pick([t for t in (1, 2, 4, 8) if t <= devices])
        pp = pick([p for p in (1, 2, 4) if devices % (tp * p) == 0])
        d = devices // (tp * pp)
        fsdp = pick([f for f in _divisors(d) if f in (1, 2, 4, 8, d)])
        m = pick([1, 2, 4, 8])
        seq_len = pick([2048, 4096, 8192])
        global_batch = d * m * pick([1, 2])
        layout = {
            "dp": d // fsdp,
            "fsdp": fsdp,
            "tp": tp,
            "pp": pp,
            "zero_stage": pick([0, 1, 2]) if d // fsdp > 1 else 0,
            "sequence_parallel": tp > 1 and bool(generator.integers(0, 2)),
            "micro_batches": m,
        }
        layout = {k: v for k, v in layout.items() if v != SETTINGS[k]}
        memory = layout_memory(shape, layout, seq_len, global_batch)
        if memory is None:
            continue
        near = {}
        for count, new in nearby_layouts(shape, layout, seq_len, global_batch):
            near.setdefault(count, []).append(layout_memory(shape, new, seq_len, global_batch))
        if 1 not in near or 2 not in near:
            continue
        one, two = min(near[1]), min(near[2])
        # a limit between the best one-setting change and the given layout needs one change;
        # one between the best two-setting change and the best one-setting change (and below
        # the given layout, which every one-setting change may exceed) needs two
        low, high = (two, min(one, memory)) if generator.integers(0, 2) else (one, memory)
        if high < low * 1.05:
            continue
        hbm = round(low * (1.02 + (high / low - 1.04) * generator.random()) / 1e6) * 1e6
        levels = [x for values in near.values() for x in values] + [memory]
        if all(abs(x / hbm - 1) > 0.01 for x in levels) and 8e9 <= hbm <= HBM_MAX:
            return name, layout, seq_len, global_batch, float(hbm)
    raise GradingError(f"no case found in {attempts} draws (a bug in the test)")


# ---- tasks 5 and 6: which assumption flips a verdict, and at what matmul efficiency --------

#: the assumptions of tasks 5 and 6: the labels of :data:`collectives.plan.WHAT_IFS` after
#: the first ("as planned": peak BF16, line rates, hashed ECMP)
ASSUMPTIONS = tuple(w.label for w in planner.WHAT_IFS[1:])
#: the range of matmul efficiencies task 6 searches, and how close the two step times must be
#: at the learner's answer (relative)
MFU_RANGE = (0.2, 1.0)
EVEN_WITHIN = 0.005
#: how far apart every verdict of a drawn case stays (relative), so that no rounding decides
MARGIN = 0.005


def _case(case, what="case"):
    keys = ("model", "units", "seq_len", "global_batch", "layout", "rival", "target")
    case = _plain_dict(case, what, keys)
    if ("rival" in case) == ("target" in case):
        raise GradingError(
            f"{what} needs a rival layout or a target step time, not both (a bug in the test)"
        )
    return case


@lru_cache(maxsize=8)
def _superpod(units, rates="line"):
    return hardware.preset(
        "superpod-h100", units=units, **({} if rates == "line" else {"rates": rates})
    )


@lru_cache(maxsize=4096)
def _case_step(model, units, seq_len, global_batch, layout_key, what_if=None, mfu=1.0):
    """Step seconds of a layout of a case, under the what-if labelled ``what_if`` (None: as
    planned) or at matmul efficiency ``mfu``."""
    w = next((x for x in planner.WHAT_IFS if x.label == what_if), planner.WHAT_IFS[0])
    plan = planner.training_step(
        model,
        planner.Layout(**dict(layout_key)),
        _superpod(units, w.rates),
        seq_len=seq_len,
        global_batch=global_batch,
        mfu=w.mfu * mfu,
        compute=w.compute,
        ecmp=w.ecmp,
    )
    return plan.step_seconds


def case_step(case, which="layout", what_if=None, mfu=1.0):
    """Step seconds of ``case[which]`` (``"layout"`` or ``"rival"``) under ``what_if`` (a label
    of :data:`ASSUMPTIONS`, None: as planned) or at matmul efficiency ``mfu``."""
    case = _case(case)
    return _case_step(
        case["model"],
        case["units"],
        case["seq_len"],
        case["global_batch"],
        _key(case[which]),
        what_if,
        mfu,
    )


def verdict(case, what_if=None, mfu=1.0):
    """``(holds, mine, theirs)``: whether ``case["layout"]`` beats its rival (strictly faster)
    or meets its target (at most), and the two numbers compared."""
    case = _case(case)
    mine = case_step(case, "layout", what_if, mfu)
    theirs = case_step(case, "rival", what_if, mfu) if "rival" in case else case["target"]
    return (mine < theirs if "rival" in case else mine <= theirs), mine, theirs


def flipping_assumptions(case):
    """The labels of :data:`ASSUMPTIONS` under which the verdict of ``case`` differs from the
    verdict as planned (each changed alone)."""
    planned = verdict(case)[0]
    return tuple(label for label in ASSUMPTIONS if verdict(case, label)[0] != planned)


def _words_of(case):
    if "rival" in case:
        return (f"{case['layout']} beats {case['rival']}", "its step", "the rival's")
    return (f"{case['layout']} meets the {case['target']:.3f} s target", "its step", "the target")


def check_flipping_assumption(answer, what, case):
    """Check ``answer``, a label of :data:`ASSUMPTIONS` under which the verdict of ``case``
    flips (any such label passes), or None when none of them flips it. Returns 1.0."""
    case = _case(case)
    planned, mine, theirs = verdict(case)
    claim, _, _ = _words_of(case)
    said = "holds" if planned else "fails"
    flips = flipping_assumptions(case)
    if answer is None:
        if flips:
            raise AssertionError(
                f"{what} is None, but the verdict ({claim}: as planned it {said}, "
                f"{mine:.4f} s vs {theirs:.4f} s) flips under "
                f"{count_text(len(flips), 'assumption', 'assumptions')} of the list; plan "
                "each one"
            )
        return 1.0
    if not isinstance(answer, str) or answer not in ASSUMPTIONS:
        labels = ", ".join(map(repr, ASSUMPTIONS))
        raise GradingError(
            f"{what} should be one of the labels {labels} or None, but it is {in_words(answer)}"
        )
    holds, mine_w, theirs_w = verdict(case, answer)
    if holds == planned:
        rest = (
            "; no assumption of the list flips it: the answer is None"
            if not flips
            else "; "
            + count_text(len(flips), "assumption of the list does", "assumptions of the list do")
        )
        raise AssertionError(
            f"{what} is {answer!r}, but under it the verdict ({claim}) still {said}: "
            f"{mine_w:.4f} s vs {theirs_w:.4f} s (as planned {mine:.4f} s vs {theirs:.4f} s)"
            f"{rest}"
        )
    return 1.0


def _gap(case, mfu):
    """Relative gap of the rival over the layout at matmul efficiency ``mfu``."""
    _, mine, theirs = verdict(case, mfu=mfu)
    return theirs / mine - 1


def _grid(case):
    """``[(mfu, gap)]`` on 33 efficiencies from the top of :data:`MFU_RANGE` down."""
    low, high = MFU_RANGE
    return [(x, _gap(case, x)) for x in (high - (high - low) * i / 32 for i in range(33))]


def breakeven_mfu(case, steps=48):
    """The matmul efficiency in :data:`MFU_RANGE` at which ``case["layout"]`` and its rival
    take the same step, or None if the layout is faster over the whole range (checked on a
    grid of 33, then bisected): the highest such efficiency if there are several."""
    case = _case(case)
    if "rival" not in case:
        raise GradingError("a break-even efficiency needs a rival layout (a bug in the test)")
    grid = _grid(case)
    for (a, ga), (b, gb) in zip(grid, grid[1:]):
        if ga > 0 >= gb:
            for _ in range(steps):
                mid = (a + b) / 2
                if _gap(case, mid) > 0:
                    a = mid
                else:
                    b = mid
            return (a + b) / 2
    return None


def check_breakeven_mfu(answer, what, case):
    """Check ``answer``: a matmul efficiency in :data:`MFU_RANGE` at which the two step times
    of ``case`` are within :data:`EVEN_WITHIN` of each other (any such efficiency passes), or
    None when the layout stays faster over the whole range. Returns 1.0."""
    case = _case(case)
    low, high = MFU_RANGE
    if answer is None:
        if breakeven_mfu(case) is not None:
            raise AssertionError(
                f"{what} is None, but the rival catches up inside {low:g}-{high:g}: at a lower "
                f"matmul efficiency the two steps take the same time (as planned: "
                f"{case_step(case):.4f} s vs {case_step(case, 'rival'):.4f} s)"
            )
        return 1.0
    x = check_number(answer, what)
    if not low <= x <= high:
        raise AssertionError(
            f"{what} is {x!r}, outside the range {low:g} to {high:g} the task asks about"
        )
    _, mine, theirs = verdict(case, mfu=x)
    if abs(theirs / mine - 1) > EVEN_WITHIN:
        faster = "the layout" if mine < theirs else "the rival"
        tail = (
            "; the rival never catches up in that range: the answer is None"
            if breakeven_mfu(case) is None
            else ""
        )
        raise AssertionError(
            f"{what} is {x:.4f}, but at that matmul efficiency the steps take {mine:.4f} s "
            f"(the layout) and {theirs:.4f} s (the rival): {faster} is faster by "
            f"{abs(theirs / mine - 1):.1%}, more than the {EVEN_WITHIN:.1%} accepted{tail}"
        )
    return 1.0


def _layouts(model, devices, global_batch):
    """The layouts the drawn cases of tasks 5 and 6 pick from: tp 1-8 (sequence parallel
    when tp > 1), pp 1-8 dividing the layers, the rest as dp with ZeRO 1 or 2 or as fsdp,
    power-of-two micro-batches."""
    layers = planner.model(model).layers
    out = []
    for tp in (1, 2, 4, 8):
        for pp in (p for p in (1, 2, 4, 8) if layers % p == 0):
            d = devices // (tp * pp)
            for shard in ({"dp": d, "zero_stage": 1}, {"dp": d, "zero_stage": 2}, {"fsdp": d}):
                m = 1
                while global_batch % (d * m) == 0 and m <= 32:
                    out.append(
                        {
                            **shard,
                            "tp": tp,
                            "pp": pp,
                            "sequence_parallel": tp > 1,
                            "micro_batches": m,
                        }
                    )
                    m *= 2
    return out


def _fits(case, which):
    case = _case(case)
    plan = planner.training_step(
        case["model"],
        planner.Layout(**case[which]),
        _superpod(case["units"]),
        seq_len=case["seq_len"],
        global_batch=case["global_batch"],
    )
    return plan.fits


def _clear(case, what_ifs=(None,) + ASSUMPTIONS):
    return all(
        abs(theirs / mine - 1) > MARGIN for mine, theirs in (verdict(case, w)[1:] for w in what_ifs)
    )


def rival_case(generator, kind="flip", attempts=400, crossing=None):
    """A drawn case of task 5 (``kind="flip"``) or 6 (``"breakeven"``): Llama 3 8B or 70B on
    one SuperPOD scalable unit (32 DGX H100 nodes), two layouts of :func:`_layouts` that fit
    the H100's 80 GB, the faster as planned as ``"layout"``, every verdict at least
    :data:`MARGIN` from a tie; for "breakeven", the two step times cross at most once in
    :data:`MFU_RANGE`, and they do in about two cases of three (always with ``crossing=True``,
    never with False)."""
    pick = lambda values: values[int(generator.integers(0, len(values)))]
    for _ in range(attempts):
        model = pick(["llama3-8b", "llama3-70b"])
        seq_len, global_batch = pick([4096, 8192]), pick([256, 512])
        layouts = _layouts(model, 256, global_batch)
        a, b = pick(layouts), pick(layouts)
        case = {
            "model": model,
            "units": 1,
            "seq_len": seq_len,
            "global_batch": global_batch,
            "layout": a,
            "rival": b,
        }
        if a == b or not (_fits(case, "layout") and _fits(case, "rival")):
            continue
        if case_step(case) > case_step(case, "rival"):
            case["layout"], case["rival"] = b, a
        if case_step(case, "rival") > 1.3 * case_step(case):
            continue  # too far apart to be an interesting choice
        if kind == "flip":
            if _clear(case):
                return case
            continue
        if not _clear(case, (None,)):
            continue
        signs = [gap > 0 for _, gap in _grid(case)]
        crossings = sum(x != y for x, y in zip(signs, signs[1:]))
        if crossing is None:
            crossing = bool(generator.integers(0, 3))
        if crossings == int(crossing):
            return case
    raise GradingError(f"no {kind} case found in {attempts} draws (a bug in the test)")
