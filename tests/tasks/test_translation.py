"""Dates and numbers in English and Chinese: written as a textbook writes them, read back by an
independent parser, held out without leaks, and encoded in the batch shape of the seq2seq model."""

import datetime as dt
import re

import pytest
import torch

from attnbook.tasks.numbers import BOS, EOS
from attnbook.tasks.translation import (
    Pair,
    TranslationTask,
    date_to_chinese,
    date_to_english,
    decode_tokens,
    encode_pairs,
    exact_matches,
    log_likelihood,
    number_to_chinese,
    number_to_english,
    text_tokens,
)

ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")}
EN_SMALL = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
EN_SMALL.update(
    {
        w: 10 * i
        for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
    }
)


def parse_chinese(text: str) -> int:
    """An independent reader of Chinese numerals below 10**8."""
    total = 0
    for part, scale in zip(text.split("万")[::-1], (1, 10_000)):
        value, digit = 0, None
        for ch in part:
            if ch in ZH_DIGITS:
                digit = ZH_DIGITS[ch]
            else:
                value += (1 if digit is None else digit) * {"十": 10, "百": 100, "千": 1000}[ch]
                digit = None
        total += (value + (digit or 0)) * scale
    return total


def parse_english(text: str) -> int:
    total, group = 0, 0
    for word in text.split():
        if word == "hundred":
            group *= 100
        elif word in ("thousand", "million"):
            total += group * (1000 if word == "thousand" else 10**6)
            group = 0
        elif word != "and":
            group += EN_SMALL[word]
    return total + group


@pytest.mark.parametrize(
    "n, zh",
    [
        (0, "零"),
        (10, "十"),
        (11, "十一"),
        (20, "二十"),
        (105, "一百零五"),
        (110, "一百一十"),
        (111, "一百一十一"),
        (312, "三百一十二"),
        (1005, "一千零五"),
        (1050, "一千零五十"),
        (2024, "二千零二十四"),
        (10_010, "一万零一十"),
        (100_000, "十万"),
        (100_500, "十万零五百"),
        (110_000, "十一万"),
        (1_001_000, "一百万一千"),
        (1_020_000, "一百零二万"),
        (12_000_034, "一千二百万零三十四"),
        (99_999_999, "九千九百九十九万九千九百九十九"),
    ],
)
def test_chinese_numbers_follow_the_textbook(n, zh):
    assert number_to_chinese(n) == zh


@pytest.mark.parametrize(
    "n, en",
    [
        (0, "zero"),
        (312, "three hundred and twelve"),
        (1005, "one thousand and five"),
        (1500, "one thousand five hundred"),
        (110_000, "one hundred and ten thousand"),
        (12_000_034, "twelve million and thirty four"),
    ],
)
def test_english_numbers_are_british(n, en):
    assert number_to_english(n) == en


def test_an_independent_parser_reads_every_number_back():
    numbers = (
        list(range(0, 20_000))
        + torch.randint(10**8, (3000,), generator=torch.Generator().manual_seed(0)).tolist()
    )
    for n in numbers:
        assert parse_chinese(number_to_chinese(n)) == n, n
        assert parse_english(number_to_english(n)) == n, n


def test_zero_is_never_doubled_nor_final_in_chinese():
    for n in range(1, 200_000, 7):
        zh = number_to_chinese(n)
        assert "零零" not in zh and not zh.endswith("零") and not zh.startswith("一十"), (n, zh)


@pytest.mark.parametrize("n", [-1, 10**8, 2.0, True, "7"])
def test_numbers_outside_the_range_are_refused(n):
    with pytest.raises(ValueError, match=r"numbers must be integers in \[0, 100_000_000\)"):
        number_to_chinese(n)


@pytest.mark.parametrize(
    "date, en, zh",
    [
        (dt.date(2024, 3, 5), "the fifth of march , 2024", "2024年3月5日"),
        (dt.date(1999, 12, 31), "the thirty first of december , 1999", "1999年12月31日"),
        (dt.date(2001, 11, 12), "the twelfth of november , 2001", "2001年11月12日"),
        (dt.date(2010, 6, 22), "the twenty second of june , 2010", "2010年6月22日"),
        (dt.date(2010, 4, 30), "the thirtieth of april , 2010", "2010年4月30日"),
    ],
)
def test_dates_in_both_languages(date, en, zh):
    assert date_to_english(date) == en and date_to_chinese(date) == zh


def test_a_datetime_is_not_a_date():
    with pytest.raises(TypeError, match="date must be a datetime.date; got datetime"):
        date_to_english(dt.datetime(2024, 3, 5))


def test_numerals_are_split_into_digits_on_both_sides():
    assert text_tokens("the fifth of march , 2024") == [
        "the", "fifth", "of", "march", ",", "2", "0", "2", "4",
    ]  # fmt: skip
    assert text_tokens("2024年3月5日") == ["2", "0", "2", "4", "年", "3", "月", "5", "日"]


def test_a_pair_reads_one_side_and_writes_the_other():
    pair = Pair.of(312)
    assert pair.source("en-zh") == ["three", "hundred", "and", "twelve"]
    assert pair.target("en-zh") == list("三百一十二")
    assert pair.source("zh-en") == pair.target("en-zh")
    with pytest.raises(ValueError, match=r"direction must be one of \('en-zh', 'zh-en'\)"):
        pair.source("en-fr")


def test_held_out_items_never_reach_a_training_batch():
    task = TranslationTask(max_digits=3, years=(2000, 2001), test_size=300, seed=0)
    held = {p.value for p in task.test}
    assert len(held) == 300
    seen = {p.value for p in task.sample(20_000, torch.Generator().manual_seed(1))}
    assert not seen & held
    assert all(task.is_held_out(v) for v in held)


def test_short_numbers_are_not_all_held_out():
    task = TranslationTask(kinds=["number"], max_digits=2, test_size=20, seed=0)
    one_digit = [p for p in task.test if p.value < 10]
    assert len(one_digit) <= 10 // 4 and len(task.test) == 20


def test_the_split_is_reproducible_and_depends_on_the_seed():
    values = [p.value for p in TranslationTask(test_size=50, seed=3).test]
    assert [p.value for p in TranslationTask(test_size=50, seed=3).test] == values
    assert [p.value for p in TranslationTask(test_size=50, seed=4).test] != values


def test_max_digits_bounds_the_numbers_and_each_length_is_drawn():
    task = TranslationTask(kinds=["number"], max_digits=4, test_size=10)
    lengths = [len(str(p.value)) for p in task.sample(2000, torch.Generator().manual_seed(0))]
    assert set(lengths) == {1, 2, 3, 4}
    assert min(lengths.count(d) for d in range(1, 5)) > 400  # about 500 each


def test_the_vocabulary_covers_every_token_and_starts_with_pad_and_markers():
    task = TranslationTask(max_digits=8, test_size=10)
    vocab = task.vocabulary()
    assert vocab.itos[:3] == ["<pad>", BOS, EOS]
    for pair in task.sample(3000, torch.Generator().manual_seed(0)):
        vocab.encode(pair.source("en-zh"))
        vocab.encode(pair.source("zh-en"))


def test_encoded_pairs_have_the_seq2seq_batch_shape_and_decode_back():
    task = TranslationTask(test_size=10)
    vocab = task.vocabulary()
    pairs = [Pair.of(dt.date(2024, 3, 5)), Pair.of(7)]
    src, tgt = encode_pairs(pairs, vocab, "en-zh")
    assert src.shape == (2, 9) and tgt.shape == (2, 11)  # 9 English tokens; <s> 9 chars </s>
    assert (tgt[:, 0] == vocab.stoi[BOS]).all() and src[1, 1:].eq(vocab.pad_id).all()
    assert decode_tokens(tgt, vocab) == [p.target("en-zh") for p in pairs]
    assert vocab.decode(src[1, :1]) == ["seven"]


def test_a_batch_of_both_directions_is_half_english_half_chinese():
    task = TranslationTask(test_size=10)
    vocab = task.vocabulary()
    src, tgt = task.batch(8, torch.Generator().manual_seed(0), vocab, "both")
    cjk = re.compile(r"[\u4e00-\u9fff]")
    chinese_source = [any(cjk.match(t) for t in vocab.decode(row)) for row in src]
    assert not any(chinese_source[:4]) and all(chinese_source[4:])
    assert all(t == vocab.stoi[BOS] for t in tgt[:, 0].tolist())


def test_decode_tokens_stops_at_the_end_marker():
    vocab = TranslationTask(test_size=10).vocabulary()
    ids = torch.tensor([vocab.encode([BOS, "三", EOS, "四"])])
    assert decode_tokens(ids, vocab) == [["三"]]
    with pytest.raises(ValueError, match=r"ids must be a 2-D tensor \(N, T\); got \(2,\)"):
        decode_tokens(ids[0, :2], vocab)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kinds": ["dates"]}, "kinds must be a non-empty sequence"),
        ({"kinds": "date"}, "kinds must be a non-empty sequence"),
        ({"max_digits": 9}, r"max_digits must be an integer in \[1, 8\]"),
        ({"max_digits": 0}, r"max_digits must be an integer in \[1, 8\]"),
        ({"years": (2000, 1999)}, "years must be"),
        ({"test_size": 0}, "test_size must be a positive integer"),
        ({"kinds": ["number"], "max_digits": 1, "test_size": 3}, "test_size must be at most 2"),
    ],
)
def test_bad_task_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TranslationTask(**kwargs)


def test_encode_pairs_refuses_no_pairs_and_a_bad_direction():
    vocab = TranslationTask(test_size=10).vocabulary()
    with pytest.raises(ValueError, match="pairs must be a non-empty sequence of Pair"):
        encode_pairs([], vocab, "en-zh")
    with pytest.raises(ValueError, match="direction must be one of"):
        encode_pairs([Pair.of(3)], vocab, "both")
    with pytest.raises(TypeError, match="pairs must be a sequence of Pair"):
        encode_pairs([3], vocab, "en-zh")


def test_exact_matches_compares_whole_answers():
    vocab = TranslationTask(test_size=10).vocabulary()
    pairs = [Pair.of(312), Pair.of(312)]
    _, right = encode_pairs(pairs[:1], vocab, "en-zh")
    wrong = torch.tensor([vocab.encode([BOS, "三", "百", "一", "十", EOS, "二"])])
    ids = torch.cat([right, wrong[:, : right.size(1)]])
    assert exact_matches(ids, pairs, vocab, "en-zh") == [True, False]
    with pytest.raises(ValueError, match=r"ids must have one row per pair \(1\); got \(2, 7\)"):
        exact_matches(ids, pairs[:1], vocab, "en-zh")


def test_log_likelihood_sums_teacher_forced_log_probabilities_of_answers_of_any_length():
    from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer

    vocab = TranslationTask(test_size=10).vocabulary()
    torch.manual_seed(0)
    model = Seq2SeqTransformer(Seq2SeqConfig(len(vocab), d_model=16, nhead=2, max_len=24)).eval()
    pairs = [Pair.of(312), Pair.of(7)]
    answers = [list("三百一十二"), list("七十七七")]  # the second longer than its reference
    got = log_likelihood(model, pairs, answers, vocab, "en-zh")
    for n, (pair, answer) in enumerate(zip(pairs, answers)):  # one pair at a time, by hand
        src, _ = encode_pairs([pair], vocab, "en-zh")
        tgt = torch.tensor([vocab.encode([BOS, *answer, EOS])])
        with torch.no_grad():
            logp = model(src, tgt[:, :-1]).log_softmax(-1)[0]  # (T-1, vocab)
        expected = sum(logp[i, tgt[0, i + 1]] for i in range(tgt.size(1) - 1))
        torch.testing.assert_close(got[n], expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match=r"targets must have one entry per pair \(2\); got 1"):
        log_likelihood(model, pairs, answers[:1], vocab, "en-zh")
