"""Pictures of many heads: the grid indexes [layer][n, head], lines and boxes land where they should."""

import matplotlib.pyplot as plt  # noqa: E402
import pytest
import torch

from attnbook.viz.head_plots import (  # noqa: E402
    HEAD_COLORS,
    QUERY_COLOR,
    attention_lines,
    head_grid,
    head_heatmap,
)
from attnbook.viz.layout import OKABE_ITO

TOKENS = ["Tom", "cried", ".", "he"]


def layer_weights(layers=2, N=3, H=2, L=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(N, H, L, L, generator=g).softmax(-1) for _ in range(layers)]


def test_grid_has_one_panel_per_layer_and_head_showing_weights_layer_n_head():
    weights = layer_weights()
    fig = head_grid(weights, TOKENS, example=1)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == [
        "layer 0, head 0",
        "layer 0, head 1",
        "layer 1, head 0",
        "layer 1, head 1",
    ]
    for ax, (layer, head) in zip(panels, [(0, 0), (0, 1), (1, 0), (1, 1)]):
        shown = torch.tensor(ax.images[0].get_array())
        torch.testing.assert_close(shown, weights[layer][1, head])
    plt.close(fig)


def test_grid_rejects_a_single_layer_tensor_and_names_the_right_indexing():
    with pytest.raises(ValueError, match=r"weights\[layer\]\[n, head\]"):
        head_grid(layer_weights()[0], TOKENS)


def test_grid_accepts_a_stacked_five_dimensional_tensor():
    fig = head_grid(torch.stack(layer_weights(layers=3)), TOKENS)
    assert len([ax for ax in fig.axes if ax.get_title()]) == 6
    plt.close(fig)


def test_grid_rejects_layers_of_different_shapes_wrong_labels_and_example():
    with pytest.raises(ValueError, match="same shape"):
        head_grid([torch.ones(1, 2, 4, 4), torch.ones(1, 3, 4, 4)], TOKENS)
    with pytest.raises(ValueError, match="tokens has 3 labels"):
        head_grid(layer_weights(), TOKENS[:3])
    with pytest.raises(ValueError, match="example must be in"):
        head_grid(layer_weights(), TOKENS, example=3)


def test_query_row_is_boxed_in_the_heatmap():
    fig = head_heatmap(layer_weights()[0][0, 0], TOKENS, query=3, title="t")
    ax = fig.axes[0]
    (box,) = ax.patches
    assert box.get_xy() == (-0.5, 2.5) and box.get_height() == 1
    assert ax.get_yticklabels()[3].get_color() == QUERY_COLOR
    plt.close(fig)


def test_heatmap_rejects_more_than_one_head():
    with pytest.raises(ValueError, match="one head's"):
        head_heatmap(layer_weights()[0][0], TOKENS)


def lines_of(fig):
    return [line for line in fig.axes[0].lines if len(line.get_xdata()) == 2]


def test_lines_draw_one_line_per_weight_above_threshold_with_opacity_from_the_weight():
    weights = torch.zeros(1, 4, 4)
    weights[0, 3, 0], weights[0, 3, 3], weights[0, 0, 1] = 0.75, 0.25, 0.01
    fig = attention_lines(weights, TOKENS)
    drawn = {
        (-line.get_ydata()[0], -line.get_ydata()[1]): line.get_alpha() for line in lines_of(fig)
    }
    assert set(drawn) == {(3, 0), (3, 3)}  # 0.01 is below the threshold
    assert drawn[(3, 0)] == pytest.approx(0.75 * 0.9) and drawn[(3, 3)] == pytest.approx(0.25 * 0.9)
    plt.close(fig)


def test_lines_fade_every_query_but_the_chosen_one_and_colour_by_head():
    weights = torch.full((2, 4, 4), 0.25)
    fig = attention_lines(weights, TOKENS, query=1, heads=[1])
    lines = lines_of(fig)
    assert len(lines) == 16  # head 1 only
    strong = [line for line in lines if line.get_ydata()[0] == -1]
    assert all(line.get_alpha() > 0.2 for line in strong)
    assert all(line.get_alpha() < 0.05 for line in lines if line not in strong)
    assert len({line.get_color() for line in lines}) == 1
    plt.close(fig)


def test_lines_reject_bad_heads_and_shapes():
    with pytest.raises(ValueError, match="heads must be in"):
        attention_lines(torch.ones(2, 4, 4) / 4, TOKENS, heads=[2])
    with pytest.raises(ValueError, match=r"\(H, L, S\)"):
        attention_lines(torch.ones(4, 4) / 4, TOKENS)


# Readable at the size the book shows them (chapter 7: a 22-token sentence, 2 layers x 2 heads).
SENTENCE = (
    "yesterday Rose quietly ate , Luke ran , Paul ate and Anna also ran . afterwards he was "
    "out of breath ."
).split()
HE, LUKE = SENTENCE.index("he"), SENTENCE.index("Luke")


def sentence_weights(layers=2, H=2):
    weights = layer_weights(layers=layers, N=1, H=H, L=len(SENTENCE))
    weights[-1][0, :, HE] = 0.0
    weights[-1][0, :, HE, LUKE] = 0.83
    weights[-1][0, :, HE, HE] = 0.17
    return weights


def test_head_heatmap_of_a_sentence_is_readable_and_says_where_the_query_looks(book_style, shown):
    image = shown(head_heatmap(sentence_weights()[1][0, 0], SENTENCE, query=HE, title="layer 1"))
    assert image.alt.startswith("Heat-map of one head's 22×22 attention weights ‘layer 1’")
    assert "the row of ‘he’ (position 16) peaks at ‘Luke’ (0.83)" in image.alt


def test_head_heatmap_keeps_the_query_label_when_labels_are_thinned(book_style, shown):
    tokens = [f"w{i}" for i in range(60)]
    fig = head_heatmap(torch.eye(60), tokens, query=37)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[37] == "w37" and 5 < sum(bool(label) for label in labels) < 60
    shown(fig)


def test_head_grid_fits_the_column_and_lists_the_query_peak_of_every_head(book_style, shown):
    image = shown(head_grid(sentence_weights(), SENTENCE, query=HE, cell=2.8, title="he"))
    assert image.alt.startswith("Grid of 2×2 heat-maps (rows: layer, columns: head)")
    assert "layer 1 head 0: Luke 0.83; layer 1 head 1: Luke 0.83" in image.alt


def test_head_grid_of_eight_heads_still_fits_with_short_titles(book_style, shown):
    fig = head_grid(layer_weights(layers=1, N=1, H=8), TOKENS, query=3)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert (
        panels[5].get_title() == "0.5" and "panel l.h: layer l, head h" in fig._suptitle.get_text()
    )
    shown(fig)


def test_attention_lines_are_readable_and_name_the_strongest_lines(book_style, shown):
    image = shown(attention_lines(sentence_weights()[1][0], SENTENCE, heads=[0], query=HE))
    assert "head 0: he→Luke 0.83, he→he 0.17" in image.alt


def test_head_colours_are_the_okabe_ito_palette():
    assert set(HEAD_COLORS) == set(OKABE_ITO.values()) and len(HEAD_COLORS) == 8
