"""Induction heads and previous-token heads, measured on repeated random tokens.

An **induction head** (Elhage et al. 2021; Olsson et al. 2022) completes a pattern seen earlier
in the context: at a token ``A`` it attends to the token that *followed* an earlier ``A``, and
copies it. It needs a **previous-token head** in an earlier layer, which writes into each
position what the token before it was, so that the induction head's key at "the token after
``A``" can match the query ``A``.

The standard test makes the pattern the only way to predict: a sequence of ``length`` random
tokens followed by the same ``length`` tokens again. In the second half every token has occurred
once, ``length`` positions earlier, and the token after that occurrence is the next one:

* :func:`repeated_tokens` makes such sequences;
* :func:`induction_scores` is each head's mean attention, over the second half, from position
  ``i`` to position ``i - length + 1`` (the token after the earlier occurrence);
* :func:`previous_token_scores` is each head's mean attention from ``i`` to ``i - 1``;
* :func:`half_losses` is a model's mean loss on each half: on random tokens the first half can
  only be guessed, the second can be copied.

Shape legend: N batch, H heads, T sequence length (``2 * length``), V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["half_losses", "induction_scores", "previous_token_scores", "repeated_tokens"]


def repeated_tokens(
    n: int, length: int, vocab_size: int, generator: torch.Generator, low: int = 0
) -> Tensor:
    """``n`` sequences (n, 2 * length): ``length`` random tokens in ``[low, vocab_size)``, twice."""
    if length < 2 or n < 1 or not 0 <= low < vocab_size:
        raise ValueError(
            f"need n >= 1, length >= 2 and 0 <= low < vocab_size; got n={n}, length={length}, "
            f"low={low}, vocab_size={vocab_size}"
        )
    first = torch.randint(low, vocab_size, (n, length), generator=generator)  # (n, length)
    return torch.cat((first, first), dim=1)


def _check_weights(weights: Tensor, length: int | None = None) -> None:
    if weights.dim() != 4 or weights.size(-1) != weights.size(-2):
        raise ValueError(f"weights must be (N, H, T, T); got {tuple(weights.shape)}")
    if length is not None and weights.size(-1) != 2 * length:
        raise ValueError(
            f"weights must cover 2 * length = {2 * length} positions; got {weights.size(-1)}"
        )


def induction_scores(weights: Tensor, length: int) -> Tensor:
    """Each head's (H,) mean weight on "the token after the earlier occurrence" in the second half.

    Args:
        weights: (N, H, T, T) one layer's attention on :func:`repeated_tokens` (T = 2 * length).
        length: the length of the repeated block.
    """
    _check_weights(weights, length)
    i = torch.arange(length, 2 * length)  # queries in the second half
    return weights[:, :, i, i - length + 1].mean(dim=(0, 2))  # (H,)


def previous_token_scores(weights: Tensor) -> Tensor:
    """Each head's (H,) mean weight on the position just before the query (queries 1 .. T-1)."""
    _check_weights(weights)
    i = torch.arange(1, weights.size(-1))
    return weights[:, :, i, i - 1].mean(dim=(0, 2))  # (H,)


def half_losses(logits: Tensor, tokens: Tensor, length: int) -> tuple[float, float]:
    """Mean next-token loss on the first half and on the second half of repeated sequences.

    Position ``t`` predicts token ``t + 1``. The first half counts predictions of tokens
    ``1 .. length - 1`` (random: about ``log V`` for a model that cannot know them); the second
    counts tokens ``length + 1 .. 2 * length - 1``, each a copy of the token ``length`` earlier.
    The prediction of token ``length`` (the first repeat, which nothing in the first half
    announces) is in neither.

    Args:
        logits: (N, T, V) the model's logits on ``tokens``.
        tokens: (N, T) from :func:`repeated_tokens`, T = 2 * length.
    """
    if tokens.dim() != 2 or tokens.size(1) != 2 * length or logits.shape[:2] != tokens.shape:
        raise ValueError(
            f"tokens must be (N, {2 * length}) and logits (N, {2 * length}, V); got "
            f"{tuple(tokens.shape)} and {tuple(logits.shape)}"
        )
    losses = F.cross_entropy(
        logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="none"
    ).view(tokens.size(0), -1)  # (N, T-1): entry t is the loss of predicting token t+1
    return losses[:, : length - 1].mean().item(), losses[:, length:].mean().item()
