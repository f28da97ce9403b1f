"""The two editions on the built site: every page links to its counterpart, both ways, the
Chinese pages say they are Chinese, and the Chinese search finds Chinese words."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest
from conftest import SITE, site_pages

PAGES = site_pages()
EN = [p for p in PAGES if not p.startswith("zh/")]
ZH = [p for p in PAGES if p.startswith("zh/")]
LINK = re.compile(r'<a class="attnbook-edition-link" href="([^"]+)" hreflang="([^"]+)"')
ALTERNATE = re.compile(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"')


def test_every_english_page_has_its_chinese_page_and_no_more():
    assert len(EN) >= 30 and sorted(f"zh/{p}" for p in EN) == sorted(ZH)


def _target(page: str, href: str) -> Path:
    return (SITE / page).parent.joinpath(href).resolve()


@pytest.mark.parametrize("page", PAGES)
def test_the_language_link_goes_to_the_same_page_in_the_other_edition(page):
    text = (SITE / page).read_text(encoding="utf-8")
    links, alternates = LINK.findall(text), ALTERNATE.findall(text)
    assert len(links) == 1 and len(alternates) == 1, (links, alternates)
    (href, lang), (alt_lang, alt_href) = links[0], alternates[0]
    counterpart = page[3:] if page.startswith("zh/") else f"zh/{page}"
    assert _target(page, href) == (SITE / counterpart).resolve()
    assert (SITE / counterpart).is_file() and alt_href == href
    assert lang == alt_lang == ("en" if page.startswith("zh/") else "zh-Hans")
    html_lang = re.search(r'<html lang="([^"]+)"', text).group(1)
    assert html_lang == ("zh-CN" if page.startswith("zh/") else "en")


@pytest.mark.site
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("多头注意力", "book/03_why_many_heads.html"),  # a glossary term, kept whole by jieba
        ("先行词", "book/01_detective.html"),
        ("缩放点积注意力", "book/02_scaled_dot_product.html"),
    ],
)
def test_the_chinese_search_finds_the_chapter(offline_page, site_url, query, expected):
    page = offline_page.page
    page.goto(f"{site_url}/zh/search.html?q={query}", wait_until="load")
    page.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    page.wait_for_function(
        "() => document.querySelector('#search-results h2') !== null", timeout=30_000
    )
    hits = page.eval_on_selector_all(
        "#search-results ul.search li a", "els => els.map(a => a.href)"
    )
    found = [urljoin(f"{site_url}/zh/", h).split("#")[0].split("?")[0] for h in hits]
    assert f"{site_url}/zh/{expected}" in found, (query, found[:10])
    assert offline_page.blocked == []
    # The English site's search does not index the Chinese pages.
    page.goto(f"{site_url}/search.html?q={query}", wait_until="load")
    page.wait_for_function(
        "() => document.querySelector('#search-results h2') !== null", timeout=30_000
    )
    english = page.eval_on_selector_all(
        "#search-results ul.search li a", "els => els.map(a => a.href)"
    )
    assert not any("/zh/" in h for h in english), english
