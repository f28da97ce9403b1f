"""The plotting functions of attnbook.viz.efficient return labelled figures."""

import matplotlib.pyplot as plt  # noqa: E402

from attnbook.viz.efficient import scaling_plot, tile_map  # noqa: E402


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
