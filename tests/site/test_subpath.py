"""The built site served under a sub-path, as GitHub Pages serves a project's site
(``https://OWNER.github.io/attention-head-by-head/``): the CI workflow publishes _build/html as it
is, so every link, script, style sheet, image, search result, language link and model file must
be found below that path, and nothing may ask for the server's root.

The server here answers only below SUB_PATH (anything else is a 404 it records); every page is
opened once with the checks of test_site.py (math, images, views, offline, console), its views
are operated as there, and every link on it is followed.
"""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from conftest import SITE
from test_live import MODEL_FILE, run_sentence
from test_site import check_page, check_views

SUB_PATH = "/attention-head-by-head"
# What a browser may ask the host itself for, whatever the page says (the book has no favicon).
HOST_FILES = {"/favicon.ico"}
# The introduction and a chapter with both kinds of view (a figure explorer and an attention
# view), in each edition.
PAGES = [
    "book/intro.html",
    "book/01_detective.html",
    "zh/book/intro.html",
    "zh/book/01_detective.html",
]

# Every element that makes the browser (or a reader's click) ask the server for something.
REFERENCES = """() => Array.from(document.querySelectorAll(
    'a[href], link[href], script[src], img[src], source[src], iframe[src]'))
  .map(el => el.href || el.src)"""


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's folder at SUB_PATH/ and nothing else; records what it could not serve."""

    requests: list[str]  # every path asked for
    outside: list[str]  # paths not below SUB_PATH
    missing: list[str]  # paths answered with 404

    def translate_path(self, path: str) -> str:
        route = urlsplit(path).path
        if route == SUB_PATH or route.startswith(SUB_PATH + "/"):
            return super().translate_path(path[len(SUB_PATH) :] or "/")
        if route not in HOST_FILES:
            self.outside.append(path)
        return str(Path(self.directory) / "no such file: outside the sub-path")

    def do_GET(self) -> None:
        self.requests.append(self.path)
        try:
            super().do_GET()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser left the page before the file was sent

    def send_error(self, code: int, *args, **kwargs) -> None:
        if code == 404 and urlsplit(self.path).path not in HOST_FILES:
            self.missing.append(self.path)
        super().send_error(code, *args, **kwargs)

    def log_message(self, *args) -> None:  # keep pytest output readable
        pass


@pytest.fixture(scope="module")
def sub_path_site():
    """The site served at http://127.0.0.1:PORT/attention-head-by-head/; yields that URL (no
    trailing slash) and the handler class, whose lists say what was asked for."""
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}; build it first: make site")
    handler = type("Handler", (_SubPathHandler,), {"requests": [], "outside": [], "missing": []})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(SITE))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}{SUB_PATH}", handler
    server.shutdown()


@pytest.fixture
def served(sub_path_site):
    """The site's URL; after the test, nothing was asked for outside the sub-path or not found."""
    base, handler = sub_path_site
    for log in (handler.requests, handler.outside, handler.missing):
        log.clear()
    yield base, handler
    assert handler.outside == [], f"asked for paths outside {SUB_PATH}: {handler.outside}"
    assert handler.missing == [], f"not found under {SUB_PATH}: {handler.missing}"


def status(url: str) -> int:
    """The HTTP status of GET url (after redirects)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.site
def test_the_site_root_under_the_sub_path_opens_the_introduction(offline_page, served):
    base, _ = served
    page = offline_page.page
    for root in (base, f"{base}/"):  # a project site's address is often given without the slash
        page.goto(root)
        page.wait_for_url(f"{base}/book/intro.html", timeout=10_000)
        assert "Attention, Head by Head" in page.title()


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_a_page_finds_everything_under_the_sub_path_and_its_views_work(offline_page, served, page):
    base, _ = served
    failed: list[str] = []
    offline_page.page.on(
        "response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    check_page(offline_page, f"{base}/{page}")
    assert failed == [], f"{page}: requests that failed under {SUB_PATH}: {failed}"
    if 'class="attnbook-view' in (SITE / page).read_text(encoding="utf-8"):
        check_views(offline_page, page)
    own = f"{urlsplit(base).scheme}://{urlsplit(base).netloc}/"
    references = sorted(
        {u.split("#")[0] for u in offline_page.page.evaluate(REFERENCES) if u.startswith(own)}
    )
    assert len(references) > 30, f"{page}: only {references}"  # the sidebar alone lists 30 pages
    outside = [u for u in references if not u.startswith(f"{base}/")]
    assert outside == [], f"{page}: links that leave {SUB_PATH}: {outside}"
    broken = [(u, code) for u in references if (code := status(u)) != 200]
    assert broken == [], f"{page}: links that do not resolve under {SUB_PATH}: {broken}"


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_the_language_link_opens_the_counterpart_under_the_sub_path(offline_page, served, page):
    base, _ = served
    browser_page = offline_page.page
    browser_page.goto(f"{base}/{page}", wait_until="load")
    browser_page.locator("a.attnbook-edition-link").first.click()
    counterpart = page.removeprefix("zh/") if page.startswith("zh/") else f"zh/{page}"
    browser_page.wait_for_url(f"{base}/{counterpart}", timeout=10_000)
    lang = browser_page.evaluate("() => document.documentElement.lang")
    assert lang == ("zh-CN" if counterpart.startswith("zh/") else "en")


FINISHED = """() => {
  const summary = document.querySelector('#search-results p.search-summary');
  return summary !== null && summary.textContent.trim() !== '';
}"""


@pytest.mark.site
@pytest.mark.parametrize(
    ("search", "query", "expected"),
    [
        ("search.html", "attention", "book/02_scaled_dot_product.html"),
        ("zh/search.html", "注意力", "zh/book/02_scaled_dot_product.html"),
    ],
    ids=["English", "Chinese"],
)
def test_search_finds_pages_under_the_sub_path(offline_page, served, search, query, expected):
    base, _ = served
    page = offline_page.page
    page.goto(f"{base}/{search}?q={quote(query)}", wait_until="load")
    # Sphinx lists the results one by one, then writes the summary ("Search finished, ...").
    page.wait_for_function(FINISHED, timeout=30_000)
    hits = page.eval_on_selector_all(
        "#search-results ul.search li a", "els => els.map(a => a.href)"
    )
    found = sorted({h.split("#")[0].split("?")[0] for h in hits})
    assert f"{base}/{expected}" in found, (query, found[:10])
    assert all(h.startswith(f"{base}/") for h in found), found
    assert [h for h in found if status(h) != 200] == []
    assert offline_page.blocked == []


@pytest.mark.site
@pytest.mark.parametrize("edition", ["", "zh/"], ids=["English", "Chinese"])
def test_the_live_panel_loads_its_model_under_the_sub_path(offline_page, served, edition):
    """Chapter 7's detective runs in the browser from the model file below the sub-path."""
    base, handler = served
    page = offline_page.page
    page.goto(f"{base}/{edition}book/07_seeing_the_heads.html", wait_until="load")
    words = {"label": "你的句子", "run": "运行"} if edition else {}
    result = run_sentence(page, None, **words)  # opens the panel and runs its example
    assert result["tokens"] and result["answer"] is not None
    models = [r for r in handler.requests if MODEL_FILE in r]
    assert models == [f"{SUB_PATH}/{edition}_static/models/{MODEL_FILE}"], models
