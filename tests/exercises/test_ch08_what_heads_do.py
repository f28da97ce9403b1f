"""The chapter 8 checker accepts right entropies and names the usual mistakes."""

import math

import pytest
import torch

from attnbook.exercises import check_head_entropy, check_replace_head


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
    "padding mask read the other way round": (
        lambda w, m: book_solution(w, ~m),
        "key_padding_mask is True on padding",
    ),
    "per sentence, then over sentences": (per_sentence_first, "you average per sentence first"),
    "bits": (lambda w, m: book_solution(w, m) / math.log(2), "nats"),
    "heads pooled": (
        lambda w, m: book_solution(w, m).mean().expand(w.size(1)),
        "the mean over all heads",
    ),
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


# -- replace one head --------------------------------------------------------------------------
def replace_by_view(x, head, num_heads, value):
    out = x.clone()
    out.unflatten(-1, (num_heads, -1))[..., head, :] = value  # (N, S, H, D) view of the copy
    return out


def replace_by_cat(x, head, num_heads, value):
    parts = list(x.split(x.size(-1) // num_heads, dim=-1))
    parts[head] = torch.zeros_like(parts[head]) + value
    return torch.cat(parts, dim=-1)


def interleaved(x, head, num_heads, value):
    out = x.clone()
    out[..., head::num_heads] = value
    return out


def one_based(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., (head + 1) * D : (head + 2) * D] = value  # empty for the last head
    return out


def in_place(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    x[..., head * D : (head + 1) * D] = value
    return x


def every_feature(x, head, num_heads, value):
    return torch.zeros_like(x) + (value if isinstance(value, float) else value.mean())


def value_not_broadcast(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., head * D : (head + 1) * D] = torch.as_tensor(value).mean()
    return out


def inclusive_end(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., head * D : (head + 1) * D - 1] = (
        torch.as_tensor(value)[..., :-1] if torch.is_tensor(value) else value
    )
    return out


def scaled(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., head * D : (head + 1) * D] *= value
    return out


def shifted(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., head * D : (head + 1) * D] += value
    return out


RIGHT_REPLACE = {"a view of a copy": replace_by_view, "split and cat": replace_by_cat}
WRONG_REPLACE = {
    "interleaved heads": (interleaved, "every H-th feature"),
    "counted from 1": (one_based, "counted from 0"),
    "changed in place": (in_place, "in place"),
    "every feature set": (every_feature, "you set every feature"),
    "value averaged": (value_not_broadcast, "broadcast it"),
    "slice end taken as inclusive": (inclusive_end, "slice ends are exclusive"),
    "features scaled by the value": (scaled, "don't scale or shift them"),
    "value added to the features": (shifted, "don't scale or shift them"),
    "returns the input": (lambda x, head, num_heads, value: x, "nothing changed"),
    "wrong shape": (lambda x, head, num_heads, value: x[..., :1], "must return shape"),
}


@pytest.mark.parametrize("name", RIGHT_REPLACE)
def test_right_head_replacements_pass(name):
    report = check_replace_head(RIGHT_REPLACE[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", WRONG_REPLACE)
def test_wrong_head_replacements_are_named(name):
    fn, fragment = WRONG_REPLACE[name]
    report = check_replace_head(fn)
    assert not report.passed and fragment in str(report), str(report)
