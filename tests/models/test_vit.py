"""The Vision Transformer: patches cut row by row, a class token and positions in front, weights
for every layer from the class token's row, and the baselines with the same interface."""

import pytest
import torch

from attnbook.models.vit import (
    SmallCNN,
    VisionTransformer,
    ViTConfig,
    classification_loss,
    mlp_classifier,
    patchify,
)

IMAGES = torch.rand(3, 8, 8, generator=torch.Generator().manual_seed(0))


def vit(**sizes):
    torch.manual_seed(0)
    return VisionTransformer(ViTConfig(d_model=16, nhead=2, dim_feedforward=32, **sizes)).eval()


def test_patches_are_cut_row_by_row():
    image = torch.arange(16.0).reshape(1, 4, 4)
    patches = patchify(image, 2)  # (1, 4, 4)
    assert patches[0, 0].tolist() == [0, 1, 4, 5]  # top left
    assert patches[0, 1].tolist() == [2, 3, 6, 7]  # top right
    assert patches[0, 2].tolist() == [8, 9, 12, 13]  # bottom left


def test_patches_with_channels_are_channel_then_pixels():
    image = torch.stack([torch.zeros(2, 2), torch.ones(2, 2)])[None]  # (1, 2, 2, 2)
    assert patchify(image, 2)[0, 0].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]


def test_patch_size_must_divide_the_image():
    with pytest.raises(ValueError, match="image size 8x8 is not divisible by patch_size 3"):
        patchify(IMAGES, 3)


@pytest.mark.parametrize("patch_size, patches", [(2, 16), (4, 4)])
def test_logits_and_one_weight_tensor_per_layer(patch_size, patches):
    logits, weights = vit(patch_size=patch_size)(IMAGES, need_weights=True)
    assert logits.shape == (3, 10) and len(weights) == 2
    assert weights[0].shape == (3, 2, 1 + patches, 1 + patches)
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(3, 2, 1 + patches))


def test_images_with_and_without_a_channel_axis_agree():
    m = vit()
    torch.testing.assert_close(m(IMAGES)[0], m(IMAGES[:, None])[0])
    assert m(IMAGES)[1] is None


def test_each_image_is_classified_on_its_own():
    m = vit()
    torch.testing.assert_close(m(IMAGES)[0][1:2], m(IMAGES[1:2])[0])


def test_the_class_token_and_positions_come_first():
    m = vit()
    x = m.embed(IMAGES)  # (3, 17, 16)
    torch.testing.assert_close(x[:, 0], (m.cls_token[0, 0] + m.positions[0]).expand(3, -1))
    torch.testing.assert_close(x[:, 1:], m.patch_embed(patchify(IMAGES, 2)) + m.positions[1:])


def test_images_of_the_wrong_size_or_type_are_refused():
    m = vit()
    with pytest.raises(
        ValueError, match=r"images must be \(N, 1, 8, 8\) or \(N, H, W\); got \(3, 4, 4\)"
    ):
        m(IMAGES[:, :4, :4])
    with pytest.raises(ValueError, match="images must be floats"):
        m(IMAGES.long())
    with pytest.raises(TypeError, match="images must be a torch.Tensor; got list"):
        m([[0.0]])


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="patch_size must divide image_size; got 3 and 8"):
        VisionTransformer(ViTConfig(patch_size=3))
    with pytest.raises(ValueError, match="d_model must be a positive integer; got 0"):
        VisionTransformer(ViTConfig(d_model=0))


@pytest.mark.parametrize("make", [mlp_classifier, SmallCNN], ids=["mlp", "cnn"])
def test_baselines_return_logits_and_no_weights(make):
    logits, weights = make()(IMAGES)
    assert logits.shape == (3, 10) and weights is None


@pytest.mark.parametrize("make", [vit, mlp_classifier, SmallCNN], ids=["vit", "mlp", "cnn"])
def test_a_few_steps_on_one_batch_lower_the_loss(make):
    torch.manual_seed(0)
    m = make().train()
    labels = torch.tensor([0, 1, 2])
    optimizer = torch.optim.Adam(m.parameters(), lr=1e-2)
    first = classification_loss(m, (IMAGES, labels))
    for _ in range(20):
        optimizer.zero_grad()
        classification_loss(m, (IMAGES, labels)).backward()
        optimizer.step()
    assert classification_loss(m, (IMAGES, labels)) < 0.5 * first
