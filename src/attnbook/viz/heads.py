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

from attnbook.viz import heatmap

__all__ = ["head_heatmap", "head_grid", "attention_lines", "HEAD_COLORS"]

#: One colour per head (tab10), shared by every view so that a head keeps its colour.
HEAD_COLORS = [plt.get_cmap("tab10")(i) for i in range(10)]


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


def _box_row(ax: Axes, row: int, width: int, color: str = "tab:red") -> None:
    ax.add_patch(Rectangle((-0.5, row - 0.5), width, 1, fill=False, edgecolor=color, linewidth=2))


def head_heatmap(
    weights: torch.Tensor,
    tokens: Sequence[str],
    *,
    query: int | None = None,
    title: str = "",
    ax: Axes | None = None,
    colorbar: bool = True,
) -> Figure:
    """One head's (L, L) self-attention weights with token labels; ``query``'s row is boxed."""
    w = torch.as_tensor(weights).detach().float().cpu()
    if w.dim() != 2:
        raise ValueError(f"weights must be one head's (L, S) matrix; got shape {tuple(w.shape)}")
    _check_labels(tokens, *w.shape)
    if query is not None and not 0 <= query < w.shape[0]:
        raise ValueError(f"query must be a position in [0, {w.shape[0]}); got {query}")
    if ax is None:
        size = 0.25 * len(tokens) + 1.6
        fig, ax = plt.subplots(figsize=(size + 0.9, size))
    fig = heatmap(w, list(tokens), list(tokens), title=title, ax=ax, annotate=False)
    if not colorbar:
        fig.axes[-1].remove()
    ax.tick_params(axis="both", labelsize=7)
    ax.tick_params(axis="x", labelrotation=90)
    if query is not None:
        _box_row(ax, query, w.shape[1])
        ax.get_yticklabels()[query].set_color("tab:red")
    return fig


def head_grid(
    weights: Sequence[torch.Tensor] | torch.Tensor,
    tokens: Sequence[str],
    *,
    example: int = 0,
    query: int | None = None,
    title: str = "",
    cell: float = 2.3,
) -> Figure:
    """Every head of every layer for one sentence: a grid with one row per layer.

    Args:
        weights: one (N, H, L, S) tensor per layer (or a (layers, N, H, L, S) tensor).
        tokens: the sentence's L tokens (self-attention: L = S).
        example: which sentence n of the batch to draw.
        query: a position whose row is boxed in every panel.
        title: the figure's title.
        cell: size of one panel in inches.
    """
    layers = _layers(weights)
    N, H, L, S = layers[0].shape
    if not 0 <= example < N:
        raise ValueError(f"example must be in [0, N) = [0, {N}); got {example}")
    _check_labels(tokens, L, S)
    fig, axes = plt.subplots(
        len(layers), H, figsize=(cell * H + 1.2, cell * len(layers) + 0.9), squeeze=False
    )
    small = max(4, min(7, int(90 / L)))
    for layer, w in enumerate(layers):
        for head in range(H):
            ax = axes[layer, head]
            image = ax.imshow(w[example, head].numpy(), cmap="Blues", vmin=0, vmax=1)
            ax.set_xticks(
                range(S),
                labels=list(tokens) if layer == len(layers) - 1 else [""] * S,
                fontsize=small,
                rotation=90,
            )
            ax.set_yticks(range(L), labels=list(tokens) if head == 0 else [""] * L, fontsize=small)
            ax.set_title(f"layer {layer}, head {head}", fontsize=8, color=HEAD_COLORS[head % 10])
            if query is not None:
                _box_row(ax, query, S)
    fig.supxlabel("key (attended to)", fontsize=9)
    fig.supylabel("query (attending)", fontsize=9)
    fig.suptitle(title or "Every head of every layer")
    fig.tight_layout()
    fig.colorbar(image, ax=axes, fraction=0.02, pad=0.02, label="weight")
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
) -> Figure:
    """A line view in the style of bertviz (Vig, 2019): tokens in two columns, a line from query
    i (left) to key j (right) as opaque as the weight, one colour per head.

    Args:
        weights: (H, L, S) weights of one layer for one sentence.
        tokens: the L tokens (L = S).
        heads: which heads to draw (default: all).
        query: draw only this query's lines strongly; the others faintly.
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
    if ax is None:
        fig, ax = plt.subplots(figsize=(4.2, 0.24 * L + 1.2))
    else:
        fig = ax.figure
    for i, token in enumerate(tokens):
        strong = query is None or i == query
        ax.text(
            -0.02,
            -i,
            token,
            ha="right",
            va="center",
            fontsize=8,
            color="tab:red" if query == i else ("black" if strong else "gray"),
        )
        ax.text(1.02, -i, token, ha="left", va="center", fontsize=8)
    for h in heads:
        color = HEAD_COLORS[h % 10]
        for i in range(L):
            faint = query is not None and i != query
            for j in range(S):
                value = float(w[h, i, j])
                if value < threshold:
                    continue
                alpha = min(1.0, value) * (0.08 if faint else 0.9)
                ax.plot([0, 1], [-i, -j], color=color, alpha=alpha, linewidth=0.6 + 2.2 * value)
    for h in heads:
        ax.plot([], [], color=HEAD_COLORS[h % 10], linewidth=2, label=f"head {h}")
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(heads), fontsize=7, frameon=False
    )
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(-L + 0.4, 0.8)
    ax.set_xticks([0, 1], labels=["query (attending)", "key (attended to)"], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([])
    for side in ("left", "right", "bottom", "top"):
        ax.spines[side].set_visible(False)
    ax.set_title(title, fontsize=9, pad=18)
    return fig
