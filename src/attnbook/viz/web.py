"""Views as plain HTML: they switch and respond in the browser with no kernel and no widget manager.

A view is one ``text/html`` output: a ``<div class="attnbook-view">`` holding its data as JSON,
its controls as real HTML (``<select>``, buttons, a range input, each with a label), an inline
style and an inline script. myst-nb writes such an output into the static page as it is, and
JupyterLab runs it once the output is trusted (after the reader runs the cell), so the same
view works on the site, offline, and in a notebook. The script defines its behaviour once per
page (``window.attnbookViews1``) and then initialises the views next to it.

* :func:`figure_switcher` and :func:`figure_explorer` switch between pre-rendered figures;
* :mod:`attnbook.viz.attention_view` draws attention from its weights, in the browser.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
from base64 import b64encode
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Literal

from matplotlib.figure import Figure

from attnbook.i18n import tr

__all__ = [
    "HTMLView",
    "figure_switcher",
    "figure_explorer",
    "view_html",
    "element_id",
    "asset",
]

Control = Literal["dropdown", "toggle", "slider"]

_ids = itertools.count()


class HTMLView:
    """What a cell returns: HTML for the page and notebook, one line of text for everything else.

    Attributes:
        html: the whole view, self-contained (data, style, script).
        text: a one-line summary, e.g. ``"attention view: 4 sentences, 2 layers x 2 heads"``.
    """

    def __init__(self, html: str, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict[str, str]:
        return {"text/html": self.html, "text/plain": self.text}

    def __repr__(self) -> str:
        return f"<HTMLView: {self.text}>"


@cache
def asset(name: str) -> str:
    """The text of a file in ``attnbook/viz/static`` (``attnview.js`` or ``attnview.css``)."""
    return (files("attnbook.viz") / "static" / name).read_text(encoding="utf-8")


def element_id(*structure: object) -> str:
    """An id for the elements of one view, unique on a page and the same on every fresh run.

    A counter (views are made in the order the notebook runs) and a short hash of what the view
    shows (so two notebooks open in one JupyterLab do not clash).
    """
    digest = hashlib.sha1(repr(structure).encode("utf-8")).hexdigest()[:6]
    return f"attnbook-{next(_ids)}-{digest}"


def view_html(kind: str, data: dict, body: str) -> str:
    """Wrap ``body`` into a self-contained view: data, style, body, script (in this order)."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return (
        f'<div class="attnbook-view mathjax_ignore tex2jax_ignore" data-kind="{kind}">'
        f'<style class="attnbook-css">{asset("attnview.css")}</style>'
        f'<script type="application/json" class="attnbook-data">{payload}</script>'
        f"{body}"
        f'<script class="attnbook-js">{asset("attnview.js")}</script>'
        "</div>"
    )


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _control_html(kind: Control, name: str, labels: Sequence[str], index: int, uid: str) -> str:
    """One labelled control; ``data-control`` is its position among the view's controls."""
    text = name or tr("figure")  # the current language (attnbook.i18n)
    hidden = "" if name else ' class="attnbook-sr"'
    cid = f"{uid}-c{index}"
    if kind == "dropdown":
        options = "".join(f"<option>{_esc(label)}</option>" for label in labels)
        return (
            f'<div class="attnbook-control"><label for="{cid}"{hidden}>{_esc(text)}</label>'
            f'<select id="{cid}" data-control="{index}">{options}</select></div>'
        )
    if kind == "toggle":
        buttons = "".join(
            f'<button type="button" data-index="{i}" aria-pressed="{str(i == 0).lower()}">'
            f"{_esc(label)}</button>"
            for i, label in enumerate(labels)
        )
        return (
            f'<fieldset class="attnbook-control attnbook-buttons" data-control="{index}">'
            f"<legend{hidden}>{_esc(text)}</legend>{buttons}</fieldset>"
        )
    if kind == "slider":
        first = _esc(labels[0])
        return (
            f'<div class="attnbook-control"><label for="{cid}"{hidden}>{_esc(text)}</label>'
            f'<input type="range" id="{cid}" data-control="{index}" min="0" '
            f'max="{len(labels) - 1}" step="1" value="0" aria-valuetext="{first}">'
            f'<output for="{cid}">{first}</output></div>'
        )
    raise ValueError(f"control must be 'dropdown', 'toggle' or 'slider'; got {kind!r}")


def _image_html(fig: Figure, index: int) -> str:
    """One figure as an ``<img>`` at its size in CSS pixels (rendered at 2 image px per CSS px)."""
    from attnbook.viz.style import render_png  # the book's one figure style

    image = render_png(fig)
    src = "data:image/png;base64," + b64encode(image.png).decode("ascii")
    return (
        f'<img class="attnbook-figure" data-image="{index}" src="{src}" alt="{_esc(image.alt)}" '
        f'width="{image.width}" height="{image.height}" style="max-width:100%;height:auto"'
        f"{'' if index == 0 else ' hidden'}>"
    )


def figure_switcher(
    figures: Mapping[str, Figure] | Mapping[str, Callable[[], Figure]],
    *,
    description: str = "",
    control: Control = "dropdown",
) -> HTMLView:
    """One control and the pre-rendered figure for each of its options.

    Args:
        figures: option label -> a figure, or a function that makes one (called once, here).
        description: the control's label (``""``: labelled "figure" for screen readers only).
        control: ``"dropdown"``, ``"toggle"`` or ``"slider"``.
    """
    if not figures:
        raise ValueError("figure_switcher needs at least one figure")
    figs = {label: fig for label, fig in figures.items()}
    return figure_explorer(
        {description: list(figs)},
        lambda choice: _made(figs[choice[description]]),
        kinds={description: control},
    )


def _made(fig: Figure | Callable[[], Figure]) -> Figure:
    return fig() if callable(fig) else fig


def figure_explorer(
    controls: Mapping[str, Sequence[str]],
    render: Callable[[dict[str, str]], Figure],
    *,
    kinds: Mapping[str, Control] | None = None,
    key: Callable[[dict[str, str]], object] | None = None,
    max_images: int = 48,
) -> HTMLView:
    """Several controls (sentence, layer, head, view, ...) and a pre-rendered figure for every
    combination of their options, switching in the browser without a kernel.

    A figure that does not depend on some control (a grid of all heads does not depend on
    "head") is rendered once when ``key`` says so: choices with equal keys share one image.

    Args:
        controls: control description -> its option labels, outermost first.
        render: ``render(choice) -> Figure``, where ``choice`` maps each description to the
            chosen label.
        kinds: control description -> ``"dropdown"`` (default), ``"toggle"`` or ``"slider"``.
        key: ``key(choice)`` -> a hashable; default: every combination gets its own image.
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
    distinct: dict[object, int] = {}  # key -> image number, in order of first use
    first_choice: list[dict[str, str]] = []
    images = []  # image number of every combination, the last control varying fastest
    for labels in itertools.product(*options):
        choice = dict(zip(names, labels))
        k = key(choice)
        if k not in distinct:
            distinct[k] = len(distinct)
            first_choice.append(choice)
        images.append(distinct[k])
    if len(distinct) > max_images:
        raise ValueError(
            f"{len(distinct)} distinct images would be rendered, more than max_images = "
            f"{max_images}; use fewer options or a key that shares images"
        )
    uid = element_id("figures", names, options)
    body = "".join(
        _control_html(kinds.get(name, "dropdown"), name, options[i], i, uid)
        for i, name in enumerate(names)
    )
    pictures = "".join(_image_html(render(choice), n) for n, choice in enumerate(first_choice))
    data = {
        "controls": [{"name": n, "options": o} for n, o in zip(names, options)],
        "images": images,
    }
    summary = ", ".join(f"{name or 'figure'} ({len(o)})" for name, o in zip(names, options))
    return HTMLView(
        view_html("figures", data, f'{body}<div class="attnbook-figures">{pictures}</div>'),
        f"figure view: {len(distinct)} images; {summary}",
    )
