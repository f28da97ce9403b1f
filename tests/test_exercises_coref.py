"""Part III checkers accept right answers and name the usual mistakes."""

import torch
import torch.nn.functional as F

from attnbook.exercises.coref import check_head_entropy, check_head_hits, check_pointer_loss


def test_pointer_loss_checker_accepts_cross_entropy():
    assert check_pointer_loss(lambda logits, target: F.cross_entropy(logits, target)).passed


def test_pointer_loss_checker_names_the_one_hot_nan():
    def one_hot_loss(logits, target):
        return -(F.one_hot(target, logits.shape[1]) * logits.log_softmax(-1)).sum(-1).mean()

    report = check_pointer_loss(one_hot_loss)
    assert not report.passed and "0 · (-inf) is NaN" in str(report)


def test_pointer_loss_checker_names_a_missing_log_softmax_and_a_sum():
    assert "log_softmax first" in str(check_pointer_loss(lambda l, t: F.nll_loss(l, t)))
    assert "take the mean" in str(check_pointer_loss(lambda l, t: F.cross_entropy(l, t, reduction="sum")))


def right_hits(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, pronoun]
    return (rows.argmax(-1) == antecedent[:, None]).float().mean(0)


def test_head_hits_checker_accepts_the_row_argmax_and_names_the_column_mistake():
    assert check_head_hits(right_hits).passed

    def column(weights, pronoun, antecedent):
        return right_hits(weights.transpose(-1, -2), pronoun, antecedent)

    report = check_head_hits(column)
    assert not report.passed and "pronoun's column" in str(report)


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
