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


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """Render ``fig`` to PNG bytes at a modest resolution and close it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def image_stack(pngs: Sequence[bytes]) -> widgets.Stack:
    """A ``Stack`` that shows one of the given PNG images at a time (the first initially)."""
    if not pngs:
        raise ValueError("image_stack needs at least one image")
    images = [widgets.Image(value=png, format="png", layout=widgets.Layout(max_width="100%"))
              for png in pngs]
    return widgets.Stack(children=images, selected_index=0)


def _control(kind: Control, labels: list[str], description: str) -> widgets.Widget:
    common = dict(options=labels, index=0, description=description,
                  style={"description_width": "initial"})
    if kind == "dropdown":
        return widgets.Dropdown(**common)
    if kind == "toggle":
        return widgets.ToggleButtons(**common)
    if kind == "slider":
        return widgets.SelectionSlider(**common, continuous_update=True,
                                       layout=widgets.Layout(width="28em"))
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
