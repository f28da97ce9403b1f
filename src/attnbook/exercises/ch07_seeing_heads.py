"""Chapter 7's checker: how often each head's pronoun row peaks on the antecedent.

``my_head_hits(weights, pronoun, antecedent)``: weights (N, H, S, S) of one layer; for each head,
the fraction of sentences whose pronoun row has its largest weight on the antecedent; (H,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import Report
from attnbook.interp.heads import pronoun_hits

__all__ = ["check_head_hits"]

ATOL = 1e-5


def _as_tensor(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float32)


def check_head_hits(my_head_hits: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the fraction of sentences where each head's pronoun row peaks on the antecedent."""
    report = Report("head hits")
    weights, _, pronoun, antecedent = random_attention()
    expected = pronoun_hits(weights, pronoun, antecedent)

    def case() -> str | None:
        out = _as_tensor(my_head_hits(weights, pronoun, antecedent))
        if out.shape != expected.shape:
            return f"return one number per head, shape (H,) = {tuple(expected.shape)}; got {tuple(out.shape)}"
        if torch.allclose(out, expected, atol=ATOL):
            return None
        column = weights[torch.arange(len(pronoun)), :, :, pronoun]  # the pronoun's column
        if torch.allclose(
            out, (column.argmax(-1) == antecedent[:, None]).float().mean(0), atol=ATOL
        ):
            return (
                "you read the pronoun's column (who attends TO it); read its row: "
                "weights[n, h, pronoun[n], :] is where the pronoun looks"
            )
        if torch.allclose(
            out, weights[torch.arange(len(pronoun)), :, pronoun, antecedent].mean(0), atol=ATOL
        ):
            return (
                "you average the weight on the antecedent; count how often it is the LARGEST weight"
            )
        return f"expected {expected.tolist()}, got {out.tolist()}"

    report.run("one hit rate per head, from the pronoun's row", case)
    return report
