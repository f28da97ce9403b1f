"""Switching heads off: one API, two strategies (chapters 8 and 19).

Every measurement of what heads are worth starts from ``metric(heads) -> float``: the model's
score with a set of heads switched off together. :func:`metric_function` builds one from any
``evaluate(model, head_mask) -> float`` by one of two strategies:

* ``by="mask"`` — the model's own ``head_mask`` (layers, H): 1 keeps a head, 0 multiplies its
  weights by 0. Needs nothing but a forward that accepts ``head_mask`` (the detective's
  ``run``, :class:`~attnbook.lab.lab_model.LabModel`); zero ablation only.
* ``by="hook"`` — a forward pre-hook on each attention's ``out_proj`` replaces the head's
  output there (:func:`ablated`), no core module edited; works on any
  :class:`~attnbook.mha.MultiHeadAttention`, also with *mean* ablation: the head's output
  becomes its mean over a reference batch (:func:`head_means`), so that what is lost is only
  what it says about *this* sentence — not the constant offset the layers after it were trained
  to expect. ``evaluate`` then receives ``head_mask=None``.

Zero ablation is the same by either strategy: ``out_proj`` receives the H heads' outputs side by
side, (N, S, H*D), head ``h`` in features ``h*D .. (h+1)*D - 1``
(:func:`attnbook.mha.merge_heads`), and a head whose weights are 0 outputs 0 there.
:func:`accuracy_function` is :func:`metric_function` with the detective's pointer accuracy,
:func:`masked_accuracy` an ``evaluate`` for a :class:`~attnbook.lab.lab_model.LabModel`'s scored
positions, and :func:`accuracy_with_heads_off` one measurement by the mask. What the metric says
about heads — costs alone, in pairs, removed together; needed, redundant or dead — is in
:mod:`attnbook.interp.redundancy`.

:func:`erase_tokens` removes tokens instead of heads: the token becomes padding, and padding is
masked as a key, so no head can read it while every other token keeps its position.

A head is named by a pair ``(layer, head index)``: layer ``l`` is the ``l``-th attention of the
model (for the hooks, the ``l``-th :class:`~attnbook.mha.MultiHeadAttention` in
``model.modules()`` order; for the detective, encoder block ``l``).

Shape legend: N batch, S sentence length, L positions, H heads, D head size, E = H*D.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

import torch
from torch import Tensor, nn

from attnbook.lab.lab_model import IGNORE
from attnbook.mha import MultiHeadAttention
from attnbook.models.detective import pointer_accuracy
from attnbook.tasks.coref import Batch

__all__ = [
    "attention_modules",
    "head_shape",
    "replace_head",
    "ablated",
    "head_means",
    "head_mask",
    "metric_function",
    "accuracy_function",
    "masked_accuracy",
    "accuracy_with_heads_off",
    "erase_tokens",
]

Head = tuple[int, int]
# evaluate(model, head_mask (layers, H) or None) -> float, higher is better
Evaluate = Callable[[nn.Module, Tensor | None], float]
Strategy = Literal["mask", "hook"]


def attention_modules(model: nn.Module) -> list[MultiHeadAttention]:
    """Every :class:`~attnbook.mha.MultiHeadAttention` of ``model``, in ``modules()`` order."""
    found = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    if not found:
        raise ValueError(f"model has no attnbook MultiHeadAttention; got {type(model).__name__}")
    return found


def head_shape(model: nn.Module) -> tuple[int, int]:
    """``(layers, H)``: from ``config.num_layers`` and ``config.num_heads`` (a
    :class:`~attnbook.lab.lab_model.LabModel`) or ``config.nhead`` (the detective)."""
    config = getattr(model, "config", None)
    heads = getattr(config, "num_heads", getattr(config, "nhead", None))
    if config is None or not hasattr(config, "num_layers") or heads is None:
        raise TypeError(
            f"model must have config.num_layers and config.num_heads (a LabModel) or "
            f"config.nhead; got {type(model).__name__}"
        )
    return int(config.num_layers), int(heads)


def replace_head(x: Tensor, head: int, num_heads: int, value: Tensor | float = 0.0) -> Tensor:
    """A copy of the heads' concatenated outputs with one head's features set to ``value``.

    Args:
        x: (..., H*D) the input of ``out_proj``: head ``h`` holds features ``h*D .. (h+1)*D - 1``.
        head: which head, ``0 <= head < num_heads``.
        num_heads: H; must divide the last dimension of ``x``.
        value: a number, or a (D,) tensor broadcast over every position (a head's mean).

    Returns:
        A new tensor of the shape of ``x``; ``x`` itself is not modified.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}")
    if num_heads <= 0 or x.size(-1) % num_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide the feature size; got x {tuple(x.shape)}"
        )
    if not 0 <= head < num_heads:
        raise ValueError(f"head must be in [0, {num_heads}); got {head}")
    D = x.size(-1) // num_heads
    if isinstance(value, Tensor) and value.shape not in ((), (D,)):
        raise ValueError(
            f"value must be a number or have shape (D,) = ({D},); got {tuple(value.shape)}"
        )
    out = x.clone()
    out[..., head * D : (head + 1) * D] = value  # (..., D) of the (..., H*D)
    return out


def _check_heads(
    modules: Sequence[MultiHeadAttention], heads: Iterable[tuple[int, int]]
) -> list[tuple[int, int]]:
    heads = list(heads)
    for layer, head in heads:
        if not (0 <= layer < len(modules) and 0 <= head < modules[layer].num_heads):
            raise ValueError(
                f"head ({layer}, {head}) does not exist: the model has {len(modules)} attention "
                f"layers of {[m.num_heads for m in modules]} heads"
            )
    return heads


@contextmanager
def ablated(
    model: nn.Module, heads: Iterable[tuple[int, int]], means: Tensor | None = None
) -> Iterator[nn.Module]:
    """Within the ``with`` block, the listed heads are switched off in every forward pass.

    Args:
        model: a model built from attnbook attention (see :func:`attention_modules`).
        heads: (layer, head) pairs, ablated together.
        means: ``None`` for zero ablation; or (layers, H, D), each head's mean output
            (:func:`head_means`), for mean ablation.

    The hooks are removed on leaving the block, also after an exception.
    """
    modules = attention_modules(model)
    heads = _check_heads(modules, heads)
    if means is not None:
        expected = (len(modules), modules[0].num_heads, modules[0].head_dim)
        if tuple(means.shape) != expected:
            raise ValueError(
                f"means must have shape (layers, H, D) = {expected}; got {tuple(means.shape)}"
            )
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)

    def hook_for(layer: int) -> Callable:
        H = modules[layer].num_heads

        def hook(module: nn.Module, args: tuple) -> tuple:
            x = args[0]  # (N, S, H*D): the heads side by side
            for head in by_layer[layer]:
                value = 0.0 if means is None else means[layer, head].to(x)
                x = replace_head(x, head, H, value)
            return (x, *args[1:])

        return hook

    handles = [
        modules[layer].out_proj.register_forward_pre_hook(hook_for(layer)) for layer in by_layer
    ]
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


def head_means(model: nn.Module, batch: Batch) -> Tensor:
    """Each head's mean output over the real (non-padding) positions of ``batch``; (layers, H, D).

    The reference for mean ablation, read at the input of each ``out_proj`` in eval mode.
    ``model`` has a ``run(batch)`` (such as :class:`~attnbook.models.detective.Detective`) and
    only self-attention, so that every layer sees the batch's positions.
    """
    modules = attention_modules(model)
    seen: dict[int, list[Tensor]] = {layer: [] for layer in range(len(modules))}
    handles = [
        m.out_proj.register_forward_pre_hook(
            lambda _, args, layer=layer: seen[layer].append(args[0])
        )
        for layer, m in enumerate(modules)
    ]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model.run(batch)
    finally:
        model.train(was_training)
        for handle in handles:
            handle.remove()
    if any(len(calls) != 1 for calls in seen.values()):
        raise ValueError(
            "head_means needs each attention layer to run once per forward pass; got "
            f"{[len(calls) for calls in seen.values()]} calls per layer"
        )
    real = (~batch.key_padding_mask).to(seen[0][0].dtype)[..., None]  # (N, S, 1)
    means = [(seen[layer][0] * real).sum((0, 1)) / real.sum() for layer in seen]  # each (H*D,)
    return torch.stack(
        [mu.unflatten(0, (m.num_heads, m.head_dim)) for mu, m in zip(means, modules)]
    )  # (layers, H, D)


def head_mask(
    shape: tuple[int, int], heads: Iterable[Head], device: torch.device | str | None = None
) -> Tensor:
    """The ``head_mask`` (layers, H) that switches ``heads`` off: 0 on them, 1 elsewhere.

    Raises ``ValueError`` for a head outside ``shape``.
    """
    layers, H = shape
    mask = torch.ones(layers, H, device=device)
    for layer, h in heads:
        if not (0 <= layer < layers and 0 <= h < H):
            raise ValueError(
                f"head ({layer}, {h}) is outside the model's (layers, H) = {(layers, H)}"
            )
        mask[layer, h] = 0.0
    return mask


def metric_function(
    model: nn.Module, evaluate: Evaluate, by: Strategy = "mask", means: Tensor | None = None
) -> Callable[[Iterable[Head]], float]:
    """``metric(heads)``: ``evaluate`` with the listed heads switched off together.

    Args:
        model: with ``by="mask"``, a model :func:`head_shape` can read; with ``by="hook"``, one
            built from attnbook attention (:func:`attention_modules`).
        evaluate: ``evaluate(model, head_mask) -> float``; it receives the (layers, H) mask
            (``by="mask"``, every head 1 when none is off) or ``None`` (``by="hook"``: the
            heads are off through :func:`ablated` while it runs).
        by: the strategy, ``"mask"`` or ``"hook"`` (see the module's docstring).
        means: ``by="hook"`` only: (layers, H, D) from :func:`head_means` for mean ablation;
            ``None`` for zero ablation.

    Runs in eval mode without gradients and restores the model's mode; results are cached by
    the set of heads. Raises ``ValueError`` for a head the model does not have.
    """
    if by not in ("mask", "hook"):
        raise ValueError(f'by must be "mask" or "hook"; got {by!r}')
    if by == "mask" and means is not None:
        raise ValueError('mean ablation needs by="hook": a head mask can only multiply by 0')
    if by == "mask":
        shape = head_shape(model)
        first = next(model.parameters(), None)
        device = None if first is None else first.device
    else:
        modules = attention_modules(model)
    cache: dict[frozenset[Head], float] = {}

    def metric(heads: Iterable[Head]) -> float:
        key = frozenset(heads)
        mask = head_mask(shape, key, device) if by == "mask" else None
        if by == "hook":
            _check_heads(modules, key)
        if key not in cache:
            was_training = model.training
            model.eval()
            try:
                with torch.no_grad():
                    if by == "mask":
                        cache[key] = float(evaluate(model, mask))
                    else:
                        with ablated(model, key, means):
                            cache[key] = float(evaluate(model, None))
            finally:
                model.train(was_training)
        return cache[key]

    return metric


def accuracy_function(
    model: nn.Module, batch: Batch, means: Tensor | None = None, by: Strategy = "hook"
) -> Callable[[Iterable[Head]], float]:
    """``accuracy_of(heads)``: the detective's pointer accuracy on ``batch`` with ``heads``
    switched off together — by hooks (zero ablation, or mean ablation with ``means``) or by
    the head mask (``by="mask"``). Results are cached by the set of heads."""

    def evaluate(model: nn.Module, mask: Tensor | None) -> float:
        logits, _ = model.run(batch, head_mask=mask)  # no weights needed: the fast path
        return pointer_accuracy(logits, batch.target)

    return metric_function(model, evaluate, by, means)


def masked_accuracy(batch: tuple[Tensor, Tensor]) -> Evaluate:
    """``evaluate(model, head_mask)``: the accuracy on ``batch = (tokens (N, L), targets (N, L))``
    over the scored positions (targets other than ``IGNORE``), with ``head_mask`` applied."""
    tokens, targets = batch
    if tokens.shape != targets.shape:
        raise ValueError(
            f"tokens and targets must have one shape (N, L); got {tuple(tokens.shape)} "
            f"and {tuple(targets.shape)}"
        )
    scored = targets != IGNORE

    def evaluate(model: nn.Module, head_mask: Tensor | None) -> float:
        logits, _ = model(tokens, head_mask=head_mask)  # (N, L, C)
        return float((logits.argmax(-1)[scored] == targets[scored]).float().mean())

    return evaluate


def accuracy_with_heads_off(model: nn.Module, batch: Batch, off: Iterable[Head]) -> float:
    """The detective's pointer accuracy with the (layer, head) pairs ``off`` switched off by
    ``head_mask``: one measurement of :func:`accuracy_function` with ``by="mask"``."""
    return accuracy_function(model, batch, by="mask")(off)


def erase_tokens(batch: Batch, where: Tensor, pad_id: int = 0) -> Batch:
    """``batch`` with the tokens at ``where`` removed: each becomes ``pad_id`` and is masked as a
    key (``key_padding_mask`` is ``True`` there), so no head reads it and the pointer cannot
    choose it; every other token keeps its token and its position.

    Args:
        batch: a :class:`~attnbook.tasks.coref.Batch` of (N, S) tensors.
        where: (N, S) bool, ``True`` on the tokens to erase.
        pad_id: the vocabulary's padding id (``vocab.pad_id``, 0 in the book).
    """
    if where.shape != batch.tokens.shape or where.dtype != torch.bool:
        raise ValueError(
            f"where must be a bool tensor of the batch's shape (N, S) = {tuple(batch.tokens.shape)}; "
            f"got {where.dtype} {tuple(where.shape)}"
        )
    return batch._replace(
        tokens=batch.tokens.masked_fill(where, pad_id),
        key_padding_mask=batch.key_padding_mask | where,
    )
