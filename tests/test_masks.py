"""Specification of attnbook.masks: one mask convention, converted in one place."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnbook.masks import (
    causal_mask,
    check_broadcastable,
    check_mask,
    merge_masks,
    mha_to_sdpa_mask,
    padding_mask,
    rows_without_keys,
)

INF = float("inf")


def test_causal_mask_allows_only_past_and_present_keys() -> None:
    expected = torch.tensor(
        [[True, False, False], [True, True, False], [True, True, True]], dtype=torch.bool
    )
    assert torch.equal(causal_mask(3), expected)


@pytest.mark.parametrize("L, S", [(3, 5), (5, 3)])
def test_causal_mask_is_top_left_aligned_like_torch_is_causal(L: int, S: int) -> None:
    torch.manual_seed(0)
    q, k, v = torch.randn(L, 4), torch.randn(S, 4), torch.randn(S, 2)
    with_flag = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with_mask = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(L, S))
    torch.testing.assert_close(with_flag, with_mask, rtol=0, atol=0)
    assert causal_mask(L, S).shape == (L, S)


def test_padding_mask_is_true_on_real_tokens() -> None:
    mask = padding_mask(torch.tensor([2, 0, 3]), 3)
    expected = torch.tensor(
        [[True, True, False], [False, False, False], [True, True, True]], dtype=torch.bool
    )
    assert torch.equal(mask, expected)


def test_padding_mask_rejects_float_lengths() -> None:
    with pytest.raises(TypeError, match="lengths"):
        padding_mask(torch.tensor([1.0, 2.0]), 3)


def test_padding_mask_rejects_lengths_longer_than_S() -> None:
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, S\] = \[0, 3\]"):
        padding_mask(torch.tensor([1, 4]), 3)


def test_check_mask_rejects_integer_mask_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="attn_mask must be a bool or floating-point.*int64"):
        check_mask(torch.ones(2, 2, dtype=torch.int64), "attn_mask")


def test_check_broadcastable_names_target_and_actual_shapes() -> None:
    message = r"attn_mask must be broadcastable to \(\.\.\., L, S\) = \(2, 5, 7\); got \(5, 6\)"
    with pytest.raises(ValueError, match=message):
        check_broadcastable(torch.ones(5, 6), (2, 5, 7), "attn_mask")


def test_merge_of_two_bool_masks_is_their_and() -> None:
    a = torch.tensor([[True, True, False]])
    b = torch.tensor([[True, False, False]])
    assert torch.equal(merge_masks(a, b, torch.float32), torch.tensor([[True, False, False]]))


def test_merge_of_bool_and_float_is_additive_with_minus_inf() -> None:
    a = torch.tensor([[True, False, True]])
    b = torch.tensor([[0.5, 0.0, -1.0]])
    merged = merge_masks(a, b, torch.float32)
    assert torch.equal(merged, torch.tensor([[0.5, -INF, -1.0]]))


def test_rows_without_keys_for_bool_and_float_masks() -> None:
    bool_mask = torch.tensor([[True, False], [False, False]])
    float_mask = torch.tensor([[0.0, -INF], [-INF, -INF]])
    expected = torch.tensor([[False], [True]])
    assert torch.equal(rows_without_keys(bool_mask), expected)
    assert torch.equal(rows_without_keys(float_mask), expected)


def test_mha_masks_none_give_none() -> None:
    mask = mha_to_sdpa_mask(
        None, None, batch_size=2, num_heads=4, tgt_len=3, src_len=5, dtype=torch.float32
    )
    assert mask is None


def test_mha_bool_attn_mask_is_inverted_to_may_attend() -> None:
    not_allowed = torch.tensor([[False, True], [True, False]])
    mask = mha_to_sdpa_mask(
        not_allowed, None, batch_size=3, num_heads=2, tgt_len=2, src_len=2, dtype=torch.float32
    )
    assert mask.shape == (1, 1, 2, 2)
    assert torch.equal(mask[0, 0], ~not_allowed)


def test_mha_3d_attn_mask_is_split_batch_major_into_heads() -> None:
    N, H, L, S = 2, 3, 4, 5
    per_head = torch.randn(N * H, L, S)
    mask = mha_to_sdpa_mask(
        per_head, None, batch_size=N, num_heads=H, tgt_len=L, src_len=S, dtype=torch.float32
    )
    assert mask.shape == (N, H, L, S)
    assert torch.equal(mask[1, 2], per_head[1 * H + 2])


def test_mha_bool_key_padding_forbids_padded_keys_for_every_query() -> None:
    is_pad = torch.tensor([[False, True, True], [False, False, False]])
    mask = mha_to_sdpa_mask(
        None, is_pad, batch_size=2, num_heads=4, tgt_len=2, src_len=3, dtype=torch.float32
    )
    assert mask.shape == (2, 1, 1, 3)
    assert torch.equal(mask[:, 0, 0], ~is_pad)


def test_mha_bool_attn_mask_with_float_padding_gives_float_sum() -> None:
    not_allowed = torch.tensor([[False, True]])
    padding = torch.tensor([[0.25, 0.0], [-INF, 1.0]])
    mask = mha_to_sdpa_mask(
        not_allowed, padding, batch_size=2, num_heads=1, tgt_len=1, src_len=2, dtype=torch.float16
    )
    assert mask.dtype == torch.float16
    expected = torch.tensor([[[[0.25, -INF]]], [[[-INF, -INF]]]], dtype=torch.float16)
    assert torch.equal(mask, expected)


def test_mha_attn_mask_of_wrong_shape_names_both_accepted_shapes() -> None:
    message = (
        r"attn_mask must have shape \(L, S\) = \(5, 7\) or \(N\*num_heads, L, S\) = "
        r"\(16, 5, 7\); got \(5, 6\)"
    )
    with pytest.raises(ValueError, match=message):
        mha_to_sdpa_mask(
            torch.zeros(5, 6),
            None,
            batch_size=2,
            num_heads=8,
            tgt_len=5,
            src_len=7,
            dtype=torch.float32,
        )


def test_mha_key_padding_mask_of_wrong_shape_names_expected_shape() -> None:
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(N, S\) = \(2, 7\)"):
        mha_to_sdpa_mask(
            None,
            torch.zeros(2, 6, dtype=torch.bool),
            batch_size=2,
            num_heads=8,
            tgt_len=5,
            src_len=7,
            dtype=torch.float32,
        )


def test_mha_integer_key_padding_mask_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="key_padding_mask"):
        mha_to_sdpa_mask(
            None,
            torch.zeros(2, 7, dtype=torch.int32),
            batch_size=2,
            num_heads=8,
            tgt_len=5,
            src_len=7,
            dtype=torch.float32,
        )
