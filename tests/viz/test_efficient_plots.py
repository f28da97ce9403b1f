"""The plotting functions of attnbook.viz.efficient_plots return labelled figures."""

import matplotlib.pyplot as plt  # noqa: E402

from attnbook.viz.efficient_plots import scaling_plot, tile_map  # noqa: E402
from attnbook.viz.style import CONTENT_WIDTH, MIN_TEXT_PX, render_png


def test_scaling_plot_puts_the_fitted_slope_in_the_legend():
    fig = scaling_plot(
        {"quadratic": ([256, 512, 1024, 2048], [1, 4, 16, 64])},
        title="t",
        ylabel="seconds",
        fit_from=512,
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["quadratic (slope 2.00)"]
    assert (
        ax.get_title() == "t"
        and ax.get_ylabel() == "seconds"
        and ax.get_xlabel() == "sequence length n"
    )
    plt.close(fig)


def test_tile_map_counts_the_causal_tiles():
    fig = tile_map(16, 16, 4, 4, is_causal=True)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["computed: 6", "masked inside: 4", "skipped: 6"]
    plt.close(fig)


def test_tile_map_without_causal_mask_computes_every_tile():
    fig = tile_map(10, 12, 4, 5)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["computed: 9"]  # 3 query blocks x 3 key blocks
    plt.close(fig)


def test_scaling_plot_fits_the_column_and_describes_slopes_ends_and_crossings(book_style):
    series = {
        "naive": ([512, 1024, 2048, 4096], [1.0, 4.0, 16.0, 64.0]),
        "chunked": ([512, 1024, 2048, 4096], [3.0, 6.0, 12.0, 24.0]),
    }
    image = render_png(scaling_plot(series, title="time", ylabel="s", fit_from=1024))
    assert image.width <= CONTENT_WIDTH and image.min_text_px >= MIN_TEXT_PX
    assert "naive (slope 2.00): 1 at n = 512 to 64 at n = 4096" in image.alt
    assert "naive and chunked cross between n = 1024 and 2048" in image.alt


def test_tile_map_fits_hatches_the_masked_tiles_and_counts_them_in_words(book_style):
    fig = tile_map(16, 16, 4, 4, is_causal=True)
    hatched = {p.get_hatch() for p in fig.axes[0].patches if p.get_facecolor()[:3] != (1, 1, 1)}
    assert "//" in hatched  # "masked inside" is not told by colour alone
    image = render_png(fig)
    assert image.width <= CONTENT_WIDTH and image.min_text_px >= MIN_TEXT_PX
    assert "cut into 16 tiles: 6 computed, 4 masked inside, 6 skipped" in image.alt
