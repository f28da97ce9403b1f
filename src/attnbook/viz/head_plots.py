"""Pictures of many heads at once: a layers × heads grid, a line view, a highlighted heat-map.

Pure plotting functions, like :mod:`attnbook.viz`: tensors in, a matplotlib figure out.

Attention weights of a whole model come as a list with one tensor per layer, each
``(N, H, L, S)`` — batch, head, query, key — as :class:`attnbook.transformer.Encoder` returns
them. One head of one sentence is ``weights[layer][n, head]``, an (L, S) matrix. (A common slip,
made in one of the sources of this book, is ``weights[n, layer]`` on a single ``(N, H, L, S)``
tensor: that picks a *head*, not a layer.)

Shape legend: N batch, H heads, L queries, S keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnbook.i18n import tr
from attnbook.viz.charts import heatmap
from attnbook.viz.layout import (
    MAX_WIDTH,
    OKABE_ITO,
    describe,
    fit_tick_labels,
    font_px,
    settle,
    text_px,
    wrap,
)

__all__ = ["head_heatmap", "head_grid", "attention_lines", "HEAD_COLORS", "QUERY_COLOR"]

#: One colour per head, shared by every view so that a head keeps its colour. The Okabe–Ito
#: palette, with yellow last because it is faint on white.
HEAD_COLORS = [
    OKABE_ITO[name]
    for name in (
        "blue",
        "vermilion",
        "bluish green",
        "reddish purple",
        "orange",
        "sky blue",
        "black",
        "yellow",
    )  # fmt: skip
]
#: The colour of the chosen query. Its row is also boxed, never marked by colour alone.
QUERY_COLOR = OKABE_ITO["vermilion"]


def _layers(weights: Sequence[torch.Tensor] | torch.Tensor) -> list[torch.Tensor]:
    """Check a per-layer list of (N, H, L, S) weights (or one (layers, N, H, L, S) tensor)."""
    if isinstance(weights, torch.Tensor):
        if weights.dim() != 5:
            raise ValueError(
                "weights must be a list with one (N, H, L, S) tensor per layer, or a (layers, N, H, "
                f"L, S) tensor; got one tensor of shape {tuple(weights.shape)}. One head of one "
                "sentence is weights[layer][n, head]"
            )
        weights = list(weights)
    layers = [torch.as_tensor(w).detach().float().cpu() for w in weights]
    if not layers:
        raise ValueError("weights is empty: expected one (N, H, L, S) tensor per layer")
    for i, w in enumerate(layers):
        if w.dim() != 4 or w.shape[1:] != layers[0].shape[1:] or w.shape[0] != layers[0].shape[0]:
            raise ValueError(
                f"every layer's weights must be (N, H, L, S) with the same shape; layer 0 is "
                f"{tuple(layers[0].shape)}, layer {i} is {tuple(w.shape)}"
            )
    return layers


def _check_labels(tokens: Sequence[str], L: int, S: int) -> None:
    if len(tokens) != L or L != S:
        raise ValueError(
            f"tokens has {len(tokens)} labels for self-attention weights of shape (L, S) = ({L}, {S})"
        )


def _box_row(ax: Axes, row: int, width: int, color: str = QUERY_COLOR) -> None:
    ax.add_patch(Rectangle((-0.5, row - 0.5), width, 1, fill=False, edgecolor=color, linewidth=2))


def _mark_query_label(ax: Axes, query: int) -> None:
    label = ax.get_yticklabels()[query]
    label.set_color(QUERY_COLOR)


def _peak(w: torch.Tensor, tokens: Sequence[str], i: int) -> str:
    j = int(w[i].argmax())
    return f"the row of ‘{tokens[i]}’ (position {i}) peaks at ‘{tokens[j]}’ ({float(w[i, j]):.2f})"


def head_heatmap(
    weights: torch.Tensor,
    tokens: Sequence[str],
    *,
    query: int | None = None,
    title: str = "",
    ax: Axes | None = None,
    colorbar: bool = True,
    lang: str | None = None,
) -> Figure:
    """One head's (L, L) self-attention weights with token labels; ``query``'s row is boxed.

    The query's label is coloured and always shown, even where other labels are thinned to stay
    readable. The alt text says where the query's row (or, without a query, each row) peaks.
    """
    w = torch.as_tensor(weights).detach().float().cpu()
    if w.dim() != 2:
        raise ValueError(f"weights must be one head's (L, S) matrix; got shape {tuple(w.shape)}")
    _check_labels(tokens, *w.shape)
    if query is not None and not 0 <= query < w.shape[0]:
        raise ValueError(f"query must be a position in [0, {w.shape[0]}); got {query}")
    created = ax is None
    L = len(tokens)
    if created:
        side = max(0.12, min(0.3, 4.6 / L))
        height = side * L + 1.9
        fig, ax = plt.subplots(figsize=(min(MAX_WIDTH, height + 1.2), height), layout="constrained")
    fig = heatmap(w, list(tokens), list(tokens), title=title, ax=ax, annotate=False, lang=lang)
    if not colorbar:
        fig.axes[-1].remove()
    settle(fig)
    keep = [] if query is None else [query]
    fit_tick_labels(ax, "x", list(tokens), keep=keep)
    fit_tick_labels(ax, "y", list(tokens), keep=keep)
    ax.tick_params(axis="x", labelrotation=90)
    where = (
        _peak(w, tokens, query) + " (boxed)"
        if query is not None
        else "each row's largest weight: "
        + ", ".join(f"{tokens[i]}→{tokens[int(w[i].argmax())]}" for i in range(min(L, 12)))
        + (", …" if L > 12 else "")
    )
    describe(
        ax,
        created,
        f"Heat-map of one head's {L}×{L} attention weights"
        + (f" ‘{title}’" if title else "")
        + f" (rows: query token, columns: key token) over ‘{' '.join(tokens)}’"[:400]
        + f"; {where}.",
    )
    if query is not None:
        _box_row(ax, query, w.shape[1])
        _mark_query_label(ax, query)
    return fig


def head_grid(
    weights: Sequence[torch.Tensor] | torch.Tensor,
    tokens: Sequence[str],
    *,
    example: int = 0,
    query: int | None = None,
    title: str = "",
    cell: float = 2.3,
    lang: str | None = None,
) -> Figure:
    """Every head of every layer for one sentence: a grid with one row per layer.

    The grid fits the book's text column: with many heads, panels are narrower than ``cell`` and
    tick labels are thinned (the query's label is always kept), never shrunk. Token
    labels are on the left column and bottom row only.

    Args:
        weights: one (N, H, L, S) tensor per layer (or a (layers, N, H, L, S) tensor).
        tokens: the sentence's L tokens (self-attention: L = S).
        example: which sentence n of the batch to draw.
        query: a position whose row is boxed in every panel.
        title: the figure's title.
        cell: the preferred size of one panel in inches (at most what fits the text column).
    """
    layers = _layers(weights)
    N, H, L, S = layers[0].shape
    if not 0 <= example < N:
        raise ValueError(f"example must be in [0, N) = [0, {N}); got {example}")
    _check_labels(tokens, L, S)
    label_px = max(text_px(t) for t in tokens) + 2.2 * font_px()  # y labels and the supylabel
    width = min(cell, (MAX_WIDTH - label_px / 100 - 0.9) / H)
    height = min(max(width, 0.17 * L), 1.6 * width, 4.0)
    fig, axes = plt.subplots(
        len(layers),
        H,
        figsize=(MAX_WIDTH if width < cell else width * H + label_px / 100 + 0.9,
                 height * len(layers) + 1.3 + label_px / 100),
        squeeze=False,
        layout="constrained",
    )  # fmt: skip
    panel = tr("layer {layer}, head {head}", lang)
    full_titles = text_px(panel.format(layer=0, head=0), "axes.titlesize") <= width * 100
    for layer, w in enumerate(layers):
        for head in range(H):
            ax = axes[layer, head]
            image = ax.imshow(w[example, head].numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
            ax.set_title(panel.format(layer=layer, head=head) if full_titles else f"{layer}.{head}")
            if query is not None:
                _box_row(ax, query, S)
    fig.supxlabel(tr("key (attended to)", lang))
    fig.supylabel(tr("query (attending)", lang))
    note = "" if full_titles else tr(" (panel l.h: layer l, head h)", lang)
    fig.suptitle(
        wrap(
            (tr(title, lang) or tr("Every head of every layer", lang)) + note,
            MAX_WIDTH * 100,
            "figure.titlesize",
        )
    )
    fig.colorbar(image, ax=axes, fraction=0.04, pad=0.02, label=tr("weight", lang))
    settle(fig)
    keep = [] if query is None else [query]
    for (layer, head), ax in zip([(i, j) for i in range(len(layers)) for j in range(H)], axes.flat):
        fit_tick_labels(ax, "x", tokens if layer == len(layers) - 1 else [""] * S, keep=keep)
        fit_tick_labels(ax, "y", tokens if head == 0 else [""] * L, keep=keep)
        ax.tick_params(axis="x", labelrotation=90)
        if query is not None and head == 0:
            _mark_query_label(ax, query)
    if query is not None:
        peaks = "; ".join(
            f"layer {layer} head {head}: {tokens[int(w[example, head, query].argmax())]} "
            f"{float(w[example, head, query].max()):.2f}"
            for layer, w in enumerate(layers)
            for head in range(H)
        )
        found = f" The row of ‘{tokens[query]}’ (boxed) peaks at — {peaks}."
    else:
        found = ""
    text = (
        f"Grid of {len(layers)}×{H} heat-maps (rows: layer, columns: head), each the {L}×{L} "
        f"attention weights of one head{(' ‘' + title + '’') if title else ''}.{found}"
    )
    describe(fig, True, text if len(text) <= 600 else text[:598] + "…")
    return fig


def attention_lines(
    weights: torch.Tensor,
    tokens: Sequence[str],
    *,
    heads: Sequence[int] | None = None,
    query: int | None = None,
    title: str = "",
    ax: Axes | None = None,
    threshold: float = 0.02,
    lang: str | None = None,
) -> Figure:
    """A line view in the style of bertviz (Vig, 2019): tokens in two columns, a line from query
    i (left) to key j (right) as opaque as the weight, one colour per head.

    Args:
        weights: (H, L, S) weights of one layer for one sentence.
        tokens: the L tokens (L = S).
        heads: which heads to draw (default: all).
        query: draw only this query's lines strongly (its token in colour); the others faintly.
        title: the axes title.
        ax: draw into this axes.
        threshold: weights below this are not drawn.
    """
    w = torch.as_tensor(weights).detach().float().cpu()
    if w.dim() != 3:
        raise ValueError(
            f"weights must be one layer's (H, L, S) weights for one sentence; got shape {tuple(w.shape)}"
        )
    H, L, S = w.shape
    _check_labels(tokens, L, S)
    heads = list(range(H)) if heads is None else list(heads)
    if any(not 0 <= h < H for h in heads):
        raise ValueError(f"heads must be in [0, {H}); got {heads}")
    if query is not None and not 0 <= query < L:
        raise ValueError(f"query must be a position in [0, {L}); got {query}")
    created = ax is None
    if created:
        fig, ax = plt.subplots(figsize=(4.6, 0.24 * L + 1.4), layout="constrained")
    fig = ax.figure
    for i, token in enumerate(tokens):
        strong = query is None or i == query
        ax.text(-0.02, -i, token, ha="right", va="center",
                color=QUERY_COLOR if query == i else ("black" if strong else "dimgray"))  # fmt: skip
        ax.text(1.02, -i, token, ha="left", va="center")
    for h in heads:
        color = HEAD_COLORS[h % len(HEAD_COLORS)]
        for i in range(L):
            faint = query is not None and i != query
            for j in range(S):
                value = float(w[h, i, j])
                if value < threshold:
                    continue
                alpha = min(1.0, value) * (0.08 if faint else 0.9)
                ax.plot([0, 1], [-i, -j], color=color, alpha=alpha, linewidth=0.6 + 2.2 * value)
    for h in heads:
        ax.plot(
            [],
            [],
            color=HEAD_COLORS[h % len(HEAD_COLORS)],
            linewidth=2,
            label=tr("head {h}", lang).format(h=h),
        )
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(heads), 4),
              frameon=False)  # fmt: skip
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(-L + 0.4, 0.8)
    ax.set_xticks([0, 1], labels=[tr("query", lang), tr("key", lang)])
    ax.xaxis.tick_top()
    ax.set_yticks([])
    for side in ("left", "right", "bottom", "top"):
        ax.spines[side].set_visible(False)
    ax.set_title(tr(title, lang), pad=8)
    rows = [query] if query is not None else range(L)
    strongest = []
    for h in heads:
        pairs = sorted(((float(w[h, i, j]), i, j) for i in rows for j in range(S)), reverse=True)
        listed = ", ".join(f"{tokens[i]}→{tokens[j]} {v:.2f}" for v, i, j in pairs[:3])
        strongest.append(f"head {h}: {listed}")
    about = (
        f"the lines of ‘{tokens[query]}’ (drawn strongly, the others faint)"
        if query is not None
        else "every token's lines"
    )
    text = (
        f"Line view{(' ‘' + title + '’') if title else ''}: the {L} tokens in two columns, "
        f"queries left and keys right, a line per weight above {threshold:g}, as opaque as the "
        f"weight, one colour per head; {about}. Strongest lines — " + "; ".join(strongest) + "."
    )
    describe(ax, created, text if len(text) <= 600 else text[:598] + "…")
    return fig
