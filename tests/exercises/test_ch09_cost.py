"""The chapter 9 checkers accept right answers and name the typical mistakes."""

import torch

from attnbook.efficient import online_softmax_merge
from attnbook.exercises.ch09_cost import (
    check_block_attention,
    check_online_softmax_merge,
)

# ---- merge -------------------------------------------------------------------------------


def test_the_library_merge_passes():
    report = check_online_softmax_merge(online_softmax_merge)
    assert report.passed, str(report)


def test_adding_without_rescaling_is_named():
    report = check_online_softmax_merge(
        lambda a, b: (torch.maximum(a[0], b[0]), a[1] + b[1], a[2] + b[2])
    )
    assert not report.passed
    assert "without rescaling" in str(report)


def test_exponentiating_the_maximum_itself_is_named():
    def overflowing(a, b):
        m = torch.maximum(a[0], b[0])
        l = a[1] * torch.exp(a[0]) / torch.exp(m) + b[1] * torch.exp(b[0]) / torch.exp(m)
        acc = a[2] * torch.exp(a[0]) / torch.exp(m) + b[2] * torch.exp(b[0]) / torch.exp(m)
        return m, l, acc

    assert "overflow" in str(check_online_softmax_merge(overflowing))


def test_nan_for_two_empty_blocks_is_named():
    def unsafe(a, b):
        m = torch.maximum(a[0], b[0])
        alpha, beta = torch.exp(a[0] - m), torch.exp(b[0] - m)
        return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]

    report = check_online_softmax_merge(unsafe)
    assert not report.passed
    assert "two empty blocks gives NaN" in str(report)


# ---- attention over key blocks -----------------------------------------------------------


def block_attention(q, k, v, block):
    q = q / q.size(-1) ** 0.5
    m = torch.full((q.size(0), 1), float("-inf"))
    l = torch.zeros(q.size(0), 1)
    acc = torch.zeros(q.size(0), v.size(-1))
    for s0 in range(0, k.size(0), block):
        s = q @ k[s0 : s0 + block].T
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        alpha = torch.exp(m - m_new)
        l, acc, m = alpha * l + p.sum(-1, keepdim=True), alpha * acc + p @ v[s0 : s0 + block], m_new
    return acc / l


def test_a_correct_block_attention_passes():
    report = check_block_attention(block_attention)
    assert report.passed, str(report)


def test_missing_scale_is_named():
    report = check_block_attention(
        lambda q, k, v, b: block_attention(q * 2, k, v, b)
    )  # E = 4: sqrt(E) = 2
    assert "1 / sqrt(E)" in str(report)


def test_missing_rescaling_is_reported():
    def no_rescale(q, k, v, block):
        q = q / 2
        outs = [
            torch.softmax(q @ k[s0 : s0 + block].T, -1) @ v[s0 : s0 + block]
            for s0 in range(0, k.size(0), block)
        ]
        return sum(outs) / len(outs)

    report = check_block_attention(no_rescale)
    assert not report.passed
    assert "rescaled" in str(report)


# ---- linear attention ----------------------------------------------------------------------
