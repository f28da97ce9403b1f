"""Number words: spelled as in British English, encoded and decoded without loss, split
without overlap, and the order-blind ceiling counts numbers that share their words."""

import pytest
import torch

from attnbook.tasks.numbers import (
    BOS,
    EOS,
    decode_digits,
    encode_numbers,
    number_batch,
    number_to_words,
    number_vocabulary,
    order_blind_ceiling,
    split_numbers,
)


@pytest.mark.parametrize(
    "n, words",
    [
        (0, "zero"),
        (7, "seven"),
        (13, "thirteen"),
        (40, "forty"),
        (42, "forty two"),
        (100, "one hundred"),
        (105, "one hundred and five"),
        (312, "three hundred and twelve"),
        (990, "nine hundred and ninety"),
        (999, "nine hundred and ninety nine"),
    ],
)
def test_number_words(n, words):
    assert number_to_words(n) == words


def test_every_number_has_different_words():
    assert len({number_to_words(n) for n in range(1000)}) == 1000


@pytest.mark.parametrize("n", [-1, 1000, 3.0, True])
def test_numbers_outside_the_range_are_refused(n):
    with pytest.raises(ValueError, match=r"numbers must be integers in \[0, 1000\)"):
        number_to_words(n)


def test_vocabulary_has_padding_first_and_every_word():
    vocab = number_vocabulary()
    assert vocab.pad_id == 0 and vocab.itos[1:3] == [BOS, EOS]
    words = {w for n in range(1000) for w in number_to_words(n).split()}
    assert words <= set(vocab.itos) and len(vocab) == 3 + 10 + len(words)


def test_encode_then_decode_gives_the_digits_back():
    vocab = number_vocabulary()
    numbers = [0, 7, 312, 40, 999]
    src, tgt = encode_numbers(numbers, vocab)
    assert src.shape == (5, 5) and tgt.shape == (5, 5)  # "nine hundred and ninety nine"; <s>999</s>
    assert (tgt[:, 0] == vocab.stoi[BOS]).all()
    assert decode_digits(tgt, vocab) == [str(n) for n in numbers]
    assert vocab.decode(src[2]) == ["three", "hundred", "and", "twelve", "<pad>"]


def test_decode_stops_at_the_end_token():
    vocab = number_vocabulary()
    ids = torch.tensor([vocab.encode(["4", "2", EOS, "7"])])
    assert decode_digits(ids, vocab) == ["42"]


def test_decode_refuses_a_single_row():
    with pytest.raises(ValueError, match=r"ids must be a 2-D tensor \(N, T\); got \(3,\)"):
        decode_digits(torch.tensor([1, 2, 3]), number_vocabulary())


def test_split_is_a_partition_and_reproducible():
    train, test = split_numbers(test_size=200, seed=3)
    assert len(test) == 200 and sorted(train + test) == list(range(1000))
    assert split_numbers(test_size=200, seed=3) == (train, test)
    assert split_numbers(test_size=200, seed=4)[1] != test


def test_split_refuses_an_empty_test_set():
    with pytest.raises(ValueError, match=r"test_size must be an integer in \[1, 999\]"):
        split_numbers(test_size=0)


def test_batches_come_from_the_given_numbers_only():
    vocab = number_vocabulary()
    _, tgt = number_batch(64, torch.Generator().manual_seed(0), [5, 17], vocab)
    assert set(decode_digits(tgt, vocab)) == {"5", "17"}


def test_order_blind_ceiling_counts_shared_word_multisets():
    assert order_blind_ceiling([203, 302]) == 0.5  # same words, different order
    assert order_blind_ceiling([203, 304]) == 1.0
    assert order_blind_ceiling([7]) == 1.0


def test_a_held_out_number_sharing_its_words_with_a_training_number_is_lost():
    # 302 is in training: an order-blind model that fits it answers 302 to "two hundred and
    # three" as well, so 203 is wrong; 304 (with 403 unseen) can still be right.
    assert order_blind_ceiling([203, 304], seen=[302]) == 0.5
    assert order_blind_ceiling([203, 304], seen=[]) == 1.0


def test_numbers_that_were_seen_can_still_be_right():
    assert order_blind_ceiling([302], seen=[302]) == 1.0
    assert order_blind_ceiling([203, 302], seen=[302]) == 0.5  # 302 right, 203 lost


def test_the_held_out_ceiling_of_the_book_split():
    train, test = split_numbers(test_size=200, seed=0)
    assert order_blind_ceiling(test) == 0.96  # among themselves, few held-out numbers collide
    shared = sum(
        sorted(number_to_words(n).split()) in [sorted(number_to_words(m).split()) for m in train]
        for n in test
    )
    assert shared == 112  # so at most 88 held-out numbers are winnable
    assert order_blind_ceiling(test, seen=train) == 0.4  # 80 distinct multisets among the 88


@pytest.mark.parametrize("numbers", [[], 7, "312"])
def test_order_blind_ceiling_refuses_no_numbers(numbers):
    with pytest.raises(ValueError, match="numbers must be a non-empty sequence of integers"):
        order_blind_ceiling(numbers)
