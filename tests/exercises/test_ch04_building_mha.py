"""Chapter 4's checkers: split and merge heads, the article's mask, cross-attention shapes."""

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.exercises import (
    check_article_mask,
    check_kdim_shapes,
    check_merge_heads,
    check_padding_to_sdpa,
    check_split_heads,
)
from attnbook.mha import merge_heads, split_heads


def test_split_and_merge_heads_rebuild_the_librarys_mha():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).eval()
    x = torch.randn(2, 5, 12)
    q, k, v = (split_heads(proj(x), 3) for proj in (mha.q_proj, mha.k_proj, mha.v_proj))
    heads = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ v  # D = 4
    torch.testing.assert_close(mha.out_proj(merge_heads(heads)), mha(x, x, x)[0])


def book_split(x, num_heads):
    N, L, E = x.shape
    return x.view(N, L, num_heads, E // num_heads).transpose(1, 2)


def unflatten_split(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)


def edits_its_input(x, num_heads):
    x.mul_(2)
    return book_split(x / 2, num_heads)


SPLIT_RIGHT = {"the book's solution": book_split, "unflatten and permute": unflatten_split}
SPLIT_WRONG = {
    "reshape straight to (N, H, L, D)": (
        lambda x, H: x.reshape(x.size(0), H, x.size(1), -1),
        "cuts the sequence",
    ),
    "interleaved features": (
        lambda x, H: x.reshape(x.size(0), x.size(1), -1, H).permute(0, 3, 1, 2),
        "every H-th feature",
    ),
    "sizes written in": (lambda x, H: x.view(2, 3, 4, 5).transpose(1, 2), "your function raised"),
    "no transpose": (lambda x, H: x.view(x.size(0), x.size(1), H, -1), "must return shape"),
    "edits its input": (
        lambda x, H: (
            book_split(x.mul_(1.0).add_(0), H)
            if x.add_(0) is not None and x.mul_(2) is not None
            else None
        ),
        "changed its input x",
    ),
}


@pytest.mark.parametrize("name", SPLIT_RIGHT)
def test_right_splits_pass(name):
    report = check_split_heads(SPLIT_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", SPLIT_WRONG)
def test_wrong_splits_are_named(name):
    fn, fragment = SPLIT_WRONG[name]
    report = check_split_heads(fn)
    assert not report.passed and fragment in str(report), str(report)


def book_merge(x):
    N, H, L, D = x.shape
    return x.transpose(1, 2).reshape(N, L, H * D)


MERGE_RIGHT = {
    "the book's solution": book_merge,
    "contiguous then view": lambda x: x.transpose(1, 2).contiguous().flatten(2),
}
MERGE_WRONG = {
    "view after transpose": (
        lambda x: x.transpose(1, 2).view(x.size(0), x.size(2), -1),
        "use reshape",
    ),
    "reshape without transpose": (lambda x: x.reshape(x.size(0), x.size(2), -1), "mixes positions"),
    "wrong shape": (lambda x: x.flatten(1), "must return shape"),
}


@pytest.mark.parametrize("name", MERGE_RIGHT)
def test_right_merges_pass(name):
    report = check_merge_heads(MERGE_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", MERGE_WRONG)
def test_wrong_merges_are_named(name):
    fn, fragment = MERGE_WRONG[name]
    report = check_merge_heads(fn)
    assert not report.passed and fragment in str(report), str(report)


def test_view_after_transpose_is_explained_once_and_fails_every_line():
    report = check_merge_heads(MERGE_WRONG["view after transpose"][0])
    assert not any(ok for ok, _ in report.lines), str(report)  # the round trip too
    assert str(report).count("use reshape") == 1, str(report)
    assert "RuntimeError" not in str(report), str(report)
    assert all("see above" in message for _, message in report.lines[1:]), str(report)


def book_article_mask(key_padding_mask, causal=False):
    keep = ~key_padding_mask[:, None, None, :]
    if causal:
        S = key_padding_mask.size(1)
        keep = keep & torch.ones(S, S, dtype=torch.bool).tril()
    return keep


def integer_article_mask(key_padding_mask, causal=False):
    S = key_padding_mask.size(1)
    keep = (~key_padding_mask).long()[:, None, None, :].expand(-1, 1, S, -1)
    return keep * torch.ones(S, S, dtype=torch.long).tril() if causal else keep


def off_by_one(diagonal):
    def article_mask(key_padding_mask, causal=False):
        keep = ~key_padding_mask[:, None, None, :]
        S = key_padding_mask.size(1)
        return keep & torch.ones(S, S, dtype=torch.bool).tril(diagonal) if causal else keep

    return article_mask


ADAPTER_RIGHT = {"the book's solution": book_article_mask, "0/1 integers": integer_article_mask}
ADAPTER_WRONG = {
    "padding not inverted": (
        lambda kpm, causal=False: kpm[:, None, None, :],
        "the mask is inverted",
    ),
    "query cannot see itself": (off_by_one(-1), "tril(), not tril(-1)"),
    "sees the next token": (off_by_one(1), "not tril(1)"),
    "causal ignored": (
        lambda kpm, causal=False: ~kpm[:, None, None, :],
        "hide the keys after each query",
    ),
    "no head and query dims": (lambda kpm, causal=False: ~kpm[:, None, :], "does not broadcast"),
}


@pytest.mark.parametrize("name", ADAPTER_RIGHT)
def test_right_adapters_pass(name):
    report = check_article_mask(ADAPTER_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", ADAPTER_WRONG)
def test_wrong_adapters_are_named(name):
    fn, fragment = ADAPTER_WRONG[name]
    report = check_article_mask(fn)
    assert not report.passed and fragment in str(report), str(report)


def test_the_right_kdim_shapes_pass_in_tuples_or_torch_sizes():
    assert check_kdim_shapes((8, 12), (1, 6, 8), (1, 2, 6, 5), 352).passed
    assert check_kdim_shapes(
        torch.Size([8, 12]), torch.Size([1, 6, 8]), torch.Size([1, 2, 6, 5]), 352
    ).passed


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (((12, 8), (1, 6, 8), (1, 2, 6, 5), 352), "weight (out, in) = (8, 12)"),
        (((8, 12), (1, 5, 8), (1, 2, 6, 5), 352), "one row per QUERY"),
        (((8, 12), (1, 6, 8), (1, 6, 5), 352), "one (L, S) = (6, 5) matrix per head"),
        (((8, 12), (1, 6, 8), (1, 2, 6, 5), 288), "weights are 8 x 12, not 8 x 8"),
        (((8, 12), (1, 6, 8), (1, 2, 6, 5), 320), "biases"),
        (((8, 12), (1, 6, 8), (1, 2, 6, 5), 352 - 72), "out_proj is missing"),
        (((8, 12), (1, 6, 8), (1, 2, 6, 5), 256), "out_proj and the biases are missing"),
    ],
)
def test_wrong_kdim_answers_are_named(answer, fragment):
    report = check_kdim_shapes(*answer)
    assert not report.passed and fragment in str(report), str(report)


def test_the_adapter_without_causal_is_the_sdpa_padding_mask():
    """Chapter 4 says so in the adapter exercise, and its solution calls both checkers."""
    from tests.exercises.test_book_solutions import definitions, solution_code

    books_adapter = definitions(solution_code("ch4-ex-adapter"))["article_mask"]
    for adapter in (book_article_mask, books_adapter):
        assert check_padding_to_sdpa(adapter).passed, str(check_padding_to_sdpa(adapter))
