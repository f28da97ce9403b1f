r"""Exact attention in blocks, with the online softmax: no (L, S) matrix is ever formed.

For one query, attention over the keys in two blocks A and B can be computed block by block if
we carry three numbers along (Rabe & Staats 2021; Dao et al. 2022): the running maximum ``m``
of the scores seen so far, the running sum ``l`` of their exponentials (relative to ``m``) and
the running weighted sum ``acc`` of the values (relative to ``m``). When a new block arrives
with scores ``s`` and values ``V_b``,

.. math::

    m' = \max(m, \max_j s_j), \qquad \alpha = e^{m - m'}, \qquad
    l' = \alpha\, l + \sum_j e^{s_j - m'}, \qquad
    acc' = \alpha\, acc + \sum_j e^{s_j - m'}\, v_j,

and after the last block the output is ``acc / l``. The factor ``alpha`` rescales what was
accumulated against the old maximum to the new one, so the result equals the softmax over all
keys exactly (up to rounding). Queries are processed in blocks too, so the largest temporary
is one (..., query_block, key_block) tile of scores.

Shape legend: N batch, H heads, L target (query) length, S source (key) length,
E query/key feature size, Ev value feature size; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from attnbook.attention import check_attention_inputs
from attnbook.masks import check_broadcastable, check_mask

__all__ = ["chunked_attention", "online_softmax_merge"]


def online_softmax_merge(
    state_a: tuple[Tensor, Tensor, Tensor], state_b: tuple[Tensor, Tensor, Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    """Merge the online-softmax states ``(m, l, acc)`` of two disjoint blocks of keys.

    A block's state for scores ``s`` (..., L, S_b) and values ``V`` (..., S_b, Ev) is
    ``m = max_j s_j`` (..., L, 1), ``l = sum_j exp(s_j - m)`` (..., L, 1) and
    ``acc = sum_j exp(s_j - m) v_j`` (..., L, Ev). The merged state is the state of the union
    of the two blocks, and ``acc / l`` of it is the attention output over both. A block with no
    allowed key has ``m = -inf``, ``l = 0``, ``acc = 0``.

    Args:
        state_a: ``(m, l, acc)`` of the first block.
        state_b: ``(m, l, acc)`` of the second block.

    Returns:
        ``(m, l, acc)`` of both blocks together.
    """
    m_a, l_a, acc_a = state_a
    m_b, l_b, acc_b = state_b
    m = torch.maximum(m_a, m_b)
    m_safe = m.masked_fill(torch.isneginf(m), 0.0)  # both empty: any finite reference will do
    alpha, beta = torch.exp(m_a - m_safe), torch.exp(m_b - m_safe)
    return m, alpha * l_a + beta * l_b, alpha * acc_a + beta * acc_b


def chunked_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    *,
    is_causal: bool = False,
    scale: float | None = None,
    temperature: float = 1.0,
    query_block: int = 512,
    key_block: int = 512,
    checkpoint_blocks: bool = True,
    workers: int | None = None,
) -> Tensor:
    """Exact attention computed over blocks of queries and keys, in memory linear in L and S.

    Equals ``attnbook.scaled_dot_product_attention(query, key, value, attn_mask,
    is_causal=is_causal, scale=scale, temperature=temperature)[0]`` up to float rounding, with
    the same mask conventions; rows with no allowed key give 0. The largest temporary is one
    tile of scores of shape (..., query_block, key_block). With ``is_causal`` the key blocks
    that lie entirely in the future of a query block are skipped, not computed and masked.

    Under autograd, each query block is wrapped in :func:`torch.utils.checkpoint.checkpoint`
    (``use_reentrant=False``) when ``checkpoint_blocks`` is True: backward recomputes the
    block's tiles instead of keeping them all, so training memory stays linear too.

    Query blocks are independent, so without autograd they are computed ``workers`` at a time
    by Python threads, each running single-threaded PyTorch operations (PyTorch's own thread
    count is set to 1 meanwhile, then restored). One parallel task per block avoids what
    multi-threaded *operations* cost here: a synchronisation of all threads in every
    operation of every tile, which is slow when another program is using a core.

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev).
        attn_mask: broadcastable to (..., L, S). Bool: ``True`` = may attend. Float: added to
            the scores (``-inf`` forbids a key). Only (query_block, key_block) tiles of it are
            read; pass an expanded view, not a materialised copy, to keep memory linear.
        is_causal: forbid query ``i`` from attending to keys ``j > i`` (top-left aligned);
            combined with ``attn_mask`` if both are given.
        scale: factor applied to ``Q K^T``; defaults to ``1 / sqrt(E)``.
        temperature: divides the scaled scores; must be > 0.
        query_block: number of queries per block (> 0).
        key_block: number of keys per block (> 0).
        checkpoint_blocks: recompute each query block in backward instead of storing it.
        workers: query blocks computed in parallel when no gradient is needed; defaults to
            ``torch.get_num_threads()``. With autograd, blocks run one after the other.

    Returns:
        output of shape (..., L, Ev).

    Raises:
        TypeError, ValueError: as :func:`~attnbook.attention.scaled_dot_product_attention`, and
            ``ValueError`` for a block size or ``workers`` that is not a positive integer.
    """
    _, scale = check_attention_inputs(query, key, value, scale=scale, temperature=temperature)
    workers = torch.get_num_threads() if workers is None else workers
    for name, size in (
        ("query_block", query_block),
        ("key_block", key_block),
        ("workers", workers),
    ):
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(f"{name} must be a positive integer; got {size!r}")
    L, S = query.size(-2), key.size(-2)
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    if attn_mask is not None:
        check_mask(attn_mask, "attn_mask")
        check_broadcastable(attn_mask, (*batch, L, S), "attn_mask")
    scale = scale / temperature

    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    output = query.new_empty((*batch, L, value.size(-1)))  # (..., L, Ev), filled block by block

    def run(q0: int) -> None:
        q1 = min(q0 + query_block, L)
        args = (query[..., q0:q1, :], key, value, attn_mask, q0, q1, is_causal, scale, key_block)
        if grad and checkpoint_blocks:
            output[..., q0:q1, :] = checkpoint(_query_block, *args, use_reentrant=False)
        else:
            output[..., q0:q1, :] = _query_block(*args)

    starts = range(0, L, query_block)
    if grad or workers == 1 or len(starts) == 1:
        for q0 in starts:
            run(q0)
    else:
        with _single_threaded_operations(), ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))  # disjoint slices of output: no two threads write the same
    return output


@contextmanager
def _single_threaded_operations() -> Iterator[None]:
    """Run PyTorch operations on one thread each (threads started inside inherit it)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _query_block(
    q: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    q0: int,
    q1: int,
    is_causal: bool,
    scale: float,
    key_block: int,
) -> Tensor:
    """Output (..., q1 - q0, Ev) of the queries ``q0:q1`` over all keys, one key block at a time."""
    S = key.size(-2)
    q = q * scale  # (..., Bq, E): scaling the few queries is cheaper than scaling every tile
    batch = torch.broadcast_shapes(q.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = q.new_full((*batch, q1 - q0, 1), float("-inf"))  # running maximum of the scores
    l = q.new_zeros((*batch, q1 - q0, 1))  # running sum of exp(score - m)
    acc = q.new_zeros((*batch, q1 - q0, value.size(-1)))  # running sum of exp(score - m) * v
    # Causal: key j is allowed for query i only if j <= i, so keys at or beyond q1 never are.
    k_end = min(S, q1) if is_causal else S
    for k0 in range(0, k_end, key_block):
        k1 = min(k0 + key_block, k_end)
        s = q @ key[..., k0:k1, :].transpose(-2, -1)  # (..., Bq, Bk)
        if attn_mask is not None:
            tile = _tile(attn_mask, q0, q1, k0, k1)
            if tile.dtype == torch.bool:
                s = s.masked_fill(~tile, float("-inf"))
            else:
                s = s + tile.to(s.dtype)
        if is_causal and k1 - 1 > q0:  # the tile crosses the diagonal
            rows = torch.arange(q0, q1, device=q.device)[:, None]  # (Bq, 1)
            cols = torch.arange(k0, k1, device=q.device)[None, :]  # (1, Bk)
            s = s.masked_fill(cols > rows, float("-inf"))
        # The result does not depend on m, so its gradient is zero: keep it out of autograd.
        m_new = torch.maximum(m, s.detach().amax(dim=-1, keepdim=True))  # (..., Bq, 1)
        m_safe = m_new.masked_fill(torch.isneginf(m_new), 0.0)  # rows with no allowed key yet
        p = s.sub_(m_safe).exp_()  # (..., Bq, Bk), in place: s is not needed any more
        alpha = torch.exp(m - m_safe)  # (..., Bq, 1), 0 on the first block
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        acc = alpha * acc + p @ value[..., k0:k1, :]  # (..., Bq, Ev)
        m = m_new
    # Rows that never saw an allowed key have l = 0 and acc = 0: output 0, not 0/0.
    return acc / torch.where(l > 0, l, torch.ones_like(l))  # (..., Bq, Ev)


def _tile(attn_mask: Tensor, q0: int, q1: int, k0: int, k1: int) -> Tensor:
    """The (..., q1 - q0, k1 - k0) tile of a mask that broadcasts to (..., L, S)."""
    if attn_mask.dim() == 1:  # (S,) broadcasts over queries
        return attn_mask[k0:k1]
    rows = slice(q0, q1) if attn_mask.size(-2) != 1 else slice(None)
    cols = slice(k0, k1) if attn_mask.size(-1) != 1 else slice(None)
    return attn_mask[..., rows, cols]
