r"""The backward pass of chunked attention in linear memory: keep O and the log-sum-exp, recompute.

Autograd would keep every tile of probabilities for the backward pass — all :math:`L \times S`
of them, in pieces. FlashAttention's answer (Dao et al. 2022) is a hand-written backward that
keeps only the inputs, the output :math:`O` and the softmax statistics of each query — the
running maximum :math:`m_i` and sum :math:`l_i` in FlashAttention, one number, their
log-sum-exp :math:`\ell_i = m_i + \log l_i`, in FlashAttention-2 (Dao 2024) and here — and
recomputes each tile when it needs it:

.. math::

    P_{ij} = e^{S_{ij} - \ell_i}, \qquad
    dV = P^\top dO, \qquad dP = dO\, V^\top, \qquad
    dS_{ij} = P_{ij}\,(dP_{ij} - D_i), \qquad D_i = \textstyle\sum_k dO_{ik} O_{ik},

then :math:`dQ = c\, dS\, K` and :math:`dK = c\, dS^\top Q` for the scale :math:`c`.
:math:`D_i = \sum_j P_{ij} dP_{ij}` is the term the softmax's Jacobian subtracts; computed from
:math:`dO` and :math:`O` it needs no full row of :math:`P`. The tiles are visited in the same
blocks as the forward pass, causal blocks in the future skipped in both.

Shape legend: N batch, L target (query) length, S source (key) length, E query/key feature
size, Ev value feature size; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import torch
from torch import Tensor

__all__ = ["ChunkedAttention", "attention_block", "blocked_forward", "tile_scores"]


def _tile(attn_mask: Tensor, q0: int, q1: int, k0: int, k1: int) -> Tensor:
    """The (..., q1 - q0, k1 - k0) tile of a mask that broadcasts to (..., L, S)."""
    if attn_mask.dim() == 1:  # (S,) broadcasts over queries
        return attn_mask[k0:k1]
    rows = slice(q0, q1) if attn_mask.size(-2) != 1 else slice(None)
    cols = slice(k0, k1) if attn_mask.size(-1) != 1 else slice(None)
    return attn_mask[..., rows, cols]


def tile_scores(
    q: Tensor,
    k: Tensor,
    attn_mask: Tensor | None,
    q0: int,
    k0: int,
    is_causal: bool,
) -> Tensor:
    """Masked scores of one tile: ``q`` (..., Bq, E) already scaled, ``k`` (..., Bk, E) the keys
    ``k0 : k0 + Bk``; forbidden entries are ``-inf``. Returns (..., Bq, Bk)."""
    q1, k1 = q0 + q.size(-2), k0 + k.size(-2)
    s = q @ k.transpose(-2, -1)  # (..., Bq, Bk)
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
    return s


def attention_block(
    q: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    q0: int,
    is_causal: bool,
    scale: float,
    key_block: int,
) -> tuple[Tensor, Tensor]:
    """Output and log-sum-exp of the queries ``q0 : q0 + Bq`` over all keys, one key block at a
    time with the online softmax.

    Returns:
        ``(output, lse)``: output (..., Bq, Ev), 0 for a query with no allowed key; lse
        (..., Bq, 1), the log of the sum of ``exp(score)`` over the allowed keys (``-inf`` for a
        query with none).
    """
    S, q1 = key.size(-2), q0 + q.size(-2)
    q = q * scale  # (..., Bq, E): scaling the few queries is cheaper than scaling every tile
    batch = torch.broadcast_shapes(q.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = q.new_full((*batch, q.size(-2), 1), float("-inf"))  # running maximum of the scores
    l = q.new_zeros((*batch, q.size(-2), 1))  # running sum of exp(score - m)
    acc = q.new_zeros((*batch, q.size(-2), value.size(-1)))  # running sum of exp(score - m) v
    k_end = min(S, q1) if is_causal else S  # causal: keys at or beyond q1 are never allowed
    for k0 in range(0, k_end, key_block):
        k1 = min(k0 + key_block, k_end)
        s = tile_scores(q, key[..., k0:k1, :], attn_mask, q0, k0, is_causal)  # (..., Bq, Bk)
        # The result does not depend on m, so its gradient is zero: keep it out of autograd.
        m_new = torch.maximum(m, s.detach().amax(dim=-1, keepdim=True))  # (..., Bq, 1)
        m_safe = m_new.masked_fill(torch.isneginf(m_new), 0.0)  # rows with no allowed key yet
        p = s.sub_(m_safe).exp_()  # (..., Bq, Bk), in place: s is not needed any more
        alpha = torch.exp(m - m_safe)  # (..., Bq, 1), 0 on the first block
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        acc = alpha * acc + p @ value[..., k0:k1, :]  # (..., Bq, Ev)
        m = m_new
    # Rows that never saw an allowed key have l = 0 and acc = 0: output 0, not 0/0.
    output = acc / torch.where(l > 0, l, torch.ones_like(l))  # (..., Bq, Ev)
    lse = torch.where(l > 0, m + torch.log(l), torch.full_like(l, float("-inf")))  # (..., Bq, 1)
    return output, lse


@contextmanager
def _single_threaded_operations() -> Iterator[None]:
    """Run PyTorch operations on one thread each (threads started inside inherit it)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def blocked_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    is_causal: bool,
    scale: float,
    query_block: int,
    key_block: int,
    workers: int = 1,
) -> tuple[Tensor, Tensor]:
    """Output (..., L, Ev) and log-sum-exp (..., L, 1) of every query, block by block.

    Query blocks are independent, so they are computed ``workers`` at a time by Python threads,
    each running single-threaded PyTorch operations: one parallel task per block avoids a
    synchronisation of all threads in every operation of every tile, which is slow when
    another program is using a core. Not for autograd: call it with gradients disabled.
    """
    L = query.size(-2)
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    output = query.new_empty((*batch, L, value.size(-1)))  # (..., L, Ev), filled block by block
    lse = query.new_empty((*batch, L, 1))  # (..., L, 1)

    def run(q0: int) -> None:
        q1 = min(q0 + query_block, L)
        with torch.no_grad():  # grad mode is per thread: a worker thread starts with it on
            output[..., q0:q1, :], lse[..., q0:q1, :] = attention_block(
                query[..., q0:q1, :], key, value, attn_mask, q0, is_causal, scale, key_block
            )

    starts = range(0, L, query_block)
    if workers == 1 or len(starts) == 1:
        for q0 in starts:
            run(q0)
    else:
        with _single_threaded_operations(), ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))  # disjoint slices of the outputs: no two threads write one
    return output, lse


class ChunkedAttention(torch.autograd.Function):
    """Chunked exact attention whose backward recomputes the tiles (no tile is saved).

    ``apply(query, key, value, attn_mask, is_causal, scale, query_block, key_block, workers)``:
    the arguments of :func:`~attnbook.efficient.chunked_attention` after its checks, ``scale``
    already divided by the temperature. Saved for backward: the inputs, the output and the
    per-query log-sum-exp — memory linear in L and S. A float ``attn_mask`` gets no gradient.

    The running statistics and the gradients are kept in the inputs' dtype. In float32 and
    float64 that matches PyTorch to rounding; in float16 and bfloat16 the gradients are less
    accurate than those of PyTorch's fused kernel, which accumulates in float32. Worker threads
    set PyTorch's thread count to 1 while they run and restore it after: do not run two
    attention calls concurrently from different Python threads.
    """

    @staticmethod
    def forward(
        ctx, query, key, value, attn_mask, is_causal, scale, query_block, key_block, workers
    ):
        """The output (..., L, Ev), computed block by block; saves Q, K, V, O and lse."""
        output, lse = blocked_forward(
            query, key, value, attn_mask, is_causal, scale, query_block, key_block, workers
        )
        ctx.save_for_backward(query, key, value, output, lse, attn_mask)
        ctx.options = (is_causal, scale, query_block, key_block, workers)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        """dQ, dK, dV from dO, recomputing every tile from Q, K and the saved lse."""
        if torch.is_grad_enabled():  # create_graph=True: a gradient of this gradient is wanted
            raise RuntimeError(
                "chunked_attention(backward='recompute') has no double backward: its backward is "
                "written by hand and not differentiable; use backward='autograd' for that"
            )
        query, key, value, output, lse, attn_mask = ctx.saved_tensors
        is_causal, scale, query_block, key_block, workers = ctx.options
        L, S = query.size(-2), key.size(-2)
        batch = output.shape[:-2]
        dk = key.new_zeros((*batch, S, key.size(-1)))  # (..., S, E)
        dv = value.new_zeros((*batch, S, value.size(-1)))  # (..., S, Ev)
        delta = (grad_output * output).sum(dim=-1, keepdim=True)  # D: (..., L, 1)
        lse_safe = lse.masked_fill(torch.isneginf(lse), 0.0)  # rows with no allowed key: P = 0
        key_starts = list(range(0, S, key_block))
        if not key_starts:  # no keys at all: the output was 0 whatever the inputs
            return (torch.zeros_like(query), torch.zeros_like(key), torch.zeros_like(value),
                    None, None, None, None, None, None)  # fmt: skip
        # Each worker owns whole key blocks, so it alone writes their dK and dV; every worker
        # adds to dQ, so each has its own dQ, summed at the end (linear memory: L x E each).
        shares = [key_starts[w::workers] for w in range(min(workers, len(key_starts)))]
        dq_parts = [query.new_zeros((*batch, L, query.size(-1))) for _ in shares]

        @torch.no_grad()  # grad mode is per thread: a worker thread starts with it on
        def run(share: list[int], dq: Tensor) -> None:
            for k0 in share:
                k1 = min(k0 + key_block, S)
                k, v = key[..., k0:k1, :], value[..., k0:k1, :]
                q_start = (
                    (k0 // query_block) * query_block if is_causal else 0
                )  # earlier: all masked
                for q0 in range(q_start, L, query_block):
                    q1 = min(q0 + query_block, L)
                    q = query[..., q0:q1, :] * scale  # (..., Bq, E), scaled here: no (L, E) copy
                    s = tile_scores(q, k, attn_mask, q0, k0, is_causal)
                    # Recomputed P; a row with no allowed key has scores of -inf, so exp gives 0.
                    p = s.sub_(lse_safe[..., q0:q1, :]).exp_()  # (..., Bq, Bk)
                    do = grad_output[..., q0:q1, :]  # (..., Bq, Ev)
                    dv[..., k0:k1, :] += p.transpose(-2, -1) @ do  # (..., Bk, Ev)
                    ds = (do @ v.transpose(-2, -1)).sub_(delta[..., q0:q1, :]).mul_(p)  # P (dP - D)
                    dq[..., q0:q1, :] += ds @ k  # (..., Bq, E), times the scale below
                    dk[..., k0:k1, :] += ds.transpose(-2, -1) @ q

        if len(shares) == 1:
            run(shares[0], dq_parts[0])
        else:
            with _single_threaded_operations(), ThreadPoolExecutor(len(shares)) as pool:
                list(pool.map(run, shares, dq_parts))
        dq = dq_parts[0]
        for part in dq_parts[1:]:
            dq += part
        dq *= scale
        return (
            dq.sum_to_size(query.shape),
            dk.sum_to_size(key.shape),
            dv.sum_to_size(value.shape),
            None, None, None, None, None, None,
        )  # fmt: skip
