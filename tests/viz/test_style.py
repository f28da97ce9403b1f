"""The book's figure style: alt text, text size as shown, and the PNG every figure becomes."""

import io

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from PIL import Image

from attnbook.viz import style

# Every test in this module runs in the book's style (tests/viz/conftest.py).
pytestmark = pytest.mark.usefixtures("book_style")


def test_alt_text_falls_back_to_a_description_of_each_panel():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([0, 1], [1, 2], label="loss")
    left.set(title="Training", xlabel="step", ylabel="loss")
    left.legend()
    right.bar([0, 1], [3, 4])
    fig.suptitle("Two panels")
    alt = style.alt_text(fig)
    assert alt.startswith("Figure “Two panels”: 2 panels.")
    assert "(1) line chart titled “Training”; step across, loss up; series: loss." in alt
    assert "(2) bar chart." in alt


def test_alt_text_prefers_the_figure_text_then_each_panels_own():
    fig, (left, right) = plt.subplots(1, 2)
    style.set_alt(left, "left  panel\n text")
    style.set_alt(right, "right panel")
    assert style.alt_text(fig) == "Figure: 2 panels. (1) left panel text. (2) right panel."
    style.set_alt(fig, "the whole figure")
    assert style.alt_text(fig) == "the whole figure"


def test_set_alt_rejects_other_targets_and_empty_text():
    fig, ax = plt.subplots()
    with pytest.raises(TypeError, match="Figure or Axes; got str"):
        style.set_alt("figure", "text")
    with pytest.raises(ValueError, match="non-empty"):
        style.set_alt(ax, "  ")


def test_min_text_px_is_the_font_size_in_css_pixels_scaled_down_for_wide_figures():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_title("t", fontsize=12)
    ax.set_xticks([0], labels=["x"], fontsize=9)
    ax.set_yticks([])
    assert style.min_text_px(fig) == pytest.approx(9 * 100 / 72)
    # shown at twice the text column's width: everything at half size
    assert style.min_text_px(fig, width=2 * style.CONTENT_WIDTH) == pytest.approx(9 * 100 / 72 / 2)


def test_style_sizes_are_at_least_the_pages_small_print():
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    ax.set(title="t", xlabel="x", ylabel="y")
    assert style.min_text_px(fig) >= style.MIN_TEXT_PX


def test_render_png_is_twice_as_dense_and_carries_alt_text_and_text_size():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1])
    style.set_alt(fig, "一条线 rising from 0 to 1")
    image = style.render_png(fig)
    png = Image.open(io.BytesIO(image.png))
    assert png.width == pytest.approx(style.DENSITY * image.width, abs=style.DENSITY)
    assert png.height == pytest.approx(style.DENSITY * image.height, abs=style.DENSITY)
    assert image.width <= 3 * style.CSS_DPI + 25  # tight box: the figure plus a little padding
    assert png.text[style.ALT_KEY] == "一条线 rising from 0 to 1" == image.alt
    assert float(png.text[style.TEXT_KEY]) == pytest.approx(image.min_text_px, abs=0.01)
    assert image.min_text_px >= style.MIN_TEXT_PX
    assert not plt.fignum_exists(fig.number)  # closed after rendering


def test_a_figure_wider_than_the_column_is_shown_with_smaller_text():
    fig, ax = plt.subplots(figsize=(10, 2))
    ax.plot([0, 1])
    natural = style.min_text_px(fig, style.CONTENT_WIDTH)
    image = style.render_png(fig)
    assert image.width > style.CONTENT_WIDTH
    assert image.min_text_px == pytest.approx(natural * style.CONTENT_WIDTH / image.width)
    assert image.min_text_px < style.MIN_TEXT_PX
    png = Image.open(io.BytesIO(image.png))
    assert float(png.text[style.TEXT_KEY]) == pytest.approx(natural, abs=0.01)  # at full size


def test_setup_plotting_shows_figures_through_render_png_or_svg_inside_ipython_only():
    from IPython.core.interactiveshell import InteractiveShell

    formatter_outside = None
    try:
        shell = InteractiveShell.instance()
        png = shell.display_formatter.formatters["image/png"]
        formatter_outside = png.lookup_by_type(Figure) if Figure in png else None
        style.setup_plotting()
        svg = shell.display_formatter.formatters["image/svg+xml"]
        assert png.lookup_by_type(Figure) is style._png_formatter
        assert svg.lookup_by_type(Figure) is style._svg_formatter
        for mime in ("image/jpeg", "application/pdf"):
            assert Figure not in shell.display_formatter.formatters[mime]
        fig, ax = plt.subplots(figsize=(2, 2))
        data, metadata = png.lookup_by_type(Figure)(fig)
        assert data.startswith(b"\x89PNG") and set(metadata) == {"width", "height"}
        assert svg.lookup_by_type(Figure)(fig) is None  # a chart: PNG only
        style.as_vector(fig)
        assert png.lookup_by_type(Figure)(fig) is None  # a diagram: SVG only
        data, metadata = svg.lookup_by_type(Figure)(fig)
        assert data.startswith("<svg ") and set(metadata) == {"width", "height"}
    finally:
        InteractiveShell.clear_instance()
    assert formatter_outside is not style._png_formatter
    # outside IPython: nothing registered, no shell created
    from IPython import get_ipython

    style.setup_plotting()
    assert get_ipython() is None


def vector_figure(alt: str = "Two boxes & an arrow <between>"):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [1, 0])
    ax.set_title("标题 title")
    style.set_alt(fig, alt)
    return style.as_vector(fig)


def test_render_svg_puts_the_alt_text_in_title_and_aria_label():
    style.setup_plotting()
    image = style.render_svg(vector_figure())
    root = image.svg[: image.svg.index(">") + 1]
    assert image.svg.startswith("<svg ") and 'role="img"' in root
    assert 'aria-label="Two boxes &amp; an arrow &lt;between&gt;"' in root
    assert "<title>Two boxes &amp; an arrow &lt;between&gt;</title>" in image.svg
    assert style.svg_info(image.svg) == (image.alt, image.width, pytest.approx(14.58, abs=0.01))


def test_render_svg_sizes_a_figure_inch_as_css_dpi_pixels_and_draws_text_as_paths():
    style.setup_plotting()
    image = style.render_svg(vector_figure())
    assert 'width="{}px" height="{}px"'.format(image.width, image.height) in image.svg
    assert 290 <= image.width <= 330 and 190 <= image.height <= 230  # 3 x 2 inches, tight box
    assert "<text" not in image.svg and "<metadata" not in image.svg
    assert image.min_text_px >= style.MIN_TEXT_PX


def test_render_svg_writes_the_same_markup_every_time():
    style.setup_plotting()
    assert style.render_svg(vector_figure()).svg == style.render_svg(vector_figure()).svg


def test_as_vector_refuses_what_is_not_a_figure():
    with pytest.raises(TypeError, match="fig"):
        style.as_vector(plt.gca())


def test_the_palette_keeps_white_white():
    """Quantising to 256 colours must not tint the background (a fast octree does)."""
    style.setup_plotting()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.imshow([[0.0, 1.0]], cmap="Blues")
    image = Image.open(io.BytesIO(style.render_png(fig).png)).convert("RGB")
    assert image.getpixel((1, 1)) == (255, 255, 255)
