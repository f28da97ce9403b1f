"""Checkers for Part III (chapters 6–8): the pointer loss, a head's hit rate, a head's entropy.

* Chapter 6 — ``my_pointer_loss(logits, target)``: logits (N, S) with ``-inf`` on positions that
  cannot be chosen (padding), target (N,) integer positions; the mean cross-entropy.
* Chapter 7 — ``my_head_hits(weights, pronoun, antecedent)``: weights (N, H, S, S) of one layer;
  for each head, the fraction of sentences whose pronoun row has its largest weight on the
  antecedent; returns (H,).
* Chapter 8 — ``my_head_entropy(weights, key_padding_mask)``: weights (N, H, S, S); the entropy
  (in nats) of each head's rows, averaged over the real (non-padding) query positions; (H,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.exercises.report import Report

__all__ = ["check_pointer_loss", "check_head_hits", "check_head_entropy"]

ATOL = 1e-5


def _as_tensor(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float32)


def _logits(seed: int = 0) -> tuple[Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(4, 6, generator=g) * 2
    logits[0, 4:] = float("-inf")  # two padding positions
    logits[2, 5] = float("-inf")
    return logits, torch.tensor([1, 5, 0, 3])


def check_pointer_loss(my_pointer_loss: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 6: compare the reader's pointer loss with ``F.cross_entropy``."""
    report = Report("pointer loss")
    logits, target = _logits()
    finite = logits.clone()
    finite[torch.isinf(finite)] = -30.0

    def scalar() -> str | None:
        out = _as_tensor(my_pointer_loss(finite, target))
        if out.shape != ():
            return f"return one number (the mean over sentences), shape (); got {tuple(out.shape)}"
        return None

    def matches(x: Tensor, what: str) -> Callable[[], str | None]:
        def case() -> str | None:
            out = _as_tensor(my_pointer_loss(x, target))
            expected = F.cross_entropy(x, target)
            if torch.isnan(out).any():
                return (f"got NaN {what}: 0 · log(0) = 0 · (-inf) is NaN; pick the target's "
                        "log-probability with indexing or gather instead of multiplying by a one-hot")
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if torch.allclose(out, -expected, atol=ATOL):
                return "the sign is wrong: the loss is MINUS the log-probability of the target"
            if torch.allclose(out, F.cross_entropy(x, target, reduction="sum"), atol=ATOL):
                return "you sum over sentences; take the mean"
            if torch.allclose(out, F.nll_loss(x, target), atol=ATOL):
                return "you use the raw scores as log-probabilities; apply log_softmax first"
            return f"expected {expected.item():.5f}, got {out.item():.5f}"
        return case

    def large() -> str | None:
        out = _as_tensor(my_pointer_loss(finite * 100, target))
        if not torch.isfinite(out):
            return "overflows for large scores: use log_softmax (or subtract the row maximum)"
        return None

    report.run("returns a scalar", scalar)
    report.run("equals F.cross_entropy on finite scores", matches(finite, "on finite scores"))
    report.run("handles -inf on padding positions", matches(logits, "with -inf on padding"))
    report.run("stays finite for very large scores", large)
    return report


def _weights(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
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


def _hits(weights: Tensor, pronoun: Tensor, antecedent: Tensor) -> Tensor:
    rows = weights[torch.arange(len(pronoun)), :, pronoun]  # (N, H, S)
    return (rows.argmax(-1) == antecedent[:, None]).float().mean(0)  # (H,)


def check_head_hits(my_head_hits: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the fraction of sentences where each head's pronoun row peaks on the antecedent."""
    report = Report("head hits")
    weights, _, pronoun, antecedent = _weights()
    expected = _hits(weights, pronoun, antecedent)

    def case() -> str | None:
        out = _as_tensor(my_head_hits(weights, pronoun, antecedent))
        if out.shape != expected.shape:
            return f"return one number per head, shape (H,) = {tuple(expected.shape)}; got {tuple(out.shape)}"
        if torch.allclose(out, expected, atol=ATOL):
            return None
        column = weights[torch.arange(len(pronoun)), :, :, pronoun]  # the pronoun's column
        if torch.allclose(out, (column.argmax(-1) == antecedent[:, None]).float().mean(0), atol=ATOL):
            return ("you read the pronoun's column (who attends TO it); read its row: "
                    "weights[n, h, pronoun[n], :] is where the pronoun looks")
        if torch.allclose(out, weights[torch.arange(len(pronoun)), :, pronoun, antecedent].mean(0),
                          atol=ATOL):
            return "you average the weight on the antecedent; count how often it is the LARGEST weight"
        return f"expected {expected.tolist()}, got {out.tolist()}"

    report.run("one hit rate per head, from the pronoun's row", case)
    return report


def _entropy(weights: Tensor, padding: Tensor) -> Tensor:
    plogp = torch.where(weights > 0, weights * weights.log(), torch.zeros(()))
    rows = -plogp.sum(-1)  # (N, H, S)
    real = (~padding).float()[:, None, :]  # (N, 1, S)
    return (rows * real).sum((0, 2)) / real.sum((0, 2))  # (H,)


def check_head_entropy(my_head_entropy: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 8: the mean entropy of each head's attention rows, padding queries excluded."""
    report = Report("head entropy")
    weights, padding, _, _ = _weights()
    expected = _entropy(weights, padding)

    def case() -> str | None:
        out = _as_tensor(my_head_entropy(weights, padding))
        if out.shape != expected.shape:
            return f"return one number per head, shape (H,) = {tuple(expected.shape)}; got {tuple(out.shape)}"
        if torch.isnan(out).any():
            return "got NaN: a zero weight gives 0 · log 0 = NaN in floating point; count 0 · log 0 as 0"
        if torch.allclose(out, expected, atol=1e-4):
            return None
        if torch.allclose(out, _entropy(weights, torch.zeros_like(padding)), atol=1e-4):
            return "you average over padding queries too; average over real query positions only"
        if torch.allclose(out, -expected, atol=1e-4):
            return "the sign is wrong: entropy is MINUS the sum of p log p"
        return f"expected {expected.tolist()}, got {out.tolist()}"

    def uniform() -> str | None:
        w = torch.full((1, 1, 4, 4), 0.25)
        out = _as_tensor(my_head_entropy(w, torch.zeros(1, 4, dtype=torch.bool)))
        if not torch.allclose(out, torch.tensor([4.0]).log(), atol=1e-4):
            return f"uniform weights over 4 keys have entropy log 4 = 1.386 nats; got {out.tolist()}"
        return None

    report.run("entropy per head, in nats, real queries only", case)
    report.run("uniform attention over 4 keys gives log 4", uniform)
    return report
