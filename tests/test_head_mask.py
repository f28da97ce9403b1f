"""head_mask switches heads off (or scales them) in MultiHeadAttention, the encoder and the decoder."""

import pytest
import torch

from attnbook.mha import MultiHeadAttention

N, L, S, E, H = 3, 4, 5, 12, 3
D = E // H


def setup(seed: int = 0):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(E, H).eval()
    with torch.no_grad():
        mha.out_proj.bias.normal_()  # a non-zero bias, so that "head off" is not "output zero"
    q, k, v = torch.randn(N, L, E), torch.randn(N, S, E), torch.randn(N, S, E)
    return mha, q, k, v


@pytest.mark.parametrize("shape", [(H,), (N, H)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_a_mask_of_ones_changes_nothing(shape, need_weights):
    mha, q, k, v = setup()
    expected, _ = mha(q, k, v, need_weights=need_weights)
    got, _ = mha(q, k, v, need_weights=need_weights, head_mask=torch.ones(shape))
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("head", range(H))
def test_zeroing_a_head_equals_deleting_its_columns_of_out_proj(head):
    mha, q, k, v = setup()
    mask = torch.ones(H)
    mask[head] = 0
    got, _ = mha(q, k, v, head_mask=mask)
    with torch.no_grad():
        mha.out_proj.weight[:, head * D : (head + 1) * D] = 0
    expected, _ = mha(q, k, v)
    torch.testing.assert_close(got, expected)


def test_all_heads_off_leaves_only_the_output_bias():
    mha, q, k, v = setup()
    got, _ = mha(q, k, v, head_mask=torch.zeros(H, dtype=torch.bool))
    torch.testing.assert_close(got, mha.out_proj.bias.expand(N, L, E))


def test_a_per_example_mask_masks_each_example_with_its_own_row():
    mha, q, k, v = setup()
    mask = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    got, _ = mha(q, k, v, head_mask=mask)
    for n in range(N):
        alone, _ = mha(q[n : n + 1], k[n : n + 1], v[n : n + 1], head_mask=mask[n])
        torch.testing.assert_close(got[n : n + 1], alone)


def test_a_float_mask_scales_a_heads_contribution_linearly():
    mha, q, k, v = setup()
    bias = mha.out_proj.bias
    one_head = torch.tensor([0.0, 1.0, 0.0])
    full, _ = mha(q, k, v, head_mask=one_head)
    half, _ = mha(q, k, v, head_mask=0.5 * one_head)
    torch.testing.assert_close(half - bias, 0.5 * (full - bias))


def test_the_returned_weights_are_not_masked():
    mha, q, k, v = setup()
    _, expected = mha(q, k, v, average_attn_weights=False)
    _, got = mha(q, k, v, average_attn_weights=False, head_mask=torch.zeros(H))
    torch.testing.assert_close(got, expected)


def test_the_loss_has_a_gradient_with_respect_to_the_mask():
    """Michel et al. (2019) score a head's importance by this gradient."""
    mha, q, k, v = setup()
    mask = torch.ones(H, requires_grad=True)
    out, _ = mha(q, k, v, head_mask=mask)
    out.pow(2).sum().backward()
    assert mask.grad is not None and mask.grad.shape == (H,) and mask.grad.abs().min() > 0


@pytest.mark.parametrize("shape", [(H + 1,), (N + 1, H), (N, H, 1), ()])
def test_a_mask_of_the_wrong_shape_is_rejected_with_both_shapes(shape):
    mha, q, k, v = setup()
    with pytest.raises(
        ValueError, match=r"head_mask must have shape \(H,\) = \(3,\) or \(N, H\) = \(3, 3\)"
    ):
        mha(q, k, v, head_mask=torch.ones(shape))


def test_a_mask_that_is_not_a_tensor_is_rejected():
    mha, q, k, v = setup()
    with pytest.raises(TypeError, match="head_mask must be a torch.Tensor"):
        mha(q, k, v, head_mask=[1, 0, 1])


def encoder(seed: int = 0):
    from attnbook.transformer import Encoder

    torch.manual_seed(seed)
    model = Encoder(2, d_model=E, nhead=H, dim_feedforward=16, dropout=0.0, norm_first=True).eval()
    return model, torch.randn(N, L, E)


def test_encoder_mask_of_ones_changes_nothing():
    model, x = encoder()
    torch.testing.assert_close(model(x, head_mask=torch.ones(2, H))[0], model(x)[0])


def test_encoder_mask_row_i_switches_off_heads_of_block_i():
    model, x = encoder()
    mask = torch.ones(2, N, H)
    mask[1, :, 2] = 0  # head 2 of the second block, for every example
    got, _ = model(x, head_mask=mask)
    with torch.no_grad():
        model.layers[1].self_attn.out_proj.weight[:, 2 * D : 3 * D] = 0
    torch.testing.assert_close(got, model(x)[0])


def test_encoder_rejects_a_mask_without_one_row_per_layer():
    model, x = encoder()
    with pytest.raises(
        ValueError, match=r"head_mask must have shape \(num_layers, H\).*num_layers = 2; got \(3,\)"
    ):
        model(x, head_mask=torch.ones(H))
