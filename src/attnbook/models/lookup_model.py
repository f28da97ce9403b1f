"""Small models for the book's experiments: few parameters, trained on a CPU in seconds.

:class:`LookupModel` is the smallest model that can answer a lookup task (see
:mod:`attnbook.tasks.lookup`): token and learned position embeddings, **one**
:class:`~attnbook.mha.MultiHeadAttention` layer, and one linear readout per lookup. It has no
feed-forward layer and no residual connection, so everything a readout knows came through
attention — and the number of heads is the only thing that differs between the models chapter 3
compares. ``forward`` returns the per-head attention weights; nothing is stashed on the module.

Shape legend: N batch, L sequence length, E embedding, H heads, K readouts, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnbook.mha import MultiHeadAttention
from attnbook.tasks.lookup import lookup_loss

__all__ = [
    "LookupModelConfig",
    "LookupModel",
    "build_lookup_model",
    "lookup_model_loss",
    "head_roles",
]


@dataclass
class LookupModelConfig:
    """Sizes of a :class:`LookupModel`."""

    vocab_size: int = 8  # V: tokens are 0 .. V-1
    max_len: int = 8  # longest sequence (number of learned positions)
    embed_dim: int = 64  # E: the same for any number of heads, so the parameter count is too
    num_heads: int = 1  # H: must divide embed_dim
    num_readouts: int = 2  # K: one linear readout per lookup
    is_causal: bool = True  # a position attends only to itself and earlier positions


class LookupModel(nn.Module):
    """Embeddings + one multi-head attention layer + one linear readout per lookup."""

    def __init__(self, config: LookupModelConfig) -> None:
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.embed_dim)
        self.position_embedding = nn.Embedding(config.max_len, config.embed_dim)
        self.attention = MultiHeadAttention(config.embed_dim, config.num_heads)
        self.readouts = nn.ModuleList(
            nn.Linear(config.embed_dim, config.vocab_size) for _ in range(config.num_readouts)
        )

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """Answer every lookup at every position.

        Args:
            tokens: (N, L) integer tokens, L <= ``max_len``.

        Returns:
            ``(logits, weights)``: logits (N, K, L, V), one distribution per readout and position;
            weights (N, H, L, L), each head's attention weights.
        """
        if tokens.dim() != 2 or tokens.dtype.is_floating_point:
            raise ValueError(
                f"tokens must be a 2-D integer tensor (N, L); got {tuple(tokens.shape)}"
            )
        N, L = tokens.shape
        if L > self.config.max_len:
            raise ValueError(f"tokens has length L = {L} > max_len = {self.config.max_len}")
        positions = torch.arange(L, device=tokens.device)  # (L,)
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (N, L, E)
        out, weights = self.attention(
            x, x, x, is_causal=self.config.is_causal, average_attn_weights=False
        )  # (N, L, E), (N, H, L, L)
        logits = torch.stack([readout(out) for readout in self.readouts], dim=1)  # (N, K, L, V)
        return logits, weights


def build_lookup_model(
    num_heads: int,
    seed: int,
    embed_dim: int = 64,
    num_readouts: int = 2,
    *,
    vocab_size: int = 128,
    max_len: int = 8,
) -> LookupModel:
    """Chapter 3's model with ``num_heads`` heads, its initial weights drawn from ``seed``.

    The defaults are chapter 3's task: 128 tokens, sequences of 8, two lookups, E = 64.
    """
    torch.manual_seed(seed)
    return LookupModel(
        LookupModelConfig(vocab_size=vocab_size, max_len=max_len, embed_dim=embed_dim,
                          num_heads=num_heads, num_readouts=num_readouts)
    )  # fmt: skip


def lookup_model_loss(model: LookupModel, batch: tuple[Tensor, Tensor]) -> Tensor:
    """The loss of one batch ``(tokens, targets)``, as :func:`attnbook.train.fit` calls it."""
    tokens, targets = batch
    logits, _ = model(tokens)  # (N, K, L, V): K answers, V tokens
    return lookup_loss(logits, targets)


def head_roles(model: LookupModel, tokens: Tensor) -> tuple[Tensor, Tensor]:
    """The mean weight each head puts on the previous token and on the first token.

    Averaged over the sequences ``tokens`` (N, L) and the query positions 2 .. L-1 (at
    position 1 the previous token is the first one, so it would count for both places).

    Returns:
        ``(on_previous, on_first)``, each of shape (H,).
    """
    if tokens.dim() != 2 or tokens.size(1) < 3:
        raise ValueError(f"tokens must have shape (N, L) with L >= 3; got {tuple(tokens.shape)}")
    with torch.no_grad():
        _, weights = model(tokens)  # (N, H, L, L)
    weights = weights.mean(dim=0)  # (H, L, L)
    t = torch.arange(2, weights.size(-1))
    return weights[:, t, t - 1].mean(-1), weights[:, t, 0].mean(-1)  # (H,), (H,)
