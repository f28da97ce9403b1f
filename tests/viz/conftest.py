"""Shared by the chart tests: the book's figure style, and the check every chart must pass."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnbook.viz.style import (  # noqa: E402
    CONTENT_WIDTH,
    MIN_TEXT_PX,
    FigureImage,
    render_png,
    setup_plotting,
)


@pytest.fixture
def book_style():
    with plt.rc_context():
        setup_plotting()
        yield
    plt.close("all")


@pytest.fixture
def shown():
    """``shown(fig)``: the figure as the book stores it, asserted to fit the text column with
    text no smaller than the page's small print."""

    def render(fig) -> FigureImage:
        image = render_png(fig)
        assert image.width <= CONTENT_WIDTH and image.min_text_px >= MIN_TEXT_PX, image[1:]
        return image

    return render
