r"""Low-rank attention in the style of Linformer (Wang et al. 2020).

Project the keys and the values *along the sequence* from S rows to ``rank`` rows with two
(rank, S) matrices, then attend to those few rows:

.. math::

    \text{output} = \operatorname{softmax}\!\left(\frac{Q\,(P_K K)^\top}{\sqrt{E}}\right) P_V V .

The score matrix is (L, rank) instead of (L, S): time and memory are linear in the length for a
fixed rank. In Linformer the projections are learned; here they can also be fixed:
:func:`random_projection` (Gaussian, as in the paper's analysis) or :func:`pooling_projection`
(averages over contiguous segments, with the log of the segment size added to the scores so
that a pooled key stands for all the keys it averages; exact when ``rank == S``).

Shape legend: L target (query) length, S source (key) length, R rank, E query/key feature size,
Ev value feature size; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attnbook.attention import check_attention_inputs, scaled_dot_product_attention

__all__ = ["random_projection", "pooling_projection", "lowrank_attention"]


def _check_sizes(S: int, rank: int) -> None:
    for name, size in (("S", S), ("rank", rank)):
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(f"{name} must be a positive integer; got {size!r}")
    if rank > S:
        raise ValueError(f"rank must be at most S; got rank={rank} and S={S}")


def random_projection(
    S: int,
    rank: int,
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """A Gaussian (R, S) projection with entries N(0, 1/S).

    Linformer's analysis uses Gaussian projections (a Johnson-Lindenstrauss argument). The
    variance 1/S makes each projected key a random mixture of all keys with the typical size of
    one key, so that the scores keep their scale.
    """
    _check_sizes(S, rank)
    return torch.randn(rank, S, generator=generator, dtype=dtype) / math.sqrt(S)


def pooling_projection(S: int, rank: int, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """An (R, S) projection whose row ``r`` averages the keys of the r-th of R near-equal segments."""
    _check_sizes(S, rank)
    segment = torch.arange(S) * rank // S  # (S,): which segment each position falls in
    members = torch.nn.functional.one_hot(segment, rank).T.to(dtype)  # (R, S)
    return members / members.sum(dim=1, keepdim=True)


def lowrank_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    proj_key: Tensor,
    proj_value: Tensor | None = None,
    *,
    scale: float | None = None,
    log_counts: bool = False,
) -> Tensor:
    """Attention of the queries over R projected keys and values (Linformer).

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev).
        proj_key: (R, S), applied to the keys: ``proj_key @ key`` is (..., R, E).
        proj_value: (R, S) for the values; defaults to ``proj_key`` (Linformer's shared
            projection).
        scale: factor applied to the scores; defaults to ``1 / sqrt(E)``.
        log_counts: add ``log`` of the number of keys each projected row averages (the number
            of non-zero entries in its row of ``proj_key``) to its score. Use it with
            :func:`pooling_projection`: a segment of m similar keys then gets m times the
            weight of one key, as in exact attention.

    Returns:
        output of shape (..., L, Ev).
    """
    _, scale = check_attention_inputs(query, key, value, scale=scale)
    proj_value = proj_key if proj_value is None else proj_value
    S = key.size(-2)
    for name, proj in (("proj_key", proj_key), ("proj_value", proj_value)):
        if not isinstance(proj, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(proj).__name__}")
        if proj.dim() != 2 or proj.size(1) != S:
            raise ValueError(f"{name} must have shape (R, S) with S = {S}; got {tuple(proj.shape)}")
    if proj_key.size(0) != proj_value.size(0):
        raise ValueError(
            f"proj_key and proj_value must have the same rank R; got {tuple(proj_key.shape)} "
            f"and {tuple(proj_value.shape)}"
        )
    keys = proj_key.to(key.dtype) @ key  # (..., R, E)
    values = proj_value.to(value.dtype) @ value  # (..., R, Ev)
    bias = None
    if log_counts:
        bias = (proj_key != 0).sum(dim=1).to(query.dtype).log()  # (R,), broadcast over queries
    output, _ = scaled_dot_product_attention(query, keys, values, bias, scale=scale)
    return output
