"""What the detective's heads do, in the manner of Clark et al. (2019) and Voita et al. (2019):
where each head's weight goes on a coreference sentence — the pronoun's row, the antecedent,
the token before or after, punctuation (chapters 7-8).

The functions take the attention weights as the encoder returns them — one (N, H, S, S) tensor
per layer — and a :class:`attnbook.tasks.coref.Batch`, and return one number per head, a
(layers, H) tensor (or (H,) for one layer). Statistics that need no task (entropy, the largest
weight, a sink's share) are in :mod:`attnbook.interp.head_stats`; what the accuracy loses when
heads are switched off is in :mod:`attnbook.interp.ablation`.

Shape legend: N batch, H heads, S sentence length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from torch import Tensor, nn

from attnbook.interp.head_stats import head_entropy
from attnbook.tasks.coref import Batch

__all__ = [
    "attention_of",
    "pronoun_rows",
    "pronoun_hits",
    "name_action_weight",
    "antecedent_hits",
    "pronoun_mass",
    "head_roles",
]


def attention_of(
    model: nn.Module, batch: Batch, head_mask: Tensor | None = None
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


def pronoun_rows(weights: Tensor, pronoun: Tensor) -> Tensor:
    """Where the pronoun looks: each head's row for it, (N, H, S), from one layer's (N, H, S, S)."""
    return weights[torch.arange(len(pronoun), device=weights.device), :, pronoun]  # (N, H, S)


def pronoun_hits(weights: Tensor, pronoun: Tensor, antecedent: Tensor) -> Tensor:
    """For each head of one layer (N, H, S, S), the fraction of sentences whose pronoun row has
    its largest weight on the antecedent; (H,). Ties go to the first position (``argmax``)."""
    rows = pronoun_rows(weights, pronoun)  # (N, H, S)
    return (rows.argmax(-1) == antecedent[:, None]).float().mean(0)  # (H,)


def name_action_weight(weights: Tensor, names: Tensor, actions: Tensor) -> Tensor:
    """For each head of one layer (N, H, S, S), the mean weight from each name to its own
    action: ``names`` and ``actions`` (N, P) hold the positions of the P people's names and of
    their actions, in the same order; averaged over people and sentences; (H,)."""
    n = torch.arange(names.size(0), device=weights.device)[:, None]  # (N, 1)
    rows = weights[n, :, names]  # (N, P, H, S): each name's row
    on_action = rows.gather(-1, actions[:, :, None, None].expand(-1, -1, rows.size(2), 1))
    return on_action[..., 0].mean((0, 1))  # (H,)


def pronoun_mass(weights: Sequence[Tensor], batch: Batch, positions: Tensor) -> Tensor:
    """Mean weight that each head's pronoun row puts on ``positions`` (N, S) bool; (layers, H)."""
    return torch.stack(
        [(pronoun_rows(w, batch.pronoun) * positions[:, None, :]).sum(-1).mean(0) for w in weights]
    )  # (layers, H)


def antecedent_hits(weights: Sequence[Tensor], batch: Batch) -> Tensor:
    """For each head, the fraction of sentences whose pronoun row peaks on the antecedent."""
    return torch.stack(
        [pronoun_hits(w, batch.pronoun, batch.target) for w in weights]
    )  # (layers, H)


def head_roles(
    weights: Sequence[Tensor], batch: Batch, delimiter_ids: Iterable[int]
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
        eye = torch.eye(S, dtype=torch.bool, device=w.device).roll(
            offset, dims=1
        )  # key = query + offset
        if offset > 0:
            eye[-offset:] = False
        elif offset < 0:
            eye[:-offset] = False
        return mean_over_queries((w * eye).sum(-1))

    ids = torch.tensor(sorted(set(delimiter_ids)), device=batch.tokens.device)
    delimiters = torch.isin(batch.tokens, ids) & real  # (N, S)
    target = torch.nn.functional.one_hot(batch.target, S).bool()  # (N, S)
    return {
        "previous": diagonal(-1),
        "next": diagonal(1),
        "self": diagonal(0),
        "delimiters": mean_over_queries((w * delimiters[None, :, None, None, :]).sum(-1)),
        "antecedent": pronoun_mass(weights, batch, target),
        "entropy": head_entropy(weights, batch),  # nats, the real queries
    }
