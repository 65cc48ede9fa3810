"""collectives/plan/step.py: the collectives of a training step, hand-derived bytes, counts
and times; the Scaling Book's data-parallel rule; the planner's options (recompute, ZeRO 2,
concurrency, multislice TPUs, oversubscription); bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.plan import Layout, LayoutError, Transformer

P = cl.plan
NVLINK = 450e9  # H100 NVLink 4, bytes/s per direction (DGX H100 guide)
NIC = 50e9  # ConnectX-7 400 Gb/s per GPU
PARAMS_8B = 8_027_897_856  # tests/package/plan/test_model.py derives it by hand


@pytest.fixture(scope="module")
def dgx():
    return cl.hardware.preset("dgx-h100")  # one node, 8 GPUs


@pytest.fixture(scope="module")
def two_nodes():
    return cl.hardware.preset("dgx-h100", nodes=2)


# ---- hand-derived collectives -----------------------------------------------------------


def test_dp_gradient_all_reduce_is_parameters_times_gradient_bytes(dgx):
    p = P.training_step("llama3-8b", Layout(dp=8), dgx, seq_len=1024, global_batch=8)
    (r,) = p.collectives
    S = 8_027_897_856 * 2  # bf16 gradients
    assert (r.purpose, r.collective, r.axis, r.group_size, r.count) == (
        "dp grad all-reduce",
        "all_reduce",
        "dp",
        8,
        1,
    )
    # reduced once per step, in the last micro-batch's backward (Megatron's no_sync)
    assert r.nbytes == S and r.level == "inside a node" and r.hidden_behind == "last backward"
    # ring all-reduce through the NVSwitch: 2 (n-1)/n S over each GPU's 450 GB/s link
    assert math.isclose(r.seconds, 2 * 7 / 8 * S / NVLINK)
    assert math.isclose(p.communication_seconds, r.seconds)


def test_tensor_parallel_counts_without_sequence_parallelism(dgx):
    # 4 sequences of 4096 on one TP group of 8, 2 micro-batches: 2 sequences each
    p = P.training_step(
        "llama3-8b",
        Layout(tp=8, micro_batches=2, sequence_parallel=False),
        dgx,
        seq_len=4096,
        global_batch=4,
    )
    tp = p.records("tp")
    assert [(r.collective, r.phase, r.count) for r in tp] == [
        ("all_reduce", "forward", 2 * 32 * 2),
        ("all_reduce", "backward", 2 * 32 * 2),
    ]
    assert all(r.nbytes == 2 * 4096 * 4096 * 2 for r in tp)  # b S h, bf16
    # 4 all-reduces per layer per micro-batch (2 forward + 2 backward, Megatron-LM)
    assert sum(r.count for r in tp) == 4 * 32 * 2
    assert all(r.hidden_behind is None for r in tp)  # exposed
    assert p.exposed_seconds == pytest.approx(p.communication_seconds)


def test_sequence_parallelism_trades_each_all_reduce_for_a_pair(dgx):
    kw = dict(seq_len=4096, global_batch=4)
    plain = P.training_step(
        "llama3-8b", Layout(tp=8, micro_batches=2, sequence_parallel=False), dgx, **kw
    )
    sp = P.training_step(
        "llama3-8b", Layout(tp=8, micro_batches=2, sequence_parallel=True), dgx, **kw
    )
    kinds = sorted((r.collective, r.phase, r.count) for r in sp.collectives)
    assert kinds == sorted(
        [("all_gather", ph, 128) for ph in ("forward", "backward")]
        + [("reduce_scatter", ph, 128) for ph in ("forward", "backward")]
    )
    # a ring all-gather + reduce-scatter moves what one ring all-reduce moves
    assert sp.communication_seconds == pytest.approx(plain.communication_seconds)


def test_fsdp_moves_three_times_the_weights_per_micro_batch(dgx):
    p = P.training_step(
        "llama3-8b", Layout(fsdp=8, micro_batches=3), dgx, seq_len=512, global_batch=24
    )
    per_rank = {(r.collective, r.phase): r.total_bytes for r in p.collectives}
    weights = 8_027_897_856 * 2  # bf16 weights and gradients
    assert per_rank == pytest.approx(
        {
            ("all_gather", "forward"): 3 * weights,
            ("all_gather", "backward"): 3 * weights,
            ("reduce_scatter", "backward"): 3 * weights,
        }
    )
    # ZeRO-3 over the fsdp axis: every state / 8
    assert p.memory.weights == pytest.approx(weights / 8)


def test_zero1_reduce_scatter_and_all_gather_replace_the_all_reduce(dgx):
    kw = dict(seq_len=512, global_batch=8)
    ar = P.training_step("llama3-8b", Layout(dp=8), dgx, **kw)
    z1 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=1), dgx, **kw)
    assert [r.collective for r in z1.collectives] == ["reduce_scatter", "all_gather"]
    assert z1.communication_seconds == pytest.approx(ar.communication_seconds)
    # optimizer states (master 4 + m 4 + v 4 bytes) sharded over 8 ranks
    assert z1.memory.optimizer + z1.memory.master == pytest.approx(8_027_897_856 * 12 / 8)


def test_fp8_halves_the_gradient_bytes(dgx):
    kw = dict(seq_len=512, global_batch=8)
    bf16 = P.training_step("llama3-8b", Layout(dp=8), dgx, recipe="bf16", **kw)
    fp8 = P.training_step("llama3-8b", Layout(dp=8), dgx, recipe="fp8", **kw)
    assert fp8.collectives[0].nbytes * 2 == bf16.collectives[0].nbytes
    assert fp8.collectives[0].seconds == pytest.approx(bf16.collectives[0].seconds / 2)
    # FP8-LM O2 model states: 2 + 1 + 1 + 2 = 6 bytes per parameter against 2 + 16
    assert (
        fp8.memory.weights + fp8.memory.master + fp8.memory.grads + fp8.memory.optimizer
        == pytest.approx(8_027_897_856 * 6)
    )
    fp32 = P.training_step("llama3-8b", Layout(dp=8), dgx, grad_reduce_bytes=4, **kw)
    assert fp32.collectives[0].nbytes == 2 * bf16.collectives[0].nbytes


def test_expert_and_pipeline_collectives(two_nodes):
    # Mixtral on 16 GPUs: ep 8 inside each node, 2 pipeline stages across the nodes
    p = P.training_step(
        "mixtral-8x7b",
        Layout(ep=8, pp=2, micro_batches=4),
        two_nodes,
        seq_len=1024,
        global_batch=32,
    )
    a2a = p.records("all-to-all")
    # 32 / (8 replicas x 4 micro-batches) = 1 sequence per micro-batch: 1024 tokens, each
    # sent to top-2 experts, 4096 bf16 values per token
    assert {r.nbytes for r in a2a} == {1024 * 2 * 4096 * 2}
    assert sum(r.count for r in a2a) == 4 * (32 // 2) * 4  # 4 per MoE layer on a stage
    assert {r.level for r in a2a} == {"inside a node"}
    pp = p.records("pp")
    assert [(r.collective, r.count, r.nbytes) for r in pp] == [
        ("send_recv", 4, 1024 * 4096 * 2),
        ("send_recv", 4, 1024 * 4096 * 2),
    ]
    assert {r.level for r in pp} == {"across nodes"}
    # pipeline bubble: (pp - 1) / micro-batches of the compute
    assert p.bubble_seconds == pytest.approx(p.compute_seconds / 4)
    # dense weights reduced over dp x ep (8), experts only over dp (1: no collective)
    assert [r.group_size for r in p.records("dp grad")] == [8]


def test_two_nodes_of_tensor_parallelism_use_the_two_level_ring(two_nodes):
    # the chapter's problem: S (2 x 7/8 / 450 GB/s + 1/8 / 50 GB/s) per all-reduce
    p = P.training_step(
        "llama3-70b",
        Layout(tp=16, sequence_parallel=False),
        two_nodes,
        seq_len=4096,
        global_batch=1,
    )
    r = p.records("tp")[0]
    S = 4096 * 8192 * 2
    assert r.algorithm == "two_level_ring_all_reduce" and r.level == "across nodes"
    assert math.isclose(r.seconds, S * (2 * 7 / 8 / NVLINK + 1 / 8 / NIC))
    cands = dict(
        P.Coster(two_nodes, Layout(tp=16).mesh()).cost("all_reduce", ("tp",), S).candidates
    )
    assert r.seconds == min(cands.values()) and cands["ring_all_reduce"] > r.seconds


def test_agrees_with_the_chapter_costing():
    pod = cl.hardware.preset("superpod-h100")  # 128 nodes
    p = P.training_step("llama3-70b", Layout(dp=128, tp=8), pod, seq_len=4096, global_batch=128)
    r = p.records("dp grad")[0]
    mesh = cl.Mesh({"dp": 128, "tp": 8})
    direct = cl.time(
        mesh.collective(cl.algorithms.ring_all_reduce(128), "dp"),
        pod,
        r.nbytes,
        placement=mesh.placement,
    ).seconds
    assert r.seconds == pytest.approx(direct) and r.bottleneck_level == "leaf"
    # collectives_across_nodes.md: the rail ring of 2 P / 8 bytes takes 700 ms
    assert round(r.seconds * 1e3) == 700 and r.level == "across nodes"


def test_scaling_book_rule_data_parallelism_across_h100_nodes():
    """DP across H100 nodes hides behind the backward pass above C / W_node tokens per GPU
    (The Scaling Book: 990e12 / 400e9 = 2,475)."""
    pod = cl.hardware.preset("superpod-h100")
    m = P.model("llama3-70b")
    seq = 4096
    for batch, hidden in ((512, False), (768, True)):  # 2,048 and 3,072 tokens per GPU
        p = P.training_step(m, Layout(dp=128, tp=8), pod, seq_len=seq, global_batch=batch)
        assert (p.exposed("dp") == 0) is hidden
        assert p.exposed() >= p.exposed("tp") > 0  # TP is never hidden
    p = P.training_step(m, Layout(dp=128, tp=8), pod, seq_len=seq, global_batch=512)
    dp = p.records("dp grad")[0].seconds
    # both sides linear in tokens: the crossover is where DP time = backward time
    per_gpu = 512 * seq / 1024 * dp / p.backward_seconds
    # the plan counts attention too; without it (6 P per token) the crossover is higher by
    # the ratio of FLOPs, and the ring's 127/128 and 989 vs 990 TFLOP/s explain the rest
    matmul_only = per_gpu * m.flops_per_token(seq) / m.flops_per_token()
    assert matmul_only * 128 / 127 * 990 / 989 == pytest.approx(990e12 / 400e9, rel=2e-3)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([1, 2]), st.integers(1, 3), st.sampled_from([256, 512]))
def test_doubling_dp_halves_compute_and_keeps_dp_bytes(nodes, batch_unit, seq):
    m = Transformer(layers=4, hidden=512, ffn=1536, heads=8, kv_heads=4, vocab=1000)
    batch = 16 * batch_unit
    small = P.training_step(
        m,
        Layout(dp=2 * nodes, tp=4),
        cl.hardware.preset("dgx-h100", nodes=nodes),
        seq_len=seq,
        global_batch=batch,
    )
    big = P.training_step(
        m,
        Layout(dp=4 * nodes, tp=4),
        cl.hardware.preset("dgx-h100", nodes=2 * nodes),
        seq_len=seq,
        global_batch=batch,
    )
    assert big.compute_seconds == pytest.approx(small.compute_seconds / 2)
    assert (
        big.records("dp grad")[0].nbytes
        == small.records("dp grad")[0].nbytes
        == m.parameters() / 4 * 2
    )
    # TP activations per rank halve with the per-replica batch
    assert big.records("tp")[0].nbytes * 2 == small.records("tp")[0].nbytes


def test_missing_wraparound_hurts_on_a_torus():
    kw = dict(seq_len=1024, global_batch=64)
    wrap = P.training_step(
        "llama3-8b", Layout(dp=64), cl.hardware.preset("tpu-v5p", shape=(4, 4, 4)), **kw
    )
    open_ = P.training_step(
        "llama3-8b",
        Layout(dp=64),
        cl.hardware.preset("tpu-v5p", shape=(4, 4, 4), wraparound=False),
        **kw,
    )
    a, b = wrap.collectives[0], open_.collectives[0]
    assert a.algorithm.startswith("torus_all_reduce") and a.level == "ici"
    assert b.seconds > 1.4 * a.seconds


def test_levels_inside_across_nodes_and_pods():
    big = cl.hardware.preset("superpod-h100", units=16)  # 4 groups of 1,024 GPUs
    p = P.training_step("llama3-8b", Layout(dp=512, tp=8), big, seq_len=512, global_batch=512)
    # sequence parallelism by default: each TP all-reduce is an all-gather + reduce-scatter
    assert {r.purpose: r.level for r in p.collectives} == {
        "tp activation all-gather": "inside a node",
        "tp activation reduce-scatter": "inside a node",
        "dp grad all-reduce": "across pods",
    }
    assert p.records("dp grad")[0].bottleneck_level in ("spine", "core", "leaf")


# ---- bad input ----------------------------------------------------------------------------


def test_device_count(dgx):
    with pytest.raises(LayoutError, match="= 4 devices, but the cluster has 8"):
        P.training_step("llama3-8b", Layout(dp=4), dgx, seq_len=64, global_batch=4)


@pytest.mark.parametrize(
    "model, layout, kw, message",
    [
        (Transformer(4, 768, 3072, 12), dict(tp=8), {}, "tp = 8 must divide the 12 attention"),
        ("llama3-8b", dict(ep=8), {}, "needs a mixture-of-experts model"),
        (
            Transformer(6, 512, 1024, 8, experts=6, top_k=2),
            dict(ep=4, dp=2),
            {},
            "ep = 4 must divide the 6 experts",
        ),
        (Transformer(6, 512, 1024, 8), dict(pp=4, dp=2), {}, "pp = 4 must divide the 6 layers"),
        ("llama3-8b", dict(cp=8), dict(seq_len=100), "cp = 8 must divide seq_len = 100"),
        ("llama3-8b", dict(dp=8), dict(global_batch=12), "global_batch = 12 sequences"),
    ],
)
def test_layout_does_not_fit(dgx, model, layout, kw, message):
    args = dict(seq_len=64, global_batch=8)
    args.update(kw)
    with pytest.raises(LayoutError, match=message):
        P.training_step(model, Layout(**layout), dgx, **args)


def test_uneven_stages_allowed_when_asked(dgx):
    m = Transformer(6, 512, 1024, 8)
    p = P.training_step(m, Layout(pp=4, dp=2, uneven_stages=True), dgx, seq_len=64, global_batch=2)
    assert p.records("pp")[0].count == 1
    assert Layout(pp=4, uneven_stages=True).layers_per_stage(m) == 2


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: P.model("gpt-5"), "unknown model 'gpt-5'"),
        (
            lambda d: P.training_step(
                "llama3-8b", Layout(dp=8), d, seq_len=64, global_batch=8, recipe="fp4"
            ),
            "recipe must be one of",
        ),
        (
            lambda d: P.training_step("llama3-8b", {"dp": 8}, d, seq_len=64, global_batch=8),
            "layout must be a cl.plan.Layout",
        ),
        (
            lambda d: P.training_step("llama3-8b", Layout(dp=8), 42, seq_len=64, global_batch=8),
            "cluster must be a Topology",
        ),
        (
            lambda d: P.training_step("llama3-8b", Layout(dp=8), d, seq_len=0, global_batch=8),
            "seq_len must be an integer >= 1",
        ),
        (lambda d: Layout(dp=0), "dp must be an integer >= 1"),
        (lambda d: Layout(zero_stage=4), "zero_stage must be an integer <= 3"),
        (lambda d: Layout(order=("dp", "tp")), "order must name each of"),
        (lambda d: Transformer(4, 100, 400, 8), "heads \\(8\\) must divide hidden \\(100\\)"),
        (lambda d: Transformer(4, 512, 1024, 8, kv_heads=3), "kv_heads \\(3\\) must divide"),
        (lambda d: Transformer(4, 512, 1024, 8, experts=4, top_k=5), "top_k \\(5\\) cannot"),
        (
            lambda d: P.training_step(
                "llama3-8b", Layout(dp=4), cl.topology.ring(4, 1e9), seq_len=64, global_batch=4
            ),
            "no hardware record",
        ),
    ],
)
def test_bad_input(dgx, call, message):
    with pytest.raises(cl.CollectivesError, match=message):
        call(dgx)


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1, 2]),
    st.booleans(),
    st.sampled_from([1, 2, 4]),
    st.sampled_from([0, 1, 2]),
)
def test_accounting_on_random_layouts(tp, pp, sp, micro, zero):
    """Counts and bytes follow the hand rules for any layout of 16 GPUs."""
    two = cl.hardware.preset("dgx-h100", nodes=2)
    m = Transformer(layers=8, hidden=512, ffn=2048, heads=8, kv_heads=8, vocab=1000)
    dp = 16 // (tp * pp)
    seq, batch = 256, dp * micro * 2  # 2 sequences per micro-batch
    args = dict(dp=dp, tp=tp, pp=pp, sequence_parallel=sp, micro_batches=micro, zero_stage=zero)
    sp = sp and tp > 1  # Megatron: off with tp = 1
    p = P.training_step(m, Layout(**args), two, seq_len=seq, global_batch=batch)
    layers = 8 // pp
    activation = 2 * seq * 512 * 2  # b S h, bf16
    tp_records = p.records("tp ")
    if tp == 1:
        assert tp_records == []
    else:
        # 4 all-reduces per layer per micro-batch, or 4 all-gathers + 4 reduce-scatters
        assert sum(r.count for r in tp_records) == (8 if sp else 4) * layers * micro
        assert {r.nbytes for r in tp_records} == {activation}
    pp_records = p.records("pp ")
    assert sum(r.count for r in pp_records) == (2 * micro if pp > 1 else 0)
    if pp > 1:
        assert {r.nbytes for r in pp_records} == {activation / (tp if sp else 1)}
    # the data-parallel axis reduces each device's share of the gradients (bf16)
    grads = [r for r in p.records("dp grad")]
    if dp > 1:
        assert all(r.nbytes == pytest.approx(m.parameters() / (tp * pp) * 2) for r in grads)
        assert sum(r.count for r in grads) == (micro if zero == 2 else 1)
    # ZeRO 2 with pipelines: planned, with DeepSpeed's refusal named in the notes
    assert any("DeepSpeed's pipeline engine refuses" in n for n in p.notes) == (
        zero == 2 and pp > 1
    )
    assert p.communication_seconds == pytest.approx(sum(r.total_seconds for r in p.collectives))
    assert 0 <= p.exposed_seconds <= p.communication_seconds + 1e-12
    assert p.compute_seconds == pytest.approx(m.flops_per_token(seq) * batch * seq / 16 / 9.89e14)


def test_mesh_order_puts_tensor_parallelism_across_nodes():
    # the chapter's "axes swapped": tp outermost spreads each TP group over 8 nodes
    pod = cl.hardware.preset("dgx-h100", nodes=8)
    kw = dict(seq_len=4096, global_batch=8)
    good = P.training_step("llama3-8b", Layout(dp=8, tp=8), pod, **kw)
    bad = P.training_step(
        "llama3-8b", Layout(dp=8, tp=8, order=("tp", "fsdp", "pp", "ep", "cp", "dp")), pod, **kw
    )
    assert good.records("tp")[0].level == "inside a node"
    assert bad.records("tp")[0].level == "across nodes"
    assert bad.records("tp")[0].seconds > 5 * good.records("tp")[0].seconds
    assert bad.records("dp")[0].level == "inside a node"


def test_tpu_levels_are_named_ici():
    p = P.training_step(
        "llama3-8b",
        Layout(dp=64),
        cl.hardware.preset("tpu-v5p", shape=(4, 4, 4)),
        seq_len=256,
        global_batch=64,
    )
    assert p.bottleneck == "ici" and p.collectives[0].level == "ici"


GARBAGE = [None, "x", -1, 1.5, float("nan"), [], True, object()]
#: (argument, junk) pairs that are legitimate values, not junk
VALID = {
    ("order", None),
    ("kv_heads", None),
    ("expert_ffn", None),
    ("attention_params", None),
    ("grad_reduce_bytes", None),
    ("flops_per_device", None),
    ("hbm_bytes", None),
    ("hbm_bandwidth", None),
    ("phase", None),
    ("sequence_parallel", True),
    ("sequence_parallel", None),
    ("uneven_stages", True),
    ("gated_mlp", True),
    ("ecmp", None),
    ("grad_reduce_bytes", 1.5),
    ("flops_per_device", 1.5),
    ("hbm_bytes", 1.5),
    ("hbm_bandwidth", 1.5),
    ("records", "x"),
    ("exposed", "x"),
}


@pytest.mark.parametrize(
    "junk", GARBAGE, ids=lambda junk: "object()" if type(junk) is object else repr(junk)
)
def test_garbage_gets_a_collectives_error(dgx, junk):
    """Every argument of the public calls, fed junk, raises a CollectivesError (never a
    TypeError or AttributeError from inside)."""
    calls = []
    for key in (
        "dp",
        "fsdp",
        "tp",
        "pp",
        "ep",
        "cp",
        "zero_stage",
        "sequence_parallel",
        "micro_batches",
        "order",
        "uneven_stages",
        "virtual_stages",
        "tp_overlap",
    ):
        calls.append((key, lambda key=key: Layout(**{key: junk})))
    for key in (
        "layers",
        "hidden",
        "ffn",
        "heads",
        "kv_heads",
        "vocab",
        "experts",
        "top_k",
        "expert_ffn",
        "gated_mlp",
        "shared_experts",
        "dense_layers",
        "attention_params",
    ):
        calls.append(
            (
                key,
                lambda key=key: Transformer(
                    **{**dict(layers=2, hidden=64, ffn=128, heads=4), key: junk}
                ),
            )
        )
    for key in (
        "seq_len",
        "global_batch",
        "recipe",
        "recompute",
        "grad_reduce_bytes",
        "flops_per_device",
        "hbm_bytes",
        "mfu",
        "compute",
        "ecmp",
        "qps",
    ):
        calls.append(
            (
                key,
                lambda key=key: P.training_step(
                    "llama3-8b",
                    Layout(dp=8),
                    dgx,
                    **{**dict(seq_len=64, global_batch=8), key: junk},
                ),
            )
        )
    for key in (
        "batch",
        "prompt_len",
        "new_tokens",
        "recipe",
        "flops_per_device",
        "hbm_bytes",
        "hbm_bandwidth",
    ):
        calls.append(
            (
                key,
                lambda key=key: P.inference(
                    "llama3-8b",
                    Layout(dp=8),
                    dgx,
                    **{**dict(batch=8, prompt_len=8, new_tokens=2), key: junk},
                ),
            )
        )
    plan = P.training_step("llama3-8b", Layout(dp=8), dgx, seq_len=64, global_batch=8)
    calls += [
        ("model", lambda: P.training_step(junk, Layout(dp=8), dgx, seq_len=64, global_batch=8)),
        (
            "cluster",
            lambda: P.training_step("llama3-8b", Layout(dp=8), junk, seq_len=64, global_batch=8),
        ),
        ("records", lambda: plan.records(junk)),
        ("exposed", lambda: plan.exposed(junk)),
        ("concurrent", lambda: plan.concurrent(junk)),
        ("phase", lambda: plan.concurrent(phase=junk)),
        ("name", lambda: P.model(junk)),
        ("seq_len", lambda: P.model("llama3-8b").flops_per_token(junk)),
    ]
    checked = 0
    for key, call in calls:
        if any(k == key and (v is junk or v == junk) and type(v) is type(junk) for k, v in VALID):
            call()  # a legitimate value: no error
            continue
        with pytest.raises(cl.CollectivesError):
            call()
        checked += 1
    assert checked >= 30


def test_meta_servers_keep_their_nvlink():
    # meta-roce-32k has its servers' NVLink (Llama 3 paper, 3.3.1: 8 H100s per server), so an
    # 8-way TP all-reduce inside a server is a ring on one NVSwitch: 2 (8-1)/8 S / 450 GB/s
    # (NVLink 4 per GPU, DGX H100 guide). On the fabric alone (gpus_per_server=None) it
    # crosses the rack switch at the NIC's 50 GB/s: 9x.
    meta = cl.hardware.preset("meta-roce-32k", zones=2, racks_per_zone=28, aggregators=4)
    fabric_only = cl.hardware.meta_cluster(
        zones=2, racks_per_zone=28, aggregators=4, gpus_per_server=None
    )
    layout = Layout(fsdp=112, tp=8, sequence_parallel=False)
    kw = dict(seq_len=4096, global_batch=896)
    S = 8 * 4096 * 8192 * 2  # b s h in bf16: 8 sequences per replica
    with_nvlink = cl.plan.training_step("llama3-70b", layout, meta, **kw)
    bare = cl.plan.training_step(
        "llama3-70b", layout, fabric_only, **kw, flops_per_device=9.89e14, hbm_bytes=80e9
    )
    tp, tp_bare = with_nvlink.records("tp")[0], bare.records("tp")[0]
    assert tp.level == tp_bare.level == "inside a node"
    assert tp.seconds == pytest.approx(2 * 7 / 8 * S / 450e9)
    assert tp.bottleneck_level == "nvlink"
    assert tp_bare.seconds == pytest.approx(2 * 7 / 8 * S / 50e9)
    assert tp_bare.bottleneck_level == "leaf"
    # the FSDP collectives across servers are costed on the fabric in both
    assert with_nvlink.records("fsdp")[0].seconds == bare.records("fsdp")[0].seconds
    assert any("NVSwitch" in n for n in with_nvlink.notes)
    assert any("no NVLink" in n for n in bare.notes)


def test_plans_sharing_costings_equal_plans_from_cold():
    # many layouts on one topology share costings; each must equal the same plan computed
    # with nothing cached, and a costing must not leak between meshes (the swapped order
    # above runs on the same topology object)
    pod = cl.hardware.preset("dgx-h100", nodes=4)
    kw = dict(seq_len=2048, global_batch=32)
    layouts = [
        Layout(dp=4, tp=8),
        Layout(fsdp=4, tp=8),
        Layout(dp=8, tp=4, zero_stage=1),
        Layout(dp=4, tp=8, order=("tp", "fsdp", "pp", "ep", "cp", "dp")),
        Layout(dp=2, pp=2, tp=8, micro_batches=4),
    ]
    shared = [P.training_step("llama3-8b", lay, pod, **kw) for lay in layouts]
    for lay, plan in zip(layouts, shared):
        P.costing.forget_costings()
        cold = P.training_step("llama3-8b", lay, pod, **kw)
        assert [
            (r.purpose, r.phase, r.algorithm, r.seconds, r.level) for r in plan.collectives
        ] == [(r.purpose, r.phase, r.algorithm, r.seconds, r.level) for r in cold.collectives]
        assert plan.step_seconds == cold.step_seconds


# ---- the planner's options ----------------------------------------------------------------


def test_full_recomputation(dgx):
    kw = dict(seq_len=2048, global_batch=2)
    plain = Layout(tp=8, sequence_parallel=False)
    base = P.training_step("llama3-8b", plain, dgx, **kw)
    full = P.training_step("llama3-8b", plain, dgx, recompute="full", **kw)
    # one more forward: compute x 4/3, and 2 more all-reduces per layer
    assert full.compute_seconds == pytest.approx(base.compute_seconds * 4 / 3)
    assert sum(r.count for r in full.records("tp")) == 6 * 32
    # keeps the block input only: 2 s b h bytes per layer (2048 x 2 x 4096 x 2 x 32 layers)
    assert full.memory.activations == 2 * 2048 * 2 * 4096 * 32
    assert base.memory.activations == 2048 * 2 * 4096 * (10 + 24 / 8) * 32
    # with sequence parallelism (the default) the kept input is split over the 8 ranks
    sp = P.training_step("llama3-8b", Layout(tp=8), dgx, recompute="full", **kw)
    assert sp.memory.activations == 2 * 2048 * 2 * 4096 * 32 / 8
    with pytest.raises(cl.CollectivesError, match="recompute must be"):
        P.training_step("llama3-8b", Layout(tp=8), dgx, recompute="some", **kw)


def test_zero2_reduces_every_micro_batch(dgx):
    kw = dict(seq_len=256, global_batch=32)
    z1 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=1, micro_batches=4), dgx, **kw)
    z2 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=2, micro_batches=4), dgx, **kw)
    assert z1.records("grad reduce-scatter")[0].count == 1
    assert z2.records("grad reduce-scatter")[0].count == 4
    # ZeRO 2 also shards the FP32 gradients: 4 bytes / 8 ranks
    assert z2.memory.grads == pytest.approx(PARAMS_8B * 4 / 8)
    assert z1.memory.grads == pytest.approx(PARAMS_8B * 4)


def test_concurrent_collectives_share_the_nics():
    # DP along the rails and PP across nodes both leave through each GPU's NIC
    pod = cl.hardware.preset("dgx-h100", nodes=4)
    p = P.training_step(
        "llama3-8b",
        Layout(dp=2, pp=2, tp=8, micro_batches=2, sequence_parallel=False),
        pod,
        seq_len=4096,
        global_batch=4,
    )
    together = p.concurrent("dp grad", "pp gradient")
    assert together.names == ("pp gradient send (backward)", "dp grad all-reduce (backward)")
    assert len(together.components) == 1  # they share links
    alone = [t.seconds for t in together.alone]
    assert together.seconds >= max(alone)
    apart = p.concurrent("tp activation", "dp grad")  # NVLink vs the rails
    assert len(apart.components) == 2 and apart.slowdown == pytest.approx(1.0)
    assert len(p.concurrent().names) == 3  # every backward kind
    with pytest.raises(cl.CollectivesError, match="no collective of this plan"):
        p.concurrent("ep token")


def test_multislice_gradient_all_reduce_crosses_dcn():
    pods = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4), slices=2)
    p = P.training_step("llama3-8b", Layout(dp=128), pods, seq_len=512, global_batch=128)
    (r,) = p.collectives
    assert r.level == "dcn" and r.algorithm == "multislice_all_reduce"
    # torus phases inside each slice, then a 2-rank ring over DCN on 1/64 of the buffer
    # at 6.25e9 B/s per chip: 2 x 1/2 x S / 64 / 6.25e9 is the DCN part
    S = PARAMS_8B * 2
    assert r.level_seconds["dcn"] == pytest.approx(S / 64 / 6.25e9)
    assert set(r.level_seconds) == {"ici", "dcn"}
    flat = dict(P.Coster(pods, Layout(dp=128).mesh()).cost("all_reduce", ("dp",), S).candidates)
    assert flat["multislice_all_reduce"] < flat["two_level_ring_all_reduce"]


def test_moe_on_a_tpu_slice_and_deepseek_on_a_superpod():
    p = P.training_step(
        "mixtral-8x7b",
        Layout(dp=8, ep=8),
        cl.hardware.preset("tpu-v5p", shape=(4, 4, 4)),
        seq_len=1024,
        global_batch=64,
    )
    assert {r.level for r in p.collectives} == {"ici"}
    assert [r.group_size for r in p.records("dp grad")] == [64, 8]  # dense, experts
    ds = P.training_step(
        "deepseek-v3",
        Layout(dp=2, ep=64, pp=8, micro_batches=4, uneven_stages=True),
        cl.hardware.preset("superpod-h100"),
        seq_len=4096,
        global_batch=512,
    )
    a2a = ds.records("all-to-all")
    # ep innermost-but-one: 64 ranks over 8 nodes of the rails; 8 of 58 MoE layers per stage
    assert {r.group_size for r in a2a} == {64} and {r.count for r in a2a} == {8 * 4}
    assert {r.level for r in a2a} == {"across nodes"}
    assert ds.records("dp grad")[0].nbytes == pytest.approx(
        P.model("deepseek-v3").dense_parameters() / 8 * 2
    )


def test_oversubscribed_aggregation_slows_cross_zone_data_parallelism():
    """Meta's RoCE cluster: zones joined 1:7 (Llama 3 paper). A DP group of 2 with one
    member per zone sends everything through the aggregation tier."""
    m = P.Transformer(layers=2, hidden=1024, ffn=4096, heads=8, vocab=1000)
    seconds = {}
    for ratio in (7, 1):
        meta = cl.hardware.preset("meta-roce-32k", zones=2, oversubscription=ratio)
        p = P.training_step(m, Layout(dp=2, fsdp=4032), meta, seq_len=256, global_batch=8064)
        (r,) = p.records("dp grad")
        assert r.level == "across pods" and r.group_size == 2
        assert [x.level for x in p.records("fsdp")] == ["across nodes"] * 3
        seconds[ratio] = (r.seconds, r.bottleneck_level)
    assert seconds[7][1] == "core"  # the CTSW-ATSW uplinks
    assert seconds[7][0] > 2 * seconds[1][0]


# ---- overlap windows, MFU, FP8 compute, interleaving, TP overlap, logits ---------------------

# compute of llama3-8b at 1,024 tokens per sequence, 32 sequences on 8 H100s at 989 TFLOP/s:
# 3 x (2 P + 2 x 1024 x 4096 x 32 attention) FLOPs per token (test_model.py derives P)
COMPUTE_8B = 3 * (2 * PARAMS_8B + 2 * 1024 * 4096 * 32) * 32 * 1024 / 8 / 9.89e14
AR_8B = 2 * 7 / 8 * PARAMS_8B * 2 / NVLINK  # the ring all-reduce of the BF16 gradients


def test_dp_all_reduce_hides_only_behind_the_last_micro_batch(dgx):
    kw = dict(seq_len=1024, global_batch=32)
    one = P.training_step("llama3-8b", Layout(dp=8), dgx, **kw)
    four = P.training_step("llama3-8b", Layout(dp=8, micro_batches=4), dgx, **kw)
    assert one.compute_seconds == pytest.approx(COMPUTE_8B)
    # one micro-batch: 62 ms of all-reduce behind 135 ms of backward, hidden
    assert one.exposed() == 0 and AR_8B < 2 / 3 * COMPUTE_8B
    # four: it waits for the last micro-batch, whose backward is 34 ms
    assert four.exposed() == pytest.approx(AR_8B - 2 / 3 * COMPUTE_8B / 4)
    assert four.window(four.records("dp grad")[0]) == pytest.approx(2 / 3 * COMPUTE_8B / 4)


def test_zero1_weight_gather_waits_for_the_first_micro_batch(dgx):
    p = P.training_step(
        "llama3-8b", Layout(dp=8, zero_stage=1, micro_batches=4), dgx, seq_len=1024, global_batch=32
    )
    gather = 7 / 8 * PARAMS_8B * 2 / NVLINK  # ring all-gather of the BF16 weights
    (ag,) = p.records("dp weight")
    assert ag.hidden_behind == "first forward" and ag.seconds == pytest.approx(gather)
    # the reduce-scatter (31 ms) fits the last backward slice (34 ms); the gather (31 ms) does
    # not fit the first forward slice (17 ms)
    assert p.exposed("dp grad") == 0
    assert p.exposed("dp weight") == pytest.approx(gather - COMPUTE_8B / 3 / 4)


def test_zero2_and_fsdp_reduce_every_micro_batch_behind_its_own_slice(dgx):
    kw = dict(seq_len=1024, global_batch=32)
    z2 = P.training_step("llama3-8b", Layout(dp=8, zero_stage=2, micro_batches=4), dgx, **kw)
    rs = z2.records("dp grad")[0]
    assert (rs.count, rs.hidden_behind) == (4, "backward")
    # each 31 ms reduce-scatter within its 34 ms slice: hidden
    assert z2.exposed("dp grad") == 0
    fsdp = P.training_step("llama3-8b", Layout(fsdp=8, micro_batches=4), dgx, **kw)
    totals = {
        ph: sum(r.total_seconds for r in fsdp.collectives if r.hidden_behind == ph)
        for ph in ("forward", "backward")
    }
    # per-micro-batch collectives keep the pass-wide rule
    assert fsdp.exposed() == pytest.approx(
        max(0, totals["forward"] - COMPUTE_8B / 3) + max(0, totals["backward"] - 2 * COMPUTE_8B / 3)
    )


def test_mfu_stretches_compute_and_the_windows(dgx):
    kw = dict(seq_len=1024, global_batch=32)
    peak = P.training_step("llama3-8b", Layout(dp=8, micro_batches=4), dgx, **kw)
    half = P.training_step("llama3-8b", Layout(dp=8, micro_batches=4), dgx, mfu=0.5, **kw)
    assert half.compute_seconds == pytest.approx(2 * COMPUTE_8B)
    # the slice doubles to 68 ms: the 62 ms all-reduce now hides
    assert peak.exposed() > 0 and half.exposed() == 0
    for bad in (0, 1.5, -0.2):
        with pytest.raises(cl.CollectivesError, match="mfu"):
            P.training_step("llama3-8b", Layout(dp=8), dgx, mfu=bad, seq_len=64, global_batch=8)


def test_fp8_compute_runs_the_linear_layers_at_the_fp8_peak(dgx):
    p = P.training_step(
        "llama3-8b", Layout(dp=8), dgx, seq_len=1024, global_batch=32, compute="fp8"
    )
    # 6 P per token at 1,979 TFLOP/s (H100 SXM dense FP8), attention at 989 TFLOP/s
    tokens = 32 * 1024 / 8
    want = 6 * PARAMS_8B * tokens / 1.979e15 + 6 * 1024 * 4096 * 32 * tokens / 9.89e14
    assert p.compute_seconds == pytest.approx(want)
    assert any("FP8 peak" in n for n in p.notes)
    with pytest.raises(cl.CollectivesError, match="no FP8 peak is recorded for tpu-v5p"):
        P.training_step(
            "llama3-8b",
            Layout(dp=64),
            cl.hardware.preset("tpu-v5p", shape=(4, 4, 4)),
            seq_len=64,
            global_batch=64,
            compute="fp8",
        )
    with pytest.raises(cl.CollectivesError, match="compute must be one of"):
        P.training_step("llama3-8b", Layout(dp=8), dgx, seq_len=64, global_batch=8, compute="fp4")


def test_interleaved_schedule_shrinks_the_bubble_and_sends_more(two_nodes):
    kw = dict(seq_len=1024, global_batch=16)
    plain = P.training_step("llama3-8b", Layout(dp=4, pp=2, tp=2, micro_batches=4), two_nodes, **kw)
    inter = P.training_step(
        "llama3-8b", Layout(dp=4, pp=2, tp=2, micro_batches=4, virtual_stages=2), two_nodes, **kw
    )
    # (pp - 1) / m = 1/4 against (pp - 1) / (v m) = 1/8 of the same compute
    assert plain.bubble_seconds == pytest.approx(plain.compute_seconds / 4)
    assert inter.bubble_seconds == pytest.approx(plain.compute_seconds / 8)
    # one send per micro-batch and model chunk each way: 4 against 8
    assert [r.count for r in plain.records("pp")] == [4, 4]
    assert [r.count for r in inter.records("pp")] == [8, 8]
    # 1 sequence per micro-batch, 16 blocks per stage, 34 s b h / tp bytes each (sequence
    # parallelism), min(pp, m) = 2 micro-batches in flight, or 2 (1 + 1 / (2 x 2)) = 2.5
    per_stage = 34 * 1024 * 1 * 4096 / 2 * 16
    assert plain.memory.activations == pytest.approx(2 * per_stage)
    assert inter.memory.activations == pytest.approx(2.5 * per_stage)


def test_tp_overlap_hides_tensor_parallelism_behind_its_pass(dgx):
    kw = dict(seq_len=4096, global_batch=4)
    exposed = P.training_step("llama3-8b", Layout(tp=8), dgx, **kw)
    overlap = P.training_step("llama3-8b", Layout(tp=8, tp_overlap=True), dgx, **kw)
    assert exposed.exposed() == pytest.approx(exposed.communication_seconds)
    assert {(r.hidden_behind, r.stream) for r in overlap.records("tp")} == {
        ("forward", "tp"),
        ("backward", "tp"),
    }
    fwd = sum(r.total_seconds for r in overlap.records("tp") if r.phase == "forward")
    bwd = overlap.communication_seconds - fwd
    assert overlap.exposed() == pytest.approx(
        max(0, fwd - overlap.forward_seconds) + max(0, bwd - overlap.backward_seconds)
    )
    assert overlap.exposed() < exposed.exposed()


def test_logits_sit_on_the_last_stage(dgx, two_nodes):
    # one stage: 4 b s V / tp bytes of FP32 logits (vocabulary-parallel) beside the blocks
    p = P.training_step("llama3-8b", Layout(tp=8), dgx, seq_len=2048, global_batch=2)
    assert p.memory.logits == 4 * 2 * 2048 * 128000 / 8
    assert p.memory.activations == 34 * 2048 * 2 * 4096 / 8 * 32
    assert p.memory.total == pytest.approx(
        p.memory.weights
        + p.memory.master
        + p.memory.grads
        + p.memory.optimizer
        + p.memory.activations
        + p.memory.logits
    )
    # two stages: the first holds 2 micro-batches of 16 blocks (570 MB), the last one
    # micro-batch (285 MB) and the logits (66 MB): the first is reported, without logits
    two = P.training_step(
        "llama3-8b", Layout(pp=2, tp=8, micro_batches=4), two_nodes, seq_len=1024, global_batch=4
    )
    block = 34 * 1024 * 4096 / 8
    assert two.memory.activations == 2 * 16 * block and two.memory.logits == 0
    # a vocabulary of a million: the last stage's 512 MB of logits make it the busier
    wide = P.Transformer(layers=4, hidden=512, ffn=1024, heads=8, vocab=1_000_000)
    big = P.training_step(
        wide, Layout(pp=2, tp=8, micro_batches=4), two_nodes, seq_len=1024, global_batch=4
    )
    assert big.memory.logits == 4 * 1024 * 1_000_000 / 8
    assert big.memory.activations == 2 * 34 * 1024 * 512 / 8
    assert any("last pipeline stage" in n for n in big.notes)
