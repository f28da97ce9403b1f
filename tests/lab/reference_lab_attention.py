"""The lab's attention as it was before it became a configuration of the core (frozen).

``LabAttention`` was ``attnbook.lab.lab_attention.LabAttention`` until the lab model's attention
became :class:`attnbook.mha.MultiHeadAttention` (issue 39). Part VII's stored results were computed
with it, so it stays here, unchanged, as the reference that the core must match to the last bit
(``tests/lab/test_lab_attention_is_core.py``). Not part of the library.

Shape legend: N batch, L length, E embedding size, H query heads, K key/value heads, D head size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor, nn

from attnbook.masks import window_mask
from attnbook.mha import merge_heads, split_heads
from attnbook.positional import alibi_bias, rotate

#: The relative-position schemes :class:`LabAttention` applies inside attention.
RelativePositions = Literal["none", "rotary", "alibi"]


class AttentionLogits(nn.Identity):
    """Identity on the (N, H, L, L) scores before masking and softmax: a place to hook."""


def alibi_slopes(num_heads: int) -> Tensor:
    """ALiBi's slopes: a geometric sequence ``2**(-8 h / H)``, h = 1..H (Press et al. 2022).

    For H a power of two these are the paper's slopes (``attnbook.positional.alibi_slopes``);
    for other H the paper and BLOOM interleave two sequences, and the two differ.
    """
    if num_heads <= 0:
        raise ValueError(f"num_heads must be positive; got {num_heads}")
    return torch.tensor([2.0 ** (-8.0 * h / num_heads) for h in range(1, num_heads + 1)])


class LabAttention(nn.Module):
    """Multi-head self-attention with Part VII's switches (see the module docstring).

    Args:
        embed_dim: E.
        num_heads: H; must divide E.
        num_kv_heads: K, key/value heads; must divide H. Default H (ordinary multi-head).
        positions: ``"none"``, ``"rotary"`` or ``"alibi"``.
        windows: H windows (an int >= 0, or ``None`` for a global head); default all global.
        causal: forbid keys after the query.
        qk_norm: layer-normalise queries and keys per head.
        scale: factor on ``Q K^T``; default ``1/sqrt(D)``.
        scale_first: multiply the queries by ``scale`` before ``Q K^T`` (else the scores after).
        dropout: attention dropout probability (training mode only).
        rotary_base: ``base`` of :func:`rotate`.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        num_kv_heads: int | None = None,
        positions: RelativePositions = "none",
        windows: Sequence[int | None] | None = None,
        causal: bool = False,
        qk_norm: bool = False,
        scale: float | None = None,
        scale_first: bool = True,
        dropout: float = 0.0,
        rotary_base: float = 10000.0,
    ) -> None:
        super().__init__()
        kv = num_heads if num_kv_heads is None else num_kv_heads
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be a positive multiple of num_heads; got {embed_dim}, {num_heads}"
            )
        if kv <= 0 or num_heads % kv:
            raise ValueError(f"num_kv_heads must divide num_heads={num_heads}; got {kv}")
        if positions not in ("none", "rotary", "alibi"):
            raise ValueError(f'positions must be "none", "rotary" or "alibi"; got {positions!r}')
        windows = [None] * num_heads if windows is None else list(windows)
        if len(windows) != num_heads or any(w is not None and w < 0 for w in windows):
            raise ValueError(f"windows must give {num_heads} windows >= 0 or None; got {windows}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.embed_dim, self.num_heads, self.num_kv_heads = embed_dim, num_heads, kv
        self.head_dim = embed_dim // num_heads
        if positions == "rotary" and self.head_dim % 2:
            raise ValueError(f"rotary positions need an even head size; got {self.head_dim}")
        self.positions, self.windows, self.causal = positions, windows, causal
        self.scale = 1.0 / math.sqrt(self.head_dim) if scale is None else float(scale)
        self.scale_first, self.dropout, self.rotary_base = scale_first, dropout, rotary_base
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, kv * self.head_dim)
        self.v_proj = nn.Linear(embed_dim, kv * self.head_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else None
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else None
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)
        self.logits = AttentionLogits()

    def kv_cache_bytes(self, length: int, batch: int = 1) -> int:
        """Bytes of the keys and values a decoder keeps for ``length`` positions (float32)."""
        return 2 * batch * length * self.num_kv_heads * self.head_dim * 4

    def forward(
        self,
        x: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from every position of ``x`` to every allowed position of ``x``.

        Args:
            x: (N, L, E).
            key_padding_mask: (N, L) bool, ``True`` marks padding (never attended).
            need_weights: also return the weights, (N, H, L, L) per head.
            head_mask: (H,) or (N, H); multiplies each head's output (0 switches it off).

        Returns:
            ``(output (N, L, E), weights or None)``. A query with no allowed key gets weights 0.
        """
        if x.dim() != 3 or x.size(-1) != self.embed_dim:
            raise ValueError(f"x must be (N, L, {self.embed_dim}); got {tuple(x.shape)}")
        N, L, _ = x.shape
        q = split_heads(self.q_proj(x), self.num_heads)  # (N, H, L, D)
        k = split_heads(self.k_proj(x), self.num_kv_heads)  # (N, K, L, D)
        v = split_heads(self.v_proj(x), self.num_kv_heads)  # (N, K, L, D)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.positions == "rotary":
            q, k = rotate(q, self.rotary_base), rotate(k, self.rotary_base)
        group = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (N, H, L, D)
        if self.scale_first:
            scores = (q * self.scale) @ k.transpose(-2, -1)  # (N, H, L, L)
        else:
            scores = (q @ k.transpose(-2, -1)) * self.scale
        if self.positions == "alibi":
            scores = scores + alibi_bias(L, self.slopes.to(scores.dtype))  # (H, L, L)
        scores = self.logits(scores)
        allowed = window_mask(L, self.windows, self.causal, x.device)[None]  # (1, H, L, L)
        if key_padding_mask is not None:
            if key_padding_mask.shape != (N, L) or key_padding_mask.dtype != torch.bool:
                raise ValueError(
                    f"key_padding_mask must be bool (N, L) = ({N}, {L}); got "
                    f"{key_padding_mask.dtype} {tuple(key_padding_mask.shape)}"
                )
            allowed = allowed & ~key_padding_mask[:, None, None, :]  # (N, H, L, L)
        empty = ~allowed.any(dim=-1, keepdim=True)  # (N|1, H, L, 1)
        scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(empty, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)  # (N, H, L, L)
        if self.training and self.dropout > 0:
            weights = nn.functional.dropout(weights, self.dropout)
        heads = weights @ v  # (N, H, L, D)
        if head_mask is not None:
            heads = heads * _head_scale(head_mask, N, self.num_heads, heads.dtype)
        output = self.out_proj(merge_heads(heads))  # (N, L, E)
        return output, (weights if need_weights else None)


def _head_scale(head_mask: Tensor, N: int, H: int, dtype: torch.dtype) -> Tensor:
    if head_mask.shape not in ((H,), (N, H)):
        raise ValueError(f"head_mask must be ({H},) or ({N}, {H}); got {tuple(head_mask.shape)}")
    return head_mask.to(dtype).reshape(-1, H, 1, 1)  # (1|N, H, 1, 1)
