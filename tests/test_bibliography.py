"""The bibliography lists what the book cites, and only that."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"\{cite:[pt]\}`([^`]+)`")


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text(), re.M))


def cited_keys() -> set[str]:
    pages = [*(ROOT / "book").rglob("*.ipynb"), *(ROOT / "book").rglob("*.md")]
    keys = set()
    for page in pages:
        if "_build" in page.parts or ".ipynb_checkpoints" in page.parts:
            continue
        for group in CITATION.findall(page.read_text(encoding="utf-8")):
            keys.update(key.strip() for key in group.split(","))
    return keys


def test_every_entry_of_references_bib_is_cited():
    assert bib_keys() - cited_keys() == set()


def test_every_citation_has_an_entry():
    assert cited_keys() - bib_keys() == set()


def test_the_bibliography_page_does_not_list_uncited_works():
    assert ":all:" not in (ROOT / "book" / "bibliography.md").read_text()
