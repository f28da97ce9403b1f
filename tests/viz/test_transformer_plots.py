"""The chapter 5 plots: each returns a titled figure with labelled axes, and rejects bad tables."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attnbook import sinusoidal_encoding  # noqa: E402
from attnbook.viz import transformer_plots as tviz
from attnbook.viz.style import CONTENT_WIDTH, MIN_TEXT_PX, alt_text, render_png

TABLE = sinusoidal_encoding(12, 8)


def labelled(fig) -> bool:
    """Every panel has a y label and an x label, its own or that of a panel it shares x with."""
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    return all(
        ax.get_ylabel() and any(a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax))
        for ax in axes
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: tviz.positional_image(TABLE, title="t"),
        lambda: tviz.dot_product_matrix(TABLE, title="t"),
        lambda: tviz.dot_product_by_offset(TABLE, title="t", max_offset=3),
        lambda: tviz.dot_product_profiles({"a": TABLE, "b": TABLE * 2}, 4),
        lambda: tviz.layer_gradient_norms(
            {"x": [1.0, 2.0], "y": torch.ones(2)}, title="t", ylabel="g"
        ),
        lambda: tviz.norms_against_depth(
            [2, 4], {"x": [1.0, 0.7]}, title="t", ylabel="g", reference="x"
        ),
    ],
)
def test_plots_have_titles_and_axis_labels(make) -> None:
    fig = make()
    assert labelled(fig)
    assert any(ax.get_title() for ax in fig.axes) or fig._suptitle is not None
    plt.close(fig)


def test_profiles_draw_one_panel_per_table() -> None:
    fig = tviz.dot_product_profiles({"a": TABLE, "b": TABLE}, 0)
    assert len(fig.axes) == 2
    plt.close(fig)


def test_dot_product_matrix_shows_the_gram_matrix() -> None:
    fig = tviz.dot_product_matrix(TABLE, title="t")
    shown = fig.axes[0].images[0].get_array()
    torch.testing.assert_close(torch.as_tensor(shown.data), (TABLE @ TABLE.T).double())
    plt.close(fig)


def test_tables_must_be_2d() -> None:
    with pytest.raises(ValueError, match=r"table must be a 2-D \(L, E\) tensor; got shape \(8,\)"):
        tviz.positional_image(TABLE[0], title="t")


def test_profile_position_out_of_range_raises() -> None:
    with pytest.raises(ValueError, match=r"position must lie in \[0, 11\]; got 12"):
        tviz.dot_product_profiles({"a": TABLE}, 12)


def test_chapter_5_figures_fit_the_column_with_text_at_the_style_size(book_style) -> None:
    table = sinusoidal_encoding(64, 128)
    learned = torch.randn(64, 128, generator=torch.Generator().manual_seed(0))
    for fig in [
        tviz.positional_image(table, title="64 positions × 128 dimensions"),
        tviz.dot_product_matrix(table, title="t"),
        tviz.dot_product_by_offset(table, title="t"),
        tviz.dot_product_profiles({"sinusoidal": table, "learned, at initialisation": learned}, 16),
        tviz.layer_gradient_norms({"post-LN": torch.ones(24)}, title="24 layers", ylabel="‖g‖"),
    ]:
        image = render_png(fig)
        assert image.width <= CONTENT_WIDTH and image.min_text_px >= MIN_TEXT_PX, image.alt


def test_alt_texts_carry_the_numbers_a_reader_looks_for() -> None:
    alt = alt_text(tviz.dot_product_matrix(TABLE, title="t"))
    assert "12×12 dot products" in alt and "the diagonal (p = q) averages 4.00" in alt
    assert "along any one diagonal the values differ by less than 0.001" in alt
    alt = alt_text(tviz.dot_product_by_offset(TABLE, title="t"))
    assert "144 pairs" in alt and "one curve of the offset" in alt
    alt = alt_text(tviz.dot_product_profiles({"a": TABLE}, 4))
    assert "a: 4.00 at q = p" in alt
    alt = alt_text(tviz.layer_gradient_norms({"x": [1.0, 2.0, 0.5]}, title="t", ylabel="g"))
    assert "x: 1 at layer 1, 0.5 at layer 3" in alt
    alt = alt_text(
        tviz.norms_against_depth([2, 8], {"x": [1.0, 0.5]}, title="t", ylabel="g", reference="x")
    )
    assert "dashed 1/√L guide" in alt and "x: 1 at L 2, 0.5 at L 8" in alt
    assert "from −1 (red) to 1 (blue)" in alt_text(tviz.positional_image(TABLE, title="t"))
    plt.close("all")
