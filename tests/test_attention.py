"""Specification of attnbook.attention against torch.nn.functional.scaled_dot_product_attention.

PyTorch's SDPA returns no weights; applied to identity values (V = I, shape (S, S)) its output
*is* the weight matrix, which gives a public reference for our weights.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch import Tensor

from attnbook import scaled_dot_product_attention
from attnbook.attention import fused_attention
from attnbook.masks import causal_mask

INF = float("inf")
TOL = {"rtol": 1e-5, "atol": 1e-5}


def torch_weights(query: Tensor, key: Tensor, **kwargs) -> Tensor:
    """PyTorch's attention weights: its SDPA output for identity values."""
    eye = torch.eye(key.size(-2), dtype=query.dtype)
    return F.scaled_dot_product_attention(query, key, eye, **kwargs)


def random_case(seed: int) -> dict:
    """Random inputs for one call: batch dims, L != S, E != Ev, every mask kind, scale."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    batch = rng.choice([(), (2,), (2, 3)])
    L, S, E, Ev = (rng.randint(1, 6) for _ in range(4))
    case = {
        "query": torch.randn(*batch, L, E, generator=g),
        "key": torch.randn(*batch, S, E, generator=g),
        "value": torch.randn(*batch, S, Ev, generator=g),
        "scale": rng.choice([None, 0.3, 2.0]),
    }
    kind = rng.choice(["none", "bool", "bool (L, S)", "float", "float (1, S)"])
    if kind.startswith("bool"):
        shape = (L, S) if kind == "bool (L, S)" else (*batch, L, S)
        case["attn_mask"] = torch.rand(shape, generator=g) > 0.3
    elif kind.startswith("float"):
        shape = (1, S) if kind == "float (1, S)" else (*batch, L, S)
        forbidden = torch.rand(shape, generator=g) < 0.2
        case["attn_mask"] = torch.randn(shape, generator=g).masked_fill(forbidden, -INF)
    else:
        case["is_causal"] = rng.random() < 0.5
    return case


def with_grad(case: dict) -> dict:
    return {
        name: t.clone().requires_grad_() if isinstance(t, Tensor) and name != "attn_mask" else t
        for name, t in case.items()
    }


@pytest.mark.parametrize("seed", range(40))
def test_output_matches_torch_sdpa(seed: int) -> None:
    case = random_case(seed)
    output, _ = scaled_dot_product_attention(**case)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(**case), **TOL)


@pytest.mark.parametrize("seed", range(40))
def test_weights_match_torch_sdpa_of_identity_values(seed: int) -> None:
    case = random_case(seed)
    _, weights = scaled_dot_product_attention(**case)
    value = case.pop("value")
    expected = torch_weights(**case).expand(*value.shape[:-2], -1, -1)
    torch.testing.assert_close(weights, expected, **TOL)


@pytest.mark.parametrize("seed", range(40))
def test_fused_path_output_matches_readable_path(seed: int) -> None:
    case = random_case(seed)
    case["is_causal"] = seed % 2 == 0  # also with a mask: both restrictions apply
    expected, _ = scaled_dot_product_attention(**case)
    torch.testing.assert_close(fused_attention(**case), expected, **TOL)


@pytest.mark.parametrize("seed", range(12))
def test_gradients_match_torch_sdpa(seed: int) -> None:
    case = random_case(seed)
    ours, theirs = with_grad(case), with_grad(case)
    g = torch.Generator().manual_seed(seed)
    output, weights = scaled_dot_product_attention(**ours)
    grad_out = torch.randn(output.shape, generator=g)
    grad_w = torch.randn(weights.shape, generator=g)
    ((output * grad_out).sum() + (weights * grad_w).sum()).backward()
    value = theirs.pop("value")
    expected_out = F.scaled_dot_product_attention(value=value, **theirs)
    expected_w = torch_weights(**theirs)
    ((expected_out * grad_out).sum() + (expected_w * grad_w).sum()).backward()
    for name in ("query", "key"):
        torch.testing.assert_close(ours[name].grad, theirs[name].grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(ours["value"].grad, value.grad, rtol=1e-4, atol=1e-4)


def test_scores_weights_output_by_hand() -> None:
    query = torch.tensor([[2.0, 0.0]])
    key = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    value = torch.tensor([[10.0], [20.0]])
    output, weights = scaled_dot_product_attention(query, key, value)
    scores = torch.tensor([[2.0 / math.sqrt(2.0), 0.0]])  # Q K^T / sqrt(d_k)
    expected = torch.softmax(scores, dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(output, expected @ value)


def test_temperature_divides_the_scaled_scores() -> None:
    case = random_case(3)
    case["scale"] = 0.5
    output, weights = scaled_dot_product_attention(**case, temperature=4.0)
    case["scale"] = 0.5 / 4.0
    torch.testing.assert_close(output, F.scaled_dot_product_attention(**case), **TOL)
    del case["value"]
    torch.testing.assert_close(weights, torch_weights(**case), **TOL)


def test_is_causal_with_attn_mask_applies_both_where_torch_raises() -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 3, generator=g) for _ in range(3))
    mask = torch.rand(4, 4, generator=g) > 0.3
    with pytest.raises(RuntimeError):  # PyTorch 2.13 refuses the combination
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    output, _ = scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask & causal_mask(4))
    torch.testing.assert_close(output, expected, **TOL)


def test_dropout_zeroes_weights_and_rescales_the_rest() -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(4, 8, n, generator=g) for n in (5, 5, 3))
    _, plain = scaled_dot_product_attention(q, k, v)
    torch.manual_seed(0)
    output, dropped = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    kept = dropped != 0
    assert kept.any() and not kept.all()
    torch.testing.assert_close(dropped[kept], plain[kept] * 2.0)
    torch.testing.assert_close(output, dropped @ v)


FULLY_MASKED_DTYPES = [
    (torch.float32, 1e-5),
    (torch.float16, 2e-2),
    (torch.bfloat16, 1e-1),
]


def fully_masked_inputs(dtype: torch.dtype, float_mask: bool) -> tuple[Tensor, ...]:
    """(N=2, L=3, E=4) inputs with S=5 where query row 1 may attend to no key."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, n, 4, generator=g) for n in (3, 5, 5))
    allowed = torch.rand(3, 5, generator=g) > 0.3
    allowed[0, 0] = allowed[2, 4] = True
    allowed[1] = False
    mask = torch.zeros(3, 5).masked_fill(~allowed, -INF) if float_mask else allowed
    return q, k, v, mask


@pytest.mark.parametrize("float_mask", [False, True], ids=["bool", "float"])
@pytest.mark.parametrize("dtype, tol", FULLY_MASKED_DTYPES, ids=lambda x: str(x))
def test_fully_masked_row_gives_zeros_and_finite_gradients(
    dtype: torch.dtype, tol: float, float_mask: bool
) -> None:
    q32, k32, v32, mask32 = fully_masked_inputs(torch.float32, float_mask)
    q, k, v = (t.to(dtype).requires_grad_() for t in (q32, k32, v32))
    mask = mask32 if mask32.dtype == torch.bool else mask32.to(dtype)
    output, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert output.dtype == weights.dtype == dtype
    assert torch.equal(output[:, 1], torch.zeros_like(output[:, 1]))
    assert torch.equal(weights[:, 1], torch.zeros_like(weights[:, 1]))
    (output.sum() + weights.sum()).backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(q.grad[:, 1], torch.zeros_like(q.grad[:, 1]))
    expected, _ = scaled_dot_product_attention(q32, k32, v32, attn_mask=mask32)
    torch.testing.assert_close(output.float(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("float_mask", [False, True], ids=["bool", "float"])
@pytest.mark.parametrize("dtype, tol", FULLY_MASKED_DTYPES, ids=lambda x: str(x))
def test_fused_fully_masked_row_gives_zeros_and_finite_gradients(
    dtype: torch.dtype, tol: float, float_mask: bool
) -> None:
    q32, k32, v32, mask32 = fully_masked_inputs(torch.float32, float_mask)
    q, k, v = (t.to(dtype).requires_grad_() for t in (q32, k32, v32))
    mask = mask32 if mask32.dtype == torch.bool else mask32.to(dtype)
    output = fused_attention(q, k, v, attn_mask=mask)
    assert torch.equal(output[:, 1], torch.zeros_like(output[:, 1]))
    output.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    expected, _ = scaled_dot_product_attention(q32, k32, v32, attn_mask=mask32)
    torch.testing.assert_close(output.float(), expected, rtol=tol, atol=tol)


def test_torch_sdpa_gives_zeros_for_fully_masked_rows_too() -> None:
    """The PyTorch 2.13 behaviour our fused path is checked against (not relied upon)."""
    q, k, v, mask = fully_masked_inputs(torch.float32, float_mask=False)
    float_mask = torch.zeros(mask.shape).masked_fill(~mask, -INF)
    for m in (mask, float_mask):
        output = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        assert torch.equal(output[:, 1], torch.zeros_like(output[:, 1]))


@pytest.mark.parametrize(
    "function", [scaled_dot_product_attention, fused_attention], ids=["readable", "fused"]
)
def test_gradcheck_in_float64(function: Callable) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, n, 3, generator=g, dtype=torch.float64) for n in (4, 5, 5))
    inputs = tuple(t.requires_grad_() for t in (q, k, v))
    mask = torch.rand(4, 5, generator=g) > 0.4
    mask[0] = False  # a row without keys must have well-defined (zero) gradients too
    mask[1:, 0] = True
    assert torch.autograd.gradcheck(
        lambda q, k, v: function(q, k, v, attn_mask=mask, temperature=1.5), inputs
    )
    assert torch.autograd.gradcheck(lambda q, k, v: function(q, k, v, is_causal=True), inputs)


dims = st.integers(min_value=1, max_value=6)
seeds = st.integers(min_value=0, max_value=2**31 - 1)


def random_inputs(seed: int, L: int, S: int, E: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, L, E, generator=g)
    k, v = torch.randn(2, S, E, generator=g), torch.randn(2, S, 3, generator=g)
    allowed = torch.rand(2, L, S, generator=g) > 0.4
    return q, k, v, allowed


def as_float(allowed: Tensor) -> Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, -INF)


@given(L=dims, S=dims, E=dims, seed=seeds, float_mask=st.booleans())
def test_weights_sum_to_one_over_allowed_keys(
    L: int, S: int, E: int, seed: int, float_mask: bool
) -> None:
    q, k, v, allowed = random_inputs(seed, L, S, E)
    _, weights = scaled_dot_product_attention(q, k, v, as_float(allowed) if float_mask else allowed)
    sums = weights.sum(dim=-1)
    has_key = allowed.any(dim=-1)
    torch.testing.assert_close(sums[has_key], torch.ones_like(sums[has_key]))
    assert torch.equal(sums[~has_key], torch.zeros_like(sums[~has_key]))


@given(L=dims, S=dims, E=dims, seed=seeds, float_mask=st.booleans())
def test_masked_keys_get_exactly_zero_weight(
    L: int, S: int, E: int, seed: int, float_mask: bool
) -> None:
    q, k, v, allowed = random_inputs(seed, L, S, E)
    _, weights = scaled_dot_product_attention(q, k, v, as_float(allowed) if float_mask else allowed)
    assert (weights[~allowed] == 0).all()


@given(L=dims, S=dims, E=dims, seed=seeds)
def test_permuting_keys_and_values_together_leaves_output_unchanged(
    L: int, S: int, E: int, seed: int
) -> None:
    q, k, v, allowed = random_inputs(seed, L, S, E)
    perm = torch.randperm(S, generator=torch.Generator().manual_seed(seed))
    output, weights = scaled_dot_product_attention(q, k, v, allowed)
    permuted, permuted_weights = scaled_dot_product_attention(
        q, k[:, perm], v[:, perm], allowed[..., perm]
    )
    torch.testing.assert_close(permuted, output, **TOL)
    torch.testing.assert_close(permuted_weights, weights[..., perm], **TOL)


@given(L=st.integers(min_value=2, max_value=8), E=dims, seed=seeds, data=st.data())
def test_causal_output_ignores_later_tokens(L: int, E: int, seed: int, data: st.DataObject) -> None:
    t = data.draw(st.integers(min_value=0, max_value=L - 2), label="t")
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, L, E, generator=g)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn(2, L - t - 1, E, generator=g)
    output, _ = scaled_dot_product_attention(x, x, x, is_causal=True)
    output_changed, _ = scaled_dot_product_attention(changed, changed, changed, is_causal=True)
    torch.testing.assert_close(output_changed[:, : t + 1], output[:, : t + 1], **TOL)


def ok_inputs() -> dict:
    """Valid arguments: N=2, L=3, S=5, E=4, Ev=6."""
    return {
        "query": torch.randn(2, 3, 4),
        "key": torch.randn(2, 5, 4),
        "value": torch.randn(2, 5, 6),
    }


ERROR_CASES = [
    # (changes to ok_inputs(), exception, message pattern)
    (
        {"key": torch.randn(2, 5, 3)},
        ValueError,
        r"query and key must have the same feature size E .*query \(2, 3, 4\) and key \(2, 5, 3\)",
    ),
    (
        {"value": torch.randn(2, 4, 6)},
        ValueError,
        r"key and value must have the same length S .*key \(2, 5, 4\) and value \(2, 4, 6\)",
    ),
    (
        {"key": torch.randn(3, 5, 4), "value": torch.randn(3, 5, 6)},
        ValueError,
        r"batch dimensions of query, key and value must be broadcastable.*query \(2, 3, 4\)",
    ),
    ({"query": torch.randn(4)}, ValueError, r"query must have at least 2 dimensions; got \(4,\)"),
    (
        {"query": torch.ones(2, 3, 4, dtype=torch.int64)},
        TypeError,
        r"query must be a floating-point tensor; got dtype torch.int64",
    ),
    (
        {"value": torch.randn(2, 5, 6, dtype=torch.float64)},
        TypeError,
        r"same dtype; got query torch.float32, key torch.float32, value torch.float64",
    ),
    ({"key": torch.randn(2, 5, 4, device="meta")}, ValueError, r"same device.*key meta"),
    ({"query": [[1.0]]}, TypeError, r"query must be a torch.Tensor; got list"),
    (
        {"attn_mask": torch.ones(3, 5, dtype=torch.int64)},
        TypeError,
        r"attn_mask must be a bool or floating-point tensor; got dtype torch.int64",
    ),
    (
        {"attn_mask": torch.ones(3, 4, dtype=torch.bool)},
        ValueError,
        r"attn_mask must be broadcastable to \(\.\.\., L, S\) = \(2, 3, 5\); got \(3, 4\)",
    ),
    (
        {"attn_mask": torch.ones(4, 3, 5, dtype=torch.bool)},
        ValueError,
        r"attn_mask must be broadcastable to \(\.\.\., L, S\) = \(2, 3, 5\); got \(4, 3, 5\)",
    ),
    ({"dropout_p": 1.0}, ValueError, r"dropout_p must be in \[0, 1\); got 1.0"),
    ({"dropout_p": -0.1}, ValueError, r"dropout_p must be in \[0, 1\); got -0.1"),
    ({"temperature": 0.0}, ValueError, r"temperature must be > 0; got 0.0"),
    ({"temperature": -2.0}, ValueError, r"temperature must be > 0; got -2.0"),
]


@pytest.mark.parametrize(
    "function", [scaled_dot_product_attention, fused_attention], ids=["readable", "fused"]
)
@pytest.mark.parametrize("changes, error, message", ERROR_CASES)
def test_bad_arguments_raise_named_errors(
    function: Callable, changes: dict, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        function(**(ok_inputs() | changes))


def test_float16_scores_do_not_overflow_before_scaling():
    # q . k = 64 * 45 * 45 = 129,600 > 65,504 (float16's largest), but the scaled score is 16,200.
    q = torch.full((1, 4, 64), 45.0, dtype=torch.float16)
    output, weights = scaled_dot_product_attention(q, q, q)
    reference = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    assert torch.isfinite(output).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(output, reference)
