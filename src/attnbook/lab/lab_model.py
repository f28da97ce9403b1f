"""A small Transformer with every Part VII switch in one configuration: the lab model.

:class:`LabModel` embeds tokens, adds absolute positions (``"learned"`` or ``"sinusoidal"``) or
leaves positions to the attention (``"rotary"``, ``"alibi"``, ``"none"``), runs
``num_layers`` blocks of self-attention (the core :class:`attnbook.mha.MultiHeadAttention`,
configured by :class:`LabConfig`) and a feed-forward network
(:class:`attnbook.blocks.FeedForward`) with the layer norm before (``"pre"``) or after
(``"post"``) each residual branch, and predicts one class per position. Targets of
``IGNORE`` (-100) are not scored, as in :func:`torch.nn.functional.cross_entropy`.

The Transformer of chapter 5 (:class:`attnbook.transformer.Encoder`) is the reference
implementation; the lab model exists because the experiments need switches that the reference
does not have (rotary and ALiBi positions, per-head windows, grouped key/value heads,
query-key normalisation, a wrong scale on purpose).

Shape legend: N batch, L length, E ``d_model``, H heads, C ``num_classes``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.blocks import FeedForward
from attnbook.mha import MultiHeadAttention
from attnbook.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

__all__ = ["IGNORE", "LabConfig", "LabBlock", "LabModel", "lab_loss", "lab_accuracy"]

#: Target value that is not scored (the default ``ignore_index`` of cross-entropy).
IGNORE = -100

Positions = Literal["learned", "sinusoidal", "rotary", "alibi", "none"]


@dataclass(frozen=True)
class LabConfig:
    """Everything that defines a :class:`LabModel`; change one field with ``.replace(...)``."""

    vocab_size: int  # input tokens 0 .. vocab_size-1
    num_classes: int  # output classes per position
    d_model: int = 64  # E
    num_heads: int = 4  # H
    num_kv_heads: int | None = None  # key/value heads (grouped-query); None = num_heads
    num_layers: int = 2  # blocks
    dim_feedforward: int = 128  # hidden size of each feed-forward network
    positions: Positions = "learned"  # learned, sinusoidal, rotary, alibi or none
    max_len: int = 128  # longest sequence for learned and sinusoidal positions
    norm: Literal["pre", "post"] = "pre"  # layer norm before or after each residual branch
    attn_dropout: float = 0.0  # dropout on the attention weights
    dropout: float = 0.0  # dropout on each residual branch
    windows: tuple[int | None, ...] | None = None  # per-head windows; None = all global
    causal: bool = False  # forbid attending to later positions
    qk_norm: bool = False  # layer-normalise queries and keys
    scale: float | None = None  # factor on Q K^T; None = 1/sqrt(head size)
    scale_first: bool = True  # scale the queries before the product (else the scores after)

    def replace(self, **changes) -> LabConfig:
        """A copy with some fields changed."""
        return replace(self, **changes)


class LabBlock(nn.Module):
    """Attention and feed-forward, each a residual branch, pre- or post-norm.

    ``attn`` is the core :class:`~attnbook.mha.MultiHeadAttention` with the lab's switches:
    ``nn.Linear``'s own initialisation (``init="linear"``), features paired ``(2i, 2i+1)`` for
    rotary positions, ``qk_norm="layer"``, and always the path that forms the weights, so that
    its ``logits`` hook point sees every forward pass. ALiBi uses the paper's slopes, which are
    ``2**(-8h/H)`` when H is a power of two (every ALiBi model in the book has 4 heads).
    """

    def __init__(self, config: LabConfig) -> None:
        super().__init__()
        relative = config.positions if config.positions in ("rotary", "alibi") else "none"
        self.attn = MultiHeadAttention(
            config.d_model,
            config.num_heads,
            config.attn_dropout,
            num_kv_heads=config.num_kv_heads,
            positions=relative,
            rotary_interleaved=True,
            window=config.windows,
            qk_norm="layer" if config.qk_norm else None,
            scale=config.scale,
            scale_first=config.scale_first,
            init="linear",
        )
        self.ff = FeedForward(config.d_model, config.dim_feedforward, dropout=0.0)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.drop = nn.Dropout(config.dropout)
        self.pre = config.norm == "pre"
        self.causal = config.causal

    def attend(
        self,
        x: Tensor,
        key_padding_mask: Tensor | None,
        need_weights: bool,
        head_mask: Tensor | None,
    ) -> tuple[Tensor, Tensor | None]:
        """Self-attention of x (N, L, E): (N, L, E) and the weights (N, H, L, L) or None."""
        a, w = self.attn(
            x, x, x, key_padding_mask,
            need_weights=True,  # the path that forms the weights, and calls ``attn.logits``
            average_attn_weights=False,
            is_causal=self.causal,
            head_mask=head_mask,
        )  # fmt: skip
        return a, (w if need_weights else None)

    def forward(
        self,
        x: Tensor,
        key_padding_mask: Tensor | None,
        need_weights: bool,
        head_mask: Tensor | None,
    ) -> tuple[Tensor, Tensor | None]:
        """Args: x (N, L, E). Returns: (N, L, E) and the weights (N, H, L, L) or None."""
        if self.pre:
            a, w = self.attend(self.norm1(x), key_padding_mask, need_weights, head_mask)
            x = x + self.drop(a)
            return x + self.drop(self.ff(self.norm2(x))), w
        a, w = self.attend(x, key_padding_mask, need_weights, head_mask)
        x = self.norm1(x + self.drop(a))
        return self.norm2(x + self.drop(self.ff(x))), w


class LabModel(nn.Module):
    """Token classifier (one class per position) built from :class:`LabBlock`.

    Args:
        config: the switches; see :class:`LabConfig`.
    """

    def __init__(self, config: LabConfig) -> None:
        super().__init__()
        if config.norm not in ("pre", "post"):
            raise ValueError(f'norm must be "pre" or "post"; got {config.norm!r}')
        if config.positions not in ("learned", "sinusoidal", "rotary", "alibi", "none"):
            raise ValueError(f"unknown positions {config.positions!r}")
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        if config.positions == "learned":
            self.position = LearnedPositionalEmbedding(config.d_model, config.max_len)
        elif config.positions == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        else:
            self.position = None
        self.blocks = nn.ModuleList(LabBlock(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm == "pre" else nn.Identity()
        self.head = nn.Linear(config.d_model, config.num_classes)

    def forward(
        self,
        tokens: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Classify every position.

        Args:
            tokens: (N, L) integer ids.
            key_padding_mask: (N, L) bool, ``True`` marks padding.
            need_weights: also return each layer's attention weights.
            head_mask: (layers, H) or (N, layers, H) multipliers for the heads' outputs.

        Returns:
            ``(logits (N, L, C), weights)``: weights is a list of (N, H, L, L), one per layer,
            or ``None`` unless ``need_weights``.
        """
        if tokens.dim() != 2 or tokens.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"tokens must be integer (N, L); got {tokens.dtype} {tuple(tokens.shape)}"
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.vocab_size):
            raise ValueError(
                f"tokens must be in [0, {self.config.vocab_size}); got a {int(tokens.max())}"
            )
        layers, H = self.config.num_layers, self.config.num_heads
        if head_mask is not None and head_mask.shape[-2:] != (layers, H):
            raise ValueError(
                f"head_mask must be ({layers}, {H}) or (N, {layers}, {H}); got {tuple(head_mask.shape)}"
            )
        x = self.embed(tokens)  # (N, L, E)
        if self.position is not None:
            x = x + self.position(tokens.size(1)).to(x.dtype)
        weights = []
        for i, block in enumerate(self.blocks):
            mask_i = None if head_mask is None else head_mask[..., i, :]
            x, w = block(x, key_padding_mask, need_weights, mask_i)
            weights.append(w)
        logits = self.head(self.final_norm(x))  # (N, L, C)
        return logits, (weights if need_weights else None)


def lab_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Mean cross-entropy over the scored positions of ``batch = (tokens, targets)``."""
    tokens, targets = batch
    logits, _ = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def lab_accuracy(model: nn.Module, batch: tuple[Tensor, Tensor]) -> float:
    """Fraction of the scored positions whose most likely class is the target."""
    tokens, targets = batch
    logits, _ = model(tokens)
    scored = targets != IGNORE
    return float((logits.argmax(-1)[scored] == targets[scored]).float().mean())
