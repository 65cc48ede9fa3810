"""Every collective of one training step, costed on a cluster: :func:`training_step`.

What one step issues, per device (``b`` sequences of ``S / cp`` tokens per micro-batch,
``h`` hidden, ``Ls = layers / pp`` blocks per stage, ``m`` micro-batches, activations
in BF16):

* tensor parallelism (Megatron-LM, Shoeybi et al. 2019): per block and micro-batch two
  all-reduces of the ``b S/cp h`` activation forward (after attention, after the MLP) and
  two backward; with sequence parallelism (Korthikanti et al. 2022) each becomes an
  all-gather and a reduce-scatter of the same buffer;
* context parallelism (as Llama 3: keys and values all-gathered): per block and
  micro-batch an all-gather of K and V for the whole sequence forward, a reduce-scatter of
  their gradients backward;
* expert parallelism: per MoE block and micro-batch a dispatch and a combine all-to-all
  forward and the same two backward, each of ``tokens x top_k x h`` per rank;
* pipeline parallelism: per micro-batch one send of the stage's output activation forward
  and one of its gradient backward, every stage boundary at once;
* data parallelism, per parameter set (dense weights over ``dp x fsdp x ep x cp``, routed
  experts over ``dp x fsdp x cp``): FSDP (and ZeRO 3) all-gathers each block's weights
  forward and again backward and reduce-scatters its gradients, per micro-batch; the
  replicated axes then all-reduce the (sharded) gradients once per step (ZeRO 1:
  reduce-scatter them once per step and all-gather the updated weights; ZeRO 2: the
  reduce-scatter every micro-batch, since only a shard of the gradients is kept).

Activation recomputation (``recompute="full"``, Korthikanti et al.): each block keeps only
its input (``2 s b h`` bytes, ``/ tp`` with sequence parallelism) and runs its forward
again in the backward pass: one more forward of matmuls (compute x 4/3) and of its
tensor-parallel collectives (hidden nowhere).

Compute: ``flops_per_token(S) x tokens`` (6 x active parameters + causal attention) spread
evenly over the devices at the chip's BF16 peak; forward 1/3, backward 2/3. Pipeline
bubble: ``(pp - 1) / m`` of the compute (1F1B without interleaving, Narayanan et al.
2021). Overlap: :mod:`collectives.plan.report`. Memory: model states from
:mod:`collectives.fp8.memory` on the parameters one device holds (dense / (tp pp) + experts
/ (tp pp ep)), activations from Korthikanti et al. (arXiv 2205.05198) per block,
``s b h (10 + 24 / tp)`` bytes (``34 s b h / tp`` with sequence parallelism), with
FlashAttention's dropped score matrix, times the ``min(pp, m)`` micro-batches the first
stage holds under 1F1B.

Left out: MoE blocks' larger activations (counted as a dense block's), the embedding and
output layers' own collectives (vocabulary-parallel
all-reduces, the loss), tied weights, optimizer compute, selective recomputation, load
imbalance between experts or pipeline stages (parameters are spread evenly over stages),
interleaved schedules, and contention between collectives of different purposes (each kind
is costed with all its groups at once on the whole topology, sharing links).
"""

from __future__ import annotations

import math
from typing import Optional

from ..errors import CollectivesError, LayoutError
from ..fp8.memory import bytes_per_parameter
from ..validation import integer, number
from .builder import RecordBuilder, chip_numbers, resolve_cluster
from .costing import Coster
from .layout import Layout
from .model import model as named_model
from .precision import precision
from .report import Memory, Plan

# resolve_cluster moved to collectives.plan.builder; re-exported here, its old home
__all__ = ["training_step", "resolve_cluster"]


def _memory_states(m, L, prec, hbm):
    dense = m.dense_parameters() / (L.tp * L.pp)
    experts = m.expert_parameters() / (L.tp * L.pp * L.ep)
    parts = {k: 0.0 for k in ("weights", "master", "grads", "m", "v")}
    for n_params, replicas in ((dense, L.dp * L.ep * L.cp), (experts, L.dp * L.cp)):
        if n_params == 0:
            continue
        per = bytes_per_parameter(prec.memory, zero_stage=L.zero_stage, dp=replicas)
        for k in parts:
            parts[k] += n_params * per[k] / L.fsdp
    return parts


def _data_parallel(add, m, L, prec, micro):
    """Gradient reduction and weight gathers of each parameter set (module text)."""
    shard = ("fsdp",) + (("dp",) if L.zero_stage == 3 else ())
    shard_size = math.prod(getattr(L, a) for a in shard)
    sets = [("dense", m.dense_parameters() / (L.tp * L.pp), ("dp", "fsdp", "ep", "cp"))]
    if m.is_moe:
        sets.append(("expert", m.expert_parameters() / (L.tp * L.pp * L.ep),
                     ("dp", "fsdp", "cp")))
    per_stage = L.layers_per_stage(m)
    for label, n_params, group in sets:
        rest = tuple(a for a in group if a not in shard)
        tag = "" if not m.is_moe else f" ({label})"
        if shard_size > 1:
            layer_params = n_params / per_stage
            add(f"fsdp weight all-gather{tag}", "all_gather", shard,
                layer_params * prec.weight_bytes, per_stage * micro, "forward", "forward")
            add(f"fsdp weight all-gather{tag}", "all_gather", shard,
                layer_params * prec.weight_bytes, per_stage * micro, "backward", "backward")
            add(f"fsdp grad reduce-scatter{tag}", "reduce_scatter", shard,
                layer_params * prec.grad_bytes, per_stage * micro, "backward", "backward")
            n_params = n_params / shard_size
        if L.zero_stage in (1, 2):
            # ZeRO 2 keeps only a gradient shard, so every micro-batch's backward reduces
            add(f"dp grad reduce-scatter{tag}", "reduce_scatter", rest,
                n_params * prec.grad_bytes, micro if L.zero_stage == 2 else 1, "backward",
                "backward")
            add(f"dp weight all-gather{tag}", "all_gather", rest,
                n_params * prec.weight_bytes, 1, "step", "forward")
        else:
            add(f"dp grad all-reduce{tag}", "all_reduce", rest, n_params * prec.grad_bytes,
                1, "backward", "backward")


def training_step(model, layout: Layout, cluster, *, seq_len: int, global_batch: int,
                  recipe="bf16", recompute: str = "none",
                  grad_reduce_bytes: Optional[float] = None,
                  flops_per_device: Optional[float] = None,
                  hbm_bytes: Optional[float] = None) -> Plan:
    """Plan one training step of ``model`` (a :class:`Transformer` or a name of
    :func:`collectives.plan.models`) under ``layout`` on ``cluster`` (a Topology or a
    preset name): ``global_batch`` sequences of ``seq_len`` tokens; ``recipe`` "bf16",
    "fp8" or another :data:`collectives.plan.precision.PRECISIONS` name;
    ``grad_reduce_bytes`` overrides the recipe's bytes per reduced gradient (4: FP32, as
    Megatron-LM's default); ``recompute``: "none" or "full" (activation recomputation);
    ``flops_per_device`` and ``hbm_bytes`` override the hardware
    record's. Returns a :class:`Plan` (the module text says what is modelled)."""
    m = named_model(model)
    if not isinstance(layout, Layout):
        raise LayoutError(f"layout must be a cl.plan.Layout, got {type(layout).__name__}")
    topology = resolve_cluster(cluster)
    prec = precision(recipe)
    if grad_reduce_bytes is not None:
        from dataclasses import replace

        prec = replace(prec, grad_bytes=number(grad_reduce_bytes, "grad_reduce_bytes",
                                               positive=True))
    if recompute not in ("none", "full"):
        raise CollectivesError(f"recompute must be 'none' or 'full', got {recompute!r}")
    full = recompute == "full"
    seq_len = integer(seq_len, "seq_len", minimum=1)
    global_batch = integer(global_batch, "global_batch", minimum=1)
    L = layout
    L.check(m, topology.n_ranks)
    if seq_len % L.cp:
        raise LayoutError(f"cp = {L.cp} must divide seq_len = {seq_len}")
    per_replica = L.data_parallel * L.micro_batches
    if global_batch % per_replica:
        raise LayoutError(
            f"global_batch = {global_batch} sequences must split evenly over dp x fsdp x ep "
            f"= {L.data_parallel} replicas x {L.micro_batches} micro-batches")
    flops, hbm, _ = chip_numbers(topology, flops_per_device, hbm_bytes)
    mesh = L.mesh()
    builder = RecordBuilder(Coster(topology, mesh), mesh)
    add = builder.add

    b = global_batch // per_replica                 # sequences per micro-batch per replica
    s = seq_len // L.cp                             # tokens of each sequence on one rank
    micro = L.micro_batches
    per_stage = L.layers_per_stage(m)
    moe_per_stage = math.ceil(m.moe_layers / L.pp)
    a_bytes = prec.activation_bytes
    activation = b * s * m.hidden * a_bytes         # the block's output on one TP rank
    sp_split = L.tp if L.sequence_parallel else 1

    tp_phases = ("forward", "backward") + (("recompute",) if full else ())
    for phase in tp_phases:
        if L.sequence_parallel:
            add("tp activation all-gather", "all_gather", ("tp",), activation,
                2 * per_stage * micro, phase)
            add("tp activation reduce-scatter", "reduce_scatter", ("tp",), activation,
                2 * per_stage * micro, phase)
        else:
            add("tp activation all-reduce", "all_reduce", ("tp",), activation,
                2 * per_stage * micro, phase)
    kv_local = max(m.kv_heads // L.tp, 1) * m.head_dim
    kv_bytes = 2 * b * seq_len * kv_local * a_bytes
    add("cp key/value all-gather", "all_gather", ("cp",), kv_bytes, per_stage * micro,
        "forward")
    add("cp key/value grad reduce-scatter", "reduce_scatter", ("cp",), kv_bytes,
        per_stage * micro, "backward")
    if m.is_moe:
        routed = b * s / sp_split * m.top_k * m.hidden * a_bytes
        for phase in ("forward", "backward"):
            add("ep token dispatch all-to-all", "all_to_all", ("ep",), routed,
                moe_per_stage * micro, phase)
            add("ep token combine all-to-all", "all_to_all", ("ep",), routed,
                moe_per_stage * micro, phase)
    add("pp activation send", "send_recv", ("pp",), activation / sp_split, micro, "forward")
    add("pp gradient send", "send_recv", ("pp",), activation / sp_split, micro, "backward")
    _data_parallel(add, m, L, prec, micro)

    tokens = global_batch * seq_len
    compute = m.flops_per_token(seq_len) * tokens / topology.n_ranks / flops
    forward, backward = compute / 3, 2 * compute / 3
    if full:                                        # the forward runs again in backward
        backward += forward
        compute += forward
    states = _memory_states(m, L, prec, hbm)
    if full:
        per_layer = 2 * s * b * m.hidden / (L.tp if L.sequence_parallel else 1)
    elif L.sequence_parallel:
        per_layer = 34 * s * b * m.hidden / L.tp
    else:
        per_layer = s * b * m.hidden * (10 + 24 / L.tp)
    activations = per_layer * per_stage * min(L.pp, micro)
    memory = Memory(states["weights"], states["master"], states["grads"],
                    states["m"] + states["v"], activations, 0.0, hbm)
    notes = (f"recipe {prec.name}: gradients reduced in {prec.grad_bytes:g} bytes, weights "
             f"gathered in {prec.weight_bytes:g}, activations {a_bytes:g}; compute at "
             f"{flops:.3g} FLOP/s per device",)
    if topology.info.family == "layered":
        notes += (("groups inside a server cross its NVSwitch (NVLink), the rest the "
                   "fabric") if topology.info.gpus_per_node and topology.n_nics else
                  "this fabric has no NVLink: GPUs of one server reach each other through "
                  "their rack switch",)
    if full:
        notes += ("full activation recomputation: one more forward pass",)
    return Plan(f"training step: {m.name}, {L!r}, {global_batch} x {seq_len} tokens",
                tuple(builder.records), compute, forward, backward,
                compute * (L.pp - 1) / micro, memory, tokens, topology.n_ranks,
                topology.name, notes, topology, mesh.placement)
