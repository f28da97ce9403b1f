"""Local (sliding-window) attention: each query sees only the keys within ``window`` positions.

Two ways to compute the same thing:

* :func:`local_mask` + any exact attention: a bool (L, S) mask. Correct, but it still forms the
  whole (L, S) score matrix, so it costs exactly as much as full attention.
* :func:`local_attention`: a banded computation. Queries are cut into blocks of ``block_size``;
  a block only needs the keys from ``window`` before its first query to ``window`` after its
  last, so the scores are (L, block_size + 2 * window) instead of (L, S): memory and time grow
  linearly with the length for a fixed window.

Positions are absolute: query ``i`` may attend to key ``j`` when ``i - window <= j <= i + window``
(``j <= i`` as well when ``is_causal``), also when L != S.

Shape legend: L target (query) length, S source (key) length, E query/key feature size,
Ev value feature size, W = window; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import check_attention_inputs

__all__ = ["local_mask", "local_attention"]


def _check_window(window: int) -> None:
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be a non-negative integer; got {window!r}")


def local_mask(
    L: int,
    S: int | None = None,
    window: int = 1,
    *,
    is_causal: bool = False,
    device: torch.device | str | None = None,
) -> Tensor:
    """Boolean mask (``True`` = may attend) of a sliding window of half-width ``window``.

    Args:
        L: target (query) length.
        S: source (key) length; defaults to ``L``.
        window: W; query ``i`` sees keys ``i - W .. i + W`` (``i - W .. i`` if ``is_causal``).
        is_causal: also forbid keys after the query.
        device: device of the mask.

    Returns:
        bool tensor of shape (L, S).
    """
    _check_window(window)
    S = L if S is None else S
    offset = (
        torch.arange(S, device=device)[None, :] - torch.arange(L, device=device)[:, None]
    )  # (L, S): j - i
    return (offset >= -window) & (offset <= (0 if is_causal else window))


def local_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    window: int,
    *,
    is_causal: bool = False,
    scale: float | None = None,
    block_size: int | None = None,
) -> Tensor:
    """Sliding-window attention computed on a band, in memory linear in L for a fixed window.

    Equals ``attnbook.scaled_dot_product_attention(query, key, value,
    local_mask(L, S, window, is_causal=is_causal), scale=scale)[0]`` up to float rounding; a query
    with no key in its window (possible only when L > S + window) gets output 0.

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev).
        window: W >= 0, the half-width of the window.
        is_causal: query ``i`` sees only keys ``i - W .. i``.
        scale: factor applied to ``Q K^T``; defaults to ``1 / sqrt(E)``.
        block_size: queries per block; defaults to ``max(W, 64)``. Each block computes
            (block_size, block_size + 2W) scores (block_size + W when is_causal).

    Returns:
        output of shape (..., L, Ev).
    """
    _, scale = check_attention_inputs(query, key, value, scale=scale)
    _check_window(window)
    B = max(window, 64) if block_size is None else block_size
    if isinstance(B, bool) or not isinstance(B, int) or B <= 0:
        raise ValueError(f"block_size must be a positive integer; got {block_size!r}")
    L, S = query.size(-2), key.size(-2)
    left, right = window, (0 if is_causal else window)
    blocks = -(-L // B)  # ceil(L / B)
    width = B + left + right  # keys a block of queries can see

    # Block b holds queries b*B .. b*B + B - 1 and needs keys b*B - left .. b*B + B - 1 + right:
    # pad the keys so that every such range exists, then take overlapping windows (a view).
    pad_right = max(0, blocks * B + right - S)
    k_windows = F.pad(key, (0, 0, left, pad_right)).unfold(-2, width, B)[
        ..., :blocks, :, :
    ]  # (..., blocks, E, width)
    v_windows = F.pad(value, (0, 0, left, pad_right)).unfold(-2, width, B)[
        ..., :blocks, :, :
    ]  # (..., blocks, Ev, width)
    q_blocks = F.pad(query, (0, 0, 0, blocks * B - L))  # (..., blocks * B, E)
    q_blocks = q_blocks.unflatten(-2, (blocks, B))  # (..., blocks, B, E)

    scores = (q_blocks * scale) @ k_windows  # (..., blocks, B, width)
    allowed = _band(blocks, B, left, right, S, query.device)  # (blocks, B, width)
    scores = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)  # (blocks, B, 1): no key in the window
    weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    output = weights @ v_windows.transpose(-2, -1)  # (..., blocks, B, Ev)
    return output.flatten(-3, -2)[..., :L, :]  # (..., L, Ev)


def _band(blocks: int, B: int, left: int, right: int, S: int, device: torch.device) -> Tensor:
    """Which (query row r, window column t) of each block are allowed: (blocks, B, width)."""
    width = B + left + right
    r = torch.arange(B, device=device)[:, None]  # (B, 1)
    t = torch.arange(width, device=device)[None, :]  # (1, width)
    offset = t - left - r  # (B, width): key position minus query position
    in_band = (offset >= -left) & (offset <= right)  # (B, width)
    key_pos = torch.arange(blocks, device=device)[:, None] * B - left + t  # (blocks, width)
    real_key = (key_pos >= 0) & (key_pos < S)  # (blocks, width): not padding
    return in_band[None, :, :] & real_key[:, None, :]  # (blocks, B, width)
