"""Pure plotting functions for the cost of attention: numbers in, a matplotlib figure out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnbook.measure.timing import loglog_slope

__all__ = ["scaling_plot", "tile_map"]


def scaling_plot(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    xlabel: str = "sequence length n",
    ylabel: str,
    fit_from: float | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Log-log lines of ``y`` against ``n`` for each method, with the fitted slope in the legend.

    Args:
        series: label -> (n values, y values).
        title, xlabel, ylabel: texts of the plot.
        fit_from: fit each slope only on points with ``n >= fit_from`` (the asymptotic regime);
            the fitted range is drawn solid, the rest dotted.
        ax: draw into this axes instead of a new figure.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
    else:
        fig = ax.figure
    for label, (ns, ys) in series.items():
        points = sorted(zip(ns, ys))
        fitted = [(n, y) for n, y in points if fit_from is None or n >= fit_from]
        name = label
        if len(fitted) >= 2:
            name = f"{label} (slope {loglog_slope(*zip(*fitted)):.2f})"
        (line,) = (
            ax.plot(*zip(*fitted), marker="o", label=name)
            if fitted
            else ax.plot([], [], label=name)
        )
        rest = [(n, y) for n, y in points if (n, y) not in fitted]
        if rest:
            ax.plot(*zip(*(rest + fitted[:1])), marker="o", linestyle=":", color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({n for ns, _ in series.values() for n in ns})
    ax.set_xticks(ticks, labels=[str(int(n)) for n in ticks])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def tile_map(
    L: int, S: int, query_block: int, key_block: int, *, is_causal: bool = False
) -> Figure:
    """Which (query block, key block) tiles :func:`~attnbook.efficient.chunked_attention` visits.

    Each tile is drawn in one of three colours: computed in full, computed with the causal
    mask applied inside it (it crosses the diagonal), or skipped (entirely in the future).
    """
    import matplotlib.patches as patches

    fig, ax = plt.subplots(figsize=(4.8, 4.8 * L / S + 0.9))
    colours = {"computed": "#4c72b0", "masked inside": "#dd8452", "skipped": "#eeeeee"}
    counts = dict.fromkeys(colours, 0)
    for q0 in range(0, L, query_block):
        q1 = min(q0 + query_block, L)
        for k0 in range(0, S, key_block):
            k1 = min(k0 + key_block, S)
            if is_causal and k0 > q1 - 1:
                kind = "skipped"
            elif is_causal and k1 - 1 > q0:
                kind = "masked inside"
            else:
                kind = "computed"
            counts[kind] += 1
            ax.add_patch(
                patches.Rectangle(
                    (k0, q0),
                    k1 - k0,
                    q1 - q0,
                    facecolor=colours[kind],
                    edgecolor="white",
                    linewidth=2,
                )
            )
    if is_causal:
        ax.plot([0, min(L, S)], [0, min(L, S)], color="black", linewidth=1, linestyle="--")
    ax.set_xlim(0, S)
    ax.set_ylim(L, 0)
    ax.set_aspect("equal")
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(
        f"Tiles of {query_block} queries × {key_block} keys{' (causal)' if is_causal else ''}"
    )
    handles = [
        patches.Patch(color=c, label=f"{k}: {counts[k]}") for k, c in colours.items() if counts[k]
    ]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.14),
        ncol=3,
        fontsize=8,
        frameon=False,
    )
    return fig
