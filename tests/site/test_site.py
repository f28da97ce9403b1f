"""Every page of the built site works offline: math typeset, images loaded, widgets rendered,
no request leaves the machine, and the console shows no error beyond known theme noise."""

from __future__ import annotations

import re

import pytest
from conftest import SITE, site_pages

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

WIDGET_VIEWS = """() => ({
  views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
  rendered: document.querySelectorAll(
    '.jupyter-widgets.widget-container, .jupyter-widgets.widget-inline-hbox, .jupyter-widgets'
  ).length
})"""


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

    views = page.evaluate(WIDGET_VIEWS)["views"]
    if views:
        page.wait_for_function(
            "n => document.querySelectorAll('.jupyter-widgets').length >= n",
            arg=views,
            timeout=20_000,
        )

    page.wait_for_load_state("networkidle")
    assert page.evaluate(BROKEN_IMAGES) == [], f"{url}: images that did not load"
    assert offline_page.blocked == [], f"{url} asked the network for {offline_page.blocked}"
    assert noise_free(offline_page.errors) == [], f"{url}: console errors {offline_page.errors}"


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_page_works_offline(offline_page, site_url, page):
    check_page(offline_page, f"{site_url}/{page}")


@pytest.mark.site
@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.startswith("book/0") or p == "book/intro.html"]
)
def test_page_works_from_disk(offline_page, page):
    """Opened as a file, with no server and no network, math and widgets still work."""
    check_page(offline_page, (SITE / page).as_uri())


VISIBLE_IMAGES = """() => Array.from(document.querySelectorAll('.widget-image'))
  .filter(img => img.offsetParent !== null).map(img => img.src)"""


def controls(page):
    """Every widget control a reader can switch: dropdowns, toggle buttons and sliders."""
    return (
        [("dropdown", el) for el in page.locator(".widget-dropdown select").all()]
        + [("toggle", el) for el in page.locator(".widget-toggle-buttons").all()]
        + [("slider", el) for el in page.locator(".widget-hslider .noUi-handle").all()]
    )


def switch(kind: str, control) -> None:
    control.scroll_into_view_if_needed()
    if kind == "dropdown":
        options = control.locator("option").count()
        current = control.evaluate("el => el.selectedIndex")
        control.select_option(index=(current + 1) % options)
    elif kind == "toggle":
        buttons = control.locator("button")
        buttons.nth(buttons.count() - 1).click()
    else:
        control.focus()
        control.press("End")


# Pages with a switchable view (a Stack of pre-rendered figures). A page whose only widgets are
# progress bars has nothing to switch.
WIDGET_PAGES = [p for p in PAGES if '"StackModel"' in (SITE / p).read_text(encoding="utf-8")]


def test_some_pages_have_widgets():
    assert WIDGET_PAGES, "no page of the site embeds a widget view"


@pytest.mark.site
@pytest.mark.parametrize("page", WIDGET_PAGES)
def test_every_control_switches_the_view_without_a_kernel(offline_page, site_url, page):
    """Choosing another option in any widget control changes the image that is shown."""
    pg = open_page(offline_page, f"{site_url}/{page}")
    pg.wait_for_selector(".widget-image", state="attached", timeout=20_000)
    found = controls(pg)
    assert found, f"{page} embeds widgets but none of them can be switched"
    for kind, control in found:
        before = pg.evaluate(VISIBLE_IMAGES)
        switch(kind, control)
        pg.wait_for_function(
            f"before => JSON.stringify(({VISIBLE_IMAGES})()) !== JSON.stringify(before)",
            arg=before,
            timeout=5_000,
        )
    assert offline_page.blocked == []


@pytest.mark.site
def test_site_root_redirects_to_the_introduction(offline_page, site_url):
    page = offline_page.page
    page.goto(f"{site_url}/index.html")
    page.wait_for_url("**/book/intro.html", timeout=10_000)
    assert "Attention, Head by Head" in page.title()
