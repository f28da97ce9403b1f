"""The site build's fixes (book/_ext/site_fixes.py): alt text and width from the book's PNGs,
and the rewrites of the written pages."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnbook.viz import style  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import site_fixes  # noqa: E402


def test_constants_match_the_renderer():
    assert (site_fixes.ALT_KEY, site_fixes.TEXT_KEY, site_fixes.DENSITY) == (
        style.ALT_KEY,
        style.TEXT_KEY,
        style.DENSITY,
    )
    assert site_fixes.SVG_TEXT_ATTR == style.SVG_TEXT_ATTR


def test_png_info_reads_alt_and_css_width(tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [1, 0])
    style.set_alt(fig, "一条下降的线 (a falling line)")
    image = style.render_png(fig)
    path = tmp_path / "f.png"
    path.write_bytes(image.png)
    assert site_fixes.png_info(path) == ("一条下降的线 (a falling line)", image.width)


def test_png_info_ignores_other_images(tmp_path):
    from PIL import Image

    path = tmp_path / "plain.png"
    Image.new("RGB", (10, 10)).save(path)
    assert site_fixes.png_info(path) == (None, None)
    assert site_fixes.png_info(tmp_path / "missing.png") == (None, None)


def test_svg_info_reads_alt_and_css_width_of_a_diagram(tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [1, 0])
    style.set_alt(fig, "一条下降的线 <a falling line> & more")
    image = style.render_svg(style.as_vector(fig))
    path = tmp_path / "f.svg"
    path.write_text(image.svg, encoding="utf-8")
    assert site_fixes.svg_info(path) == ("一条下降的线 <a falling line> & more", image.width)


def test_svg_info_ignores_other_svgs(tmp_path):
    path = tmp_path / "icon.svg"
    path.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10px"><title>x</title></svg>')
    assert site_fixes.svg_info(path) == (None, None)
    assert site_fixes.svg_info(tmp_path / "missing.svg") == (None, None)
    assert site_fixes.svg_info(tmp_path / "f.png") == (None, None)


def fix(html: str) -> str:
    for pattern, replacement, _ in site_fixes.PAGE_FIXES:
        html = pattern.sub(replacement, html)
    return html


def test_page_fixes():
    page = (
        '<script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
        '<button class="btn search-button-field search-button__button" title="Search" '
        'aria-label="Search" data-bs-toggle="tooltip">'
        '<summary><span class="toctree-toggle" role="presentation"></span></summary>'
        '<summary aria-label="Toggle hidden content"><p>Show code cell source</p></summary>'
        '<div class="citation" id="id3" role="doc-biblioentry">'
    )
    fixed = fix(page)
    assert "fontawesome.js" not in fixed
    assert 'aria-label="Search Ctrl+K"' in fixed
    assert '<summary aria-label="Show or hide the sections of this chapter"><span' in fixed
    assert "<summary><p>Show code cell source" in fixed
    assert 'role="listitem"' in fixed and "doc-biblioentry" not in fixed
    assert fix(fixed) == fixed  # idempotent
