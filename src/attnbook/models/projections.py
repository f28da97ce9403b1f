"""Chapter 1's learned lookup: one attention head whose W_Q, W_K and W_V are trained.

Chapter 1 first sets the query matrix by hand and takes the keys and values to be the features
themselves (K = V = X). :class:`ProjectedAttention` makes all three *learned* projections of the
same input, ``Q = X W_Qᵀ``, ``K = X W_Kᵀ``, ``V = X W_Vᵀ`` (one ``nn.Linear`` each, no bias), so
that training can find the lookup instead. ``tie_query_key=True`` uses one matrix for both
queries and keys, which makes every score matrix symmetric.

:func:`train_lookup` trains one on :func:`~attnbook.models.handbuilt.detective_sentences` with
:func:`~attnbook.train.fit`: the loss is minus the log of the weight the pronoun puts on its
antecedent (and, with ``two_way=True``, also of the weight the antecedent puts back on the
pronoun). Only W_Q and W_K receive gradients: which token is found does not depend on W_V.

Shape legend: N batch (sentences), L padded sentence length, E input features, D head dim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import torch
from torch import Tensor, nn

from attnbook.attention import scaled_dot_product_attention
from attnbook.models.handbuilt import FEATURES, WORD_FEATURES, PronounSentence, features
from attnbook.train import TrainConfig, fit, seed_everything

__all__ = [
    "ProjectedAttention",
    "LookupBatch",
    "encode",
    "lookup_loss",
    "lookup_accuracy",
    "train_lookup",
    "batch_maker",
]


class ProjectedAttention(nn.Module):
    """One attention head with learned query, key and value projections of the same input.

    Args:
        in_features: E, the size of each token's input vector.
        head_dim: D, the size of queries, keys and values.
        tie_query_key: use one matrix for queries and keys (``W_Q = W_K``).
    """

    def __init__(self, in_features: int, head_dim: int, tie_query_key: bool = False) -> None:
        super().__init__()
        if in_features <= 0 or head_dim <= 0:
            raise ValueError(
                f"in_features and head_dim must be positive; got {in_features}, {head_dim}"
            )
        self.query = nn.Linear(in_features, head_dim, bias=False)
        self.key = self.query if tie_query_key else nn.Linear(in_features, head_dim, bias=False)
        self.value = nn.Linear(in_features, head_dim, bias=False)

    @property
    def tie_query_key(self) -> bool:
        """True when queries and keys share one matrix."""
        return self.key is self.query

    def _check(self, x: Tensor, keep: Tensor | None) -> None:
        if not isinstance(x, Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"x must be a floating-point tensor (N, L, E); got {type(x).__name__}")
        E = self.query.in_features
        if x.dim() != 3 or x.shape[-1] != E:
            raise ValueError(f"x must have shape (N, L, E={E}); got {tuple(x.shape)}")
        if keep is not None and (keep.dtype != torch.bool or keep.shape != x.shape[:2]):
            raise ValueError(
                f"keep must be a bool tensor of shape (N, L) = {tuple(x.shape[:2])}; "
                f"got {keep.dtype} {tuple(keep.shape)}"
            )

    def scores(self, x: Tensor) -> Tensor:
        """The raw scores ``Q Kᵀ`` (N, L, L), before any mask or softmax."""
        self._check(x, None)
        return self.query(x) @ self.key(x).transpose(-2, -1)  # (N, L, L)

    def forward(self, x: Tensor, keep: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Self-attention of every token over the sentence.

        Args:
            x: (N, L, E) input vectors.
            keep: optional (N, L) bool, ``True`` for real tokens; padding is never attended to.

        Returns:
            ``(output, weights)``: output (N, L, D), weights (N, L, L).
        """
        self._check(x, keep)
        mask = None if keep is None else keep[:, None, :]  # (N, 1, L): True = may attend
        # scale=1 as everywhere in chapter 1: the learned matrices set the scale of the scores.
        return scaled_dot_product_attention(
            self.query(x), self.key(x), self.value(x), attn_mask=mask, scale=1.0
        )


class LookupBatch(NamedTuple):
    """Sentences as padded feature tensors, with where their pronouns and antecedents are."""

    x: Tensor  # (N, L, E) features, zero at padding
    keep: Tensor  # (N, L) bool, True for real tokens
    pronoun: Tensor  # (N,) position of the pronoun
    antecedent: Tensor  # (N,) position of its antecedent


def encode(
    sentences: Sequence[PronounSentence], lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES
) -> LookupBatch:
    """Stack sentences into one :class:`LookupBatch` of their hand-built features."""
    if not sentences:
        raise ValueError("encode needs at least one sentence")
    L = max(len(s.tokens) for s in sentences)
    x = torch.zeros(len(sentences), L, len(FEATURES))  # (N, L, E)
    keep = torch.zeros(len(sentences), L, dtype=torch.bool)  # (N, L)
    for n, s in enumerate(sentences):
        x[n, : len(s.tokens)] = features(s.tokens, lexicon)
        keep[n, : len(s.tokens)] = True
    pronoun = torch.tensor([s.pronoun for s in sentences])
    antecedent = torch.tensor([s.antecedent for s in sentences])
    return LookupBatch(x, keep, pronoun, antecedent)


def lookup_loss(model: ProjectedAttention, batch: LookupBatch, two_way: bool = False) -> Tensor:
    """Mean of −log(weight of the pronoun on its antecedent); with ``two_way``, plus the mean
    of −log(weight of the antecedent on the pronoun)."""
    _, weights = model(batch.x, batch.keep)  # (N, L, L)
    n = torch.arange(len(batch.pronoun))
    loss = -weights[n, batch.pronoun, batch.antecedent].clamp_min(1e-9).log().mean()
    if two_way:
        loss = loss - weights[n, batch.antecedent, batch.pronoun].clamp_min(1e-9).log().mean()
    return loss


@torch.no_grad()
def lookup_accuracy(model: ProjectedAttention, batch: LookupBatch) -> dict[str, float]:
    """What the pronoun's and the antecedent's weights do, averaged over the batch.

    Returns a dict with

    * ``"found"``: the fraction of sentences whose pronoun puts its largest weight on its
      antecedent;
    * ``"pronoun → antecedent"``: the mean weight the pronoun puts on its antecedent;
    * ``"antecedent → pronoun"``: the mean weight the antecedent puts back on the pronoun;
    * ``"weaker of the two"``: the mean over sentences of the smaller of those two weights.
    """
    _, weights = model(batch.x, batch.keep)  # (N, L, L)
    n = torch.arange(len(batch.pronoun))
    forward = weights[n, batch.pronoun]  # (N, L): the pronoun's weights
    there = forward[n, batch.antecedent]  # (N,)
    back = weights[n, batch.antecedent, batch.pronoun]  # (N,)
    return {
        "found": (forward.argmax(-1) == batch.antecedent).float().mean().item(),
        "pronoun → antecedent": there.mean().item(),
        "antecedent → pronoun": back.mean().item(),
        "weaker of the two": torch.minimum(there, back).mean().item(),
    }


def train_lookup(
    sentences: Sequence[PronounSentence],
    *,
    tie_query_key: bool = False,
    two_way: bool = False,
    seed: int = 0,
    steps: int = 200,
    head_dim: int = len(FEATURES),
    lr: float = 0.05,
    progress: bool = False,
) -> ProjectedAttention:
    """Train a :class:`ProjectedAttention` on ``sentences``; deterministic given ``seed``.

    Each step takes 32 sentences drawn (with replacement) by a generator seeded with ``seed``,
    and makes one AdamW step on :func:`lookup_loss`. The matrices start random (seeded too).
    """
    seed_everything(seed)
    model = ProjectedAttention(len(FEATURES), head_dim, tie_query_key=tie_query_key)
    config = TrainConfig(
        steps=steps, batch_size=32, lr=lr, warmup_steps=10, seed=seed, progress=progress
    )
    fit(model, batch_maker(sentences), lambda m, b: lookup_loss(m, b, two_way), config)
    return model


def batch_maker(
    sentences: Sequence[PronounSentence],
) -> Callable[[int, torch.Generator], LookupBatch]:
    """``make_batch(size, generator)``: ``size`` of the sentences, drawn with replacement."""
    batch = encode(sentences)

    def make_batch(size: int, generator: torch.Generator) -> LookupBatch:
        pick = torch.randint(len(sentences), (size,), generator=generator)  # (size,)
        return LookupBatch(*(t[pick] for t in batch))

    return make_batch
