"""Transformer shapes: parameter counts and FLOPs per token, and named, sourced models.

A :class:`Transformer` is a decoder-only stack: ``layers`` blocks of attention (``heads``
query heads and ``kv_heads`` key/value heads of ``hidden / heads`` each, or a stated
``attention_params`` per layer for other attention designs) and an MLP (gated, as SwiGLU:
three ``hidden x ffn`` matrices; plain: two), or a mixture of experts (``experts`` MLPs of
width ``expert_ffn``, ``top_k`` of them per token, plus ``shared_experts`` always used and a
``hidden x experts`` router), with the first ``dense_layers`` blocks dense. Input embedding
and output projection are two ``vocab x hidden`` matrices (untied).

Modelled: the matrices (parameters), and matmul FLOPs: 2 per multiply-add, so a forward
pass costs ``2 x active parameters`` per token, training ``6 x`` (forward + backward, The
Scaling Book's and Kaplan et al.'s rule), plus attention's score and value matmuls,
``4 x seq_len x heads x head_dim`` per token and layer forward (half that with a causal
mask, which is what is counted). Left out: norms and biases (a few ``hidden`` per layer),
softmax and element-wise work, multi-token-prediction heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional, cast

from ..errors import CollectivesError
from ..validation import flag, integer

__all__ = ["Transformer", "model", "models", "MODEL_SOURCES", "LLAMA3", "MIXTRAL", "DEEPSEEK_V3"]


@dataclass(frozen=True)
class Transformer:
    """A decoder-only transformer's shape (see the module text for what is counted).

    ``layers``, ``hidden``, ``ffn`` (dense MLP width), ``heads``, ``kv_heads`` (default
    ``heads``), ``vocab``; MoE: ``experts`` (1 = dense), ``top_k``, ``expert_ffn`` (default
    ``ffn``), ``shared_experts``, ``dense_layers`` (leading blocks with a dense MLP);
    ``gated_mlp`` (three matrices, SwiGLU) or two; ``attention_params`` (per layer, to
    replace the multi-head count, e.g. for multi-head latent attention); ``name``.
    """

    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: Optional[int] = None
    vocab: int = 32000
    experts: int = 1
    top_k: int = 1
    expert_ffn: Optional[int] = None
    gated_mlp: bool = True
    shared_experts: int = 0
    dense_layers: int = 0
    attention_params: Optional[int] = None
    name: str = "transformer"

    def __post_init__(self):
        for key in ("layers", "hidden", "ffn", "heads", "vocab", "experts", "top_k"):
            object.__setattr__(self, key, integer(getattr(self, key), key, minimum=1))
        kv = self.heads if self.kv_heads is None else integer(self.kv_heads, "kv_heads", minimum=1)
        object.__setattr__(self, "kv_heads", kv)
        if self.heads % kv:
            raise CollectivesError(f"kv_heads ({kv}) must divide heads ({self.heads})")
        if self.hidden % self.heads:
            raise CollectivesError(f"heads ({self.heads}) must divide hidden ({self.hidden})")
        width = (
            self.ffn
            if self.expert_ffn is None
            else integer(self.expert_ffn, "expert_ffn", minimum=1)
        )
        object.__setattr__(self, "expert_ffn", width)
        if self.top_k > self.experts:
            raise CollectivesError(f"top_k ({self.top_k}) cannot exceed experts ({self.experts})")
        object.__setattr__(
            self, "shared_experts", integer(self.shared_experts, "shared_experts", minimum=0)
        )
        object.__setattr__(
            self,
            "dense_layers",
            integer(self.dense_layers, "dense_layers", minimum=0, maximum=self.layers),
        )
        object.__setattr__(self, "gated_mlp", flag(self.gated_mlp, "gated_mlp"))
        if self.attention_params is not None:
            object.__setattr__(
                self,
                "attention_params",
                integer(self.attention_params, "attention_params", minimum=1),
            )
        object.__setattr__(self, "name", str(self.name))

    # ---- shape pieces ------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        """Blocks whose MLP is a mixture of experts."""
        return self.layers - self.dense_layers if self.is_moe else 0

    def attention_parameters(self) -> int:
        """Per layer: Q and O (``hidden x hidden``), K and V (``hidden x kv_heads x
        head_dim``), or ``attention_params`` if given."""
        if self.attention_params is not None:
            return self.attention_params
        kv_heads = cast(int, self.kv_heads)  # resolved to an int in __post_init__
        return 2 * self.hidden * self.hidden + 2 * self.hidden * kv_heads * self.head_dim

    def mlp_parameters(self, width: Optional[int] = None) -> int:
        """One MLP (or one expert) of ``width`` (default ``ffn``)."""
        return (3 if self.gated_mlp else 2) * self.hidden * (width or self.ffn)

    def expert_parameters(self) -> int:
        """All routed experts of all MoE layers (what expert parallelism shards)."""
        return self.moe_layers * self.experts * self.mlp_parameters(self.expert_ffn)

    def embedding_parameters(self) -> int:
        """Input embedding and output projection (untied): ``2 x vocab x hidden``."""
        return 2 * self.vocab * self.hidden

    def _moe_layer(self, experts_used: int) -> int:
        return (
            self.attention_parameters()
            + (experts_used + self.shared_experts) * self.mlp_parameters(self.expert_ffn)
            + self.hidden * self.experts
        )

    def _dense_layer(self) -> int:
        return self.attention_parameters() + self.mlp_parameters()

    def parameters(self) -> int:
        """Every parameter (all experts)."""
        dense = self.layers - self.moe_layers
        return (
            dense * self._dense_layer()
            + self.moe_layers * self._moe_layer(self.experts)
            + self.embedding_parameters()
        )

    def active_parameters(self) -> int:
        """Parameters one token uses: ``top_k`` routed experts per MoE layer (equal to
        :meth:`parameters` for a dense model)."""
        dense = self.layers - self.moe_layers
        return (
            dense * self._dense_layer()
            + self.moe_layers * self._moe_layer(self.top_k)
            + self.embedding_parameters()
        )

    def dense_parameters(self) -> int:
        """Parameters outside the routed experts (replicated over expert parallelism)."""
        return self.parameters() - self.expert_parameters()

    def flops_per_token(self, seq_len: int = 0, *, training: bool = True) -> float:
        """Matmul FLOPs per token: ``6 x active parameters`` for training (``2 x`` forward
        only), plus causal attention, ``2 x seq_len x heads x head_dim`` per layer forward
        (x3 in training). ``seq_len=0`` leaves attention out."""
        seq_len = integer(seq_len, "seq_len", minimum=0)
        factor = 3 if flag(training, "training") else 1
        attention = 2 * seq_len * self.heads * self.head_dim * self.layers
        return factor * (2.0 * self.active_parameters() + attention)

    def __repr__(self):
        moe = (
            f", experts={self.experts}, top_k={self.top_k}, expert_ffn={self.expert_ffn}"
            if self.is_moe
            else ""
        )
        return (
            f"Transformer({self.name!r}: {self.layers} layers, hidden {self.hidden}, "
            f"ffn {self.ffn}, {self.heads}/{self.kv_heads} heads{moe}; "
            f"{self.parameters() / 1e9:.1f}B parameters)"
        )


LLAMA3 = (
    "Grattafiori et al., The Llama 3 Herd of Models, arXiv 2407.21783, table 3 "
    "(vocabulary 128,000 as the table gives it; the released tokenizer has 128,256)"
)
MIXTRAL = "Jiang et al., Mixtral of Experts, arXiv 2401.04088, table 1"
DEEPSEEK_V3 = (
    "DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv 2412.19437, section 4.2 "
    "(61 layers, hidden 7168, 128 heads of 128, MLA with KV compression 512 and "
    "query compression 1536 and decoupled RoPE heads of 64, first three layers "
    "dense, 1 shared + 256 routed experts of width 2048, 8 per token, 671B "
    "parameters, 37B active); dense FFN width 18432 and vocabulary 129,280 from "
    "the released config.json (huggingface.co/deepseek-ai/DeepSeek-V3)"
)


def _mla_parameters(hidden=7168, heads=128, q_rank=1536, kv_rank=512, nope=128, rope=64, v_dim=128):
    """DeepSeek-V3's multi-head latent attention, per layer: query down and up projections,
    the joint KV down projection (with the shared RoPE key), KV up projections, output."""
    return (
        hidden * q_rank
        + q_rank * heads * (nope + rope)
        + hidden * (kv_rank + rope)
        + kv_rank * heads * (nope + v_dim)
        + heads * v_dim * hidden
    )


_MODELS = MappingProxyType(
    {
        "llama3-8b": Transformer(32, 4096, 14336, 32, 8, 128000, name="llama3-8b"),
        "llama3-70b": Transformer(80, 8192, 28672, 64, 8, 128000, name="llama3-70b"),
        "llama3-405b": Transformer(126, 16384, 53248, 128, 8, 128000, name="llama3-405b"),
        "mixtral-8x7b": Transformer(
            32, 4096, 14336, 32, 8, 32000, experts=8, top_k=2, name="mixtral-8x7b"
        ),
        "deepseek-v3": Transformer(
            61,
            7168,
            18432,
            128,
            128,
            129280,
            experts=256,
            top_k=8,
            expert_ffn=2048,
            shared_experts=1,
            dense_layers=3,
            attention_params=_mla_parameters(),
            name="deepseek-v3",
        ),
    }
)

#: where each named shape comes from
MODEL_SOURCES = MappingProxyType(
    {
        "llama3-8b": LLAMA3,
        "llama3-70b": LLAMA3,
        "llama3-405b": LLAMA3,
        "mixtral-8x7b": MIXTRAL,
        "deepseek-v3": DEEPSEEK_V3,
    }
)


def models() -> list[str]:
    """Names accepted by :func:`model`."""
    return sorted(_MODELS)


def model(name: str) -> Transformer:
    """A named transformer shape (:data:`MODEL_SOURCES` gives each one's source)."""
    if isinstance(name, Transformer):
        return name
    key = str(name).lower()
    if key not in _MODELS:
        raise CollectivesError(
            f"unknown model {name!r}; choose from {', '.join(models())} "
            "or build a cl.plan.Transformer(...)"
        )
    return _MODELS[key]
