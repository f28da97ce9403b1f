"""Multi-head attention: project, split into heads, attend, merge, project back.

A readable drop-in for :class:`torch.nn.MultiheadAttention` with ``batch_first=True``: the same
arguments, mask conventions and return values, the same parameter count, and weights that move
both ways with :meth:`MultiHeadAttention.from_torch` and :meth:`MultiHeadAttention.to_torch`.

Shape legend: N batch, L target (query) length, S source (key) length, E embedding size
(``embed_dim``), H heads (``num_heads``), D head size (``E // H``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnbook.attention import fused_attention, scaled_dot_product_attention
from attnbook.masks import mha_to_sdpa_mask

__all__ = ["MultiHeadAttention"]


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

    Attributes:
        q_proj: E -> E.  k_proj: kdim -> E.  v_proj: vdim -> E.  out_proj: E -> E.
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
        factory = {"device": device, "dtype": dtype}
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.k_proj = nn.Linear(self.kdim, embed_dim, bias=bias, **factory)
        self.v_proj = nn.Linear(self.vdim, embed_dim, bias=bias, **factory)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self._reset_parameters()

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
        H, D = self.num_heads, self.head_dim
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

        q = self.q_proj(query).view(N, L, H, D).transpose(1, 2)  # (N, H, L, D)
        k = self.k_proj(key).view(N, S, H, D).transpose(1, 2)  # (N, H, S, D)
        v = self.v_proj(value).view(N, S, H, D).transpose(1, 2)  # (N, H, S, D)

        dropout_p = self.dropout if self.training else 0.0
        weights: Tensor | None = None
        if need_weights:
            output, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal)
            if average_attn_weights:
                weights = weights.mean(dim=1)  # (N, L, S)
        else:
            output = fused_attention(q, k, v, mask, dropout_p, is_causal)

        if head_scale is not None:
            output = output * head_scale  # (N, H, L, D)
        output = output.transpose(1, 2).reshape(N, L, self.embed_dim)  # (N, L, E)
        return self.out_proj(output), weights

    def _head_scale(self, head_mask: Tensor, N: int, dtype: torch.dtype) -> Tensor:
        """Check ``head_mask`` and shape it to multiply the (N, H, L, D) per-head outputs."""
        H = self.num_heads
        if not isinstance(head_mask, Tensor):
            raise TypeError(f"head_mask must be a torch.Tensor or None; got {type(head_mask).__name__}")
        if head_mask.shape not in ((H,), (N, H)):
            raise ValueError(
                f"head_mask must have shape (H,) = ({H},) or (N, H) = ({N}, {H}); "
                f"got {tuple(head_mask.shape)}"
            )
        if head_mask.dtype.is_complex:
            raise TypeError(f"head_mask must be bool, integer or floating point; got {head_mask.dtype}")
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

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A :class:`MultiHeadAttention` with the weights (and train/eval mode) of ``module``.

        Args:
            module: a :class:`torch.nn.MultiheadAttention` built with ``batch_first=True``
                and without ``add_bias_kv`` or ``add_zero_attn``.

        Raises:
            ValueError: if ``module`` is not batch first or uses an unsupported option.
        """
        if not module.batch_first:
            raise ValueError(
                "from_torch needs a module built with batch_first=True; got batch_first=False"
            )
        if module.bias_k is not None or module.bias_v is not None:
            raise ValueError("from_torch does not support add_bias_kv=True")
        if module.add_zero_attn:
            raise ValueError("from_torch does not support add_zero_attn=True")
        reference = module.out_proj.weight
        ours = cls(
            module.embed_dim,
            module.num_heads,
            dropout=module.dropout,
            bias=module.in_proj_bias is not None,
            kdim=module.kdim,
            vdim=module.vdim,
            device=reference.device,
            dtype=reference.dtype,
        )
        projections = (ours.q_proj, ours.k_proj, ours.v_proj)
        with torch.no_grad():
            if module._qkv_same_embed_dim:
                weights = module.in_proj_weight.chunk(3)
            else:
                weights = (module.q_proj_weight, module.k_proj_weight, module.v_proj_weight)
            for proj, weight in zip(projections, weights):
                proj.weight.copy_(weight)
            if module.in_proj_bias is not None:
                for proj, bias in zip(projections, module.in_proj_bias.chunk(3)):
                    proj.bias.copy_(bias)
            ours.out_proj.weight.copy_(module.out_proj.weight)
            if module.out_proj.bias is not None:
                ours.out_proj.bias.copy_(module.out_proj.bias)
        return ours.train(module.training)

    def to_torch(self) -> nn.MultiheadAttention:
        """A :class:`torch.nn.MultiheadAttention` (``batch_first=True``) with these weights."""
        reference = self.out_proj.weight
        bias = self.out_proj.bias is not None
        module = nn.MultiheadAttention(
            self.embed_dim,
            self.num_heads,
            dropout=self.dropout,
            bias=bias,
            kdim=self.kdim,
            vdim=self.vdim,
            batch_first=True,
            device=reference.device,
            dtype=reference.dtype,
        )
        projections = (self.q_proj, self.k_proj, self.v_proj)
        with torch.no_grad():
            if module._qkv_same_embed_dim:
                module.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
            else:
                module.q_proj_weight.copy_(self.q_proj.weight)
                module.k_proj_weight.copy_(self.k_proj.weight)
                module.v_proj_weight.copy_(self.v_proj.weight)
            if bias:
                module.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
                module.out_proj.bias.copy_(self.out_proj.bias)
            module.out_proj.weight.copy_(self.out_proj.weight)
        return module.train(self.training)
