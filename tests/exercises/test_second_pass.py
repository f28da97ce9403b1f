"""Issue 38, the second pass over the checkers: each item, as its own test.

The seven wrong answers that passed are refused with a message naming their slip; the backward
checker no longer crashes; the misleading messages name what the answer did; a right lexicon
with tensor features passes; and the four exercises that had no checker have one, which passes
the right answer. (The mistake catalogue, test_catalogue.py, runs all of these and more.)
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attnbook.exercises as checkers
from attnbook.attention import scaled_dot_product_attention
from attnbook.models.handbuilt import WORD_FEATURES, features
from attnbook.tasks.translation import number_to_chinese

from . import test_ch11_training as t11
from . import test_ch12_translation as t12
from .test_chinese import solution


def failed(report) -> str:
    return "\n".join(message for ok, message in report.lines if not ok)


# ---- wrong answers that passed ---------------------------------------------------------------


def one_maximum_for_all_rows(a, b):
    m = torch.maximum(a[0], b[0])
    top = m.max()
    alpha, beta = torch.exp(a[0] - top), torch.exp(b[0] - top)
    return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]


def test_a_merge_against_one_maximum_for_all_rows_is_refused():
    report = checkers.check_online_softmax_merge(one_maximum_for_all_rows)
    assert not report.passed and "ONE maximum for all rows" in failed(report), str(report)


def test_attention_without_blocks_is_refused():
    def plain(q, k, v, block):
        return torch.softmax(q @ k.T / q.size(-1) ** 0.5, -1) @ v

    report = checkers.check_block_attention(plain)
    assert not report.passed and "the whole (L, S) score matrix was built" in failed(report)


def test_a_backward_by_autograd_is_refused():
    def by_autograd(query, key, value, output, lse, grad_output):
        q, k, v = (t.clone().requires_grad_() for t in (query, key, value))
        scaled_dot_product_attention(q, k, v)[0].backward(grad_output)
        return q.grad, k.grad, v.grad

    report = checkers.check_attention_backward(by_autograd)
    assert not report.passed and "uses autograd" in failed(report), str(report)
    assert torch.autograd.backward.__module__ == "torch.autograd"  # put back afterwards


@pytest.mark.parametrize(
    "answer",
    [
        lambda n: number_to_chinese(n),
        lambda n: {m: t12.by_hand(m) for m in range(0, 100_000_000, 1_000_000)}.get(n, "零"),
    ],
    ids=["the library's function", "a lookup table"],
)
def test_numbers_in_chinese_from_the_library_or_a_table_are_refused(answer):
    report = checkers.check_number_to_chinese(answer)
    assert not report.passed, str(report)


def test_uniformity_unguarded_for_one_real_key_is_refused():
    def unguarded(weights, key_padding_mask):
        real = ~key_padding_mask
        entropy = -(weights * weights.clamp_min(1e-12).log()).sum(-1)
        keys = real.sum(-1).float()
        q = real.float()[:, None, :]
        return (entropy / keys.log()[:, None, None] * q).sum((0, 2)) / q.sum((0, 2))

    report = checkers.check_uniformity(unguarded)
    assert not report.passed and "a sentence with one real key" in failed(report), str(report)


def test_uniformity_over_the_non_zero_weights_is_refused():
    def over_non_zero(weights, key_padding_mask):
        real = ~key_padding_mask
        entropy = -(weights * weights.clamp_min(1e-12).log()).sum(-1)
        keys = (weights > 0).sum(-1).clamp_min(2).float()
        q = real.float()[:, None, :]
        return (entropy / keys.log() * q).sum((0, 2)) / q.sum((0, 2))

    report = checkers.check_uniformity(over_non_zero)
    assert not report.passed and "keys with non-zero weight" in failed(report), str(report)


# ---- the crash and the misleading messages ---------------------------------------------------


def test_the_backward_checker_does_not_crash_on_an_unknown_mistake():
    def wrong_value_gradient(*args):
        dq, dk, dv = t11.book_solution(*args)
        return dq, dk, 2 * dv

    report = checkers.check_attention_backward(wrong_value_gradient)
    text = failed(report)
    assert "could not use your answer" not in text and "d_value" in text, str(report)
    assert "D_i" not in text  # the one-query, one-key case no longer blames D


def test_a_previous_weight_that_ignores_the_mask_is_not_told_it_is_inverted():
    report = checkers.check_previous_weight(
        lambda w, m: torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean((0, 2))
    )
    assert "wrong way round" not in str(report) and "padding queries too" in failed(report)


def test_verdicts_with_greater_or_equal_are_not_told_to_use_it():
    right = solution("ch19-ex-verdicts")
    report = checkers.check_verdicts(lambda s, p: {k: "needed" for k in right(s, p)})
    assert "use >=" not in str(report), str(report)
    report = checkers.check_verdicts(lambda s, p: {k: v.title() for k, v in right(s, p).items()})
    assert "lower case" in failed(report) and "no head is redundant" not in str(report)


def test_the_same_largest_dot_for_both_orders_is_not_called_swapped():
    report = checkers.check_largest_dot(lambda d, first: 65504.0)
    assert "swapped" not in str(report) and "whether or not" in failed(report), str(report)


def test_ties_broken_the_other_way_are_named_as_such():
    def latest(sentences):
        words = [set(s) - checkers.ch14_summarising.STOPWORDS for s in sentences]
        shared = [
            sum(len(w & o) for j, o in enumerate(words) if j != i) for i, w in enumerate(words)
        ]
        return len(shared) - 1 - shared[::-1].index(max(shared))

    report = checkers.check_central_sentence(latest)
    assert "EARLIEST" in failed(report) and "stop words" not in str(report), str(report)


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda text: text.replace("零", "〇"), "〇 is for digits read one by one"),
        (lambda text: text.replace("万", ""), "the 万 is missing"),
    ],
)
def test_circle_zero_and_a_missing_wan_are_not_blamed_on_runs_of_zeros(edit, says):
    report = checkers.check_number_to_chinese(lambda n: edit(t12.by_hand(n)))
    assert says in failed(report) and "one 零 per run" not in str(report), str(report)


@pytest.mark.parametrize(
    ("slip", "says"),
    [
        ("dropout", "dropout (or something else random) is on"),
        ("scaled after", "you divided by √d_k after the softmax"),
    ],
)
def test_attention_with_dropout_or_the_scale_after_the_softmax_is_named(slip, says):
    def attention(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / (1.0 if slip == "scaled after" else q.size(-1) ** 0.5)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, -1).nan_to_num()
        w = F.dropout(w, 0.2) if slip == "dropout" else w / q.size(-1) ** 0.5
        return w @ v, w

    report = checkers.check_attention(attention)
    assert says in failed(report) and "apply softmax over the last" not in str(report)


def test_a_constant_learning_rate_is_not_told_it_used_warmup_steps():
    report = checkers.check_transformer_schedule(lambda s, d, w: (d * w) ** -0.5)
    assert "warmup_steps**-0.5" not in str(report) and "at every step" in failed(report)


def test_a_lexicon_with_tensor_features_passes():
    report = checkers.check_new_suspect(dict(WORD_FEATURES, 王=features(["张"])[0]))
    assert report.passed, str(report)


# ---- the four new checkers -------------------------------------------------------------------


def test_sharper_or_softer():
    assert checkers.check_sharpen("up", 0.5).passed
    assert checkers.check_sharpen("Up", 1 / 2).passed
    assert not checkers.check_sharpen("down", 2.0).passed


def test_where_to_put_the_checkpoints():
    def memory(s, a, A):
        return 24 * a / s + s * A

    for best in (
        lambda a, A: math.sqrt(24 * a / A),
        lambda a, A: min(range(1, 25), key=lambda s: memory(s, a, A)),
    ):
        assert checkers.check_checkpoint_segments(memory, best).passed
    assert not checkers.check_checkpoint_segments(memory, lambda a, A: 4).passed


def test_the_limit_of_linear_attention():
    def weight_on_first(c, P):
        return (2 * c + P + 1) / ((2 * c + P + 1) + (P - 1) * (c + P + 1))

    assert checkers.check_linear_limit(weight_on_first).passed
    assert not checkers.check_linear_limit(lambda c, P: 2 / (P + 1)).passed


def test_the_memory_of_the_recomputing_backward():
    assert checkers.check_backward_memory(4 * 8 * 16_384 * 64 * 4, 8 * 16_384 * 4).passed
    assert checkers.check_backward_memory(134_217_728.0, 524_288.0).passed
    assert not checkers.check_backward_memory(128, 0.5).passed
