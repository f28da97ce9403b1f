"""Dead and redundant heads: what a ``metric(heads)`` says about each head (chapters 8 and 19).

A head can cost nothing when it is switched off for two different reasons: it does nothing
(*dead*), or another head does the same job and covers for it (*redundant*). One head at a time
cannot tell the two apart; switching heads off *together* can: a redundant pair costs nothing
head by head and a lot together, a dead head costs nothing with any partner.

The procedures are pure functions of ``metric(heads) -> float``, the score with a set of heads
switched off (:func:`attnbook.interp.ablation.metric_function`, by hook or by head mask), so
they are tested on hand-made metrics:

* :func:`single_head_costs` — what each head costs alone, (layers, H);
* :func:`pair_costs` — every pair's cost together and its excess over the two costs alone;
* :func:`greedy_removal` — a set of heads removed together within a tolerance, and
  :func:`joint_contributions` — what each head adds to that set;
* two verdicts, ``"needed"``, ``"redundant"`` or ``"dead"`` per head: :func:`head_verdicts`
  from the greedy set (chapter 8), :func:`dead_heads` from the pairs (chapter 19);
* :func:`prune_curve` — the metric as heads are switched off one after another.

The same on a model, by the head mask, one line each: :func:`head_importance` (the detective's
accuracy) and :func:`single_head_effects` (any ``evaluate``) for the costs alone,
:func:`joint_ablation` for a set, :func:`pair_effects` for the pairs; :func:`prune_curve` takes
a model and a batch too.
:func:`reinitialise_heads` draws fresh weights for some heads (the fix one may try on dead heads;
chapter 19 measures whether it helps).

A head is named by a pair ``(layer, head index)``. Shape legend: H heads per layer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations

import torch
from torch import Tensor, nn

from attnbook.interp.ablation import Evaluate, Head, accuracy_function, head_shape, metric_function
from attnbook.tasks.coref import Batch

__all__ = [
    "single_head_costs",
    "pair_costs",
    "greedy_removal",
    "joint_contributions",
    "head_verdicts",
    "dead_heads",
    "prune_curve",
    "head_importance",
    "single_head_effects",
    "joint_ablation",
    "pair_effects",
    "reinitialise_heads",
]

Metric = Callable[[Iterable[Head]], float]
# Metrics are fractions of whole examples (k / N, float32); comparisons against a threshold
# allow this much rounding, so that losing exactly a threshold's worth of examples counts as
# reaching it on every machine. It is far below 1 / N for any N the book uses.
_ROUNDING = 1e-6


def single_head_costs(accuracy_of: Metric, shape: tuple[int, int]) -> Tensor:
    """Accuracy lost when each head alone is ablated; (layers, H) for ``shape`` = (layers, H)."""
    full = accuracy_of([])
    layers, H = shape
    return torch.tensor([[full - accuracy_of([(l, h)]) for h in range(H)] for l in range(layers)])


def greedy_removal(
    candidates: Sequence[Head],
    accuracy_of: Metric,
    tolerance: float = 0.01,
    costs: Mapping[Head, float] | None = None,
    rng: random.Random | None = None,
) -> list[Head]:
    """Remove heads together, greedily, while the accuracy stays within ``tolerance`` of intact.

    Goes through ``candidates`` once and keeps each head out if the set removed so far plus this
    head loses at most ``tolerance`` against no head removed. Greedy: the result depends on the
    order, and it need not be the largest such set — finding that would mean trying all 2^n
    subsets.

    Args:
        candidates: the heads to try.
        accuracy_of: the accuracy with a set of heads ablated together
            (:func:`~attnbook.interp.ablation.accuracy_function`).
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
    removed: list[Head] = []
    for head in order:
        if full - accuracy_of([*removed, head]) <= tolerance + _ROUNDING:
            removed.append(head)
    return removed


def pair_costs(
    heads: Sequence[Head], accuracy_of: Metric
) -> dict[tuple[Head, Head], tuple[float, float]]:
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
    heads: Iterable[Head],
    removed: Sequence[Head],
    accuracy_of: Metric,
) -> dict[Head, float]:
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
    removed: Sequence[Head],
    joint: dict[Head, float],
    harmless: float = 0.005,
) -> dict[Head, str]:
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


def prune_curve(
    model: nn.Module, batch: Batch, order: Sequence[Head], metric: Metric | None = None
) -> list[float]:
    """The metric after switching off the first k heads of ``order``, for k = 0 .. len(order).

    By default the metric is the detective's pointer accuracy on ``batch`` by the head mask
    (:func:`~attnbook.interp.ablation.accuracy_function` with ``by="mask"``); pass ``metric``
    to use another (``model`` and ``batch`` are then not read).
    """
    if metric is None:
        metric = accuracy_function(model, batch, by="mask")
    return [metric(order[:k]) for k in range(len(order) + 1)]


def head_importance(model: nn.Module, batch: Batch) -> Tensor:
    """The detective's accuracy lost when each head alone is switched off by the head mask;
    (layers, H) (Michel et al. 2019)."""
    costs = single_head_costs(accuracy_function(model, batch, by="mask"), head_shape(model))
    return costs.to(batch.tokens.device)


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
        (:func:`pair_costs`).
    """
    layers, H = head_shape(model)
    if heads is None:
        heads = [(layer, h) for layer in range(layers) for h in range(H)]
    return pair_costs(list(heads), metric_function(model, evaluate))


@torch.no_grad()
def reinitialise_heads(
    model: nn.Module, heads: Iterable[Head], generator: torch.Generator | None = None
) -> None:
    """Draw fresh weights, in place, for the listed heads of a :class:`~attnbook.lab.lab_model.LabModel`.

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
