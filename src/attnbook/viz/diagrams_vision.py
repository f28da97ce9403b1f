"""A diagram of the Vision Transformer's input (chapter 15): an image cut into patches, each patch
flattened and projected to one token, a class token in front, positions added, then the encoder.

A pure function: arguments in, a matplotlib figure out, alt text set in the figure's language,
shown as SVG (:func:`attnbook.viz.style.as_vector`). It shares the boxes, arrows and role colours
of :mod:`attnbook.viz.diagrams`.

Shape legend: N batch, P patches, p the patch side in pixels, E embedding size, as in
:class:`~attnbook.models.vit.VisionTransformer`.
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

__all__ = ["vit_patches"]


def vit_patches(*, image_size: int = 8, patch_size: int = 2, lang: str | None = None) -> Figure:
    """From an image to the encoder's tokens, as :class:`~attnbook.models.vit.VisionTransformer`
    computes it.

    The image (image_size × image_size pixels) is cut row by row into P = (image_size /
    patch_size)² square patches; each is flattened to p·p pixels and projected by one linear
    layer to E features; a learned class token goes in front (P + 1 tokens), a learned position
    vector is added to every token, and the encoder reads them. The class token's output, after a
    LayerNorm, is classified by one linear layer.

    Args:
        image_size: the image's side in pixels, 4 to 16.
        patch_size: the patch side in pixels, dividing ``image_size`` into 2 to 4 patches a side.
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    side = _check_int(image_size, "image_size", 4, 16)
    p = _check_int(patch_size, "patch_size", 1, side)
    if side % p or not 2 <= side // p <= 4:
        raise ValueError(
            f"patch_size must divide image_size = {side} into 2 to 4 patches a side; got {p}"
        )
    n = side // p
    P = n * n
    size = mpl.rcParams["font.size"]
    h = 0.42
    img = 1.5  # inches: the image's side
    height = 0.1 + 0.3 + img + 0.45 + h + 0.34 + h + 0.34 + h + 0.34 + h + 0.1
    fig, ax = _canvas(height)
    x_img, y_img_top = 0.25, height - 0.1 - 0.3
    ax.text(x_img + img / 2, height - 0.1 - 0.15, tr("image {s}×{s}", lang).format(s=side),
            ha="center", va="center", fontsize=size)  # fmt: skip
    pix = img / side
    for r in range(side):  # a pale checker of pixels, patches outlined over it
        for c in range(side):
            shade = 0.12 if (r // p + c // p) % 2 == 0 else 0.22
            ax.add_patch(Rectangle((x_img + c * pix, y_img_top - (r + 1) * pix), pix, pix,
                                   facecolor=to_rgba("#777777", shade), edgecolor="none"))  # fmt: skip
    cell = img / n
    for k in range(P):
        r, c = divmod(k, n)
        ax.add_patch(Rectangle((x_img + c * cell, y_img_top - (r + 1) * cell), cell, cell,
                               facecolor="none", edgecolor=ROLE_COLORS["plain"], linewidth=1.4))  # fmt: skip
        ax.text(x_img + c * cell + 0.05, y_img_top - r * cell - 0.05, str(k), ha="left",
                va="top", fontsize=size, color=_GREY)  # fmt: skip
    # the sequence of flattened patches, one column strip per patch
    x_seq = x_img + img + 0.7
    strip_w = min(0.26, (6.4 - x_seq) / (P + 1))
    y_seq = y_img_top - img / 2
    _arrow(ax, (x_img + img + 0.08, y_seq), (x_seq - 0.08, y_seq))
    ax.text(x_img + img + 0.38, y_seq + 0.12, tr("cut", lang), ha="center", va="bottom",
            fontsize=size, color=_GREY)  # fmt: skip
    strip_h = 0.8
    for k in range(P):
        ax.add_patch(Rectangle((x_seq + k * strip_w + 0.02, y_seq - strip_h / 2), strip_w - 0.04,
                               strip_h, facecolor=to_rgba("#777777", 0.15 + 0.1 * (k % 2)),
                               edgecolor=ROLE_COLORS["plain"], linewidth=1.0))  # fmt: skip
    seq_mid = x_seq + P * strip_w / 2
    ax.text(seq_mid, y_seq + strip_h / 2 + 0.15,
            tr("{P} patches, flattened: (N, {P}, {pp})", lang).format(P=P, pp=p * p),
            ha="center", va="center", fontsize=size)  # fmt: skip
    cx = 3.25
    y_proj = y_img_top - img - 0.45 - h / 2
    _arrow(ax, (seq_mid, y_seq - strip_h / 2), (seq_mid, y_proj + h / 2))
    _box(ax, cx + 0.9, y_proj, 3.6, h,
         tr("linear projection, one token per patch: (N, {P}, E)", lang).format(P=P), "linear")  # fmt: skip
    y_cls = y_proj - h - 0.34
    _arrow(ax, (cx + 0.9, y_proj - h / 2), (cx + 0.9, y_cls + h / 2))
    _box(ax, cx + 0.9, y_cls, 3.6, h,
         tr("class token in front, + positions: (N, {n}, E)", lang).format(n=P + 1), "plain")  # fmt: skip
    _box(ax, 0.95, y_cls, 1.5, h, tr("class token", lang), "attention")
    _arrow(ax, (1.7, y_cls), (cx + 0.9 - 1.8, y_cls))
    y_enc = y_cls - h - 0.34
    _arrow(ax, (cx + 0.9, y_cls - h / 2), (cx + 0.9, y_enc + h / 2))
    _box(ax, cx + 0.9, y_enc, 3.6, h, tr("encoder, pre-LN × num_layers", lang), "attention")
    y_out = y_enc - h - 0.34
    _arrow(ax, (cx + 0.9, y_enc - h / 2), (cx + 0.9, y_out + h / 2))
    _box(ax, cx + 0.9, y_out, 3.6, h,
         tr("class token's output → LayerNorm → linear → class", lang), "linear")  # fmt: skip
    sentences = [
        tr("Diagram of a Vision Transformer's input, top to bottom.", lang),
        tr("An image of {s} by {s} pixels is cut, row by row, into {P} square patches of {p} by "
           "{p} pixels, numbered 0 to {last}.", lang).format(s=side, P=P, p=p, last=P - 1),
        tr("Each patch is flattened to {pp} pixels and projected by one linear layer to a "
           "token of E features.", lang).format(pp=p * p),
        tr("A learned class token goes in front, a learned position vector is added to each of "
           "the {n} tokens, and the encoder reads them.", lang).format(n=P + 1),
        tr("The class token's output, after a LayerNorm, is classified by one linear layer.",
           lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)
