"""Chapter 8's checker: the entropy of each head's attention rows.

``my_head_entropy(weights, key_padding_mask)``: weights (N, H, S, S); the entropy (in nats) of
each head's rows, averaged over the real (non-padding) query positions; (H,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.interp.heads import mean_row_entropy

__all__ = ["check_head_entropy"]

ATOL = 1e-4


def _per_sentence_first(weights: Tensor, padding: Tensor) -> Tensor:
    """The other defensible average: each sentence's mean over its real queries, then the
    mean over sentences (short sentences then weigh as much as long ones)."""
    plogp = torch.where(weights > 0, weights * weights.clamp_min(1e-30).log(), 0.0)
    rows = -plogp.sum(-1)  # (N, H, S)
    real = (~padding).float()[:, None, :]
    return ((rows * real).sum(-1) / real.sum(-1)).mean(0)


def check_head_entropy(my_head_entropy: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 8: the mean entropy of each head's attention rows, padding queries excluded.

    The mean is over all real query positions of all sentences together: every real query
    counts once (the average :func:`~attnbook.interp.heads.mean_row_entropy` takes).
    """
    report = Report("head entropy")

    def case(seed: int, N: int, H: int, S: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, padding, _, _ = random_attention(seed, N, H, S)
            out = call(my_head_entropy, weights, padding)
            problem = expect_tensor(out, (H,), what="my_head_entropy")
            if problem is not None:
                return problem
            expected = mean_row_entropy(weights, padding)
            if torch.isnan(out).any():
                return "got NaN: a zero weight gives 0 · log 0 = NaN in floating point; count 0 · log 0 as 0"
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if torch.allclose(out, mean_row_entropy(weights, torch.zeros_like(padding)), atol=ATOL):
                return (
                    "you average over padding queries too; average over real query positions only"
                )
            if torch.allclose(out, -expected, atol=ATOL):
                return "the sign is wrong: entropy is MINUS the sum of p log p"
            if torch.allclose(out, _per_sentence_first(weights, padding), atol=ATOL):
                return (
                    "you average per sentence first, then over sentences; this exercise takes "
                    "one mean over all real queries of all sentences (each query counts once). "
                    "Both are defensible; they differ when sentences have different lengths"
                )
            if torch.allclose(out, expected / torch.log(torch.tensor(2.0)), atol=ATOL):
                return "you used log base 2 (bits); the exercise asks for nats, the natural log"
            return f"expected {[round(x, 4) for x in expected.tolist()]}, got {[round(x, 4) for x in out.tolist()]}"

        return run

    def uniform() -> str | None:
        w = torch.full((1, 1, 4, 4), 0.25)
        out = call(my_head_entropy, w, torch.zeros(1, 4, dtype=torch.bool))
        problem = expect_tensor(out, (1,), what="my_head_entropy")
        if problem is not None:
            return problem
        if not torch.allclose(out, torch.tensor([4.0]).log(), atol=ATOL):
            return (
                f"uniform weights over 4 keys have entropy log 4 = 1.386 nats; got {out.tolist()}"
            )
        return None

    report.run("6 sentences of different lengths, 3 heads", case(0, 6, 3, 7))
    report.run("9 sentences, 2 heads, 10 positions", case(1, 9, 2, 10))
    report.run("uniform attention over 4 keys gives log 4", uniform)
    weights, padding, _, _ = random_attention(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_head_entropy, ("weights", "key_padding_mask"), weights, padding),
    )
    return report
