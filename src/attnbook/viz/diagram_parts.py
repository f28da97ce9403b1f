"""The parts every architecture diagram is drawn with: the canvas, boxes, arrows, role colours.

Used by :mod:`attnbook.viz.diagrams` and :mod:`attnbook.viz.diagrams_lookup`. A canvas is one
axes whose data units are inches, so boxes and text keep their size whatever the figure's
height; each role (query, key, value, mask …) has one colour in every diagram of the book.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from attnbook.viz.layout import OKABE_ITO
from attnbook.viz.style import as_vector, set_alt

__all__ = ["ROLE_COLORS", "GREY", "WIDTH", "canvas", "box", "arrow", "describe", "check_int"]

#: One colour per role, the same in every diagram.
ROLE_COLORS = {
    "query": OKABE_ITO["vermilion"],
    "key": OKABE_ITO["blue"],
    "value": OKABE_ITO["bluish green"],
    "mask": OKABE_ITO["reddish purple"],
    "attention": OKABE_ITO["orange"],
    "linear": OKABE_ITO["sky blue"],
    "norm": OKABE_ITO["yellow"],
    "plain": "#777777",
}
GREY = "#333333"  # labels and shapes beside the boxes
WIDTH = 6.5  # inches: the book's figure width


def canvas(height: float, width: float = WIDTH) -> tuple[Figure, Axes]:
    """A figure whose one axes spans it, in inch units, y pointing up, no frame."""
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return fig, ax


def box(ax: Axes, x: float, y: float, w: float, h: float, text: str, role: str = "plain",
        *, dashed: bool = False) -> tuple[float, float, float, float]:  # fmt: skip
    """A rounded box centred at (x, y), tinted by its role; returns (left, right, bottom, top)."""
    color = ROLE_COLORS[role]
    edge = OKABE_ITO["black"] if role == "norm" else color  # yellow edges are faint on white
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.06",
            facecolor=to_rgba(color, 0.18),
            edgecolor=edge,
            linewidth=1.4,
            linestyle=(0, (4, 2)) if dashed else "-",
        )  # fmt: skip
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=mpl.rcParams["font.size"])
    return x - w / 2, x + w / 2, y - h / 2, y + h / 2


def arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], label: str = "",
          *, side: str = "right", dashed: bool = False, color: str = "black") -> None:  # fmt: skip
    """An arrow from ``start`` to ``end``, with ``label`` (a shape) beside its middle."""
    ax.annotate(
        "", xy=end, xytext=start,
        arrowprops=dict(arrowstyle="-|>", color=color, linewidth=1.2, shrinkA=0, shrinkB=0,
                        mutation_scale=12, linestyle="--" if dashed else "-"),
    )  # fmt: skip
    if label:
        mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
        dx = 0.1 if side == "right" else -0.1
        ax.text(mx + dx, my, label, ha="left" if side == "right" else "right", va="center",
                fontsize=mpl.rcParams["font.size"], color=GREY)  # fmt: skip


def describe(fig: Figure, sentences: list[str], lang: str) -> Figure:
    """Set ``fig``'s alt text from ``sentences`` (joined for ``lang``) and show it as SVG."""
    joiner = "" if lang == "zh" else " "
    set_alt(fig, joiner.join(sentences))
    as_vector(fig)  # boxes and arrows: shown as SVG, sharp at any zoom
    return fig


def check_int(value: object, name: str, low: int, high: int) -> int:
    """``value`` if it is an int in [low, high]; else a TypeError or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}; got {value}")
    return value
