"""Figures and pages that people can read (issue 14), measured in headless Chromium; test_site.py
runs these checks on every page it opens (one visit per page).

On a 1280-pixel desktop window: every image is sharp (at least two image pixels per CSS pixel
as shown), has alt text that is not a file name, and its smallest text is no smaller than the
page's small print; a first visit of a chapter transfers at most 4 MB and no page more than 6 MB;
axe-core finds no serious or critical accessibility violation; no output is an empty gap. On a
390-pixel phone: nothing widens the page.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from conftest import ROOT, SITE, site_pages

from attnbook.viz.style import ALT_KEY, DENSITY, MIN_TEXT_PX, TEXT_KEY, svg_info

PAGES = site_pages()
CHAPTERS = [p for p in PAGES if re.match(r"book/(\d|appendix)", p) or p == "book/intro.html"]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
MB = 1_000_000
CHAPTER_BUDGET, PAGE_BUDGET = 4 * MB, 6 * MB

IMAGES = """() => Array.from(document.querySelectorAll('article img'))
  .filter(img => img.offsetParent !== null && img.clientWidth > 0)
  .map(img => ({src: img.currentSrc || img.src, alt: img.getAttribute('alt'),
                natural: img.naturalWidth, shown: img.clientWidth}))"""

# A cell output that takes room on the page but shows nothing (a progress widget without its
# widget manager left exactly that).
EMPTY_OUTPUTS = """() => Array.from(document.querySelectorAll('.cell_output > *'))
  .filter(el => el.offsetParent !== null)
  .filter(el => !el.innerText.trim() && !el.querySelector('img, svg, canvas, mjx-container'))
  .map(el => el.className || el.tagName)"""

# Markdown that a cell displayed but the page shows as raw text: table rules or $math$.
RAW_MARKDOWN = """() => Array.from(document.querySelectorAll('.cell_output'))
  .map(el => el.innerText)
  .filter(t => /\\|\\s*:?-{3,}|\\|\\s*—\\s*\\||\\$[^$\\n]+\\$/.test(t))
  .map(t => t.slice(0, 120))"""

SMALL_PRINT = """() => { const pre = document.querySelector('.cell_output pre, div.highlight pre');
  return pre ? parseFloat(getComputedStyle(pre).fontSize) : null; }"""


WIDTHS = """() => { const W = document.documentElement.clientWidth;
  const wide = Array.from(document.querySelectorAll('body *')).filter(e => {
    const r = e.getBoundingClientRect(); return r.width > 0 && r.right > W + 1; })
    .map(e => `${e.tagName}.${e.className}`.slice(0, 60));
  return {scroll: document.documentElement.scrollWidth, client: W, wide: wide.slice(0, 5)}; }"""


def png_bytes(src: str) -> bytes | None:
    """The bytes of an image shown on a page, from the built site or a data URI."""
    if src.startswith("data:image/png;base64,"):
        return base64.b64decode(src.split(",", 1)[1])
    path = urlparse(src).path
    if not path.endswith(".png"):
        return None
    if src.startswith("file:"):
        return Path(unquote(path)).read_bytes()
    return (SITE / unquote(path).lstrip("/")).read_bytes()


def svg_markup(src: str) -> str | None:
    """The markup of an SVG image shown on a page from the built site, else None."""
    path = urlparse(src).path
    if not path.endswith(".svg"):
        return None
    if src.startswith("file:"):
        return Path(unquote(path)).read_text(encoding="utf-8")
    return (SITE / unquote(path).lstrip("/")).read_text(encoding="utf-8")


# Every image of the article on a phone, with its right edge: one inside a scrolling output would
# not widen the page, but its right edge would still lie beyond the screen.
PHONE_IMAGES = """() => Array.from(document.querySelectorAll('article img'))
  .filter(img => img.offsetParent !== null && img.clientWidth > 0)
  .map(img => ({src: img.currentSrc || img.src, right: img.getBoundingClientRect().right,
                viewport: document.documentElement.clientWidth}))"""


def png_text(data: bytes) -> dict[str, str]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return dict(getattr(image, "text", {}) or {})


# The input code of cells and the library code shown with literalinclude (Pygments' markup).
CODE_BLOCKS = "[['div.highlight-ipython3'], ['div.highlight-python']]"
# Pages audited with their code blocks: a chapter with many of them in each edition, and one
# with attention views.
FULL_AUDIT = {
    "book/07_seeing_the_heads.html",
    "book/02_scaled_dot_product.html",
    "zh/book/02_scaled_dot_product.html",
}
# The token colours of the site's Pygments style sheet (light theme), each as its selector.
TOKEN_RULE = re.compile(
    r'^html\[data-theme="light"\] \.highlight \.([A-Za-z0-9]+) \{[^}]*color:', re.M
)


def assert_no_serious_violations(page, name: str, context: str = "document") -> None:
    """axe-core finds no serious or critical violation in ``context`` (a JavaScript expression:
    ``document``, an element, or axe's include/exclude object)."""
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        f"""async () => (await axe.run({context}, {{resultTypes: ['violations']}})).violations
             .filter(v => v.impact === 'serious' || v.impact === 'critical')
             .map(v => `${{v.id}} (${{v.impact}}): ${{v.nodes.slice(0, 3)
               .map(n => n.target.join(' ')).join(' | ')}}`)"""
    )
    assert violations == [], f"{name}: accessibility violations {violations}"


def check_readable(offline_page, name: str) -> None:
    """The checks of this module on a page that ``offline_page`` has just opened (at 1280 px):
    bytes, images, gaps and the accessibility audit; then the same page at a phone's width."""
    page = offline_page.page
    total = sum(offline_page.sizes.values())
    budget = CHAPTER_BUDGET if name in CHAPTERS else PAGE_BUDGET
    heaviest = sorted(offline_page.sizes.items(), key=lambda kv: -kv[1])[:4]
    assert total <= budget, (
        f"{name}: first visit transfers {total / MB:.2f} MB > {budget / MB:.0f} MB; "
        f"heaviest: {[(u.rsplit('/', 1)[-1][:40], n) for u, n in heaviest]}"
    )

    small_print = page.evaluate(SMALL_PRINT)
    if small_print is not None:
        assert MIN_TEXT_PX >= small_print, (
            f"{name}: the page's small print is {small_print}px, larger than MIN_TEXT_PX"
        )
    for image in page.evaluate(IMAGES):
        where = f"{name}: image {image['src'][:80]}"
        alt = (image["alt"] or "").strip()
        assert alt and not re.search(r"(\.(png|svg|jpe?g|gif)$|_images/)", alt), (
            f"{where} has no alt text (alt={alt!r})"
        )
        svg = svg_markup(image["src"])
        if svg is not None:  # a vector: sharp at any size; a diagram is checked like a figure
            title, natural_css, text_px = svg_info(svg)
            if text_px is not None:
                assert title == alt, f"{where}: alt differs from the SVG's <title>"
                shown_text = text_px * image["shown"] / natural_css
                assert shown_text >= MIN_TEXT_PX - 0.05, (
                    f"{where}: its smallest text is {shown_text:.1f}px as shown (< {MIN_TEXT_PX}px)"
                )
            continue
        data = png_bytes(image["src"])
        if data is None:  # a theme image
            continue
        density = image["natural"] / image["shown"]
        assert density >= DENSITY - 0.01, (
            f"{where} is shown at {density:.2f} image pixels per CSS pixel (< {DENSITY})"
        )
        text = png_text(data)
        assert text.get(ALT_KEY, "").strip() == alt, f"{where}: alt differs from the PNG's"
        assert TEXT_KEY in text, f"{where} was not rendered by attnbook.viz.style"
        natural_css = image["natural"] / DENSITY
        shown_text = float(text[TEXT_KEY]) * image["shown"] / natural_css
        assert shown_text >= MIN_TEXT_PX - 0.05, (
            f"{where}: its smallest text is {shown_text:.1f}px as shown (< {MIN_TEXT_PX}px)"
        )

    assert page.evaluate(EMPTY_OUTPUTS) == [], f"{name}: empty gaps where outputs were"
    assert page.evaluate(RAW_MARKDOWN) == [], f"{name}: output shown as raw Markdown"

    # Code blocks (cells' input and literalincludes) are left out of the audit on most pages: its
    # colour-contrast rule, the costliest, would check thousands of highlighted tokens whose
    # colours are the same on every page; test_every_code_token_colour_is_readable checks every
    # token colour the site's style sheet defines, and the pages of FULL_AUDIT keep them in.
    context = "document" if name in FULL_AUDIT else f"{{exclude: {CODE_BLOCKS}}}"
    assert_no_serious_violations(page, name, context)

    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)  # let the theme's layout settle
    widths = page.evaluate(WIDTHS)
    assert widths["scroll"] <= widths["client"], (
        f"{name} is {widths['scroll']}px wide on a {widths['client']}px phone screen; "
        f"too wide: {widths['wide']}"
    )
    for image in page.evaluate(PHONE_IMAGES):
        assert image["right"] <= image["viewport"] + 1, (
            f"{name}: image {image['src'][-60:]} overflows a phone's screen: {image}"
        )


@pytest.mark.site
def test_every_code_token_colour_is_readable(offline_page, site_url):
    """Every token colour of the site's Pygments style sheet, shown in a code block of a real
    page, passes axe-core's colour-contrast rule: what check_readable leaves out of most pages'
    audits, checked for every token kind at once, also those that no page shows yet."""
    css = (SITE / "_static" / "pygments.css").read_text(encoding="utf-8")
    kinds = sorted(set(TOKEN_RULE.findall(css)))
    assert len(kinds) > 20, f"too few token colours found in pygments.css: {kinds}"
    page = offline_page.page
    page.goto(f"{site_url}/book/02_scaled_dot_product.html", wait_until="load")
    shown = page.evaluate(
        """kinds => {
          const block = document.createElement('div');
          block.className = 'highlight-python notranslate';
          block.id = 'every-token';
          const spans = kinds.map(k => `<span class="${k}">token_${k} = 1</span>`).join('\\n');
          block.innerHTML = `<div class="highlight"><pre>${spans}</pre></div>`;
          document.querySelector('article').prepend(block);
          return block.querySelectorAll('pre span').length;
        }""",
        kinds,
    )
    assert shown == len(kinds)
    assert_no_serious_violations(
        page, "every Pygments token", "document.getElementById('every-token')"
    )
