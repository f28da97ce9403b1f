"""Reference alignments of dates by hand, the accuracy of a perfect and of a wrong attention map,
teacher-forced cross-attention weights of the right shape that ignore source padding, and the
two position-only controls (monotone, length template)."""

import datetime as dt

import pytest
import torch

from attnbook.interp.alignment import (
    alignment_accuracy,
    cross_attention,
    date_alignment,
    date_fields,
    length_template_weights,
    monotone_weights,
)
from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer
from attnbook.tasks.translation import Pair, TranslationTask, encode_pairs

MARCH_5 = Pair.of(dt.date(2024, 3, 5))  # the fifth of march , 2 0 2 4 | 2 0 2 4 年 3 月 5 日
DEC_21 = Pair.of(dt.date(1999, 12, 21))  # the twenty first of december , 1 9 9 9 | 1999年12月21日


def test_a_short_date_aligns_year_month_and_day():
    assert date_alignment(MARCH_5, "en-zh") == {0: {5}, 1: {6}, 2: {7}, 3: {8}, 5: {3}, 7: {1}}


def test_a_two_word_day_aligns_digit_by_word_and_both_month_digits_to_the_name():
    en_zh = date_alignment(DEC_21, "en-zh")
    assert en_zh[5] == en_zh[6] == {4}  # "1", "2" of 12 <- "december"
    assert en_zh[8] == {1} and en_zh[9] == {2}  # "2" <- "twenty", "1" <- "first"


def test_the_reverse_direction_inverts_the_links():
    zh_en = date_alignment(DEC_21, "zh-en")
    assert zh_en[4] == {5, 6}  # "december" <- "1", "2"
    assert zh_en[6] == {0} and 0 not in zh_en  # year digit; "the" has no counterpart


def test_a_number_or_a_bad_direction_is_refused():
    with pytest.raises(ValueError, match="date_alignment needs a date Pair"):
        date_alignment(Pair.of(312), "en-zh")
    with pytest.raises(ValueError, match="direction must be one of"):
        date_alignment(MARCH_5, "fr-zh")


def one_hot_weights(pairs, direction, shift=0):
    T = max(len(p.target(direction)) for p in pairs) + 2
    S = max(len(p.source(direction)) for p in pairs)
    weights = torch.zeros(len(pairs), T, S)
    for n, pair in enumerate(pairs):
        for target, sources in date_alignment(pair, direction).items():
            weights[n, target, (min(sources) + shift) % S] = 1.0
    return weights


@pytest.mark.parametrize("direction", ["en-zh", "zh-en"])
def test_a_perfect_map_scores_one_and_a_shifted_map_less(direction):
    pairs = [MARCH_5, DEC_21]
    assert alignment_accuracy(one_hot_weights(pairs, direction), pairs, direction) == 1.0
    assert alignment_accuracy(one_hot_weights(pairs, direction, shift=3), pairs, direction) < 0.5


def test_a_tolerance_counts_a_neighbour_of_the_reference():
    pairs = [MARCH_5]
    shifted = one_hot_weights(pairs, "en-zh", shift=-1)
    assert alignment_accuracy(shifted, pairs, "en-zh") < 0.5
    assert alignment_accuracy(shifted, pairs, "en-zh", tolerance=1) == 1.0
    with pytest.raises(ValueError, match="tolerance must be a non-negative integer; got -1"):
        alignment_accuracy(shifted, pairs, "en-zh", tolerance=-1)


def test_weights_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"weights must be \(N, T, S\) with N = len\(pairs\) = 2"):
        alignment_accuracy(torch.zeros(1, 5, 5), [MARCH_5, DEC_21], "en-zh")


def test_cross_attention_has_a_row_per_target_token_and_ignores_padding():
    task = TranslationTask(test_size=10)
    vocab = task.vocabulary()
    torch.manual_seed(0)
    model = Seq2SeqTransformer(Seq2SeqConfig(len(vocab), d_model=16, nhead=2, max_len=24)).eval()
    src, tgt = encode_pairs([MARCH_5, Pair.of(7)], vocab, "en-zh")
    weights = cross_attention(model, src, tgt)
    assert weights.shape == (2, 2, 2, tgt.size(1), src.size(1))  # (Ly, N, H, T, S)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 2, tgt.size(1)))
    assert weights[:, 1, :, :, 1:].abs().max() == 0  # "seven" is one token; the rest is padding


def test_fields_name_year_month_and_day_in_both_directions():
    assert date_fields(DEC_21, "en-zh") == {
        0: "year", 1: "year", 2: "year", 3: "year", 5: "month", 6: "month", 8: "day", 9: "day"
    }  # fmt: skip
    assert date_fields(DEC_21, "zh-en") == {
        1: "day", 2: "day", 4: "month", 6: "year", 7: "year", 8: "year", 9: "year"
    }  # fmt: skip


def test_a_field_counts_only_its_own_tokens():
    pairs = [MARCH_5, DEC_21]
    weights = one_hot_weights(pairs, "en-zh")
    for n, pair in enumerate(pairs):  # spoil the day only
        for target, field in date_fields(pair, "en-zh").items():
            if field == "day":
                weights[n, target] = weights[n, target].roll(3)
    assert alignment_accuracy(weights, pairs, "en-zh", field="year") == 1.0
    assert alignment_accuracy(weights, pairs, "en-zh", field="month") == 1.0
    assert alignment_accuracy(weights, pairs, "en-zh", field="day") == 0.0
    with pytest.raises(ValueError, match="field must be None or one of"):
        alignment_accuracy(weights, pairs, "en-zh", field="hour")


def test_monotone_weights_go_from_the_first_source_token_to_the_last():
    weights = monotone_weights([MARCH_5], "en-zh", target_len=12, source_len=11)
    assert weights.shape == (1, 12, 11)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 12))
    where = weights[0].argmax(-1).tolist()  # 9 target tokens, 9 source tokens: j -> j
    assert where[:9] == list(range(9)) and where[9:] == [8, 8, 8]  # clamped to the source
    assert weights[0, :, 9:].abs().max() == 0  # padding columns stay empty


def test_monotone_weights_stretch_to_the_source_length():
    pair = Pair.of(dt.date(2024, 3, 5))  # zh-en: 9 source tokens, 9 target tokens
    short = Pair.of(7)  # zh-en: "七" -> "seven": one token each
    weights = monotone_weights([pair, short], "zh-en", target_len=10, source_len=9)
    assert weights[1].argmax(-1).tolist() == [0] * 10
    with pytest.raises(ValueError, match=r"must be at least \(10, 9\)"):
        monotone_weights([pair], "zh-en", target_len=9, source_len=9)


def test_a_length_template_fit_on_the_same_dates_scores_one():
    pairs = [MARCH_5, DEC_21, Pair.of(dt.date(1987, 11, 30))]
    for direction in ("en-zh", "zh-en"):
        weights = length_template_weights(pairs, pairs, direction, target_len=12, source_len=11)
        assert alignment_accuracy(weights, pairs, direction) == 1.0


def test_a_length_template_reads_no_token():
    # same lengths, other tokens: 2024-03-05 and 1999-07-08 get the same weights
    other = Pair.of(dt.date(1999, 7, 8))
    fit = [MARCH_5]
    a = length_template_weights(fit, [MARCH_5], "en-zh", target_len=10, source_len=9)
    b = length_template_weights(fit, [other], "en-zh", target_len=10, source_len=9)
    torch.testing.assert_close(a, b)
    assert alignment_accuracy(b, [other], "en-zh") == 1.0


def test_a_length_template_falls_back_to_monotone_for_unseen_lengths():
    weights = length_template_weights([DEC_21], [MARCH_5], "en-zh", target_len=10, source_len=9)
    torch.testing.assert_close(weights, monotone_weights([MARCH_5], "en-zh", 10, 9))
