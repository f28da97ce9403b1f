"""English <-> Chinese translation of dates and numbers, generated offline (Part V, chapter 1).

A translation task with real reordering that a small model learns in seconds:

* dates: ``"the fifth of march , 2024"`` <-> ``"2024年3月5日"``: English puts the day first and the
  year last, Chinese the year first and the day last, and the day is an ordinal word on one
  side and digits on the other;
* numbers: ``"three hundred and twelve"`` <-> ``"三百一十二"``, up to 99,999,999: English groups
  digits by thousands (``"twelve thousand"``), Chinese by ten thousands (``"一万二千"``), so
  the words that carry a digit do not line up one to one.

Chinese numbers are written as a school textbook reads them (the 读数规则), with one
simplification of the book's own: 二 throughout, where speech and much writing say 两 before
千, 万 and often 百 (两千, 两万). ``十`` alone at the start of a number (``十一``, ``十万``)
but ``一十`` inside one (``一百一十``); one ``零`` for a run of zeros inside a four-digit group
(``一百零五``, ``一千零五十``) and before a group that starts with zeros (``十万零五百``), none
for zeros at a group's end (``一百万一千``). English numbers are British, as in :mod:`attnbook.tasks.numbers`.

Tokens: English words and punctuation, Chinese characters, and every numeral split into digits
on both sides (``"2024"`` is ``2 0 2 4``), so no year needs a token of its own. One
:class:`~attnbook.tasks.vocab.Vocabulary` holds both languages with ``<s>`` and ``</s>``.

A :class:`TranslationTask` holds out ``test_size`` dates and numbers: no training batch ever
contains one of them, in either direction. Its length knob is ``max_digits``: a number's digit
count is drawn uniformly from 1 to ``max_digits``, so long inputs are as common as short ones.

Shape legend: N batch, S source length (tokens), T target length (``<s>``, tokens, ``</s>``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attnbook.tasks.numbers import BOS, EOS, number_to_words, number_vocabulary
from attnbook.tasks.vocab import Vocabulary, pad_rows, tokenize

__all__ = [
    "DIRECTIONS",
    "KINDS",
    "Pair",
    "TranslationTask",
    "number_to_english",
    "number_to_chinese",
    "date_to_english",
    "date_to_chinese",
    "text_tokens",
    "encode_pairs",
    "decode_tokens",
    "exact_matches",
    "log_likelihood",
]

DIRECTIONS: tuple[str, ...] = ("en-zh", "zh-en")
KINDS: tuple[str, ...] = ("date", "number")
MAX_NUMBER = 10**8  # numbers are in [0, MAX_NUMBER)

_ZH_DIGITS = "零一二三四五六七八九"
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()


def _check_number(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < MAX_NUMBER:
        raise ValueError(f"numbers must be integers in [0, {MAX_NUMBER:_}); got {n!r}")
    return n


def number_to_english(n: int) -> str:
    """British English for ``0 <= n < 10**8``: ``1005`` -> ``"one thousand and five"``."""
    _check_number(n)
    if n < 1000:
        return number_to_words(n)
    millions, rest = divmod(n, 10**6)
    thousands, ones = divmod(rest, 1000)
    parts = [f"{number_to_words(millions)} million"] if millions else []
    if thousands:
        parts.append(f"{number_to_words(thousands)} thousand")
    if ones:
        parts.append(("and " if ones < 100 else "") + number_to_words(ones))
    return " ".join(parts)


def _chinese_group(n: int) -> str:
    """``1 <= n < 10000`` in Chinese, one 零 per inner run of zeros, none at the end."""
    out, zero = [], False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if digit == 0:
            zero = zero or bool(out)
            continue
        if zero:
            out.append("零")
            zero = False
        out.append(_ZH_DIGITS[digit] + unit)
    return "".join(out)


def number_to_chinese(n: int) -> str:
    """Chinese numerals for ``0 <= n < 10**8``: ``312`` -> ``"三百一十二"``, ``105`` -> ``"一百零五"``."""
    _check_number(n)
    if n == 0:
        return "零"
    high, low = divmod(n, 10_000)
    text = f"{_chinese_group(high)}万" if high else ""
    if low:
        text += ("零" if high and low < 1000 else "") + _chinese_group(low)
    return text[1:] if text.startswith("一十") else text  # 十一, 十万; but 一百一十


def _check_date(date: object) -> dt.date:
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        raise TypeError(f"date must be a datetime.date; got {type(date).__name__}")
    return date


def _ordinal(day: int) -> str:
    if day <= 20:
        return _ORDINALS[day - 1]
    tens, ones = divmod(day, 10)
    if ones == 0:
        return "thirtieth"
    return f"{'twenty' if tens == 2 else 'thirty'} {_ORDINALS[ones - 1]}"


def date_to_english(date: dt.date) -> str:
    """``date(2024, 3, 5)`` -> ``"the fifth of march , 2024"`` (lower case, spaced comma)."""
    _check_date(date)
    return f"the {_ordinal(date.day)} of {_MONTHS[date.month - 1]} , {date.year}"


def date_to_chinese(date: dt.date) -> str:
    """``date(2024, 3, 5)`` -> ``"2024年3月5日"``."""
    _check_date(date)
    return f"{date.year}年{date.month}月{date.day}日"


def text_tokens(text: str) -> list[str]:
    """:func:`~attnbook.tasks.vocab.tokenize`, with every numeral split into its digits."""
    return [piece for token in tokenize(text) for piece in (token if token.isdigit() else [token])]


@dataclass(frozen=True)
class Pair:
    """One date or number in both languages."""

    kind: str  # "date" or "number"
    value: dt.date | int  # what both texts say
    en: str  # the English text
    zh: str  # the Chinese text

    @classmethod
    def of(cls, value: dt.date | int) -> Pair:
        """The pair for a date or a number."""
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return cls("date", value, date_to_english(value), date_to_chinese(value))
        return cls("number", value, number_to_english(value), number_to_chinese(value))

    def source(self, direction: str) -> list[str]:
        """The tokens the model reads in ``direction`` ("en-zh" reads English)."""
        return text_tokens(self.en if _check_direction(direction) == "en-zh" else self.zh)

    def target(self, direction: str) -> list[str]:
        """The tokens the model should write in ``direction``, without ``<s>``/``</s>``."""
        return text_tokens(self.zh if _check_direction(direction) == "en-zh" else self.en)


def _check_direction(direction: object) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    return direction  # type: ignore[return-value]


class TranslationTask:
    """Dates and numbers to translate, with ``test_size`` of them held out of training.

    Args:
        kinds: which of ``"date"`` and ``"number"`` to draw; a draw picks a kind uniformly.
        max_digits: numbers have 1 to ``max_digits`` digits (at most 8), each count equally
            likely; the length knob.
        years: dates fall in the years ``years[0] .. years[1]`` inclusive.
        test_size: how many distinct items to hold out (drawn like training items, but never
            more than a quarter of the items of one kind and digit count, so that short
            numbers are not all held out).
        seed: seeds the held-out draw.

    Attributes:
        test: the held-out :class:`Pair` objects, in the order drawn.
    """

    def __init__(
        self,
        kinds: Sequence[str] = KINDS,
        max_digits: int = 6,
        years: tuple[int, int] = (1900, 2099),
        test_size: int = 500,
        seed: int = 0,
    ) -> None:
        if isinstance(kinds, str) or not kinds or any(k not in KINDS for k in kinds):
            raise ValueError(f"kinds must be a non-empty sequence from {KINDS}; got {kinds!r}")
        if isinstance(max_digits, bool) or not isinstance(max_digits, int):
            raise ValueError(f"max_digits must be an integer in [1, 8]; got {max_digits!r}")
        if not 1 <= max_digits <= 8:
            raise ValueError(f"max_digits must be an integer in [1, 8]; got {max_digits!r}")
        if len(years) != 2 or not 1000 <= years[0] <= years[1] <= 9999:
            raise ValueError(
                f"years must be (first, last) with 1000 <= first <= last <= 9999; got {years!r}"
            )
        if isinstance(test_size, bool) or not isinstance(test_size, int) or test_size < 1:
            raise ValueError(f"test_size must be a positive integer; got {test_size!r}")
        self.kinds = tuple(dict.fromkeys(kinds))
        self.max_digits = max_digits
        self.years = (int(years[0]), int(years[1]))
        self._first_day = dt.date(self.years[0], 1, 1)
        self._days = (dt.date(self.years[1], 12, 31) - self._first_day).days + 1
        capacity = {("date", 0): self._days // 4}
        capacity.update(
            {("number", d): (10**d - 10 ** (d - 1) + (d == 1)) // 4 for d in range(1, 9)}
        )
        available = sum(capacity[(k, d)] for k in self.kinds for d in self._digit_range(k))
        if test_size > available:
            raise ValueError(
                f"test_size must be at most {available} for these kinds and digits; got {test_size}"
            )
        generator = torch.Generator().manual_seed(seed)
        held: dict[dt.date | int, Pair] = {}
        counts: dict[tuple[str, int], int] = {}
        while len(held) < test_size:
            value = self._draw(generator)
            bucket = self._bucket_of(value)
            if value in held or counts.get(bucket, 0) >= capacity[bucket]:
                continue
            counts[bucket] = counts.get(bucket, 0) + 1
            held[value] = Pair.of(value)
        self.test: list[Pair] = list(held.values())
        self._held = set(held)

    def _digit_range(self, kind: str) -> range:
        """The digit counts of a kind's buckets (0 stands for "not a number")."""
        return range(1, self.max_digits + 1) if kind == "number" else range(1)

    @staticmethod
    def _bucket_of(value: dt.date | int) -> tuple[str, int]:
        return ("number", len(str(value))) if isinstance(value, int) else ("date", 0)

    def _draw(self, generator: torch.Generator) -> dt.date | int:
        """One date or number, from ``generator`` only."""
        kind = self.kinds[int(torch.randint(len(self.kinds), (), generator=generator))]
        if kind == "date":
            offset = int(torch.randint(self._days, (), generator=generator))
            return self._first_day + dt.timedelta(days=offset)
        digits = 1 + int(torch.randint(self.max_digits, (), generator=generator))
        low = 0 if digits == 1 else 10 ** (digits - 1)
        return low + int(torch.randint(10**digits - low, (), generator=generator))

    def is_held_out(self, value: dt.date | int) -> bool:
        """Whether ``value`` is one of the held-out items."""
        return value in self._held

    def sample(self, n: int, generator: torch.Generator) -> list[Pair]:
        """``n`` training pairs, drawn with replacement; never a held-out item."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer; got {n!r}")
        pairs = []
        while len(pairs) < n:
            value = self._draw(generator)
            if value not in self._held:
                pairs.append(Pair.of(value))
        return pairs

    def all_tokens(self) -> list[str]:
        """``<s>``, ``</s>``, digits, then every English and Chinese token the task can use."""
        english = [t for t in number_vocabulary().itos if t.isalpha()]
        english += ["thousand", "million", "the", "of", ",", *_MONTHS, *_ORDINALS, "thirtieth"]
        chinese = [*_ZH_DIGITS, "十", "百", "千", "万", "年", "月", "日"]
        return [BOS, EOS, *"0123456789", *dict.fromkeys(english), *chinese]

    def vocabulary(self) -> Vocabulary:
        """The vocabulary of :meth:`all_tokens`, padding at id 0."""
        return Vocabulary.for_tasks(self)

    def batch(
        self, batch_size: int, generator: torch.Generator, vocab: Vocabulary, direction: str
    ) -> tuple[Tensor, Tensor]:
        """``batch_size`` training pairs encoded for ``direction`` (see :func:`encode_pairs`).

        ``direction="both"`` translates the first half of the batch from English and the rest
        from Chinese; the source's script tells the model which way to go. Draws its
        randomness from ``generator`` only, as :func:`attnbook.train.fit` requires.
        """
        pairs = self.sample(batch_size, generator)
        if direction == "both":
            half = batch_size // 2
            return _encode(
                [(p, "en-zh") for p in pairs[:half]] + [(p, "zh-en") for p in pairs[half:]],
                vocab,
            )
        return encode_pairs(pairs, vocab, direction)


def _encode(jobs: list[tuple[Pair, str]], vocab: Vocabulary) -> tuple[Tensor, Tensor]:
    src = [vocab.encode(p.source(d)) for p, d in jobs]
    tgt = [vocab.encode([BOS, *p.target(d), EOS]) for p, d in jobs]
    return pad_rows(src, vocab.pad_id), pad_rows(tgt, vocab.pad_id)


def encode_pairs(pairs: Sequence[Pair], vocab: Vocabulary, direction: str) -> tuple[Tensor, Tensor]:
    """Token ids of the source and target of each pair, padded with ``vocab.pad_id``.

    Args:
        pairs: non-empty, from :meth:`TranslationTask.sample`, ``.test`` or :meth:`Pair.of`.
        vocab: from :meth:`TranslationTask.vocabulary`.
        direction: ``"en-zh"`` or ``"zh-en"``.

    Returns:
        ``(src, tgt)``: src (N, S); tgt (N, T), ``<s>``, the target tokens, ``</s>``; each as
        long as its longest row: the batch shape :func:`attnbook.models.seq2seq.seq2seq_loss`
        takes.
    """
    _check_direction(direction)
    if isinstance(pairs, Pair) or len(pairs) == 0:
        raise ValueError("pairs must be a non-empty sequence of Pair")
    if not all(isinstance(p, Pair) for p in pairs):
        raise TypeError("pairs must be a sequence of Pair")
    return _encode([(p, direction) for p in pairs], vocab)


def decode_tokens(ids: Tensor, vocab: Vocabulary) -> list[list[str]]:
    """The tokens of each row of generated ids (N, T), up to the first ``</s>``.

    A leading ``<s>`` is dropped, and so is padding. Compare the result with
    :meth:`Pair.target` for an exact match.
    """
    if not isinstance(ids, Tensor) or ids.dim() != 2:
        shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
        raise ValueError(f"ids must be a 2-D tensor (N, T); got {shape}")
    rows = []
    for row in ids.tolist():
        tokens = vocab.decode(row)
        if tokens and tokens[0] == BOS:
            tokens = tokens[1:]
        if EOS in tokens:
            tokens = tokens[: tokens.index(EOS)]
        rows.append([t for t in tokens if t != vocab.pad])
    return rows


def exact_matches(
    ids: Tensor, pairs: Sequence[Pair], vocab: Vocabulary, direction: str
) -> list[bool]:
    """Whether each row of generated ids (N, T) is exactly its pair's target in ``direction``."""
    _check_direction(direction)
    if isinstance(ids, Tensor) and ids.dim() == 2 and ids.size(0) != len(pairs):
        raise ValueError(f"ids must have one row per pair ({len(pairs)}); got {tuple(ids.shape)}")
    return [out == p.target(direction) for out, p in zip(decode_tokens(ids, vocab), pairs)]


def log_likelihood(
    model: torch.nn.Module,
    pairs: Sequence[Pair],
    targets: Sequence[Sequence[str]],
    vocab: Vocabulary,
    direction: str,
) -> Tensor:
    """The log-probability (N,) that ``model`` writes ``targets[n]``, then ``</s>``, for pair n's source.

    Teacher forcing scores a whole answer in one forward pass: the sum, over its tokens and
    ``</s>``, of the log-softmax of ``model(src, tgt[:, :-1])`` at each next token. Score the
    reference (``p.target(direction)``) and a decoded answer to see which the model prefers:
    the sum is not divided by the length. Runs under ``torch.no_grad``.
    """
    src, _ = encode_pairs(pairs, vocab, direction)
    if len(targets) != len(pairs):
        raise ValueError(f"targets must have one entry per pair ({len(pairs)}); got {len(targets)}")
    tgt = pad_rows([vocab.encode([BOS, *t, EOS]) for t in targets], vocab.pad_id)  # (N, T)
    with torch.no_grad():
        logp = model(src, tgt[:, :-1]).log_softmax(-1)  # (N, T-1, vocab)
    logp = logp.gather(-1, tgt[:, 1:, None])[..., 0]  # (N, T-1)
    return (logp * (tgt[:, 1:] != vocab.pad_id)).sum(1)
