"""The chapter 10 checker accepts the right answer and names the typical mistakes."""

import torch
import torch.nn.functional as F

from attnbook.exercises import check_linear_attention


def linear(q, k, v):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    return (phi_q @ (phi_k.T @ v)) / (phi_q @ phi_k.sum(0, keepdim=True).T)


def test_a_correct_linear_attention_passes():
    report = check_linear_attention(linear)
    assert report.passed, str(report)


def test_quadratic_form_is_caught_by_counting_flops():
    def quadratic(q, k, v):
        w = (F.elu(q) + 1) @ (F.elu(k) + 1).T
        return (w / w.sum(-1, keepdim=True)) @ v

    report = check_linear_attention(quadratic)
    assert not report.passed
    assert "quadratic form" in str(report)


def test_missing_normaliser_is_named():
    report = check_linear_attention(lambda q, k, v: (F.elu(q) + 1) @ ((F.elu(k) + 1).T @ v))
    assert "normaliser" in str(report)


def test_softmax_attention_is_named():
    report = check_linear_attention(lambda q, k, v: torch.softmax(q @ k.T / 2, -1) @ v)
    assert "that is softmax attention" in str(report)
