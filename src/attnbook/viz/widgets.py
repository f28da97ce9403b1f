"""Views that switch between pre-rendered figures, with or without a kernel.

A control (dropdown, toggle buttons or slider) is linked *in the browser* (``jslink``) to the
``selected_index`` of a ``Stack`` of images. The link lives in the widget state that the notebook
stores, so on the static site — no kernel, no CDN — choosing an option still changes the figure;
in JupyterLab the same view works unchanged. The figures come from the pure plotting functions
in :mod:`attnbook.viz`; this module only wraps them.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import ipywidgets as widgets
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

Control = Literal["dropdown", "toggle", "slider"]


def figure_png(fig: Figure, dpi: int = 80, colors: int | None = None) -> bytes:
    """Render ``fig`` to PNG bytes at a modest resolution and close it.

    ``colors`` (e.g. 64) reduces the image to a palette of that many colours: for plots, about a
    third of the bytes with no visible loss except slight banding in smooth colour bars.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    if colors is None:
        return buffer.getvalue()
    from PIL import Image

    buffer.seek(0)
    image = (
        Image.open(buffer).convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
    )
    small = io.BytesIO()
    image.save(small, format="png", optimize=True)
    return small.getvalue()


def image_stack(pngs: Sequence[bytes]) -> widgets.Stack:
    """A ``Stack`` that shows one of the given PNG images at a time (the first initially)."""
    if not pngs:
        raise ValueError("image_stack needs at least one image")
    images = [
        widgets.Image(value=png, format="png", layout=widgets.Layout(max_width="100%"))
        for png in pngs
    ]
    return widgets.Stack(children=images, selected_index=0)


def _control(kind: Control, labels: list[str], description: str) -> widgets.Widget:
    common = dict(
        options=labels, index=0, description=description, style={"description_width": "initial"}
    )
    if kind == "dropdown":
        return widgets.Dropdown(**common)
    if kind == "toggle":
        return widgets.ToggleButtons(**common)
    if kind == "slider":
        return widgets.SelectionSlider(
            **common, continuous_update=True, layout=widgets.Layout(width="28em")
        )
    raise ValueError(f"control must be 'dropdown', 'toggle' or 'slider'; got {kind!r}")


def figure_switcher(
    figures: Mapping[str, Figure] | Mapping[str, Callable[[], Figure]],
    *,
    description: str = "",
    control: Control = "dropdown",
    dpi: int = 80,
) -> widgets.VBox:
    """One control and the pre-rendered figure for each of its options.

    ``figures`` maps an option label to a figure (or to a function that makes one; it is called
    once, here). The control's ``index`` is ``jslink``-ed to the stack's ``selected_index``, so
    the view switches in the browser without a kernel.
    """
    labels = list(figures)
    if not labels:
        raise ValueError("figure_switcher needs at least one figure")
    pngs = []
    for label in labels:
        fig = figures[label]
        pngs.append(figure_png(fig() if callable(fig) else fig, dpi=dpi))
    stack = image_stack(pngs)
    chooser = _control(control, labels, description)
    widgets.jslink((chooser, "index"), (stack, "selected_index"))
    return widgets.VBox([chooser, stack])


def figure_explorer(
    controls: Mapping[str, Sequence[str]],
    render: Callable[[dict[str, str]], Figure],
    *,
    kinds: Mapping[str, Control] | None = None,
    key: Callable[[dict[str, str]], object] | None = None,
    dpi: int = 80,
    colors: int | None = None,
    max_images: int = 48,
) -> widgets.VBox:
    """Several controls (sentence, layer, head, view, ...) and a pre-rendered figure for every
    combination of their options, switching in the browser without a kernel.

    The figures sit in nested ``Stack``s, one level per control, outermost first; each control's
    ``index`` is ``jslink``-ed to the ``selected_index`` of every stack at its level. A figure
    that does not depend on some control (a grid of all heads does not depend on "head") is
    rendered once when ``key`` says so: choices with equal keys share one image.

    Args:
        controls: control description -> its option labels, outermost first.
        render: ``render(choice) -> Figure``, where ``choice`` maps each description to the
            chosen label.
        kinds: control description -> ``"dropdown"`` (default), ``"toggle"`` or ``"slider"``.
        key: ``key(choice)`` -> a hashable; default: every combination gets its own image.
        dpi: resolution of the PNGs.
        colors: reduce each PNG to a palette of this many colours (see :func:`figure_png`).
        max_images: refuse to render more distinct images than this (notebook size).
    """
    names = list(controls)
    options = [list(controls[name]) for name in names]
    if not names or any(not o for o in options):
        raise ValueError(
            "figure_explorer needs at least one control, each with at least one option"
        )
    kinds = dict(kinds or {})
    unknown = set(kinds) - set(names)
    if unknown:
        raise ValueError(
            f"kinds names controls that do not exist: {sorted(unknown)}; controls are {names}"
        )
    key = key or (lambda choice: tuple(choice.values()))
    keys = {}
    for indices in _product(options):
        choice = {name: options[level][i] for level, (name, i) in enumerate(zip(names, indices))}
        keys.setdefault(key(choice), choice)
    if len(keys) > max_images:
        raise ValueError(
            f"{len(keys)} distinct images would be rendered, more than max_images = "
            f"{max_images}; use fewer options or a key that shares images"
        )
    images = {
        k: widgets.Image(
            value=figure_png(render(choice), dpi=dpi, colors=colors),
            format="png",
            layout=widgets.Layout(max_width="100%"),
        )
        for k, choice in keys.items()
    }
    stacks: list[list[widgets.Stack]] = [[] for _ in names]

    def build(level: int, chosen: tuple[int, ...]) -> widgets.Widget:
        if level == len(names):
            choice = {name: options[lv][i] for lv, (name, i) in enumerate(zip(names, chosen))}
            return images[key(choice)]
        children = [build(level + 1, chosen + (i,)) for i in range(len(options[level]))]
        stack = widgets.Stack(children=children, selected_index=0)
        stacks[level].append(stack)
        return stack

    root = build(0, ())
    choosers = []
    for level, name in enumerate(names):
        chooser = _control(kinds.get(name, "dropdown"), options[level], name)
        for stack in stacks[level]:
            widgets.jslink((chooser, "index"), (stack, "selected_index"))
        choosers.append(chooser)
    return widgets.VBox([*choosers, root])


def _product(options: list[list[str]]) -> list[tuple[int, ...]]:
    """Every combination of option indices, the last control varying fastest."""
    combos: list[tuple[int, ...]] = [()]
    for opts in options:
        combos = [c + (i,) for c in combos for i in range(len(opts))]
    return combos
