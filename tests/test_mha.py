"""Specification of attnbook.MultiHeadAttention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import Tensor, nn

from attnbook import MultiHeadAttention
from attnbook.interop import from_torch, to_torch
from attnbook.masks import causal_mask

INF = float("inf")
TOL = {"rtol": 1e-5, "atol": 1e-5}
GRAD_TOL = {"rtol": 1e-4, "atol": 1e-4}

# PyTorch warns when attn_mask and key_padding_mask have different dtypes; we test that case.
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")


def pair(seed: int, **kwargs) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    """A random torch.nn.MultiheadAttention and our copy of it."""
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(batch_first=True, **kwargs)
    with torch.no_grad():  # PyTorch zeroes the biases at init; make them matter
        for p in theirs.parameters():
            if p.dim() == 1:
                p.normal_()
    return from_torch(theirs), theirs


def random_mha_case(seed: int) -> tuple[dict, dict]:
    """Module arguments and forward arguments covering self/cross attention and every mask."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    E, H = rng.choice([(8, 1), (8, 2), (12, 3), (16, 4)])
    kdim, vdim = rng.choice([(None, None), (None, None), (5, 7), (6, None)])
    bias = rng.random() < 0.8
    module = {"embed_dim": E, "num_heads": H, "kdim": kdim, "vdim": vdim, "bias": bias}
    N, L = rng.randint(1, 3), rng.randint(1, 5)
    query = torch.randn(N, L, E, generator=g)
    if kdim is None and vdim is None and rng.random() < 0.4:
        S, key, value = L, query, query  # self-attention
    else:
        S = rng.randint(1, 6)
        key = torch.randn(N, S, kdim or E, generator=g)
        value = torch.randn(N, S, vdim or E, generator=g)
    call = {
        "query": query,
        "key": key,
        "value": value,
        "need_weights": rng.random() < 0.75,
        "average_attn_weights": rng.random() < 0.5,
    }
    # Key 0 is always allowed, so that PyTorch's reference has no NaN rows.
    attn_kind = rng.choice([None, "bool 2-D", "bool 3-D", "float 2-D", "float 3-D"])
    if attn_kind is not None:
        shape = (L, S) if "2-D" in attn_kind else (N * H, L, S)
        not_allowed = torch.rand(shape, generator=g) < 0.3
        not_allowed[..., 0] = False
        if attn_kind.startswith("bool"):
            call["attn_mask"] = not_allowed
        else:
            call["attn_mask"] = torch.randn(shape, generator=g).masked_fill(not_allowed, -INF)
    padding_kind = rng.choice([None, "bool", "float"])
    if padding_kind is not None:
        is_pad = torch.rand(N, S, generator=g) < 0.3
        is_pad[:, 0] = False
        if padding_kind == "bool":
            call["key_padding_mask"] = is_pad
        else:
            call["key_padding_mask"] = torch.randn(N, S, generator=g).masked_fill(is_pad, -INF)
    return module, call


def inputs_with_grad(call: dict) -> dict:
    """A copy of ``call`` whose query/key/value require grad (self-attention stays shared)."""
    copies: dict[int, Tensor] = {}
    out = dict(call)
    for name in ("query", "key", "value"):
        t = call[name]
        if id(t) not in copies:
            copies[id(t)] = t.clone().requires_grad_()
        out[name] = copies[id(t)]
    return out


@pytest.mark.parametrize("H", [1, 2, 4, 8, 16])
def test_parameter_count_equals_torch(H: int) -> None:
    ours = sum(p.numel() for p in MultiHeadAttention(512, H).parameters())
    theirs = sum(p.numel() for p in nn.MultiheadAttention(512, H, batch_first=True).parameters())
    assert ours == theirs


def test_parameter_count_for_512_and_8_heads_is_1_050_624() -> None:
    assert sum(p.numel() for p in MultiHeadAttention(512, 8).parameters()) == 1_050_624


@pytest.mark.parametrize("kwargs", [{"kdim": 24, "vdim": 40}, {"bias": False}])
def test_parameter_count_equals_torch_with_kdim_vdim_or_no_bias(kwargs: dict) -> None:
    ours = sum(p.numel() for p in MultiHeadAttention(32, 4, **kwargs).parameters())
    theirs = sum(p.numel() for p in nn.MultiheadAttention(32, 4, **kwargs).parameters())
    assert ours == theirs


@pytest.mark.parametrize("seed", range(40))
def test_output_and_weights_match_torch(seed: int) -> None:
    module, call = random_mha_case(seed)
    ours, theirs = pair(seed, **module)
    output, weights = ours(**call)
    expected_output, expected_weights = theirs(**call)
    torch.testing.assert_close(output, expected_output, **TOL)
    if call["need_weights"]:
        torch.testing.assert_close(weights, expected_weights, **TOL)
    else:
        assert weights is None and expected_weights is None


@pytest.mark.parametrize("seed", range(16))
def test_gradients_of_inputs_and_parameters_match_torch(seed: int) -> None:
    module, call = random_mha_case(seed)
    call["need_weights"] = seed % 2 == 0
    ours, theirs = pair(seed, **module)
    ours_call, theirs_call = inputs_with_grad(call), inputs_with_grad(call)
    g = torch.Generator().manual_seed(seed)
    results = [ours(**ours_call), theirs(**theirs_call)]
    grad_out = torch.randn(results[0][0].shape, generator=g)
    grad_w = torch.randn(results[0][1].shape, generator=g) if call["need_weights"] else None
    for output, weights in results:
        loss = (output * grad_out).sum()
        if weights is not None:
            loss = loss + (weights * grad_w).sum()
        loss.backward()
    for name in ("query", "key", "value"):
        torch.testing.assert_close(ours_call[name].grad, theirs_call[name].grad, **GRAD_TOL)
    our_grads = {
        "q": ours.q_proj.weight.grad,
        "k": ours.k_proj.weight.grad,
        "v": ours.v_proj.weight.grad,
        "out": ours.out_proj.weight.grad,
    }
    if theirs._qkv_same_embed_dim:
        q, k, v = theirs.in_proj_weight.grad.chunk(3)
    else:
        q, k, v = (theirs.q_proj_weight.grad, theirs.k_proj_weight.grad, theirs.v_proj_weight.grad)
    their_grads = {"q": q, "k": k, "v": v, "out": theirs.out_proj.weight.grad}
    torch.testing.assert_close(our_grads, their_grads, **GRAD_TOL)
    if module["bias"]:
        our_bias = torch.cat([ours.q_proj.bias.grad, ours.k_proj.bias.grad, ours.v_proj.bias.grad])
        torch.testing.assert_close(our_bias, theirs.in_proj_bias.grad, **GRAD_TOL)
        torch.testing.assert_close(ours.out_proj.bias.grad, theirs.out_proj.bias.grad, **GRAD_TOL)


@pytest.mark.parametrize("seed", range(16))
def test_need_weights_false_gives_the_same_output(seed: int) -> None:
    module, call = random_mha_case(seed)
    ours, theirs = pair(seed, **module)
    call["need_weights"] = True
    with_weights, _ = ours(**call)
    call["need_weights"] = False
    without_weights, weights = ours(**call)
    assert weights is None
    torch.testing.assert_close(without_weights, with_weights, **TOL)
    torch.testing.assert_close(without_weights, theirs(**call)[0], **TOL)


@pytest.mark.parametrize("seed", range(4))
def test_matches_torch_inference_fast_path(seed: int) -> None:
    ours, theirs = pair(seed, embed_dim=16, num_heads=4)
    ours.eval(), theirs.eval()
    x = torch.randn(3, 5, 16)
    is_pad = torch.tensor([[False] * 5, [False, False, False, True, True], [False] + [True] * 4])
    with torch.inference_mode():
        for need_weights in (False, True):
            expected, _ = theirs(x, x, x, key_padding_mask=is_pad, need_weights=need_weights)
            output, _ = ours(x, x, x, key_padding_mask=is_pad, need_weights=need_weights)
            torch.testing.assert_close(output, expected, **TOL)


@pytest.mark.parametrize(
    "kwargs", [{}, {"kdim": 5, "vdim": 7}, {"bias": False}, {"kdim": 6, "bias": False}]
)
def test_to_torch_then_from_torch_round_trips_the_weights(kwargs: dict) -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(12, 3, **kwargs)
    back = from_torch(to_torch(ours))
    torch.testing.assert_close(back.state_dict(), ours.state_dict(), rtol=0, atol=0)


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 5, "vdim": 7}, {"bias": False}])
def test_from_torch_then_to_torch_round_trips_the_weights(kwargs: dict) -> None:
    _, theirs = pair(0, embed_dim=12, num_heads=3, **kwargs)
    back = to_torch(from_torch(theirs))
    torch.testing.assert_close(back.state_dict(), theirs.state_dict(), rtol=0, atol=0)


def test_to_torch_computes_the_same_output() -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(12, 3, kdim=5, vdim=7)
    theirs = to_torch(ours)
    assert theirs.batch_first
    q, k, v = torch.randn(2, 4, 12), torch.randn(2, 6, 5), torch.randn(2, 6, 7)
    torch.testing.assert_close(ours(q, k, v)[0], theirs(q, k, v)[0], **TOL)


def test_from_torch_keeps_dtype_dropout_and_training_mode() -> None:
    theirs = nn.MultiheadAttention(8, 2, dropout=0.25, batch_first=True, dtype=torch.float64)
    ours = from_torch(theirs.eval())
    assert ours.q_proj.weight.dtype == torch.float64
    assert ours.dropout == 0.25
    assert not ours.training


def test_is_causal_without_attn_mask_equals_torch_with_explicit_causal_mask() -> None:
    ours, theirs = pair(0, embed_dim=16, num_heads=4)
    x = torch.randn(2, 6, 16)
    not_allowed = ~causal_mask(6)
    for need_weights in (True, False):
        output, weights = ours(x, x, x, is_causal=True, need_weights=need_weights)
        expected, expected_weights = theirs(
            x, x, x, attn_mask=not_allowed, is_causal=True, need_weights=need_weights
        )
        torch.testing.assert_close(output, expected, **TOL)
        if need_weights:
            torch.testing.assert_close(weights, expected_weights, **TOL)


def test_is_causal_with_attn_mask_applies_both_restrictions() -> None:
    ours, theirs = pair(0, embed_dim=16, num_heads=4)
    x = torch.randn(2, 6, 16)
    not_allowed = torch.rand(6, 6) < 0.3
    not_allowed[:, 0] = False
    combined = not_allowed | ~causal_mask(6)
    for need_weights in (True, False):
        output, _ = ours(x, x, x, attn_mask=not_allowed, is_causal=True, need_weights=need_weights)
        expected, _ = theirs(x, x, x, attn_mask=combined, need_weights=need_weights)
        torch.testing.assert_close(output, expected, **TOL)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("float_mask", [False, True], ids=["bool", "float"])
def test_fully_padded_batch_element_gives_zero_attention(
    need_weights: bool, float_mask: bool
) -> None:
    ours, theirs = pair(0, embed_dim=16, num_heads=4)
    x = torch.randn(2, 5, 16, requires_grad=True)
    is_pad = torch.tensor([[True] * 5, [False, False, True, True, True]])
    padding = torch.zeros(2, 5).masked_fill(is_pad, -INF) if float_mask else is_pad
    output, weights = ours(x, x, x, key_padding_mask=padding, need_weights=need_weights)
    torch.testing.assert_close(output[0], ours.out_proj.bias.expand(5, 16), rtol=0, atol=0)
    if need_weights:
        assert torch.equal(weights[0], torch.zeros(5, 5))
    expected, _ = theirs(x, x, x, key_padding_mask=padding, need_weights=need_weights)
    torch.testing.assert_close(output[1], expected[1], **TOL)
    output.sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in ours.parameters())


def test_torch_mha_gives_nan_for_a_fully_padded_batch_element_when_weights_are_needed() -> None:
    """The PyTorch 2.13 behaviour our docstring promises to differ from."""
    _, theirs = pair(0, embed_dim=16, num_heads=4)
    x = torch.randn(2, 5, 16)
    is_pad = torch.tensor([[True] * 5, [False] * 5])
    output, weights = theirs(x, x, x, key_padding_mask=is_pad, need_weights=True)
    assert torch.isnan(output[0]).all() and torch.isnan(weights[0]).all()
    assert not torch.isnan(output[1]).any()


def test_weights_per_head_average_to_the_averaged_weights() -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4)
    q, kv = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    _, per_head = ours(q, kv, kv, average_attn_weights=False)
    _, averaged = ours(q, kv, kv)
    assert per_head.shape == (2, 4, 3, 5) and averaged.shape == (2, 3, 5)
    torch.testing.assert_close(per_head.mean(dim=1), averaged)


def test_dropout_in_eval_mode_is_deterministic() -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4, dropout=0.5).eval()
    x = torch.randn(2, 5, 16)
    first, second = ours(x, x, x), ours(x, x, x)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    assert torch.equal(ours(x, x, x, need_weights=False)[0], ours(x, x, x, need_weights=False)[0])


def test_dropout_in_training_mode_drops_weights() -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4, dropout=0.5).train()
    x = torch.randn(2, 8, 16)
    _, dropped = ours(x, x, x, average_attn_weights=False)
    _, plain = ours.eval()(x, x, x, average_attn_weights=False)
    kept = dropped != 0
    assert kept.any() and not kept.all()
    torch.testing.assert_close(dropped[kept], plain[kept] * 2.0)


def test_forward_does_not_stash_anything_on_the_module() -> None:
    ours = MultiHeadAttention(16, 4)
    before = {name: id(value) for name, value in vars(ours).items()}
    buffers = dict(ours.named_buffers())
    x = torch.randn(2, 5, 16)
    ours(x, x, x, average_attn_weights=False)
    assert {name: id(value) for name, value in vars(ours).items()} == before
    assert dict(ours.named_buffers()) == buffers


def test_gradcheck_in_float64() -> None:
    torch.manual_seed(0)
    ours = MultiHeadAttention(6, 2, kdim=4, vdim=5, dtype=torch.float64)
    q = torch.randn(2, 3, 6, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)
    is_pad = torch.tensor([[False, False, True, False], [True] * 4])  # element 1: all padding
    assert torch.autograd.gradcheck(
        lambda q, k, v: ours(q, k, v, key_padding_mask=is_pad, average_attn_weights=False),
        (q, k, v),
    )


@given(L=st.integers(min_value=2, max_value=7), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_causal_output_ignores_later_tokens(L: int, seed: int, data: st.DataObject) -> None:
    t = data.draw(st.integers(min_value=0, max_value=L - 2), label="t")
    torch.manual_seed(seed)
    ours = MultiHeadAttention(8, 2)
    x = torch.randn(2, L, 8)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn(2, L - t - 1, 8)
    for need_weights in (True, False):
        output, _ = ours(x, x, x, is_causal=True, need_weights=need_weights)
        output_changed, _ = ours(
            changed, changed, changed, is_causal=True, need_weights=need_weights
        )
        torch.testing.assert_close(output_changed[:, : t + 1], output[:, : t + 1], **TOL)


@given(S=st.integers(min_value=1, max_value=7), seed=st.integers(0, 2**31 - 1))
def test_permuting_keys_values_and_padding_leaves_output_unchanged(S: int, seed: int) -> None:
    torch.manual_seed(seed)
    ours = MultiHeadAttention(8, 2, kdim=3)
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, S, 3), torch.randn(2, S, 8)
    is_pad = torch.rand(2, S) < 0.3
    perm = torch.randperm(S)
    output, weights = ours(q, k, v, key_padding_mask=is_pad)
    permuted, permuted_weights = ours(q, k[:, perm], v[:, perm], key_padding_mask=is_pad[:, perm])
    torch.testing.assert_close(permuted, output, **TOL)
    torch.testing.assert_close(permuted_weights, weights[..., perm], **TOL)


def test_embed_dim_not_divisible_by_num_heads_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"embed_dim=10 and num_heads=4"):
        MultiHeadAttention(10, 4)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_first": False}, r"batch_first=True"),
        ({"batch_first": True, "add_bias_kv": True}, r"add_bias_kv"),
        ({"batch_first": True, "add_zero_attn": True}, r"add_zero_attn"),
    ],
)
def test_from_torch_rejects_unsupported_modules(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_torch(nn.MultiheadAttention(8, 2, **kwargs))


def ok_call() -> dict:
    """Valid arguments for MultiHeadAttention(16, 4, kdim=5, vdim=7): N=2, L=3, S=6."""
    return {
        "query": torch.randn(2, 3, 16),
        "key": torch.randn(2, 6, 5),
        "value": torch.randn(2, 6, 7),
    }


FORWARD_ERRORS = [
    (
        {"query": torch.randn(2, 3, 12)},
        ValueError,
        r"query must have embed_dim = 16 features \(last dim\); got \(2, 3, 12\)",
    ),
    ({"key": torch.randn(2, 6, 16)}, ValueError, r"key must have kdim = 5 features .*\(2, 6, 16\)"),
    (
        {"value": torch.randn(2, 6, 16)},
        ValueError,
        r"value must have vdim = 7 features .*\(2, 6, 16\)",
    ),
    (
        {"query": torch.randn(3, 16)},
        ValueError,
        r"query must be 3-D, batch first: \(N, L, embed_dim\); got \(3, 16\)",
    ),
    ({"key": torch.randn(1, 2, 6, 5)}, ValueError, r"key must be 3-D.*got \(1, 2, 6, 5\)"),
    (
        {"query": torch.randn(4, 3, 16)},
        ValueError,
        r"same batch size N .*query \(4, 3, 16\), key \(2, 6, 5\), value \(2, 6, 7\)",
    ),
    (
        {"value": torch.randn(2, 5, 7)},
        ValueError,
        r"key and value must have the same length S .*key \(2, 6, 5\) and value \(2, 5, 7\)",
    ),
    (
        {"query": torch.randn(2, 3, 16, dtype=torch.float64)},
        TypeError,
        r"query must have the parameters' dtype torch.float32; got dtype torch.float64",
    ),
    (
        {"attn_mask": torch.zeros(3, 5)},
        ValueError,
        r"attn_mask must have shape \(L, S\) = \(3, 6\) or \(N\*num_heads, L, S\) = \(8, 3, 6\); "
        r"got \(3, 5\)",
    ),
    (
        {"attn_mask": torch.zeros(2, 3, 6)},
        ValueError,
        r"attn_mask must have shape .*got \(2, 3, 6\)",
    ),
    (
        {"attn_mask": torch.zeros(3, 6, dtype=torch.int64)},
        TypeError,
        r"attn_mask must be a bool or floating-point tensor; got dtype torch.int64",
    ),
    (
        {"key_padding_mask": torch.zeros(2, 5, dtype=torch.bool)},
        ValueError,
        r"key_padding_mask must have shape \(N, S\) = \(2, 6\); got \(2, 5\)",
    ),
    (
        {"key_padding_mask": torch.zeros(2, 6, dtype=torch.uint8)},
        TypeError,
        r"key_padding_mask must be a bool or floating-point tensor; got dtype torch.uint8",
    ),
]


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("changes, error, message", FORWARD_ERRORS)
def test_bad_forward_arguments_raise_named_errors(
    changes: dict, error: type[Exception], message: str, need_weights: bool
) -> None:
    ours = MultiHeadAttention(16, 4, kdim=5, vdim=7)
    with pytest.raises(error, match=message):
        ours(**(ok_call() | changes), need_weights=need_weights)
