"""The chapter 2 checker accepts a right answer and names each typical mistake."""

from __future__ import annotations

import math

import torch

from attnbook.exercises import check_attention


def attention(
    query,
    key,
    value,
    mask=None,
    *,
    scale=None,
    fill=float("-inf"),
    zero_empty=True,
    dim=-1,
    invert=False,
):
    """A correct answer by default; each keyword turns on one typical mistake."""
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = query @ key.transpose(-2, -1) * scale
    if mask is not None:
        allowed = ~mask if invert else mask
        scores = scores.masked_fill(~allowed, fill)
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and zero_empty:
        weights = weights.masked_fill(~allowed.any(-1, keepdim=True), 0.0)
    return weights @ value, weights


def failed_lines(report) -> list[str]:
    return [message for ok, message in report.lines if not ok]


def test_correct_answer_passes():
    report = check_attention(attention)
    assert report.passed, str(report)
    assert len(report.lines) == 8


def test_library_passes():
    from attnbook import scaled_dot_product_attention

    report = check_attention(lambda q, k, v, mask=None: scaled_dot_product_attention(q, k, v, mask))
    assert report.passed, str(report)


def test_missing_scaling_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0))
    assert not report.passed
    assert any("forgot to divide the scores" in line for line in failed_lines(report)), str(report)


def test_dividing_by_d_instead_of_its_square_root_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0 / q.size(-1)))
    assert "not by d_k" in str(report)


def test_softmax_over_the_queries_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, dim=-2))
    assert "not over the queries (dim=-2)" in str(report)


def test_inverted_mask_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, invert=True))
    assert not report.passed
    assert "mask convention is inverted" in str(report)


def test_ignored_mask_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, None))
    assert "the mask is ignored" in str(report)


def test_nan_for_a_fully_masked_row_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, zero_empty=False))
    assert not report.passed
    assert "gives NaN" in str(report)


def test_uniform_average_from_minus_1e9_is_named():
    report = check_attention(
        lambda q, k, v, m=None: attention(q, k, v, m, fill=-1e9, zero_empty=False)
    )
    assert "masked_fill(-1e9) trap" in str(report)


def test_nan_gradient_from_a_fully_masked_row_is_named():
    def nan_grad(q, k, v, m=None):
        out, w = attention(q, k, v, m, zero_empty=False)
        return torch.nan_to_num(out), torch.nan_to_num(w)

    report = check_attention(nan_grad)
    assert "contains NaN or inf" in str(report)


def test_wrong_output_shape_is_named():
    report = check_attention(lambda q, k, v, m=None: tuple(t[None] for t in attention(q, k, v, m)))
    assert "output should have shape (N, L, Ev) = (2, 3, 6)" in str(report)


def test_multiplying_by_key_instead_of_value_is_named():
    def by_key(q, k, v, m=None):
        return attention(q, k, k, m)

    assert "not by key" in str(check_attention(by_key))


def test_returning_only_the_output_is_named():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m)[0])
    assert "return a pair (output, weights)" in str(report)


def test_key_dot_T_on_four_dimensional_inputs_is_named():
    def with_T(q, k, v, m=None):
        scores = q @ k.mT / math.sqrt(q.size(-1)) if q.dim() == 3 else q @ k.transpose(1, 2)
        if m is not None:
            scores = scores.masked_fill(~m, float("-inf"))
        w = torch.softmax(scores, -1).nan_to_num()
        return w @ v, w

    assert "key.transpose(-2, -1)" in str(check_attention(with_T))


def test_modifying_inputs_in_place_is_named():
    def in_place(q, k, v, m=None):
        q /= math.sqrt(q.size(-1))
        return attention(q, k, v, m, scale=1.0)

    report = check_attention(in_place)
    assert "changed its input query in place" in str(report)


def test_a_crash_is_reported_not_raised():
    def broken(q, k, v, m=None):
        raise KeyError("oops")

    report = check_attention(broken)
    assert not report.passed
    assert all("raised KeyError" in line for line in failed_lines(report))
    assert len(failed_lines(report)) == 8
