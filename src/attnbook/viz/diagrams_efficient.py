"""A diagram of exact attention in tiles: blocks of queries against blocks of keys and values,
with the online softmax's running maximum and sum, never the whole score matrix (chapter 9).

A pure function: arguments in, a matplotlib figure out, alt text set in the figure's language,
shown as SVG (:func:`attnbook.viz.style.as_vector`). It shares the boxes, arrows and role colours
of :mod:`attnbook.viz.diagrams`: queries vermilion, keys blue, values bluish green, scores orange.

Shape legend: L target (query) length, S source (key) length; B_q and B_k the query and key
block sizes (``query_block``, ``key_block`` of :func:`~attnbook.efficient.chunked_attention`).
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

__all__ = ["attention_tiles"]


def attention_tiles(
    *, query_blocks: int = 3, key_blocks: int = 4, lang: str | None = None
) -> Figure:
    """Exact attention in tiles, as :func:`~attnbook.efficient.chunked_attention` and
    FlashAttention compute it.

    The queries Q (L rows) are cut into ``query_blocks`` blocks, the keys K and values V (S rows)
    into ``key_blocks`` blocks. One query block sweeps the key blocks from left to right: each
    step computes one tile of scores (B_q, B_k), folds it into the running maximum m, sum ℓ and
    weighted sum acc of its rows (the online softmax), and is dropped. The output block is
    acc / ℓ. Only the current tile is held: the grid of tiles, the (L, S) score matrix, is
    drawn dashed because it never exists at once.

    Args:
        query_blocks: blocks of queries drawn, 2 to 4.
        key_blocks: blocks of keys and values drawn, 2 to 5.
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    nq = _check_int(query_blocks, "query_blocks", 2, 4)
    nk = _check_int(key_blocks, "key_blocks", 2, 5)
    size = mpl.rcParams["font.size"]
    cell_w, cell_h = min(0.5, 2.0 / nk), 0.42  # the state box keeps its width
    x_grid, grid_w, grid_h = 1.15, nk * cell_w, nq * cell_h
    height = max(0.1 + 0.3 + 0.4 + 0.15 + grid_h + 0.15 + 0.4 + 0.3 + 0.4 + 0.1, 2.9)
    fig, ax = _canvas(height)
    y_title = height - 0.1 - 0.15
    y_top = y_title - 0.15 - 0.4 - 0.15  # top of the grid
    ax.text(x_grid + grid_w / 2, y_title, tr("keys K, in blocks of $B_k$ rows", lang), ha="center",
            va="center", fontsize=size, color=ROLE_COLORS["key"])  # fmt: skip
    row = 1  # the query block drawn at work
    col = nk - 2  # the key block whose tile is being computed
    for j in range(nk):
        x = x_grid + (j + 0.5) * cell_w
        _box(ax, x, y_top + 0.15 + 0.2, cell_w - 0.06, 0.4, f"$K_{j + 1}$", "key")
        _box(ax, x, y_top - grid_h - 0.15 - 0.2, cell_w - 0.06, 0.4, f"$V_{j + 1}$", "value")
    for i in range(nq):
        y = y_top - (i + 0.5) * cell_h
        _box(ax, x_grid - 0.45, y, 0.55, cell_h - 0.06, f"$Q_{i + 1}$", "query")
        for j in range(nk):
            x = x_grid + j * cell_w
            here = (i, j) == (row, col)
            done = i == row and j < col
            ax.add_patch(
                Rectangle((x + 0.03, y - cell_h / 2 + 0.03), cell_w - 0.06, cell_h - 0.06,
                          facecolor=to_rgba(ROLE_COLORS["attention"], 0.75 if here else 0.0),
                          edgecolor=ROLE_COLORS["attention"] if here or done else "#999999",
                          linewidth=1.4 if here else 1.0,
                          linestyle="-" if here else (0, (3, 2)))
            )  # fmt: skip
    y_row = y_top - (row + 0.5) * cell_h
    ax.text(x_grid + (col + 0.5) * cell_w, y_row, "$S_{ij}$", ha="center", va="center",
            fontsize=size)  # fmt: skip
    ax.text(x_grid + grid_w / 2, y_top - grid_h - 0.15 - 0.4 - 0.2,
            tr("values V, in the same blocks", lang), ha="center", va="center", fontsize=size,
            color=ROLE_COLORS["value"])  # fmt: skip
    x_state = x_grid + grid_w + 0.3
    state_w = 6.4 - x_state
    _arrow(ax, (x_grid + grid_w + 0.02, y_row), (x_state, y_row))
    lines = [
        tr("running state of block $Q_i$, per row:", lang),
        r"$m' = \max(m,\ \mathrm{rowmax}\,S_{ij})$",
        r"$\ell \leftarrow e^{m - m'}\,\ell + \mathrm{rowsum}\,e^{S_{ij} - m'}$",
        r"$acc \leftarrow e^{m - m'}\,acc + e^{S_{ij} - m'}\,V_j$",
        r"$m \leftarrow m'$",
        tr("after the last block: output $O_i$ = acc / ℓ", lang),
    ]
    box_h = 2.1
    y_state = min(y_row, height - 0.1 - box_h / 2)
    _box(ax, x_state + state_w / 2, y_state, state_w, box_h, "", "attention")
    for k, text in enumerate(lines):
        ax.text(x_state + 0.12, y_state + box_h / 2 - 0.2 - k * 0.32, text, va="center",
                fontsize=size)  # fmt: skip
    note = tr(
        "dashed: the (L, S) scores, never stored whole; one tile ($B_q$, $B_k$) at a time", lang
    )
    ax.text(0.1, 0.25, note, va="center", fontsize=size, color=_GREY)
    sentences = [
        tr("Diagram of exact attention in tiles: {nq} blocks of queries Q down the left, {nk} "
           "blocks of keys K across the top and of values V along the bottom.", lang).format(
            nq=nq, nk=nk),
        tr("The grid between them is the (L, S) matrix of scores, drawn dashed because it is "
           "never stored whole; one tile, of query block {i} and key block {j}, is being "
           "computed.", lang).format(i=row + 1, j=col + 1),
        tr("The query block sweeps the key blocks from left to right; each tile updates the "
           "block's running maximum m, sum ℓ and weighted sum acc of the values, as the online "
           "softmax does, and is then dropped.", lang),
        tr("After the last key block, the output block is acc / ℓ.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)
