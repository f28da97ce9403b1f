"""Rotary positions and ALiBi, in ``attnbook.positional`` and as options of MultiHeadAttention,
against Hugging Face ``transformers``: Llama's rotary embedding (``LlamaRotaryEmbedding`` and
``apply_rotary_pos_emb``, the "rotate half" convention) and BLOOM's ALiBi (``build_alibi_tensor``).
Forward and backward; flex_attention with an ALiBi ``score_mod`` checks the bidirectional case
(forward only on this CPU build, as in ``test_mha_modern.py``).
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.attention.flex_attention import flex_attention

import attnbook.lab.decoding as decoding
import attnbook.models.detective as detective
from attnbook import masks, mha, positional
from attnbook.positional import alibi_bias, alibi_slopes, rotate
from tests.mha_reference import assert_same_forward_and_backward, heads, inputs, leaves, make, merge

transformers = pytest.importorskip("transformers")
from transformers.models.bloom.modeling_bloom import build_alibi_tensor  # noqa: E402
from transformers.models.llama.configuration_llama import LlamaConfig  # noqa: E402
from transformers.models.llama.modeling_llama import (  # noqa: E402
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)


def llama_rotary(x: Tensor, base: float, start: int = 0) -> Tensor:
    """Llama's rotary embedding of x (N, H, L, D) at positions start .. start + L - 1."""
    D, L = x.shape[-1], x.shape[-2]
    config = LlamaConfig(
        hidden_size=D,
        num_attention_heads=1,
        head_dim=D,
        rope_parameters={"rope_type": "default", "rope_theta": base},
    )
    position_ids = torch.arange(start, start + L)[None]  # (1, L)
    cos, sin = LlamaRotaryEmbedding(config)(x, position_ids)  # (1, L, D) each
    turned, _ = apply_rotary_pos_emb(x, x, cos, sin)  # cos, sin unsqueezed to (1, 1, L, D)
    return turned


def halves_first(D: int) -> Tensor:
    """The permutation that puts features 0, 2, 4, ... before 1, 3, 5, ...: pair (2i, 2i+1)
    of the interleaved layout becomes pair (i, i + D/2) of the "rotate half" layout."""
    return torch.cat((torch.arange(0, D, 2), torch.arange(1, D, 2)))


@pytest.mark.parametrize("D", [2, 8, 64])
@pytest.mark.parametrize("base, start", [(10000.0, 0), (500.0, 5)])
def test_rotate_half_equals_llama_rotary_embedding(D, base, start):
    x = torch.randn(2, 3, 11, D, generator=torch.Generator().manual_seed(D))
    expected = llama_rotary(x, base, start)
    torch.testing.assert_close(rotate(x, base, start, interleaved=False), expected)


@pytest.mark.parametrize("D", [2, 8, 32])
def test_interleaved_rotate_is_llama_rotary_on_permuted_features(D):
    x = torch.randn(2, 9, D, generator=torch.Generator().manual_seed(D))[None]
    order = halves_first(D)
    expected = llama_rotary(x[..., order], 10000.0)[..., order.argsort()]
    torch.testing.assert_close(rotate(x, interleaved=True), expected)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("L, S", [(6, 6), (4, 7)])
def test_rotary_mha_equals_llama_rotary_then_sdpa(interleaved, num_kv_heads, L, S):
    E, H, N, D = 32, 4, 2, 8
    mha = make(
        0,
        E,
        H,
        num_kv_heads=num_kv_heads,
        positions="rotary",
        rotary_base=100.0,
        rotary_interleaved=interleaved,
    )
    query, key, value = inputs(1, N, L, S, E)
    order = halves_first(D) if interleaved else torch.arange(D)

    def turn(x: Tensor) -> Tensor:  # query i at position i, key j at position j
        return llama_rotary(x[..., order], 100.0)[..., order.argsort()]

    def reference():
        q, k, v = heads(mha, query, key, value)
        out = F.scaled_dot_product_attention(turn(q), turn(k), v, enable_gqa=True)
        return merge(mha, out)

    assert_same_forward_and_backward(
        lambda: mha(query, key, value)[0], reference, leaves(mha, query, key, value)
    )


def bloom_slopes(num_heads: int) -> Tensor:
    """BLOOM's slopes, read off its ALiBi tensor: the bias of key 1 is slope_h · 1."""
    return build_alibi_tensor(torch.ones(1, 2), num_heads, torch.float32)[:, 0, 1]


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32])
def test_alibi_slopes_equal_blooms(num_heads):
    torch.testing.assert_close(alibi_slopes(num_heads), bloom_slopes(num_heads))


def test_alibi_slopes_of_six_heads_continue_with_the_odd_slopes_of_eight():
    four = [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]  # 2**(-8h/4)
    assert alibi_slopes(6).tolist() == four + [2.0**-1, 2.0**-3]  # h = 1, 3 of 2**(-8h/8)
    twelve = alibi_slopes(12, dtype=torch.float64).tolist()
    assert twelve[8:] == [2.0 ** (-8 * h / 16) for h in (1, 3, 5, 7)]
    assert alibi_slopes(8, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("num_heads", [6, 12])
def test_causal_alibi_bias_differs_from_blooms_by_a_constant_per_query(num_heads):
    L = 7
    ours = alibi_bias(L, alibi_slopes(num_heads))  # (H, L, L): -slope · |i - j|
    bloom = build_alibi_tensor(torch.ones(1, L), num_heads, torch.float32)  # (H, 1, L): slope · j
    slopes = bloom_slopes(num_heads)[:, None, None]
    row = torch.arange(L, dtype=torch.float32)[:, None]  # (L, 1): i
    causal = torch.ones(L, L, dtype=torch.bool).tril()  # softmax ignores a constant per row
    torch.testing.assert_close(
        (ours - bloom)[:, causal], (-slopes * row).expand(-1, L, L)[:, causal]
    )


@pytest.mark.parametrize("num_heads", [6, 12, 8])
@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_alibi_mha_equals_sdpa_with_blooms_alibi_tensor(num_heads, need_weights):
    E, N, L = 2 * num_heads, 2, 7
    mha = make(2, E, num_heads, positions="alibi")
    query, key, value = inputs(3, N, L, L, E)
    future = torch.ones(L, L, dtype=torch.bool).triu(1)

    def reference():
        q, k, v = heads(mha, query, key, value)
        bias = build_alibi_tensor(torch.ones(N, L), num_heads, torch.float32)  # (N*H, 1, L)
        bias = bias.view(N, num_heads, 1, L).masked_fill(future, float("-inf"))  # (N, H, L, L)
        return merge(mha, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))

    assert_same_forward_and_backward(
        lambda: mha(query, key, value, is_causal=True, need_weights=need_weights)[0],
        reference,
        leaves(mha, query, key, value),
    )


@pytest.mark.parametrize("num_heads", [6, 4])
@pytest.mark.parametrize("L, S", [(6, 6), (5, 8)])
def test_bidirectional_alibi_mha_equals_flex_attention_with_an_alibi_score_mod(num_heads, L, S):
    E, N = 2 * num_heads, 2
    mha = make(4, E, num_heads, positions="alibi")
    query, key, value = inputs(5, N, L, S, E)
    slopes = bloom_slopes(num_heads)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * (q_idx - kv_idx).abs()

    q, k, v = (t.detach() for t in heads(mha, query, key, value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # flex_attention not compiled
        expected = merge(mha, flex_attention(q, k, v, score_mod=score_mod))
    torch.testing.assert_close(mha(query, key, value)[0], expected, rtol=1e-5, atol=1e-5)

    distance = (torch.arange(S)[None, :] - torch.arange(L)[:, None]).abs()  # (L, S)

    def reference():  # backward: the same bias as a float mask for SDPA
        q, k, v = heads(mha, query, key, value)
        bias = -slopes[:, None, None] * distance  # (H, L, S)
        return merge(mha, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))

    assert_same_forward_and_backward(
        lambda: mha(query, key, value, need_weights=False)[0],
        reference,
        leaves(mha, query, key, value),
    )


def test_alibi_bias_of_l_queries_and_s_keys():
    bias = alibi_bias(2, torch.tensor([1.0, 0.5]), key_length=3)
    torch.testing.assert_close(bias[0], -torch.tensor([[0.0, 1, 2], [1, 0, 1]]))
    torch.testing.assert_close(bias[1], bias[0] / 2)


def test_the_lab_the_core_and_the_detective_import_the_one_copy():
    assert decoding.rotate is positional.rotate
    assert detective.alibi_bias is positional.alibi_bias
    assert mha.window_mask is masks.window_mask


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: rotate(torch.zeros(3, 5)), ValueError, "D even; got (3, 5)"),
        (lambda: rotate(torch.zeros(4)), ValueError, "(..., L, D)"),
        (lambda: rotate([[1.0, 2.0]]), TypeError, "x must be a torch.Tensor"),
        (lambda: alibi_slopes(0), ValueError, "num_heads"),
        (lambda: alibi_slopes(2.0), ValueError, "num_heads"),
    ],
)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()
