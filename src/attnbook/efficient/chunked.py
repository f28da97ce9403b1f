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

import torch
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from attnbook.attention import check_attention_inputs
from attnbook.efficient.recompute import ChunkedAttention, attention_block, blocked_forward
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
    backward: str = "recompute",
    workers: int | None = None,
) -> Tensor:
    """Exact attention computed over blocks of queries and keys, in memory linear in L and S.

    Equals ``attnbook.scaled_dot_product_attention(query, key, value, attn_mask,
    is_causal=is_causal, scale=scale, temperature=temperature)[0]`` up to float rounding, with
    the same mask conventions; rows with no allowed key give 0. The largest temporary is one
    tile of scores of shape (..., query_block, key_block). With ``is_causal`` the key blocks
    that lie entirely in the future of a query block are skipped, not computed and masked.

    Under autograd, ``backward`` chooses what the backward pass keeps:

    * ``"recompute"`` (default): :class:`~attnbook.efficient.recompute.ChunkedAttention` saves
      only the inputs, the output and one log-sum-exp per query, and its hand-written backward
      recomputes each tile (FlashAttention's method); memory stays linear in training.
    * ``"checkpoint"``: each query block is wrapped in
      :func:`torch.utils.checkpoint.checkpoint` (``use_reentrant=False``); autograd recomputes
      the block's forward during backward and keeps that block's tiles meanwhile.
    * ``"autograd"``: autograd keeps every tile, (L, S) numbers in all: for comparison only.

    The query blocks of the forward pass are computed ``workers`` at a time by Python threads
    (:func:`~attnbook.efficient.recompute.blocked_forward`), except with ``"checkpoint"`` and
    ``"autograd"``, which run them one after the other.

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
        backward: ``"recompute"``, ``"checkpoint"`` or ``"autograd"`` (see above).
        workers: query blocks computed in parallel in the forward pass; defaults to
            ``torch.get_num_threads()``.

    Returns:
        output of shape (..., L, Ev).

    Raises:
        TypeError, ValueError: as :func:`~attnbook.attention.scaled_dot_product_attention`, and
            ``ValueError`` for a block size or ``workers`` that is not a positive integer, an
            unknown ``backward``, or an ``attn_mask`` that requires grad.
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

    if backward not in ("recompute", "checkpoint", "autograd"):
        raise ValueError(
            f"backward must be 'recompute', 'checkpoint' or 'autograd'; got {backward!r}"
        )
    if attn_mask is not None and attn_mask.requires_grad:
        raise ValueError(
            "chunked_attention gives no gradient to attn_mask; pass attn_mask.detach()"
        )

    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    if not grad:
        with torch.no_grad():
            return blocked_forward(
                query, key, value, attn_mask, is_causal, scale, query_block, key_block, workers
            )[0]
    if backward == "recompute":
        return ChunkedAttention.apply(
            query, key, value, attn_mask, is_causal, scale, query_block, key_block, workers
        )
    output = query.new_empty((*batch, L, value.size(-1)))  # (..., L, Ev), filled block by block
    for q0 in range(0, L, query_block):
        q1 = min(q0 + query_block, L)
        args = (query[..., q0:q1, :], key, value, attn_mask, q0, is_causal, scale, key_block)
        if backward == "checkpoint":
            output[..., q0:q1, :] = checkpoint(attention_block, *args, use_reentrant=False)[0]
        else:
            output[..., q0:q1, :] = attention_block(*args)[0]
    return output
