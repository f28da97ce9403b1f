"""Every architecture diagram reaches the page as a vector (issue 40): for each chapter whose
notebook draws diagrams (attnbook.viz.diagrams*), the page shows as many SVG images with the
alt text of the SVG's <title>, in the edition's language, none wider than a 390-pixel phone.
Sharpness, text size and the page's width are checked on every page by test_readable."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, SITE
from test_readable import svg_markup

from attnbook.viz.style import svg_info

CALL = re.compile(r"\bdiagrams(?:_\w+)?\.\w+\(")
CJK = re.compile(r"[\u4e00-\u9fff]")


def diagram_pages() -> list[tuple[str, int]]:
    """(page, number of diagrams its notebook draws), both editions."""
    pages = []
    for notebook in sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("zh/book/*.ipynb")]):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        count = sum(
            len(CALL.findall("".join(c["source"]))) for c in cells if c["cell_type"] == "code"
        )
        if count:
            pages.append((notebook.relative_to(ROOT).with_suffix(".html").as_posix(), count))
    return pages


SVG_IMAGES = """() => Array.from(document.querySelectorAll('article .cell_output img'))
  .filter(img => (img.currentSrc || img.src).endsWith('.svg'))
  .map(img => ({src: img.currentSrc || img.src, alt: img.getAttribute('alt'),
                right: img.getBoundingClientRect().right,
                viewport: document.documentElement.clientWidth}))"""


def test_some_pages_draw_diagrams():
    assert len(diagram_pages()) >= 8


@pytest.mark.site
@pytest.mark.parametrize("page, count", diagram_pages(), ids=lambda v: str(v))
def test_every_diagram_is_an_svg_with_alt_text_in_its_language(offline_page, site_url, page, count):
    if not (SITE / page).exists():
        pytest.fail(f"{page} is missing from the built site")
    browser_page = offline_page.page
    browser_page.set_viewport_size({"width": 390, "height": 844})
    browser_page.goto(f"{site_url}/{page}", wait_until="load")
    images = browser_page.evaluate(SVG_IMAGES)
    assert len(images) >= count, f"{page}: {count} diagrams drawn, {len(images)} SVGs shown"
    for image in images:
        alt = (image["alt"] or "").strip()
        title, _, text_px = svg_info(svg_markup(image["src"]))
        assert text_px is not None and alt == title, f"{page}: {image['src'][-50:]} alt {alt!r}"
        assert len(alt) > 40 and bool(CJK.search(alt)) == page.startswith("zh/"), (page, alt)
        assert image["right"] <= image["viewport"] + 1, f"{page}: a diagram overflows the phone"
