"""Dead and redundant heads, found by switching heads off through the model's ``head_mask``.

A head can cost nothing when it is switched off for two different reasons: it does nothing
(*dead*), or another head does the same job and covers for it (*redundant*). One head at a time
cannot tell the two apart; switching heads off *together* can: a redundant pair costs nothing
head by head and a lot together, a dead head costs nothing with any partner.

* :func:`metric_function` — ``metric(heads)``: the model's score with a set of heads off;
* :func:`single_head_effects` — what each head costs alone, (layers, H);
* :func:`joint_ablation` — what a set of heads costs together;
* :func:`pair_effects` — every pair's cost together and its excess over the two costs alone;
* :func:`dead_heads` — the verdict per head, ``"needed"``, ``"redundant"`` or ``"dead"``, with
  the thresholds as arguments;
* :func:`reinitialise_heads` — draw fresh weights for some heads (the fix one may try on dead
  heads; chapter 19 measures whether it helps).

How this differs from :mod:`attnbook.interp.ablation` (chapter 8): that module ablates heads of
the detective model with forward pre-hooks on ``out_proj`` (so it works on any
:class:`~attnbook.mha.MultiHeadAttention`, also with *mean* ablation) and finds the removable set
greedily. This one needs nothing but a forward that accepts ``head_mask`` (layers, H) — such as
:class:`~attnbook.lab.model.LabModel` — and any metric the reader chooses; it reuses that
module's pure functions (:func:`~attnbook.interp.ablation.single_head_costs`,
:func:`~attnbook.interp.ablation.pair_costs`) on a ``metric(heads)`` built from the mask, and it
judges redundancy by pairs rather than by a greedy removal order. Zero ablation only: a mask of 0
multiplies the head's output by 0.

A head is named by a pair ``(layer, head index)``. Shape legend: H heads per layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import torch
from torch import Tensor, nn

from attnbook.interp.ablation import pair_costs, single_head_costs
from attnbook.lab.model import IGNORE

__all__ = [
    "head_shape",
    "metric_function",
    "masked_accuracy",
    "single_head_effects",
    "joint_ablation",
    "pair_effects",
    "dead_heads",
    "reinitialise_heads",
]

Head = tuple[int, int]
# metric(model, head_mask (layers, H)) -> float, higher is better
Evaluate = Callable[[nn.Module, Tensor], float]
# Metrics are fractions of whole examples; a threshold is reached within this rounding.
_ROUNDING = 1e-6


def head_shape(model: nn.Module) -> tuple[int, int]:
    """``(layers, H)`` of a model with ``config.num_layers`` and ``config.num_heads``."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "num_layers") or not hasattr(config, "num_heads"):
        raise TypeError(
            f"model must have config.num_layers and config.num_heads (a LabModel); "
            f"got {type(model).__name__}"
        )
    return int(config.num_layers), int(config.num_heads)


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

    def evaluate(model: nn.Module, head_mask: Tensor) -> float:
        logits, _ = model(tokens, head_mask=head_mask)  # (N, L, C)
        return float((logits.argmax(-1)[scored] == targets[scored]).float().mean())

    return evaluate


def metric_function(model: nn.Module, evaluate: Evaluate) -> Callable[[Iterable[Head]], float]:
    """``metric(heads)``: ``evaluate`` with the listed heads off together (mask 0, the rest 1).

    Runs in eval mode without gradients and restores the model's mode; results are cached by
    the set of heads. Raises ``ValueError`` for a head outside the model's (layers, H).
    """
    layers, H = head_shape(model)
    device = next(model.parameters()).device
    cache: dict[frozenset[Head], float] = {}

    def metric(heads: Iterable[Head]) -> float:
        key = frozenset(heads)
        for layer, h in key:
            if not (0 <= layer < layers and 0 <= h < H):
                raise ValueError(
                    f"head ({layer}, {h}) is outside the model's (layers, H) = {(layers, H)}"
                )
        if key not in cache:
            mask = torch.ones(layers, H, device=device)
            for layer, h in key:
                mask[layer, h] = 0.0
            was_training = model.training
            model.eval()
            try:
                with torch.no_grad():
                    cache[key] = float(evaluate(model, mask))
            finally:
                model.train(was_training)
        return cache[key]

    return metric


def single_head_effects(model: nn.Module, evaluate: Evaluate) -> Tensor:
    """The metric lost when each head alone is off: (layers, H), intact minus ablated."""
    return single_head_costs(metric_function(model, evaluate), head_shape(model))


def joint_ablation(model: nn.Module, evaluate: Evaluate, heads: Iterable[Head]) -> float:
    """The metric lost with all of ``heads`` off together (intact minus ablated)."""
    metric = metric_function(model, evaluate)
    return metric([]) - metric(heads)


def pair_effects(
    model: nn.Module, evaluate: Evaluate, heads: Sequence[Head] | None = None
) -> dict[tuple[Head, Head], tuple[float, float]]:
    """Every pair of ``heads`` (default: all heads) off together.

    Returns:
        ``{(a, b): (cost together, excess)}``, the excess being the cost together minus the two
        costs alone: large when the two cover for each other, near 0 when their effects add up
        (:func:`attnbook.interp.ablation.pair_costs`).
    """
    layers, H = head_shape(model)
    if heads is None:
        heads = [(layer, h) for layer in range(layers) for h in range(H)]
    return pair_costs(list(heads), metric_function(model, evaluate))


def dead_heads(
    single: Tensor,
    pairs: dict[tuple[Head, Head], tuple[float, float]],
    harmless: float = 0.005,
    covers: float = 0.02,
) -> dict[Head, str]:
    """A verdict per head from its cost alone and its costs in pairs.

    Args:
        single: (layers, H), each head's cost alone (:func:`single_head_effects`).
        pairs: the :func:`pair_effects` of (at least) every pair of harmless heads.
        harmless: a cost below this is "nothing".
        covers: a pair of harmless heads that costs at least this together covers for each
            other.

    A head is *needed* if it alone costs ``harmless`` or more; *redundant* if it is harmless
    alone but some pair of it with another harmless head costs ``covers`` or more; *dead* if it
    is harmless alone and in every such pair. Only pairs are tried: three heads that cover for
    one another in a group, but not two by two, would be called dead.

    Returns:
        ``{(layer, head): verdict}`` for every head, in order.
    """
    if single.dim() != 2:
        raise ValueError(f"single must have shape (layers, H); got {tuple(single.shape)}")
    if not 0 <= harmless <= covers:
        raise ValueError(f"need 0 <= harmless <= covers; got harmless={harmless}, covers={covers}")
    layers, H = single.shape
    heads = [(layer, h) for layer in range(layers) for h in range(H)]
    quiet = [head for head in heads if float(single[head]) < harmless - _ROUNDING]
    verdicts = {}
    for head in heads:
        if head not in quiet:
            verdicts[head] = "needed"
            continue
        partners = [other for other in quiet if other != head]
        costs = []
        for other in partners:
            key = (head, other) if (head, other) in pairs else (other, head)
            if key not in pairs:
                raise ValueError(f"pairs has no entry for the harmless heads {head} and {other}")
            costs.append(pairs[key][0])
        redundant = any(cost >= covers - _ROUNDING for cost in costs)
        verdicts[head] = "redundant" if redundant else "dead"
    return verdicts


@torch.no_grad()
def reinitialise_heads(
    model: nn.Module, heads: Iterable[Head], generator: torch.Generator | None = None
) -> None:
    """Draw fresh weights, in place, for the listed heads of a :class:`~attnbook.lab.model.LabModel`.

    Head ``h`` of a layer owns rows ``h*D .. (h+1)*D - 1`` of the query, key and value
    projections (weights and biases) and the same columns of ``out_proj``; these are drawn again
    as :class:`torch.nn.Linear` draws them (uniform in ``±1/sqrt(E)``; biases 0), everything else
    is left as it was. Needs as many key/value heads as query heads (a shared key/value head
    belongs to several query heads).
    """
    layers, H = head_shape(model)
    for layer, h in heads:
        if not (0 <= layer < layers and 0 <= h < H):
            raise ValueError(
                f"head ({layer}, {h}) is outside the model's (layers, H) = {(layers, H)}"
            )
        attn = model.blocks[layer].attn
        if attn.num_kv_heads != attn.num_heads:
            raise ValueError(
                f"reinitialise_heads needs num_kv_heads == num_heads; got {attn.num_kv_heads} "
                f"and {attn.num_heads}"
            )
        D, E = attn.head_dim, attn.embed_dim
        rows = slice(h * D, (h + 1) * D)
        bound = 1.0 / math.sqrt(E)

        like = attn.q_proj.weight
        for proj in (attn.q_proj, attn.k_proj, attn.v_proj):
            proj.weight[rows] = _uniform((D, E), bound, generator).to(like)  # the head's rows
            proj.bias[rows] = 0.0
        attn.out_proj.weight[:, rows] = _uniform((E, D), bound, generator).to(like)  # columns


def _uniform(shape: tuple[int, int], bound: float, generator: torch.Generator | None) -> Tensor:
    return torch.rand(*shape, generator=generator) * 2 * bound - bound
