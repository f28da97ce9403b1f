"""A small Vision Transformer (Dosovitskiy et al. 2021) for 8x8 digits, and two baselines.

An image is cut into square patches (:func:`patchify`), each patch's pixels are flattened and
projected to ``d_model``, a learned *class token* is put in front, a learned position vector is
added to every token, and an :class:`~attnbook.transformer.Encoder` reads the sequence. The
class token's final vector, after a layer norm, gives the logits. Nothing in the architecture
says that two patches are neighbours: whatever the position vectors learn about the grid, they
learn from the data.

The baselines of the chapter have the same interface, ``model(images) -> (logits, weights)``:
:func:`mlp_classifier` (all pixels, fully connected) and :class:`SmallCNN` (two convolutions,
which know about neighbourhoods by construction). :func:`classification_loss` trains any of them
with :func:`attnbook.train.fit`.

Shape legend: N images, C channels, H x W pixels, p patch size, P = (H/p)(W/p) patches,
E ``d_model``, Hd heads, K = 10 classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.transformer import Encoder

__all__ = [
    "ViTConfig",
    "VisionTransformer",
    "patchify",
    "mlp_classifier",
    "SmallCNN",
    "classification_loss",
]


def _as_nchw(images: object, name: str = "images") -> Tensor:
    """(N, H, W) or (N, C, H, W) floats -> (N, C, H, W)."""
    if not isinstance(images, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(images).__name__}")
    if images.dim() not in (3, 4) or not images.dtype.is_floating_point:
        raise ValueError(
            f"{name} must be floats of shape (N, H, W) or (N, C, H, W); got shape "
            f"{tuple(images.shape)} and dtype {images.dtype}"
        )
    return images[:, None] if images.dim() == 3 else images


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """Cut images into non-overlapping square patches, row by row, each flattened.

    Args:
        images: (N, H, W) or (N, C, H, W); H and W divisible by ``patch_size``.
        patch_size: p.

    Returns:
        The patches, shape (N, P, C*p*p). Patch ``i * (W/p) + j`` is the one at patch row
        ``i``, column ``j``; its pixels are ordered channel, row, column.
    """
    x = _as_nchw(images)
    N, C, H, W = x.shape
    if isinstance(patch_size, bool) or not isinstance(patch_size, int) or patch_size < 1:
        raise ValueError(f"patch_size must be a positive integer; got {patch_size!r}")
    if H % patch_size or W % patch_size:
        raise ValueError(f"image size {H}x{W} is not divisible by patch_size {patch_size}")
    p = patch_size
    x = x.reshape(N, C, H // p, p, W // p, p)  # (N, C, H/p, p, W/p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (N, H/p, W/p, C, p, p)
    return x.reshape(N, (H // p) * (W // p), C * p * p)  # (N, P, C*p*p)


@dataclass
class ViTConfig:
    """Sizes of a :class:`VisionTransformer`."""

    image_size: int = 8  # H = W
    patch_size: int = 2  # p; must divide image_size
    channels: int = 1  # C
    num_classes: int = 10  # K
    d_model: int = 64  # E
    nhead: int = 4  # Hd; must divide d_model
    num_layers: int = 2  # encoder blocks
    dim_feedforward: int = 128  # the feed-forward hidden size
    dropout: float = 0.0  # in the encoder blocks and after the embeddings

    @property
    def num_patches(self) -> int:
        """P."""
        return (self.image_size // self.patch_size) ** 2


class VisionTransformer(nn.Module):
    """Patches, a class token, learned positions, a pre-LN encoder and a linear head.

    Args:
        config: the sizes; see :class:`ViTConfig`.

    Attributes:
        patch_embed: ``nn.Linear(C*p*p, E)``, applied to each flattened patch.
        cls_token: (1, 1, E) parameter, the token whose output is classified.
        positions: (1 + P, E) parameter, one vector per position, the class token's first.
        encoder: an :class:`~attnbook.transformer.Encoder` (pre-LN, with a final layer norm).
        head: ``nn.Linear(E, K)``.
    """

    def __init__(self, config: ViTConfig) -> None:
        super().__init__()
        c = config
        for name in (
            "image_size",
            "patch_size",
            "channels",
            "num_classes",
            "d_model",
            "num_layers",
        ):
            value = getattr(c, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if c.image_size % c.patch_size:
            raise ValueError(
                f"patch_size must divide image_size; got {c.patch_size} and {c.image_size}"
            )
        self.config = c
        self.patch_embed = nn.Linear(c.channels * c.patch_size**2, c.d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c.d_model))
        self.positions = nn.Parameter(torch.empty(1 + c.num_patches, c.d_model))
        nn.init.normal_(self.positions, std=0.02)
        nn.init.normal_(self.cls_token, std=0.02)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = Encoder(
            c.num_layers, d_model=c.d_model, nhead=c.nhead, dim_feedforward=c.dim_feedforward,
            dropout=c.dropout, activation="gelu", norm_first=True,
        )  # fmt: skip
        self.head = nn.Linear(c.d_model, c.num_classes)

    def embed(self, images: Tensor) -> Tensor:
        """The encoder's input (N, 1 + P, E): class token, then patches, each plus its position."""
        x = _as_nchw(images)
        c = self.config
        if tuple(x.shape[1:]) != (c.channels, c.image_size, c.image_size):
            raise ValueError(
                f"images must be (N, {c.channels}, {c.image_size}, {c.image_size})"
                f"{' or (N, H, W)' if c.channels == 1 else ''}; got {tuple(images.shape)}"
            )
        patches = self.patch_embed(patchify(x, c.patch_size))  # (N, P, E)
        cls = self.cls_token.expand(x.size(0), -1, -1)  # (N, 1, E)
        return self.dropout(torch.cat([cls, patches], dim=1) + self.positions)  # (N, 1 + P, E)

    def forward(
        self, images: Tensor, need_weights: bool = False
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Classify images (N, H, W) or (N, C, H, W).

        Returns:
            ``(logits, weights)``: logits (N, K); weights a list with one (N, Hd, 1 + P, 1 + P)
            tensor per layer (position 0 is the class token), or ``None`` if not
            ``need_weights``.
        """
        hidden, weights = self.encoder(self.embed(images), need_weights=need_weights)
        return self.head(hidden[:, 0]), weights  # (N, K)


class _Classifier(nn.Module):
    """Wraps a network so that it returns ``(logits, None)`` like :class:`VisionTransformer`."""

    def __init__(self, net: nn.Module, flatten: bool) -> None:
        super().__init__()
        self.net, self.flatten = net, flatten

    def forward(self, images: Tensor) -> tuple[Tensor, None]:
        x = _as_nchw(images)  # (N, C, H, W)
        return self.net(x.flatten(1) if self.flatten else x), None  # (N, K)


def mlp_classifier(
    image_size: int = 8, channels: int = 1, hidden: int = 128, num_classes: int = 10
) -> nn.Module:
    """Pixels (N, C*H*W) -> ``hidden`` ReLU units -> logits (N, K); returns ``(logits, None)``."""
    net = nn.Sequential(
        nn.Linear(channels * image_size**2, hidden), nn.ReLU(), nn.Linear(hidden, num_classes)
    )
    return _Classifier(net, flatten=True)


class SmallCNN(_Classifier):
    """Two 3x3 convolutions (``width`` and ``2 * width`` channels, ReLU, 2x2 max-pooling after
    each), then a linear layer: 8x8 -> 4x4 -> 2x2 -> logits. Returns ``(logits, None)``.

    Args:
        channels: C.
        width: the first convolution's output channels.
        num_classes: K.
        image_size: H = W, divisible by 4.
    """

    def __init__(
        self, channels: int = 1, width: int = 16, num_classes: int = 10, image_size: int = 8
    ) -> None:
        if image_size % 4:
            raise ValueError(f"image_size must be divisible by 4; got {image_size}")
        net = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(2 * width * (image_size // 4) ** 2, num_classes),
        )  # fmt: skip
        super().__init__(net, flatten=False)


def classification_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Cross-entropy of ``model(images)[0]`` (N, K) against ``labels`` (N,); for ``fit``."""
    images, labels = batch
    logits, _ = model(images)
    return F.cross_entropy(logits, labels)
