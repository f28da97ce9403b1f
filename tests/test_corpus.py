"""The corpus of natural text that ships with the library (attnbook.corpus)."""

import re

import pytest

from attnbook.corpus import book_prose, split_sentences


def test_the_snapshot_is_prose_without_code_math_or_special_tokens():
    paragraphs = book_prose()
    assert len(paragraphs) > 400
    assert all(len(p.split()) >= 20 for p in paragraphs)
    text = "\n".join(paragraphs)
    assert sum(len(p.split()) for p in paragraphs) > 30_000
    for marker in ("`", "$", "[CLS]", "[SEP]", "{cite", "{doc", "```", ":::"):
        assert marker not in text, marker
    assert "老张" in text  # the book's own example sentences stay


def test_ascii_only_drops_the_paragraphs_with_chinese_characters():
    everything, english = book_prose(), book_prose(ascii_only=True)
    assert 0 < len(everything) - len(english) < len(everything) / 4
    assert not [p for p in english if re.search(r"[\u4e00-\u9fff]", p)]
    assert set(english) <= set(everything)


def test_split_sentences_splits_before_a_capital_letter_only():
    assert split_sentences("It is 0.5. Then it falls. e.g. this stays") == [
        "It is 0.5.",
        "Then it falls. e.g. this stays",
    ]
    assert split_sentences("One? Two! Three.") == ["One?", "Two!", "Three."]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="language"):
        book_prose("fr")
    with pytest.raises(TypeError, match="paragraph"):
        split_sentences(["a list"])
