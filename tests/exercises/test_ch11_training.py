"""The chapter 11 checker accepts a right backward pass and names the usual mistakes."""

import pytest
import torch

from attnbook.exercises import check_attention_backward


def book_solution(query, key, value, output, lse, grad_output):
    scale = query.size(-1) ** -0.5
    p = torch.exp(query @ key.T * scale - lse)  # P, recomputed from the scores and lse
    d = (grad_output * output).sum(-1, keepdim=True)  # D = rowsum(dO * O)
    ds = p * (grad_output @ value.T - d)  # dS = P (dP - D)
    return scale * ds @ key, scale * ds.T @ query, p.T @ grad_output


def with_softmax_jacobian(query, key, value, output, lse, grad_output):
    """Another right answer: P by softmax, D as the P-weighted row sum of dP."""
    scale = query.size(-1) ** -0.5
    p = torch.softmax(query @ key.T * scale, dim=-1)
    dp = grad_output @ value.T
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    return scale * ds @ key, scale * ds.T @ query, p.T @ grad_output


def without_d(query, key, value, output, lse, grad_output):
    scale = query.size(-1) ** -0.5
    p = torch.exp(query @ key.T * scale - lse)
    ds = p * (grad_output @ value.T)
    return scale * ds @ key, scale * ds.T @ query, p.T @ grad_output


def plain_row_sum(query, key, value, output, lse, grad_output):
    scale = query.size(-1) ** -0.5
    p = torch.exp(query @ key.T * scale - lse)
    dp = grad_output @ value.T
    ds = p * (dp - dp.sum(-1, keepdim=True))
    return scale * ds @ key, scale * ds.T @ query, p.T @ grad_output


def no_scale(query, key, value, output, lse, grad_output):
    dq, dk, dv = book_solution(query, key, value, output, lse, grad_output)
    return dq / query.size(-1) ** -0.5, dk, dv


def edits_output(query, key, value, output, lse, grad_output):
    result = book_solution(query, key, value, output, lse, grad_output)
    output.zero_()
    return result


RIGHT = {
    "the book's solution": book_solution,
    "softmax and the Jacobian's row sum": with_softmax_jacobian,
}
WRONG = {
    "D missing": (without_d, "the term D_i"),
    "D as a plain row sum": (plain_row_sum, "not its plain sum"),
    "scale forgotten": (no_scale, "dQ = (1/√E) dS K"),
    "a pair": (lambda *a: book_solution(*a)[:2], "return a triple"),
    "edits an input": (edits_output, "changed its input output"),
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_backward_passes_pass(name):
    report = check_attention_backward(RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", WRONG)
def test_wrong_backward_passes_are_named(name):
    fn, fragment = WRONG[name]
    report = check_attention_backward(fn)
    assert not report.passed and fragment in str(report), str(report)
