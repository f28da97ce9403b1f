"""Teach before use: no page uses a glossary term before the page the glossary says introduces it.

The glossary (``book/glossary.md``, ``zh/book/glossary.md``) names, for each term, the chapter or
section that introduces it. Reading the pages in the order of the table of contents, a term found
in the prose of an earlier page fails the test, unless that section (the text under one
heading) points ahead to where the term is explained: a ``{doc}`` link to that page, or its
name as the glossary writes it ("chapter 5", "section 3.14", "第 5 章", "第 3.14 节").

The prose is the markdown cells of a chapter's notebook, without code blocks, directives
(objectives, exercises, figures), inline code and mathematics; the introduction, whose chapter
map names every term on purpose, is not a chapter. English terms match as whole words, with a
plural "s"; Chinese terms as written; a gloss in brackets after a term is not matched.

When this fails, either the earlier page should explain the term (then the glossary should name
that page), or it should say where the term is explained, or it should not use the term.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = {"en": ROOT, "zh": ROOT / "zh"}
ROW = re.compile(r"^\| ([^|]+) \| ([^|]+) \| \{doc\}`([^<`]+)<([^>]+)>` \|$")
FENCE = re.compile(r"^(`{3,}).*?^\1\s*$", re.MULTILINE | re.DOTALL)  # code and directives
INLINE = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$", re.DOTALL)


def pages(edition: Path) -> list[str]:
    """The chapters and sections, in the order of the table of contents."""
    toc = yaml.safe_load((edition / "_toc.yml").read_text(encoding="utf-8"))
    order: list[str] = []

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            order.append(Path(entry["file"]).name)
            walk(entry.get("sections", []))

    for part in toc["parts"]:
        if part.get("numbered"):
            walk(part["chapters"])
    return order


def glossary(edition: Path, lang: str) -> list[tuple[str, str, str]]:
    """(term in the edition's language, the page that introduces it, its name in the link)."""
    rows = []
    for line in (edition / "book" / "glossary.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line.strip())
        if match:
            english, chinese, label, page = (g.strip() for g in match.groups())
            rows.append((english if lang == "en" else chinese, page, label))
    return rows


def sections(edition: Path, page: str) -> list[str]:
    """The prose of a page's markdown cells, cut at its headings: one string per section
    (inline code and mathematics still in: :func:`prose` takes them out)."""
    cells = json.loads((edition / "book" / f"{page}.ipynb").read_text(encoding="utf-8"))["cells"]
    markdown = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    text = FENCE.sub(" ", markdown)
    return [s for s in re.split(r"^(?=#)", text, flags=re.MULTILINE) if s.strip()]


def prose(section: str) -> str:
    """The words of a section: no inline code, no mathematics."""
    return INLINE.sub(" ", section)


def uses(term: str, lang: str) -> re.Pattern:
    """Where ``term`` occurs: without the gloss in brackets that some rows add (GRU (gated
    recurrent unit), 秩相关（Spearman）)."""
    term = re.sub(r"\s*[(（][^()（）]*[)）]$", "", term)
    if lang == "zh":
        return re.compile(re.escape(term))
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(?:e?s)?(?![\w-])", re.IGNORECASE)


def points_ahead(section: str, page: str, label: str) -> bool:
    """Whether the section links to ``page`` or names it as the glossary does."""
    if f"<{page}>" in section or f"{{doc}}`{page}`" in section:
        return True
    name = re.escape(label.strip()).replace(r"\ ", r"\s+")
    return re.search(name + r"(?![\d.]*\d)", section) is not None


def early_uses(lang: str) -> list[str]:
    edition = EDITIONS[lang]
    order = pages(edition)
    text = {page: sections(edition, page) for page in order}
    found = []
    for term, page, label in glossary(edition, lang):
        if page not in order:
            continue
        pattern = uses(term, lang)
        for earlier in order[: order.index(page)]:
            for section in text[earlier]:
                words = prose(section)
                match = pattern.search(words)
                if match and not points_ahead(section, page, label):
                    context = words[max(0, match.start() - 50) : match.end() + 30]
                    found.append(f"{term!r} ({label}) in {earlier}: …{' '.join(context.split())}…")
                    break
            else:
                continue
            break
    return found


@pytest.mark.parametrize("lang", EDITIONS)
def test_no_term_is_used_before_the_page_that_introduces_it(lang):
    found = early_uses(lang)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_check_can_fail(lang):
    """A term the first chapter uses, said to be introduced in the last one, is caught."""
    edition = EDITIONS[lang]
    first, last = pages(edition)[0], pages(edition)[-1]
    term = "attention" if lang == "en" else "注意力"
    assert any(uses(term, lang).search(prose(p)) for p in sections(edition, first))
    assert not points_ahead(f"{term} matters", last, "chapter 20")
    assert points_ahead(f"{term}, which chapter 20 explains", last, "chapter 20")
    assert not points_ahead(f"{term}, which chapter 20.1 explains", last, "chapter 20")
    assert points_ahead(f"{term} ({{doc}}`{last}`)", last, "chapter 20")
