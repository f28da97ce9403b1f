"""Measuring what heads do, in the manner of Clark et al. (2019), Voita et al. (2019) and
Michel et al. (2019): where each head's weight goes, how spread out it is, and how much the
model's accuracy drops when the head is switched off.

Every function takes the attention weights as the encoder returns them — one (N, H, S, S)
tensor per layer — and a :class:`attnbook.data.Batch`, and returns one number per head, as a
(layers, H) tensor.

Shape legend: N batch, H heads, S sentence length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from torch import Tensor, nn

from attnbook.data import Batch
from attnbook.pointer import pointer_accuracy

__all__ = ["attention_of", "antecedent_hits", "pronoun_mass", "head_roles", "head_entropy",
           "accuracy_with_heads_off", "head_importance", "prune_curve"]


def attention_of(model: nn.Module, batch: Batch, head_mask: Tensor | None = None
                 ) -> tuple[Tensor, list[Tensor]]:
    """The pointer's logits (N, S) and every layer's weights (N, H, S, S), in eval mode."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits, weights = model.run(batch, need_weights=True, head_mask=head_mask)
    model.train(was_training)
    return logits, weights


def _stack(weights: Sequence[Tensor]) -> Tensor:
    return torch.stack(list(weights))  # (layers, N, H, S, S)


def _pronoun_rows(weights: Sequence[Tensor], batch: Batch) -> Tensor:
    """Each head's row for the pronoun: where the pronoun looks; (layers, N, H, S)."""
    w = _stack(weights)
    rows = w[:, torch.arange(len(batch.pronoun)), :, batch.pronoun]  # (N, layers, H, S)
    return rows.transpose(0, 1)  # (layers, N, H, S)


def pronoun_mass(weights: Sequence[Tensor], batch: Batch, positions: Tensor) -> Tensor:
    """Mean weight that each head's pronoun row puts on ``positions`` (N, S) bool; (layers, H)."""
    rows = _pronoun_rows(weights, batch)  # (layers, N, H, S)
    return (rows * positions[None, :, None, :]).sum(-1).mean(1)  # (layers, H)


def antecedent_hits(weights: Sequence[Tensor], batch: Batch) -> Tensor:
    """For each head, the fraction of sentences whose pronoun row peaks on the antecedent."""
    rows = _pronoun_rows(weights, batch)  # (layers, N, H, S)
    return (rows.argmax(-1) == batch.target[None, :, None]).float().mean(1)  # (layers, H)


def head_entropy(weights: Sequence[Tensor], batch: Batch) -> Tensor:
    """Mean entropy (nats) of each head's rows over real query positions; (layers, H)."""
    w = _stack(weights)
    plogp = torch.where(w > 0, w * w.clamp_min(1e-30).log(), torch.zeros(()))
    rows = -plogp.sum(-1)  # (layers, N, H, S)
    real = (~batch.key_padding_mask).float()[None, :, None, :]  # (1, N, 1, S)
    return (rows * real).sum((1, 3)) / real.sum((1, 3))  # (layers, H)


def head_roles(weights: Sequence[Tensor], batch: Batch, delimiter_ids: Iterable[int]
               ) -> dict[str, Tensor]:
    """Where each head's weight goes, averaged over real query positions.

    Returns (layers, H) tensors: ``"previous"``, ``"next"``, ``"self"`` (mass on the token one
    before, one after, the query itself), ``"delimiters"`` (mass on punctuation and the like),
    ``"antecedent"`` (the pronoun row's mass on its antecedent) and ``"entropy"`` (nats).
    """
    w = _stack(weights)
    S = w.shape[-1]
    real = ~batch.key_padding_mask  # (N, S)
    queries = real.float()[None, :, None, :]  # (1, N, 1, S)

    def mean_over_queries(mass: Tensor) -> Tensor:  # mass (layers, N, H, S) per query
        return (mass * queries).sum((1, 3)) / queries.sum((1, 3))

    def diagonal(offset: int) -> Tensor:
        eye = torch.eye(S, dtype=torch.bool).roll(offset, dims=1)  # key = query + offset
        if offset > 0:
            eye[-offset:] = False
        elif offset < 0:
            eye[:-offset] = False
        return mean_over_queries((w * eye).sum(-1))

    ids = torch.tensor(sorted(set(delimiter_ids)))
    delimiters = torch.isin(batch.tokens, ids) & real  # (N, S)
    target = torch.nn.functional.one_hot(batch.target, S).bool()  # (N, S)
    return {
        "previous": diagonal(-1),
        "next": diagonal(1),
        "self": diagonal(0),
        "delimiters": mean_over_queries((w * delimiters[None, :, None, None, :]).sum(-1)),
        "antecedent": pronoun_mass(weights, batch, target),
        "entropy": head_entropy(weights, batch),
    }


def accuracy_with_heads_off(model: nn.Module, batch: Batch, off: Iterable[tuple[int, int]]) -> float:
    """Pointer accuracy with the given (layer, head) pairs switched off by ``head_mask``."""
    config = model.config
    mask = torch.ones(config.num_layers, config.nhead)
    for layer, head in off:
        mask[layer, head] = 0
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits, _ = model.run(batch, head_mask=mask)  # no weights needed: the fast path
    model.train(was_training)
    return pointer_accuracy(logits, batch.target)


def head_importance(model: nn.Module, batch: Batch) -> Tensor:
    """Accuracy lost when each head alone is switched off; (layers, H)."""
    full = accuracy_with_heads_off(model, batch, [])
    config = model.config
    return torch.tensor([[full - accuracy_with_heads_off(model, batch, [(layer, head)])
                          for head in range(config.nhead)] for layer in range(config.num_layers)])


def prune_curve(model: nn.Module, batch: Batch, order: Sequence[tuple[int, int]]) -> list[float]:
    """Accuracy after switching off the first k heads of ``order``, for k = 0 .. len(order)."""
    return [accuracy_with_heads_off(model, batch, order[:k]) for k in range(len(order) + 1)]
