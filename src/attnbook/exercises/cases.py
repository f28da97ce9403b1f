"""Inputs shared by several checkers: random attention weights with padding."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["random_attention"]


def random_attention(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Random (N, H, S, S) weights with padding, and pronoun/antecedent positions."""
    g = torch.Generator().manual_seed(seed)
    N, H, S = 6, 3, 7
    lengths = torch.tensor([7, 5, 6, 7, 4, 7])
    padding = torch.arange(S)[None, :] >= lengths[:, None]  # (N, S)
    scores = torch.randn(N, H, S, S, generator=g) * 3
    scores = scores.masked_fill(padding[:, None, None, :], float("-inf"))
    weights = scores.softmax(-1)
    pronoun = lengths - 1
    antecedent = torch.randint(0, 3, (N,), generator=g)
    # Make the answer clear-cut in some sentences, so that hit rates differ between heads.
    for n in range(0, N, 2):
        weights[n, 0, pronoun[n]] = F.one_hot(antecedent[n], S).float()
    return weights, padding, pronoun, antecedent
