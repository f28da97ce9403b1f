"""Measures for a Vision Transformer's attention over image patches.

* :func:`patch_ink`: which patches hold part of the drawing;
* :func:`cls_attention`: the class token's attention over the patches, per layer and head;
* :func:`share_on` and :func:`position_only`: the share of attention on chosen patches, and the
  same for attention that depends on the position only (the control);
  :func:`image_specific` is what is left of a score once its position-only part is taken away;
* :func:`patch_occlusion`: what blanking each patch costs the model (an ablation measure);
* :func:`rank_correlation`: per image, how well two scores over the patches agree in order;
* :func:`grid_distance` and :func:`cosine_similarity`: for the learned position vectors.

Shape legend: N images, H heads, P patches (row by row, as
:func:`~attnbook.models.vit.patchify` cuts them), S = 1 + P tokens, the class token first.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.models.vit import patchify

__all__ = [
    "patch_ink",
    "cls_attention",
    "share_on",
    "position_only",
    "image_specific",
    "patch_occlusion",
    "rank_correlation",
    "grid_distance",
    "cosine_similarity",
]


def patch_ink(images: Tensor, patch_size: int, threshold: float = 0.1) -> Tensor:
    """(N, P) bool: True where a patch's mean pixel value is above ``threshold``.

    Args:
        images: (N, H, W) or (N, C, H, W), pixels in [0, 1], 0 the background.
        patch_size: p, as the model cuts its patches.
        threshold: the mean value above which a patch counts as inked.
    """
    return patchify(images, patch_size).mean(-1) > threshold  # (N, P)


def cls_attention(weights: Sequence[Tensor]) -> Tensor:
    """The class token's attention over the patches, (N, layers, H, P), rows summing to 1.

    Args:
        weights: one (N, H, S, S) tensor per layer, the class token at position 0.

    The class token's weight on itself is left out and the rest renormalised, so that a row
    says how the weight that goes to the image is spread over it.
    """
    rows = torch.stack([w[:, :, 0, 1:] for w in weights], dim=1)  # (N, layers, H, P)
    return rows / rows.sum(-1, keepdim=True)


def share_on(attention: Tensor, mask: Tensor) -> Tensor:
    """The weight that each row of ``attention`` (N, ..., P) puts on the patches where ``mask``
    (N, P) is True; (N, ...)."""
    if (
        mask.dim() != 2
        or attention.shape[0] != mask.shape[0]
        or attention.shape[-1] != mask.shape[-1]
    ):
        raise ValueError(
            f"attention must be (N, ..., P) and mask (N, P); got {tuple(attention.shape)} "
            f"and {tuple(mask.shape)}"
        )
    m = mask.to(attention.dtype).reshape(mask.shape[0], *[1] * (attention.dim() - 2), -1)
    return (attention * m).sum(-1)


def position_only(attention: Tensor) -> Tensor:
    """The control for :func:`share_on`: every image gets the mean attention map of all images
    (N, ..., P), as attention that depends on the patch's position and not its content would.

    Works for any per-patch score (a rollout, an occlusion cost): the image-averaged map.
    """
    return attention.mean(0, keepdim=True).expand_as(attention)


def image_specific(scores: Tensor) -> Tensor:
    """(N, ..., P): ``scores`` minus their image-averaged map (:func:`position_only`), the part
    of each image's map that the position alone does not give."""
    return scores - position_only(scores)


@torch.no_grad()
def patch_occlusion(
    model: nn.Module, images: Tensor, labels: Tensor, patch_size: int, fill: float = 0.0
) -> Tensor:
    """(N, P): how much the log-probability of the label falls when one patch is set to ``fill``.

    Args:
        model: returns ``(logits (N, K), ...)`` for images (N, H, W).
        images: (N, H, W).
        labels: (N,) the classes whose probability is followed.
        patch_size: p.
        fill: the value that replaces the patch's pixels (0: the background).

    The model runs in eval mode (no dropout); its training flag is restored afterwards.
    """
    if images.dim() != 3 or labels.shape != images.shape[:1]:
        raise ValueError(
            f"images must be (N, H, W) and labels (N,); got {tuple(images.shape)} and "
            f"{tuple(labels.shape)}"
        )
    N, H, W = images.shape
    p = patch_size
    rows = torch.arange(N, device=images.device)
    was_training = model.training
    model.eval()
    try:
        base = F.log_softmax(model(images)[0], -1)[rows, labels]  # (N,)
        drops = []
        for k in range((H // p) * (W // p)):
            i, j = divmod(k, W // p)
            blanked = images.clone()
            blanked[:, i * p : (i + 1) * p, j * p : (j + 1) * p] = fill
            drops.append(base - F.log_softmax(model(blanked)[0], -1)[rows, labels])
    finally:
        model.train(was_training)
    return torch.stack(drops, dim=1)  # (N, P)


def _ranks(x: Tensor, mask: Tensor) -> Tensor:
    """Ranks 0, 1, ... within each row's masked entries, ties sharing their mean rank."""
    below = (x[:, None, :] < x[:, :, None]) & mask[:, None, :]  # (N, P, P): j below i
    equal = (x[:, None, :] == x[:, :, None]) & mask[:, None, :]
    return below.sum(-1) + (equal.sum(-1) - 1) / 2  # (N, P)


def rank_correlation(scores: Tensor, reference: Tensor, mask: Tensor | None = None) -> Tensor:
    """Spearman's rank correlation of two scores over each image's patches; (N,).

    Args:
        scores, reference: (N, P).
        mask: (N, P) bool, the patches to compare (default all); rows with fewer than three
            patches, or whose scores are all equal, give NaN.
    """
    if scores.shape != reference.shape or scores.dim() != 2:
        raise ValueError(
            f"scores and reference must be (N, P) of one shape; got {tuple(scores.shape)} "
            f"and {tuple(reference.shape)}"
        )
    mask = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask
    count = mask.sum(-1, keepdim=True).float()  # (N, 1)
    a, b = _ranks(scores, mask).float(), _ranks(reference, mask).float()  # (N, P)
    a = torch.where(mask, a - (a * mask).sum(-1, keepdim=True) / count, 0.0)
    b = torch.where(mask, b - (b * mask).sum(-1, keepdim=True) / count, 0.0)
    r = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))
    return torch.where(count[:, 0] >= 3, r, torch.nan)


def grid_distance(side: int) -> Tensor:
    """(P, P) with P = side², the number of steps (up, down, left, right) between patches."""
    row, col = (
        torch.arange(side * side).div(side, rounding_mode="floor"),
        torch.arange(side * side) % side,
    )
    return (row[:, None] - row[None]).abs() + (col[:, None] - col[None]).abs()


def cosine_similarity(vectors: Tensor) -> Tensor:
    """(P, P): the cosine similarity of every pair of rows of ``vectors`` (P, E)."""
    unit = F.normalize(vectors, dim=-1)  # (P, E)
    return unit @ unit.T
