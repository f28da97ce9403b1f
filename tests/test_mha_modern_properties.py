"""Properties of MultiHeadAttention with its modern options, on random configurations
(hypothesis): shapes, masks, fully masked rows, dtypes, devices, and named errors for bad
arguments. The references for each option are in ``test_mha_modern*.py``.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from attnbook import MultiHeadAttention
from attnbook.efficient.local import local_mask
from attnbook.interop import to_torch
from attnbook.masks import window_mask

WINDOW = st.one_of(st.none(), st.integers(0, 4))


@st.composite
def options(draw) -> dict:
    """Constructor arguments with every option drawn (D even, for rotary)."""
    H = draw(st.sampled_from([1, 2, 3, 4, 6]), label="num_heads")
    D = draw(st.sampled_from([2, 4]), label="head_dim")
    return {
        "embed_dim": H * D,
        "num_heads": H,
        "num_kv_heads": draw(st.sampled_from([k for k in range(1, H + 1) if H % k == 0])),
        "positions": draw(st.sampled_from(["none", "rotary", "alibi"])),
        "window": draw(st.one_of(WINDOW, st.lists(WINDOW, min_size=H, max_size=H))),
        "qk_norm": draw(st.sampled_from([None, "layer", "rms"])),
        "scale_first": draw(st.booleans()),
    }


def allowed_by_hand(H, L, S, window, causal, attn_mask, pad) -> torch.Tensor:
    """(N, H, L, S) bool, True where a query may attend, from the definitions."""
    j_minus_i = torch.arange(S)[None, :] - torch.arange(L)[:, None]  # (L, S)
    windows = window if isinstance(window, list) else [window] * H
    near = torch.stack([j_minus_i.abs() <= (S + L if w is None else w) for w in windows])
    ok = near & ~attn_mask & ~pad[:, None, None, :]  # (N, H, L, S)
    return ok & (j_minus_i <= 0) if causal else ok


@given(kwargs=options(), data=st.data())
def test_shapes_masks_and_empty_rows(kwargs, data):
    torch.manual_seed(data.draw(st.integers(0, 2**16), label="seed"))
    mha = MultiHeadAttention(**kwargs)
    E, H = kwargs["embed_dim"], kwargs["num_heads"]
    N, L, S = (data.draw(st.integers(1, n), label=name) for name, n in zip("NLS", (3, 6, 6)))
    query, key, value = torch.randn(N, L, E), torch.randn(N, S, E), torch.randn(N, S, E)
    pad = torch.rand(N, S) < data.draw(st.sampled_from([0.0, 0.3, 1.0]), label="padding")
    attn_mask = torch.rand(L, S) < data.draw(st.sampled_from([0.0, 0.3]), label="masked")
    causal = data.draw(st.booleans(), label="is_causal")

    out, weights = mha(query, key, value, key_padding_mask=pad, attn_mask=attn_mask,
                       is_causal=causal, average_attn_weights=False)  # fmt: skip
    assert out.shape == (N, L, E) and weights.shape == (N, H, L, S)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    ok = allowed_by_hand(H, L, S, kwargs["window"], causal, attn_mask, pad)
    assert (weights.masked_select(~ok) == 0).all()
    has_key = ok.any(-1)  # (N, H, L)
    torch.testing.assert_close(weights.sum(-1), has_key.to(weights.dtype))
    empty = ~has_key.any(1)  # (N, L): no head of the query has a key, so its output is the bias
    torch.testing.assert_close(out[empty], mha.out_proj.bias.expand_as(out[empty]))
    fused, none = mha(query, key, value, key_padding_mask=pad, attn_mask=attn_mask,
                      is_causal=causal, need_weights=False)  # fmt: skip
    assert none is None
    torch.testing.assert_close(fused, out, rtol=1e-5, atol=1e-5)
    averaged = mha(query, key, value, key_padding_mask=pad, attn_mask=attn_mask,
                   is_causal=causal)[1]  # fmt: skip
    torch.testing.assert_close(averaged, weights.mean(1))


@given(kwargs=options(), L=st.integers(2, 6), data=st.data())
def test_causal_output_ignores_later_tokens(kwargs, L, data):
    t = data.draw(st.integers(0, L - 2), label="t")
    torch.manual_seed(0)
    mha = MultiHeadAttention(**kwargs)
    x = torch.randn(2, L, kwargs["embed_dim"])
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :])
    out = mha(x, x, x, is_causal=True)[0]
    torch.testing.assert_close(mha(changed, changed, changed, is_causal=True)[0][:, : t + 1],
                               out[:, : t + 1])  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
@given(kwargs=options(), seed=st.integers(0, 2**16))
def test_other_dtypes_compute_what_float32_computes(dtype, kwargs, seed):
    # A layer norm over D = 2 numbers gives +-1 by which one is larger: bfloat16's rounding can
    # swap a near tie and flip the head's weights, which no tolerance bounds.
    head_dim = kwargs["embed_dim"] // kwargs["num_heads"]
    assume(not (dtype == torch.bfloat16 and kwargs["qk_norm"] == "layer" and head_dim == 2))
    torch.manual_seed(seed)
    single = MultiHeadAttention(**kwargs)
    other = MultiHeadAttention(**kwargs, dtype=dtype)
    other.load_state_dict(single.state_dict())
    x = torch.randn(2, 5, kwargs["embed_dim"])
    pad = torch.tensor([[False] * 5, [False, False, True, True, True]])
    out, weights = other(x.to(dtype), x.to(dtype), x.to(dtype), key_padding_mask=pad)
    ref, ref_weights = single(x, x, x, key_padding_mask=pad)
    assert out.dtype == weights.dtype == dtype
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float64 else {"rtol": 0.1, "atol": 0.1}
    torch.testing.assert_close(out.float(), ref, **tol)
    torch.testing.assert_close(weights.float(), ref_weights, **tol)


def test_every_option_runs_on_the_meta_device():
    meta = torch.device("meta")
    mha = MultiHeadAttention(
        16, 4, num_kv_heads=2, positions="alibi", window=(1, None, 0, 2), qk_norm="rms",
        device=meta,
    )  # fmt: skip
    x = torch.randn(2, 5, 16, device=meta)
    out, weights = mha(x, x, x, is_causal=True)
    assert out.device == weights.device == meta and out.shape == (2, 5, 16)
    rotary = MultiHeadAttention(16, 4, positions="rotary", device=meta)
    assert rotary(x, x, x, need_weights=False)[0].device == meta


def test_options_without_parameters_keep_the_state_dict_of_the_default():
    default = MultiHeadAttention(16, 4).state_dict()
    assert list(default) == [
        f"{p}_proj.{w}" for p in ("q", "k", "v", "out") for w in ("weight", "bias")
    ]
    for kwargs in ({"positions": "alibi"}, {"positions": "rotary"}, {"window": 2},
                   {"scale": 0.5, "scale_first": False}):  # fmt: skip
        shapes = {n: t.shape for n, t in MultiHeadAttention(16, 4, **kwargs).state_dict().items()}
        assert shapes == {n: t.shape for n, t in default.items()}
    gqa = MultiHeadAttention(16, 4, num_kv_heads=1, kdim=6).state_dict()
    assert list(gqa) == list(default)
    assert gqa["k_proj.weight"].shape == (4, 6) and gqa["v_proj.bias"].shape == (4,)


@given(H=st.integers(1, 12), K=st.integers(-2, 13))
def test_num_kv_heads_must_divide_num_heads(H, K):
    assume(K <= 0 or H % K)
    with pytest.raises(ValueError, match=f"num_kv_heads .* num_heads = {H}; got {K}"):
        MultiHeadAttention(2 * H, H, num_kv_heads=K)


@given(H=st.integers(1, 6), count=st.integers(0, 8))
def test_a_window_per_head_needs_one_per_head(H, count):
    assume(count != H)
    with pytest.raises(ValueError, match=f"window must give H = {H} windows"):
        MultiHeadAttention(2 * H, H, window=[1] * count)


BAD = {
    "num_kv_heads not an int": ({"num_kv_heads": 2.0}, ValueError, "num_kv_heads"),
    "unknown positions": ({"positions": "relative"}, ValueError, "positions must be"),
    "rotary with an odd head": ({"embed_dim": 6, "positions": "rotary"}, ValueError, "D = 3"),
    "rotary_base 1": ({"rotary_base": 1.0}, ValueError, "rotary_base must be a number > 1"),
    "negative window": ({"window": -1}, ValueError, "window must give H = 2 windows"),
    "bool window": ({"window": [True, 1]}, ValueError, "window must give H = 2 windows"),
    "float window": ({"window": 1.5}, TypeError, "window must be an int"),
    "float tensor window": ({"window": torch.tensor([1.0, 2.0])}, TypeError, "integer tensor"),
    "2-D tensor window": ({"window": torch.ones(2, 2, dtype=torch.int64)}, TypeError, "(2, 2)"),
    "qk_norm True": ({"qk_norm": True}, ValueError, 'qk_norm must be None, "layer" or "rms"'),
    "zero scale": ({"scale": 0.0}, ValueError, "scale must be positive and finite; got 0.0"),
    "string scale": ({"scale": "big"}, TypeError, "scale must be a number or None; got str"),
}


@pytest.mark.parametrize("kwargs, error, words", BAD.values(), ids=BAD.keys())
def test_bad_options_raise_named_errors(kwargs, error, words):
    arguments = {"embed_dim": 8, "num_heads": 2, **kwargs}
    with pytest.raises(error, match=re.escape(words)):
        MultiHeadAttention(**arguments)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"num_kv_heads": 2}, "num_kv_heads"), ({"positions": "alibi"}, "positions"),
     ({"window": 1}, "window"), ({"qk_norm": "layer"}, "qk_norm"), ({"scale": 0.5}, "scale"),
     ({"scale_first": False}, "scale_first")],
)  # fmt: skip
def test_to_torch_refuses_what_torch_does_not_have(kwargs, name):
    with pytest.raises(ValueError, match=f"sets \\['{name}'\\]"):
        to_torch(MultiHeadAttention(16, 4, **kwargs))


@given(
    L=st.integers(1, 7),
    S=st.integers(1, 7),
    windows=st.lists(WINDOW, min_size=1, max_size=4),
    causal=st.booleans(),
)
def test_window_mask_stacks_the_books_sliding_windows(L, S, windows, causal):
    mask = window_mask(L, windows, causal, key_length=S)
    assert mask.shape == (len(windows), L, S)
    for h, w in enumerate(windows):
        expected = local_mask(L, S, window=L + S if w is None else w, is_causal=causal)
        assert mask[h].equal(expected)


@pytest.mark.parametrize("windows", [[], [-1], [1.5], [True]])
def test_window_mask_names_bad_windows(windows):
    with pytest.raises(ValueError, match="windows must be integers >= 0 or None"):
        window_mask(3, windows)
