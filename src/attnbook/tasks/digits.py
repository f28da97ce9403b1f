"""Handwritten digits, 8x8 pixels: the image task of Part V's Vision Transformer chapter.

scikit-learn ships the 1,797 images of the UCI optical digits set (``sklearn.datasets.load_digits``,
no download): 8x8 grey levels from 0 to 16, about 180 per digit. :func:`digit_split` scales
them to [0, 1] and holds out the same fraction of every digit (a stratified split), chosen by a
seed; :func:`digit_batch` draws training batches for :func:`attnbook.train.fit`;
:func:`nearest_neighbour` is the baseline that needs no training at all.

The set is the test file of the UCI data, written by 13 people: a random split puts the same
writers' digits on both sides, so a held-out digit usually has a near twin in the training set.

Shape legend: N images, H = W = 8 pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = [
    "DigitSplit",
    "digit_split",
    "digit_batch",
    "nearest_neighbour",
    "IMAGE_SIZE",
    "NUM_CLASSES",
]

IMAGE_SIZE = 8
NUM_CLASSES = 10


@dataclass(frozen=True)
class DigitSplit:
    """Training and held-out images with their labels."""

    train_images: Tensor  # (N_train, 8, 8), float32 in [0, 1]
    train_labels: Tensor  # (N_train,), int64 digits 0-9
    test_images: Tensor  # (N_test, 8, 8)
    test_labels: Tensor  # (N_test,)


def digit_split(test_fraction: float = 0.25, seed: int = 0) -> DigitSplit:
    """The digits, with ``test_fraction`` of each digit's images held out, chosen by ``seed``.

    Args:
        test_fraction: in (0, 1); each digit contributes ``round(test_fraction * count)``
            images to the test set, so both sets have the digits in the same proportions.
        seed: seeds the choice of held-out images.

    Returns:
        A :class:`DigitSplit`; within each set the images keep the order of the original data.
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)):
        raise TypeError(
            f"test_fraction must be a number in (0, 1); got {type(test_fraction).__name__}"
        )
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction!r}")
    from sklearn.datasets import load_digits  # a heavy import, only when the digits are needed

    data = load_digits()
    images = torch.tensor(data.images, dtype=torch.float32) / 16.0  # (1797, 8, 8)
    labels = torch.tensor(data.target, dtype=torch.long)  # (1797,)
    generator = torch.Generator().manual_seed(seed)
    held = torch.zeros(len(labels), dtype=torch.bool)  # (1797,)
    for digit in range(NUM_CLASSES):
        where = (labels == digit).nonzero()[:, 0]  # this digit's image indices
        order = where[torch.randperm(len(where), generator=generator)]
        held[order[: round(test_fraction * len(where))]] = True
    return DigitSplit(images[~held], labels[~held], images[held], labels[held])


def digit_batch(
    batch_size: int, generator: torch.Generator, split: DigitSplit
) -> tuple[Tensor, Tensor]:
    """``batch_size`` training images (N, 8, 8) and labels (N,), drawn with replacement.

    Draws its randomness from ``generator`` only, as :func:`attnbook.train.fit` requires.
    """
    pick = torch.randint(len(split.train_labels), (batch_size,), generator=generator)  # (N,)
    return split.train_images[pick], split.train_labels[pick]


def nearest_neighbour(split: DigitSplit) -> Tensor:
    """The label of each held-out image's nearest training image (Euclidean, over the 64
    pixels): a one-nearest-neighbour classifier, no training. Returns (N_test,) int64."""
    distances = torch.cdist(split.test_images.flatten(1), split.train_images.flatten(1))
    return split.train_labels[distances.argmin(-1)]  # (N_test,)
