"""Chapter 8's checker: the entropy of each head's attention rows.

``my_head_entropy(weights, key_padding_mask)``: weights (N, H, S, S); the entropy (in nats) of
each head's rows, averaged over the real (non-padding) query positions; (H,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import Report
from attnbook.interp.heads import mean_row_entropy

__all__ = ["check_head_entropy"]

ATOL = 1e-5


def _as_tensor(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float32)


def check_head_entropy(my_head_entropy: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 8: the mean entropy of each head's attention rows, padding queries excluded."""
    report = Report("head entropy")
    weights, padding, _, _ = random_attention()
    expected = mean_row_entropy(weights, padding)

    def case() -> str | None:
        out = _as_tensor(my_head_entropy(weights, padding))
        if out.shape != expected.shape:
            return f"return one number per head, shape (H,) = {tuple(expected.shape)}; got {tuple(out.shape)}"
        if torch.isnan(out).any():
            return "got NaN: a zero weight gives 0 · log 0 = NaN in floating point; count 0 · log 0 as 0"
        if torch.allclose(out, expected, atol=1e-4):
            return None
        if torch.allclose(out, mean_row_entropy(weights, torch.zeros_like(padding)), atol=1e-4):
            return "you average over padding queries too; average over real query positions only"
        if torch.allclose(out, -expected, atol=1e-4):
            return "the sign is wrong: entropy is MINUS the sum of p log p"
        return f"expected {expected.tolist()}, got {out.tolist()}"

    def uniform() -> str | None:
        w = torch.full((1, 1, 4, 4), 0.25)
        out = _as_tensor(my_head_entropy(w, torch.zeros(1, 4, dtype=torch.bool)))
        if not torch.allclose(out, torch.tensor([4.0]).log(), atol=1e-4):
            return (
                f"uniform weights over 4 keys have entropy log 4 = 1.386 nats; got {out.tolist()}"
            )
        return None

    report.run("entropy per head, in nats, real queries only", case)
    report.run("uniform attention over 4 keys gives log 4", uniform)
    return report
