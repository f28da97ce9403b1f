"""Synthetic sequence tasks for the lab model: each tests one thing attention must do.

Every function draws ``n`` examples from ``generator`` and returns ``(tokens, targets)``, both
(N, L) int64; positions that are not scored have target ``IGNORE`` (-100).

* :func:`recall` — associative recall: stored key–value pairs, then keys → the values stored
  with them. Each query must find one pair among many by *content*: diffuse attention fails it.
* :func:`shift` — every position outputs the token ``offset`` places earlier: a purely *relative*
  positional lookup, the cleanest test of how positions extrapolate beyond the training length.
* :func:`local_global` — every position outputs ``(previous token + majority token) mod V``: one
  part needs a neighbour (local), the other a count over the whole sequence (global).
* :class:`FixedPool` — a finite training set (to make overfitting, and what fights it, visible).

Shape legend: N examples, L length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from attnbook.lab.lab_model import IGNORE

__all__ = ["recall", "recall_sizes", "shift", "local_global", "FixedPool"]


def recall_sizes(num_keys: int = 16, num_values: int = 16) -> tuple[int, int]:
    """``(vocab_size, num_classes)`` of :func:`recall`: pair tokens, query tokens; values."""
    return num_keys * num_values + num_keys, num_values


def recall(
    n: int,
    generator: torch.Generator,
    *,
    num_pairs: int = 8,
    num_queries: int = 4,
    num_keys: int = 16,
    num_values: int = 16,
) -> tuple[Tensor, Tensor]:
    """Associative recall: ``num_pairs`` stored pairs with distinct keys, then queries.

    A stored pair is one token, ``key * num_values + value`` (so one layer of attention can
    answer); a query is the token ``num_keys * num_values + key`` for one of the stored keys.
    Each query position is scored: its target is the value stored with its key. Answering needs
    the query to find the one pair with its key, by content, among ``num_pairs``; attention that
    spreads its weight averages several values and cannot. Length ``num_pairs + num_queries``.
    """
    if not 1 <= num_pairs <= num_keys or num_queries < 1:
        raise ValueError(
            f"need 1 <= num_pairs <= num_keys={num_keys} and num_queries >= 1; "
            f"got {num_pairs}, {num_queries}"
        )
    keys = torch.rand(n, num_keys, generator=generator).argsort(-1)[:, :num_pairs]  # distinct
    values = torch.randint(num_values, (n, num_pairs), generator=generator)
    asked = torch.randint(num_pairs, (n, num_queries), generator=generator)
    queries = keys.gather(1, asked) + num_keys * num_values
    tokens = torch.cat((keys * num_values + values, queries), dim=1)  # (N, P + Q)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, num_pairs:] = values.gather(1, asked)
    return tokens, targets


def shift(
    n: int, generator: torch.Generator, *, length: int = 32, offset: int = 2, vocab: int = 16
) -> tuple[Tensor, Tensor]:
    """Random tokens; position ``i >= offset`` must output the token at ``i - offset``."""
    if not 0 < offset < length:
        raise ValueError(f"offset must be in [1, length={length}); got {offset}")
    tokens = torch.randint(vocab, (n, length), generator=generator)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, offset:] = tokens[:, :-offset]
    return tokens, targets


def local_global(
    n: int, generator: torch.Generator, *, length: int = 24, vocab: int = 8, share: float = 0.4
) -> tuple[Tensor, Tensor]:
    """Position ``i >= 1`` outputs ``(token[i-1] + majority) mod vocab``.

    One token, the *majority*, fills ``round(share * length)`` random positions; the others are
    drawn from the remaining tokens so that none of them is as frequent (redrawn until so).
    """
    count = round(share * length)
    if not 1 < count < length or vocab < 3:
        raise ValueError(
            f"need 1 < share*length < length and vocab >= 3; got {share}, {length}, {vocab}"
        )
    majority = torch.randint(vocab, (n,), generator=generator)
    others = (
        majority[:, None] + 1 + torch.randint(vocab - 1, (n, length), generator=generator)
    ) % vocab
    for _ in range(100):  # redraw rows where another token is as frequent as the majority
        counts = torch.nn.functional.one_hot(others, vocab).sum(1)  # (N, V)
        bad = counts.max(-1).values >= count
        if not bad.any():
            break
        redraw = torch.randint(vocab - 1, (int(bad.sum()), length), generator=generator)
        others[bad] = (majority[bad, None] + 1 + redraw) % vocab
    else:  # pragma: no cover - needs share far too small
        raise ValueError(f"share={share} too small for a clear majority at length {length}")
    place = torch.rand(n, length, generator=generator).argsort(-1) < count  # (N, L) bool
    tokens = torch.where(place, majority[:, None], others)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, 1:] = (tokens[:, :-1] + majority[:, None]) % vocab
    return tokens, targets


@dataclass
class FixedPool:
    """A finite training set: ``sample`` draws rows (with replacement) from ``size`` examples.

    Args:
        tokens, targets: (size, L) the pool, e.g. from ``recall(size, generator)``.
    """

    tokens: Tensor
    targets: Tensor

    def __post_init__(self) -> None:
        if self.tokens.shape != self.targets.shape or self.tokens.dim() != 2:
            raise ValueError(
                f"tokens and targets must be the same (size, L); got {tuple(self.tokens.shape)} "
                f"and {tuple(self.targets.shape)}"
            )

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``n`` rows drawn uniformly from the pool; usable as ``fit``'s ``make_batch``."""
        rows = torch.randint(self.tokens.size(0), (n,), generator=generator)
        return self.tokens[rows], self.targets[rows]
