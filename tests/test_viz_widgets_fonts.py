"""Plotting functions are pure and labelled; widgets link their control in the browser; fonts."""

import warnings

import ipywidgets as widgets
import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnbook import fonts, viz  # noqa: E402
from attnbook.widgets import figure_png, figure_switcher  # noqa: E402


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
    fig = viz.attention_steps(["a", "b"], 0, torch.tensor([1.0, 2.0]), torch.tensor([0.3, 0.7]),
                              torch.tensor([0.5, 0.1, 0.2]), ["f1", "f2", "f3"])
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("1.") and titles[1].startswith("2.") and titles[2].startswith("3.")
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    plt.close(fig)


def test_figure_switcher_links_control_to_stack_in_the_browser():
    view = figure_switcher({"one": lambda: viz.bars(torch.ones(2), ["a", "b"]),
                            "two": lambda: viz.bars(torch.zeros(2), ["a", "b"])},
                           description="pick")
    control, stack = view.children
    assert isinstance(stack, widgets.Stack) and len(stack.children) == 2
    assert all(isinstance(c, widgets.Image) and bytes(c.value).startswith(b"\x89PNG") for c in stack.children)
    assert bytes(stack.children[0].value) != bytes(stack.children[1].value)
    # The link is a widget model of its own: what the static site's widget manager sees.
    models = widgets.Widget.get_manager_state(drop_defaults=False)["state"].values()
    links = [m["state"] for m in models if m["model_name"] == "LinkModel"
             and m["state"]["source"] == [f"IPY_MODEL_{control.model_id}", "index"]]
    assert links and links[-1]["target"] == [f"IPY_MODEL_{stack.model_id}", "selected_index"]


@pytest.mark.parametrize("kind, cls", [("dropdown", widgets.Dropdown), ("toggle", widgets.ToggleButtons),
                                       ("slider", widgets.SelectionSlider)])
def test_figure_switcher_controls(kind, cls):
    view = figure_switcher({"a": lambda: viz.bars(torch.ones(1), ["x"])}, control=kind)
    assert isinstance(view.children[0], cls)


def test_figure_switcher_rejects_empty_and_unknown_control():
    with pytest.raises(ValueError, match="at least one"):
        figure_switcher({})
    with pytest.raises(ValueError, match="control must be"):
        figure_switcher({"a": lambda: viz.bars(torch.ones(1), ["x"])}, control="knob")


def test_figure_png_closes_the_figure():
    fig = viz.bars(torch.ones(1), ["x"])
    figure_png(fig)
    assert not plt.fignum_exists(fig.number)


def test_cjk_font_renders_chinese_without_missing_glyphs():
    family = fonts.setup_plotting()
    assert family is not None, "no CJK font installed: apt-get install fonts-wqy-microhei"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" is a UserWarning
        fig, ax = plt.subplots()
        ax.set_title("老张说他很累")
        fig.canvas.draw()
    plt.close(fig)


def test_missing_cjk_font_warns_once_with_the_fix(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)
    fonts._warn_missing_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="fonts-wqy-microhei"):
        assert fonts.use_cjk_font() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fonts.use_cjk_font() is None  # second time: silent
