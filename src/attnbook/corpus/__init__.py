"""Natural text that ships with the library: the book's own prose, frozen as a corpus.

``book_prose_en.txt`` holds 426 paragraphs (about 36,000 words, 201,273 bytes) of the book's
English chapters and ``book_prose_zh.txt`` 495 paragraphs (about 64,000 Han characters, 231,582
bytes) of the Chinese edition's, one paragraph per line, written once by
``scripts/snapshot_prose.py`` and then left alone, so that what chapters measure on them does not
move when the book's text is edited. Code, mathematics, tables and directives are left out;
``[CLS]``-style tokens lose their brackets. The text is the book's, under CC BY 4.0.

Each snapshot has a pages file (``book_prose_<language>_pages.json``) that names, in order, the
page every run of paragraphs came from, so that text can be held out **by document**: a model
trained on some pages and tested on others is tested on text it has never seen a sentence of,
not on neighbours of its training paragraphs. :func:`document_split` holds out three whole pages
by default (:data:`HELDOUT_PAGES`: one from Part II, one from Part V, the outlook), about 12% of
either edition's text.

>>> [len("\\n".join(book_prose(language)).encode()) + 1 for language in ("en", "zh")]  # bytes
[201273, 231582]
>>> train, heldout = document_split("en")
>>> len(train), len(heldout), round(len("".join(heldout)) / len("".join(train + heldout)), 3)
(373, 53, 0.12)
>>> train, heldout = document_split("zh")
>>> len(train), len(heldout), round(len("".join(heldout)) / len("".join(train + heldout)), 3)
(431, 64, 0.126)
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from functools import cache
from pathlib import Path

__all__ = ["HELDOUT_PAGES", "book_documents", "book_prose", "document_split", "split_sentences"]

_LANGUAGES = ("en", "zh")
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

#: The pages :func:`document_split` holds out unless told otherwise (the same in both editions).
HELDOUT_PAGES = ("04_building_mha", "12_translation", "20_outlook")


def _check_language(language: str) -> None:
    if not isinstance(language, str) or language not in _LANGUAGES:
        raise ValueError(f"language must be one of {list(_LANGUAGES)}; got {language!r}")


@cache
def _read(language: str) -> tuple[str, ...]:
    text = (Path(__file__).parent / f"book_prose_{language}.txt").read_text("utf-8")
    return tuple(line for line in text.splitlines() if line)


@cache
def _pages(language: str) -> tuple[tuple[str, int], ...]:
    record = json.loads(
        (Path(__file__).parent / f"book_prose_{language}_pages.json").read_text("utf-8")
    )
    pages = tuple((name, count) for name, count in record["pages"])
    if sum(count for _, count in pages) != len(_read(language)):
        raise RuntimeError(  # the two files were written apart: the split would be wrong
            f"book_prose_{language}_pages.json counts {sum(c for _, c in pages)} paragraphs, "
            f"book_prose_{language}.txt has {len(_read(language))}"
        )
    return pages


def book_prose(language: str = "en", *, ascii_only: bool = False) -> list[str]:
    """The corpus's paragraphs, in the book's order.

    Args:
        language: ``"en"`` or ``"zh"``.
        ascii_only: keep only the paragraphs without Chinese characters (some English ones quote
            老张说他很累; every Chinese one has them, so nothing is left of ``"zh"``).

    Returns:
        A list of paragraphs, each one line of at least 20 words (English) or 40 Han characters
        (Chinese).
    """
    _check_language(language)
    paragraphs = list(_read(language))
    if ascii_only:
        paragraphs = [p for p in paragraphs if not _CJK.search(p)]
    return paragraphs


def book_documents(language: str = "en") -> list[tuple[str, list[str]]]:
    """The corpus as documents: ``(page name, its paragraphs)`` for every page, in the book's
    order (the name is the page's file without its suffix, e.g. ``"06_training_a_detective"``).

    >>> [(name, len(paragraphs)) for name, paragraphs in book_documents("en")[:2]]
    [('intro', 8), ('01_detective', 24)]
    """
    _check_language(language)
    paragraphs, documents, start = _read(language), [], 0
    for name, count in _pages(language):
        documents.append((name, list(paragraphs[start : start + count])))
        start += count
    return documents


def document_split(
    language: str = "en", heldout: Collection[str] = HELDOUT_PAGES
) -> tuple[list[str], list[str]]:
    """Split the corpus by page: the paragraphs of the pages in ``heldout``, and the rest.

    Args:
        language: ``"en"`` or ``"zh"``.
        heldout: names of pages (see :func:`book_documents`) to hold out whole; the default
            :data:`HELDOUT_PAGES` is about 12% of the text in either language.

    Returns:
        ``(train paragraphs, held-out paragraphs)``, each in the book's order.

    Raises:
        TypeError: if ``heldout`` is a single string rather than a collection of names.
        ValueError: if a name in ``heldout`` is not a page of the corpus, or it names every page.
    """
    _check_language(language)
    if isinstance(heldout, str) or not all(isinstance(name, str) for name in heldout):
        raise TypeError(f"heldout must be a collection of page names; got {heldout!r}")
    documents = book_documents(language)
    names = [name for name, _ in documents]
    unknown = sorted(set(heldout) - set(names))
    if unknown:
        raise ValueError(
            f"heldout names pages not in the {language} corpus: {unknown}; its pages are {names}"
        )
    if set(names) <= set(heldout):
        raise ValueError("heldout names every page: nothing would be left to train on")
    train = [p for name, ps in documents if name not in heldout for p in ps]
    test = [p for name, ps in documents if name in heldout for p in ps]
    return train, test


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph after ``.``, ``?`` or ``!`` followed by a space and a capital letter.

    A rule, not a parser: "e.g. The" splits wrongly, which is rare in this corpus.

    >>> split_sentences("Heads differ. Some look back! Do all? no.")
    ['Heads differ.', 'Some look back!', 'Do all? no.']
    """
    if not isinstance(paragraph, str):
        raise TypeError(f"paragraph must be a string; got {type(paragraph).__name__}")
    return [s for s in re.split(r"(?<=[.?!])\s+(?=[A-Z])", paragraph.strip()) if s]
