"""Every collective of one training step, costed on a cluster: :func:`training_step`.

What one step issues, per device (``b`` sequences of ``S / cp`` tokens per micro-batch,
``h`` hidden, ``Ls = layers / pp`` blocks per stage, ``m`` micro-batches, activations
in BF16):

* tensor parallelism (Megatron-LM, Shoeybi et al. 2019): per block and micro-batch two
  all-reduces of the ``b S/cp h`` activation forward (after attention, after the MLP) and
  two backward; with sequence parallelism (Korthikanti et al. 2022; on by default with
  tp > 1, :class:`~collectives.plan.Layout`) each becomes an all-gather and a
  reduce-scatter of the same buffer. Exposed, or with ``Layout(tp_overlap=True)`` hidden
  behind their pass's compute (stream "tp": an upper bound, the split GEMMs' own slowdown
  and the SMs the communication takes are left out);
* context parallelism (as Llama 3: keys and values all-gathered): per block and
  micro-batch an all-gather of K and V for the whole sequence forward, a reduce-scatter of
  their gradients backward;
* expert parallelism: per MoE block and micro-batch a dispatch and a combine all-to-all
  forward and the same two backward, each of ``tokens x top_k x h`` per rank;
* pipeline parallelism: per micro-batch and model chunk one send of the stage's output
  activation forward and one of its gradient backward, every stage boundary at once (``v``
  chunks per stage with the interleaved schedule: v times the sends, Narayanan et al.
  2021, section 2.2.2);
* data parallelism, per parameter set (dense weights over ``dp x fsdp x ep x cp``, routed
  experts over ``dp x fsdp x cp``): FSDP (and ZeRO 3) all-gathers each block's weights
  forward and again backward and reduce-scatters its gradients, per micro-batch; the
  replicated axes then all-reduce the (sharded) gradients once per step, in the last
  micro-batch's backward (ZeRO 1: reduce-scatter them there and all-gather the updated
  weights before the next step's first forward; ZeRO 2: the reduce-scatter every
  micro-batch, since only a shard of the gradients is kept). The overlap windows are
  :mod:`collectives.plan.report`'s.

Activation recomputation (``recompute="full"``, Korthikanti et al.): each block keeps only
its input (``2 s b h`` bytes, ``/ tp`` with sequence parallelism) and runs its forward
again in the backward pass: one more forward of matmuls (compute x 4/3) and of its
tensor-parallel collectives.

Compute: ``flops_per_token(S) x tokens`` (6 x active parameters + causal attention) spread
evenly over the devices, at ``mfu`` (default 1: the peak) times the chip's BF16 peak;
``compute="fp8"`` runs the linear layers' matmuls (the 6 x parameters) at the chip's dense
FP8 peak instead (:data:`collectives.plan.builder.FP8_PEAK`, a what-if: attention stays in
BF16, as in Transformer Engine's and DeepSeek-V3's recipes). Peak compute gives the
*shortest* overlap windows: what is hidden at ``mfu=1`` stays hidden at any lower MFU,
and what is exposed at peak may hide behind slower matmuls, while the step takes longer.
Forward 1/3, backward 2/3. Pipeline bubble: ``(pp - 1) / (v m)`` of the compute (1F1B,
v = 1, or interleaved 1F1B with v virtual stages, Narayanan et al. 2021). Narayanan et al.'s
``t_f + t_b`` is the time to execute a micro-batch, which also holds the collectives on the
critical path (TP, EP, CP, the pipeline sends): ``Plan.bubble_with_communication_seconds``
counts them, ``step_seconds`` does not.

Memory: model states from :mod:`collectives.fp8.memory` on the parameters one device holds
(dense / (tp pp) + experts / (tp pp ep)); activations per block from Korthikanti et al.
(arXiv 2205.05198, table 2, the rows with selective recomputation, whose dropped attention
scores are what FlashAttention does not store): ``s b h (10 + 24 / tp)`` bytes, ``34 s b h
/ tp`` with sequence parallelism. Those coefficients are for a GPT block (a GeLU MLP of
width 4h, multi-head attention, dropout). Megatron-LM's estimator
(megatron/training/theoretical_memory_usage.py) uses ``10 + 24 / tp`` without sequence
parallelism and writes the other as ``s b h (18 + 4 F / h) / tp`` for an MLP of width F
(34 at F = 4h, 32 for Llama 3 70B's F = 3.5h); it counts neither SwiGLU's second
projection nor grouped-query K and V (its TODO: query projections of another size than
hidden), and there is no dropout in a Llama block. The planner keeps the paper's 34: an
approximation, not a measurement.
The first pipeline stage holds ``min(pp, m)`` micro-batches under 1F1B, times ``1 + (pp -
1) / (pp v)`` with the interleaved schedule (Megatron's estimator). The output layer's
logits for the loss, ``b s V x 4`` bytes (FP32: Megatron's vocabulary-parallel
cross-entropy casts them with ``.float()``, megatron/core/tensor_parallel/cross_entropy.py)
``/ tp`` (the output layer split over the vocabulary; Megatron's estimator counts ``4 s b
(h + V) / tp`` for the output layer's input and the loss), sit on the last stage, which
holds one micro-batch in flight; the memory reported is the larger of the first and last
stage.

Left out: MoE blocks' larger activations (counted as a dense block's), the embedding and
output layers' own collectives (vocabulary-parallel all-reduces, the loss), tied weights,
optimizer compute, selective recomputation, load imbalance between experts or pipeline
stages (parameters are spread evenly over stages), PyTorch's pipeline schedules keeping
FSDP weights unsharded across micro-batches (torch/distributed/pipelining/stage.py), and
contention between collectives of different purposes (each kind is costed with all its
groups at once on the whole topology, sharing links).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, cast

from ..errors import CollectivesError, LayoutError
from ..fp8.memory import bytes_per_parameter
from ..validation import integer, number
from .builder import RecordBuilder, chip_numbers, fp8_peak, resolve_cluster
from .costing import META_QPS, Coster
from .layout import ZERO2_WITH_PP, Layout
from .model import model as named_model
from .precision import precision
from .report import Memory, Plan

# resolve_cluster moved to collectives.plan.builder; re-exported here, its old home
__all__ = [
    "training_step",
    "resolve_cluster",
    "COMPUTE",
    "activation_bytes_per_layer",
    "logits_bytes",
]

#: the matmul precisions of :func:`training_step`'s ``compute``
COMPUTE = ("bf16", "fp8")


def activation_bytes_per_layer(
    model, layout, seq_len: int, batch: int, recompute: str = "none"
) -> float:
    """Bytes one block keeps for its backward, on one device, for one micro-batch of
    ``batch`` sequences of ``seq_len`` tokens on that device (Korthikanti et al., module
    text): the block input ``2 s b h (/ tp with sequence parallelism)`` with full
    recomputation, ``34 s b h / tp`` with sequence parallelism, else ``s b h (10 + 24 /
    tp)``."""
    s, b, h, tp = seq_len, batch, model.hidden, layout.tp
    if recompute == "full":
        return 2 * s * b * h / (tp if layout.sequence_parallel else 1)
    if layout.sequence_parallel:
        return 34 * s * b * h / tp
    return s * b * h * (10 + 24 / tp)


def logits_bytes(model, layout, seq_len: int, batch: int) -> float:
    """The output layer's FP32 logits for the loss, ``4 b s V / tp`` (vocabulary-parallel),
    on the last pipeline stage (module text)."""
    return 4 * batch * seq_len * model.vocab / layout.tp


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
        sets.append(("expert", m.expert_parameters() / (L.tp * L.pp * L.ep), ("dp", "fsdp", "cp")))
    per_stage = L.layers_per_stage(m)
    for label, n_params, group in sets:
        rest = tuple(a for a in group if a not in shard)
        tag = "" if not m.is_moe else f" ({label})"
        if shard_size > 1:
            layer_params = n_params / per_stage
            add(
                f"fsdp weight all-gather{tag}",
                "all_gather",
                shard,
                layer_params * prec.weight_bytes,
                per_stage * micro,
                "forward",
                "forward",
            )
            add(
                f"fsdp weight all-gather{tag}",
                "all_gather",
                shard,
                layer_params * prec.weight_bytes,
                per_stage * micro,
                "backward",
                "backward",
            )
            add(
                f"fsdp grad reduce-scatter{tag}",
                "reduce_scatter",
                shard,
                layer_params * prec.grad_bytes,
                per_stage * micro,
                "backward",
                "backward",
            )
            n_params = n_params / shard_size
        if L.zero_stage in (1, 2):
            # ZeRO 2 keeps only a gradient shard, so every micro-batch's backward reduces;
            # ZeRO 1 reduces once, in the last micro-batch's backward
            per_micro = L.zero_stage == 2
            add(
                f"dp grad reduce-scatter{tag}",
                "reduce_scatter",
                rest,
                n_params * prec.grad_bytes,
                micro if per_micro else 1,
                "backward",
                "backward" if per_micro else "last backward",
            )
            add(
                f"dp weight all-gather{tag}",
                "all_gather",
                rest,
                n_params * prec.weight_bytes,
                1,
                "step",
                "first forward",
            )
        else:
            add(
                f"dp grad all-reduce{tag}",
                "all_reduce",
                rest,
                n_params * prec.grad_bytes,
                1,
                "backward",
                "last backward",
            )


def training_step(
    model,
    layout: Layout,
    cluster,
    *,
    seq_len: int,
    global_batch: int,
    recipe="bf16",
    recompute: str = "none",
    grad_reduce_bytes: Optional[float] = None,
    flops_per_device: Optional[float] = None,
    hbm_bytes: Optional[float] = None,
    mfu: float = 1.0,
    compute: str = "bf16",
    ecmp: Optional[str] = None,
    qps: int = META_QPS,
) -> Plan:
    """Plan one training step of ``model`` (a :class:`Transformer` or a name of
    :func:`collectives.plan.models`) under ``layout`` on ``cluster`` (a Topology or a
    preset name): ``global_batch`` sequences of ``seq_len`` tokens; ``recipe`` "bf16",
    "fp8" or another :data:`collectives.plan.precision.PRECISIONS` name;
    ``grad_reduce_bytes`` overrides the recipe's bytes per reduced gradient (4: FP32, as
    Megatron-LM's default); ``recompute``: "none" or "full" (activation recomputation);
    ``flops_per_device`` and ``hbm_bytes`` override the hardware record's BF16 peak and
    HBM; ``mfu`` (0 < mfu <= 1): the fraction of the peak the matmuls run at;
    ``compute``: "bf16", or "fp8" (the linear layers at the chip's FP8 peak, a what-if);
    ``ecmp`` (None, "plain", "e-ecmp", "adaptive") and ``qps``: how a GPU fabric spreads
    the flows (:mod:`collectives.plan.costing`). Returns a :class:`Plan` (the module text
    says what is modelled)."""
    m = named_model(model)
    if not isinstance(layout, Layout):
        raise LayoutError(f"layout must be a cl.plan.Layout, got {type(layout).__name__}")
    topology = resolve_cluster(cluster)
    prec = precision(recipe)
    if grad_reduce_bytes is not None:
        prec = replace(
            prec, grad_bytes=number(grad_reduce_bytes, "grad_reduce_bytes", positive=True)
        )
    if recompute not in ("none", "full"):
        raise CollectivesError(f"recompute must be 'none' or 'full', got {recompute!r}")
    if compute not in COMPUTE:
        raise CollectivesError(
            f"compute must be one of {', '.join(map(repr, COMPUTE))}, got {compute!r}"
        )
    mfu = number(mfu, "mfu", positive=True)
    if mfu > 1:
        raise CollectivesError(f"mfu is a fraction of the peak, 0 < mfu <= 1, got {mfu!r}")
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
            f"= {L.data_parallel} replicas x {L.micro_batches} micro-batches"
        )
    flops, hbm, _ = chip_numbers(topology, flops_per_device, hbm_bytes)
    linear_flops = fp8_peak(topology) if compute == "fp8" else flops
    mesh = L.mesh()
    builder = RecordBuilder(Coster(topology, mesh, ecmp=ecmp, qps=qps), mesh)
    add = builder.add

    b = global_batch // per_replica  # sequences per micro-batch per replica
    s = seq_len // L.cp  # tokens of each sequence on one rank
    micro = L.micro_batches
    per_stage = L.layers_per_stage(m)
    moe_per_stage = math.ceil(m.moe_layers / L.pp)
    a_bytes = prec.activation_bytes
    activation = b * s * m.hidden * a_bytes  # the block's output on one TP rank
    sp_split = L.tp if L.sequence_parallel else 1

    tp_phases = ("forward", "backward") + (("recompute",) if full else ())
    for phase in tp_phases:
        behind = None if not L.tp_overlap else ("forward" if phase == "forward" else "backward")
        stream = "tp" if L.tp_overlap else "data"
        if L.sequence_parallel:
            add(
                "tp activation all-gather",
                "all_gather",
                ("tp",),
                activation,
                2 * per_stage * micro,
                phase,
                behind,
                stream,
            )
            add(
                "tp activation reduce-scatter",
                "reduce_scatter",
                ("tp",),
                activation,
                2 * per_stage * micro,
                phase,
                behind,
                stream,
            )
        else:
            add(
                "tp activation all-reduce",
                "all_reduce",
                ("tp",),
                activation,
                2 * per_stage * micro,
                phase,
            )
    kv_local = max(cast(int, m.kv_heads) // L.tp, 1) * m.head_dim  # an int once built
    kv_bytes = 2 * b * seq_len * kv_local * a_bytes
    add("cp key/value all-gather", "all_gather", ("cp",), kv_bytes, per_stage * micro, "forward")
    add(
        "cp key/value grad reduce-scatter",
        "reduce_scatter",
        ("cp",),
        kv_bytes,
        per_stage * micro,
        "backward",
    )
    if m.is_moe:
        routed = b * s / sp_split * m.top_k * m.hidden * a_bytes
        for phase in ("forward", "backward"):
            add(
                "ep token dispatch all-to-all",
                "all_to_all",
                ("ep",),
                routed,
                moe_per_stage * micro,
                phase,
            )
            add(
                "ep token combine all-to-all",
                "all_to_all",
                ("ep",),
                routed,
                moe_per_stage * micro,
                phase,
            )
    sends = micro * L.virtual_stages  # one per micro-batch and model chunk
    add("pp activation send", "send_recv", ("pp",), activation / sp_split, sends, "forward")
    add("pp gradient send", "send_recv", ("pp",), activation / sp_split, sends, "backward")
    _data_parallel(add, m, L, prec, micro)

    tokens = global_batch * seq_len
    linear = m.flops_per_token() * tokens / topology.n_ranks  # 6 x parameters
    attention = m.flops_per_token(seq_len) * tokens / topology.n_ranks - linear
    compute_s = (linear / linear_flops + attention / flops) / mfu
    forward, backward = compute_s / 3, 2 * compute_s / 3
    if full:  # the forward runs again in backward
        backward += forward
        compute_s += forward
    states = _memory_states(m, L, prec, hbm)
    per_layer = activation_bytes_per_layer(m, L, s, b, recompute)
    if L.virtual_stages > 1:  # Megatron's estimator: m >= pp here
        in_flight = L.pp * (1 + (L.pp - 1) / (L.pp * L.virtual_stages))
    else:
        in_flight = min(L.pp, micro)
    first = per_layer * per_stage * in_flight
    logits = logits_bytes(m, L, s, b)
    last = per_layer * per_stage * 1 if L.pp > 1 else first
    if L.pp == 1 or first >= last + logits:  # the busier of the first and last stage
        activations, stage_logits = first, logits if L.pp == 1 else 0.0
    else:
        activations, stage_logits = last, logits
    memory = Memory(
        states["weights"],
        states["master"],
        states["grads"],
        states["m"] + states["v"],
        activations,
        0.0,
        hbm,
        stage_logits,
    )
    peak = (
        f"{flops:.3g} FLOP/s per device"
        if compute == "bf16"
        else f"linear layers at the FP8 peak {linear_flops:.3g}, attention at {flops:.3g} "
        "FLOP/s per device"
    )
    notes: tuple[str, ...] = (
        f"recipe {prec.name}: gradients reduced in {prec.grad_bytes:g} bytes, weights "
        f"gathered in {prec.weight_bytes:g}, activations {a_bytes:g}; compute at "
        f"{'' if mfu == 1 else f'MFU {mfu:g} of '}{peak}",
    )
    if topology.info.family == "layered":
        notes += (
            ("groups inside a server cross its NVSwitch (NVLink), the rest the fabric")
            if topology.info.gpus_per_node and topology.n_nics
            else "this fabric has no NVLink: GPUs of one server reach each other through "
            "their rack switch",
        )
    if builder.coster.ecmp is not None:
        notes += (
            {
                "plain": "fabric: hashed ECMP, one flow per connection",
                "e-ecmp": f"fabric: enhanced ECMP, {builder.coster.qps} queue pairs per "
                "connection hashed apart",
                "adaptive": "fabric: adaptive routing (every connection spread over its "
                "equal-cost paths)",
            }[builder.coster.ecmp],
        )
    if L.zero_stage == 2 and L.pp > 1:
        notes += (ZERO2_WITH_PP,)
    if full:
        notes += ("full activation recomputation: one more forward pass",)
    if L.pp > 1 and activations == last:
        notes += ("memory of the last pipeline stage (one micro-batch and the logits)",)
    return Plan(
        f"training step: {m.name}, {L!r}, {global_batch} x {seq_len} tokens",
        tuple(builder.records),
        compute_s,
        forward,
        backward,
        compute_s * L.bubble_fraction,
        memory,
        tokens,
        topology.n_ranks,
        topology.name,
        notes,
        topology,
        mesh.placement,
        micro,
    )
