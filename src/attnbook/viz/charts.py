"""Pure plotting functions: tensors in, a matplotlib figure out, with alt text from the data.

Nothing here touches widgets or global state (beyond matplotlib's own figure registry), so the
chapters, the widgets that wrap these functions, and the tests all call the same code.

Every figure a function creates fits the book's text column
(:data:`~attnbook.viz.style.CONTENT_WIDTH`), so its text is shown at the style's size; no text is set smaller than the
style's sizes. Tick labels are thinned (every k-th, plus the ones that matter) where they would
overlap, and heat-maps print numbers only in cells large enough to hold them. Weights are drawn
in "Blues" (sequential, light to dark: a row's peak is its darkest cell in colour and in grey);
signed data in a diverging map such as "RdBu"; categories in the Okabe–Ito palette
(:data:`~attnbook.viz.layout.OKABE_ITO`), and a highlight is also hatched and outlined, never
told by colour alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnbook.i18n import N_, tr
from attnbook.viz.layout import (
    MAX_WIDTH,
    OKABE_ITO,
    axes_px,
    cells_fit,
    describe,
    fit_tick_labels,
    font_px,
    palette,
    settle,
    text_px,
    wrap,
)
from attnbook.viz.style import CSS_DPI, set_alt

__all__ = ["heatmap", "bars", "attention_steps", "mask_image", "matrix_axes", "label_matrix"]

_MAX_ALT_ROWS = 12


def _as_2d(weights: torch.Tensor, name: str) -> torch.Tensor:
    weights = torch.as_tensor(weights).detach().float().cpu()
    if weights.dim() != 2:
        raise ValueError(f"{name} must be a 2-D (L, S) tensor; got shape {tuple(weights.shape)}")
    return weights


def matrix_axes(
    ax: Axes | None,
    L: int,
    S: int,
    x_labels: Sequence[str] | None,
    y_labels: Sequence[str] | None,
    *,
    keep_rows: Sequence[int] = (),
) -> tuple[Figure, Axes]:
    """Check the labels of an (L, S) matrix plot and return its figure and labelled axes.

    A new figure is at most :data:`~attnbook.viz.layout.MAX_WIDTH` wide, with cells of at most half an inch.
    """
    if x_labels is not None and len(x_labels) != S:
        raise ValueError(f"x_labels has {len(x_labels)} labels for {S} key positions")
    if y_labels is not None and len(y_labels) != L:
        raise ValueError(f"y_labels has {len(y_labels)} labels for {L} query positions")
    if ax is None:
        side = min(0.5, (MAX_WIDTH - 2.6) / S, 5.2 / L)
        width = min(MAX_WIDTH, side * S + 2.6)
        fig, ax = plt.subplots(figsize=(width, max(2.4, side * L + 1.6)), layout="constrained")
    label_matrix(ax, L, S, x_labels, y_labels, keep_rows=keep_rows)
    return ax.figure, ax


def label_matrix(ax: Axes, L: int, S: int, x_labels, y_labels, *, keep_rows=()) -> None:
    """Label the keys (x) and queries (y) of an (L, S) matrix plot; thin labels that would overlap."""
    x_labels = list(x_labels) if x_labels is not None else [str(j) for j in range(S)]
    y_labels = list(y_labels) if y_labels is not None else [str(i) for i in range(L)]
    fit_tick_labels(ax, "x", x_labels)
    fit_tick_labels(ax, "y", y_labels, keep=keep_rows)


def _label(labels: Sequence[str] | None, i: int) -> str:
    text = " ".join(str(labels[i]).split()) if labels is not None else ""
    return f"‘{text}’" if "=" in text else text or str(i)  # "‘H=1 D=64’=48", not "H=1 D=64=48"


def _quote(text: str) -> str:
    return f" ‘{' '.join(text.split())}’" if text.strip() else ""


def _row_peaks(w: torch.Tensor, x_labels, y_labels) -> str:
    peaks = [
        f"{_label(y_labels, i)}→{_label(x_labels, int(w[i].argmax()))} {float(w[i].max()):.2f}"
        for i in range(min(len(w), _MAX_ALT_ROWS))
    ]
    return ", ".join(peaks) + (", …" if len(w) > _MAX_ALT_ROWS else "")


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
    lang: str | None = None,
) -> Figure:
    """Draw one attention matrix of shape (L, S) with token labels; rows are queries.

    Pass ``ax`` to draw into an existing grid; otherwise a new figure is made. Returns the figure.
    ``vmin``/``vmax`` fix the colour range (weights: 0 to 1); None takes it from the data.
    ``annotate``: print each value in its cell where the cells are large enough to hold it at the
    style's font size (False: never). The alt text (on ``ax`` when given) names each row's
    largest entry.
    """
    w = _as_2d(weights, "weights")
    L, S = w.shape
    created = ax is None
    fig, ax = matrix_axes(ax, L, S, x_labels, y_labels)
    image = ax.imshow(w.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xlabel(tr(xlabel, lang))
    ax.set_ylabel(tr(ylabel, lang))
    ax.set_title(wrap(tr(title, lang), axes_px(ax)[0] * 1.15))
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=tr(colorbar_label, lang))
    settle(fig)
    label_matrix(ax, L, S, x_labels, y_labels)
    low, high = image.get_clim()
    if annotate and cells_fit(ax, L, S, "−0.00" if low < 0 else "0.00"):
        for i in range(L):
            for j in range(S):
                value = float(w[i, j])
                middle = (low + high) / 2
                strong = (
                    abs(value - middle) > 0.3 * (high - low)
                    if low < 0
                    else value > low + 0.6 * (high - low)
                )
                ax.text(j, i, f"{value:.2f}", ha="center", va="center",
                        color="white" if strong else "black")  # fmt: skip
    kind = {"weight": "attention weights", "value": "values", "": "values"}.get(
        colorbar_label, f"values ({colorbar_label})"
    )
    axes_named = [f"{name}: {label}" for name, label in (("rows", ylabel), ("columns", xlabel))]
    describe(
        ax,
        created,
        f"Heat-map of {L}×{S} {kind}{_quote(title)} ("
        + "; ".join(
            [n for n in axes_named if not n.endswith(": ")] + [f"colour from {low:g} to {high:g}"]
        )
        + "). Each row's largest entry: "
        + _row_peaks(w, x_labels, y_labels)
        + ".",
    )
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
    color: str = "blue",
    lang: str | None = None,
) -> Figure:
    """A labelled bar chart of a 1-D tensor, one bar per label, each bar annotated with its value.

    ``highlight``: the index of a bar drawn orange, hatched and outlined, its label boxed. ``color``: the other
    bars' colour (an Okabe–Ito name of :data:`~attnbook.viz.layout.OKABE_ITO`, a ``tab:`` name, drawn in the nearest
    Okabe–Ito colour, or any matplotlib colour). ``fmt`` formats the values printed on the bars
    ("" prints none); values are printed level where they fit above their bar, upright where
    not, and left out where bars are too narrow for a line of text.
    """
    v = torch.as_tensor(values).detach().float().cpu()
    if v.dim() != 1 or v.numel() != len(labels):
        raise ValueError(
            f"values must be 1-D with one entry per label ({len(labels)}); "
            f"got shape {tuple(v.shape)}"
        )
    n = len(labels)
    if highlight is not None and not -n <= highlight < n:
        raise ValueError(f"highlight must be a bar index in [0, {n}); got {highlight}")
    created = ax is None
    if created:
        fig, ax = plt.subplots(figsize=(min(MAX_WIDTH, 0.6 * n + 1.8), 2.9), layout="constrained")
    fig = ax.figure
    drawn = ax.bar(range(n), v.numpy(), color=palette(color))
    if highlight is not None:
        drawn[highlight].set(facecolor=OKABE_ITO["orange"], edgecolor="black", hatch="//")
    ax.set_title(wrap(tr(title, lang), axes_px(ax)[0] * 1.1))
    ax.set_xlabel(tr(xlabel, lang))
    ax.set_ylabel(tr(ylabel, lang))
    keep = [] if highlight is None else [highlight % n]
    fit_tick_labels(ax, "x", labels, keep=keep)
    settle(fig)
    fit_tick_labels(ax, "x", labels, keep=keep)
    shown = ax.get_xticklabels()  # empty on the upper panels of a figure with a shared x axis
    if highlight is not None and shown:  # boxed too: a bar of height zero still shows which
        shown[highlight % n].set_bbox(
            dict(boxstyle="round,pad=0.15", facecolor="none", edgecolor=OKABE_ITO["orange"])
        )
    ax.axhline(0.0, color="black", linewidth=0.6)
    texts = [fmt.format(value) if fmt else "" for value in v.tolist()]
    slot = axes_px(ax)[0] / max(n, 1)
    widest = max((text_px(t, "font.size") for t in texts), default=0.0)
    rotation = 0 if widest <= 0.95 * slot else 90
    if rotation == 90 and slot < 1.2 * font_px("font.size"):
        texts = [""] * n
    for i, (value, text) in enumerate(zip(v.tolist(), texts)):
        if text:
            ax.annotate(text, (i, value), ha="center", va="bottom" if value >= 0 else "top",
                        rotation=rotation, xytext=(0, 2 if value >= 0 else -2),
                        textcoords="offset points")  # fmt: skip
    ax.margins(y=0.18 if rotation == 0 else 0.3)
    pairs = [
        f"{_label(labels, i)}={fmt.format(value) if fmt else f'{value:.3g}'}"
        for i, value in enumerate(v.tolist())
    ]
    if n > 16:
        order = v.argsort(descending=True).tolist()[:3]
        listed = (
            "largest " + ", ".join(pairs[i] for i in order)
            + f"; range {float(v.min()):.3g} to {float(v.max()):.3g}"
        )  # fmt: skip
    else:
        listed = ", ".join(pairs)
    marked = (
        f"; highlighted (orange, hatched, label boxed): {_label(labels, highlight)}"
        if highlight is not None
        else ""
    )
    axis_names = f" ({ylabel} by {xlabel})" if xlabel and ylabel else ""
    text = f"Bar chart of {n} values{_quote(title)}{axis_names}: {listed}{marked}."
    describe(ax, created, " ".join(text.split()))
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
    lang: str | None = None,
) -> Figure:
    """One query's attention in three stacked panels: its scores, its weights, its output.

    ``scores`` and ``weights`` are (S,) for this query; ``output`` is (Ev,) with one name per
    feature. The query's own token is highlighted (hatched) in the first two panels.
    """
    fig, axes = plt.subplots(3, 1, figsize=(MAX_WIDTH, 7.4), layout="constrained")
    bars(scores, tokens, ax=axes[0], highlight=query_index, title=N_("1. scores = q·k"),
         xlabel=N_("key token"), ylabel=N_("score"), lang=lang)  # fmt: skip
    bars(weights, tokens, ax=axes[1], highlight=query_index,
         title=N_("2. weights = softmax(scores)"), xlabel=N_("key token"), ylabel=N_("weight"),
         lang=lang)  # fmt: skip
    axes[1].set_ylim(0, 1.15)
    bars(output, feature_names, ax=axes[2], color="bluish green", title=N_("3. output = Σ weight · v"),
         xlabel=N_("feature"), ylabel=N_("value"), lang=lang)  # fmt: skip
    query = tokens[query_index]
    fig.suptitle(
        wrap(
            tr(title, lang) or tr("query: {query!r}", lang).format(query=query),
            MAX_WIDTH * CSS_DPI,
            "figure.titlesize",
        )
    )
    w = torch.as_tensor(weights).detach().float().cpu()
    s = torch.as_tensor(scores).detach().float().cpu()
    top = int(w.argmax())
    out = ", ".join(
        f"{name}={value:.2f}"
        for name, value in zip(feature_names, torch.as_tensor(output).float().tolist())
    )
    set_alt(
        fig,
        f"Three bar charts of one query's attention{_quote(title)}: query token ‘{query}’ "
        f"(position {query_index}) over {len(tokens)} keys. (1) Scores: largest "
        f"{tokens[int(s.argmax())]} {float(s.max()):.2f}. (2) Weights: largest {tokens[top]} "
        f"{float(w[top]):.2f}; the query's own token {float(w[query_index]):.2f}. "
        f"(3) Output: {out}.",
    )
    return fig


def _mask_kind(m: torch.Tensor) -> str:
    L, S = m.shape
    ones = torch.ones(L, S, dtype=torch.bool)
    if torch.equal(m, ones):
        return "full (every query may attend to every key)"
    if torch.equal(m, ones.tril()):
        return "causal (lower-triangular)"
    if bool((m == m[:1]).all()):
        hidden = [str(j) for j in range(S) if not m[0, j]]
        return (
            "the same keys for every query (padding): key positions "
            + ", ".join(hidden)
            + " hidden"
        )
    if bool((m <= ones.tril()).all()):
        return "causal, with further keys hidden"
    return "neither full nor causal"


def mask_image(
    mask: torch.Tensor,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    *,
    title: str = "",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    ax: Axes | None = None,
    lang: str | None = None,
) -> Figure:
    """Draw a boolean (L, S) mask in the SDPA convention: ``True`` = may attend.

    Allowed cells are dark with a tick, forbidden cells light with a cross (where cells are large
    enough for them), so the picture reads the same in colour and in grey. Pass ``ax`` to draw
    into an existing grid.
    """
    m = torch.as_tensor(mask).detach().cpu()
    if m.dtype != torch.bool or m.dim() != 2:
        raise ValueError(
            f"mask must be a 2-D bool (L, S) tensor; got {m.dtype} of shape {tuple(m.shape)}"
        )
    L, S = m.shape
    created = ax is None
    fig, ax = matrix_axes(ax, L, S, x_labels, y_labels)
    ax.imshow(m.float().numpy(), cmap="Greens", vmin=-0.25, vmax=1.25, aspect="auto")
    ax.set_xlabel(tr(xlabel, lang))
    ax.set_ylabel(tr(ylabel, lang))
    ax.set_title(tr(title, lang))
    settle(fig)
    label_matrix(ax, L, S, x_labels, y_labels)
    if cells_fit(ax, L, S, "✓"):
        for i in range(L):
            for j in range(S):
                allowed = bool(m[i, j])
                ax.text(j, i, "✓" if allowed else "×", ha="center", va="center",
                        color="white" if allowed else "dimgray")  # fmt: skip
    empty = [_label(y_labels, i) for i in range(L) if not m[i].any()]
    describe(
        ax,
        created,
        f"{L}×{S} mask{_quote(title)} (rows: {ylabel}, columns: {xlabel}): {int(m.sum())} of "
        f"{L * S} cells may attend: {_mask_kind(m)}."
        + (f" Queries with no allowed key: {', '.join(empty)}." if empty else ""),
    )
    return fig
