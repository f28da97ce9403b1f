"""Diagrams of decoding with a cache: one step of the key/value cache, and query heads sharing
key/value heads (grouped-query and multi-query attention).

Pure functions: arguments in, a matplotlib figure out, alt text set in the figure's language,
shown as SVG (:func:`attnbook.viz.style.as_vector`). They share the boxes, arrows and role colours
of :mod:`attnbook.viz.diagrams`: queries vermilion, keys blue, values bluish green, attention
orange.

Shape legend: N batch, H query heads, K key/value heads, D head size, t positions decoded so far,
S source (memory) length.
"""

from __future__ import annotations

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

__all__ = ["kv_cache_step", "grouped_query"]


def _rows(ax, x: float, y_top: float, w: float, row: float, n: int, role: str, *,
          new: bool) -> float:  # fmt: skip
    """A cached tensor drawn as ``n`` rows, one per position, top down; the first row is the one
    appended at this step when ``new``. Returns the bottom."""
    color = ROLE_COLORS[role]
    for i in range(n):
        fresh = new and i == 0
        ax.add_patch(
            Rectangle((x - w / 2, y_top - (i + 1) * row), w, row,
                      facecolor=to_rgba(color, 0.7 if fresh else 0.22),
                      edgecolor="white" if not fresh else color, linewidth=1.2)
        )  # fmt: skip
    return y_top - n * row


def kv_cache_step(*, step: int = 3, lang: str | None = None) -> Figure:
    """One decoding step with the key/value cache of chapter 5b, in one decoder layer.

    The newest token, at position t, gives one query q_t and one new row of keys and values;
    the row is appended to the self-attention cache (N, H, t, D → N, H, t + 1, D), and q_t
    attends over all t + 1 rows. The cross-attention keys and values of the memory (N, H, S, D)
    were computed once, before the first step, and are only read.

    Args:
        step: the position t of the newest token, 1 to 6 (the cache then holds t rows).
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    t = _check_int(step, "step", 1, 6)
    size = mpl.rcParams["font.size"]
    h, row = 0.42, 0.17
    grid_h = max(t + 1, 5) * row
    height = 0.1 + h + 0.35 + h + 0.45 + grid_h + 0.45 + h + 0.35 + h + 0.1
    fig, ax = _canvas(height)
    xq, xk, xv, xm = 0.95, 2.45, 3.55, 5.45
    y_tok = height - 0.1 - h / 2
    _box(ax, (xk + xv) / 2, y_tok, 3.0, h, tr("newest token, position t = {t}", lang).format(t=t))
    y_new = y_tok - h - 0.35
    _box(ax, xq, y_new, 1.3, h, "$q_t$  (N, H, 1, D)", "query")
    _box(ax, xk, y_new, 0.9, h, "$k_t$", "key")
    _box(ax, xv, y_new, 0.9, h, "$v_t$", "value")
    for x in (xq, xk, xv):
        _arrow(ax, ((xk + xv) / 2 + (x - (xk + xv) / 2) * 0.4, y_tok - h / 2), (x, y_new + h / 2))
    grid_top = y_new - h / 2 - 0.45
    for x, role in ((xk, "key"), (xv, "value")):
        _arrow(ax, (x, y_new - h / 2), (x, grid_top))
        _rows(ax, x, grid_top, 0.8, row, t + 1, role, new=True)
    ax.text(xv + 0.5, grid_top - row / 2, tr("+1 row", lang), va="center", fontsize=size,
            color=_GREY)  # fmt: skip
    ax.text((xk + xv) / 2, grid_top - (t + 1) * row - 0.14,
            tr("self-attention cache (N, H, t + 1, D)", lang), ha="center", va="center",
            fontsize=size, color=_GREY)  # fmt: skip
    ax.text(xm, y_new + 0.05, tr("memory's keys, values:\ncomputed once", lang), ha="center",
            va="center", fontsize=size, color=_GREY)  # fmt: skip
    _rows(ax, xm - 0.45, grid_top, 0.8, row, 5, "key", new=False)
    _rows(ax, xm + 0.45, grid_top, 0.8, row, 5, "value", new=False)
    ax.text(xm, grid_top - 5 * row - 0.14, "(N, H, S, D)", ha="center", va="center",
            fontsize=size, color=_GREY)  # fmt: skip
    y_att = grid_top - grid_h - 0.45 - h / 2
    _box(ax, 2.1, y_att, 2.6, h, tr("self-attention: 1 query, t + 1 keys", lang), "attention")
    _arrow(ax, (xq, y_new - h / 2), (xq, y_att + h / 2))
    _arrow(ax, ((xk + xv) / 2, grid_top - (t + 1) * row - 0.28), ((xk + xv) / 2, y_att + h / 2))
    _box(ax, xm, y_att, 1.7, h, tr("cross-attention", lang), "attention")
    _arrow(ax, (xm, grid_top - 5 * row - 0.28), (xm, y_att + h / 2))
    _arrow(ax, (2.1 + 1.3, y_att), (xm - 0.85, y_att))
    y_out = y_att - h - 0.35
    _box(ax, xm - 0.4, y_out, 2.5, h, tr("feed-forward, next layer", lang), "linear")
    _arrow(ax, (xm, y_att - h / 2), (xm, y_out + h / 2))
    ax.text(0.1, y_out, tr("queries are never cached", lang), va="center", fontsize=size,
            color=ROLE_COLORS["query"])  # fmt: skip
    sentences = [
        tr("Diagram of one decoding step with the key/value cache, in one decoder layer.", lang),
        tr("The newest token, at position t = {t}, gives one query q_t and one new key k_t and "
           "value v_t.", lang).format(t=t),
        tr("The new key and value are appended as one row to the self-attention cache, which "
           "now holds t + 1 = {n} rows (N, H, t + 1, D); the query is not cached.",
           lang).format(n=t + 1),
        tr("The query attends over all cached keys and values, then the cross-attention reads the "
           "memory's keys and values (N, H, S, D), computed once before the first step.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)


def _check_kv_heads(kv_heads: object, num_heads: int) -> tuple[int, ...]:
    if not isinstance(kv_heads, tuple):
        raise TypeError(f"kv_heads must be a tuple of ints; got {type(kv_heads).__name__}")
    if not 1 <= len(kv_heads) <= 3:
        raise ValueError(f"kv_heads must hold 1 to 3 numbers; got {len(kv_heads)}")
    for k in kv_heads:
        _check_int(k, "kv_heads", 1, num_heads)
        if num_heads % k:
            raise ValueError(f"kv_heads must divide num_heads = {num_heads}; got {k}")
    return kv_heads


def grouped_query(*, num_heads: int = 4, kv_heads: tuple[int, ...] = (4, 2, 1),
                  lang: str | None = None) -> Figure:  # fmt: skip
    """Query heads sharing key/value heads, one panel per K: multi-head attention (K = H), grouped
    -query (1 < K < H, each key/value head serves H/K query heads) and multi-query (K = 1). The
    cache holds only the K key/value heads, so it shrinks by H/K.

    Args:
        num_heads: H, the query heads, 2 to 8.
        kv_heads: K for each panel, 1 to 3 numbers, each dividing H.
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    H = _check_int(num_heads, "num_heads", 2, 8)
    panels = _check_kv_heads(kv_heads, H)
    size = mpl.rcParams["font.size"]
    h = 0.36
    height = 0.1 + 0.45 + h + 0.8 + 2 * h + 0.5 + 0.1
    fig, ax = _canvas(height)
    panel_w = 6.3 / len(panels)
    y_title = height - 0.1 - 0.2
    y_q = y_title - 0.25 - h / 2 - 0.05
    y_k = y_q - h / 2 - 0.8 - h / 2
    y_v = y_k - h
    for p, K in enumerate(panels):
        x0 = 0.1 + p * panel_w
        if K == H:
            kind = tr("multi-head", lang)
        elif K == 1:
            kind = tr("multi-query", lang)
        else:
            kind = tr("grouped-query", lang)
        ax.text(x0 + panel_w / 2, y_title, f"K = {K}  ({kind})", ha="center", va="center",
                fontsize=size)  # fmt: skip
        q_slot, kv_slot = (panel_w - 0.1) / H, (panel_w - 0.1) / K
        kv_x = [x0 + 0.05 + kv_slot * (j + 0.5) for j in range(K)]
        for i in range(H):
            x = x0 + 0.05 + q_slot * (i + 0.5)
            _box(ax, x, y_q, min(q_slot - 0.06, 0.5), h, f"$q_{i + 1}$", "query")
            target = kv_x[i // (H // K)]
            ax.plot([x, target], [y_q - h / 2, y_k + h / 2], color=_GREY, lw=1.0)
        for j, x in enumerate(kv_x):
            w = min(kv_slot - 0.1, 0.5)
            _box(ax, x, y_k, w, h, f"$k_{j + 1}$", "key")
            _box(ax, x, y_v, w, h, f"$v_{j + 1}$", "value")
        share = "1" if K == H else f"1/{H // K}"
        ax.text(x0 + panel_w / 2, y_v - h / 2 - 0.25, tr("cache × {f}", lang).format(f=share),
                ha="center", va="center", fontsize=size, color=_GREY)  # fmt: skip
    counts = ", ".join(str(K) for K in panels)
    sentences = [
        tr("Diagram of {H} query heads sharing key/value heads, in {n} panels, with K = {ks} "
           "key/value heads.", lang).format(H=H, n=len(panels), ks=counts),
        tr("In each panel the query heads q sit in a row above the K key heads k and value "
           "heads v, and a line joins each query head to the key/value head it reads.", lang),
        tr("With K = H every query head has its own (multi-head attention); with fewer, each "
           "key/value head serves a group of H/K query heads (grouped-query), and with K = 1 all "
           "share one (multi-query).", lang),
        tr("The cache keeps only the K key/value heads, so it shrinks by H/K.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)
