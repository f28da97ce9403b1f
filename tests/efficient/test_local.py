"""Local attention: the banded computation equals exact attention with the window mask."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnbook import scaled_dot_product_attention
from attnbook.efficient import local_attention, local_mask

ATOL = RTOL = 1e-5


def qkv(L, S, E=8, Ev=5, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(2, L, E, generator=g, dtype=dtype),
        torch.randn(2, S, E, generator=g, dtype=dtype),
        torch.randn(2, S, Ev, generator=g, dtype=dtype),
    )


def masked(q, k, v, window, is_causal=False):
    mask = local_mask(q.size(-2), k.size(-2), window, is_causal=is_causal)
    return scaled_dot_product_attention(q, k, v, mask)[0]


def test_local_mask_allows_exactly_the_window():
    expected = torch.tensor(
        [[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]], dtype=torch.bool
    )
    assert torch.equal(local_mask(4, 5, window=1), expected)


def test_causal_local_mask_keeps_only_the_past_part_of_the_window():
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.bool
    )
    assert torch.equal(local_mask(4, window=2, is_causal=True), expected)


def test_a_window_as_long_as_the_sequence_is_full_attention():
    q, k, v = qkv(10, 10)
    torch.testing.assert_close(
        local_attention(q, k, v, window=9),
        scaled_dot_product_attention(q, k, v)[0],
        atol=ATOL,
        rtol=RTOL,
    )


@pytest.mark.parametrize("L, S", [(32, 32), (20, 45), (45, 20)])
@pytest.mark.parametrize("window", [0, 1, 4, 13])
@pytest.mark.parametrize("causal", [False, True])
def test_band_equals_the_masked_computation(L, S, window, causal):
    q, k, v = qkv(L, S)
    out = local_attention(q, k, v, window, is_causal=causal, block_size=6)
    torch.testing.assert_close(out, masked(q, k, v, window, causal), atol=ATOL, rtol=RTOL)


def test_queries_without_any_key_in_their_window_give_zeros():
    q, k, v = qkv(20, 5)  # queries 8.. have no key within 2 positions
    out = local_attention(q, k, v, window=2, block_size=4)
    assert torch.equal(out[:, 8:], torch.zeros_like(out[:, 8:]))
    torch.testing.assert_close(out, masked(q, k, v, 2), atol=ATOL, rtol=RTOL)


def test_gradients_equal_those_of_the_masked_computation():
    grads = []
    for fn in (
        lambda *a: masked(*a, 3, True),
        lambda *a: local_attention(*a, 3, is_causal=True, block_size=4),
    ):
        inputs = [t.requires_grad_() for t in qkv(15, 15, dtype=torch.float64)]
        fn(*inputs).sum().backward()
        grads.append([t.grad for t in inputs])
    for ours, theirs in zip(*grads):
        torch.testing.assert_close(ours, theirs)


@given(
    L=st.integers(1, 30),
    S=st.integers(1, 30),
    window=st.integers(0, 10),
    block=st.integers(1, 12),
    is_causal=st.booleans(),
    seed=st.integers(0, 100),
)
def test_band_equals_the_mask_for_any_sizes(L, S, window, block, is_causal, seed):
    q, k, v = qkv(L, S, seed=seed)
    out = local_attention(q, k, v, window, is_causal=is_causal, block_size=block)
    torch.testing.assert_close(out, masked(q, k, v, window, is_causal), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("window", [-1, 1.5, True])
def test_rejects_a_window_that_is_not_a_non_negative_integer(window):
    q, k, v = qkv(4, 4)
    with pytest.raises(ValueError, match="window must be a non-negative integer"):
        local_attention(q, k, v, window)
    with pytest.raises(ValueError, match="window must be a non-negative integer"):
        local_mask(4, 4, window)


def test_rejects_a_bad_block_size():
    q, k, v = qkv(4, 4)
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        local_attention(q, k, v, 1, block_size=0)


def test_rejects_mismatched_key_and_value_lengths():
    q, k, v = qkv(4, 6)
    with pytest.raises(ValueError, match=r"key \(2, 6, 8\) and value \(2, 5, 5\)"):
        local_attention(q, k, v[:, :5], 1)
