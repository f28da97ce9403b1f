"""MultiHeadAttention's modern options, each against an independent reference, forward and backward.

* grouped-query and multi-query attention (``num_kv_heads``): PyTorch's
  ``F.scaled_dot_product_attention(..., enable_gqa=True)`` on the same projected q, k, v;
* per-head windows (``window``): ``torch.nn.attention.flex_attention`` with a sliding-window
  ``mask_mod``. On this CPU build flex_attention runs forward only (eager, unfused: "FlexAttention
  does not support backward on CPU"), so the gradients are compared with SDPA under the boolean
  mask that flex's own ``create_mask`` materialises from the same ``mask_mod``;
* query-key normalisation (``qk_norm``): the LayerNorm and RMSNorm formulas written out, then SDPA;
* ``scale`` and ``scale_first``: SDPA's ``scale``, and the float16 overflow of ``Q K^T``.

Rotary positions and ALiBi are compared with Hugging Face ``transformers`` in
``test_mha_modern_positions.py``; the lab model's attention with
``tests/lab/test_lab_attention_is_core.py``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.attention.flex_attention import create_block_mask, create_mask, flex_attention

from attnbook import MultiHeadAttention
from tests.mha_reference import (
    assert_same_forward_and_backward,
    heads,
    inputs,
    leaves,
    make,
    merge,
)

GLOBAL = 10**6  # a window wider than any sequence here: a global head


def padding(N: int, S: int) -> Tensor:
    """(N, S) bool, True = padding; key 0 always real, so no row is empty in the reference."""
    pad = torch.zeros(N, S, dtype=torch.bool)
    pad[-1, S // 2 + 1 :] = True
    return pad


def allowed(L: int, S: int, causal: bool, pad: Tensor | None) -> Tensor:
    """(N|1, 1, L, S) bool, True = may attend, built by hand for SDPA."""
    mask = torch.ones(L, S, dtype=torch.bool)
    if causal:
        mask = mask.tril()
    mask = mask[None, None]
    return mask if pad is None else mask & ~pad[:, None, None, :]


@pytest.mark.parametrize("num_heads, num_kv_heads", [(4, 2), (4, 1), (6, 3), (8, 2), (4, 4)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_grouped_query_attention_equals_sdpa_with_enable_gqa(
    num_heads, num_kv_heads, causal, need_weights
):
    E, N, L, S = 4 * num_heads, 2, 5, 7 if not causal else 5
    mha = make(0, E, num_heads, num_kv_heads=num_kv_heads)
    query, key, value = inputs(1, N, L, S, E)
    pad = padding(N, S)
    assert mha.k_proj.weight.shape == mha.v_proj.weight.shape == (num_kv_heads * 4, E)

    def ours():
        return mha(query, key, value, key_padding_mask=pad, need_weights=need_weights,
                   is_causal=causal)[0]  # fmt: skip

    def reference():
        q, k, v = heads(mha, query, key, value)  # k, v: (N, K, S, D)
        mask = allowed(L, S, causal, pad)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        return merge(mha, out)

    assert_same_forward_and_backward(ours, reference, leaves(mha, query, key, value))


def sliding_window(windows: Tensor, causal: bool):
    """flex_attention's mask_mod: head h sees keys at most windows[h] positions away."""

    def mask_mod(b, h, q_idx, kv_idx):
        near = (q_idx - kv_idx).abs() <= windows[h]
        return near & (kv_idx <= q_idx) if causal else near

    return mask_mod


def flex(q: Tensor, k: Tensor, v: Tensor, **kwargs) -> Tensor:
    """flex_attention forward (CPU eager: no gradients), with its "not compiled" warning quiet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return flex_attention(q.detach(), k.detach(), v.detach(), **kwargs)


WINDOWS = {
    "one window for every head": (2, [2, 2, 2, 2]),
    "per head, with a global head": ((0, 1, None, 3), [0, 1, GLOBAL, 3]),
    "a tensor of windows": (torch.tensor([3, 0, 1, 2]), [3, 0, 1, 2]),
}


@pytest.mark.parametrize("window, sizes", WINDOWS.values(), ids=WINDOWS.keys())
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("num_kv_heads", [4, 2])
def test_windows_equal_flex_attention_with_a_sliding_window_mask_mod(
    window, sizes, causal, num_kv_heads
):
    E, H, N, L, S = 16, 4, 2, 7, 9  # L <= S: every query has a key in its window
    mha = make(2, E, H, num_kv_heads=num_kv_heads, window=window)
    query, key, value = inputs(3, N, L, S, E)
    mask_mod = sliding_window(torch.tensor(sizes), causal)
    block_mask = create_mask(mask_mod, N, H, L, S, device="cpu")  # (N, H, L, S), True = attend

    out, weights = mha(query, key, value, is_causal=causal, average_attn_weights=False)
    q, k, v = heads(mha, query, key, value)
    flex_mask = create_block_mask(mask_mod, N, H, L, S, device="cpu")
    expected = flex(q, k, v, block_mask=flex_mask, enable_gqa=True)
    torch.testing.assert_close(out, merge(mha, expected), rtol=1e-5, atol=1e-5)
    assert (weights.masked_select(~block_mask) == 0).all()

    def reference():  # backward: SDPA under the mask flex materialises from the same mask_mod
        q, k, v = heads(mha, query, key, value)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=block_mask, enable_gqa=True)
        return merge(mha, out)

    assert_same_forward_and_backward(
        lambda: mha(query, key, value, is_causal=causal, need_weights=False)[0],
        reference,
        leaves(mha, query, key, value),
    )


def test_a_window_of_zero_attends_to_the_query_position_only():
    mha = make(4, 8, 2, window=0)
    x = torch.randn(1, 5, 8)
    _, weights = mha(x, x, x, average_attn_weights=False)
    torch.testing.assert_close(weights, torch.eye(5).expand(1, 2, 5, 5))


def layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float = 1e-5) -> Tensor:
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased, as in LayerNorm
    return (x - mean) / torch.sqrt(variance + eps) * weight + bias


def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


@pytest.mark.parametrize("qk_norm", ["layer", "rms"])
@pytest.mark.parametrize("num_kv_heads", [4, 2])
def test_qk_norm_equals_the_written_out_norm_then_sdpa(qk_norm, num_kv_heads):
    E, H, N, L, S = 16, 4, 2, 5, 6
    mha = make(5, E, H, num_kv_heads=num_kv_heads, qk_norm=qk_norm)
    query, key, value = inputs(6, N, L, S, E)

    def reference():
        q, k, v = heads(mha, query, key, value)
        if qk_norm == "layer":
            q = layer_norm(q, mha.q_norm.weight, mha.q_norm.bias)
            k = layer_norm(k, mha.k_norm.weight, mha.k_norm.bias)
        else:
            q, k = rms_norm(q, mha.q_norm.weight), rms_norm(k, mha.k_norm.weight)
        return merge(mha, F.scaled_dot_product_attention(q, k, v, enable_gqa=True))

    assert_same_forward_and_backward(
        lambda: mha(query, key, value)[0], reference, leaves(mha, query, key, value)
    )


def test_qk_norm_adds_a_norm_of_size_d_to_queries_and_keys_only():
    layer, rms = (
        MultiHeadAttention(16, 4, qk_norm="layer"),
        MultiHeadAttention(16, 4, qk_norm="rms"),
    )
    assert [n for n in layer.state_dict() if "norm" in n] == [
        "q_norm.weight", "q_norm.bias", "k_norm.weight", "k_norm.bias"
    ]  # fmt: skip
    assert [n for n in rms.state_dict() if "norm" in n] == ["q_norm.weight", "k_norm.weight"]
    assert layer.q_norm.normalized_shape == rms.k_norm.normalized_shape == (4,)
    assert MultiHeadAttention(16, 4).q_norm is None


@pytest.mark.parametrize("scale_first", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_scale_equals_sdpa_scale(scale_first, need_weights):
    E, H, N, L, S = 8, 2, 2, 4, 6
    mha = make(7, E, H, scale=0.9, scale_first=scale_first, dtype=torch.float64)
    query, key, value = inputs(8, N, L, S, E, dtype=torch.float64)

    def reference():
        q, k, v = heads(mha, query, key, value)
        return merge(mha, F.scaled_dot_product_attention(q, k, v, scale=0.9))

    tight = {"rtol": 1e-12, "atol": 1e-12}
    assert_same_forward_and_backward(
        lambda: mha(query, key, value, need_weights=need_weights)[0],
        reference,
        leaves(mha, query, key, value),
        tol=tight,
        grad_tol=tight,
    )


def test_scaling_the_scores_after_the_product_overflows_in_float16():
    torch.manual_seed(0)
    first = MultiHeadAttention(64, 1, bias=False, dtype=torch.float16)
    after = MultiHeadAttention(64, 1, bias=False, scale_first=False, dtype=torch.float16)
    after.load_state_dict(first.state_dict())
    for mha in (first, after):
        torch.nn.init.eye_(mha.q_proj.weight)
        torch.nn.init.eye_(mha.k_proj.weight)
    x = torch.full((1, 4, 64), 40.0, dtype=torch.float16)  # q · k = 64 * 1600 > 65504
    assert torch.isfinite(first(x, x, x)[0]).all()
    assert not torch.isfinite(after(x, x, x)[0]).all()
    assert not torch.isfinite(after(x, x, x, need_weights=False)[0]).all()  # never fused


def test_all_options_together_equal_the_references_composed():
    from tests.test_mha_modern_positions import llama_rotary

    E, H, K, N, L = 24, 6, 2, 2, 8
    window = (1, None, 2, 0, 3, None)
    sizes = torch.tensor([GLOBAL if w is None else w for w in window])
    mha = make(9, E, H, num_kv_heads=K, positions="rotary", window=window, qk_norm="rms", scale=0.4)
    query, key, value = inputs(10, N, L, L, E)
    mask = create_mask(sliding_window(sizes, causal=True), N, H, L, L, device="cpu")

    def reference():
        q, k, v = heads(mha, query, key, value)
        q, k = rms_norm(q, mha.q_norm.weight), rms_norm(k, mha.k_norm.weight)
        q, k = llama_rotary(q, 10000.0), llama_rotary(k, 10000.0)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.4, enable_gqa=True)
        return merge(mha, out)

    assert_same_forward_and_backward(
        lambda: mha(query, key, value, is_causal=True)[0],
        reference,
        leaves(mha, query, key, value),
    )


def test_repr_names_the_heads_and_each_option_that_is_set():
    plain = repr(MultiHeadAttention(8, 2))
    assert "num_heads=2" in plain and "num_kv_heads" not in plain and "window" not in plain
    text = repr(
        MultiHeadAttention(
            8,
            4,
            num_kv_heads=2,
            positions="rotary",
            window=3,
            scale=0.5,
            scale_first=False,
            dropout=0.1,
        )
    )
    for part in (
        "num_heads=4",
        "num_kv_heads=2",
        "positions='rotary'",
        "window=(3, 3, 3, 3)",
        "scale=0.5",
        "scale_first=False",
        "dropout=0.1",
    ):
        assert part in text
