"""The chapter 17 checkers accept right answers and name the usual mistakes."""

import pytest
import torch

from attnbook.exercises import check_candidate_hits, check_previous_weight


def previous(weights, attention_mask):
    real = attention_mask.bool()
    queries = (real[:, 1:] & real[:, :-1]).float()[:, None, :]
    on_previous = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)
    return (on_previous * queries).sum((0, 2)) / queries.sum((0, 2))


def previous_mask_inverted(weights, attention_mask):  # reads the mask as True = padding
    padding = attention_mask.bool()
    queries = (~padding[:, 1:] & ~padding[:, :-1]).float()[:, None, :]
    on_previous = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)
    return (on_previous * queries).sum((0, 2)) / queries.sum((0, 2)).clamp_min(1)


def previous_next_token(weights, attention_mask):
    real = attention_mask.bool()
    queries = (real[:, :-1] & real[:, 1:]).float()[:, None, :]
    on_next = torch.diagonal(weights, offset=1, dim1=-2, dim2=-1)
    return (on_next * queries).sum((0, 2)) / queries.sum((0, 2))


def test_the_right_previous_weight_passes():
    assert check_previous_weight(previous).passed


@pytest.mark.parametrize(
    "fn, words",
    [
        (previous_mask_inverted, "wrong way round"),
        (previous_next_token, "NEXT token"),
        (lambda w, m: torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean((0, 2)), "padding"),
    ],
)
def test_wrong_previous_weights_are_named(fn, words):
    report = check_previous_weight(fn)
    assert not report.passed and words in str(report), str(report)


def test_next_token_is_not_called_an_inverted_mask():
    assert "wrong way round" not in str(check_previous_weight(previous_next_token))


def hits(weights, pronoun, candidates, antecedent):
    n = torch.arange(len(pronoun))
    row = weights[n, :, pronoun]  # (N, H, L)
    picked = row.gather(-1, candidates[:, None, :].expand(-1, row.size(1), 2))
    return ((picked[..., 1] > picked[..., 0]).long() == antecedent[:, None]).float().mean(0)


def hits_over_half(weights, pronoun, candidates, antecedent):
    n = torch.arange(len(pronoun))
    return (weights[n, :, pronoun, candidates[n, antecedent]] > 0.5).float().mean(0)


def test_the_right_hits_pass():
    assert check_candidate_hits(hits).passed


@pytest.mark.parametrize(
    "fn, words",
    [
        (hits_over_half, "more than half"),
        (lambda w, p, c, a: hits(w.transpose(-1, -2), p, c, a), "COLUMN"),
        (lambda w, p, c, a: hits(w, p, c, torch.zeros_like(a)), "FIRST name"),
    ],
)
def test_wrong_hits_are_named(fn, words):
    report = check_candidate_hits(fn)
    assert not report.passed and words in str(report), str(report)
