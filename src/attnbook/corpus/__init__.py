"""Natural text that ships with the library: the book's own prose, frozen as a corpus.

``book_prose_en.txt`` holds 426 paragraphs (about 36,000 words) of the book's English chapters,
written once by ``scripts/snapshot_prose.py`` and then left alone, so that what chapters measure
on it does not move when the book's text is edited. Code, mathematics, tables and directives are
left out; ``[CLS]``-style tokens lose their brackets. The text is the book's, under CC BY 4.0.

>>> paragraphs = book_prose()
>>> len(paragraphs) > 400 and all(len(p.split()) >= 20 for p in paragraphs)
True
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["book_prose", "split_sentences"]

_FILES = {"en": "book_prose_en.txt"}
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


@cache
def _read(language: str) -> tuple[str, ...]:
    text = (Path(__file__).parent / _FILES[language]).read_text("utf-8")
    return tuple(line for line in text.splitlines() if line)


def book_prose(language: str = "en", *, ascii_only: bool = False) -> list[str]:
    """The corpus's paragraphs, in the book's order.

    Args:
        language: ``"en"`` (the only snapshot so far).
        ascii_only: keep only the paragraphs without Chinese characters (some quote 老张说他很累).

    Returns:
        A list of paragraphs, each one line of at least 20 words.
    """
    if not isinstance(language, str) or language not in _FILES:
        raise ValueError(f"language must be one of {sorted(_FILES)}; got {language!r}")
    paragraphs = list(_read(language))
    if ascii_only:
        paragraphs = [p for p in paragraphs if not _CJK.search(p)]
    return paragraphs


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph after ``.``, ``?`` or ``!`` followed by a space and a capital letter.

    A rule, not a parser: "e.g. The" splits wrongly, which is rare in this corpus.

    >>> split_sentences("Heads differ. Some look back! Do all? no.")
    ['Heads differ.', 'Some look back!', 'Do all? no.']
    """
    if not isinstance(paragraph, str):
        raise TypeError(f"paragraph must be a string; got {type(paragraph).__name__}")
    return [s for s in re.split(r"(?<=[.?!])\s+(?=[A-Z])", paragraph.strip()) if s]
