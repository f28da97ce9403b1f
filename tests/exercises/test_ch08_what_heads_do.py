"""The chapter 8 checker accepts the right answer and names the usual mistakes."""

import torch

from attnbook.exercises import check_head_entropy


def right_entropy(weights, padding):
    plogp = torch.where(weights > 0, weights * weights.log(), torch.zeros(()))
    rows = -plogp.sum(-1)
    real = (~padding).float()[:, None, :]
    return (rows * real).sum((0, 2)) / real.sum((0, 2))


def test_head_entropy_checker_accepts_the_masked_mean_and_names_nan_and_padding():
    assert check_head_entropy(right_entropy).passed
    naive = lambda w, p: -(w * w.log()).sum(-1).mean((0, 2))  # noqa: E731
    assert "0 · log 0" in str(check_head_entropy(naive))
    unmasked = lambda w, p: right_entropy(w, torch.zeros_like(p))  # noqa: E731
    assert "padding queries" in str(check_head_entropy(unmasked))
