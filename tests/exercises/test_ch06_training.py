"""The chapter 6 checker accepts a right pointer loss and names the usual mistakes."""

import pytest
import torch
import torch.nn.functional as F

from attnbook.exercises import check_pointer_loss


def book_solution(logits, target):
    log_p = logits.log_softmax(dim=-1)
    return -log_p[torch.arange(len(target)), target].mean()


def with_gather(logits, target):
    shifted = logits - logits.amax(-1, keepdim=True)
    log_p = shifted - shifted.exp().sum(-1, keepdim=True).log()
    return -log_p.gather(1, target[:, None]).squeeze(1).mean()


def one_hot(logits, target):
    return -(logits.log_softmax(-1) * F.one_hot(target, logits.size(-1))).sum(-1).mean()


def per_sentence(logits, target):
    return -logits.log_softmax(-1)[torch.arange(len(target)), target]


RIGHT = {"the book's solution": book_solution, "gather, max subtracted by hand": with_gather}
WRONG = {
    "one-hot times log_softmax": (one_hot, "0 · log(0)"),
    "one loss per sentence": (per_sentence, "one loss per sentence, shape (4,): add .mean()"),
    "F.cross_entropy, which is forbidden": (
        lambda x, t: F.cross_entropy(x, t),
        "without F.cross_entropy",
    ),
    "nn.CrossEntropyLoss": (
        lambda x, t: torch.nn.CrossEntropyLoss()(x, t),
        "without F.cross_entropy",
    ),
    "sign": (lambda x, t: -book_solution(x, t), "the sign is wrong"),
    "sum": (lambda x, t: book_solution(x, t) * len(t), "take the mean"),
    "no log_softmax": (lambda x, t: -x[torch.arange(len(t)), t].mean(), "apply log_softmax first"),
    "a tuple": (lambda x, t: (book_solution(x, t), None), "got a tuple"),
    "float64": (lambda x, t: book_solution(x.double(), t), "torch.float64"),
    "log_softmax over the sentences": (
        lambda x, t: -x.log_softmax(dim=0)[torch.arange(len(t)), t].mean(),
        "log_softmax(dim=-1)",
    ),
    "a number without gradient": (
        lambda x, t: torch.tensor(book_solution(x, t).item()),
        "carries no gradient",
    ),
    "detached": (lambda x, t: book_solution(x, t).detach(), "carries no gradient"),
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_losses_pass(name):
    report = check_pointer_loss(RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", WRONG)
def test_wrong_losses_are_named(name):
    fn, fragment = WRONG[name]
    report = check_pointer_loss(fn)
    assert not report.passed and fragment in str(report), str(report)
    assert "cannot be converted to Scalar" not in str(report)


def test_a_loss_with_the_wrong_gradient_is_named():
    # The right value, with twice the right gradient.
    def wrong_gradient(x, t):
        right = book_solution(x, t)
        return right.detach() + (right - right.detach()) * 2

    report = check_pointer_loss(wrong_gradient)
    assert not report.passed and "(softmax - one_hot(target)) / N" in str(report), str(report)


def test_the_watch_on_cross_entropy_is_removed_afterwards():
    check_pointer_loss(lambda x, t: F.cross_entropy(x, t))
    assert F.cross_entropy.__name__ == "cross_entropy"
