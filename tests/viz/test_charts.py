"""Plotting functions are pure and labelled; widgets link their control in the browser; fonts."""

import matplotlib.pyplot as plt  # noqa: E402
import pytest
import torch

from attnbook import viz  # noqa: E402


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
