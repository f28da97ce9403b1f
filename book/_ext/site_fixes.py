"""Small fixes to the HTML that Jupyter Book 1's theme stack writes.

With jupyter-book 1.0.4.post1 (Sphinx 7.4, pydata-sphinx-theme 0.17, sphinx-thebe 0.3.1,
sphinx-togglebutton 0.3.2):

* the inline scripts of sphinx-thebe and sphinx-togglebutton are written twice into every page;
  the second ``const THEBE_JS_URL = ...`` is a JavaScript error. Exact duplicates are dropped.
* a figure stored by a notebook is an ``<img>`` whose ``alt`` is its file name. The book's
  figures carry their alt text in the PNG itself (``attnbook.viz.style.render_png`` writes it
  to the standard ``Description`` text chunk); it becomes the image's ``alt`` here. The stored
  height is dropped, so that a figure narrowed to a phone's width keeps its proportions, and a
  figure placed with ``{figure}`` is shown at its CSS width (half its pixel width). A diagram is
  stored as SVG (``attnbook.viz.style.render_svg``), which myst-nb also writes to a file and shows
  with an ``<img>``: its alt text is the SVG's ``<title>``, and its width the root's ``width``.
* the theme draws its dozen icons with Font Awesome's 1.5 MB JavaScript on every page; the site
  uses Font Awesome's CSS and web fonts instead (vendored by scripts/vendor_assets.py).
* accessibility errors that axe-core finds in what the theme, myst-nb and docutils write (a
  search button and hidden-code toggles whose names differ from their visible text, unnamed
  expand arrows, bibliography entries with a role a list may not hold) are fixed in the
  written pages; see PAGE_FIXES.

It also marks the book's *going deeper* sections (CONTRIBUTING.md): a section whose heading
starts with one of DEEPER_MARKERS gets the class ``deeper`` (a whole page whose title starts so,
``deeper-page``), which ``assets/attnbook.css`` sets
apart from the core path and labels. (myst-nb wraps only code cells in a container, as
``cell tag_deeper``; a markdown cell's paragraphs and headings have none, so the section is what
can carry the look.)
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from docutils import nodes

# The PNG text chunks attnbook.viz.style.render_png writes, and its image pixels per CSS pixel
# (the same values as attnbook.viz.style's ALT_KEY, TEXT_KEY and DENSITY; a test checks).
ALT_KEY = "Description"
TEXT_KEY = "attnbook-text-px"
DENSITY = 2
# The attribute of an attnbook SVG's root that holds its smallest text (style.SVG_TEXT_ATTR).
SVG_TEXT_ATTR = "data-" + TEXT_KEY


def _drop_duplicate_scripts(
    app, pagename: str, templatename: str, context: dict[str, Any], doctree
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        key = (
            str(getattr(script, "filename", "") or ""),
            tuple(sorted((k, str(v)) for k, v in attributes.items())),
        )
        if key in seen:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def png_info(path: Path) -> tuple[str | None, int | None]:
    """The alt text in a PNG's ``Description`` chunk, and its display width in CSS pixels if
    attnbook rendered it (``DENSITY`` image pixels per CSS pixel); None where absent."""
    if path.suffix.lower() != ".png" or not path.is_file():
        return None, None
    from PIL import Image

    with Image.open(path) as image:
        text = getattr(image, "text", {}) or {}
        width = -(-image.width // DENSITY) if TEXT_KEY in text else None
        return text.get(ALT_KEY), width


def svg_info(path: Path) -> tuple[str | None, int | None]:
    """The alt text (``<title>``) of an SVG that attnbook rendered, and its width in CSS pixels;
    (None, None) for any other file."""
    if path.suffix.lower() != ".svg" or not path.is_file():
        return None, None
    svg = path.read_text(encoding="utf-8")
    start = svg.find("<svg ")
    root = svg[start : svg.find(">", start) + 1] if start >= 0 else ""
    if SVG_TEXT_ATTR not in root:
        return None, None
    title = re.search(r"(?s)<title>(.*?)</title>", svg)
    width = re.search(r'\swidth="(\d+)px"', root)
    return (
        html.unescape(title.group(1)).strip() if title else None,
        int(width.group(1)) if width else None,
    )


def _figure_alt_text(app, doctree: nodes.document, docname: str) -> None:
    for image in doctree.findall(nodes.image):
        uri = image.get("uri", "")
        if not uri or "://" in uri or uri.startswith("data:"):
            continue
        # Sphinx's image collector has resolved the file: candidates["*"] is relative to the
        # source directory (the file it copies into _images/).
        candidate = image.get("candidates", {}).get("*")
        if not candidate:
            continue
        path = Path(app.srcdir) / candidate
        alt, width = svg_info(path) if path.suffix.lower() == ".svg" else png_info(path)
        if alt is not None:
            image["alt"] = alt
        if width is not None:
            image.attributes.pop("height", None)
            if "width" not in image:  # a {figure} in the text: shown at its CSS size
                image["width"] = f"{width}px"


# Rewrites of the written pages: (pattern, replacement, what it fixes).
PAGE_FIXES = [
    (
        re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*'),
        "",
        "Font Awesome's JavaScript (the CSS version is loaded instead)",
    ),
    (
        re.compile(r'(class="btn search-button-field[^"]*"[^>]*?)aria-label="(Search|搜索)"'),
        r'\1aria-label="\2 Ctrl+K"',
        "search button: its name must contain its visible text (either edition)",
    ),
    (
        re.compile(r'<summary aria-label="Toggle hidden content">'),
        "<summary>",
        "hidden code cells: the name must be the visible 'Show code cell source'",
    ),
    (
        re.compile(r'role="doc-biblioentry"'),
        'role="listitem"',
        "bibliography: a list's children must be list items",
    ),
    (
        re.compile(r"<summary>(<span class=\"toctree-toggle\")"),
        r'<summary aria-label="Show or hide the sections of this chapter">\1',
        "navigation: the expand arrows need a name",
    ),
]


def _fix_written_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = text
        for pattern, replacement, _ in PAGE_FIXES:
            fixed = pattern.sub(replacement, fixed)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


# How a going-deeper heading starts, in each edition (tests/test_deeper.py uses the same markers).
DEEPER_MARKERS = ("Going deeper:", "深入一步：")


def _mark_deeper_sections(app, doctree: nodes.document) -> None:
    top = doctree.next_node(nodes.section)
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        if title is not None and title.astext().startswith(DEEPER_MARKERS):
            # A whole page (its title is the marker's, as section 3.14) gets only the label.
            section["classes"].append("deeper-page" if section is top else "deeper")


def setup(app) -> dict[str, Any]:
    # After the theme and extensions have added their scripts.
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    app.connect("doctree-resolved", _figure_alt_text)
    app.connect("doctree-read", _mark_deeper_sections)
    app.connect("build-finished", _fix_written_pages)
    app.add_css_file("fontawesome/css/all.min.css")
    app.add_css_file("attnbook.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
