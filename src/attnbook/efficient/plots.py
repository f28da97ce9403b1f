"""Pure plotting functions for the cost of attention: numbers in, a matplotlib figure out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnbook.timing import loglog_slope

__all__ = ["scaling_plot"]


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
        line, = ax.plot(*zip(*fitted), marker="o", label=name) if fitted else ax.plot([], [], label=name)
        rest = [(n, y) for n, y in points if (n, y) not in fitted]
        if rest:
            ax.plot(*zip(*(rest + fitted[:1])), marker="o", linestyle=":", color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
