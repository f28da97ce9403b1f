"""Attention rollout (Abnar & Zuidema 2020): how much of each input token reaches each position
at the top of the encoder, if attention were the only thing that mixes tokens.

Each layer's weights are averaged over its heads, mixed with the identity to stand for the
residual connection, ``A = (1 - residual) W + residual I``, and multiplied up through the
layers, the first layer rightmost: ``R = A_L ... A_2 A_1``. Row ``i`` of ``R`` says how the
input tokens are spread over position ``i``'s final vector under two assumptions that do not
hold exactly: the residual stream and the attention output count ``residual`` and
``1 - residual`` whatever their norms, and the feed-forward layers and value vectors change
nothing. It is a summary of the attention weights, not an explanation of the prediction.

Shape legend: N batch, H heads, S positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["attention_rollout"]


def attention_rollout(weights: Sequence[Tensor], residual: float = 0.5) -> Tensor:
    """Roll attention weights out through the layers.

    Args:
        weights: one (N, H, S, S) tensor per layer, first layer first, rows summing to 1
            (what :class:`~attnbook.transformer.Encoder` returns with ``need_weights=True``).
        residual: the share given to the identity in every layer, in [0, 1]; 0.5 in the paper,
            0 multiplies the raw (head-averaged) weights.

    Returns:
        The rollout, shape (N, S, S). Row ``i`` is the share of each input position in
        position ``i`` at the top.
    """
    if isinstance(residual, bool) or not isinstance(residual, (int, float)):
        raise TypeError(f"residual must be a number in [0, 1]; got {type(residual).__name__}")
    if not 0 <= residual <= 1:
        raise ValueError(f"residual must be in [0, 1]; got {residual!r}")
    layers = list(weights)
    if not layers:
        raise ValueError("weights must hold at least one layer")
    shape = layers[0].shape if isinstance(layers[0], Tensor) else None
    for i, w in enumerate(layers):
        if not isinstance(w, Tensor):
            raise TypeError(f"weights[{i}] must be a torch.Tensor; got {type(w).__name__}")
        if w.dim() != 4 or w.size(-1) != w.size(-2) or w.shape != shape:
            raise ValueError(
                f"weights must be (N, H, S, S) tensors of one shape; weights[0] is "
                f"{tuple(shape)}, weights[{i}] is {tuple(w.shape)}"
            )
    S = shape[-1]
    eye = torch.eye(S, dtype=layers[0].dtype, device=layers[0].device)  # (S, S)
    rollout = eye.expand(shape[0], S, S)  # (N, S, S)
    for w in layers:
        mixed = (1 - residual) * w.mean(1) + residual * eye  # (N, S, S)
        mixed = mixed / mixed.sum(-1, keepdim=True)  # rows of W may not sum exactly to 1
        rollout = mixed @ rollout  # this layer on top of those below
    return rollout
