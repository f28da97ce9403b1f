"""Number words to digits: ``"three hundred and twelve"`` -> ``"312"`` (chapter 5's complete model).

A sequence-to-sequence task small enough to train in seconds that still needs attention across
positions: the output has a different length from the input, and which word gives which digit
depends on the words around it (``"twelve"`` gives two digits, ``"twenty"`` one digit and maybe a
``0`` after it). Word order matters too: ``"two hundred and three"`` and ``"three hundred and
two"`` use the same words, so a model that ignored positions could not tell them apart
(:func:`order_blind_ceiling` counts how often that happens).

Numbers are written in British English, with ``"and"`` after the hundreds and no hyphens:
``0`` is ``"zero"``, ``40`` is ``"forty"``, ``105`` is ``"one hundred and five"``.

One :class:`~attnbook.tasks.vocab.Vocabulary` holds the words, the digits and the markers
``<s>`` (start of the target) and ``</s>`` (end); id 0 is padding.

Shape legend: N batch, S source length (words), T target length (``<s>``, digits, ``</s>``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from attnbook.tasks.vocab import Vocabulary, pad_rows

__all__ = [
    "BOS",
    "EOS",
    "number_to_words",
    "number_vocabulary",
    "split_numbers",
    "encode_numbers",
    "number_batch",
    "decode_digits",
    "order_blind_ceiling",
]

BOS, EOS = "<s>", "</s>"
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _check_number(n: object, limit: int = 1000) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < limit:
        raise ValueError(f"numbers must be integers in [0, {limit}); got {n!r}")
    return n


def number_to_words(n: int) -> str:
    """British English words for ``0 <= n < 1000``: ``312`` -> ``"three hundred and twelve"``."""
    _check_number(n)
    hundreds, rest = divmod(n, 100)
    words = [_ONES[hundreds], "hundred"] if hundreds else []
    if rest and hundreds:
        words.append("and")
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words += [_TENS[tens]] + ([_ONES[ones]] if ones else [])
    elif rest or not hundreds:
        words.append(_ONES[rest])
    return " ".join(words)


def number_vocabulary() -> Vocabulary:
    """``<pad>`` (id 0), ``<s>``, ``</s>``, the ten digits, then every word the task uses."""
    words = [*_ONES, *_TENS[2:], "hundred", "and"]
    return Vocabulary([BOS, EOS, *"0123456789", *words])


def split_numbers(test_size: int = 200, seed: int = 0) -> tuple[list[int], list[int]]:
    """Shuffle 0 .. 999 with ``seed`` and hold out ``test_size`` of them.

    Returns:
        ``(train, test)``: two sorted lists of numbers with no number in both.
    """
    if isinstance(test_size, bool) or not isinstance(test_size, int) or not 0 < test_size < 1000:
        raise ValueError(f"test_size must be an integer in [1, 999]; got {test_size!r}")
    order = torch.randperm(1000, generator=torch.Generator().manual_seed(seed)).tolist()
    return sorted(order[test_size:]), sorted(order[:test_size])


def encode_numbers(numbers: Sequence[int], vocab: Vocabulary) -> tuple[Tensor, Tensor]:
    """Token ids of the words and of the digits of each number, padded with ``vocab.pad_id``.

    Args:
        numbers: integers in [0, 1000).
        vocab: from :func:`number_vocabulary`.

    Returns:
        ``(src, tgt)``: src (N, S), the words; tgt (N, T), ``<s>``, the digits, ``</s>``.
        Both are as long as their longest row.
    """
    if isinstance(numbers, (int, str)) or len(numbers) == 0:
        raise ValueError(f"numbers must be a non-empty sequence of integers; got {numbers!r}")
    numbers = [_check_number(n) for n in numbers]
    src = [vocab.encode(number_to_words(n).split()) for n in numbers]
    tgt = [vocab.encode([BOS, *str(n), EOS]) for n in numbers]
    return pad_rows(src, vocab.pad_id), pad_rows(tgt, vocab.pad_id)


def number_batch(
    batch_size: int, generator: torch.Generator, numbers: Sequence[int], vocab: Vocabulary
) -> tuple[Tensor, Tensor]:
    """A batch of ``batch_size`` numbers drawn with replacement from ``numbers``, encoded.

    Draws its randomness from ``generator`` only, as :func:`attnbook.train.fit` requires.
    """
    pick = torch.randint(len(numbers), (batch_size,), generator=generator)  # (N,)
    return encode_numbers([numbers[i] for i in pick.tolist()], vocab)


def decode_digits(ids: Tensor, vocab: Vocabulary) -> list[str]:
    """The text of each row of generated ids (N, T): tokens up to the first ``</s>``, joined.

    A leading ``<s>`` is dropped; padding and anything after ``</s>`` are ignored.
    """
    if not isinstance(ids, Tensor) or ids.dim() != 2:
        shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
        raise ValueError(f"ids must be a 2-D tensor (N, T); got {shape}")
    texts = []
    for row in ids.tolist():
        tokens = vocab.decode(row)
        if tokens and tokens[0] == BOS:
            tokens = tokens[1:]
        if EOS in tokens:
            tokens = tokens[: tokens.index(EOS)]
        texts.append("".join(t for t in tokens if t != vocab.pad))
    return texts


def _words(n: int) -> tuple[str, ...]:
    """The multiset of ``n``'s words, as a sorted tuple: all an order-blind model sees."""
    return tuple(sorted(number_to_words(n).split()))


def order_blind_ceiling(numbers: Sequence[int], seen: Sequence[int] = ()) -> float:
    """The highest exact-match accuracy on ``numbers`` of any model that ignores word order.

    Such a model sees only the multiset of words, so numbers with the same words (``203`` and
    ``302``) get the same answer, and it can be right on at most one of them: without ``seen``
    the ceiling is the number of distinct word multisets among ``numbers`` divided by their
    count.

    ``seen`` (the training numbers) adds what fitting them implies: for a word multiset that
    some number in ``seen`` has, the model answers with one of those numbers. A number in
    ``numbers`` with that multiset can then be right only if it is itself in ``seen``; a
    held-out number that shares its words with a training number is always wrong.

    Args:
        numbers: the numbers scored, in [0, 1000).
        seen: numbers the model is assumed to answer from, in [0, 1000); may be empty.
    """
    if isinstance(numbers, (int, str)) or len(numbers) == 0:
        raise ValueError(f"numbers must be a non-empty sequence of integers; got {numbers!r}")
    numbers = [_check_number(n) for n in numbers]
    seen_set = {_check_number(n) for n in seen}
    seen_bags = {_words(n) for n in seen_set}
    winnable = {
        _words(n) for n in numbers if _words(n) not in seen_bags or n in seen_set
    }  # word multisets on which the model can still be right once
    return len(winnable) / len(numbers)
