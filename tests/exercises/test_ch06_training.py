"""The chapter 6 checker accepts the right answer and names the usual mistakes."""

import torch.nn.functional as F

from attnbook.exercises import check_pointer_loss


def test_pointer_loss_checker_accepts_cross_entropy():
    assert check_pointer_loss(lambda logits, target: F.cross_entropy(logits, target)).passed


def test_pointer_loss_checker_names_the_one_hot_nan():
    def one_hot_loss(logits, target):
        return -(F.one_hot(target, logits.shape[1]) * logits.log_softmax(-1)).sum(-1).mean()

    report = check_pointer_loss(one_hot_loss)
    assert not report.passed and "0 · (-inf) is NaN" in str(report)


def test_pointer_loss_checker_names_a_missing_log_softmax_and_a_sum():
    assert "log_softmax first" in str(check_pointer_loss(lambda l, t: F.nll_loss(l, t)))
    assert "take the mean" in str(
        check_pointer_loss(lambda l, t: F.cross_entropy(l, t, reduction="sum"))
    )
