"""The digits split: every image in exactly one set, each digit held out in proportion, the
choice reproducible from the seed, and batches drawn from the training images only."""

import pytest
import torch

from attnbook.tasks.digits import digit_batch, digit_split, nearest_neighbour

SPLIT = digit_split(0.25, seed=0)


def test_every_image_is_in_exactly_one_set_and_pixels_are_scaled():
    assert len(SPLIT.train_labels) + len(SPLIT.test_labels) == 1797
    assert SPLIT.train_images.shape[1:] == (8, 8) and SPLIT.test_images.dtype == torch.float32
    assert SPLIT.train_images.min() == 0 and SPLIT.train_images.max() == 1
    train = {tuple(x.flatten().tolist()) for x in SPLIT.train_images}
    overlap = sum(tuple(x.flatten().tolist()) in train for x in SPLIT.test_images)
    assert overlap <= 2  # the data set itself repeats a few images; the split adds none


def test_each_digit_is_held_out_in_proportion():
    test_counts = torch.bincount(SPLIT.test_labels, minlength=10)
    all_counts = test_counts + torch.bincount(SPLIT.train_labels, minlength=10)
    assert torch.equal(test_counts, torch.round(0.25 * all_counts.double()).long())


def test_the_split_is_reproducible_and_depends_on_the_seed():
    again = digit_split(0.25, seed=0)
    assert torch.equal(again.test_images, SPLIT.test_images)
    assert not torch.equal(digit_split(0.25, seed=1).test_images, SPLIT.test_images)


def test_batches_come_from_the_training_images():
    images, labels = digit_batch(16, torch.Generator().manual_seed(0), SPLIT)
    assert images.shape == (16, 8, 8) and labels.shape == (16,)
    train = {
        tuple(x.flatten().tolist()): int(y) for x, y in zip(SPLIT.train_images, SPLIT.train_labels)
    }
    assert all(train[tuple(x.flatten().tolist())] == int(y) for x, y in zip(images, labels))


@pytest.mark.parametrize(
    "fraction, error", [(0.0, ValueError), (1.0, ValueError), ("0.2", TypeError)]
)
def test_a_bad_test_fraction_is_refused(fraction, error):
    with pytest.raises(error, match="test_fraction must be"):
        digit_split(fraction)


def test_nearest_neighbour_returns_the_label_of_the_closest_training_image():
    train = torch.zeros(3, 8, 8)
    train[1] += 0.5
    train[2] += 1.0
    split = type(SPLIT)(
        train,
        torch.tensor([4, 7, 9]),
        torch.stack([train[0] + 0.1, train[2] - 0.2]),
        torch.tensor([4, 9]),
    )
    assert nearest_neighbour(split).tolist() == [4, 9]
    predicted = nearest_neighbour(SPLIT)
    assert predicted.shape == SPLIT.test_labels.shape and predicted.dtype == torch.long
    assert (predicted == SPLIT.test_labels).float().mean() > 0.95
