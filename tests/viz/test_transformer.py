"""The chapter 5 plots: each returns a titled figure with labelled axes, and rejects bad tables."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attnbook import sinusoidal_encoding  # noqa: E402
from attnbook.viz import transformer as tviz

TABLE = sinusoidal_encoding(12, 8)


def labelled(fig) -> bool:
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    return all(ax.get_xlabel() and ax.get_ylabel() for ax in axes)


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
