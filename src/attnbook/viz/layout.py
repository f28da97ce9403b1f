"""Layout helpers shared by the chart functions: sizes in CSS pixels, tick labels that never
overlap, the colour-blind-safe palette, and where alt text goes.

Sizes are measured as the book shows a figure: a figure inch is
:data:`~attnbook.viz.style.CSS_DPI` CSS pixels and no figure is wider than the text column, so
text keeps the style's size (:data:`~attnbook.viz.style.MIN_TEXT_PX` or more).
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Sequence

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnbook.viz.style import CONTENT_WIDTH, CSS_DPI, set_alt

__all__ = [
    "OKABE_ITO",
    "MAX_WIDTH",
    "MAX_ALT",
    "palette",
    "font_px",
    "text_px",
    "wrap",
    "axes_px",
    "fit_tick_labels",
    "settle",
    "cells_fit",
    "describe",
]

#: Okabe & Ito's colour-blind-safe palette (the style file's colour cycle), by name.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "reddish purple": "#CC79A7",
    "sky blue": "#56B4E9",
    "vermilion": "#D55E00",
    "yellow": "#F0E442",
    "black": "#000000",
}
# matplotlib's tab10 names, as chapters pass them, drawn in the nearest Okabe–Ito colour.
_TAB = {"tab:blue": "blue", "tab:orange": "orange", "tab:green": "bluish green",
        "tab:red": "vermilion", "tab:purple": "reddish purple", "tab:cyan": "sky blue"}  # fmt: skip
#: The widest figure, in inches, shown at full size in the text column (the book saves figures
#: with a tight bounding box, which adds 0.1 inch on each side).
MAX_WIDTH = CONTENT_WIDTH / CSS_DPI - 0.22
#: The longest alt text a chart writes (screen readers read it in one go).
MAX_ALT = 600


def palette(color: str) -> str:
    """``color`` as drawn: a ``tab:`` name or an Okabe–Ito name becomes its Okabe–Ito hex."""
    return OKABE_ITO.get(_TAB.get(color, color), color)


def font_px(kind: str = "xtick.labelsize") -> float:
    """Size in CSS pixels of the style's font ``kind`` (an rcParams key), at full display size."""
    size = mpl.rcParams[kind]
    if isinstance(size, str):
        size = mpl.font_manager.FontProperties(size=size).get_size_in_points()
    return float(size) * CSS_DPI / 72


def text_px(text: str, kind: str = "xtick.labelsize") -> float:
    """Estimated width in CSS pixels of ``text``'s longest line (wide East Asian glyphs: 1 em)."""
    em = font_px(kind)
    lines = str(text).split("\n") or [""]
    return max(
        sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in line) * em
        for line in lines
    )


def wrap(text: str, width_px: float, kind: str = "axes.titlesize") -> str:
    """``text`` broken into lines no wider than ``width_px`` at the style's font ``kind``."""
    per_char = max(text_px("n", kind), 1.0)
    if not text or text_px(text, kind) <= width_px:
        return text
    east_asian = text_px(text, kind) / max(len(text), 1) / per_char
    return textwrap.fill(text, max(8, int(width_px / per_char / max(east_asian, 1.0))))


def axes_px(ax: Axes) -> tuple[float, float]:
    """Width and height of ``ax`` in CSS pixels at the figure's size (before any re-layout)."""
    box = ax.get_position()
    width, height = ax.figure.get_size_inches()
    return box.width * width * CSS_DPI, box.height * height * CSS_DPI


def fit_tick_labels(
    ax: Axes,
    axis: str,
    labels: Sequence[str],
    *,
    keep: Sequence[int] = (),
    length_px: float | None = None,
) -> list[int]:
    """Label positions 0..n-1 of ``axis`` ("x" or "y"), rotating and thinning so none overlap.

    x labels stay level when each fits its slot, else they turn vertical; when slots are
    narrower than a line of text, only every k-th label is shown, plus the positions in ``keep``.
    Returns the labelled positions.
    """
    n = len(labels)
    labels = [str(label) for label in labels]
    if length_px is None:
        length_px = axes_px(ax)[0 if axis == "x" else 1]
    slot = length_px / max(n, 1)
    line = 1.25 * font_px()
    level = axis == "y" or max((text_px(t) for t in labels), default=0) <= 0.92 * slot
    step = 1 if level and axis == "x" else max(1, -(-line // slot))
    step = int(step)
    shown = [i for i in range(n) if i % step == 0 and all(abs(i - k) >= step for k in keep)]
    shown = sorted(set(shown) | {k for k in keep if 0 <= k < n})
    set_ticks = ax.set_xticks if axis == "x" else ax.set_yticks
    set_ticks(range(n), labels=[labels[i] if i in shown else "" for i in range(n)])
    if axis == "x":
        ax.tick_params(axis="x", labelrotation=0 if level else 90)
    return shown


def settle(fig: Figure) -> None:
    """Run the figure's layout engine now, so that axes sizes are the ones shown."""
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)


def cells_fit(ax: Axes, L: int, S: int, sample: str) -> bool:
    """Whether text like ``sample`` at the style's size fits in one cell of an (L, S) grid."""
    width, height = axes_px(ax)
    return text_px(sample, "font.size") * 1.1 <= width / S and 1.3 * font_px("font.size") <= (
        height / L
    )


def describe(target: Figure | Axes, created: bool, text: str) -> None:
    """Alt text on the figure when the chart made it, else on its panel (one per panel); at
    most :data:`MAX_ALT` characters."""
    text = " ".join(text.split())
    if len(text) > MAX_ALT:  # end at the last complete item (a comma, semicolon or full stop)
        cut = text[: MAX_ALT - 2]
        stop = max(cut.rfind(", "), cut.rfind("; "), cut.rfind(". "))
        text = (cut[:stop] if stop > MAX_ALT // 2 else cut).rstrip() + " …"
    set_alt(target.figure if created else target, text)
