"""The head explorer of chapter 7: sentence, layer, head, view and query token.

Two versions:

* :func:`static_explorer` embeds every layer's weights for a few sentences in an HTML view
  (:func:`attnbook.viz.attention_view.attention_views`) that the browser draws, so that it works
  on the static site with no kernel; the pronoun is the query shown first.
* :func:`live_explorer` recomputes on every change with :func:`explorer_figure`, so it needs a
  running kernel: it also takes free text and any query token, and has a heat-map and a grid.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure
from torch import Tensor

from attnbook.i18n import tr
from attnbook.tasks.vocab import Vocabulary, join_tokens, tokenize
from attnbook.viz.attention_view import attention_views
from attnbook.viz.head_plots import attention_lines, head_grid, head_heatmap
from attnbook.viz.style import render_png
from attnbook.viz.web import HTMLView

__all__ = [
    "VIEWS",
    "PRONOUNS",
    "sentence_weights",
    "explorer_figure",
    "static_explorer",
    "live_explorer",
    "kernel_is_live",
]

#: The explorer's three views of one sentence.
VIEWS = ("heat-map", "lines", "grid")
#: The query token the explorer highlights — the first of these in the sentence.
PRONOUNS = ("he", "she", "他", "她")


def sentence_weights(model, vocab: Vocabulary, tokens: Sequence[str]) -> tuple[list[Tensor], int]:
    """Every layer's (H, L, L) weights for one sentence, and the pronoun's position.

    The pronoun is the first of :data:`PRONOUNS` in the sentence (or the last token).
    Raises ``ValueError`` for tokens outside ``vocab``.
    """
    ids = torch.tensor([vocab.encode(tokens)])  # (1, L)
    pronoun = next((i for i, t in enumerate(tokens) if t in PRONOUNS), len(tokens) - 1)
    model.eval()
    with torch.no_grad():
        _, weights = model(
            ids, torch.zeros_like(ids, dtype=torch.bool), torch.tensor([pronoun]), need_weights=True
        )
    return [w[0] for w in weights], pronoun


def explorer_figure(
    weights: Sequence[Tensor],
    tokens: Sequence[str],
    layer: int,
    head: int,
    view: str,
    query: int | None,
    lang: str | None = None,
) -> Figure:
    """One view of one sentence's attention: a head's heat-map, a layer's lines (all heads), or
    the grid of every layer and head."""
    title = join_tokens(tokens)
    if view == "heat-map":
        panel = tr("layer {layer}, head {head}", lang).format(layer=layer, head=head)
        return head_heatmap(
            weights[layer][head], tokens, query=query, title=f"{panel}\n{title}", lang=lang
        )
    if view == "lines":  # every head of the layer, one colour each, as in bertviz
        title = tr("layer {layer}", lang).format(layer=layer)
        return attention_lines(weights[layer], tokens, query=query, title=title, lang=lang)
    if view == "grid":
        return head_grid(
            [w[None] for w in weights], tokens, query=query, title=title, cell=1.9, lang=lang
        )
    raise ValueError(f"view must be one of {VIEWS}; got {view!r}")


def static_explorer(
    model,
    vocab: Vocabulary,
    sentences: Mapping[str, Sequence[str]],
    *,
    lang: str | None = None,
) -> HTMLView:
    """The attention of ``sentences`` (label -> tokens) in every layer and head, as an HTML view
    that the browser draws: point at a token to see where it looks. The pronoun is the query
    shown first. Needs no kernel."""
    views = {}
    for label, tokens in sentences.items():
        weights, pronoun = sentence_weights(model, vocab, tokens)
        views[label] = dict(weights=weights, tokens=list(tokens), query=pronoun)
    return attention_views(views, lang=lang)


def live_explorer(
    model, vocab: Vocabulary, sentences: Sequence[str], *, lang: str | None = None
) -> widgets.VBox:
    """An explorer that recomputes on every change: type any sentence made of known tokens.

    Needs a running kernel; on a static page its controls do nothing (use
    :func:`static_explorer` there).
    """
    config = model.config
    text = widgets.Combobox(
        value=sentences[0],
        options=list(sentences),
        ensure_option=False,
        description=tr("sentence", lang),
        continuous_update=False,
        layout=widgets.Layout(width="44em"),
    )
    layer = widgets.ToggleButtons(
        options=list(range(config.num_layers)), description=tr("layer", lang)
    )
    head = widgets.ToggleButtons(options=list(range(config.nhead)), description=tr("head", lang))
    view = widgets.ToggleButtons(options=list(VIEWS), description=tr("view", lang))
    query = widgets.Dropdown(description=tr("query token", lang))
    message = widgets.HTML()
    image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
    state: dict = {}

    def load_sentence(*_) -> None:
        tokens = tokenize(text.value)
        try:
            weights, pronoun = sentence_weights(model, vocab, tokens)
        except ValueError as error:
            message.value = f"<span style='color:#b00'>{html.escape(str(error))}</span>"
            return
        message.value = ""
        state.update(tokens=tokens, weights=weights)
        query.options = [(f"{i}: {t}", i) for i, t in enumerate(tokens)]
        query.value = pronoun  # triggers redraw

    def redraw(*_) -> None:
        if "tokens" not in state or query.value is None:
            return
        fig = explorer_figure(
            state["weights"],
            state["tokens"],
            layer.value,
            head.value,
            view.value,
            query.value,
            lang,
        )
        shown = render_png(fig)
        image.value = shown.png
        image.width, image.description = str(shown.width), shown.alt

    text.observe(load_sentence, names="value")
    for control in (layer, head, view, query):
        control.observe(redraw, names="value")
    load_sentence()
    redraw()
    return widgets.VBox([text, widgets.HBox([layer, head]), view, query, message, image])


def kernel_is_live() -> bool:
    """True inside a running Jupyter kernel (where widget callbacks can run)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
