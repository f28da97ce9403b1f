"""Pure plotting functions: tensors in, a matplotlib figure out.

Nothing here touches widgets or global state (beyond matplotlib's own figure registry), so the
chapters, the widgets that wrap these functions, and the tests all call the same code.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def _as_2d(weights: torch.Tensor, name: str) -> torch.Tensor:
    weights = torch.as_tensor(weights).detach().float().cpu()
    if weights.dim() != 2:
        raise ValueError(f"{name} must be a 2-D (L, S) tensor; got shape {tuple(weights.shape)}")
    return weights


def _matrix_axes(
    ax: Axes | None, L: int, S: int, x_labels: Sequence[str] | None, y_labels: Sequence[str] | None
) -> tuple[Figure, Axes]:
    """Check the labels of an (L, S) matrix plot and return its figure and labelled axes."""
    if x_labels is not None and len(x_labels) != S:
        raise ValueError(f"x_labels has {len(x_labels)} labels for {S} key positions")
    if y_labels is not None and len(y_labels) != L:
        raise ValueError(f"y_labels has {len(y_labels)} labels for {L} query positions")
    if ax is None:
        fig, ax = plt.subplots(figsize=(0.55 * S + 1.8, 0.45 * L + 1.4))
    else:
        fig = ax.figure
    ax.set_xticks(range(S), labels=list(x_labels) if x_labels is not None else range(S))
    ax.set_yticks(range(L), labels=list(y_labels) if y_labels is not None else range(L))
    ax.tick_params(axis="x", labelrotation=0 if S <= 12 else 90)
    return fig, ax


def heatmap(
    weights: torch.Tensor,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    *,
    title: str = "",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    ax: Axes | None = None,
    annotate: bool = True,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = "Blues",
    colorbar_label: str = "weight",
) -> Figure:
    """Draw one attention matrix of shape (L, S) with token labels; rows are queries.

    Pass ``ax`` to draw into an existing grid; otherwise a new figure is made. Returns the figure.
    ``vmin``/``vmax`` fix the colour range (weights: 0 to 1); None takes it from the data.
    """
    w = _as_2d(weights, "weights")
    L, S = w.shape
    fig, ax = _matrix_axes(ax, L, S, x_labels, y_labels)
    image = ax.imshow(w.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if annotate and L * S <= 150:
        low, high = image.get_clim()
        for i in range(L):
            for j in range(S):
                value = float(w[i, j])
                strong = (
                    abs(value - (low + high) / 2) > 0.3 * (high - low)
                    if low < 0
                    else value > low + 0.6 * (high - low)
                )
                ax.text(
                    j,
                    i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if strong else "black",
                )
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=colorbar_label)
    return fig


def bars(
    values: torch.Tensor,
    labels: Sequence[str],
    *,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    ax: Axes | None = None,
    highlight: int | None = None,
    fmt: str = "{:.2f}",
    color: str = "tab:blue",
) -> Figure:
    """A labelled bar chart of a 1-D tensor, one bar per label, each bar annotated with its value."""
    v = torch.as_tensor(values).detach().float().cpu()
    if v.dim() != 1 or v.numel() != len(labels):
        raise ValueError(
            f"values must be 1-D with one entry per label ({len(labels)}); "
            f"got shape {tuple(v.shape)}"
        )
    if ax is None:
        fig, ax = plt.subplots(figsize=(0.6 * len(labels) + 1.5, 2.6))
    else:
        fig = ax.figure
    colors = [color] * len(labels)
    if highlight is not None:
        colors[highlight] = "tab:orange"
    ax.bar(range(len(labels)), v.numpy(), color=colors)
    ax.set_xticks(range(len(labels)), labels=list(labels))
    ax.axhline(0.0, color="black", linewidth=0.6)
    for i, value in enumerate(v.tolist()):
        ax.annotate(
            fmt.format(value),
            (i, value),
            ha="center",
            va="bottom" if value >= 0 else "top",
            fontsize=7,
            xytext=(0, 2 if value >= 0 else -2),
            textcoords="offset points",
        )
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.margins(y=0.18)
    return fig


def attention_steps(
    tokens: Sequence[str],
    query_index: int,
    scores: torch.Tensor,
    weights: torch.Tensor,
    output: torch.Tensor,
    feature_names: Sequence[str],
    *,
    title: str = "",
) -> Figure:
    """One query's attention in three panels: its scores, its weights, and the output it gets.

    ``scores`` and ``weights`` are (S,) for this query; ``output`` is (Ev,) with one name per
    feature. The query's own token is highlighted in the first two panels.
    """
    fig, axes = plt.subplots(
        1,
        3,
        figsize=(12.5, 2.9),
        gridspec_kw={"width_ratios": [len(tokens), len(tokens), len(feature_names)]},
    )
    bars(
        scores,
        tokens,
        ax=axes[0],
        highlight=query_index,
        title="1. scores = q·k",
        xlabel="key token",
        ylabel="score",
    )
    bars(
        weights,
        tokens,
        ax=axes[1],
        highlight=query_index,
        title="2. weights = softmax(scores)",
        xlabel="key token",
        ylabel="weight",
    )
    axes[1].set_ylim(0, 1.05)
    bars(
        output,
        feature_names,
        ax=axes[2],
        color="tab:green",
        title="3. output = Σ weight · v",
        xlabel="feature",
        ylabel="value",
    )
    axes[2].tick_params(axis="x", labelrotation=30)
    fig.suptitle(title or f"query: {tokens[query_index]!r}")
    fig.tight_layout()
    return fig


def mask_image(
    mask: torch.Tensor,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    *,
    title: str = "",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    ax: Axes | None = None,
) -> Figure:
    """Draw a boolean (L, S) mask in the SDPA convention: ``True`` = may attend.

    Allowed cells are dark with a tick, forbidden cells light with a cross, so the picture reads
    the same in colour and in grey. Pass ``ax`` to draw into an existing grid.
    """
    m = torch.as_tensor(mask).detach().cpu()
    if m.dtype != torch.bool or m.dim() != 2:
        raise ValueError(
            f"mask must be a 2-D bool (L, S) tensor; got {m.dtype} of shape {tuple(m.shape)}"
        )
    L, S = m.shape
    fig, ax = _matrix_axes(ax, L, S, x_labels, y_labels)
    ax.imshow(m.float().numpy(), cmap="Greens", vmin=-0.25, vmax=1.25, aspect="auto")
    if L * S <= 400:
        for i in range(L):
            for j in range(S):
                allowed = bool(m[i, j])
                ax.text(
                    j,
                    i,
                    "✓" if allowed else "×",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if allowed else "dimgray",
                )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return fig
