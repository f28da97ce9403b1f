"""Transformer blocks: attention with residuals, layer norm and a feed-forward network.

:class:`EncoderBlock` and :class:`DecoderBlock` are readable counterparts of
:class:`torch.nn.TransformerEncoderLayer` and :class:`torch.nn.TransformerDecoderLayer` with
``batch_first=True``: the same arguments, masks and parameter count, and weights that move both
ways (:func:`attnbook.interop.from_torch` / :func:`attnbook.interop.to_torch`).
:mod:`attnbook.transformer` stacks them.

Two differences from PyTorch, both deliberate:

* ``forward`` returns ``(output, weights_or_None)``, like :class:`~attnbook.mha.MultiHeadAttention`:
  with ``need_weights=True`` the per-head attention weights come back from the call instead of
  being stashed on the module. PyTorch's layers return only the output.
* ``is_causal=True`` (and ``tgt_is_causal`` / ``memory_is_causal``) *applies* a causal mask,
  with or without an explicit mask; in PyTorch it is only a hint that the mask you pass is causal.

Masks follow :class:`torch.nn.MultiheadAttention`: bool ``True`` means NOT allowed, a float mask
is added to the scores. Attention masks are (L, S) or (N*H, L, S); key padding masks are (N, S).

Shape legend: N batch, L target length, S source (memory) length, E ``d_model``, H ``nhead``,
F ``dim_feedforward``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.masks import check_mha_masks
from attnbook.mha import MultiHeadAttention

__all__ = ["FeedForward", "EncoderBlock", "DecoderBlock", "DecoderWeights"]

Activation = Literal["relu", "gelu"]
_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    """The position-wise feed-forward network: Linear, activation, dropout, Linear.

    Applied to every position separately, with the same weights: E -> F -> E.

    Args:
        d_model: E.
        dim_feedforward: F, the hidden size (4E in most models).
        dropout: dropout probability on the hidden activations.
        activation: ``"relu"`` or ``"gelu"`` (exact GELU, as PyTorch's ``F.gelu``).
        bias: whether the two linear layers have a bias.
    """

    def __init__(
        self,
        d_model: int,
        dim_feedforward: int,
        dropout: float = 0.1,
        activation: Activation = "relu",
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f'activation must be "relu" or "gelu"; got {activation!r}')
        factory = {"device": device, "dtype": dtype}
        self.activation = activation
        self.linear1 = nn.Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model, bias=bias, **factory)

    def forward(self, x: Tensor) -> Tensor:
        """Args: x (N, L, E). Returns: (N, L, E)."""
        hidden = _ACTIVATIONS[self.activation](self.linear1(x))  # (N, L, F)
        return self.linear2(self.dropout(hidden))  # (N, L, E)


class _Block(nn.Module):
    """What the two blocks share: arguments, checks and the self-attention sublayer."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int,
        dropout: float,
        activation: Activation,
        layer_norm_eps: float,
        batch_first: bool,
        norm_first: bool,
        bias: bool,
        num_norms: int,
        factory: dict,
    ) -> None:
        super().__init__()
        if batch_first is not True:
            raise ValueError("attnbook blocks are batch first only; got batch_first=False")
        if isinstance(dim_feedforward, bool) or not (
            isinstance(dim_feedforward, int) and dim_feedforward > 0
        ):
            raise ValueError(f"dim_feedforward must be a positive integer; got {dim_feedforward!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.d_model, self.nhead, self.norm_first = d_model, nhead, norm_first
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout, bias, **factory)
        self.ff = FeedForward(d_model, dim_feedforward, dropout, activation, bias, **factory)
        for i in range(1, num_norms + 1):
            # norm{i} and dropout{i} belong to sublayer i: the same names as in PyTorch.
            norm = nn.LayerNorm(d_model, layer_norm_eps, bias=bias, **factory)
            self.add_module(f"norm{i}", norm)
            self.add_module(f"dropout{i}", nn.Dropout(dropout))

    def _check_sequence(self, x: Tensor, name: str, length: str) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(
                f"{name} must have shape (N, {length}, d_model) = (N, {length}, {self.d_model}), "
                f"batch first; got {tuple(x.shape)}"
            )

    def _check_masks(self, N: int, L: int, S: int, attn: str, padding: str, **masks) -> None:
        """Check an attention mask and a padding mask, naming them as the caller does."""
        check_mha_masks(
            masks[attn],
            masks[padding],
            batch_size=N,
            num_heads=self.nhead,
            tgt_len=L,
            src_len=S,
            names=(attn, padding),
            heads_name="nhead",
        )

    def _sa_block(
        self,
        x: Tensor,
        mask: Tensor | None,
        padding: Tensor | None,
        is_causal: bool,
        need_weights: bool,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """The self-attention sublayer without its residual: dropout1(attention(x, x, x))."""
        output, weights = self.self_attn(
            x, x, x, key_padding_mask=padding, need_weights=need_weights, attn_mask=mask,
            average_attn_weights=False, is_causal=is_causal, head_mask=head_mask,
        )  # fmt: skip
        return self.dropout1(output), weights  # (N, L, E), (N, H, L, L) or None


class EncoderBlock(_Block):
    """Self-attention and a feed-forward network, each wrapped in a residual and a layer norm.

    Post-LN (``norm_first=False``, the original Transformer)::

        x = norm1(x + dropout1(self_attn(x)))
        x = norm2(x + dropout2(ff(x)))

    Pre-LN (``norm_first=True``, GPT-2 and most models since; Xiong et al. 2020)::

        x = x + dropout1(self_attn(norm1(x)))
        x = x + dropout2(ff(norm2(x)))

    Args:
        d_model: E.
        nhead: H; must divide ``d_model``.
        dim_feedforward: F, the hidden size of the feed-forward network.
        dropout: on the attention weights, the feed-forward hidden layer and each sublayer's
            output before the residual addition.
        activation: ``"relu"`` or ``"gelu"``.
        layer_norm_eps: the eps of both layer norms.
        batch_first: must be True (accepted for PyTorch's signature).
        norm_first: pre-LN if True, post-LN if False.
        bias: biases in the linear layers and layer norms.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = True,
        norm_first: bool = False,
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__(
            d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
            batch_first, norm_first, bias, num_norms=2, factory=factory,
        )  # fmt: skip

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Run the block.

        Args:
            src: (N, L, E).
            src_mask: (L, L) or (N*H, L, L); bool ``True`` = NOT allowed, or float added.
            src_key_padding_mask: (N, L); bool ``True`` marks padding, or float added.
            is_causal: forbid position ``i`` from attending to positions ``j > i``.
            need_weights: also return the self-attention weights of every head.
            head_mask: (H,) or (N, H), not in PyTorch: scales each self-attention head's
                output (0 switches it off); see :meth:`attnbook.mha.MultiHeadAttention.forward`.

        Returns:
            ``(output, weights)``: output (N, L, E); weights (N, H, L, L), or ``None`` if not
            ``need_weights``.
        """
        self._check_sequence(src, "src", "L")
        N, L = src.shape[:2]
        self._check_masks(
            N, L, L, "src_mask", "src_key_padding_mask",
            src_mask=src_mask, src_key_padding_mask=src_key_padding_mask,
        )  # fmt: skip
        attention_args = (src_mask, src_key_padding_mask, is_causal, need_weights, head_mask)
        x = src
        if self.norm_first:
            attended, weights = self._sa_block(self.norm1(x), *attention_args)
            x = x + attended
            x = x + self.dropout2(self.ff(self.norm2(x)))
        else:
            attended, weights = self._sa_block(x, *attention_args)
            x = self.norm1(x + attended)
            x = self.norm2(x + self.dropout2(self.ff(x)))
        return x, weights


class DecoderWeights(NamedTuple):
    """The attention weights of one decoder block, every head."""

    self_attn: Tensor  # (N, H, L, L): the target attending to itself
    cross_attn: Tensor  # (N, H, L, S): the target attending to the memory


class DecoderBlock(_Block):
    """Masked self-attention, cross-attention to the encoder's output, and a feed-forward network.

    Post-LN (``norm_first=False``)::

        x = norm1(x + dropout1(self_attn(x)))
        x = norm2(x + dropout2(cross_attn(x, memory)))
        x = norm3(x + dropout3(ff(x)))

    Pre-LN (``norm_first=True``)::

        x = x + dropout1(self_attn(norm1(x)))
        x = x + dropout2(cross_attn(norm2(x), memory))
        x = x + dropout3(ff(norm3(x)))

    Args: as :class:`EncoderBlock`; the cross-attention (``cross_attn``, PyTorch's
    ``multihead_attn``) has the same size and dropout as the self-attention.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = True,
        norm_first: bool = False,
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__(
            d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
            batch_first, norm_first, bias, num_norms=3, factory=factory,
        )  # fmt: skip
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout, bias, **factory)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[Tensor, DecoderWeights | None]:
        """Run the block.

        Args:
            tgt: (N, L, E), the target sequence so far.
            memory: (N, S, E), the encoder's output.
            tgt_mask: (L, L) or (N*H, L, L); bool ``True`` = NOT allowed, or float added.
            memory_mask: (L, S) or (N*H, L, S); same convention.
            tgt_key_padding_mask: (N, L); bool ``True`` marks padding in ``tgt``.
            memory_key_padding_mask: (N, S); bool ``True`` marks padding in ``memory``.
            tgt_is_causal: forbid target position ``i`` from attending to positions ``j > i``
                (what a decoder almost always wants).
            memory_is_causal: the same restriction on the cross-attention (rarely wanted).
            need_weights: also return the weights of both attentions, every head.

        Returns:
            ``(output, weights)``: output (N, L, E); weights a :class:`DecoderWeights` of
            (N, H, L, L) and (N, H, L, S) tensors, or ``None`` if not ``need_weights``.
        """
        self._check_sequence(tgt, "tgt", "L")
        self._check_sequence(memory, "memory", "S")
        if memory.size(0) != tgt.size(0):
            raise ValueError(
                "tgt and memory must have the same batch size N (dim 0); got "
                f"tgt {tuple(tgt.shape)} and memory {tuple(memory.shape)}"
            )
        N, L, S = tgt.size(0), tgt.size(1), memory.size(1)
        self._check_masks(
            N, L, L, "tgt_mask", "tgt_key_padding_mask",
            tgt_mask=tgt_mask, tgt_key_padding_mask=tgt_key_padding_mask,
        )  # fmt: skip
        self._check_masks(
            N, L, S, "memory_mask", "memory_key_padding_mask",
            memory_mask=memory_mask, memory_key_padding_mask=memory_key_padding_mask,
        )  # fmt: skip
        self_args = (tgt_mask, tgt_key_padding_mask, tgt_is_causal, need_weights)
        cross_args = (memory_mask, memory_key_padding_mask, memory_is_causal, need_weights)
        x = tgt
        if self.norm_first:
            attended, self_weights = self._sa_block(self.norm1(x), *self_args)
            x = x + attended
            attended, cross_weights = self._mha_block(self.norm2(x), memory, *cross_args)
            x = x + attended
            x = x + self.dropout3(self.ff(self.norm3(x)))
        else:
            attended, self_weights = self._sa_block(x, *self_args)
            x = self.norm1(x + attended)
            attended, cross_weights = self._mha_block(x, memory, *cross_args)
            x = self.norm2(x + attended)
            x = self.norm3(x + self.dropout3(self.ff(x)))
        if not need_weights:
            return x, None
        return x, DecoderWeights(self_weights, cross_weights)

    def _mha_block(
        self,
        x: Tensor,
        memory: Tensor,
        mask: Tensor | None,
        padding: Tensor | None,
        is_causal: bool,
        need_weights: bool,
    ) -> tuple[Tensor, Tensor | None]:
        """The cross-attention sublayer without its residual: dropout2(attention(x, mem, mem))."""
        output, weights = self.cross_attn(
            x, memory, memory, key_padding_mask=padding, need_weights=need_weights,
            attn_mask=mask, average_attn_weights=False, is_causal=is_causal,
        )  # fmt: skip
        return self.dropout2(output), weights  # (N, L, E), (N, H, L, S) or None
