"""Every page of the built site works offline: math typeset, images loaded, views drawn, no
request leaves the machine, and the console shows no error beyond known theme noise."""

from __future__ import annotations

import re
import warnings

import pytest
from conftest import NON_LOCAL, SITE, is_local, site_pages
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


def test_the_network_filter_routes_exactly_the_requests_that_leave_the_machine():
    urls = {
        "http://127.0.0.1:8000/book/intro.html": True,
        "http://127.0.0.1/": True,
        "http://localhost:5/x.js?v=1": True,
        "HTTP://LOCALHOST:5/x.js": True,
        "file:///tmp/site/book/intro.html": True,
        "data:image/png;base64,AAAA": True,
        "blob:http://127.0.0.1:8000/1234": True,
        "about:blank": True,
        "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js": False,
        "http://127.0.0.1.evil.example/": False,
        "http://localhost.example.com/": False,
        "https://fonts.googleapis.com/css?family=Lato": False,
        "http://[::1]:8000/": False,
        "ws://127.0.0.1:8000/": True,
        "http://localhost:5@evil.example/": False,
    }
    for url, local in urls.items():
        assert is_local(url) == local, url
        assert (NON_LOCAL.search(url) is None) == local, url


def test_site_has_pages():
    assert (SITE / "index.html").exists() and len(PAGES) >= 3, PAGES


def noise_free(errors: list[str]) -> list[str]:
    return [e for e in errors if not any(p.search(e) for p in KNOWN_CONSOLE_NOISE)]


def open_page(offline_page, url: str):
    response = offline_page.page.goto(url, wait_until="load")
    assert response is None or response.ok, f"{url}: HTTP {response.status}"
    return offline_page.page


def wait_until_idle(offline_page, url: str):
    """Wait until the page has loaded everything (no request for 0.5 s); load it once more if it
    has not after 30 s. A page still loading after the second visit fails, naming what it
    waits for; a transient hang (the test server's, say) is reported as a warning."""
    if not offline_page.wait_until_quiet():
        warnings.warn(
            f"{url}: not idle after 30 s, still loading {offline_page.still_loading()}; "
            "loading it again",
            stacklevel=2,
        )
        offline_page.in_flight.clear()
        open_page(offline_page, url)
        if not offline_page.wait_until_quiet():
            pytest.fail(
                f"{url}: not idle after 30 s, twice; still loading {offline_page.still_loading()}"
            )
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

    page = wait_until_idle(offline_page, url)
    assert page.evaluate(BROKEN_IMAGES) == [], f"{url}: images that did not load"
    assert offline_page.blocked == [], f"{url} asked the network for {offline_page.blocked}"
    assert noise_free(offline_page.errors) == [], f"{url}: console errors {offline_page.errors}"


# The Chinese pages whose readability (test_readable) is checked as well as that they work: the
# editions share their templates, style sheet and figure code, tests/test_notebooks.py checks every
# figure of both editions (sharp, described, readable), and each Chinese page still gets every
# check of check_page. One page of each kind: the introduction, a chapter with math and figures,
# one with views and the live panel, one with a pretrained model's views, the glossary, an API page.
ZH_READABLE = {
    "zh/book/intro.html",
    "zh/book/02_scaled_dot_product.html",
    "zh/book/07_seeing_the_heads.html",
    "zh/book/16_pretrained_model.html",
    "zh/book/glossary.html",
    "zh/book/api/viz.html",
}


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_page_works_offline_and_is_readable(offline_page, site_url, page):
    """Works offline (above); every view on it responds without a kernel (check_views); and it
    is light, sharp, described, accessible and fits a phone (test_readable.check_readable):
    every English page, the Chinese pages of ZH_READABLE. One visit per page does all three."""
    check_page(offline_page, f"{site_url}/{page}")
    if page in VIEW_PAGES:
        check_views(offline_page, page)
    if not page.startswith("zh/") or page in ZH_READABLE:
        check_readable(offline_page, page)


def test_the_sampled_chinese_pages_exist():
    assert ZH_READABLE <= set(PAGES), ZH_READABLE - set(PAGES)


# Opened from disk: the introduction, a chapter with math and figures, and one with an attention
# view (what file:// could break is the same on every page: relative paths and inline scripts).
FROM_DISK = [
    p
    for p in PAGES
    if p in {"book/intro.html", "book/02_scaled_dot_product.html", "book/07_seeing_the_heads.html"}
]


@pytest.mark.site
@pytest.mark.parametrize("page", FROM_DISK)
def test_page_works_from_disk(offline_page, page):
    """Opened as a file, with no server and no network, math and widgets still work."""
    check_page(offline_page, (SITE / page).as_uri())


@pytest.mark.site
def test_site_root_redirects_to_the_introduction(offline_page, site_url):
    page = offline_page.page
    page.goto(f"{site_url}/index.html")
    page.wait_for_url("**/book/intro.html", timeout=10_000)
    assert "Attention, Head by Head" in page.title()


# --- the book's views (attnbook.viz.web, attnbook.viz.attention_view) on the real pages ---------

SHOWN_FIGURES = """view => Array.from(view.querySelectorAll('img.attnbook-figure'))
  .filter(img => img.offsetParent !== null && img.getBoundingClientRect().height > 0)
  .map(img => img.dataset.image)"""
KEY_WEIGHTS = """panel => Array.from(panel.querySelectorAll('.attnbook-k'))
  .map(k => k.dataset.weight)"""

VIEW_PAGES = [p for p in PAGES if 'class="attnbook-view' in (SITE / p).read_text(encoding="utf-8")]


def test_some_pages_have_views():
    assert VIEW_PAGES, "no page of the site has a view (attnbook.viz.web)"


def switch_control(control) -> None:
    control.scroll_into_view_if_needed()
    tag = control.evaluate("el => el.tagName")
    if tag == "SELECT":
        n = control.locator("option").count()
        control.select_option(index=(control.evaluate("el => el.selectedIndex") + 1) % n)
    elif tag == "INPUT":
        control.focus()
        control.press("End" if control.evaluate("el => el.value === el.min") else "Home")
    else:  # a fieldset of toggle buttons: press one that is not pressed
        control.locator('button[aria-pressed="false"]').first.click()


def check_views(offline_page, page: str) -> None:
    """Every control of a figure view changes the figure on screen; pointing at another token of
    an attention view changes the weights it shows, and so does another head. Run by
    test_page_works_offline_and_is_readable on every page of VIEW_PAGES, on the page it opened."""
    pg = offline_page.page
    views = pg.locator(".attnbook-view")
    assert views.count() > 0
    for i in range(views.count()):
        view = views.nth(i)
        view.scroll_into_view_if_needed()
        if view.get_attribute("data-kind") == "figures":
            for c in range(view.locator("[data-control]").count()):
                before = view.evaluate(SHOWN_FIGURES)
                assert len(before) == 1, f"{page}, view {i}: {len(before)} figures on screen"
                switch_control(view.locator("[data-control]").nth(c))
                after = view.evaluate(SHOWN_FIGURES)
                assert len(after) == 1 and after != before, f"{page}, view {i}, control {c}"
        else:
            panel = view.locator(".attnbook-sentence:visible").first
            queries = panel.locator(".attnbook-q")
            assert queries.count() >= 1, f"{page}, view {i}: no query token"
            last = min(1, queries.count() - 1)  # a view may have one query (a question vector)
            queries.nth(0).hover()
            first = panel.evaluate(KEY_WEIGHTS)
            queries.nth(last).hover()
            second = panel.evaluate(KEY_WEIGHTS)
            assert all(w is not None for w in second), f"{page}, view {i}: no weights shown"
            assert last == 0 or first != second, (
                f"{page}, view {i}: pointing at another token changed nothing"
            )
            heads = view.locator('.attnbook-heads button:not([data-value="-1"])')
            assert last == 1 or heads.count() > 1, f"{page}, view {i}: one query and one head"
            if heads.count() > 1:
                heads.nth(1).click()
                queries.nth(last).hover()
                assert panel.evaluate(KEY_WEIGHTS) != second, f"{page}, view {i}: head switch"
    assert offline_page.blocked == [], (
        f"{page}: the views asked the network for {offline_page.blocked}"
    )
    assert noise_free(offline_page.errors) == [], f"{page}: console errors {offline_page.errors}"
