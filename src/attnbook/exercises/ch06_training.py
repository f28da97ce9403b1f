"""Chapter 6's checker: the pointer loss.

``my_pointer_loss(logits, target)``: logits (N, S) with ``-inf`` on positions that cannot be
chosen (padding), target (N,) integer positions; the mean cross-entropy.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.exercises.report import Report

__all__ = ["check_pointer_loss"]

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
                return (
                    f"got NaN {what}: 0 · log(0) = 0 · (-inf) is NaN; pick the target's "
                    "log-probability with indexing or gather instead of multiplying by a one-hot"
                )
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
