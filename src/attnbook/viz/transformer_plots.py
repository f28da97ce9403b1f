"""Pure plotting functions for chapter 5: position tables and gradient norms per layer.

Tensors in, a matplotlib figure out; no widgets, no global state. Shape legend: L positions,
E embedding size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import torch
from matplotlib.figure import Figure
from torch import Tensor

from attnbook.i18n import tr
from attnbook.viz.layout import MAX_WIDTH
from attnbook.viz.style import set_alt


def _series_ends(norms: Mapping[str, Sequence[float] | Tensor], xs: Sequence[float], x: str) -> str:
    """ "label: v at x=a, w at x=b" per series, for alt text."""
    parts = []
    for label, values in norms.items():
        values = torch.as_tensor(values, dtype=torch.float64)
        parts.append(
            f"{label}: {float(values[0]):.3g} at {x} {xs[0]:g}, "
            f"{float(values[-1]):.3g} at {x} {xs[len(values) - 1]:g}"
        )
    return "; ".join(parts)


def _table(table: Tensor) -> Tensor:
    table = torch.as_tensor(table).detach().double().cpu()
    if table.dim() != 2:
        raise ValueError(f"table must be a 2-D (L, E) tensor; got shape {tuple(table.shape)}")
    return table


def positional_image(table: Tensor, *, title: str, lang: str | None = None) -> Figure:
    """The (L, E) position table as an image: one row per position, one column per dimension."""
    t = _table(table)
    fig, ax = plt.subplots(figsize=(MAX_WIDTH, 3.6), layout="constrained")
    image = ax.imshow(t.numpy(), cmap="RdBu", vmin=-1, vmax=1, aspect="auto",
                      interpolation="nearest")  # fmt: skip
    ax.set_xlabel(tr("dimension (column of the table)", lang))
    ax.set_ylabel(tr("position", lang))
    ax.set_title(tr(title, lang))
    fig.colorbar(image, ax=ax, label=tr("value", lang))
    L, E = t.shape
    set_alt(
        fig,
        f"Heat-map of a {L}×{E} position table ‘{title}’ (rows: position, columns: dimension), "
        f"in a diverging map from −1 (red) to 1 (blue); values from {float(t.min()):.2f} to "
        f"{float(t.max()):.2f}. Look for how fast each column changes down the positions.",
    )
    return fig


def dot_product_matrix(table: Tensor, *, title: str, lang: str | None = None) -> Figure:
    """The (L, L) matrix of dot products between the rows of a position table."""
    t = _table(table)
    fig, ax = plt.subplots(figsize=(4.8, 4.0), layout="constrained")
    dots = t @ t.T  # (L, L)
    image = ax.imshow(dots.numpy(), cmap="viridis", interpolation="nearest")
    ax.set_xlabel(tr("position q", lang))
    ax.set_ylabel(tr("position p", lang))
    ax.set_title(tr(title, lang))
    fig.colorbar(image, ax=ax, label="PE(p) · PE(q)")
    L = t.size(0)
    spread = max(float(dots.diagonal(k).max() - dots.diagonal(k).min()) for k in range(-L + 1, L))
    set_alt(
        fig,
        f"Heat-map of the {L}×{L} dot products PE(p) · PE(q) ‘{title}’ (rows: p, columns: q), "
        f"viridis from {float(dots.min()):.2f} to {float(dots.max()):.2f}; the diagonal "
        f"(p = q) averages {float(dots.diagonal().mean()):.2f}, the rest "
        f"{float((dots.sum() - dots.diagonal().sum()) / max(L * L - L, 1)):.2f}; along any one "
        "diagonal the values differ by "
        + ("less than 0.001." if spread < 1e-3 else f"up to {spread:.3f}."),
    )
    return fig


def dot_product_profiles(
    tables: Mapping[str, Tensor],
    position: int,
    *,
    title: str | None = None,
    lang: str | None = None,
) -> Figure:
    """For one position p, the dot product of its encoding with every position q, per table."""
    n = len(tables)
    fig, axes = plt.subplots(
        n, 1, figsize=(MAX_WIDTH, 2.2 * n + 0.7), squeeze=False, sharex=True, layout="constrained"
    )
    described = []
    for ax, (label, table) in zip(axes[:, 0], tables.items()):
        t = _table(table)
        if not 0 <= position < t.size(0):
            raise ValueError(f"position must lie in [0, {t.size(0) - 1}]; got {position}")
        dots = t @ t[position]  # (L,)
        ax.plot(range(t.size(0)), dots.numpy(), color="C0")
        ax.axvline(position, color="black", linestyle=":", label=f"p = {position}")
        ax.set_ylabel("PE(p) · PE(q)")
        ax.set_title(tr(label, lang))
        ax.legend(loc="upper right")
        others = torch.cat([dots[:position], dots[position + 1 :]])
        described.append(
            f"{label}: {float(dots[position]):.2f} at q = p, the other positions from "
            f"{float(others.min()):.2f} to {float(others.max()):.2f}"
            if len(others)
            else f"{label}: {float(dots[position]):.2f} at q = p"
        )
    axes[-1, 0].set_xlabel(tr("position q", lang))
    fig.suptitle(
        tr(title, lang)
        if title
        else tr("Dot products of position {p} with every position", lang).format(p=position)
    )
    set_alt(
        fig,
        f"{n} stacked line charts: the dot product of position p = {position}'s encoding with "
        f"every position q, one panel per table. " + "; ".join(described) + ".",
    )
    return fig


def dot_product_by_offset(
    table: Tensor, *, title: str, max_offset: int | None = None, lang: str | None = None
) -> Figure:
    """Every pair (p, q) as a point at offset q - p: one curve if only the distance matters."""
    t = _table(table)
    L = t.size(0)
    dots = t @ t.T  # (L, L)
    offset = torch.arange(L)[None, :] - torch.arange(L)[:, None]  # (L, L), q - p
    if max_offset is not None:
        keep = offset.abs() <= max_offset
        dots, offset = dots[keep], offset[keep]
    fig, ax = plt.subplots(figsize=(MAX_WIDTH, 3.2), layout="constrained")
    ax.scatter(offset.flatten().numpy(), dots.flatten().numpy(), s=4, alpha=0.4)
    ax.set_xlabel(tr("offset q − p", lang))
    ax.set_ylabel("PE(p) · PE(q)")
    ax.set_title(tr(title, lang))
    offset, dots = offset.flatten(), dots.flatten()
    spread = max(float(dots[offset == k].max() - dots[offset == k].min()) for k in offset.unique())
    set_alt(
        fig,
        f"Scatter chart ‘{title}’: {len(dots)} pairs (p, q) as points at offset q − p "
        f"({int(offset.min())} to {int(offset.max())}) against PE(p) · PE(q) "
        f"({float(dots.min()):.2f} to {float(dots.max()):.2f}). At each offset the points lie "
        + (
            "within 0.001 of one another: one curve of the offset."
            if spread < 1e-3
            else f"up to {spread:.3f} apart."
        ),
    )
    return fig


def layer_gradient_norms(
    norms: Mapping[str, Sequence[float] | Tensor],
    *,
    title: str,
    ylabel: str,
    lang: str | None = None,
) -> Figure:
    """One line per configuration: a gradient norm for each layer, layer 1 at the input."""
    fig, ax = plt.subplots(figsize=(MAX_WIDTH, 3.4), layout="constrained")
    for label, values in norms.items():
        values = torch.as_tensor(values, dtype=torch.float64)
        ax.plot(
            range(1, len(values) + 1),
            values.numpy(),
            marker="o",
            markersize=3,
            label=tr(label, lang),
        )
    ax.set_xlabel(tr("layer (1 = nearest the input)", lang))
    ax.set_ylabel(tr(ylabel, lang))
    ax.set_ylim(bottom=0)
    ax.set_title(tr(title, lang))
    ax.legend()
    depth = max(len(values) for values in norms.values())
    set_alt(
        fig,
        f"Line chart ‘{title}’: {ylabel} of each layer (1 = nearest the input) for "
        f"{len(norms)} configurations. "
        + _series_ends(norms, list(range(1, depth + 1)), "layer")
        + ".",
    )
    return fig


def norms_against_depth(
    depths: Sequence[int],
    norms: Mapping[str, Sequence[float] | Tensor],
    *,
    title: str,
    ylabel: str,
    reference: str | None = None,
    lang: str | None = None,
) -> Figure:
    """Log-log plot of a norm against the number of layers, with an optional 1/sqrt(L) guide.

    ``reference`` names a key of ``norms``; a dashed 1/sqrt(L) line is drawn through its first
    point.
    """
    fig, ax = plt.subplots(figsize=(MAX_WIDTH, 3.4), layout="constrained")
    depth = torch.as_tensor(depths, dtype=torch.float64)
    for label, values in norms.items():
        ax.plot(
            depth.numpy(),
            torch.as_tensor(values).double().numpy(),
            marker="o",
            label=tr(label, lang),
        )
    if reference is not None:
        start = float(torch.as_tensor(norms[reference])[0])
        guide = start * (depth[0] / depth).sqrt()
        ax.plot(depth.numpy(), guide.numpy(), linestyle="--", color="grey", label="∝ 1/√L")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(depths), labels=[str(d) for d in depths])
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel(tr("number of layers L", lang))
    ax.set_ylabel(tr(ylabel, lang))
    ax.set_title(tr(title, lang))
    ax.legend()
    set_alt(
        fig,
        f"Log-log line chart ‘{title}’: {ylabel} against the number of layers L"
        + (", with a dashed 1/√L guide" if reference is not None else "")
        + ". "
        + _series_ends(norms, list(depths), "L")
        + ".",
    )
    return fig
