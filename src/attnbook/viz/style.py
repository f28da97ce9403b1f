"""One figure style for the book, and figures that every reader can read.

* :func:`setup_plotting` applies the style file ``attnbook.mplstyle`` (sizes, the colour-blind-safe
  Okabe–Ito palette), a CJK font, and — inside IPython — a PNG formatter that renders every figure
  at :data:`DENSITY` image pixels per CSS pixel and stores its alt text in the image;
* :func:`set_alt` gives a figure (or one of its axes) alt text that says what it shows; the chart
  functions of :mod:`attnbook.viz` write it from their data, and :func:`alt_text` falls back to a
  description of the axes (titles, labels, legend) for figures drawn by hand;
* :func:`render_png` is the one renderer of charts: it returns the PNG with its display size in
  CSS pixels, its alt text and the size of its smallest text as shown on the page;
* :func:`as_vector` marks a figure drawn with lines and boxes (the diagrams of
  :mod:`attnbook.viz.diagrams`) to be shown as SVG instead, rendered by :func:`render_svg`: sharp at
  any zoom, its alt text in the SVG's ``<title>`` and ``aria-label``, its text drawn as paths (each
  glyph once), so that Chinese renders without a font on the reader's machine.

Sizes: a figure inch is :data:`CSS_DPI` CSS pixels; a figure wider than :data:`CONTENT_WIDTH` (the
text column of a 1280-pixel desktop window) is shown scaled down, and so is its text.
"""

from __future__ import annotations

import html
import io
import math
import re
from importlib import resources
from typing import NamedTuple

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

from attnbook.viz.fonts import use_cjk_font

__all__ = [
    "STYLE_FILE",
    "CSS_DPI",
    "DENSITY",
    "CONTENT_WIDTH",
    "MIN_TEXT_PX",
    "ALT_KEY",
    "TEXT_KEY",
    "FigureImage",
    "setup_plotting",
    "set_alt",
    "alt_text",
    "min_text_px",
    "render_png",
    "FigureSVG",
    "SVG_TEXT_ATTR",
    "as_vector",
    "is_vector",
    "render_svg",
    "svg_info",
]

STYLE_FILE = str(resources.files("attnbook.viz") / "attnbook.mplstyle")
#: CSS pixels per figure inch (the style's ``figure.dpi``).
CSS_DPI = 100
#: Image pixels per CSS pixel, so that figures are sharp on high-density screens.
DENSITY = 2
#: Width in CSS pixels of a cell's output on the book's pages in a 1280-pixel desktop window.
CONTENT_WIDTH = 688
#: The page's small print in CSS pixels (its code and output text). No figure text is smaller.
MIN_TEXT_PX = 14.0
#: The PNG text chunk that holds a figure's alt text (the standard keyword for a description).
ALT_KEY = "Description"
#: The smallest text in CSS pixels when the image is shown at its full width (width x height).
TEXT_KEY = "attnbook-text-px"
#: The attribute of an SVG's root element that holds its smallest text at full size (CSS pixels).
SVG_TEXT_ATTR = "data-" + TEXT_KEY


class FigureImage(NamedTuple):
    """A rendered figure: PNG bytes, display size in CSS pixels, alt text, smallest text."""

    png: bytes
    width: int
    height: int
    alt: str
    min_text_px: float


class FigureSVG(NamedTuple):
    """A figure rendered as SVG: the markup, display size in CSS pixels, alt text, smallest text."""

    svg: str
    width: int
    height: int
    alt: str
    min_text_px: float


def set_alt(target: Figure | Axes, text: str) -> Figure | Axes:
    """Attach alt text (what the figure shows, in a sentence or two) to a figure or to one axes.

    Figure-level text replaces the whole description; axes-level text describes that panel and
    is joined with the other panels' descriptions. Returns ``target``.
    """
    if not isinstance(target, (Figure, Axes)):
        raise TypeError(f"target must be a matplotlib Figure or Axes; got {type(target).__name__}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("alt text must be a non-empty string")
    target._attnbook_alt = " ".join(text.split())
    return target


def _axes_kind(ax: Axes) -> str:
    if ax.images:
        rows, cols = ax.images[0].get_array().shape[:2]
        return f"heat-map of a {rows}×{cols} grid"
    if ax.patches and not ax.lines:
        return "bar chart"
    if ax.lines and ax.collections:
        return "line and scatter chart"
    if ax.lines:
        return "line chart"
    if ax.collections:
        return "scatter chart"
    return "diagram"


def _describe_axes(ax: Axes) -> str:
    explicit = getattr(ax, "_attnbook_alt", None)
    if explicit:
        return explicit
    parts = [_axes_kind(ax)]
    if ax.get_title():
        parts[0] += f" titled “{' '.join(ax.get_title().split())}”"
    labels = [label for label in (ax.get_xlabel(), ax.get_ylabel()) if label]
    if ax.get_xlabel() and ax.get_ylabel():
        parts.append(f"{ax.get_xlabel()} across, {ax.get_ylabel()} up")
    elif labels:
        parts.append(labels[0])
    legend = ax.get_legend()
    if legend is not None:
        entries = [t.get_text() for t in legend.get_texts() if t.get_text()]
        if entries:
            parts.append("series: " + ", ".join(entries))
    return "; ".join(parts)


def _is_colorbar(ax: Axes) -> bool:
    return hasattr(ax, "_colorbar") or ax.get_label() == "<colorbar>"


def alt_text(fig: Figure) -> str:
    """The figure's alt text: its own (:func:`set_alt`), else one description per panel."""
    explicit = getattr(fig, "_attnbook_alt", None)
    if explicit:
        return explicit
    panels = [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax)]
    described = [_describe_axes(ax) for ax in panels if ax.axison or ax.images or ax.lines]
    described = [d for d in described if d != "diagram"] or described
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    head = f"Figure “{' '.join(title.split())}”: " if title else "Figure: "
    if not described:
        return head + "a diagram"
    if len(described) == 1:
        return head + described[0]
    return (
        head
        + f"{len(described)} panels. "
        + " ".join(f"({i}) {d.rstrip('.')}." for i, d in enumerate(described, 1))
    )


def _texts(fig: Figure) -> list[Text]:
    texts: list[Text] = list(fig.texts)
    for attr in ("_suptitle", "_supxlabel", "_supylabel"):
        if getattr(fig, attr, None) is not None:
            texts.append(getattr(fig, attr))
    for legend in fig.legends:
        texts.extend(legend.get_texts())
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts.extend([ax.title, ax._left_title, ax._right_title, *ax.texts])
        if ax.axison:
            for axis in (ax.xaxis, ax.yaxis):
                texts.append(axis.label)
                texts.extend(axis.get_ticklabels(which="both"))
        legend = ax.get_legend()
        if legend is not None:
            texts.extend([*legend.get_texts(), legend.get_title()])
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def min_text_px(fig: Figure, width: float | None = None) -> float:
    """The smallest text of ``fig`` in CSS pixels as shown on the page (``inf`` if it has none).

    ``width`` is the figure's display width in CSS pixels (default: its width at
    :data:`CSS_DPI`); a figure wider than :data:`CONTENT_WIDTH` is shown scaled down.
    """
    width = fig.get_figwidth() * CSS_DPI if width is None else width
    scale = min(1.0, CONTENT_WIDTH / width)
    sizes = [t.get_fontsize() for t in _texts(fig)]
    return min(sizes) * CSS_DPI / 72 * scale if sizes else math.inf


def render_png(fig: Figure, *, close: bool = True) -> FigureImage:
    """Render ``fig`` as the book shows it: :data:`DENSITY` image pixels per CSS pixel, tight
    bounding box, its alt text and its smallest text at full size in the PNG's text chunks
    (:data:`ALT_KEY`, :data:`TEXT_KEY`). ``min_text_px`` of the result is the smallest text as
    shown in a :data:`CONTENT_WIDTH`-wide column."""
    from PIL import Image

    alt = alt_text(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=CSS_DPI * DENSITY, bbox_inches="tight")
    buffer.seek(0)
    image = Image.open(buffer)
    width, height = math.ceil(image.width / DENSITY), math.ceil(image.height / DENSITY)
    smallest = min_text_px(fig, width)
    natural = min_text_px(fig, CONTENT_WIDTH)  # at full size: the page may show it narrower
    if close:
        plt.close(fig)
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text(ALT_KEY, alt)  # iTXt (UTF-8) when the text is not Latin-1, e.g. Chinese
    info.add_text(TEXT_KEY, f"{natural:.2f}")
    info.add_text("Software", f"matplotlib {matplotlib.__version__} via attnbook")
    # A palette of 256 colours: about a third of the bytes, and no visible change for charts.
    # Median cut keeps white white (a fast octree tints it); PNG's slow "optimize" pass would
    # save another 8% of bytes at nearly twice the time.
    small = image.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    small.save(out, format="png", pnginfo=info)
    return FigureImage(out.getvalue(), width, height, alt, smallest)


def as_vector(fig: Figure) -> Figure:
    """Mark ``fig`` to be shown as SVG (:func:`render_svg`) rather than PNG. For figures of boxes,
    arrows and labels, which a vector stays sharp and small for; not for heat-maps or scatters of
    many points. Returns ``fig``."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    fig._attnbook_vector = True
    return fig


def is_vector(fig: Figure) -> bool:
    """Whether :func:`as_vector` marked ``fig``."""
    return bool(getattr(fig, "_attnbook_vector", False))


# The SVG that matplotlib writes, made deterministic and small: no metadata, no doctype, fixed ids.
_SVG_RC = {"svg.fonttype": "path", "svg.hashsalt": "attnbook", "svg.image_inline": True}
_SVG_ROOT = re.compile(r'<svg [^>]*?width="([\d.]+)pt" height="([\d.]+)pt"[^>]*>')


def render_svg(fig: Figure, *, close: bool = True) -> FigureSVG:
    """Render ``fig`` as SVG, as the book shows a diagram: a figure inch is :data:`CSS_DPI` CSS
    pixels (the root's ``width`` and ``height``; the drawing scales with them), tight bounding
    box, text as paths; the alt text is the SVG's ``<title>`` and ``aria-label`` (``role="img"``),
    and the smallest text at full size is the root's :data:`SVG_TEXT_ATTR` attribute.
    ``min_text_px`` of the result is the smallest text as shown in a :data:`CONTENT_WIDTH`-wide
    column. The markup is the same on every run."""
    alt = alt_text(fig)
    buffer = io.StringIO()
    with matplotlib.rc_context(_SVG_RC):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    if close:
        plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg ") :]
    svg = re.sub(r"(?s)\s*<metadata>.*?</metadata>", "", svg, count=1)
    root = _SVG_ROOT.search(svg)
    if root is None:  # pragma: no cover - matplotlib always writes both, in points
        raise RuntimeError("matplotlib wrote an SVG without width and height in points")
    points = float(root.group(1)), float(root.group(2))
    width, height = (math.ceil(p / 72 * CSS_DPI) for p in points)
    smallest = min_text_px(fig, width)
    natural = min_text_px(fig, CONTENT_WIDTH)
    label = html.escape(alt, quote=True)
    opening = (
        root.group(0)
        .replace(f'width="{root.group(1)}pt"', f'width="{width}px"')
        .replace(f'height="{root.group(2)}pt"', f'height="{height}px"')
        .replace(
            "<svg ", f'<svg role="img" aria-label="{label}" {SVG_TEXT_ATTR}="{natural:.2f}" ', 1
        )
    )
    svg = (
        svg[: root.start()]
        + opening
        + f"\n <title>{html.escape(alt, quote=False)}</title>"
        + (svg[root.end() :])
    )
    return FigureSVG(svg, width, height, alt, smallest)


def svg_info(svg: str) -> tuple[str | None, int | None, float | None]:
    """What :func:`render_svg` wrote into an SVG: its alt text (``<title>``), its width in CSS
    pixels and its smallest text at full size in CSS pixels; None where absent."""
    start = svg.find("<svg ")
    root = svg[start : svg.find(">", start) + 1] if start >= 0 else ""
    title = re.search(r"(?s)<title>(.*?)</title>", svg)
    width = re.search(r'\swidth="(\d+)px"', root)
    text = re.search(rf'{SVG_TEXT_ATTR}="([\d.]+)"', root)
    return (
        html.unescape(title.group(1)).strip() if title else None,
        int(width.group(1)) if width else None,
        float(text.group(1)) if text else None,
    )


def _png_formatter(fig: Figure) -> tuple[bytes, dict[str, int]] | None:
    if is_vector(fig):
        return None
    image = render_png(fig, close=False)  # the inline backend closes its figures itself
    return image.png, {"width": image.width, "height": image.height}


def _svg_formatter(fig: Figure) -> tuple[str, dict[str, int]] | None:
    if not is_vector(fig):
        return None
    image = render_svg(fig, close=False)
    return image.svg, {"width": image.width, "height": image.height}


def setup_plotting() -> str | None:
    """Apply the book's figure style and CJK font; in IPython, show figures through
    :func:`render_png`, or :func:`render_svg` for those marked by :func:`as_vector` (sharp, with
    alt text). Returns the CJK font family in use, or None."""
    matplotlib.style.use(STYLE_FILE)
    family = use_cjk_font()
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the notebooks
        return family
    shell = get_ipython()
    if shell is not None:
        import matplotlib_inline.backend_inline  # noqa: F401  (registers the inline backend first)

        formatters = shell.display_formatter.formatters
        formatters["image/png"].for_type(Figure, _png_formatter)
        formatters["image/svg+xml"].for_type(Figure, _svg_formatter)
        for mime in ("image/jpeg", "application/pdf"):
            formatters[mime].pop(Figure, None)
    return family
