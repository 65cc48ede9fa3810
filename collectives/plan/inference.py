"""The collectives of serving a transformer: prefill (the prompt, large messages, bandwidth-
bound) and decode (one token per sequence per step, small tensor-parallel all-reduces per
layer, latency-bound): :func:`inference`.

Per phase, per device (``b`` sequences per data-parallel replica, ``Ls`` blocks per stage):

* tensor parallelism: two all-reduces per block forward of the ``b x tokens x hidden``
  activation: in prefill the prompt's tokens (``/ cp``), in decode one token per sequence,
  every step. Prefill uses sequence parallelism's all-gather + reduce-scatter only when
  the layout asks for it (``sequence_parallel=True``; the layout's default, on with tp >
  1, is training's); decode always all-reduces (one token per sequence cannot be split
  over the sequence);
* context parallelism (prefill only): K and V all-gathered per block;
* expert parallelism: dispatch and combine all-to-alls per MoE block;
* pipeline parallelism: each micro-batch's activation sent to the next stage;
* FSDP (if any): each block's weights gathered before use.

Data-parallel replicas serve their own requests and exchange nothing.

Time per device: the larger of the matmuls at ``mfu`` times the chip's BF16 peak (2 x active
parameters per token + attention, 4 x context x hidden per token and layer, the context
averaged over the phase: half the prompt in prefill, the prompt plus half the new tokens in
decode) and reading the stage's weights (and in decode, the KV cache) from HBM once per
forward pass: prefill is usually compute-bound, decode memory-bound. Pipeline bubble: ``(pp
- 1) / micro_batches`` of it, as in training. Everything is exposed (no overlap). Weights in
2 bytes (1 for the "fp8" recipe: FP8 weights), KV cache and activations in 2. Latency: GPU
presets have no published NVLink or InfiniBand latency (0 by default; give
``hop_latency``/``network_latency`` to the preset), TPU presets 1 us per ICI hop, so
decode's small messages cost latency only where it is modelled. Left out: continuous
batching, speculative decoding, paged KV caches, sampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, cast

from ..errors import CollectivesError, LayoutError
from ..validation import integer, number
from .builder import RecordBuilder, chip_numbers, resolve_cluster
from .costing import Coster
from .layout import Layout
from .model import model as named_model
from .precision import precision
from .report import Memory, Plan

__all__ = ["inference", "InferencePlan"]


@dataclass(frozen=True, eq=False)
class InferencePlan:
    """``prefill`` and ``decode``: a :class:`~collectives.plan.report.Plan` each (decode
    covers all ``new_tokens`` steps); ``time_to_first_token`` and ``seconds_per_token``."""

    prefill: Plan
    decode: Plan
    new_tokens: int

    @property
    def time_to_first_token(self) -> float:
        return self.prefill.step_seconds

    @property
    def seconds_per_token(self) -> float:
        """Decode time per generated token (per step of the whole batch)."""
        return self.decode.step_seconds / self.new_tokens

    @property
    def phases(self) -> dict[str, Plan]:
        return {"prefill": self.prefill, "decode": self.decode}

    def table(self) -> str:
        return self.prefill.table() + "\n\n" + self.decode.table()

    def _repr_markdown_(self):
        return self.table()

    def __repr__(self):
        return (
            f"InferencePlan(prefill {self.prefill.step_seconds:.4g} s, decode "
            f"{self.seconds_per_token * 1e3:.4g} ms per token)"
        )


def inference(
    model,
    layout: Layout,
    cluster,
    *,
    batch: int,
    prompt_len: int,
    new_tokens: int,
    recipe="bf16",
    flops_per_device: Optional[float] = None,
    hbm_bytes: Optional[float] = None,
    hbm_bandwidth: Optional[float] = None,
    mfu: float = 1.0,
) -> InferencePlan:
    """Plan serving ``batch`` sequences (over all replicas) of ``prompt_len`` prompt tokens
    and ``new_tokens`` generated tokens of ``model`` under ``layout`` on ``cluster``;
    ``mfu`` (0 < mfu <= 1) the fraction of the peak the matmuls run at. Returns an
    :class:`InferencePlan` (module text: what is modelled)."""
    m = named_model(model)
    if not isinstance(layout, Layout):
        raise LayoutError(f"layout must be a cl.plan.Layout, got {type(layout).__name__}")
    topology = resolve_cluster(cluster)
    prec = precision(recipe)
    batch = integer(batch, "batch", minimum=1)
    prompt_len = integer(prompt_len, "prompt_len", minimum=1)
    new_tokens = integer(new_tokens, "new_tokens", minimum=1)
    mfu = number(mfu, "mfu", positive=True)
    if mfu > 1:
        raise CollectivesError(f"mfu is a fraction of the peak, 0 < mfu <= 1, got {mfu!r}")
    L = layout
    L.check(m, topology.n_ranks)
    if prompt_len % L.cp:
        raise LayoutError(f"cp = {L.cp} must divide prompt_len = {prompt_len}")
    if batch % (L.data_parallel * L.micro_batches):
        raise LayoutError(
            f"batch = {batch} sequences must split evenly over dp x fsdp x ep "
            f"= {L.data_parallel} replicas x {L.micro_batches} micro-batches"
        )
    flops, hbm, hbm_bw = chip_numbers(topology, flops_per_device, hbm_bytes, hbm_bandwidth)
    mesh = L.mesh()
    coster = Coster(topology, mesh)
    b = batch // (L.data_parallel * L.micro_batches)  # sequences per micro-batch
    micro = L.micro_batches
    per_stage = L.layers_per_stage(m)
    moe_per_stage = math.ceil(m.moe_layers / L.pp)
    weight_bytes = 1.0 if prec.name == "fp8" else 2.0
    a = prec.activation_bytes
    use_sp = L.sequence_parallel and not L.sequence_parallel_default
    sp = L.tp if use_sp else 1
    dense = m.dense_parameters() / (L.tp * L.pp)
    experts = m.expert_parameters() / (L.tp * L.pp * L.ep)
    weights = (dense + experts) * weight_bytes / L.fsdp
    kv_local = max(cast(int, m.kv_heads) // L.tp, 1) * m.head_dim  # an int once built
    context = prompt_len + new_tokens
    kv_cache = 2 * per_stage * kv_local * context * b * micro * a / L.cp

    def phase(name, tokens_per_seq, steps, attention_context, read_bytes):
        builder = RecordBuilder(coster, mesh)
        add = builder.add
        act = b * tokens_per_seq * m.hidden * a
        count = steps * micro
        if use_sp and name == "prefill":
            add(
                "tp activation all-gather",
                "all_gather",
                ("tp",),
                act,
                2 * per_stage * count,
                "forward",
            )
            add(
                "tp activation reduce-scatter",
                "reduce_scatter",
                ("tp",),
                act,
                2 * per_stage * count,
                "forward",
            )
        else:
            add(
                "tp activation all-reduce",
                "all_reduce",
                ("tp",),
                act,
                2 * per_stage * count,
                "forward",
            )
        if name == "prefill":
            add(
                "cp key/value all-gather",
                "all_gather",
                ("cp",),
                2 * b * prompt_len * kv_local * a,
                per_stage * count,
                "forward",
            )
        if m.is_moe:
            split = sp if name == "prefill" else 1
            routed = b * tokens_per_seq / split * m.top_k * m.hidden * a
            add(
                "ep token dispatch all-to-all",
                "all_to_all",
                ("ep",),
                routed,
                moe_per_stage * count,
                "forward",
            )
            add(
                "ep token combine all-to-all",
                "all_to_all",
                ("ep",),
                routed,
                moe_per_stage * count,
                "forward",
            )
        add(
            "pp activation send",
            "send_recv",
            ("pp",),
            act / (sp if name == "prefill" else 1),
            count,
            "forward",
        )
        if L.fsdp > 1:
            add(
                "fsdp weight all-gather",
                "all_gather",
                ("fsdp",),
                (dense + experts) * weight_bytes / per_stage,
                per_stage * count,
                "forward",
            )
        tokens = batch * tokens_per_seq * steps
        # QK^T and AV: 2 x 2 x context x (heads x head_dim) per token and layer
        flop_seconds = (
            (
                2 * m.active_parameters() * tokens
                + 4 * m.layers * m.hidden * attention_context * tokens
            )
            / topology.n_ranks
            / flops
            / mfu
        )
        read_seconds = 0.0 if hbm_bw is None else steps * micro * read_bytes / hbm_bw
        compute = max(flop_seconds, read_seconds)
        notes = (
            f"{'memory' if read_seconds > flop_seconds else 'compute'}-bound: matmuls "
            f"{flop_seconds:.4g} s, HBM reads {read_seconds:.4g} s",
        )
        memory = Memory(weights, 0.0, 0.0, 0.0, 0.0, kv_cache, hbm)
        return Plan(
            f"{name}: {m.name}, {L!r}, batch {batch}",
            tuple(builder.records),
            compute,
            compute,
            0.0,
            compute * (L.pp - 1) / micro,
            memory,
            tokens,
            topology.n_ranks,
            topology.name,
            notes,
            topology,
            mesh.placement,
        )

    prefill = phase("prefill", prompt_len // L.cp, 1, prompt_len / 2, weights)
    decode = phase(
        "decode",
        1,
        new_tokens,
        prompt_len + new_tokens / 2,
        weights + kv_cache / micro * (prompt_len + new_tokens / 2) / context,
    )
    return InferencePlan(prefill, decode, new_tokens)
