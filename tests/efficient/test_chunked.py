"""chunked_attention is exact attention: it equals attnbook.scaled_dot_product_attention."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnbook import scaled_dot_product_attention
from attnbook.efficient import chunked_attention, online_softmax_merge

ATOL = RTOL = 1e-5


def qkv(L, S, E=8, Ev=6, batch=(2, 3), seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(*batch, L, E, generator=g, dtype=dtype),
        torch.randn(*batch, S, E, generator=g, dtype=dtype),
        torch.randn(*batch, S, Ev, generator=g, dtype=dtype),
    )


def exact(q, k, v, mask=None, **kwargs):
    return scaled_dot_product_attention(q, k, v, mask, **kwargs)[0]


@pytest.mark.parametrize("L, S", [(1, 1), (5, 5), (17, 17), (16, 40), (40, 9), (33, 64)])
@pytest.mark.parametrize("blocks", [(1, 1), (4, 7), (16, 16), (64, 128)])
def test_equals_exact_attention_without_mask(L, S, blocks):
    q, k, v = qkv(L, S)
    out = chunked_attention(q, k, v, query_block=blocks[0], key_block=blocks[1])
    torch.testing.assert_close(out, exact(q, k, v), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("L, S", [(12, 12), (10, 23), (23, 10)])
def test_equals_exact_attention_with_bool_mask(L, S):
    q, k, v = qkv(L, S)
    mask = torch.rand(2, 1, L, S, generator=torch.Generator().manual_seed(1)) > 0.4  # (N, 1, L, S)
    out = chunked_attention(q, k, v, mask, query_block=4, key_block=5)
    torch.testing.assert_close(out, exact(q, k, v, mask), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("shape", [(12, 20), (1, 20), (20,), (3, 12, 20)])
def test_equals_exact_attention_with_float_mask_of_any_broadcastable_shape(shape):
    q, k, v = qkv(12, 20)
    mask = torch.randn(*shape, generator=torch.Generator().manual_seed(2))
    out = chunked_attention(q, k, v, mask, query_block=5, key_block=6)
    torch.testing.assert_close(out, exact(q, k, v, mask), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("L, S", [(16, 16), (9, 30), (30, 9), (17, 17)])
@pytest.mark.parametrize("blocks", [(4, 4), (5, 3), (8, 16)])
def test_equals_exact_attention_when_causal(L, S, blocks):
    q, k, v = qkv(L, S)
    out = chunked_attention(q, k, v, is_causal=True, query_block=blocks[0], key_block=blocks[1])
    torch.testing.assert_close(out, exact(q, k, v, is_causal=True), atol=ATOL, rtol=RTOL)


def test_causal_and_mask_are_combined_like_the_library():
    q, k, v = qkv(14, 14)
    mask = torch.rand(14, 14, generator=torch.Generator().manual_seed(3)) > 0.3
    out = chunked_attention(q, k, v, mask, is_causal=True, query_block=4, key_block=3)
    torch.testing.assert_close(out, exact(q, k, v, mask, is_causal=True), atol=ATOL, rtol=RTOL)


def test_causal_skips_key_blocks_entirely_in_the_future():
    # Values in the second key block are NaN. Computing that block for the first query block
    # and masking it afterwards would give 0 * NaN = NaN; skipping it gives finite outputs.
    q, k, v = qkv(8, 8, batch=(1,))
    v[..., 4:, :] = float("nan")
    out = chunked_attention(q, k, v, is_causal=True, query_block=4, key_block=4)
    assert torch.isfinite(out[..., :4, :]).all()
    torch.testing.assert_close(
        out[..., :4, :], exact(q[..., :4, :], k[..., :4, :], v[..., :4, :], is_causal=True)
    )


def test_fully_masked_rows_give_zeros_with_a_bool_mask():
    q, k, v = qkv(6, 9)
    mask = torch.ones(6, 9, dtype=torch.bool)
    mask[2] = False
    out = chunked_attention(q, k, v, mask, query_block=4, key_block=4)
    assert torch.equal(out[..., 2, :], torch.zeros_like(out[..., 2, :]))
    torch.testing.assert_close(out, exact(q, k, v, mask), atol=ATOL, rtol=RTOL)


def test_fully_masked_rows_give_zeros_with_a_float_mask():
    q, k, v = qkv(6, 9)
    mask = torch.zeros(6, 9)
    mask[0] = float("-inf")
    mask[4, :5] = float("-inf")  # only the first key block is empty for this row
    out = chunked_attention(q, k, v, mask, query_block=2, key_block=5)
    assert torch.equal(out[..., 0, :], torch.zeros_like(out[..., 0, :]))
    torch.testing.assert_close(out, exact(q, k, v, mask), atol=ATOL, rtol=RTOL)


def test_fully_masked_rows_have_finite_gradients():
    q, k, v = (t.requires_grad_() for t in qkv(4, 6))
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[1] = False
    chunked_attention(q, k, v, mask, query_block=2, key_block=2).sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


def test_broadcasts_batch_dimensions_like_the_library():
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 3, 7, 8, generator=g)
    k = torch.randn(3, 11, 8, generator=g)
    v = torch.randn(1, 1, 11, 5, generator=g)
    out = chunked_attention(q, k, v, query_block=3, key_block=4)
    torch.testing.assert_close(out, exact(q, k, v), atol=ATOL, rtol=RTOL)


def test_scale_and_temperature_act_like_the_library():
    q, k, v = qkv(9, 9)
    out = chunked_attention(q, k, v, scale=0.7, temperature=0.5, query_block=4, key_block=4)
    torch.testing.assert_close(
        out, exact(q, k, v, scale=0.7, temperature=0.5), atol=ATOL, rtol=RTOL
    )


def test_huge_scores_do_not_overflow():
    q, k, v = qkv(8, 8)
    out = chunked_attention(q * 1e3, k, v, query_block=3, key_block=3)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, exact(q * 1e3, k, v), atol=1e-4, rtol=1e-4)


def test_keeps_float64():
    q, k, v = qkv(5, 7, dtype=torch.float64)
    out = chunked_attention(q, k, v, query_block=2, key_block=3)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, exact(q, k, v), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("backward", ["recompute", "checkpoint", "autograd"])
def test_gradients_equal_those_of_exact_attention(backward):
    q, k, v = qkv(10, 13)
    mask = torch.rand(10, 13, generator=torch.Generator().manual_seed(5)) > 0.3
    grads = []
    for fn in (
        lambda *a: exact(*a, mask, is_causal=True),
        lambda *a: chunked_attention(
            *a,
            mask,
            is_causal=True,
            query_block=4,
            key_block=5,
            backward=backward,
        ),
    ):
        inputs = [t.clone().requires_grad_() for t in (q, k, v)]
        (fn(*inputs) * torch.arange(6.0)).sum().backward()
        grads.append([t.grad for t in inputs])
    for ours, theirs in zip(*grads):
        torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("backward", ["recompute", "checkpoint", "autograd"])
def test_gradcheck_in_float64(backward):
    q, k, v = (t.requires_grad_() for t in qkv(5, 6, E=3, Ev=2, batch=(1,), dtype=torch.float64))
    mask = torch.zeros(5, 6, dtype=torch.float64)
    mask[1, 2] = float("-inf")

    def fn(q, k, v):
        return chunked_attention(
            q,
            k,
            v,
            mask,
            is_causal=True,
            query_block=2,
            key_block=4,
            backward=backward,
        )

    assert torch.autograd.gradcheck(fn, (q, k, v))


@given(
    L=st.integers(1, 20),
    S=st.integers(1, 20),
    bq=st.integers(1, 8),
    bk=st.integers(1, 8),
    causal=st.booleans(),
    masked=st.sampled_from([None, "bool", "float"]),
    seed=st.integers(0, 1000),
)
def test_equals_exact_attention_for_any_shape_block_and_mask(L, S, bq, bk, causal, masked, seed):
    q, k, v = qkv(L, S, batch=(2,), seed=seed)
    g = torch.Generator().manual_seed(seed)
    mask = None
    if masked == "bool":
        mask = torch.rand(L, S, generator=g) > 0.5
    elif masked == "float":
        mask = torch.randn(L, S, generator=g).masked_fill(
            torch.rand(L, S, generator=g) > 0.6, float("-inf")
        )
    out = chunked_attention(q, k, v, mask, is_causal=causal, query_block=bq, key_block=bk)
    torch.testing.assert_close(out, exact(q, k, v, mask, is_causal=causal), atol=ATOL, rtol=RTOL)


# ---- the two-block merge ------------------------------------------------------------------


def block_state(scores, values):
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m)
    return m, p.sum(dim=-1, keepdim=True), p @ values


def test_merging_two_blocks_gives_softmax_over_both():
    g = torch.Generator().manual_seed(6)
    scores, values = torch.randn(3, 10, generator=g) * 4, torch.randn(10, 2, generator=g)
    m, l, acc = online_softmax_merge(
        block_state(scores[:, :4], values[:4]), block_state(scores[:, 4:], values[4:])
    )
    torch.testing.assert_close(acc / l, torch.softmax(scores, dim=-1) @ values)
    torch.testing.assert_close(m, scores.amax(dim=-1, keepdim=True))


def test_merging_with_an_empty_block_changes_nothing():
    g = torch.Generator().manual_seed(7)
    scores, values = torch.randn(2, 5, generator=g), torch.randn(5, 3, generator=g)
    state = block_state(scores, values)
    empty = (torch.full((2, 1), float("-inf")), torch.zeros(2, 1), torch.zeros(2, 3))
    for merged in (online_softmax_merge(state, empty), online_softmax_merge(empty, state)):
        for a, b in zip(merged, state):
            torch.testing.assert_close(a, b)


def test_merging_two_empty_blocks_stays_empty_without_nan():
    empty = (torch.full((2, 1), float("-inf")), torch.zeros(2, 1), torch.zeros(2, 3))
    m, l, acc = online_softmax_merge(empty, empty)
    assert torch.isneginf(m).all() and not l.any() and not acc.any()


# ---- bad input ----------------------------------------------------------------------------


def test_rejects_a_non_tensor():
    q, k, v = qkv(3, 3)
    with pytest.raises(TypeError, match="query must be a torch.Tensor"):
        chunked_attention(q.tolist(), k, v)


def test_rejects_mismatched_feature_sizes_naming_the_shapes():
    q, k, v = qkv(3, 3)
    with pytest.raises(ValueError, match=r"query \(2, 3, 3, 8\) and key \(2, 3, 3, 4\)"):
        chunked_attention(q, k[..., :4], v)


def test_rejects_a_mask_that_does_not_broadcast():
    q, k, v = qkv(3, 5)
    with pytest.raises(ValueError, match=r"attn_mask must be broadcastable.*got \(4, 5\)"):
        chunked_attention(q, k, v, torch.ones(4, 5, dtype=torch.bool))


def test_rejects_an_integer_mask():
    q, k, v = qkv(3, 5)
    with pytest.raises(TypeError, match="attn_mask must be a bool or floating-point tensor"):
        chunked_attention(q, k, v, torch.ones(3, 5, dtype=torch.int64))


@pytest.mark.parametrize(
    "name, size",
    [
        ("query_block", 0),
        ("key_block", -1),
        ("key_block", 2.5),
        ("query_block", True),
        ("workers", 0),
    ],
)
def test_rejects_a_block_size_that_is_not_a_positive_integer(name, size):
    q, k, v = qkv(3, 5)
    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        chunked_attention(q, k, v, **{name: size})


@pytest.mark.parametrize("causal", [False, True])
def test_parallel_query_blocks_give_the_same_result(causal):
    q, k, v = qkv(40, 33)
    mask = torch.rand(40, 33, generator=torch.Generator().manual_seed(8)) > 0.2
    with torch.no_grad():
        serial = chunked_attention(
            q, k, v, mask, is_causal=causal, query_block=6, key_block=7, workers=1
        )
        parallel = chunked_attention(
            q, k, v, mask, is_causal=causal, query_block=6, key_block=7, workers=3
        )
    torch.testing.assert_close(parallel, serial, atol=0, rtol=0)


def test_parallel_blocks_restore_the_thread_count():
    before = torch.get_num_threads()
    q, k, v = qkv(20, 20)
    with torch.no_grad():
        chunked_attention(q, k, v, query_block=4, workers=2)
    assert torch.get_num_threads() == before
