"""Switching heads off by hooks: zero and mean ablation, one head or a set of heads together,
and the greedy search that tells dead heads from redundant ones (chapter 8).

A head's output reaches the rest of the model only through the attention's output projection:
``out_proj`` receives the H heads' outputs side by side, (N, S, H*D), head ``h`` in features
``h*D .. (h+1)*D - 1`` (:func:`attnbook.mha.merge_heads`). A forward pre-hook on ``out_proj`` can
therefore replace one head's D features and leave everything else as it was — no core module is
edited. Two replacements:

* **zero ablation**: the head's output becomes 0 (the same as ``head_mask`` = 0, and as deleting
  the head's D columns of ``out_proj``);
* **mean ablation**: the head's output becomes its *mean* over a reference set of sentences and
  positions. The head then still adds its average contribution, so what is lost is only what it
  says about *this* sentence — not the constant offset that the layers after it were trained
  to expect.

One head at a time cannot tell a head that does nothing (*dead*) from one whose job another head
also does (*redundant*): both cost nothing alone. :func:`greedy_removal` removes heads together,
and :func:`joint_contributions` asks of each head what it adds to the set removed with it.
These two are pure functions of an ``accuracy_of(heads) -> float``, so they are tested on
hand-made accuracies; :func:`accuracy_function` makes one from a model and a batch.

:func:`erase_tokens` removes tokens instead of heads: the token becomes padding, and padding is
masked as a key, so no head can read it while every other token keeps its position.

A head is named by a pair ``(layer, head index)``: layer ``l`` is the ``l``-th
:class:`~attnbook.mha.MultiHeadAttention` in ``model.modules()`` order (for the detective, encoder
block ``l``).

Shape legend: N batch, S sentence length, H heads, D head size, E = H*D.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import combinations

import torch
from torch import Tensor, nn

from attnbook.mha import MultiHeadAttention
from attnbook.models.detective import pointer_accuracy
from attnbook.tasks.coref import Batch

__all__ = [
    "attention_modules",
    "replace_head",
    "ablated",
    "head_means",
    "accuracy_function",
    "single_head_costs",
    "greedy_removal",
    "joint_contributions",
    "pair_costs",
    "head_verdicts",
    "erase_tokens",
]


# Accuracies are float32 fractions of whole sentences (k / N); comparisons against a threshold
# allow this much rounding, so that losing exactly a threshold's worth of sentences counts as
# reaching it on every machine. It is far below 1 / N for any N the book uses.
_ROUNDING = 1e-6


def attention_modules(model: nn.Module) -> list[MultiHeadAttention]:
    """Every :class:`~attnbook.mha.MultiHeadAttention` of ``model``, in ``modules()`` order."""
    found = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    if not found:
        raise ValueError(f"model has no attnbook MultiHeadAttention; got {type(model).__name__}")
    return found


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


def accuracy_function(
    model: nn.Module, batch: Batch, means: Tensor | None = None
) -> Callable[[Iterable[tuple[int, int]]], float]:
    """``accuracy_of(heads)``: the pointer accuracy on ``batch`` with ``heads`` ablated together
    (zero ablation, or mean ablation with ``means``). Results are cached by the set of heads."""
    cache: dict[frozenset[tuple[int, int]], float] = {}

    def accuracy_of(heads: Iterable[tuple[int, int]]) -> float:
        key = frozenset(heads)
        if key not in cache:
            was_training = model.training
            model.eval()
            try:
                with torch.no_grad(), ablated(model, key, means):
                    logits, _ = model.run(batch)
            finally:
                model.train(was_training)
            cache[key] = pointer_accuracy(logits, batch.target)
        return cache[key]

    return accuracy_of


def single_head_costs(
    accuracy_of: Callable[[Iterable[tuple[int, int]]], float], shape: tuple[int, int]
) -> Tensor:
    """Accuracy lost when each head alone is ablated; (layers, H) for ``shape`` = (layers, H)."""
    full = accuracy_of([])
    layers, H = shape
    return torch.tensor([[full - accuracy_of([(l, h)]) for h in range(H)] for l in range(layers)])


def greedy_removal(
    candidates: Sequence[tuple[int, int]],
    accuracy_of: Callable[[Iterable[tuple[int, int]]], float],
    tolerance: float = 0.01,
    costs: Mapping[tuple[int, int], float] | None = None,
    rng: random.Random | None = None,
) -> list[tuple[int, int]]:
    """Remove heads together, greedily, while the accuracy stays within ``tolerance`` of intact.

    Goes through ``candidates`` once and keeps each head out if the set removed so far plus this
    head loses at most ``tolerance`` against no head removed. Greedy: the result depends on the
    order, and it need not be the largest such set — finding that would mean trying all 2^n
    subsets.

    Args:
        candidates: the heads to try.
        accuracy_of: the accuracy with a set of heads ablated together (:func:`accuracy_function`).
        tolerance: the accuracy the removed set may lose.
        costs: if given, each candidate's cost alone; the candidates are then tried cheapest
            first. Equal costs (many heads cost exactly 0) leave the order open: without ``rng``
            ties keep the order of ``candidates``; with ``rng`` they are shuffled by it.
        rng: a ``random.Random`` that breaks ties in ``costs`` (or, without ``costs``,
            shuffles all candidates), so that several orders can be compared.

    Returns:
        The heads removed, in the order they were taken.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0; got {tolerance}")
    order = list(candidates)
    if costs is not None and (missing := [h for h in order if h not in costs]):
        raise ValueError(f"costs has no entry for the candidates {missing}")
    if rng is not None:
        rng.shuffle(order)
    if costs is not None:
        order.sort(key=lambda head: float(costs[head]))  # stable: ties keep the order so far
    full = accuracy_of([])
    removed: list[tuple[int, int]] = []
    for head in order:
        if full - accuracy_of([*removed, head]) <= tolerance + _ROUNDING:
            removed.append(head)
    return removed


def pair_costs(
    heads: Sequence[tuple[int, int]], accuracy_of: Callable[[Iterable[tuple[int, int]]], float]
) -> dict[tuple[tuple[int, int], tuple[int, int]], tuple[float, float]]:
    """For every pair of ``heads``: the accuracy lost with both ablated, and its *excess* over
    the two heads' losses alone, ``cost(a, b) - cost(a) - cost(b)``.

    A large excess means the two cover for each other (each does what the other would); an
    excess near 0 means their effects simply add up.

    Returns:
        ``{(a, b): (cost together, excess)}`` for each of the n(n-1)/2 pairs, in
        ``itertools.combinations`` order.
    """
    full = accuracy_of([])
    alone = {head: full - accuracy_of([head]) for head in heads}
    out = {}
    for a, b in combinations(heads, 2):
        together = full - accuracy_of([a, b])
        out[a, b] = (together, together - alone[a] - alone[b])
    return out


def joint_contributions(
    heads: Iterable[tuple[int, int]],
    removed: Sequence[tuple[int, int]],
    accuracy_of: Callable[[Iterable[tuple[int, int]]], float],
) -> dict[tuple[int, int], float]:
    """What each head adds when the heads in ``removed`` are gone.

    For a head in ``removed``: the accuracy regained by putting it back alone,
    ``accuracy_of(removed - {head}) - accuracy_of(removed)``. For a head not in ``removed``: the
    accuracy lost by removing it as well, ``accuracy_of(removed) - accuracy_of(removed + {head})``.
    A head that costs nothing alone but contributes here is *redundant* (another head covered for
    it); a removed head that contributes nothing is *dead* on this data (:func:`head_verdicts`).
    """
    base = accuracy_of(removed)
    gone = set(removed)
    out = {}
    for head in heads:
        if head in gone:
            out[head] = accuracy_of([h for h in removed if h != head]) - base
        else:
            out[head] = base - accuracy_of([*removed, head])
    return out


def head_verdicts(
    alone: Tensor,
    removed: Sequence[tuple[int, int]],
    joint: dict[tuple[int, int], float],
    harmless: float = 0.005,
) -> dict[tuple[int, int], str]:
    """Call each head ``"needed"``, ``"redundant"`` or ``"dead"``.

    Args:
        alone: (layers, H) each head's accuracy cost when it alone is ablated
            (:func:`single_head_costs`).
        removed: the heads removed together (:func:`greedy_removal`).
        joint: the :func:`joint_contributions` to ``removed`` of every head that is harmless
            alone.
        harmless: a cost below this is "nothing" (the book: half a point).

    A head is *needed* if it alone costs ``harmless`` or more. A head that costs less alone is
    judged by its joint contribution only: *dead* if it is below ``harmless`` (putting it back
    regains less, or removing it as well loses less), *redundant* otherwise — it matters once
    the others are gone. ``removed`` is not consulted beyond ``joint``; it is kept so that the
    call reads like the procedure.

    Returns:
        A verdict for every (layer, head), in order.
    """
    if alone.dim() != 2:
        raise ValueError(f"alone must have shape (layers, H); got {tuple(alone.shape)}")
    verdicts = {}
    for layer in range(alone.size(0)):
        for h in range(alone.size(1)):
            head = (layer, h)
            if float(alone[layer, h]) >= harmless - _ROUNDING:
                verdicts[head] = "needed"
            elif head not in joint:
                raise ValueError(f"joint has no contribution for the harmless head {head}")
            elif joint[head] < harmless - _ROUNDING:
                verdicts[head] = "dead"
            else:
                verdicts[head] = "redundant"
    return verdicts


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
