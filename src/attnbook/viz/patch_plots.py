"""Figures for a Vision Transformer: maps over an image's patches, and a position-similarity grid.

* :func:`patch_maps`: panels of one score per patch (a head's attention, a rollout, an occlusion
  cost), each drawn over the image with the drawing's outline on top;
* :func:`similarity_grid`: for every patch position, a small map of its position vector's cosine
  similarity with every other position's (the figure of Dosovitskiy et al. 2021).

Shape legend: P = side² patches, row by row; H x W pixels.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from torch import Tensor

from attnbook.i18n import tr
from attnbook.viz.layout import MAX_WIDTH
from attnbook.viz.style import set_alt

__all__ = ["patch_maps", "similarity_grid"]

OUTLINE = "#D55E00"  # Okabe–Ito vermilion: visible on white and on dark blue


def _side(P: int, what: str) -> int:
    side = round(P**0.5)
    if side * side != P:
        raise ValueError(f"{what} must have a square number of patches; got {P}")
    return side


def _frame(ax) -> None:
    """No ticks, a thin frame on all four sides (the style draws only two)."""
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_linewidth(0.8)
        spine.set_color("dimgray")


def _top(values: Tensor, k: int = 3) -> str:
    side = _side(values.numel(), "a map")
    top = values.flatten().topk(min(k, values.numel())).indices.tolist()
    return ", ".join(f"row {i // side} column {i % side}" for i in top)


def patch_maps(
    maps: Mapping[str, Tensor],
    image: Tensor,
    *,
    ncols: int = 4,
    title: str = "",
    vmax: Mapping[str, float] | None = None,
    lang: str | None = None,
) -> Figure:
    """One panel per map: its P values as a side x side grid of cells over the image, coloured
    from 0 to the panel's scale (its own largest value, named in its title, unless ``vmax`` sets
    it), the image's strokes outlined.

    Args:
        maps: panel title -> (P,) non-negative scores, one per patch.
        image: (H, W) pixels in [0, 1]; drawn as the first panel and outlined in every other.
        ncols: panels per row.
        title: the figure's title.
        vmax: panel title -> the top of its colour scale, for panels that should share one
            (for example all heads of a layer); panels not named keep their own largest value.
    """
    if image.dim() != 2:
        raise ValueError(f"image must be (H, W); got shape {tuple(image.shape)}")
    if not maps:
        raise ValueError("patch_maps needs at least one map")
    img = image.detach().float().cpu()
    H, W = img.shape
    values = {name: torch.as_tensor(v).detach().float().cpu().flatten() for name, v in maps.items()}
    for name, v in values.items():
        _side(v.numel(), f"map {name!r}")
    n = 1 + len(values)
    nrows = -(-n // ncols)
    side_in = MAX_WIDTH / ncols
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(MAX_WIDTH, nrows * (side_in + 0.3) + (0.3 if title else 0)),
        layout="constrained", squeeze=False,
    )  # fmt: skip
    panels = axes.flatten()
    extent = (-0.5, W - 0.5, H - 0.5, -0.5)
    panels[0].imshow(img.numpy(), cmap="gray_r", vmin=0, vmax=1)
    panels[0].set_title(tr("image", lang))
    scales = dict(vmax or {})
    unknown = set(scales) - set(values)
    if unknown:
        raise ValueError(f"vmax names panels that are not in maps: {sorted(unknown)}")
    described = []
    largest = tr("max", lang)
    for ax, (name, v) in zip(panels[1:], values.items()):
        side = _side(v.numel(), name)
        high = float(v.max()) if float(v.max()) > 0 else 1.0
        top = float(scales.get(name, high))
        ax.imshow(v.reshape(side, side).numpy(), cmap="Blues", vmin=0, vmax=top, extent=extent)
        ax.contour(img.numpy(), levels=[0.35], colors=OUTLINE, linewidths=1.2)
        ax.set_title(f"{tr(name, lang)} ({largest} {high:.2f})")
        described.append(f"{name}: largest {high:.2f} at {_top(v)}")
    for ax in panels:
        _frame(ax)
    for ax in panels[n:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(tr(title, lang))
    return set_alt(
        fig,
        f"{title + '. ' if title else ''}An {H}x{W} image and {len(values)} maps over its "
        f"patches, {'some sharing a colour scale' if scales else 'each on its own scale'}, with "
        f"the image's strokes outlined. " + "; ".join(described) + ".",
    )


def similarity_grid(similarity: Tensor, *, title: str = "", lang: str | None = None) -> Figure:
    """A side x side grid of small maps: the map at row i, column j shows the cosine similarity
    of patch (i, j)'s position vector with every position's (its own cell is 1); -1 to 1."""
    s = torch.as_tensor(similarity).detach().float().cpu()
    if s.dim() != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"similarity must be (P, P); got shape {tuple(s.shape)}")
    side = _side(s.shape[0], "similarity")
    size = min(MAX_WIDTH - 1.2, 5.2)
    fig, axes = plt.subplots(
        side, side, figsize=(size + 1.2, size + (0.4 if title else 0.1)), layout="constrained",
        squeeze=False,
    )  # fmt: skip
    image = None
    for k, ax in enumerate(axes.flatten()):
        image = ax.imshow(s[k].reshape(side, side).numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
        _frame(ax)
    for i in range(side):
        axes[i, 0].set_ylabel(tr("row {i}", lang).format(i=i))
        axes[-1, i].set_xlabel(tr("column {i}", lang).format(i=i))
    fig.colorbar(image, ax=axes, fraction=0.046, pad=0.02, label=tr("cosine similarity", lang))
    if title:
        fig.suptitle(tr(title, lang))
    off = ~torch.eye(side * side, dtype=torch.bool)
    return set_alt(
        fig,
        f"{title + '. ' if title else ''}A {side} by {side} grid of small maps, one per patch "
        f"position; each shows that position vector's cosine similarity with every position's, "
        f"from -1 (blue) to 1 (red). Off the diagonal the similarities range from "
        f"{float(s[off].min()):.2f} to {float(s[off].max()):.2f}, mean {float(s[off].mean()):.2f}.",
    )
