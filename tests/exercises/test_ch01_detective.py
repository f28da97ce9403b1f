"""The chapter 1 checker accepts a right answer and names each typical mistake."""

import torch

from attnbook.exercises import check_soft_lookup


def correct(query, keys, values, temperature):
    weights = torch.softmax(keys @ query / temperature, dim=-1)
    return weights @ values


def test_correct_answer_passes():
    report = check_soft_lookup(correct)
    assert report.passed, str(report)


def test_multiplying_by_temperature_is_named():
    report = check_soft_lookup(lambda q, k, v, t: torch.softmax(k @ q * t, -1) @ v)
    assert not report.passed
    assert "divide them by it" in str(report)


def test_raw_scores_without_softmax_are_named():
    report = check_soft_lookup(lambda q, k, v, t: (k @ q / t) @ v)
    assert "apply softmax" in str(report)


def test_plain_average_is_named():
    report = check_soft_lookup(lambda q, k, v, t: v.mean(0))
    assert "ignore the query" in str(report)


def test_naive_exp_overflow_is_named():
    def naive(q, k, v, t):
        e = torch.exp(k @ q / t)
        return (e / e.sum()) @ v

    report = check_soft_lookup(naive)
    assert "subtract the largest score" in str(report)


def test_wrong_shape_is_named():
    report = check_soft_lookup(lambda q, k, v, t: correct(q, k, v, t)[None])
    assert "should return shape (3,)" in str(report)


def test_a_crash_is_reported_not_raised():
    def broken(q, k, v, t):
        raise KeyError("oops")

    report = check_soft_lookup(broken)
    assert not report.passed
    assert "raised KeyError" in str(report)
