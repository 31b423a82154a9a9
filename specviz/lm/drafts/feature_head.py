"""An EAGLE-style draft head: one layer that predicts the target's next feature, and the target's LM head for q.

EAGLE (Li et al. 2024, arXiv:2401.15077) drafts at the feature level. At position i the head
reads the target's last-layer feature f_i (before the final norm) and the embedding of the next
token x_{i+1}, and predicts f_{i+1}; the target's own final norm and LM head turn that prediction
into q, the draft's distribution for x_{i+2}. The head is one fully-connected layer over
[embedding, feature] and one Llama decoder layer (its own KV cache); the embedding, the final norm
and the LM head are the target's, frozen, not stored with the head.

Two choices made here, both measured on this machine (docs/learned-draft.md):
- the head reads and predicts features **after** the target's final norm (the raw pre-norm
  features have outlier dimensions in the thousands, which swamp a regression on them);
- its LM head is the target's restricted to the `vocab_ids` most frequent tokens of the training
  text (FR-Spec, arXiv:2502.14856): q is 0 outside them, which stays exact (their mass is all in
  the residual) and makes the head 9x cheaper than a full 49,152-row product.

>>> head = FeatureHead(hidden=8, heads=2, kv_heads=1, intermediate=16, vocab_ids=torch.arange(5))
>>> out, cache = head(torch.zeros(1, 3, 8), torch.zeros(1, 3, 8), torch.arange(3))
>>> tuple(out.shape), tuple(cache[0].shape)  # (B, n, H); keys (B, kv_heads, n, head_dim)
((1, 3, 8), (1, 1, 3, 4))
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["FeatureHead", "rms_norm"]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Llama's RMSNorm: x / sqrt(mean(x^2) + eps) * weight, computed in float32."""
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class FeatureHead(nn.Module):
    """fc([embedding of x_{i+1}, normed f_i]) -> one Llama decoder layer -> the predicted f_{i+1} (normed by the caller)."""

    def __init__(
        self,
        hidden: int,
        heads: int,
        kv_heads: int,
        intermediate: int,
        vocab_ids: torch.Tensor,
        rope_theta: float = 100000.0,
        eps: float = 1e-5,
    ):
        super().__init__()
        if hidden % heads or heads % kv_heads:
            raise ValueError(f"hidden {hidden} must split into {heads} heads, in groups of {kv_heads} key/value heads")
        self.hidden, self.heads, self.kv_heads, self.eps = hidden, heads, kv_heads, eps
        self.head_dim = hidden // heads
        hd = self.head_dim
        self.fc = nn.Linear(2 * hidden, hidden)
        self.norm1 = nn.Parameter(torch.ones(hidden))
        self.norm2 = nn.Parameter(torch.ones(hidden))
        self.q = nn.Linear(hidden, heads * hd, bias=False)
        self.k = nn.Linear(hidden, kv_heads * hd, bias=False)
        self.v = nn.Linear(hidden, kv_heads * hd, bias=False)
        self.o = nn.Linear(heads * hd, hidden, bias=False)
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)
        self.down = nn.Linear(intermediate, hidden, bias=False)
        self.register_buffer("vocab_ids", torch.as_tensor(vocab_ids, dtype=torch.long))  # (V',) its tokens
        self.rope_theta = float(rope_theta)
        inv = 1.0 / self.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd)
        self.register_buffer("inv_freq", inv, persistent=False)

    def config(self) -> dict:
        """The constructor's arguments but the vocabulary (saved beside the weights)."""
        return dict(
            hidden=self.hidden,
            heads=self.heads,
            kv_heads=self.kv_heads,
            intermediate=self.gate.out_features,
            rope_theta=self.rope_theta,
            eps=self.eps,
        )

    def copy_layer(self, layer: nn.Module) -> None:
        """Start from a Llama decoder layer of the target (its attention, MLP and norms), as the prototype did."""
        a, m = layer.self_attn, layer.mlp
        with torch.no_grad():
            for mine, theirs in (
                (self.q, a.q_proj),
                (self.k, a.k_proj),
                (self.v, a.v_proj),
                (self.o, a.o_proj),
                (self.gate, m.gate_proj),
                (self.up, m.up_proj),
                (self.down, m.down_proj),
            ):
                mine.weight.copy_(theirs.weight)
            self.norm1.copy_(layer.input_layernorm.weight)
            self.norm2.copy_(layer.post_attention_layernorm.weight)

    def forward(self, emb, feat, positions, cache=None, mask=None):
        """(B, n, H) embeddings of x_{i+1} and normed f_i at `positions` (n,) -> ((B, n, H) predicted f_{i+1}, cache).

        `cache`: (keys, values), each (B, kv_heads, T, head_dim), for the T entries before these;
        `mask`: (n, T + n) bool, True where an entry may attend (None: causal over the new entries,
        all of the cache). The returned cache holds the T + n entries.
        """
        B, n, _ = emb.shape
        hd, H = self.head_dim, self.hidden
        h = self.fc(torch.cat([emb, feat], dim=-1))  # (B, n, H)
        x = rms_norm(h, self.norm1, self.eps)
        q = self.q(x).view(B, n, self.heads, hd).transpose(1, 2)  # (B, heads, n, hd)
        k = self.k(x).view(B, n, self.kv_heads, hd).transpose(1, 2)  # (B, kv, n, hd)
        v = self.v(x).view(B, n, self.kv_heads, hd).transpose(1, 2)
        freqs = positions.to(self.inv_freq.device, torch.float32)[:, None] * self.inv_freq  # (n, hd/2)
        ang = torch.cat([freqs, freqs], dim=-1)
        cos, sin = ang.cos().to(q.dtype), ang.sin().to(q.dtype)  # (n, hd)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        T = k.shape[2] - n
        if mask is None:
            mask = torch.ones(n, T + n, dtype=torch.bool, device=q.device)
            mask[:, T:] = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        rep = self.heads // self.kv_heads
        kr, vr = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)  # (B, heads, T + n, hd)
        att = (q @ kr.transpose(-1, -2)) / math.sqrt(hd)  # (B, heads, n, T + n)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        out = (att @ vr).transpose(1, 2).reshape(B, n, H)
        h = h + self.o(out)
        y = rms_norm(h, self.norm2, self.eps)
        h = h + self.down(torch.nn.functional.silu(self.gate(y)) * self.up(y))
        return h, (k, v)
