"""Diagrams of what attention computes for one query: the soft lookup, and masks on the scores.

Pure functions: arguments in, a matplotlib figure out, alt text set in the figure's language,
shown as SVG (:func:`attnbook.viz.style.as_vector`). They share the boxes, arrows and role colours
of :mod:`attnbook.viz.diagrams`: queries vermilion, keys blue, values bluish green, masks reddish
purple, scores and weights orange.

Shape legend: L target (query) length, S source (key) length.
"""

from __future__ import annotations

import math

import matplotlib as mpl
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnbook.i18n import resolve, tr
from attnbook.viz.diagram_parts import GREY as _GREY
from attnbook.viz.diagram_parts import ROLE_COLORS
from attnbook.viz.diagram_parts import arrow as _arrow
from attnbook.viz.diagram_parts import box as _box
from attnbook.viz.diagram_parts import canvas as _canvas
from attnbook.viz.diagram_parts import check_int as _check_int
from attnbook.viz.diagram_parts import describe as _alt

__all__ = ["soft_lookup", "mask_grids"]


def soft_lookup(*, num_keys: int = 3, lang: str | None = None) -> Figure:
    """The soft dictionary lookup of chapter 1: a query compared with every key gives scores
    sᵢ = q · kᵢ, a softmax turns them into weights wᵢ (positive, summing to one), and the output
    is the weighted sum Σ wᵢ vᵢ of the values.

    Args:
        num_keys: how many key/value pairs are drawn, 2 to 5.
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    n = _check_int(num_keys, "num_keys", 2, 5)
    size = mpl.rcParams["font.size"]
    row, h = 0.55, 0.4
    height = 0.1 + h + 0.75 + n * row + 0.35 + h + 0.1
    fig, ax = _canvas(height)
    xk, xs, xw, xv = 0.8, 2.45, 4.0, 5.55
    top = height - 0.1 - h / 2
    _box(ax, xs, top, 1.6, h, tr("query", lang) + " $q$", "query")
    ax.text(xk, top, tr("keys", lang), ha="center", va="center", fontsize=size, color=_GREY)
    ax.text(xw, top, "softmax", ha="center", va="center", fontsize=size, color=_GREY)
    ax.text(xv, top, tr("values", lang), ha="center", va="center", fontsize=size, color=_GREY)
    scores = [2.0 - 0.9 * i for i in range(n)]  # an illustration: the first key matches best
    total = sum(math.exp(s) for s in scores)
    weights = [math.exp(s) / total for s in scores]
    y0 = top - h / 2 - 0.75 - row / 2 + 0.1
    _arrow(ax, (xs, top - h / 2), (xs, y0 + h / 2), tr("compared with every key", lang))
    for i in range(n):
        y = y0 - i * row
        sub = f"_{{{i + 1}}}"
        _box(ax, xk, y, 1.2, h, f"$k{sub}$", "key")
        _arrow(ax, (xk + 0.6, y), (xs - 0.8, y))
        _box(ax, xs, y, 1.6, h, f"$s{sub} = q \\cdot k{sub}$", "attention")
        _arrow(ax, (xs + 0.8, y), (xw - 0.55, y))
        bar = 1.1 * weights[i]
        ax.add_patch(
            Rectangle((xw - 0.55, y - h / 2 + 0.06), bar, h - 0.12,
                      facecolor=to_rgba(ROLE_COLORS["attention"], 0.8), edgecolor="none")
        )  # fmt: skip
        ax.text(xw - 0.5 + max(bar, 0.4), y, f"$w{sub}$", va="center", fontsize=size)
        _arrow(ax, (xw + 0.75, y), (xv - 0.6, y))
        _box(ax, xv, y, 1.2, h, f"$w{sub}\\,v{sub}$", "value")
    bottom = y0 - (n - 1) * row - h / 2
    out_y = bottom - 0.35 - h / 2
    _arrow(ax, (xv, bottom), (xv, out_y + h / 2), tr("add up", lang), side="left")
    _box(ax, xv - 0.55, out_y, 2.3, h, tr("output", lang) + r" $\sum_i w_i v_i$", "plain")
    ax.text(0.1, out_y, tr("weights: positive, sum to 1", lang), va="center", fontsize=size,
            color=_GREY)  # fmt: skip
    sentences = [
        tr("Diagram of the soft lookup, with {n} keys.", lang).format(n=n),
        tr("A query q, at the top, is compared with every key k by a dot product, giving one "
           "score s = q · k per key.", lang),
        tr("A softmax turns the scores into weights w, drawn as bars: positive, summing to 1, the "
           "longest for the best-matching key.", lang),
        tr("Each value v is scaled by its weight, and the scaled values are added up into the "
           "output Σ w v.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)


def _grid(ax, x0: float, y_top: float, cell: float, allowed: list[list[bool]], *,
          weights: bool) -> None:  # fmt: skip
    """A score grid (rows: queries, columns: keys); masked cells show −∞, or 0 as weights."""
    size = mpl.rcParams["font.size"]
    for r, line in enumerate(allowed):
        kept = sum(line)
        for c, ok in enumerate(line):
            x, y = x0 + c * cell, y_top - (r + 1) * cell
            if ok:
                color = to_rgba(ROLE_COLORS["attention"], 0.25 + 0.6 / kept if weights else 0.18)
            else:
                color = to_rgba(ROLE_COLORS["mask"], 0.3)
            ax.add_patch(Rectangle((x, y), cell, cell, facecolor=color, edgecolor="white", lw=1.5))
            if not ok:
                label = "0" if weights else r"$-\infty$"
                ax.text(x + cell / 2, y + cell / 2, label, ha="center", va="center",
                        fontsize=size, color="black")  # fmt: skip


def mask_grids(*, lang: str | None = None) -> Figure:
    """Padding and causal masks on the score grid: a forbidden (query, key) pair gets the score
    −∞ before the softmax, hence the weight 0, and every row's other weights still sum to 1.

    The padding mask hides the last two keys (padding) from every query; the causal mask hides
    every key after the query's own position. Boolean masks are True where a query may attend.

    Args:
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    size = mpl.rcParams["font.size"]
    cell, L = 0.36, 4
    padding = [[c < 3 for c in range(5)] for _ in range(L)]
    causal = [[c <= r for c in range(L)] for r in range(L)]
    grid_h = L * cell
    height = 0.1 + 0.35 + 0.3 + grid_h + 0.75 + grid_h + 0.45 + 0.1
    fig, ax = _canvas(height)
    panels = [(0.75, padding, tr("padding mask", lang)),
              (4.1, causal, tr("causal mask", lang))]  # fmt: skip
    title_y = height - 0.1 - 0.175
    top1 = title_y - 0.175 - 0.3
    top2 = top1 - grid_h - 0.75
    for x0, allowed, title in panels:
        width = len(allowed[0]) * cell
        ax.text(x0 + width / 2, title_y, title, ha="center", va="center", fontsize=size,
                color=ROLE_COLORS["mask"])  # fmt: skip
        ax.text(x0 + width / 2, top1 + 0.15, tr("keys (S)", lang), ha="center", va="center",
                fontsize=size, color=_GREY)  # fmt: skip
        ax.text(x0 - 0.12, top1 - grid_h / 2, tr("queries (L)", lang), ha="right", va="center",
                rotation=90, fontsize=size, color=_GREY)  # fmt: skip
        _grid(ax, x0, top1, cell, allowed, weights=False)
        _arrow(ax, (x0 + width / 2, top1 - grid_h - 0.08), (x0 + width / 2, top2 + 0.08))
        _grid(ax, x0, top2, cell, allowed, weights=True)
    x_note = 0.75 + 5 * cell + 0.25
    ax.text(x_note, top1 - grid_h / 2, tr("scores", lang), va="center", fontsize=size)
    ax.text(x_note, (top1 - grid_h + top2) / 2, tr("softmax\nover each row", lang),
            va="center", fontsize=size, color=_GREY)  # fmt: skip
    ax.text(x_note, top2 - grid_h / 2, tr("weights", lang), va="center", fontsize=size)
    note = tr("masked pair (mask False): score {inf}, weight 0; each row's weights still sum to 1",
              lang).format(inf=r"$-\infty$")  # fmt: skip
    ax.text(0.1, 0.3, note, va="center", fontsize=size, color=_GREY)
    sentences = [
        tr("Two masks on the grid of scores, queries (L) down and keys (S) across, above the "
           "weights that the softmax gives.", lang),
        tr("Left, a padding mask: the last two keys are padding, so every query's scores for "
           "them are set to −∞ and their weights are 0.", lang),
        tr("Right, a causal mask: query i may attend to keys 0 to i only, so the scores above "
           "the diagonal are −∞ and the weights are lower-triangular.", lang),
        tr("In every row the remaining weights still sum to 1.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)
