r"""Scaled dot-product attention, written to be read next to its equations.

.. math::

    \text{scores} = \frac{Q K^\top}{\sqrt{d_k}}, \qquad
    \text{weights} = \operatorname{softmax}(\text{scores}), \qquad
    \text{output} = \text{weights}\, V

Masks follow the convention of :func:`torch.nn.functional.scaled_dot_product_attention`
(see :mod:`attnbook.masks`): a bool mask is ``True`` where a query may attend, a float mask is
added to the scores.

Shape legend: N batch, H heads, L target (query) length, S source (key) length,
E query/key feature size, Ev value feature size; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.masks import (
    causal_mask,
    check_broadcastable,
    check_mask,
    merge_masks,
    rows_without_keys,
)
from attnbook.values import has_values

__all__ = ["scaled_dot_product_attention", "fused_attention", "check_attention_inputs"]


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    temperature: float = 1.0,
    scale_first: bool = True,
    on_scores: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """Attention of ``query`` over ``key``/``value``; returns the output and the weights.

    Equal to :func:`torch.nn.functional.scaled_dot_product_attention` (which returns only the
    output), with three differences:

    * ``is_causal=True`` together with ``attn_mask`` **combines** them: a key is allowed only if
      the mask allows it and it is not in the future. PyTorch raises a ``RuntimeError`` instead.
    * A query row with no allowed key gets output 0 and weights 0 (never NaN), with finite
      gradients. PyTorch 2.13's public SDPA also returns 0 for such rows.
    * ``temperature`` divides the scaled scores: ``scores = Q K^T * scale / temperature``.

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev).
        attn_mask: broadcastable to (..., L, S). Bool: ``True`` = may attend. Float: added to
            the scores (``-inf`` forbids a key).
        dropout_p: probability of zeroing a weight, in [0, 1). Applied whenever positive, as
            in PyTorch's functional SDPA (pass 0.0 at evaluation).
        is_causal: forbid query ``i`` from attending to keys ``j > i`` (top-left aligned).
        scale: factor applied to ``Q K^T``; defaults to ``1 / sqrt(E)``.
        temperature: divides the scaled scores; must be > 0. Higher = flatter weights.
        scale_first: multiply the queries by ``scale / temperature`` before ``Q K^T``, as
            PyTorch's kernels do, or (``False``) the product after it, as the formula is
            written. The two differ only by rounding, except in float16, where ``Q K^T`` itself
            can pass the largest finite value (65504) and become ``inf``.
        on_scores: called on the scaled scores (..., L, S) before the mask is applied; what it
            returns is used (:class:`~attnbook.mha.MultiHeadAttention` passes its ``logits``
            module, a place for forward hooks). Default: the scores as they are.

    Returns:
        ``(output, weights)``: output (..., L, Ev) and weights (..., L, S), the weights actually
        applied to ``value`` (after dropout, if any).

    Raises:
        TypeError: non-tensor or non-floating inputs, mismatched dtypes, or a mask that is
            neither bool nor floating.
        ValueError: incompatible shapes or devices, mask not broadcastable to (..., L, S),
            ``dropout_p`` outside [0, 1), or ``temperature <= 0``.
    """
    mask, scale = check_attention_inputs(
        query,
        key,
        value,
        attn_mask=attn_mask,
        dropout_p=dropout_p,
        is_causal=is_causal,
        scale=scale,
        temperature=temperature,
    )

    # By default the queries are scaled before the product, as in PyTorch's kernels: in float16,
    # Q K^T itself can pass the largest finite value (65504) where the scaled scores do not
    # (chapter 19).
    if scale_first:
        scores = (query * (scale / temperature)) @ key.transpose(-2, -1)  # (..., L, S)
    else:
        scores = (query @ key.transpose(-2, -1)) * (scale / temperature)  # (..., L, S)
    if on_scores is not None:
        scores = on_scores(scores)
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
        # A row of only -inf would softmax to NaN: give it finite scores, then zero its weights.
        empty = rows_without_keys(mask)  # (..., L, 1)
        scores = scores.masked_fill(empty, 0.0)
    weights = torch.softmax(scores, dim=-1)  # (..., L, S)
    if mask is not None:
        weights = weights.masked_fill(empty, 0.0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    output = weights @ value  # (..., L, Ev)
    return output, weights


def fused_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    temperature: float = 1.0,
) -> Tensor:
    """The output of :func:`scaled_dot_product_attention`, computed by PyTorch's fused kernel.

    Same arguments, conventions and validation; no weights are formed, so it is faster and
    lighter on memory. Used by :class:`~attnbook.mha.MultiHeadAttention` when ``need_weights=False``.

    Returns:
        output of shape (..., L, Ev).
    """
    if not all(has_values(t) for t in (query, key, value)):
        # Under torch.func.vmap (fit_together) PyTorch's fused CPU kernel has no batching rule
        # and would run once per member; the same attention written with matmul and softmax is
        # batched like any other operation.
        return scaled_dot_product_attention(
            query, key, value, attn_mask, dropout_p, is_causal, scale, temperature=temperature
        )[0]
    if is_causal and attn_mask is None:
        # Let PyTorch apply the causal restriction itself: its kernels skip the masked blocks.
        _, scale = check_attention_inputs(
            query, key, value, dropout_p=dropout_p, scale=scale, temperature=temperature
        )
        return F.scaled_dot_product_attention(
            query, key, value, dropout_p=dropout_p, is_causal=True, scale=scale / temperature
        )
    mask, scale = check_attention_inputs(
        query,
        key,
        value,
        attn_mask=attn_mask,
        dropout_p=dropout_p,
        is_causal=is_causal,
        scale=scale,
        temperature=temperature,
    )
    if mask is None:
        return F.scaled_dot_product_attention(
            query, key, value, dropout_p=dropout_p, scale=scale / temperature
        )
    # PyTorch 2.13 already returns 0 for rows with no allowed key (CPU kernels, bool or -inf
    # float masks), but older releases and some backends gave NaN; do not depend on it.
    empty = rows_without_keys(mask)  # (..., L, 1)
    some_empty = bool(empty.any())  # usually not: then the mask and the output are not copied
    if some_empty:
        mask = mask.masked_fill(empty, True if mask.dtype == torch.bool else 0.0)
    output = F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout_p, scale=scale / temperature
    )
    return output.masked_fill(empty, 0.0) if some_empty else output  # (..., L, Ev)


def check_attention_inputs(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    temperature: float = 1.0,
) -> tuple[Tensor | None, float]:
    """Check the arguments of any attention function; return its one mask and its scale.

    Every attention variant in the library (:func:`scaled_dot_product_attention`, the
    efficient ones) validates its inputs here, so that they all reject bad input with the same
    ``TypeError``/``ValueError`` naming the argument and the shapes.

    Returns:
        ``(mask, scale)``: ``attn_mask`` and ``is_causal`` merged into one SDPA-convention mask
        (bool ``True`` = may attend, or float added to the scores; ``None`` if neither), and
        the scale (``1 / sqrt(E)`` unless given).
    """
    names = ("query", "key", "value")
    tensors = (query, key, value)
    for name, t in zip(names, tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        if not t.dtype.is_floating_point:
            raise TypeError(f"{name} must be a floating-point tensor; got dtype {t.dtype}")
        if t.dim() < 2:
            raise ValueError(f"{name} must have at least 2 dimensions; got {tuple(t.shape)}")
    if not query.dtype == key.dtype == value.dtype:
        raise TypeError(
            "query, key and value must have the same dtype; got "
            f"query {query.dtype}, key {key.dtype}, value {value.dtype}"
        )
    if not query.device == key.device == value.device:
        raise ValueError(
            "query, key and value must be on the same device; got "
            f"query {query.device}, key {key.device}, value {value.device}"
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            "query and key must have the same feature size E (last dim); got "
            f"query {tuple(query.shape)} and key {tuple(key.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(
            "key and value must have the same length S (dim -2); got "
            f"key {tuple(key.shape)} and value {tuple(value.shape)}"
        )
    try:  # equal batch shapes, the common case, skip torch.broadcast_shapes (slow in Python)
        batch = query.shape[:-2]
        if not batch == key.shape[:-2] == value.shape[:-2]:
            batch = torch.broadcast_shapes(batch, key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "batch dimensions of query, key and value must be broadcastable; got "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        ) from None
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1); got {dropout_p}")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0; got {temperature}")

    L, S = query.size(-2), key.size(-2)
    if attn_mask is not None:
        check_mask(attn_mask, "attn_mask")
        check_broadcastable(attn_mask, (*batch, L, S), "attn_mask")
        if attn_mask.dtype != torch.bool:
            attn_mask = attn_mask.to(query.dtype)
    causal = causal_mask(L, S, device=query.device) if is_causal else None
    mask = merge_masks(attn_mask, causal, query.dtype)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    return mask, scale
