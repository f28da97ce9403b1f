"""The book's two editions, English (``.``) and Chinese (``zh/``), built as one site.

The Chinese site is written into ``zh/`` under the English one, and both have the same page
names (``tests/test_editions.py`` checks it), so every page links to its counterpart with a
relative URL: ``book/03_why_many_heads.html`` ↔ ``zh/book/03_why_many_heads.html``. The link sits
at the top of the article and in the page's ``<head>`` (``rel="alternate"`` with ``hreflang``).

For the Chinese edition it also gives Sphinx's Chinese search (jieba) the glossary's Chinese
terms as words, so that a search for 多头注意力 finds the pages that use the whole term, not
only its pieces 多头 and 注意力. And it keeps that search's Latin words in a set
(:func:`chinese_search`): Sphinx 7.4 keeps them in a list, which made the Chinese build spend
20 of its 50 seconds looking words up in it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

EDITIONS = {
    "en": {"other": "zh", "label": "中文版", "title": "阅读本页的中文版", "hreflang": "zh-Hans"},
    "zh": {
        "other": "en",
        "label": "English",
        "title": "Read this page in English",
        "hreflang": "en",
    },
}
# The glossary's rows: | English | 中文 | where introduced |
GLOSSARY_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|")
CJK = re.compile(r"[\u4e00-\u9fff]{2,}")


def counterpart(pagename: str, edition: str) -> str:
    """The relative URL, from ``pagename``, of the same page in the other edition."""
    up = "../" * pagename.count("/")
    to_other_root = "zh/" if edition == "en" else "../"
    return f"{up}{to_other_root}{pagename}.html"


def glossary_terms(path: Path) -> list[str]:
    """The Chinese terms in the glossary's table (its second column), longest first."""
    terms: set[str] = set()
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            match = GLOSSARY_ROW.match(line)
            if match:
                for part in re.split(r"[、/，,（）()\s]+", match.group(2)):
                    if CJK.fullmatch(part):
                        terms.add(part)
    return sorted(terms, key=lambda t: (-len(t), t))


def _search_dictionary(app, config) -> None:
    if config.attnbook_edition != "zh":
        return
    terms = glossary_terms(Path(app.srcdir) / "book" / "glossary.md")
    words = Path(app.doctreedir) / "search_terms.txt"
    words.parent.mkdir(parents=True, exist_ok=True)
    # jieba's user dictionary: one word per line, with a frequency high enough to be kept whole.
    words.write_text("".join(f"{t} 100000\n" for t in terms), encoding="utf-8")
    config.html_search_options = {**(config.html_search_options or {}), "dict": str(words)}


def chinese_search():
    """Sphinx's Chinese search language with its Latin words in a set instead of a list.

    Sphinx 7.4's ``SearchChinese`` appends every Latin word of every page to a list and, for
    each word it stems, asks whether the word is in that list: a scan that grows with the site
    (53,000 scans, 21 s of a 51 s build). A set answers the same question at once, so the index
    is the same, byte for byte. Sphinx 8.1 made the same change (sphinx-doc/sphinx#12995); the
    book pins 7.4.7 (requirements.txt), and this class can go when the pin reaches 8.1. It is
    made here, when the build imports Sphinx.
    """
    from sphinx.search import zh

    class LatinWords(set):
        extend = set.update  # what Sphinx's split calls on its list

    class SearchChinese(zh.SearchChinese):
        def init(self, options: dict[str, str]) -> None:
            super().init(options)
            self.latin_terms = LatinWords()  # the one change: Sphinx's is a list

    return SearchChinese


def _link_counterpart(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    edition = app.config.attnbook_edition
    info = EDITIONS[edition]
    href = html.escape(counterpart(pagename, edition))
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{info["hreflang"]}" href="{href}" />'
    )
    if "body" in context:
        link = (
            f'<p class="attnbook-edition"><a class="attnbook-edition-link" href="{href}" '
            f'hreflang="{info["hreflang"]}" lang="{info["hreflang"]}" title="{info["title"]}">'
            f"{info['label']}</a></p>\n"
        )
        context["body"] = link + context["body"]


def setup(app) -> dict[str, Any]:
    app.add_config_value("attnbook_edition", "en", "html", types=[str])
    app.connect("config-inited", _search_dictionary)
    app.add_search_language(chinese_search())
    app.connect("html-page-context", _link_counterpart)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
