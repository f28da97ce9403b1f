"""Inputs shared by several checkers: random queries, keys and values; random attention weights."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["random_qkv", "random_attention"]


def random_qkv(seed: int, L: int, S: int, E: int, Ev: int) -> tuple[Tensor, Tensor, Tensor]:
    """Seeded query (L, E), key (S, E) and value (S, Ev)."""
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(L, E, generator=g),
        torch.randn(S, E, generator=g),
        torch.randn(S, Ev, generator=g),
    )


def random_attention(
    seed: int = 0, N: int = 6, H: int = 3, S: int = 7
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Random (N, H, S, S) weights with padding, and pronoun/antecedent positions.

    Built so that shortcuts give other answers: in head 0 every other sentence has a one-hot
    pronoun row on the antecedent; in head 1 the antecedent always gets the largest weight of
    its row, 0.4, but less than one half, so that counting weights above 0.5 misses it.
    """
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(S - 3, S + 1, (N,), generator=g)
    lengths[0] = S
    padding = torch.arange(S)[None, :] >= lengths[:, None]  # (N, S)
    scores = torch.randn(N, H, S, S, generator=g) * 3
    scores = scores.masked_fill(padding[:, None, None, :], float("-inf"))
    weights = scores.softmax(-1)
    pronoun = lengths - 1
    antecedent = torch.randint(0, 3, (N,), generator=g)
    for n in range(N):
        p, a = int(pronoun[n]), int(antecedent[n])
        if n % 2 == 0:  # head 0: clear-cut
            weights[n, 0, p] = F.one_hot(antecedent[n], S).float()
        if H > 1:  # head 1: the antecedent wins with 0.4, the rest share 0.6
            row = (~padding[n]).float()
            row[a] = 0.0
            row = 0.6 * row / row.sum()
            row[a] = 0.4
            weights[n, 1, p] = row
    return weights, padding, pronoun, antecedent
