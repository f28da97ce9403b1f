"""Low-rank (Linformer) attention: exact in the limits where it must be, and checked inputs."""

import pytest
import torch

from attnbook import scaled_dot_product_attention
from attnbook.efficient import lowrank_attention, pooling_projection, random_projection


def qkv(L, S, E=8, Ev=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(2, L, E, generator=g),
        torch.randn(2, S, E, generator=g),
        torch.randn(2, S, Ev, generator=g),
    )


def exact(q, k, v):
    return scaled_dot_product_attention(q, k, v)[0]


def test_identity_projection_is_exact_attention():
    q, k, v = qkv(6, 9)
    torch.testing.assert_close(lowrank_attention(q, k, v, torch.eye(9)), exact(q, k, v))


def test_full_rank_pooling_is_exact_attention():
    q, k, v = qkv(6, 9)
    torch.testing.assert_close(
        lowrank_attention(q, k, v, pooling_projection(9, 9), log_counts=True), exact(q, k, v)
    )


def test_pooling_with_log_counts_is_exact_when_each_segment_repeats_one_key():
    # Keys and values constant within each segment of 3: pooling loses nothing, and the log of
    # the segment size restores each segment's total weight.
    q, k, v = qkv(5, 4)
    k3, v3 = k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)
    out = lowrank_attention(q, k3, v3, pooling_projection(12, 4), log_counts=True)
    torch.testing.assert_close(out, exact(q, k3, v3))


def test_pooling_rows_average_contiguous_segments():
    P = pooling_projection(7, 3)
    assert P.shape == (3, 7)
    torch.testing.assert_close(P.sum(dim=1), torch.ones(3))
    assert torch.equal((P > 0).int().argmax(dim=0), torch.tensor([0, 0, 0, 1, 1, 2, 2]))


def test_random_projection_has_variance_one_over_length():
    P = random_projection(4000, 50, generator=torch.Generator().manual_seed(0))
    assert P.shape == (50, 4000)
    assert abs(P.var().item() * 4000 - 1) < 0.02


def test_value_projection_defaults_to_the_key_projection():
    q, k, v = qkv(6, 9)
    P = random_projection(9, 4, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(lowrank_attention(q, k, v, P), lowrank_attention(q, k, v, P, P))


def test_output_is_the_attention_over_projected_keys_and_values():
    q, k, v = qkv(6, 9)
    g = torch.Generator().manual_seed(2)
    Pk, Pv = random_projection(9, 4, generator=g), random_projection(9, 4, generator=g)
    torch.testing.assert_close(lowrank_attention(q, k, v, Pk, Pv), exact(q, Pk @ k, Pv @ v))


def test_rejects_a_projection_of_the_wrong_length():
    q, k, v = qkv(6, 9)
    with pytest.raises(
        ValueError, match=r"proj_key must have shape \(R, S\) with S = 9; got \(4, 8\)"
    ):
        lowrank_attention(q, k, v, torch.randn(4, 8))


def test_rejects_projections_of_different_ranks():
    q, k, v = qkv(6, 9)
    with pytest.raises(ValueError, match="same rank R"):
        lowrank_attention(q, k, v, torch.randn(4, 9), torch.randn(3, 9))


def test_rejects_a_rank_larger_than_the_length():
    with pytest.raises(ValueError, match="rank must be at most S; got rank=10 and S=9"):
        pooling_projection(9, 10)
