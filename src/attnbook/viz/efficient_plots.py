"""Pure plotting functions for the cost of attention: numbers in, a matplotlib figure out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnbook.i18n import N_, tr
from attnbook.measure.timing import loglog_slope
from attnbook.viz.layout import MAX_WIDTH, OKABE_ITO, describe


def _crossings(series: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> list[str]:
    """Where two series swap order, between two n that both were measured at."""
    found = []
    names = list(series)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1 :]:
            ya, yb = dict(zip(*series[a])), dict(zip(*series[b]))
            shared = sorted(set(ya) & set(yb))
            for n0, n1 in zip(shared, shared[1:]):
                if (ya[n0] - yb[n0]) * (ya[n1] - yb[n1]) < 0:
                    found.append(f"{a} and {b} cross between n = {n0:g} and {n1:g}")
    return found


__all__ = ["scaling_plot", "tile_map"]


def scaling_plot(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    xlabel: str = N_("sequence length n"),
    ylabel: str,
    fit_from: float | None = None,
    ax: Axes | None = None,
    lang: str | None = None,
) -> Figure:
    """Log-log lines of ``y`` against ``n`` for each method, with the fitted slope in the legend.

    Args:
        series: label -> (n values, y values).
        title, xlabel, ylabel: texts of the plot.
        fit_from: fit each slope only on points with ``n >= fit_from`` (the asymptotic regime);
            the fitted range is drawn solid, the rest dotted.
        ax: draw into this axes instead of a new figure.
    """
    created = ax is None
    if created:
        fig, ax = plt.subplots(figsize=(MAX_WIDTH, 4.2), layout="constrained")
    fig = ax.figure
    ends = []
    for label, (ns, ys) in series.items():
        points = sorted(zip(ns, ys))
        fitted = [(n, y) for n, y in points if fit_from is None or n >= fit_from]
        name = tr(label, lang)
        if len(fitted) >= 2:
            slope = tr("slope", lang)
            name = f"{tr(label, lang)} ({slope} {loglog_slope(*zip(*fitted)):.2f})"
        if points:
            ends.append(
                f"{name}: {points[0][1]:.3g} at n = {points[0][0]:g} to {points[-1][1]:.3g} "
                f"at n = {points[-1][0]:g}"
            )
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
    ax.set_xlabel(tr(xlabel, lang))
    ax.set_ylabel(tr(ylabel, lang))
    ax.set_title(tr(title, lang))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    crossings = _crossings(series)
    describe(
        ax,
        created,
        f"Log-log line chart ‘{title}’: {ylabel} against {xlabel}, one line per method "
        f"(slope of the fitted line in brackets). "
        + "; ".join(ends)
        + "."
        + (" " + "; ".join(crossings) + "." if crossings else ""),
    )
    return fig


def tile_map(
    L: int,
    S: int,
    query_block: int,
    key_block: int,
    *,
    is_causal: bool = False,
    lang: str | None = None,
) -> Figure:
    """Which (query block, key block) tiles :func:`~attnbook.efficient.chunked_attention` visits.

    Each tile is drawn in one of three colours: computed in full, computed with the causal
    mask applied inside it (it crosses the diagonal), or skipped (entirely in the future).
    """
    import matplotlib.patches as patches

    fig, ax = plt.subplots(figsize=(4.8, 4.8 * L / S + 1.3), layout="constrained")
    colours = {
        N_("computed"): OKABE_ITO["blue"],
        N_("masked inside"): OKABE_ITO["orange"],
        N_("skipped"): "#eeeeee",
    }
    # Not colour alone: tiles masked inside are hatched, skipped ones are left blank.
    hatches = {"computed": "", "masked inside": "//", "skipped": ""}
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
                    hatch=hatches[kind],
                )
            )
    if is_causal:
        ax.plot([0, min(L, S)], [0, min(L, S)], color="black", linewidth=1, linestyle="--")
    ax.set_xlim(0, S)
    ax.set_ylim(L, 0)
    ax.set_aspect("equal")
    ax.set_xlabel(tr("key position", lang))
    ax.set_ylabel(tr("query position", lang))
    causal = tr(" (causal)", lang) if is_causal else ""
    ax.set_title(
        tr("Tiles of {q} queries × {k} keys", lang).format(q=query_block, k=key_block) + causal
    )
    handles = [
        patches.Patch(
            facecolor=c, edgecolor="white", hatch=hatches[k], label=f"{tr(k, lang)}: {counts[k]}"
        )
        for k, c in colours.items()
        if counts[k]
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
              frameon=False)  # fmt: skip
    total = sum(counts.values())
    describe(
        ax,
        True,
        f"Tile map ‘{ax.get_title()}’: a {L}×{S} attention matrix (rows: query position, "
        f"columns: key position) cut into {total} tiles: "
        + ", ".join(f"{counts[k]} {k}" for k in colours if counts[k])
        + (" (above the dashed diagonal: the future)" if is_causal else "")
        + ".",
    )
    return fig
