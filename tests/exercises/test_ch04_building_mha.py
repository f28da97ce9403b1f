"""The chapter 4 checkers accept right split/merge functions and name each typical mistake."""

import torch

from attnbook import MultiHeadAttention
from attnbook.exercises import check_merge_heads, check_split_heads
from attnbook.mha import merge_heads, split_heads


def split(x, num_heads):
    n, length, e = x.shape
    return x.reshape(n, length, num_heads, e // num_heads).transpose(1, 2)


def merge(x):
    n, heads, length, d = x.shape
    return x.transpose(1, 2).reshape(n, length, heads * d)


def test_split_and_merge_heads_rebuild_the_librarys_mha():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).eval()
    x = torch.randn(2, 5, 12)
    q = split_heads(mha.q_proj(x), 3)
    k = split_heads(mha.k_proj(x), 3)
    v = split_heads(mha.v_proj(x), 3)
    heads = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v  # D = 4
    torch.testing.assert_close(mha.out_proj(merge_heads(heads)), mha(x, x, x)[0])


def test_correct_split_passes():
    report = check_split_heads(split)
    assert report.passed, str(report)


def test_correct_merge_passes():
    report = check_merge_heads(merge)
    assert report.passed, str(report)


def test_contiguous_then_view_merge_passes():
    report = check_merge_heads(
        lambda x: x.transpose(1, 2).contiguous().view(x.size(0), x.size(2), -1)
    )
    assert report.passed, str(report)


def test_split_straight_to_heads_is_named():
    report = check_split_heads(lambda x, h: x.reshape(x.size(0), h, x.size(1), -1))
    assert not report.passed
    assert "cuts the sequence" in str(report)


def test_interleaved_heads_are_named():
    report = check_split_heads(
        lambda x, h: x.reshape(x.size(0), x.size(1), -1, h).permute(0, 3, 1, 2)
    )
    assert "every H-th feature" in str(report)


def test_split_with_view_passes_because_view_can_always_split_a_dimension():
    report = check_split_heads(
        lambda x, h: x.view(x.size(0), -1, h, x.size(-1) // h).transpose(1, 2)
    )
    assert report.passed, str(report)


def test_split_with_wrong_shape_is_named():
    report = check_split_heads(lambda x, h: split(x, h).transpose(2, 3))
    assert "should return (N, H, L, D)" in str(report)


def test_merge_with_view_after_transpose_is_named():
    report = check_merge_heads(lambda x: x.transpose(1, 2).view(x.size(0), x.size(2), -1))
    assert not report.passed
    assert "no longer contiguous" in str(report)


def test_merge_without_transpose_is_named():
    report = check_merge_heads(lambda x: x.reshape(x.size(0), x.size(2), -1))
    assert "first transpose(1, 2)" in str(report)


def test_merge_with_wrong_shape_is_named():
    report = check_merge_heads(lambda x: x.transpose(1, 2))
    assert "should return (N, L, H*D)" in str(report)


def test_a_crash_is_reported_not_raised():
    def broken(x, h):
        raise IndexError("oops")

    report = check_split_heads(broken)
    assert not report.passed
    assert "raised IndexError" in str(report)
