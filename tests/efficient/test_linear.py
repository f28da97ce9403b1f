"""Linear attention: its O(n) forms equal its quadratic form and each other."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnbook.efficient import (
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_weights,
)


def qkv(L, S, E=6, Ev=4, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(2, L, E, generator=g, dtype=dtype),
        torch.randn(2, S, E, generator=g, dtype=dtype),
        torch.randn(2, S, Ev, generator=g, dtype=dtype),
    )


def test_elu_plus_one_is_positive_and_equals_x_plus_one_for_positive_x():
    x = torch.linspace(-15, 5, 200)  # below about -17, float32 rounds elu(x) + 1 to 0
    assert (elu_feature_map(x) > 0).all()
    torch.testing.assert_close(elu_feature_map(x[x > 0]), x[x > 0] + 1)


def test_weights_are_positive_and_sum_to_one():
    q, k, _ = qkv(7, 9)
    w = linear_attention_weights(q, k)
    assert (w > 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 7))


@pytest.mark.parametrize("L, S", [(7, 9), (12, 3)])
def test_linear_form_equals_quadratic_form(L, S):
    q, k, v = qkv(L, S)
    torch.testing.assert_close(linear_attention(q, k, v), linear_attention_weights(q, k) @ v)


@pytest.mark.parametrize("chunk_size", [1, 3, 8, 64])
def test_causal_chunked_form_equals_quadratic_form(chunk_size):
    q, k, v = qkv(17, 17)
    out = linear_attention(q, k, v, is_causal=True, chunk_size=chunk_size)
    torch.testing.assert_close(out, linear_attention_weights(q, k, is_causal=True) @ v)


@pytest.mark.parametrize("chunk_size", [1, 5, 64])
def test_causal_chunked_form_equals_recurrent_form(chunk_size):
    q, k, v = qkv(13, 13, dtype=torch.float64)
    recurrent, _ = linear_attention_recurrent(q, k, v)
    torch.testing.assert_close(
        linear_attention(q, k, v, is_causal=True, chunk_size=chunk_size), recurrent
    )


def test_last_causal_output_equals_the_non_causal_one():
    q, k, v = qkv(10, 10)
    torch.testing.assert_close(
        linear_attention(q, k, v, is_causal=True)[:, -1], linear_attention(q, k, v)[:, -1]
    )


def test_recurrent_state_is_the_sum_of_key_value_outer_products():
    q, k, v = qkv(8, 8, dtype=torch.float64)
    _, (state, z) = linear_attention_recurrent(q, k, v)
    phi_k = elu_feature_map(k)
    torch.testing.assert_close(state, phi_k.transpose(-2, -1) @ v)
    torch.testing.assert_close(z, phi_k.sum(dim=-2))


def test_causal_output_ignores_the_future():
    q, k, v = qkv(9, 9)
    k2, v2 = k.clone(), v.clone()
    k2[:, 5:] += 3.0
    v2[:, 5:] -= 2.0
    a = linear_attention(q, k, v, is_causal=True, chunk_size=4)
    b = linear_attention(q, k2, v2, is_causal=True, chunk_size=4)
    torch.testing.assert_close(a[:, :5], b[:, :5])


@given(L=st.integers(1, 16), S=st.integers(1, 16), seed=st.integers(0, 100))
def test_permuting_keys_and_values_together_leaves_the_output_unchanged(L, S, seed):
    q, k, v = qkv(L, S, seed=seed)
    perm = torch.randperm(S, generator=torch.Generator().manual_seed(seed))
    torch.testing.assert_close(
        linear_attention(q, k[:, perm], v[:, perm]), linear_attention(q, k, v)
    )


def test_gradcheck_of_the_causal_form():
    inputs = tuple(t.requires_grad_() for t in qkv(5, 5, E=3, Ev=2, dtype=torch.float64))
    assert torch.autograd.gradcheck(
        lambda q, k, v: linear_attention(q, k, v, is_causal=True, chunk_size=2), inputs
    )


def test_causal_form_needs_equal_lengths():
    q, k, v = qkv(5, 6)
    with pytest.raises(
        ValueError,
        match=r"causal linear attention needs L == S; got query \(2, 5, 6\) and key \(2, 6, 6\)",
    ):
        linear_attention(q, k, v, is_causal=True)


def test_rejects_a_bad_chunk_size():
    q, k, v = qkv(5, 5)
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        linear_attention(q, k, v, is_causal=True, chunk_size=0)


def test_rejects_integer_inputs():
    q, k, v = qkv(5, 5)
    with pytest.raises(TypeError, match="key must be a floating-point tensor"):
        linear_attention(q, k.long(), v)
