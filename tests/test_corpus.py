"""The corpus of natural text that ships with the library (attnbook.corpus)."""

import doctest
import hashlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

import attnbook.corpus
from attnbook.corpus import (
    HELDOUT_PAGES,
    book_documents,
    book_prose,
    document_split,
    split_sentences,
)

ROOT = Path(__file__).resolve().parents[1]


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # prose_pages imports snapshot_prose by name
    spec.loader.exec_module(module)
    return module


# Chapter 17 measures on the English snapshot: it must never change (a new one needs a new name).
EN_SHA256 = "3882c70cc7ca7f7e6773d10d2dd1a271470dc70ebe9c34134ae0fe06ea882709"


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


def test_the_english_snapshot_is_byte_for_byte_the_frozen_one():
    text = (Path(attnbook.corpus.__file__).parent / "book_prose_en.txt").read_bytes()
    assert hashlib.sha256(text).hexdigest() == EN_SHA256


def test_the_module_docstring_states_the_sizes_and_shares_it_computes():
    assert doctest.testmod(attnbook.corpus).failed == 0


def test_the_chinese_snapshot_is_prose_without_code_math_or_special_tokens():
    paragraphs = book_prose("zh")
    assert len(paragraphs) > 400
    assert all(len(re.findall(r"[\u4e00-\u9fff]", p)) >= 40 for p in paragraphs)
    text = "\n".join(paragraphs)
    for marker in ("`", "$", "[CLS]", "[SEP]", "{cite", "{doc", "```", ":::"):
        assert marker not in text, marker
    assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", text)  # no space between characters
    assert "老张" in text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_documents_are_the_paragraphs_in_order_cut_at_page_boundaries(language):
    documents = book_documents(language)
    assert [p for _, ps in documents for p in ps] == book_prose(language)
    names = [name for name, _ in documents]
    assert len(set(names)) == len(names) > 20
    assert names[0] == "intro" and all(ps for _, ps in documents)
    assert names == [name for name, _ in book_documents("en")]  # the editions have the same pages


@pytest.mark.parametrize("language", ["en", "zh"])
def test_document_split_holds_out_whole_pages(language):
    train, heldout = document_split(language)
    pages = dict(book_documents(language))
    assert heldout == [p for name in HELDOUT_PAGES for p in pages[name]]
    assert train == [p for name, ps in pages.items() if name not in HELDOUT_PAGES for p in ps]
    share = len("".join(heldout)) / len("".join(train + heldout))
    assert 0.10 <= share <= 0.15


def test_document_split_takes_any_pages():
    train, heldout = document_split("en", heldout=["intro"])
    assert heldout == book_documents("en")[0][1]
    assert len(train) + len(heldout) == len(book_prose("en"))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="language"):
        book_prose("fr")
    with pytest.raises(ValueError, match="language"):
        document_split("fr")
    with pytest.raises(TypeError, match="heldout"):
        document_split("en", heldout="intro")
    with pytest.raises(ValueError, match="heldout.*no_such_page"):
        document_split("en", heldout=["no_such_page"])
    with pytest.raises(ValueError, match="heldout names every page"):
        document_split("en", heldout=[name for name, _ in book_documents("en")])
    with pytest.raises(TypeError, match="paragraph"):
        split_sentences(["a list"])


def test_the_snapshot_script_refuses_to_replace_a_frozen_snapshot():
    snapshot = script("snapshot_prose")
    with pytest.raises(SystemExit):
        snapshot.main(["en"])
    text = (Path(attnbook.corpus.__file__).parent / "book_prose_en.txt").read_bytes()
    assert hashlib.sha256(text).hexdigest() == EN_SHA256


def test_chinese_paragraphs_need_forty_han_characters_and_lose_line_break_spaces():
    snapshot = script("snapshot_prose")
    text = "老" * 39 + "\n\n" + "张" * 20 + "\n" + "说" * 20 + "，**他** 很累。"
    assert snapshot.paragraphs(text, "zh") == ["张" * 20 + "说" * 20 + "，他很累。"]


def test_frozen_paragraphs_are_assigned_to_pages_in_order():
    pages = script("prose_pages")
    table = [[1.0, 0.0, 0.0], [0.2, 0.3, 0.0], [0.0, 0.0, 1.0], [0.9, 0.0, 0.8]]
    assert pages.monotone_assignment(table) == [0, 1, 2, 2]  # never back to page 0
