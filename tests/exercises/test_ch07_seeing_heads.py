"""The chapter 7 checker accepts the right answer and names the usual mistake."""

import torch

from attnbook.exercises import check_head_hits


def right_hits(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, pronoun]
    return (rows.argmax(-1) == antecedent[:, None]).float().mean(0)


def test_head_hits_checker_accepts_the_row_argmax_and_names_the_column_mistake():
    assert check_head_hits(right_hits).passed

    def column(weights, pronoun, antecedent):
        return right_hits(weights.transpose(-1, -2), pronoun, antecedent)

    report = check_head_hits(column)
    assert not report.passed and "pronoun's column" in str(report)
