"""Plotting functions are pure and labelled; widgets link their control in the browser; fonts."""

import matplotlib.pyplot as plt  # noqa: E402
import pytest
import torch
from matplotlib.colors import to_rgb

from attnbook import viz  # noqa: E402
from attnbook.viz import style
from attnbook.viz.layout import OKABE_ITO


def test_heatmap_labels_both_axes_and_rows():
    fig = viz.heatmap(torch.eye(3), ["a", "b", "c"], ["x", "y", "z"], title="t")
    ax = fig.axes[0]
    assert ax.get_title() == "t" and ax.get_xlabel() and ax.get_ylabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "z"]
    plt.close(fig)


def test_heatmap_rejects_wrong_label_count_and_shape():
    with pytest.raises(ValueError, match="x_labels has 2 labels for 3"):
        viz.heatmap(torch.eye(3), ["a", "b"])
    with pytest.raises(ValueError, match="2-D"):
        viz.heatmap(torch.ones(2, 3, 3))


def test_bars_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="one entry per label"):
        viz.bars(torch.ones(3), ["a", "b"])


def test_attention_steps_draws_three_titled_panels():
    fig = viz.attention_steps(
        ["a", "b"],
        0,
        torch.tensor([1.0, 2.0]),
        torch.tensor([0.3, 0.7]),
        torch.tensor([0.5, 0.1, 0.2]),
        ["f1", "f2", "f3"],
    )
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("1.") and titles[1].startswith("2.") and titles[2].startswith("3.")
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    plt.close(fig)


# Readable at the size the book shows them: chapter-like inputs, the book's style.
TOKENS = list("老张对小丽说他很累")
WEIGHTS = torch.tensor([3.0, 4.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0, 0.0]).softmax(0)  # peak: 张


def test_heatmap_of_a_sentence_is_readable_and_names_each_rows_peak(book_style, shown):
    weights = torch.eye(9) * 0.5 + torch.full((9, 9), 0.5 / 9)
    weights[6] = WEIGHTS
    image = shown(viz.heatmap(weights, TOKENS, TOKENS, title="Query 他"))
    assert image.alt.startswith("Heat-map of 9×9 attention weights ‘Query 他’")
    assert f"他→张 {WEIGHTS.max():.2f}" in image.alt and "老→老 0.56" in image.alt


def test_heatmap_prints_numbers_only_in_cells_that_hold_them(book_style):
    big = viz.heatmap(torch.rand(5, 5), title="five")
    assert len(big.axes[0].texts) == 25
    assert min(t.get_fontsize() for t in big.axes[0].texts) == plt.rcParams["font.size"]
    small = viz.heatmap(torch.rand(30, 30), title="thirty")
    assert len(small.axes[0].texts) == 0
    never = viz.heatmap(torch.rand(5, 5), annotate=False)
    assert len(never.axes[0].texts) == 0


def test_heatmap_of_many_rows_thins_its_labels_instead_of_shrinking_them(book_style, shown):
    labels = [f"token{i}" for i in range(48)]
    fig = viz.heatmap(torch.rand(48, 48).softmax(-1), labels, labels)
    ax = fig.axes[0]
    shown_y = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert 4 <= len(shown_y) < 48 and shown_y[0] == "token0"
    assert all(t.get_fontsize() == plt.rcParams["ytick.labelsize"] for t in ax.get_yticklabels())
    shown(fig)


def test_heatmap_alt_text_lists_a_dozen_rows_then_an_ellipsis(book_style):
    fig = viz.heatmap(torch.eye(20), title="identity")
    alt = style.alt_text(fig)
    assert "11→11 1.00" in alt and "12→12" not in alt and alt.endswith("….")


def test_bars_list_every_value_and_mark_the_highlight_by_hatching(book_style, shown):
    fig = viz.bars(WEIGHTS, TOKENS, highlight=6, xlabel="key token", ylabel="weight", title="他")
    bar = fig.axes[0].patches[6]
    assert bar.get_hatch() and bar.get_edgecolor()[:3] == (0.0, 0.0, 0.0)
    assert fig.axes[0].get_xticklabels()[6].get_bbox_patch() is not None  # its label is boxed
    image = shown(fig)
    assert "张=0.60" in image.alt and "highlighted (orange, hatched, label boxed): 他" in image.alt


def test_many_bars_give_the_top_three_and_the_range(book_style, shown):
    values = torch.arange(32.0) / 31
    fig = viz.bars(values, [str(i) for i in range(32)], fmt="")
    image = shown(fig)
    assert "largest 31=1, 30=0.968, 29=0.935; range 0 to 1" in image.alt


def test_bars_draw_tab_colours_in_the_okabe_ito_palette(book_style):
    fig = viz.bars(torch.ones(2), ["a", "b"], color="tab:red")
    assert fig.axes[0].patches[0].get_facecolor()[:3] == to_rgb(OKABE_ITO["vermilion"])


def test_attention_steps_fit_the_column_and_say_where_the_query_looks(book_style, shown):
    scores = WEIGHTS.log()
    image = shown(
        viz.attention_steps(
            TOKENS, 6, scores, WEIGHTS, torch.tensor([0.9, 0.8, 0.1]), ["person", "male", "f"]
        )
    )
    assert "query token ‘他’" in image.alt and f"largest 张 {WEIGHTS.max():.2f}" in image.alt
    assert "(3) Output: person=0.90, male=0.80, f=0.10" in image.alt


def test_mask_image_names_a_causal_mask_and_queries_with_no_key(book_style, shown):
    image = shown(viz.mask_image(torch.ones(5, 5, dtype=torch.bool).tril(), title="causal"))
    assert "5×5 mask ‘causal’" in image.alt
    assert "15 of 25 cells may attend: causal (lower-triangular)" in image.alt
    padded = torch.ones(3, 3, dtype=torch.bool).tril() & torch.tensor([False, True, True])
    alt = style.alt_text(viz.mask_image(padded, list("ab他"), list("ab他")))
    assert "Queries with no allowed key: a." in alt


def test_a_chart_drawn_into_a_panel_describes_that_panel(book_style):
    fig, (left, right) = plt.subplots(1, 2, figsize=(6.6, 3))
    viz.mask_image(torch.ones(3, 3, dtype=torch.bool).tril(), ax=left)
    viz.heatmap(torch.eye(3), ax=right)
    alt = style.alt_text(fig)
    assert alt.startswith("Figure: 2 panels. (1) 3×3 mask") and "(2) Heat-map of 3×3" in alt


def test_bars_highlight_on_the_upper_panel_of_a_shared_x_axis(book_style):
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True)
    viz.bars(WEIGHTS, TOKENS, highlight=2, ax=top)
    viz.bars(WEIGHTS, TOKENS, highlight=2, ax=bottom)
    assert bottom.get_xticklabels()[2].get_bbox_patch() is not None
    plt.close(fig)
