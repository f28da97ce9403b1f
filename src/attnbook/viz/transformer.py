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


def _table(table: Tensor) -> Tensor:
    table = torch.as_tensor(table).detach().double().cpu()
    if table.dim() != 2:
        raise ValueError(f"table must be a 2-D (L, E) tensor; got shape {tuple(table.shape)}")
    return table


def positional_image(table: Tensor, *, title: str) -> Figure:
    """The (L, E) position table as an image: one row per position, one column per dimension."""
    t = _table(table)
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    image = ax.imshow(t.numpy(), cmap="RdBu", vmin=-1, vmax=1, aspect="auto",
                      interpolation="nearest")  # fmt: skip
    ax.set_xlabel("dimension (column of the table)")
    ax.set_ylabel("position")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="value")
    return fig


def dot_product_matrix(table: Tensor, *, title: str) -> Figure:
    """The (L, L) matrix of dot products between the rows of a position table."""
    t = _table(table)
    fig, ax = plt.subplots(figsize=(4.6, 3.8))
    image = ax.imshow((t @ t.T).numpy(), cmap="viridis", interpolation="nearest")
    ax.set_xlabel("position q")
    ax.set_ylabel("position p")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="PE(p) · PE(q)")
    return fig


def dot_product_profiles(
    tables: Mapping[str, Tensor], position: int, *, title: str | None = None
) -> Figure:
    """For one position p, the dot product of its encoding with every position q, per table."""
    fig, axes = plt.subplots(1, len(tables), figsize=(4.2 * len(tables), 3.2), squeeze=False)
    for ax, (label, table) in zip(axes[0], tables.items()):
        t = _table(table)
        if not 0 <= position < t.size(0):
            raise ValueError(f"position must lie in [0, {t.size(0) - 1}]; got {position}")
        ax.plot(range(t.size(0)), (t @ t[position]).numpy(), color="C0")
        ax.axvline(position, color="C3", linestyle=":", label=f"p = {position}")
        ax.set_xlabel("position q")
        ax.set_ylabel("PE(p) · PE(q)")
        ax.set_title(label)
        ax.legend(loc="upper right")
    fig.suptitle(title or f"Dot products of position {position} with every position")
    fig.tight_layout()
    return fig


def dot_product_by_offset(table: Tensor, *, title: str, max_offset: int | None = None) -> Figure:
    """Every pair (p, q) as a point at offset q - p: one curve if only the distance matters."""
    t = _table(table)
    L = t.size(0)
    dots = t @ t.T  # (L, L)
    offset = torch.arange(L)[None, :] - torch.arange(L)[:, None]  # (L, L), q - p
    if max_offset is not None:
        keep = offset.abs() <= max_offset
        dots, offset = dots[keep], offset[keep]
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.scatter(offset.flatten().numpy(), dots.flatten().numpy(), s=4, alpha=0.4)
    ax.set_xlabel("offset q − p")
    ax.set_ylabel("PE(p) · PE(q)")
    ax.set_title(title)
    return fig


def layer_gradient_norms(
    norms: Mapping[str, Sequence[float] | Tensor], *, title: str, ylabel: str
) -> Figure:
    """One line per configuration: a gradient norm for each layer, layer 1 at the input."""
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for label, values in norms.items():
        values = torch.as_tensor(values, dtype=torch.float64)
        ax.plot(range(1, len(values) + 1), values.numpy(), marker="o", markersize=3, label=label)
    ax.set_xlabel("layer (1 = nearest the input)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend()
    return fig


def norms_against_depth(
    depths: Sequence[int],
    norms: Mapping[str, Sequence[float] | Tensor],
    *,
    title: str,
    ylabel: str,
    reference: str | None = None,
) -> Figure:
    """Log-log plot of a norm against the number of layers, with an optional 1/sqrt(L) guide.

    ``reference`` names a key of ``norms``; a dashed 1/sqrt(L) line is drawn through its first
    point.
    """
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    depth = torch.as_tensor(depths, dtype=torch.float64)
    for label, values in norms.items():
        ax.plot(depth.numpy(), torch.as_tensor(values).double().numpy(), marker="o", label=label)
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
    ax.set_xlabel("number of layers L")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    return fig
