"""One configurable decoder-only transformer, shared by every study.

The RL-scaling study (character-level arithmetic policies), the optimizer study
(Llama-style: RMSNorm, rotary positions, SwiGLU) and the sparsity study (gated FFN
with ReLU or SiLU, whose hidden activations ``h`` are read and edited through a hook)
all build their models from :class:`TransformerConfig`.

Hand-written in plain torch rather than taken from a library (HF ``transformers``,
nanoGPT) because the project needs, in one small dependency-free module: every
architecture knob above, initialisation from a ``torch.Generator`` (no global
seeding), a preallocated KV cache for fast batched sampling, and an FFN hook that
can read *and replace* ``h`` (CETT truncation). Attention uses torch's fused
``scaled_dot_product_attention``.

Shapes: ``B`` batch, ``T`` tokens, ``V`` vocabulary, ``D`` ``d_model``,
``H`` heads, ``K`` head dim (``D / H``), ``F`` ``d_ff``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

#: ``hook(layer_index, h) -> replacement or None``, called with the FFN hidden ``h`` (B, T, F).
FFNHook = Callable[[int, Tensor], Tensor | None]

_ACTIVATIONS = {"relu": F.relu, "silu": F.silu, "gelu": F.gelu}


@dataclass(frozen=True)
class TransformerConfig:
    """Architecture of a decoder-only transformer.

    Attributes
    ----------
    vocab_size, max_seq_len
        Token vocabulary and the longest sequence (positions, KV cache).
    d_model, n_layer, n_head
        Width, depth and attention heads (``d_model % n_head == 0``).
    d_ff
        FFN hidden width; 0 means ``4 d_model`` for ``plain`` and the
        parameter-matched ``8/3 d_model`` rounded up to a multiple of 8 for ``gated``.
    norm
        ``"layernorm"`` or ``"rmsnorm"`` (pre-norm blocks and a final norm).
    pos
        ``"learned"`` absolute embeddings or ``"rotary"`` (RoPE on queries and keys).
    ffn
        ``"plain"``: ``W2 act(W1 x)``; ``"gated"``: ``W_down (act(W_gate x) * W_up x)``
        (SwiGLU with ``activation="silu"``).
    activation
        ``"relu"``, ``"silu"`` or ``"gelu"``.
    tie_embeddings
        Share the token embedding with the output projection.
    bias
        Biases in the linear layers (and LayerNorm).
    dropout
        Residual/attention dropout probability (0 by default); masks are drawn from
        the model's ``generator`` so that runs stay reproducible.
    rope_base
        RoPE frequency base.
    """

    vocab_size: int
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4
    d_ff: int = 0
    max_seq_len: int = 64
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    pos: Literal["learned", "rotary"] = "learned"
    ffn: Literal["plain", "gated"] = "plain"
    activation: Literal["relu", "silu", "gelu"] = "gelu"
    tie_embeddings: bool = False
    bias: bool = False
    dropout: float = 0.0
    rope_base: float = 10_000.0

    def __post_init__(self) -> None:
        checks = [
            (self.vocab_size >= 2, "vocab_size must be >= 2"),
            (
                self.d_model >= 1 and self.n_layer >= 1 and self.n_head >= 1,
                "d_model, n_layer, n_head must be >= 1",
            ),
            (self.d_model % self.n_head == 0, "d_model must be divisible by n_head"),
            (self.pos != "rotary" or self.head_dim % 2 == 0, "rotary needs an even head dim"),
            (self.d_ff >= 0 and self.max_seq_len >= 1, "d_ff >= 0 and max_seq_len >= 1"),
            (self.norm in ("layernorm", "rmsnorm"), f"unknown norm {self.norm!r}"),
            (self.pos in ("learned", "rotary"), f"unknown pos {self.pos!r}"),
            (self.ffn in ("plain", "gated"), f"unknown ffn {self.ffn!r}"),
            (self.activation in _ACTIVATIONS, f"unknown activation {self.activation!r}"),
            (0.0 <= self.dropout < 1.0, "dropout must be in [0, 1)"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"TransformerConfig: {msg}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def ffn_width(self) -> int:
        """The FFN hidden width actually used (resolves ``d_ff=0``)."""
        if self.d_ff:
            return self.d_ff
        if self.ffn == "plain":
            return 4 * self.d_model
        return 8 * math.ceil(8 * self.d_model / 3 / 8)

    def n_params(self, *, non_embedding: bool = True) -> int:
        """Parameter count from the formula (equals the sum of ``numel`` of the model).

        Per layer: attention ``4 D^2`` (+ ``4 D`` biases), FFN ``2 D F`` or ``3 D F``
        for gated (+ ``F + D`` biases), and two norms (``D`` each, ``2 D`` for
        LayerNorm with bias); plus the final norm. ``non_embedding=True`` (Kaplan's
        N) leaves out the token and position embeddings and the output projection.
        """
        d, f, b = self.d_model, self.ffn_width, int(self.bias)
        norm = d * (2 if (self.norm == "layernorm" and self.bias) else 1)
        attn = 4 * d * d + b * 4 * d
        mlp = (3 if self.ffn == "gated" else 2) * d * f + b * (
            (2 if self.ffn == "gated" else 1) * f + d
        )
        n = self.n_layer * (attn + mlp + 2 * norm) + norm
        if non_embedding:
            return n
        n += self.vocab_size * d + (self.max_seq_len * d if self.pos == "learned" else 0)
        if not self.tie_embeddings:
            n += self.vocab_size * d
        return n + b * self.vocab_size  # the output bias is never tied

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    """``x / rms(x) * weight`` (Zhang and Sennrich 2019)."""

    def __init__(self, d: int, *, eps: float = 1e-6, device=None) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d, device=device))

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def _norm(cfg: TransformerConfig, device) -> nn.Module:
    if cfg.norm == "rmsnorm":
        return RMSNorm(cfg.d_model, device=device)
    return nn.LayerNorm(cfg.d_model, bias=cfg.bias, device=device)


class KVCache:
    """Preallocated keys and values of every layer: ``(n_layer, B, H, T_max, K)`` each.

    ``length`` is the number of positions already written; :meth:`Transformer.forward`
    appends the new positions and advances it.
    """

    def __init__(
        self,
        cfg: TransformerConfig,
        batch: int,
        *,
        max_len: int | None = None,
        device=None,
        dtype=torch.float32,
    ) -> None:
        t = max_len or cfg.max_seq_len
        shape = (cfg.n_layer, batch, cfg.n_head, t, cfg.head_dim)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)
        self.length = 0

    @property
    def max_len(self) -> int:
        return self.k.shape[3]

    def repeat_interleave(self, repeats: int) -> KVCache:
        """A cache for ``B * repeats`` sequences, each row repeated (prefill once per prompt)."""
        out = object.__new__(KVCache)
        out.k = self.k.repeat_interleave(repeats, dim=1)
        out.v = self.v.repeat_interleave(repeats, dim=1)
        out.length = self.length
        return out


def _rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """RoPE on ``x`` (B, H, T, K) with ``cos``/``sin`` (T, K/2), half-split convention."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: TransformerConfig, device=None) -> None:
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=cfg.bias, device=device)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=cfg.bias, device=device)

    def forward(self, x: Tensor, *, layer: int, cache: KVCache | None, rope, dropout) -> Tensor:
        b, t, d = x.shape
        h, k = self.cfg.n_head, self.cfg.head_dim
        q, key, v = self.qkv(x).view(b, t, 3, h, k).permute(2, 0, 3, 1, 4)
        if rope is not None:
            q, key = _rotate(q, *rope), _rotate(key, *rope)
        start = 0 if cache is None else cache.length
        if cache is not None:
            cache.k[layer, :, :, start : start + t] = key
            cache.v[layer, :, :, start : start + t] = v
            key = cache.k[layer, :, :, : start + t]
            v = cache.v[layer, :, :, : start + t]
        if start == 0:
            mask, causal = None, t > 1
        elif t == 1:
            mask, causal = None, False  # one new token sees every cached position
        else:
            pos_q = torch.arange(start, start + t, device=x.device)[:, None]
            mask, causal = torch.arange(start + t, device=x.device)[None, :] <= pos_q, False
        p = self.cfg.dropout if self.training else 0.0
        if p and dropout is not None:  # attention dropout from our generator
            att = (q @ key.transpose(-1, -2)) / math.sqrt(k)
            if causal:
                mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            if mask is not None:
                att = att.masked_fill(~mask, float("-inf"))
            y = dropout(att.softmax(-1)) @ v
        else:
            y = F.scaled_dot_product_attention(q, key, v, attn_mask=mask, is_causal=causal)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class FeedForward(nn.Module):
    def __init__(self, cfg: TransformerConfig, device=None) -> None:
        super().__init__()
        f = cfg.ffn_width
        self.gated = cfg.ffn == "gated"
        self.act = _ACTIVATIONS[cfg.activation]
        self.up = nn.Linear(cfg.d_model, f, bias=cfg.bias, device=device)
        self.gate = nn.Linear(cfg.d_model, f, bias=cfg.bias, device=device) if self.gated else None
        self.down = nn.Linear(f, cfg.d_model, bias=cfg.bias, device=device)

    def hidden(self, x: Tensor) -> Tensor:
        """The FFN hidden activation ``h`` (B, T, F) that ``down`` projects."""
        if self.gated:
            return self.act(self.gate(x)) * self.up(x)
        return self.act(self.up(x))

    def forward(self, x: Tensor, *, layer: int, hook: FFNHook | None) -> Tensor:
        h = self.hidden(x)
        if hook is not None:
            replaced = hook(layer, h)
            if replaced is not None:
                h = replaced
        return self.down(h)


class Block(nn.Module):
    def __init__(self, cfg: TransformerConfig, device=None) -> None:
        super().__init__()
        self.norm1, self.norm2 = _norm(cfg, device), _norm(cfg, device)
        self.attn = Attention(cfg, device)
        self.ffn = FeedForward(cfg, device)


class Transformer(nn.Module):
    """Decoder-only transformer (pre-norm) built from a :class:`TransformerConfig`.

    Parameters
    ----------
    cfg
        The architecture.
    seed
        Seed of the ``torch.Generator`` that initialises the weights (normal, std
        0.02; residual projections scaled by ``1/sqrt(2 n_layer)`` as in GPT-2) and
        draws dropout masks. The global torch RNG is never touched.
    device
        Where the parameters live (``"cpu"``, ``"cuda"``).
    """

    def __init__(
        self, cfg: TransformerConfig, *, seed: int = 0, device: str | torch.device = "cpu"
    ):
        super().__init__()
        self.cfg = cfg
        # Built on the meta device (no global-RNG draws), then materialised and
        # initialised from our own generator.
        with torch.device("meta"):
            self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.pos_emb = (
                nn.Embedding(cfg.max_seq_len, cfg.d_model) if cfg.pos == "learned" else None
            )
            self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
            self.norm_f = _norm(cfg, None)
            self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.bias)
        self.to_empty(device=device)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.tok_emb.weight
        self.generator = torch.Generator(device=device).manual_seed(int(seed))
        self._init_weights()
        if cfg.pos == "rotary":
            inv = 1.0 / cfg.rope_base ** (
                torch.arange(0, cfg.head_dim, 2, device=device) / cfg.head_dim
            )
            ang = torch.arange(cfg.max_seq_len, device=device)[:, None] * inv[None, :]
            self.register_buffer("rope_cos", ang.cos(), persistent=False)
            self.register_buffer("rope_sin", ang.sin(), persistent=False)

    @torch.no_grad()
    def _init_weights(self) -> None:
        std, g = 0.02, self.generator
        resid = std / math.sqrt(2 * self.cfg.n_layer)
        for name, p in self.named_parameters():
            if name.endswith(".bias"):
                p.zero_()
            elif "norm" in name:
                p.fill_(1.0)
            else:
                scale = resid if name.endswith(("attn.proj.weight", "ffn.down.weight")) else std
                p.normal_(0.0, scale, generator=g)

    @property
    def device(self) -> torch.device:
        return self.tok_emb.weight.device

    def n_params(self, *, non_embedding: bool = True) -> int:
        """Parameters; ``non_embedding=True`` leaves out the token/position embeddings and
        the output projection (Kaplan's N, the N of the cost model)."""
        return self.cfg.n_params(non_embedding=non_embedding)

    def new_cache(self, batch: int, *, max_len: int | None = None) -> KVCache:
        """An empty KV cache for ``batch`` sequences of up to ``max_len`` tokens."""
        return KVCache(
            self.cfg, batch, max_len=max_len, device=self.device, dtype=self.tok_emb.weight.dtype
        )

    def _dropout(self, x: Tensor) -> Tensor:
        p = self.cfg.dropout
        if not (self.training and p):
            return x
        keep = torch.rand(x.shape, generator=self.generator, device=x.device) >= p
        return x * keep / (1.0 - p)

    def forward(
        self, idx: Tensor, *, cache: KVCache | None = None, ffn_hook: FFNHook | None = None
    ) -> Tensor:
        """Logits for every position.

        Parameters
        ----------
        idx
            Token ids (B, T).
        cache
            When given, ``idx`` continues the cached sequences at position
            ``cache.length``; the new keys/values are written and the length advances.
        ffn_hook
            ``hook(layer, h)`` sees each layer's FFN hidden ``h`` (B, T, F) and may
            return a replacement (e.g. with inactive neurons zeroed).

        Returns
        -------
        Tensor
            Logits (B, T, V).
        """
        b, t = idx.shape
        start = 0 if cache is None else cache.length
        if start + t > (self.cfg.max_seq_len if cache is None else cache.max_len):
            raise ValueError(
                f"sequence of {start + t} tokens exceeds max_seq_len {self.cfg.max_seq_len}"
            )
        x = self.tok_emb(idx)
        rope = None
        if self.pos_emb is not None:
            x = x + self.pos_emb(torch.arange(start, start + t, device=idx.device))
        else:
            rope = (self.rope_cos[start : start + t], self.rope_sin[start : start + t])
        drop = self._dropout if (self.training and self.cfg.dropout) else None
        x = x if drop is None else drop(x)
        for i, blk in enumerate(self.blocks):
            a = blk.attn(blk.norm1(x), layer=i, cache=cache, rope=rope, dropout=drop)
            x = x + (a if drop is None else drop(a))
            m = blk.ffn(blk.norm2(x), layer=i, hook=ffn_hook)
            x = x + (m if drop is None else drop(m))
        if cache is not None:
            cache.length = start + t
        return self.lm_head(self.norm_f(x))

    def ffn_hiddens(self, idx: Tensor) -> list[Tensor]:
        """Every layer's FFN hidden activation for ``idx`` (B, T): a list of (B, T, F)."""
        out: list[Tensor] = []
        self.forward(idx, ffn_hook=lambda layer, h: out.append(h.detach()))
        return out
