"""Attention rollout: identity layers roll out to the identity, one layer is half weights half
identity, layers multiply with the last on the left, rows stay distributions."""

import pytest
import torch

from attnbook.interp.rollout import attention_rollout


def weights(seed, layers=2, N=3, H=2, S=5):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(N, H, S, S, generator=g) * 2).softmax(-1) for _ in range(layers)]


def test_tokens_that_attend_only_to_themselves_roll_out_to_the_identity():
    eye = torch.eye(4).expand(2, 3, 4, 4)
    torch.testing.assert_close(attention_rollout([eye, eye]), torch.eye(4).expand(2, 4, 4))


def test_one_layer_is_half_the_head_mean_and_half_the_identity():
    (w,) = weights(0, layers=1)
    torch.testing.assert_close(attention_rollout([w]), 0.5 * w.mean(1) + 0.5 * torch.eye(5))


def test_the_last_layer_multiplies_from_the_left():
    w1, w2 = weights(1)
    a1, a2 = (0.5 * w.mean(1) + 0.5 * torch.eye(5) for w in (w1, w2))
    torch.testing.assert_close(attention_rollout([w1, w2]), a2 @ a1)


def test_residual_zero_multiplies_the_raw_head_means():
    w1, w2 = weights(2)
    torch.testing.assert_close(attention_rollout([w1, w2], residual=0), w2.mean(1) @ w1.mean(1))


def test_rows_of_the_rollout_are_distributions():
    r = attention_rollout(weights(3, layers=3), residual=0.3)
    assert (r >= 0).all()
    torch.testing.assert_close(r.sum(-1), torch.ones(3, 5))


def test_bad_inputs_are_refused():
    w = weights(4)
    with pytest.raises(ValueError, match=r"residual must be in \[0, 1\]"):
        attention_rollout(w, residual=1.5)
    with pytest.raises(TypeError, match="residual must be a number"):
        attention_rollout(w, residual="half")
    with pytest.raises(ValueError, match="at least one layer"):
        attention_rollout([])
    with pytest.raises(ValueError, match=r"weights\[1\] is \(3, 2, 4, 4\)"):
        attention_rollout([w[0], w[1][..., :4, :4]])
    with pytest.raises(TypeError, match="weights\\[0\\] must be a torch.Tensor"):
        attention_rollout([[0.5]])


def test_works_on_the_meta_device():
    w = torch.empty(2, 2, 5, 5, device="meta")
    assert attention_rollout([w, w]).device.type == "meta"
