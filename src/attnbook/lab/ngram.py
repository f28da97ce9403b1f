"""Counting baselines for a language model: unigram and n-gram models, and their held-out loss.

A Transformer trained on text should be compared with models that only count. An **n-gram
model** predicts each token from the n - 1 tokens before it, with probabilities read off counts
in the training stream:

* n = 1, the **unigram** model, ignores the context: p(w) = (c(w) + k) / (N + k V), where c(w) is
  w's count among the N training tokens; the k added to every count (add-one, or Laplace,
  smoothing for k = 1) gives a token never seen in training some probability.
* n >= 2 uses **interpolated Kneser-Ney** smoothing (Kneser & Ney 1995, in the interpolated form
  that Chen & Goodman 1999 found better than backing off). For a context h of n - 1 tokens::

      p(w | h) = max(c(h w) - D, 0) / c(h)  +  D N(h .) / c(h) * p(w | h-)

  where h- is h without its oldest token, c(h) the count of h followed by any token, N(h .) the
  number of distinct tokens seen after h, and D the order's discount: every count seen gives up
  D, and what is given up goes to the shorter context's distribution. Below the top order, c
  counts *continuations*: c(h- w) is the number of distinct tokens seen just before h- w, so that
  a token frequent after one word only (Francisco after San) gets little weight after a new one.
  The shortest context (none) mixes with the uniform 1/V, so no token has probability 0, and a
  context never seen in training falls back on the shorter one entirely. One discount per order,
  D = n1 / (n1 + 2 n2), with n1 and n2 the numbers of that order's n-grams counted once and twice
  (Ney, Essen & Kneser 1994), clipped to [0.05, 0.95]. Chen & Goodman's *modified* Kneser-Ney,
  the best of the methods they compared, uses three discounts per order instead of one.

:func:`ngram_loss` scores a held-out stream as a causal Transformer is scored: every token after
the first, given up to n - 1 tokens before it (the first n - 2 of them see fewer). It returns the
cross-entropy in nats per token and the perplexity, exp(cross-entropy): a model with perplexity
P is as surprised as if it chose uniformly among P tokens.

References: S. F. Chen and J. Goodman, "An empirical study of smoothing techniques for language
modeling", Computer Speech & Language 13(4):359-394, 1999. R. Kneser and H. Ney, "Improved
backing-off for M-gram language modeling", ICASSP 1995, pp. 181-184. H. Ney, U. Essen and
R. Kneser, "On structuring probabilistic dependences in stochastic language modelling",
Computer Speech & Language 8(1):1-38, 1994.

Shape legend: V ``vocab_size``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

__all__ = ["NGramModel", "ngram_loss", "ngram_model"]

#: Followers of one context: ``({token: count}, total count, number of distinct tokens)``.
Row = tuple[dict[int, int], int, int]


def _as_ids(ids: Sequence[int] | Tensor, vocab_size: int, name: str) -> list[int]:
    """``ids`` as a list of ints in [0, vocab_size), or an error that names the argument."""
    if isinstance(ids, Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(
                f"{name} must be a 1-D integer tensor; got {ids.dtype} {tuple(ids.shape)}"
            )
        ids = ids.tolist()
    elif isinstance(ids, (str, bytes)) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in ids
    ):
        raise TypeError(f"{name} must be a sequence of ints or a 1-D integer tensor")
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"{name} must be in [0, vocab_size={vocab_size}); got {bad[:5]}")
    return list(ids)


@dataclass(frozen=True, eq=False)
class NGramModel:
    """Counts of a training stream, read as probabilities (build it with :func:`ngram_model`)."""

    n: int  # tokens per n-gram: the context is the n - 1 before
    vocab_size: int  # V
    k: float  # added to every count of the unigram model (n = 1)
    # rows[j]: context of j tokens -> its followers (raw counts at j = n - 1, continuations below)
    rows: tuple[dict[tuple[int, ...], Row], ...] = field(repr=False)
    discounts: tuple[float, ...]  # discounts[j]: D of contexts of j tokens (n >= 2)

    def _context(self, context: Sequence[int] | Tensor) -> tuple[int, ...]:
        ids = _as_ids(context, self.vocab_size, "context")
        return tuple(ids[len(ids) - (self.n - 1) :]) if self.n > 1 else ()

    def prob(self, context: Sequence[int] | Tensor, token: int) -> float:
        """p(token | the last n - 1 tokens of ``context``); a shorter context is used as it is."""
        (token,) = _as_ids([token], self.vocab_size, "token")
        return self._prob(self._context(context), token)

    def _prob(self, context: tuple[int, ...], token: int) -> float:
        if self.n == 1:
            followers, total, _ = self.rows[0][()]
            return (followers.get(token, 0) + self.k) / (total + self.k * self.vocab_size)
        p = 1.0 / self.vocab_size
        for j in range(len(context) + 1):  # contexts of 0, 1, ... tokens: shortest first
            row = self.rows[j].get(context[len(context) - j :])
            if row is None:  # never seen, so no longer context was either
                break
            followers, total, distinct = row
            d = self.discounts[j]
            p = max(followers.get(token, 0) - d, 0) / total + d * distinct / total * p
        return p

    def distribution(self, context: Sequence[int] | Tensor) -> Tensor:
        """p(w | ``context``) for every token w: a float64 tensor (V,) that sums to 1."""
        context = self._context(context)
        if self.n == 1:
            followers, total, _ = self.rows[0][()]
            counts = torch.zeros(self.vocab_size, dtype=torch.float64)
            counts[list(followers)] = torch.tensor(list(followers.values()), dtype=torch.float64)
            return (counts + self.k) / (total + self.k * self.vocab_size)
        p = torch.full((self.vocab_size,), 1.0 / self.vocab_size, dtype=torch.float64)
        for j in range(len(context) + 1):
            row = self.rows[j].get(context[len(context) - j :])
            if row is None:
                break
            followers, total, distinct = row
            d = self.discounts[j]
            counts = torch.tensor(list(followers.values()), dtype=torch.float64)
            p = p * (d * distinct / total)
            p[list(followers)] += (counts - d).clamp(min=0) / total
        return p


def _rows(grams: Counter) -> dict[tuple[int, ...], Row]:
    """Group n-gram counts by context (all but the last token)."""
    followers: dict[tuple[int, ...], dict[int, int]] = defaultdict(dict)
    for gram, count in grams.items():
        followers[gram[:-1]][gram[-1]] = count
    return {h: (f, sum(f.values()), len(f)) for h, f in followers.items()}


def _discount(grams: Counter) -> float:
    once = sum(1 for c in grams.values() if c == 1)
    twice = sum(1 for c in grams.values() if c == 2)
    d = once / (once + 2 * twice) if once + twice else 0.5
    return min(max(d, 0.05), 0.95)


def ngram_model(
    train_ids: Sequence[int] | Tensor, n: int, vocab_size: int, *, k: float = 1.0
) -> NGramModel:
    """Count the n-grams of ``train_ids`` (a list or a 1-D tensor of ids in [0, vocab_size)).

    Args:
        train_ids: the training stream, at least ``n`` tokens.
        n: 1 for the unigram model (add-``k``), 2 or more for interpolated Kneser-Ney.
        vocab_size: V, the number of possible tokens (the tokenizer's, not only those seen).
        k: added to every unigram count (n = 1 only); 1 is add-one smoothing.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise ValueError(f"vocab_size must be an int >= 1; got {vocab_size!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1; got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ValueError(f"k must be a number > 0; got {k!r}")
    ids = _as_ids(train_ids, vocab_size, "train_ids")
    if len(ids) < n:
        raise ValueError(f"train_ids holds {len(ids)} tokens, fewer than n={n}")
    grams = Counter(zip(*(ids[i : len(ids) - n + 1 + i] for i in range(n))))  # n-grams
    levels = [grams]
    for _ in range(n - 1):  # continuation counts: how many distinct tokens came just before
        levels.append(Counter(gram[1:] for gram in levels[-1]))
    levels.reverse()  # levels[j]: grams of j + 1 tokens, i.e. contexts of j tokens
    return NGramModel(
        n=n,
        vocab_size=vocab_size,
        k=float(k),
        rows=tuple(_rows(level) for level in levels),
        discounts=tuple(_discount(level) for level in levels),
    )


def ngram_loss(model: NGramModel, ids: Sequence[int] | Tensor) -> tuple[float, float]:
    """The cross-entropy (nats per token) and perplexity of ``model`` on the stream ``ids``.

    Every token but the first is scored, given up to ``model.n - 1`` tokens before it.

    Returns:
        ``(cross_entropy, perplexity)``, with perplexity = exp(cross_entropy).
    """
    if not isinstance(model, NGramModel):
        raise TypeError(f"model must be an NGramModel; got {type(model).__name__}")
    ids = _as_ids(ids, model.vocab_size, "ids")
    if len(ids) < 2:
        raise ValueError(f"ids must hold at least 2 tokens (one to score); got {len(ids)}")
    width = model.n - 1
    total = 0.0
    for t in range(1, len(ids)):
        context = tuple(ids[max(0, t - width) : t]) if width else ()
        total -= math.log(model._prob(context, ids[t]))
    cross_entropy = total / (len(ids) - 1)
    return cross_entropy, math.exp(cross_entropy)
