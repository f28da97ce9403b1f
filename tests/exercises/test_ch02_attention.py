"""The chapter 2 checker accepts a right answer and names each typical mistake."""

from __future__ import annotations

import math

import pytest
import torch

from attnbook.exercises import (
    check_attention,
    check_bert_cost,
    check_padding_to_sdpa,
    check_variance,
)
from attnbook.exercises.ch02_numbers import (
    check_largest_temperature,
    largest_temperature,
    weight_on_key,
)


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


def test_masking_the_weights_after_the_softmax_is_named():
    def masked_after(q, k, v, m=None):
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
        weights = weights if m is None else weights * m  # zeroed, not renormalised
        return weights @ v, weights

    report = check_attention(masked_after)
    assert not report.passed
    assert "mask the scores before the softmax, not the weights after" in str(report), str(report)
    assert "differs" not in str(report), str(report)


def test_a_mistake_is_named_once_and_later_cases_say_see_above():
    report = check_attention(lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0))
    failed = failed_lines(report)
    assert len(failed) == 4, str(report)
    assert str(report).count("forgot to divide the scores") == 1, str(report)
    assert "forgot to divide the scores" in failed[0]
    assert all(line.endswith("the same mistake (see above)") for line in failed[1:]), str(report)


def test_different_mistakes_are_each_named():
    report = check_attention(
        lambda q, k, v, m=None: attention(q, k, v, m, fill=-1e9, zero_empty=False, scale=1.0)
    )
    assert "forgot to divide the scores" in str(report)
    assert "masked_fill(-1e9) trap" in str(report)


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


def with_where(query, key, value, mask=None):
    """Another right answer: torch.where instead of masked_fill, zeros by multiplication."""
    scores = query @ key.transpose(-2, -1) / query.size(-1) ** 0.5
    if mask is None:
        weights = scores.softmax(-1)
    else:
        scores = torch.where(mask, scores, torch.tensor(float("-inf")))
        any_key = mask.any(-1, keepdim=True)
        weights = torch.where(any_key, scores, 0.0).softmax(-1) * any_key * mask
    return weights @ value, weights


def test_another_right_answer_passes():
    report = check_attention(with_where)
    assert report.passed, str(report)


def test_returning_the_scores_instead_of_the_weights_is_named():
    def scores_back(q, k, v, m=None):
        out, _ = attention(q, k, v, m)
        return out, q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))

    report = check_attention(scores_back)
    assert "not the scores" in str(report)
    assert "up to 0" not in str(report)


def test_softmax_over_the_queries_with_a_mask_is_named_not_reported_as_nan():
    report = check_attention(
        lambda q, k, v, m=None: attention(q, k, v, m, dim=-2, zero_empty=False)
    )
    lines = failed_lines(report)
    masked = [line for line in lines if line.startswith("a bool mask")]
    assert masked and masked[0].endswith("the same mistake (see above)"), str(report)
    assert "not over the queries (dim=-2)" in lines[0], str(report)
    assert "up to nan" not in str(report)


def test_float64_results_are_named_as_a_dtype_mistake():
    report = check_attention(
        lambda q, k, v, m=None: tuple(t.double() for t in attention(q, k, v, m))
    )
    assert "dtype torch.float32" in str(report) and "did not match" not in str(report)


def test_an_in_place_edit_is_named_once_and_does_not_spoil_the_other_cases():
    def in_place(q, k, v, m=None):
        q /= math.sqrt(q.size(-1))
        return attention(q, k, v, m, scale=1.0)

    report = check_attention(in_place)
    value_cases = [
        ok for ok, message in report.lines if "gradient" not in message and "modify" not in message
    ]
    assert all(value_cases), str(report)  # every case got fresh inputs
    assert "changed its input query in place" in str(report)


# ---- the padding mask for F.scaled_dot_product_attention --------------------------------

PADDING_RIGHT = {
    "the book's solution": lambda kpm: ~kpm[:, None, None, :],
    "a float mask": lambda kpm: torch.zeros(kpm.shape).masked_fill(kpm, float("-inf"))[
        :, None, None, :
    ],
    "spelled out to (N, 1, L, S)": lambda kpm: (~kpm)[:, None, None, :].expand(-1, 1, 4, -1),
}
PADDING_WRONG = {
    "not inverted": (lambda kpm: kpm[:, None, None, :], "convention is inverted"),
    "no head and query dims": (lambda kpm: ~kpm, "does not broadcast"),
    "float with the wrong sign": (
        lambda kpm: torch.zeros(kpm.shape).masked_fill(~kpm, float("-inf"))[:, None, None, :],
        "-inf on padding",
    ),
    "edits the mask": (lambda kpm: kpm.logical_not_()[:, None, None, :], "changed its input"),
}


@pytest.mark.parametrize("name", PADDING_RIGHT)
def test_right_padding_conversions_pass(name):
    report = check_padding_to_sdpa(PADDING_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", PADDING_WRONG)
def test_wrong_padding_conversions_are_named(name):
    fn, fragment = PADDING_WRONG[name]
    report = check_padding_to_sdpa(fn)
    assert not report.passed and fragment in str(report), str(report)


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((1024, 32), None),
        ((1024.0, 32.0), None),
        ((256, 32), "σ⁴, not σ²"),
        ((64, 8), "that is the variance for σ = 1"),
        ((1024, 8), "divide by σ²√d_k"),
        ((1024, 16), "standard deviation of q · k is √(d_k σ⁴) = σ²√d_k"),
        ((1024, 1024), "standard deviation"),
    ],
)
def test_variance_answers(answer, fragment):
    report = check_variance(*answer)
    assert report.passed if fragment is None else (not report.passed and fragment in str(report)), (
        str(report)
    )


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((2_415_919_104, 805_306_368, 1536), None),
        ((8 * 512 * 768**2, 4 * 512**2 * 768, 2 * 768), None),
        ((1_207_959_552, 805_306_368, 1536), "did you count multiply-adds"),
        ((2_415_919_104, 805_306_368, 768), "n = 2E, not n = E"),
        ((2_415_919_104, 12 * 805_306_368, 1536), "expected 805,306,368"),
        ((6 * 512 * 768**2, 805_306_368, 1536), "that is three projections"),
        ((2_415_919_104, 805_306_368, 1152), "three projections (6nE²)"),
    ],
)
def test_bert_cost_answers(answer, fragment):
    report = check_bert_cost(*answer, 256)
    assert report.passed if fragment is None else (not report.passed and fragment in str(report)), (
        str(report)
    )


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((2_415_919_104, 805_306_368, 1536, 256), None),
        ((2_415_919_104, 805_306_368, 1536, 4 * 768), "divide by H"),
        ((2_415_919_104, 805_306_368, 1536, 768 // 12), "4·n·E numbers, not n·E"),
        ((2_415_919_104, 805_306_368, 1536, 1536), "that is the FLOP crossover"),
        ((2_415_919_104, 805_306_368, 1536, 300), "expected n = 4E/H = 256"),
    ],
)
def test_bert_memory_crossover_answers(answer, fragment):
    report = check_bert_cost(*answer)
    assert len(report.lines) == 4
    assert report.passed if fragment is None else (not report.passed and fragment in str(report)), (
        str(report)
    )


def test_bert_cost_without_the_memory_answer_does_not_pass():
    report = check_bert_cost(2_415_919_104, 805_306_368, 1536)
    assert len(report.lines) == 4 and not report.passed, str(report)
    assert "missing: pass the fourth answer, memory_crossover" in str(report)


# ---- the largest temperature that gives 张 0.9 of 他's weight ----------------------------


def test_the_threshold_is_where_the_weight_crosses_0_9():
    threshold = largest_temperature()
    assert weight_on_key(threshold) >= 0.9 > weight_on_key(threshold * 1.001)
    # chapter 1's scale=1 needs a temperature √d_k = √6 times larger for the same weights
    assert largest_temperature(scale=1.0) == pytest.approx(threshold * math.sqrt(6), rel=1e-6)


@pytest.mark.parametrize(
    "answer", [round(largest_temperature(), 3), largest_temperature(), largest_temperature() - 9e-4]
)
def test_the_right_temperature_passes(answer):
    report = check_largest_temperature(answer)
    assert report.passed, str(report)
    assert weight_on_key(answer) >= 0.9  # a passing answer really gives 张 at least 0.9


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (2.0, "a temperature above 1 flattens"),
        (1 / largest_temperature(), "divided by T, not multiplied"),
        (largest_temperature(scale=1.0), "leaves out the division by √d_k"),
        (0.25, "a larger temperature still does"),
        (0.257, "a larger temperature still does"),
        (0.260, "just under 0.9"),  # rounded up: above the threshold 张 gets less than 0.9
        (0.261, "< 0.9: the answer is smaller"),
        (largest_temperature() + 1e-4, "round down"),
        (0.1, "a larger temperature still does"),
        (0.3, "the answer is smaller"),
        (0.0, "must be a positive number"),
        (-0.26, "must be a positive number"),
        (float("nan"), "must be a positive number"),
        ("0.257", "answer with a number"),
        (True, "answer with a number"),
    ],
)
def test_wrong_temperatures_are_named(answer, fragment):
    report = check_largest_temperature(answer)
    assert not report.passed and fragment in str(report), str(report)
