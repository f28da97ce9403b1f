"""Every page of the built site works offline: math typeset, images loaded, views drawn, no
request leaves the machine, and the console shows no error beyond known theme noise."""

from __future__ import annotations

import re

import pytest
from conftest import SITE, site_pages
from test_readable import check_readable

# Console messages that are not ours and do not affect the page. Keep this list short and say
# why each entry is harmless.
KNOWN_CONSOLE_NOISE = [
    # pydata-sphinx-theme 0.17 logs this on a first visit, before it has stored a light/dark
    # choice in localStorage; it then picks "auto", which is what we want.
    re.compile(r"^console: Got invalid theme mode: \. Resetting to auto\.$"),
]

PAGES = site_pages()

MATH_TYPESET = """async () => {
  const math = document.querySelectorAll('.math').length;
  if (math === 0) return {math: 0, typeset: 0, errors: 0};
  await window.MathJax.startup.promise;
  return {math: math,
          typeset: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror').length};
}"""

BROKEN_IMAGES = """() => Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.currentSrc || img.src)"""

# The book's views (attnbook.viz.web): each initialises itself from its inline script.
VIEWS = """() => Array.from(document.querySelectorAll('.attnbook-view'))
  .map(v => v.dataset.ready === '1')"""


def test_site_has_pages():
    assert (SITE / "index.html").exists() and len(PAGES) >= 3, PAGES


def noise_free(errors: list[str]) -> list[str]:
    return [e for e in errors if not any(p.search(e) for p in KNOWN_CONSOLE_NOISE)]


def open_page(offline_page, url: str):
    response = offline_page.page.goto(url, wait_until="load")
    assert response is None or response.ok, f"{url}: HTTP {response.status}"
    return offline_page.page


def check_page(offline_page, url: str) -> None:
    page = open_page(offline_page, url)
    math = page.evaluate(MATH_TYPESET)
    assert math["typeset"] >= math["math"], (
        f"{url}: {math['math']} math blocks, {math['typeset']} typeset"
    )
    assert math["errors"] == 0, f"{url}: {math['errors']} MathJax errors"

    assert (
        page.evaluate(
            '() => document.querySelectorAll(\'script[src*="html-manager"], '
            '.jupyter-widgets, script[type*="jupyter.widget"]\').length'
        )
        == 0
    ), f"{url}: a Jupyter widget (needs the widget manager, which the site does not load)"
    views = page.evaluate(VIEWS)
    assert all(views), f"{url}: {views.count(False)} of {len(views)} views did not start"

    page.wait_for_load_state("networkidle")
    assert page.evaluate(BROKEN_IMAGES) == [], f"{url}: images that did not load"
    assert offline_page.blocked == [], f"{url} asked the network for {offline_page.blocked}"
    assert noise_free(offline_page.errors) == [], f"{url}: console errors {offline_page.errors}"


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_page_works_offline_and_is_readable(offline_page, site_url, page):
    """Works offline (above), and is light, sharp, described, accessible and fits a phone
    (test_readable.check_readable)."""
    check_page(offline_page, f"{site_url}/{page}")
    check_readable(offline_page, page)


@pytest.mark.site
@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.startswith("book/0") or p == "book/intro.html"]
)
def test_page_works_from_disk(offline_page, page):
    """Opened as a file, with no server and no network, math and widgets still work."""
    check_page(offline_page, (SITE / page).as_uri())


@pytest.mark.site
def test_site_root_redirects_to_the_introduction(offline_page, site_url):
    page = offline_page.page
    page.goto(f"{site_url}/index.html")
    page.wait_for_url("**/book/intro.html", timeout=10_000)
    assert "Attention, Head by Head" in page.title()
