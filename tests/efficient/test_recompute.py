"""The recomputing backward of chunked attention: PyTorch's gradients, in linear memory."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attnbook import scaled_dot_product_attention
from attnbook.efficient import chunked_attention
from attnbook.measure.memory import autograd_saved_bytes

ATOL = RTOL = 1e-4


def leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


def grads(fn, q, k, v, weight):
    q, k, v = leaves(q, k, v)
    (fn(q, k, v) * weight).sum().backward()
    return q.grad, k.grad, v.grad


@given(
    L=st.integers(1, 24),
    S=st.integers(1, 24),
    bq=st.integers(1, 9),
    bk=st.integers(1, 9),
    causal=st.booleans(),
    masked=st.sampled_from([None, "bool", "float"]),
    broadcast_keys=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_gradients_equal_pytorch_sdpa(L, S, bq, bk, causal, masked, broadcast_keys, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, 3, L, 8, generator=g)
    kv_batch = (1, 3) if broadcast_keys else (2, 3)  # keys shared by the batch: sum the gradient
    k, v = torch.randn(*kv_batch, S, 8, generator=g), torch.randn(*kv_batch, S, 5, generator=g)
    if causal and masked is None:
        mask = None
    elif masked == "bool":
        mask = torch.rand(L, S, generator=g) > 0.3
        mask[:, 0] = True  # PyTorch gives NaN gradients for rows with no key; tested below
        if causal:
            mask = mask & torch.ones(L, S, dtype=torch.bool).tril()
    elif masked == "float":
        mask = torch.randn(L, S, generator=g)
    else:
        mask = None
    # PyTorch's SDPA takes a mask or is_causal, not both: fold the causal part into its mask.
    torch_mask = mask
    if causal and masked == "float":
        torch_mask = mask.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
        torch_mask[:, 0] = mask[:, 0]  # keep key 0 for every row, as the bool case does
        mask = torch_mask  # the same allowed keys for ours, given as a mask
        causal = False
    weight = torch.randn(2, 3, L, 5, generator=g)
    torch_causal = causal and mask is None

    def torch_sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=torch_mask, is_causal=torch_causal)

    theirs = grads(torch_sdpa, q, k, v, weight)
    ours = grads(
        lambda q, k, v: chunked_attention(q, k, v, mask, is_causal=causal, query_block=bq, key_block=bk),
        q, k, v, weight,
    )  # fmt: skip
    for name, a, b in zip("qkv", ours, theirs):
        assert a.shape == b.shape, name
        torch.testing.assert_close(a, b, atol=ATOL, rtol=RTOL, msg=f"gradient of {name}")


def test_gradcheck_in_float64_with_causal_and_a_bool_mask():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, n, 3, generator=g, dtype=torch.float64) for n in (7, 9, 9))
    mask = torch.rand(7, 9, generator=g) > 0.3

    def fn(q, k, v):
        return chunked_attention(q, k, v, mask, is_causal=True, query_block=3, key_block=2)

    assert torch.autograd.gradcheck(fn, tuple(leaves(q, k, v)))


def test_fully_masked_rows_give_zero_output_and_zero_finite_gradients():
    g = torch.Generator().manual_seed(4)
    q, k, v = (
        torch.randn(6, 4, generator=g),
        torch.randn(8, 4, generator=g),
        torch.randn(8, 3, generator=g),
    )
    mask = torch.rand(6, 8, generator=g) > 0.5
    mask[2] = False  # query 2 may attend to nothing
    mask[4, :] = False
    q, k, v = leaves(q, k, v)
    out = chunked_attention(q, k, v, mask, query_block=4, key_block=3)
    out.sum().backward()
    assert (out[2] == 0).all() and (out[4] == 0).all()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    assert (q.grad[2] == 0).all() and (q.grad[4] == 0).all()
    expected = grads(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)[0], q, k, v, torch.ones(6, 3)
    )
    for a, b in zip((q.grad, k.grad, v.grad), expected):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=RTOL)


def test_double_backward_is_refused_clearly():
    q, k, v = leaves(*(torch.randn(5, 4) for _ in range(3)))
    out = chunked_attention(q, k, v, query_block=2, key_block=2)
    with pytest.raises(RuntimeError, match="no double backward.*backward='autograd'"):
        torch.autograd.grad(out.sum(), q, create_graph=True)
    out = chunked_attention(q, k, v, query_block=2, key_block=2, backward="autograd")
    (dq,) = torch.autograd.grad(out.sum(), q, create_graph=True)
    dq.sum().backward()  # the autograd path has one


def test_only_the_inputs_the_output_and_one_number_per_query_are_saved():
    n, d, heads = 512, 16, 4
    q, k, v = leaves(*(torch.randn(1, heads, n, d) for _ in range(3)))
    saved = autograd_saved_bytes(lambda: chunked_attention(q, k, v, query_block=64, key_block=64))
    linear = (4 * heads * n * d + heads * n) * 4  # Q, K, V, O and the log-sum-exp, float32
    assert saved <= linear
    everything = autograd_saved_bytes(
        lambda: chunked_attention(q, k, v, query_block=64, key_block=64, backward="autograd")
    )
    assert everything > heads * n * n * 4  # at least one (n, n) matrix of probabilities


def test_a_mask_that_requires_grad_and_an_unknown_backward_are_refused():
    q, k, v = leaves(*(torch.randn(3, 2) for _ in range(3)))
    with pytest.raises(ValueError, match="no gradient to attn_mask"):
        chunked_attention(q, k, v, torch.zeros(3, 3, requires_grad=True))
    with pytest.raises(ValueError, match="backward must be"):
        chunked_attention(q, k, v, backward="flash")


@pytest.mark.parametrize("mask_shape", [(2, 1, 7, 9), (1, 3, 1, 9), (9,), (2, 3, 7, 1), (7, 9)])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_gradients_with_broadcast_masks_and_several_workers_equal_the_library(
    mask_shape, is_causal, kind
):
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 3, n, 4, generator=g, dtype=torch.float64) for n in (7, 9, 9))
    mask = (
        torch.rand(*mask_shape, generator=g) > 0.3
        if kind == "bool"
        else torch.randn(*mask_shape, generator=g)
    )
    weight = torch.randn(2, 3, 7, 4, generator=g, dtype=torch.float64)
    if kind == "float":
        mask = mask.to(torch.float64)

    def library(q, k, v):
        return scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)[0]

    expected = grads(library, q, k, v, weight)
    ours = grads(
        lambda q, k, v: chunked_attention(q, k, v, mask, is_causal=is_causal, query_block=3, key_block=2, workers=3),
        q, k, v, weight,
    )  # fmt: skip
    for name, a, b in zip("qkv", ours, expected):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10, msg=f"gradient of {name}")


def test_no_keys_at_all_gives_zero_output_and_zero_gradients():
    q, k, v = leaves(torch.randn(4, 3), torch.randn(0, 3), torch.randn(0, 2))
    out = chunked_attention(q, k, v)
    out.sum().backward()
    assert out.shape == (4, 2) and (out == 0).all() and (q.grad == 0).all()
    assert k.grad.shape == (0, 3) and v.grad.shape == (0, 2)
