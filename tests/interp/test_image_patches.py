"""Measures over a ViT's patches: inked patches, the class token's rows, shares against the
position-only control, occlusion, rank correlation, grid distances and cosine similarity."""

import pytest
import torch

from attnbook.interp.image_patches import (
    cls_attention,
    cosine_similarity,
    grid_distance,
    image_specific,
    patch_ink,
    patch_occlusion,
    position_only,
    rank_correlation,
    share_on,
)
from attnbook.models.vit import VisionTransformer, ViTConfig


def test_a_patch_is_inked_when_its_mean_is_above_the_threshold():
    image = torch.zeros(1, 4, 4)
    image[0, 0, 0] = 0.8  # patch 0: mean 0.2
    image[0, 3, 3] = 0.2  # patch 3: mean 0.05
    assert patch_ink(image, 2, threshold=0.1).tolist() == [[True, False, False, False]]


def test_the_class_token_row_leaves_out_itself_and_sums_to_one():
    w = torch.softmax(torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(0)), -1)
    rows = cls_attention([w, w])  # (2, 2, 3, 4)
    assert rows.shape == (2, 2, 3, 4)
    torch.testing.assert_close(rows.sum(-1), torch.ones(2, 2, 3))
    torch.testing.assert_close(rows[:, 0], w[:, :, 0, 1:] / w[:, :, 0, 1:].sum(-1, keepdim=True))


def test_share_on_adds_the_weight_on_the_chosen_patches():
    attention = torch.tensor([[[0.5, 0.25, 0.25, 0.0]], [[0.0, 0.0, 0.0, 1.0]]])  # (2, 1, 4)
    mask = torch.tensor([[True, True, False, False], [True, False, False, False]])
    torch.testing.assert_close(share_on(attention, mask), torch.tensor([[0.75], [0.0]]))
    with pytest.raises(ValueError, match=r"attention must be \(N, ..., P\) and mask \(N, P\)"):
        share_on(attention, mask[:, :3])


def test_position_only_gives_every_image_the_mean_map():
    attention = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    torch.testing.assert_close(position_only(attention), torch.full((2, 2), 0.5))


def test_image_specific_is_what_the_mean_map_leaves_and_averages_to_zero():
    scores = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]])
    torch.testing.assert_close(
        image_specific(scores), torch.tensor([[0.2, 0.0, -0.2], [-0.2, 0.0, 0.2]])
    )
    torch.testing.assert_close(image_specific(scores) + position_only(scores), scores)
    torch.testing.assert_close(image_specific(scores).mean(0), torch.zeros(3))


def test_occlusion_runs_in_eval_mode_and_restores_the_training_flag():
    torch.manual_seed(0)
    model = VisionTransformer(ViTConfig(d_model=16, nhead=2, dim_feedforward=32, dropout=0.5))
    images = torch.rand(2, 8, 8, generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([1, 2])
    first = patch_occlusion(model, images, labels, patch_size=2)
    assert model.training
    torch.testing.assert_close(first, patch_occlusion(model, images, labels, patch_size=2))


def test_occluding_a_blank_patch_costs_nothing_and_matches_a_hand_blanking():
    torch.manual_seed(0)
    model = VisionTransformer(ViTConfig(d_model=16, nhead=2, dim_feedforward=32)).eval()
    images = torch.rand(3, 8, 8, generator=torch.Generator().manual_seed(1))
    images[:, :2, :2] = 0  # patch 0 is blank
    labels = torch.tensor([0, 3, 7])
    cost = patch_occlusion(model, images, labels, patch_size=2)  # (3, 16)
    assert cost.shape == (3, 16)
    torch.testing.assert_close(cost[:, 0], torch.zeros(3), atol=1e-6, rtol=0)
    blanked = images.clone()
    blanked[:, 2:4, 4:6] = 0  # patch 1 * 4 + 2 = 6
    logp = lambda x: model(x)[0].log_softmax(-1)[torch.arange(3), labels]  # noqa: E731
    with torch.no_grad():
        torch.testing.assert_close(cost[:, 6], logp(images) - logp(blanked))


def test_rank_correlation_is_spearman_over_the_masked_patches():
    a = torch.tensor([[1.0, 2.0, 3.0, 4.0, 9.0], [1.0, 2.0, 3.0, 4.0, 0.0]])
    b = torch.tensor([[10.0, 20.0, 30.0, 40.0, -5.0], [4.0, 3.0, 2.0, 1.0, 0.0]])
    mask = torch.tensor([[True, True, True, True, False], [True, True, True, True, True]])
    r = rank_correlation(a, b, mask)
    assert r[0].item() == pytest.approx(1.0)  # the unmasked outlier does not count
    # ranks (1, 2, 3, 4, 0) and (4, 3, 2, 1, 0), centred: -2 + 0 + 0 - 2 + 4 = 0
    assert r[1].item() == pytest.approx(0.0, abs=1e-6)


def test_rank_correlation_shares_ranks_between_ties_and_needs_three_patches():
    a = torch.tensor([[1.0, 1.0, 2.0, 3.0]])
    b = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    assert rank_correlation(a, b)[0].item() == pytest.approx(0.9486833)  # scipy.stats.spearmanr
    few = torch.tensor([[True, True, False, False]])
    assert rank_correlation(a, b, few).isnan().all()
    with pytest.raises(ValueError, match="one shape"):
        rank_correlation(a, b[:, :3])


def test_grid_distance_counts_steps_between_patches():
    d = grid_distance(3)
    assert d.shape == (9, 9)
    assert d[0, 1] == 1 and d[0, 4] == 2 and d[0, 8] == 4 and d[4, 4] == 0


def test_cosine_similarity_is_one_on_the_diagonal_and_symmetric():
    v = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    s = cosine_similarity(v)
    torch.testing.assert_close(s.diagonal(), torch.ones(5))
    torch.testing.assert_close(s, s.T)
    torch.testing.assert_close(
        cosine_similarity(torch.tensor([[1.0, 0.0], [-2.0, 0.0]]))[0, 1], torch.tensor(-1.0)
    )
