"""attnbook.lab.text: tokenizers learned from the corpus, and windows of a token stream."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnbook.corpus import book_prose
from attnbook.lab.text import (
    BPETokenizer,
    CharTokenizer,
    consecutive_windows,
    random_windows,
    train_bpe,
)

ENGLISH = "\n".join(book_prose("en")[:60])
CHINESE = "\n".join(book_prose("zh")[:60])


@pytest.fixture(scope="module")
def bpe() -> BPETokenizer:
    return train_bpe([ENGLISH], vocab_size=400)


# --- byte-level BPE -------------------------------------------------------------------------------


def test_bpe_has_the_vocabulary_asked_for_and_merges_frequent_words(bpe):
    assert bpe.vocab_size == 400
    assert len(bpe.encode(" the")) == 1  # the commonest word is one token
    assert len(bpe.encode(ENGLISH)) < 0.6 * len(ENGLISH.encode("utf-8"))


def test_bpe_round_trips_the_corpus_and_text_it_never_saw(bpe):
    for text in (ENGLISH, CHINESE, "  two  spaces,\ttabs\n\nand 🙂 émigré 老张说他很累 ", ""):
        assert bpe.decode(bpe.encode(text)) == text


SMALL = train_bpe(["a small text to learn a few merges from, a small text"], 260)


@given(st.text(max_size=40))
def test_bpe_round_trips_any_string(text):
    assert SMALL.decode(SMALL.encode(text)) == text


def test_training_twice_gives_the_same_vocabulary_and_ids(bpe):
    again = train_bpe([ENGLISH], vocab_size=400)
    assert again.tokenizer.get_vocab() == bpe.tokenizer.get_vocab()
    assert again.tokenizer.to_str() == bpe.tokenizer.to_str()  # merges in the same order too
    assert again.encode(CHINESE + ENGLISH) == bpe.encode(CHINESE + ENGLISH)


def test_bpe_pieces_are_readable_text_that_joins_back(bpe):
    ids = bpe.encode("The heads attend.")
    pieces = bpe.pieces(ids)
    assert "".join(pieces) == "The heads attend."
    assert not any("Ġ" in piece for piece in pieces)
    assert bpe.pieces(torch.tensor(ids)) == pieces


def test_bpe_decodes_a_tensor_like_a_list(bpe):
    ids = bpe.encode("attention")
    assert bpe.decode(torch.tensor(ids)) == bpe.decode(ids) == "attention"


# --- characters -----------------------------------------------------------------------------------


def test_characters_round_trip_except_unknown_ones():
    chars = CharTokenizer.fit([CHINESE])
    assert chars.decode(chars.encode(CHINESE)) == CHINESE
    ids = chars.encode("老张说他很累，龘")  # 龘 is not in the text
    assert ids[-1] == chars.unk_id and chars.unk_id not in ids[:-1]
    assert chars.decode(ids) == "老张说他很累，\ufffd"


def test_min_count_sends_rare_characters_to_the_unknown_id():
    chars = CharTokenizer.fit(["aaab", "ab", "c"], min_count=2)
    assert chars.itos == ["\ufffd", "a", "b"]  # most frequent first; c is seen once
    assert chars.encode("abc") == [1, 2, 0]
    assert chars.vocab_size == 3 and chars.pieces([2, 0]) == ["b", "\ufffd"]


def test_fitting_twice_gives_the_same_ids_whatever_the_order_of_ties():
    assert CharTokenizer.fit(["ba"]).itos == CharTokenizer.fit(["ab"]).itos == ["\ufffd", "a", "b"]


# --- bad input ------------------------------------------------------------------------------------


def test_tokenizer_arguments_are_checked_and_named(bpe):
    with pytest.raises(ValueError, match="vocab_size"):
        train_bpe([ENGLISH], vocab_size=100)
    with pytest.raises(TypeError, match="texts"):
        train_bpe(ENGLISH, vocab_size=300)
    with pytest.raises(TypeError, match="texts"):
        CharTokenizer.fit([1, 2])
    with pytest.raises(ValueError, match="min_count"):
        CharTokenizer.fit(["abc"], min_count=0)
    with pytest.raises(TypeError, match="text"):
        bpe.encode(["a list"])
    with pytest.raises(ValueError, match="ids"):
        bpe.decode([0, 400])
    with pytest.raises(ValueError, match="ids"):
        CharTokenizer.fit(["ab"]).decode([-1])
    with pytest.raises(TypeError, match="ids"):
        bpe.decode("abc")


# --- windows --------------------------------------------------------------------------------------


def test_random_windows_are_the_stream_and_the_stream_one_token_later():
    ids = torch.arange(100, 150)
    x, y = random_windows(
        ids, block_size=8, batch_size=5, generator=torch.Generator().manual_seed(0)
    )
    assert x.shape == y.shape == (5, 8) and x.dtype == ids.dtype
    assert torch.equal(y[:, :-1], x[:, 1:])
    starts = x[:, 0] - 100
    for row, start in zip(x, starts):
        assert torch.equal(row, ids[start : start + 8])
    assert torch.equal(y, x + 1)  # the stream counts up, so each target is its input + 1


def test_random_windows_are_reproducible_with_a_seeded_generator():
    ids = torch.randint(50, (1000,), generator=torch.Generator().manual_seed(1))
    first = random_windows(ids, 16, 4, torch.Generator().manual_seed(7))
    again = random_windows(ids, 16, 4, torch.Generator().manual_seed(7))
    other = random_windows(ids, 16, 4, torch.Generator().manual_seed(8))
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0])


def test_random_windows_reach_both_ends_of_the_stream():
    ids = torch.arange(10)
    x, y = random_windows(ids, 8, 200, torch.Generator().manual_seed(0))
    assert set(x[:, 0].tolist()) == {0, 1}  # the only starts with 9 tokens after them
    assert y.max() == 9


def test_a_stream_of_exactly_block_size_plus_one_gives_one_window():
    x, y = random_windows(torch.arange(9), 8, 3)
    assert torch.equal(x, torch.arange(8).expand(3, 8)) and torch.equal(y, x + 1)


def test_consecutive_windows_score_every_target_once():
    ids = torch.arange(23)
    x, y = consecutive_windows(ids, 5)
    assert x.shape == y.shape == (4, 5)
    assert torch.equal(x.flatten(), torch.arange(20)) and torch.equal(
        y.flatten(), torch.arange(1, 21)
    )


def test_windows_refuse_a_stream_shorter_than_block_size_plus_one():
    with pytest.raises(ValueError, match="block_size"):
        random_windows(torch.arange(8), 8, 2)
    with pytest.raises(ValueError, match="block_size"):
        consecutive_windows(torch.arange(8), 8)


def test_window_arguments_are_checked_and_named():
    with pytest.raises(TypeError, match="ids"):
        random_windows([1, 2, 3], 1, 1)
    with pytest.raises(ValueError, match="ids"):
        random_windows(torch.zeros(10), 2, 1)
    with pytest.raises(ValueError, match="ids"):
        random_windows(torch.zeros(2, 10, dtype=torch.long), 2, 1)
    with pytest.raises(ValueError, match="block_size"):
        random_windows(torch.arange(10), 0, 1)
    with pytest.raises(ValueError, match="batch_size"):
        random_windows(torch.arange(10), 2, 0)


def test_windows_stay_on_the_meta_device():
    ids = torch.empty(100, dtype=torch.long, device="meta")
    x, y = consecutive_windows(ids, 10)
    assert x.device.type == y.device.type == "meta" and x.shape == y.shape == (9, 10)


def test_windows_keep_the_dtype_of_the_stream():
    ids = torch.arange(30, dtype=torch.int32)
    assert {t.dtype for t in (*random_windows(ids, 4, 2), *consecutive_windows(ids, 4))} == {
        torch.int32
    }
