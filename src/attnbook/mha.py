"""Multi-head attention: project, split into heads, attend, merge, project back.

A readable drop-in for :class:`torch.nn.MultiheadAttention` with ``batch_first=True``: the same
arguments, mask conventions and return values, the same parameter count, and weights that move
both ways with :func:`attnbook.interop.from_torch` and :func:`attnbook.interop.to_torch`.

Keyword-only options, all off by default, add what modern models change (each is tested against
an independent reference in ``tests/test_mha_modern*.py``):

* ``num_kv_heads``: K key/value heads shared by groups of H / K query heads (grouped-query
  attention; K = 1 is multi-query attention), which shrinks the key/value cache by H / K;
* ``positions``: ``"rotary"`` turns each head's queries and keys by their position
  (:func:`attnbook.positional.rotate`), ``"alibi"`` adds ``-slope_h · |i - j|`` to head h's
  scores (:func:`attnbook.positional.alibi_bias`);
* ``window``: a sliding window per head (query i sees keys with ``|i - j| <= w``; with
  ``is_causal`` only ``i - w .. i``), local and global heads in one layer;
* ``qk_norm``: normalise each head's queries and keys (LayerNorm or RMSNorm over D) before
  the product, which bounds the scores;
* ``scale`` and ``scale_first``: the factor on ``Q K^T`` and whether it multiplies the queries
  before the product (as PyTorch's kernels do) or the scores after it;
* ``init``: ``"xavier"`` (PyTorch's attention initialisation) or ``"linear"`` (each projection
  keeps :class:`torch.nn.Linear`'s own), as the lab model of Part VII draws its weights.

On the path that forms the weights, the scaled scores pass through ``logits``, an
:class:`AttentionLogits` identity module, before the masks: a place for forward hooks
(:class:`attnbook.train_monitors.LogitMonitor` reads the scores there,
:func:`attnbook.lab.decoding.sliding_window` forbids keys there).

Shape legend: N batch, L target (query) length, S source (key) length, E embedding size
(``embed_dim``), H heads (``num_heads``), K key/value heads (``num_kv_heads``), D head size
(``E // H``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Literal

import torch
from torch import Tensor, nn

from attnbook.attention import fused_attention, scaled_dot_product_attention
from attnbook.masks import merge_masks, mha_to_sdpa_mask, per_head_windows, window_mask
from attnbook.positional import alibi_bias, alibi_slopes, rotate

__all__ = ["AttentionLogits", "MultiHeadAttention", "split_heads", "merge_heads"]


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """(N, L, E) -> (N, H, L, D): head ``h`` gets features ``h*D .. (h+1)*D - 1``, D = E // H."""
    if x.size(-1) % num_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide the feature size; got x {tuple(x.shape)}"
        )
    return x.unflatten(-1, (num_heads, x.size(-1) // num_heads)).transpose(-3, -2)  # (N, H, L, D)


def merge_heads(x: Tensor) -> Tensor:
    """(N, H, L, D) -> (N, L, H*D): the inverse of :func:`split_heads`."""
    return x.transpose(-3, -2).flatten(-2)  # (N, L, E)


class AttentionLogits(nn.Identity):
    """Identity on the (N, H, L, S) scaled scores, before the masks and the softmax: a hook point.

    The masks come after it, so the scores of keys a mask hides are still seen; the ALiBi bias
    travels with the masks, so it is not yet added (Part VII monitors no ALiBi model).
    """


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four plain linear layers; batch first.

    Args:
        embed_dim: E, the feature size of the query and of the output.
        num_heads: H; must divide ``embed_dim``. Each head works in D = E // H dimensions.
        dropout: dropout probability on the attention weights, applied in training mode only.
        bias: whether the four projections have a bias.
        kdim: feature size of ``key``; defaults to ``embed_dim``.
        vdim: feature size of ``value``; defaults to ``embed_dim``.
        device, dtype: where and how to create the parameters.
        num_kv_heads: K key/value heads; must divide H. Query head h uses key/value head
            ``h // (H / K)``. Default H (every head its own keys and values).
        positions: ``"none"``, ``"rotary"`` (D must be even) or ``"alibi"``; query i and key j
            sit at positions i and j (also when L != S).
        rotary_base: ``base`` of the rotation's frequencies (``attnbook.positional.rotate``).
        rotary_interleaved: ``True`` pairs features ``(2i, 2i+1)``, as the book's ``rotate``
            does; ``False`` (the default) pairs ``(i, i + D/2)``, as Llama and ``transformers``.
        window: an integer w >= 0 for every head, or H of them (a sequence or a 1-D integer
            tensor; ``None`` in a sequence is a global head): query i sees keys ``i - w .. i + w``
            (``i - w .. i`` with ``is_causal``). Default ``None``: no window.
        qk_norm: ``"layer"`` (LayerNorm, eps 1e-5) or ``"rms"`` (RMSNorm, eps 1e-6) over D on
            each head's queries and keys, after the projections and before the rotation.
        scale: the factor on ``Q K^T``, > 0; default ``1 / sqrt(D)``.
        scale_first: multiply the queries by ``scale`` before ``Q K^T`` (else the scores after;
            then the weights are always formed, as no fused kernel does it that way).
        init: ``"xavier"`` (default): Xavier-uniform ``q_proj``, ``k_proj``, ``v_proj`` weights
            and zero biases, as :class:`torch.nn.MultiheadAttention`; ``"linear"``: every
            projection keeps :class:`torch.nn.Linear`'s default initialisation (no further
            random draws), as the lab model (:class:`attnbook.lab.lab_model.LabBlock`) does.

    Attributes:
        q_proj: E -> E.  k_proj: kdim -> K*D.  v_proj: vdim -> K*D.  out_proj: E -> E.
        q_norm: the (D,) normalisation of the queries with ``qk_norm``, else ``None``.
        k_norm: the same for the keys.
        window: the H windows (``None`` entries for global heads), or ``None``.
        logits: :class:`AttentionLogits`, called on the (N, H, L, S) scaled scores whenever the
            weights are formed (``need_weights=True`` or ``scale_first=False``); no parameters.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        num_kv_heads: int | None = None,
        positions: Literal["none", "rotary", "alibi"] = "none",
        rotary_base: float = 10000.0,
        rotary_interleaved: bool = False,
        window: int | Sequence[int | None] | Tensor | None = None,
        qk_norm: Literal["layer", "rms"] | None = None,
        scale: float | None = None,
        scale_first: bool = True,
        init: Literal["xavier", "linear"] = "xavier",
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads != 0:
            raise ValueError(
                "embed_dim must be a positive multiple of num_heads; "
                f"got embed_dim={embed_dim} and num_heads={num_heads}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = dropout
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        K = num_heads if num_kv_heads is None else num_kv_heads
        D = self.head_dim
        _check_options(num_heads, K, D, positions, rotary_base, qk_norm, scale)
        if init not in ("xavier", "linear"):
            raise ValueError(f'init must be "xavier" or "linear"; got {init!r}')
        self.num_kv_heads, self.positions, self.scale = K, positions, scale
        self.rotary_base, self.rotary_interleaved = rotary_base, bool(rotary_interleaved)
        self.window = per_head_windows(window, num_heads)
        self.scale_first, self.init = bool(scale_first), init
        factory = {"device": device, "dtype": dtype}
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.k_proj = nn.Linear(self.kdim, K * D, bias=bias, **factory)
        self.v_proj = nn.Linear(self.vdim, K * D, bias=bias, **factory)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.q_norm = self.k_norm = None
        if qk_norm is not None:
            norm = nn.LayerNorm if qk_norm == "layer" else _rms_norm
            self.q_norm, self.k_norm = norm(D, **factory), norm(D, **factory)
        self.logits = AttentionLogits()
        if init == "xavier":
            self._reset_parameters()

    def extra_repr(self) -> str:
        """What the projections' shapes do not show: the heads, and each option that is set."""
        parts = [f"num_heads={self.num_heads}"]
        if self.num_kv_heads != self.num_heads:
            parts.append(f"num_kv_heads={self.num_kv_heads}")
        if self.positions != "none":
            parts.append(f"positions={self.positions!r}")
        if self.window is not None:
            parts.append(f"window={self.window}")
        if self.scale is not None:
            parts.append(f"scale={self.scale}")
        if not self.scale_first:
            parts.append("scale_first=False")
        if self.dropout:
            parts.append(f"dropout={self.dropout}")
        if self.init != "xavier":
            parts.append(f"init={self.init!r}")
        return ", ".join(parts)

    def _reset_parameters(self) -> None:
        # PyTorch's initialisation: Xavier-uniform input projections, zero biases.
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(proj.weight)
        for proj in (self.q_proj, self.k_proj, self.v_proj, self.out_proj):
            if proj.bias is not None:
                nn.init.zeros_(proj.bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Masks use the conventions of :class:`torch.nn.MultiheadAttention` (a bool ``True``
        means NOT allowed; a float mask is added to the scores), with two deliberate
        differences:

        * ``is_causal=True`` works without ``attn_mask`` (the causal mask is built here); with
          an ``attn_mask`` both restrictions apply. PyTorch requires ``attn_mask`` and treats
          ``is_causal`` only as a hint that it is causal.
        * A query with no allowed key (e.g. a batch element whose keys are all padding) gets
          zero attention output (the output is then ``out_proj.bias``) and zero weights, where
          PyTorch 2.13 returns NaN (with ``need_weights=True`` and in its inference fast path).

        The ``window`` and ``positions="alibi"`` options restrict and bias the scores on top of
        these masks; the returned weights are the ones applied.

        Args:
            query: (N, L, E).
            key: (N, S, kdim).
            value: (N, S, vdim).
            key_padding_mask: (N, S); bool ``True`` marks padding (not attended), or float
                added to the scores of every query.
            need_weights: return the attention weights. ``False`` uses PyTorch's fused kernel
                and returns ``None`` for the weights; the output is the same.
            attn_mask: (L, S) or (N*H, L, S), heads varying fastest; bool ``True`` = NOT
                allowed, or float added to the scores.
            average_attn_weights: average the returned weights over heads.
            is_causal: forbid query ``i`` from attending to keys ``j > i``.
            head_mask: (H,) or (N, H), not in PyTorch: multiplies each head's output before
                the heads are merged and projected, e.g. 0 to switch a head off (as in
                Michel et al., 2019). Ones change nothing; zeroing head h is the same as
                deleting its D columns of ``out_proj``. The returned weights are not masked.

        Returns:
            ``(output, weights)``: output (N, L, E); weights (N, L, S) if
            ``average_attn_weights`` else (N, H, L, S), or ``None`` if not ``need_weights``.
        """
        N, L, S = self._check_inputs(query, key, value)
        H, K = self.num_heads, self.num_kv_heads
        head_scale = None if head_mask is None else self._head_scale(head_mask, N, query.dtype)
        mask = mha_to_sdpa_mask(
            attn_mask,
            key_padding_mask,
            batch_size=N,
            num_heads=H,
            tgt_len=L,
            src_len=S,
            dtype=query.dtype,
        )  # (N or 1, H or 1, L, S), True = may attend
        mask = self._position_mask(mask, L, S, query)

        q = split_heads(self.q_proj(query), H)  # (N, H, L, D)
        k = split_heads(self.k_proj(key), K)  # (N, K, S, D)
        v = split_heads(self.v_proj(value), K)  # (N, K, S, D)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.positions == "rotary":
            q = rotate(q, self.rotary_base, interleaved=self.rotary_interleaved)
            k = rotate(k, self.rotary_base, interleaved=self.rotary_interleaved)
        if K != H:  # query head h reads key/value head h // (H / K)
            k = k.repeat_interleave(H // K, dim=1)  # (N, H, S, D)
            v = v.repeat_interleave(H // K, dim=1)  # (N, H, S, D)

        dropout_p = self.dropout if self.training else 0.0
        weights: Tensor | None = None
        if need_weights or not self.scale_first:
            output, weights = scaled_dot_product_attention(
                q, k, v, mask, dropout_p, is_causal, self.scale,
                scale_first=self.scale_first, on_scores=self.logits,
            )  # fmt: skip
            if not need_weights:
                weights = None
            elif average_attn_weights:
                weights = weights.mean(dim=1)  # (N, L, S)
        else:
            output = fused_attention(q, k, v, mask, dropout_p, is_causal, self.scale)

        if head_scale is not None:
            output = output * head_scale  # (N, H, L, D)
        return self.out_proj(merge_heads(output)), weights  # (N, L, E)

    def _position_mask(self, mask: Tensor | None, L: int, S: int, like: Tensor) -> Tensor | None:
        """Add the windows (bool) and the ALiBi bias (float) to ``mask``: (N|1, H|1, L, S)."""
        if self.window is not None:
            windows = window_mask(L, self.window, device=like.device, key_length=S)  # (H, L, S)
            mask = merge_masks(mask, windows, like.dtype)
        if self.positions == "alibi":
            slopes = alibi_slopes(self.num_heads, device=like.device, dtype=like.dtype)  # (H,)
            mask = merge_masks(mask, alibi_bias(L, slopes, key_length=S), like.dtype)
        return mask

    def _head_scale(self, head_mask: Tensor, N: int, dtype: torch.dtype) -> Tensor:
        """Check ``head_mask`` and shape it to multiply the (N, H, L, D) per-head outputs."""
        H = self.num_heads
        if not isinstance(head_mask, Tensor):
            raise TypeError(
                f"head_mask must be a torch.Tensor or None; got {type(head_mask).__name__}"
            )
        if head_mask.shape not in ((H,), (N, H)):
            raise ValueError(
                f"head_mask must have shape (H,) = ({H},) or (N, H) = ({N}, {H}); "
                f"got {tuple(head_mask.shape)}"
            )
        if head_mask.dtype.is_complex:
            raise TypeError(
                f"head_mask must be bool, integer or floating point; got {head_mask.dtype}"
            )
        return head_mask.to(dtype).reshape(-1, H, 1, 1)  # (1 or N, H, 1, 1)

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[int, int, int]:
        """Raise a named ``ValueError``/``TypeError`` for bad inputs; return N, L, S."""
        expected = {"query": self.embed_dim, "key": self.kdim, "value": self.vdim}
        feature = {"query": "embed_dim", "key": "kdim", "value": "vdim"}
        dtype = self.q_proj.weight.dtype
        for name, t in zip(("query", "key", "value"), (query, key, value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
            if t.dim() != 3:
                length = "L" if name == "query" else "S"
                raise ValueError(
                    f"{name} must be 3-D, batch first: (N, {length}, {feature[name]}); "
                    f"got {tuple(t.shape)}"
                )
            if t.size(-1) != expected[name]:
                raise ValueError(
                    f"{name} must have {feature[name]} = {expected[name]} features (last dim); "
                    f"got {tuple(t.shape)}"
                )
            if t.dtype != dtype:
                raise TypeError(
                    f"{name} must have the parameters' dtype {dtype}; got dtype {t.dtype}"
                )
        if not query.size(0) == key.size(0) == value.size(0):
            raise ValueError(
                "query, key and value must have the same batch size N (dim 0); got "
                f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if key.size(1) != value.size(1):
            raise ValueError(
                "key and value must have the same length S (dim 1); got "
                f"key {tuple(key.shape)} and value {tuple(value.shape)}"
            )
        return query.size(0), query.size(1), key.size(1)


_rms_norm = partial(nn.RMSNorm, eps=1e-6)


def _check_options(
    H: int,
    K: int,
    D: int,
    positions: str,
    rotary_base: float,
    qk_norm: str | None,
    scale: float | None,
) -> None:
    """Raise a ``ValueError``/``TypeError`` naming the first bad keyword option."""
    if isinstance(K, bool) or not isinstance(K, int) or K <= 0 or H % K:
        raise ValueError(f"num_kv_heads must be a positive divisor of num_heads = {H}; got {K!r}")
    if positions not in ("none", "rotary", "alibi"):
        raise ValueError(f'positions must be "none", "rotary" or "alibi"; got {positions!r}')
    if positions == "rotary" and D % 2:
        raise ValueError(f"positions='rotary' needs an even head size D = E // H; got D = {D}")
    if not isinstance(rotary_base, (int, float)) or not rotary_base > 1:
        raise ValueError(f"rotary_base must be a number > 1; got {rotary_base!r}")
    if qk_norm not in (None, "layer", "rms"):
        raise ValueError(f'qk_norm must be None, "layer" or "rms"; got {qk_norm!r}')
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"scale must be a number or None; got {type(scale).__name__}")
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"scale must be positive and finite; got {scale}")
