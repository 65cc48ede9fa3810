"""collectives/plan/model.py: the transformers' parameter counts and FLOPs, by hand and
against their papers."""

import collectives as cl

P = cl.plan


def test_llama3_8b_parameters_by_hand():
    m = P.model("llama3-8b")
    # attention per layer: Q, O 4096^2 each; K, V 4096 x (8 heads x 128) each
    attention = 2 * 4096**2 + 2 * 4096 * 1024  # 41,943,040
    mlp = 3 * 4096 * 14336  # SwiGLU: 176,160,768
    embeddings = 2 * 128000 * 4096  # untied: 1,048,576,000
    assert m.parameters() == 32 * (attention + mlp) + embeddings == 8_027_897_856
    assert m.active_parameters() == m.parameters()
    assert m.flops_per_token() == 6 * 8_027_897_856
    # forward only, 1,000-token context: 2 P + 2 x 1000 x 32 heads x 128 x 32 layers
    assert m.flops_per_token(1000, training=False) == 2 * 8_027_897_856 + 2 * 1000 * 4096 * 32


def test_moe_parameters_by_hand():
    m = P.model("mixtral-8x7b")
    attention = 2 * 4096**2 + 2 * 4096 * 1024
    expert = 3 * 4096 * 14336
    router = 4096 * 8
    embeddings = 2 * 32000 * 4096
    assert m.parameters() == 32 * (attention + 8 * expert + router) + embeddings
    assert m.active_parameters() == 32 * (attention + 2 * expert + router) + embeddings
    # the Mixtral paper: 47B parameters, 13B active
    assert round(m.parameters() / 1e9) == 47 and round(m.active_parameters() / 1e9) == 13
    assert m.expert_parameters() == 32 * 8 * expert


def test_named_models_match_their_papers():
    # Llama 3 paper: 8B, 70B, 405B; DeepSeek-V3 paper: 671B total, 37B activated
    assert [
        round(P.model(n).parameters() / 1e9) for n in ("llama3-8b", "llama3-70b", "llama3-405b")
    ] == [8, 71, 406]
    ds = P.model("deepseek-v3")
    assert round(ds.parameters() / 1e9) == 671 and round(ds.active_parameters() / 1e9) == 38
    assert set(P.models()) == set(P.MODEL_SOURCES)
    assert all("arXiv" in s for s in P.MODEL_SOURCES.values())
