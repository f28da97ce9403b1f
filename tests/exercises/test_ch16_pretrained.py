"""The chapter 16 checkers accept right answers and name the usual mistakes."""

import pytest
import torch.nn.functional as F

from attnbook.exercises import check_bert_param_count, check_mean_pool, check_predicted_tokens


def count(V, E, layers, Fd, P, T):
    return (V + P + T) * E + 2 * E + layers * (4 * E * E + 4 * E + 2 * E * Fd + Fd + E + 4 * E)


WRONG_COUNTS = {
    "with the pooler": (lambda *a: count(*a) + a[1] ** 2 + a[1], "pooler"),
    "no biases": (lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - n * (5 * E + Fd), "biases"),
    "blocks only": (
        lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - (V + P + T + 2) * E,
        "embeddings",
    ),
    "3E² attention": (
        lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - n * (E * E + E),
        "output projection",
    ),
    "no norms": (
        lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - (4 * n + 2) * E,
        "layer norms",
    ),
    "a fraction": (lambda *a: count(*a) + 0.5, "integer"),
    "4E per block": (
        lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - 4 * n * E,
        "attention biases",
    ),
    "one norm per block": (
        lambda V, E, n, Fd, P, T: count(V, E, n, Fd, P, T) - 2 * n * E,
        "one layer norm per block",
    ),
}


def test_a_whole_float_counts_as_the_number():
    assert check_bert_param_count(lambda *a: float(count(*a))).passed


def test_the_right_count_passes():
    assert check_bert_param_count(count).passed


@pytest.mark.parametrize("name", WRONG_COUNTS)
def test_wrong_counts_are_named(name):
    fn, words = WRONG_COUNTS[name]
    report = check_bert_param_count(fn)
    assert not report.passed and words in str(report), str(report)


def pool(hidden, mask):
    real = mask.unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * real).sum(1), dim=-1)  # dividing by the count changes nothing


def in_place(hidden, mask):
    hidden *= mask.unsqueeze(-1)
    return F.normalize(hidden.sum(1), dim=-1)


WRONG_POOLS = {
    "mean over padding": (lambda h, m: F.normalize(h.mean(1), dim=-1), "padding too"),
    "not normalised": (
        lambda h, m: (h * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True),
        "not normalised",
    ),
    "mask read the other way": (lambda h, m: pool(h, 1 - m.long()), "padding only"),
    "first token": (lambda h, m: F.normalize(h[:, 0], dim=-1), "[CLS]"),
    "normalised across sentences": (
        lambda h, m: F.normalize((h * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True), dim=0),
        "wrong dimension",
    ),
    "edits its input": (in_place, "in place"),
}


def test_the_right_pooling_passes():
    assert check_mean_pool(pool).passed


@pytest.mark.parametrize("name", WRONG_POOLS)
def test_wrong_pooling_is_named(name):
    fn, words = WRONG_POOLS[name]
    report = check_mean_pool(fn)
    assert not report.passed and words in str(report), str(report)


RIGHT_TOKENS = [
    "[CLS]",
    "old",
    "zhang",
    "(",
    "[UNK]",
    "[UNK]",
    ")",
    "inter",
    "##rogated",
    "the",
    "witness",
    ".",
    "[SEP]",
]


def test_the_right_tokens_pass():
    assert check_predicted_tokens(RIGHT_TOKENS).passed


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t[1:-1], "[CLS]"),
        (lambda t: [t[0], "Old", "Zhang", *t[3:]], "lower-cases"),
        (lambda t: [*t[:4], "老", "张", *t[6:]], "[UNK]"),
        (lambda t: [*t[:4], "[UNK]", *t[6:]], "two tokens"),
        (lambda t: [*t[:7], "interrogated", *t[9:]], "'inter' and '##rogated'"),
        (lambda t: [*t[:8], "rogated", *t[9:]], "'##'"),
        (lambda t: [*t[:7], "interrogate", "##d", *t[9:]], "greedily"),
        (lambda t: [*t[:10], "witness.", t[-1]], "punctuation"),
        (lambda t: "old zhang", "list of strings"),
    ],
)
def test_wrong_tokens_are_named(edit, words):
    report = check_predicted_tokens(edit(list(RIGHT_TOKENS)))
    assert not report.passed and words in str(report), str(report)
