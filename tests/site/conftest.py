"""Fixtures for testing the built site in headless Chromium, offline.

The site must already be built in _build/html (the README's test command builds it first).
Every request that does not go to this machine is blocked and recorded, so a page that still
depends on a CDN fails loudly instead of silently working on a connected laptop.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
# ATTNBOOK_SITE lets a second build (jupyter-book build . --path-output DIR) be tested.
SITE = Path(os.environ.get("ATTNBOOK_SITE", ROOT / "_build" / "html"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
LOCAL_SCHEMES = {"file", "data", "blob", "about"}
# The URLs that is_local rejects, as one pattern that Playwright's driver matches itself: only a
# request that leaves the machine is routed to Python (to be blocked and recorded); a local one
# never makes the round trip (test_site checks that the two agree).
NON_LOCAL = re.compile(
    r"^(?!(?:file|data|blob|about):|[a-z][a-z0-9+.-]*://(?:127\.0\.0\.1|localhost)(?::\d+)?(?:[/?#]|$))",
    re.IGNORECASE,
)

# Chromium flags for a closed network: without the background-networking ones Chromium keeps
# trying to reach Google's update and sync services.
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def site_pages() -> list[str]:
    """Every content page of the site, both editions, relative to its root (index pages of
    Sphinx excluded): ``book/….html`` and ``zh/book/….html``."""
    if not SITE.is_dir():
        return []
    # index.html only redirects to book/intro.html (tested on its own).
    skip = {"index.html", "genindex.html", "search.html", "py-modindex.html"}
    pages = []
    for path in sorted(SITE.rglob("*.html")):
        rel = path.relative_to(SITE).as_posix()
        top = rel.removeprefix("zh/").split("/")[0]  # the Chinese edition is a site in zh/
        if top in {"_static", "_sources", "_images"} or path.name in skip:
            continue
        pages.append(rel)
    return pages


def is_local(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in LOCAL_SCHEMES or parsed.hostname in LOCAL_HOSTS


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output readable
        pass


def pytest_collection_modifyitems(config, items) -> None:
    """Skip the site tests, with the reason, when no site is built — unless it is required.

    A plain ``pytest`` on a fresh clone then passes; ``make site-test`` (and so ``make test``
    and CI) builds the site first and sets ATTNBOOK_REQUIRE_SITE=1, so a missing site fails.
    """
    if (SITE / "index.html").exists() or os.environ.get("ATTNBOOK_REQUIRE_SITE") == "1":
        return
    skip = pytest.mark.skip(
        reason=f"no built site at {SITE}: run `make site-test` (or build it "
        "with jupyter-book build . -W -n --keep-going)"
    )
    for item in items:
        if "tests/site/" in item.nodeid or item.nodeid.startswith("site/"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def site_url() -> str:
    if not (SITE / "index.html").exists():
        pytest.fail(
            f"no built site at {SITE}; build it first: jupyter-book build . -W -n --keep-going"
        )
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found; install Debian's chromium (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class OfflinePage:
    """A page whose non-local requests are blocked and whose console errors are collected."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.blocked: list[str] = []
        self.sizes: dict[str, int] = {}  # url -> bytes of the response body
        self.errors: list[str] = []
        self.context.route(NON_LOCAL, self._route)
        self.page = self.context.new_page()
        # Requests still loading (request -> URL) and when one last started or ended: what
        # wait_until_quiet waits on, and what a page that never goes quiet is waiting for.
        self.in_flight: dict[object, str] = {}
        self.last_activity = time.monotonic()
        self.page.on("request", self._started)
        self.page.on("requestfinished", self._ended)
        self.page.on("requestfailed", self._ended)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("response", self._response)

    def _started(self, request) -> None:
        self.in_flight[request] = request.url
        self.last_activity = time.monotonic()

    def _ended(self, request) -> None:
        self.in_flight.pop(request, None)
        self.last_activity = time.monotonic()

    def wait_until_quiet(self, quiet: float = 0.5, timeout: float = 30.0) -> bool:
        """Wait until no request has been in flight for ``quiet`` seconds (what Playwright's
        "networkidle" means); False if that has not happened after ``timeout`` seconds.

        Playwright's own wait_for_load_state("networkidle") hung now and then for 30 s (stops 30
        and 32; microsoft/playwright#19835), once with nothing in flight by the page's request
        events ("still loading []", zh/book/20_outlook.html); this wait counts those events and
        cannot disagree with them.
        """
        deadline = time.monotonic() + timeout
        while True:
            self.page.wait_for_timeout(50)  # Playwright delivers the page's events while it waits
            now = time.monotonic()
            if not self.in_flight and now - self.last_activity >= quiet:
                return True
            if now >= deadline:
                return False

    def still_loading(self) -> list[str]:
        return sorted(set(self.in_flight.values()))

    def _route(self, route) -> None:
        if is_local(route.request.url):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _response(self, response) -> None:
        # The server's Content-Length (the files are sent uncompressed) spares copying every
        # body from the browser to Python; a response without one is measured by its body.
        length = response.headers.get("content-length")
        if length is not None:
            self.sizes[response.url] = int(length)
            return
        try:
            self.sizes[response.url] = len(response.body())
        except Exception:  # a redirect or an aborted request has no body
            pass

    def _console(self, msg) -> None:
        if msg.type == "error":
            self.errors.append(f"console: {msg.text}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def offline_page(browser):
    page = OfflinePage(browser)
    yield page
    page.close()
