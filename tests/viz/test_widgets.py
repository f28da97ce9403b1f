"""figure_explorer: several controls, nested stacks, every combination reachable in the browser."""

import ipywidgets as widgets
import matplotlib.pyplot as plt  # noqa: E402
import pytest
import torch

from attnbook import viz
from attnbook.viz.widgets import figure_explorer, figure_png, figure_switcher  # noqa: E402

CONTROLS = {"sentence": ["a", "b", "c"], "layer": ["0", "1"], "view": ["heat", "grid"]}


def render_counting(calls):
    def render(choice):
        calls.append(dict(choice))
        fig, ax = plt.subplots(figsize=(1.5, 1))
        ax.set_title(" ".join(choice.values()))
        return fig

    return render


def shown(explorer, indices):
    """The image a reader sees after choosing these option indices (what the jslinks do)."""
    node = explorer.children[-1]
    for i in indices:
        node = node.children[i]
    return node


def links_from(control):
    models = widgets.Widget.get_manager_state(drop_defaults=False)["state"].values()
    return [
        m["state"]["target"]
        for m in models
        if m["model_name"] == "LinkModel"
        and m["state"]["source"] == [f"IPY_MODEL_{control.model_id}", "index"]
    ]


def test_every_combination_has_its_own_image_by_default():
    calls = []
    explorer = figure_explorer(CONTROLS, render_counting(calls))
    assert len(calls) == 12
    images = {id(shown(explorer, (s, l, v))) for s in range(3) for l in range(2) for v in range(2)}
    assert len(images) == 12 and isinstance(shown(explorer, (2, 1, 1)), widgets.Image)


def test_the_image_reached_is_the_one_rendered_for_that_choice():
    from attnbook.viz.widgets import figure_png

    render = render_counting([])
    explorer = figure_explorer(CONTROLS, render)
    for s, sentence in enumerate(CONTROLS["sentence"]):
        for layer in range(2):
            for v, view in enumerate(CONTROLS["view"]):
                expected = figure_png(
                    render({"sentence": sentence, "layer": str(layer), "view": view})
                )
                assert bytes(shown(explorer, (s, layer, v)).value) == expected


def test_each_control_is_linked_to_every_stack_of_its_level():
    explorer = figure_explorer(CONTROLS, render_counting([]), kinds={"view": "toggle"})
    sentence, layer, view = explorer.children[:3]
    assert isinstance(view, widgets.ToggleButtons) and isinstance(sentence, widgets.Dropdown)
    assert (
        len(links_from(sentence)) == 1
        and len(links_from(layer)) == 3
        and len(links_from(view)) == 6
    )
    root = explorer.children[-1]
    assert links_from(sentence)[0] == [f"IPY_MODEL_{root.model_id}", "selected_index"]


def test_a_key_shares_images_between_choices_that_look_the_same():
    calls = []
    explorer = figure_explorer(
        CONTROLS,
        render_counting(calls),
        key=lambda c: (c["sentence"], c["view"], c["layer"] if c["view"] == "heat" else None),
    )
    assert len(calls) == 3 * (2 + 1)
    assert shown(explorer, (0, 0, 1)) is shown(explorer, (0, 1, 1))  # the grid ignores the layer
    assert shown(explorer, (0, 0, 0)) is not shown(explorer, (0, 1, 0))


def test_too_many_images_empty_controls_and_unknown_kinds_are_rejected():
    with pytest.raises(
        ValueError, match="12 distinct images would be rendered, more than max_images = 5"
    ):
        figure_explorer(CONTROLS, render_counting([]), max_images=5)
    with pytest.raises(ValueError, match="at least one option"):
        figure_explorer({"a": []}, render_counting([]))
    with pytest.raises(ValueError, match="kinds names controls that do not exist"):
        figure_explorer(CONTROLS, render_counting([]), kinds={"colour": "toggle"})


def test_a_palette_png_is_smaller_and_keeps_the_size_in_pixels():
    import io

    from PIL import Image

    from attnbook.viz.widgets import figure_png

    def fig():
        f, ax = plt.subplots(figsize=(3, 2))
        ax.imshow([[0, 0.3], [0.6, 1.0]], cmap="Blues")
        ax.set_title("weights")
        return f

    full, small = figure_png(fig()), figure_png(fig(), colors=32)
    assert len(small) < len(full)
    assert Image.open(io.BytesIO(small)).size == Image.open(io.BytesIO(full)).size
    assert Image.open(io.BytesIO(small)).mode == "P"


def test_figure_switcher_links_control_to_stack_in_the_browser():
    view = figure_switcher(
        {
            "one": lambda: viz.bars(torch.ones(2), ["a", "b"]),
            "two": lambda: viz.bars(torch.zeros(2), ["a", "b"]),
        },
        description="pick",
    )
    control, stack = view.children
    assert isinstance(stack, widgets.Stack) and len(stack.children) == 2
    assert all(
        isinstance(c, widgets.Image) and bytes(c.value).startswith(b"\x89PNG")
        for c in stack.children
    )
    assert bytes(stack.children[0].value) != bytes(stack.children[1].value)
    # The link is a widget model of its own: what the static site's widget manager sees.
    models = widgets.Widget.get_manager_state(drop_defaults=False)["state"].values()
    links = [
        m["state"]
        for m in models
        if m["model_name"] == "LinkModel"
        and m["state"]["source"] == [f"IPY_MODEL_{control.model_id}", "index"]
    ]
    assert links and links[-1]["target"] == [f"IPY_MODEL_{stack.model_id}", "selected_index"]


@pytest.mark.parametrize(
    "kind, cls",
    [
        ("dropdown", widgets.Dropdown),
        ("toggle", widgets.ToggleButtons),
        ("slider", widgets.SelectionSlider),
    ],
)
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
