"""The chapter 8 checker accepts right entropies and names the usual mistakes."""

import math

import pytest
import torch

from attnbook.exercises import check_head_entropy


def book_solution(weights, key_padding_mask):
    plogp = torch.where(weights > 0, weights * weights.log(), torch.zeros(()))
    rows = -plogp.sum(-1)
    real = (~key_padding_mask).float()[:, None, :]
    return (rows * real).sum((0, 2)) / real.sum((0, 2))


def with_xlogy(weights, key_padding_mask):
    rows = -torch.special.xlogy(weights, weights).sum(-1)  # (N, H, S); xlogy(0, 0) = 0
    real = ~key_padding_mask
    return torch.stack([rows[:, h][real].mean() for h in range(weights.size(1))])


def per_sentence_first(weights, key_padding_mask):
    rows = -torch.special.xlogy(weights, weights).sum(-1)
    real = (~key_padding_mask).float()[:, None, :]
    return ((rows * real).sum(-1) / real.sum(-1)).mean(0)


RIGHT = {"the book's solution": book_solution, "xlogy and boolean indexing": with_xlogy}
WRONG = {
    "0 log 0 is NaN": (lambda w, m: -(w * w.log()).sum(-1).mean((0, 2)), "0 · log 0"),
    "padding queries counted": (
        lambda w, m: -torch.special.xlogy(w, w).sum(-1).mean((0, 2)),
        "padding queries too",
    ),
    "sign": (lambda w, m: -book_solution(w, m), "the sign is wrong"),
    "per sentence, then over sentences": (per_sentence_first, "you average per sentence first"),
    "bits": (lambda w, m: book_solution(w, m) / math.log(2), "nats"),
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_entropies_pass(name):
    report = check_head_entropy(RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", WRONG)
def test_wrong_entropies_are_named(name):
    fn, fragment = WRONG[name]
    report = check_head_entropy(fn)
    assert not report.passed and fragment in str(report), str(report)
