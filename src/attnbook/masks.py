"""Attention masks: one convention, converted in one place.

Everything in attnbook uses the convention of
:func:`torch.nn.functional.scaled_dot_product_attention` (the *SDPA convention*):

* a **boolean** mask is ``True`` where a query **may attend** to a key;
* a **floating** mask is **added** to the attention scores (``-inf`` forbids a key).

:class:`torch.nn.MultiheadAttention` uses the opposite boolean convention (``True`` = *not*
allowed, for both ``attn_mask`` and ``key_padding_mask``). :func:`mha_to_sdpa_mask` is the single
place where that convention is translated; all mask validation lives here too.

Shape legend: N batch, H heads, L target (query) length, S source (key) length.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "causal_mask",
    "padding_mask",
    "check_mask",
    "check_broadcastable",
    "check_mha_masks",
    "merge_masks",
    "rows_without_keys",
    "mha_to_sdpa_mask",
    "per_head_windows",
    "window_mask",
]


def causal_mask(L: int, S: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """Boolean mask letting query ``i`` attend to keys ``0..i`` (``True`` = may attend).

    Top-left aligned when ``L != S``, exactly like ``is_causal=True`` in PyTorch's SDPA.

    Args:
        L: target (query) length.
        S: source (key) length; defaults to ``L``.
        device: device of the returned mask.

    Returns:
        bool tensor of shape (L, S).
    """
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor, S: int) -> Tensor:
    """Boolean mask that is ``True`` on the real (non-padding) tokens of each sequence.

    Args:
        lengths: integer tensor of shape (N,), the number of real tokens of each sequence.
        S: padded length.

    Returns:
        bool tensor of shape (N, S); ``mask[n, s]`` is ``s < lengths[n]``.
    """
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must be an integer tensor; got dtype {lengths.dtype}")
    if lengths.dim() != 1:
        raise ValueError(f"lengths must have shape (N,); got {tuple(lengths.shape)}")
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > S):
        raise ValueError(f"lengths must lie in [0, S] = [0, {S}]; got {lengths.tolist()}")
    positions = torch.arange(S, device=lengths.device)
    return positions < lengths[:, None]  # (N, S)


def check_mask(mask: Tensor, name: str = "attn_mask") -> None:
    """Raise ``TypeError`` unless ``mask`` is a bool or floating-point tensor."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None; got {type(mask).__name__}")
    if mask.dtype != torch.bool and not mask.dtype.is_floating_point:
        raise TypeError(f"{name} must be a bool or floating-point tensor; got dtype {mask.dtype}")


def check_broadcastable(mask: Tensor, target: Sequence[int], name: str = "attn_mask") -> None:
    """Raise ``ValueError`` unless ``mask`` broadcasts to ``target`` = (..., L, S)."""
    target = tuple(target)
    # Each of the mask's trailing sizes is 1 or the target's (torch.broadcast_shapes(mask.shape,
    # target) == target, without its cost in Python).
    fits = mask.dim() <= len(target) and all(
        m in (1, t) for m, t in zip(reversed(mask.shape), reversed(target))
    )
    if not fits:
        raise ValueError(
            f"{name} must be broadcastable to (..., L, S) = {tuple(target)}; "
            f"got {tuple(mask.shape)}"
        )


def _additive(mask: Tensor, dtype: torch.dtype) -> Tensor:
    """SDPA-convention mask as a float mask: bool ``True`` -> 0, ``False`` -> ``-inf``."""
    if mask.dtype != torch.bool:
        return mask.to(dtype)
    zeros = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    return zeros.masked_fill(~mask, float("-inf"))


def merge_masks(a: Tensor | None, b: Tensor | None, dtype: torch.dtype) -> Tensor | None:
    """Combine two SDPA-convention masks: a key is allowed only if both allow it.

    Two bool masks stay bool (logical and); otherwise both become float masks of ``dtype``
    and are added, so a bool ``False`` anywhere becomes ``-inf``.
    """
    if a is None or b is None:
        return b if a is None else a
    if a.dtype == torch.bool and b.dtype == torch.bool:
        return a & b
    return _additive(a, dtype) + _additive(b, dtype)


def rows_without_keys(mask: Tensor) -> Tensor:
    """``True`` for each query row whose every key is forbidden (no allowed key).

    Args:
        mask: SDPA-convention mask of shape (..., L, S).

    Returns:
        bool tensor of shape (..., L, 1).
    """
    if mask.dtype == torch.bool:
        return ~mask.any(dim=-1, keepdim=True)  # (..., L, 1)
    if mask.size(-1) == 0:  # no keys at all: every row is empty (amax needs one element)
        return mask.new_ones((*mask.shape[:-1], 1), dtype=torch.bool)
    # One pass over the mask: a row forbids every key exactly when its largest entry is -inf.
    # A contiguous mask is reduced as a 2-D (rows, S) tensor: the same maxima, found faster.
    rows = mask.view(-1, mask.size(-1)) if mask.is_contiguous() else mask
    return (rows.amax(dim=-1) == float("-inf")).view(*mask.shape[:-1], 1)  # (..., L, 1)


def _inverted(mask: Tensor) -> Tensor:
    """PyTorch-MHA-convention mask (bool ``True`` = not allowed) in the SDPA convention."""
    return ~mask if mask.dtype == torch.bool else mask


def check_mha_masks(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    *,
    batch_size: int,
    num_heads: int,
    tgt_len: int,
    src_len: int,
    names: tuple[str, str] = ("attn_mask", "key_padding_mask"),
    heads_name: str = "num_heads",
) -> None:
    """Check :class:`torch.nn.MultiheadAttention`-style masks, naming them as the caller does.

    ``attn_mask`` must be (L, S) or (N*num_heads, L, S), ``key_padding_mask`` (N, S); both bool
    or floating. ``names`` are the caller's argument names (a decoder block calls them
    ``tgt_mask`` and ``tgt_key_padding_mask``, and the number of heads ``nhead``), used in the
    error messages.

    Raises:
        TypeError: a mask that is not a tensor, or neither bool nor floating.
        ValueError: a mask of the wrong shape.
    """
    N, H, L, S = batch_size, num_heads, tgt_len, src_len
    attn_name, padding_name = names
    if attn_mask is not None:
        check_mask(attn_mask, attn_name)
        if attn_mask.shape not in ((L, S), (N * H, L, S)):
            raise ValueError(
                f"{attn_name} must have shape (L, S) = {(L, S)} or (N*{heads_name}, L, S) = "
                f"{(N * H, L, S)}; got {tuple(attn_mask.shape)}"
            )
    if key_padding_mask is not None:
        check_mask(key_padding_mask, padding_name)
        if key_padding_mask.shape != (N, S):
            raise ValueError(
                f"{padding_name} must have shape (N, S) = {(N, S)}; "
                f"got {tuple(key_padding_mask.shape)}"
            )


def mha_to_sdpa_mask(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    *,
    batch_size: int,
    num_heads: int,
    tgt_len: int,
    src_len: int,
    dtype: torch.dtype,
) -> Tensor | None:
    """Translate :class:`torch.nn.MultiheadAttention` masks into one SDPA-convention mask.

    Args:
        attn_mask: bool (``True`` = NOT allowed) or float (added) mask of shape (L, S) or
            (N*num_heads, L, S), heads varying fastest (index ``n * num_heads + h``).
        key_padding_mask: bool (``True`` = padding, NOT allowed) or float (added) mask of
            shape (N, S).
        batch_size, num_heads, tgt_len, src_len: N, H, L, S.
        dtype: dtype of float masks in the result (the dtype of the scores).

    Returns:
        ``None`` if both masks are ``None``; otherwise a mask in the SDPA convention (bool
        ``True`` = may attend, or float added) of shape (N or 1, H or 1, L, S). Two bool masks
        give a bool mask; as soon as one is float the result is float.
    """
    N, H, L, S = batch_size, num_heads, tgt_len, src_len
    check_mha_masks(attn_mask, key_padding_mask, batch_size=N, num_heads=H, tgt_len=L, src_len=S)
    if attn_mask is not None:
        shape = (1, 1, L, S) if attn_mask.shape == (L, S) else (N, H, L, S)
        attn_mask = _inverted(attn_mask.view(shape))  # (1 or N, 1 or H, L, S)
    if key_padding_mask is not None:
        key_padding_mask = _inverted(key_padding_mask.view(N, 1, 1, S))  # (N, 1, 1, S)
    mask = merge_masks(attn_mask, key_padding_mask, dtype)
    if mask is not None and mask.dtype != torch.bool:
        mask = mask.to(dtype)
    return mask


def window_mask(
    length: int,
    windows: Sequence[int | None],
    causal: bool = False,
    device: torch.device | str | None = None,
    *,
    key_length: int | None = None,
) -> Tensor:
    """Per-head sliding windows: (H, L, S) bool, ``True`` where query i may see key j.

    Head h sees the keys with ``|i - j| <= windows[h]`` (every key when ``windows[h]`` is
    ``None``), and only ``j <= i`` when ``causal``: local and global heads in one layer.

    Args:
        length: L, the number of queries (and of keys unless ``key_length`` is given).
        windows: H windows, each an integer >= 0 or ``None``.
        causal: also forbid the keys after the query.
        device: of the mask.
        key_length: S, the number of keys; query i and key j sit at positions i and j.

    Returns:
        bool tensor of shape (H, L, S).
    """
    windows = list(windows)
    bad = [w for w in windows if w is not None and (isinstance(w, bool) or not isinstance(w, int))]
    if not windows or bad or any(w is not None and w < 0 for w in windows):
        raise ValueError(f"windows must be integers >= 0 or None, at least one; got {windows}")
    S = length if key_length is None else key_length
    offset = torch.arange(S, device=device)[None, :] - torch.arange(length, device=device)[:, None]
    every_key = offset <= 0 if causal else torch.ones_like(offset, dtype=torch.bool)  # (L, S)
    masks = [
        every_key if w is None else (offset >= -w) & (offset <= (0 if causal else w))
        for w in windows
    ]  # offset = j - i
    return torch.stack(masks)  # (H, L, S)


def per_head_windows(
    window: int | Sequence[int | None] | Tensor | None, H: int
) -> tuple[int | None, ...] | None:
    """``window`` as H entries, each an integer >= 0 or ``None`` (a global head)."""
    if window is None:
        return None
    given = window
    if isinstance(window, Tensor):
        if window.dim() > 1 or window.dtype.is_floating_point or window.dtype.is_complex:
            raise TypeError(
                "window must be a 0-D or 1-D integer tensor; got "
                f"{window.dtype} of shape {tuple(window.shape)}"
            )
        window = window.tolist()
    if isinstance(window, int) and not isinstance(window, bool):
        window = [window] * H
    if isinstance(window, (str, bytes)) or not isinstance(window, Sequence):
        raise TypeError(
            f"window must be an int, a sequence or tensor of H = {H} of them, or None; "
            f"got {type(given).__name__}"
        )
    windows = tuple(window)
    bad = [w for w in windows if w is not None and (isinstance(w, bool) or not isinstance(w, int))]
    if len(windows) != H or bad or any(w is not None and w < 0 for w in windows):
        raise ValueError(
            f"window must give H = {H} windows, each an integer >= 0 or None; got {given!r}"
        )
    return windows
