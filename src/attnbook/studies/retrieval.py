r"""Softmax against linear attention on retrieval, as the number of items grows (chapter 10).

:func:`train_retrieval` trains the one-layer :class:`~attnbook.models.toy.ToyModel` on
:func:`~attnbook.tasks.synthetic.retrieval_batch` (``items`` key-value pairs, then one of the
keys again: output its value) and measures it on a fixed test set; :func:`retrieval_sweep`
does that for every (attention, items, seed) of a grid, all at one training budget.

Besides the accuracy, each run reports :func:`weight_on_answer`: how much weight the query
puts on the item whose value it asks for, averaged over the test set. :func:`weight_profile`
says where the rest goes: to one or two other items, or spread over all of them. Softmax attention can
make that weight as close to 1 as it likes; linear attention's ``phi(q) . phi(k)`` weights are
sharp only while its non-negative features can be kept apart, which takes a coordinate of
their own per item: at most D items per head of size D.

Shape legend: N test examples, P items, H heads, L = P + 1 positions (the items, then the query).

A study, not a kernel: it trains a :mod:`attnbook.models.toy` model, which itself imports the
attention kernels of :mod:`attnbook.efficient`, so it lives apart from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.models.toy import ToyConfig, ToyModel
from attnbook.progress import progress as progress_bar
from attnbook.tasks.synthetic import retrieval_batch
from attnbook.train import TrainConfig, fit, fit_together

__all__ = [
    "effective_count",
    "RetrievalConfig",
    "RetrievalRun",
    "WeightProfile",
    "retrieval_sweep",
    "retrieval_test_set",
    "train_retrieval",
    "train_retrieval_seeds",
    "weight_on_answer",
    "weight_profile",
]

Attention = Literal["full", "linear"]


@dataclass(frozen=True)
class RetrievalConfig:
    """The task, the model and the training budget of one retrieval run."""

    items: int = 32  # P: key-value items before the query
    num_keys: int = 64  # distinct possible keys; the items' keys are distinct
    num_values: int = 16  # possible values, the classes: chance is 1 / num_values
    embed_dim: int = 32  # E of the ToyModel
    num_heads: int = 2  # H; the head size is D = E / H
    steps: int = 500  # optimiser steps: the same budget for every run of a sweep
    lr: float = 1e-2  # AdamW learning rate (after a 50-step warm-up)
    batch_size: int = 64  # training examples per step, fresh at every step
    eval_every: int = 100  # test accuracy every this many steps (the learning curve)
    test_size: int = 512  # examples in the fixed test set
    test_seed: int = 5  # seed of the test set (training batches come from the run's seed)


@dataclass
class RetrievalRun:
    """What one run of :func:`train_retrieval` measured, and the model it trained."""

    attention: str  # "full" (softmax) or "linear" (elu + 1)
    items: int  # P
    seed: int  # seeds the initialisation and the training batches
    accuracy: float  # test accuracy after the last step
    weight_on_answer: float  # mean weight on the answer item, the best head's (weight_on_answer)
    curve_steps: list[int] = field(default_factory=list)  # steps of the learning curve
    curve: list[float] = field(default_factory=list)  # test accuracy at those steps
    model: ToyModel | None = field(default=None, repr=False)  # the trained model, in eval mode


def retrieval_test_set(config: RetrievalConfig) -> tuple[Tensor, Tensor, Tensor]:
    """The fixed test set: keys (N, L), values (N, L), target (N,), as in ``retrieval_batch``."""
    return retrieval_batch(
        config.test_size,
        torch.Generator().manual_seed(config.test_seed),
        items=config.items,
        num_keys=config.num_keys,
        num_values=config.num_values,
    )


def weight_on_answer(model: ToyModel, keys: Tensor, values: Tensor) -> Tensor:
    """Mean weight, per head, that the query puts on the item whose key it repeats.

    Args:
        model: a :class:`~attnbook.models.toy.ToyModel` with a value embedding.
        keys: (N, L), the last column the query key, which occurs once among the first P.
        values: (N, L).

    Returns:
        A tensor of shape (H,), for each head the query's weight on the matching item averaged
        over the N examples (the implied weight for linear attention); uniform weights give 1 / L.
    """
    match, query_weights = _query_weights(model, keys, values)
    on_answer = (query_weights[..., :-1] * match[:, None, :]).sum(dim=-1)  # (N, H)
    return on_answer.mean(dim=0)  # (H,)


def _query_weights(model: ToyModel, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    """The answer's position among the items (N, P) and the query's weights (N, H, L)."""
    if keys.dim() != 2 or keys.shape != values.shape:
        raise ValueError(
            f"keys and values must both have shape (N, L); got {tuple(keys.shape)} "
            f"and {tuple(values.shape)}"
        )
    match = keys[:, :-1] == keys[:, -1:]  # (N, P)
    if not bool((match.sum(dim=-1) == 1).all()):
        raise ValueError(
            "keys: the query key (last column) must occur exactly once among the items"
        )
    with torch.no_grad():
        return match, model.attention_weights(keys, values)[:, :, -1, :]  # (N, H, L)


@dataclass(frozen=True)
class WeightProfile:
    """Where the query's weight goes, averaged over the examples, for one head."""

    head: int  # the head with the most weight on the answer (as in weight_on_answer)
    answer: float  # weight on the item the query asks for
    largest_other: float  # the largest weight on any other item
    second_other: float  # the second largest weight on another item
    median_other: float  # the median weight over the other items (the lower middle one if even)
    own: float  # weight on the query's own position
    effective_positions: float  # 1 / sum of squared weights: 1 if one-hot, L if uniform


def effective_count(weights: Tensor) -> float:
    """How many positions each query effectively attends to, averaged over the queries:
    ``1 / Σ w²`` of each row of ``weights`` (..., L) — 1 if one-hot, L if uniform."""
    return (1 / weights.square().sum(dim=-1)).mean().item()


def weight_profile(model: ToyModel, keys: Tensor, values: Tensor) -> WeightProfile:
    """How the query's weights are spread, for the head with the most weight on the answer.

    Tells a blur (every item a little) from collisions (a few other items a lot): uniform
    weights give ``1 / L`` for every item and ``L`` effective positions; a query that splits
    its weight between the answer and one other item gives about 2.

    Args:
        model: a :class:`~attnbook.models.toy.ToyModel` with a value embedding.
        keys: (N, L), the last column the query key, which occurs once among the first P >= 3.
        values: (N, L).

    Returns:
        The :class:`WeightProfile`, each weight averaged over the N examples.
    """
    if keys.dim() == 2 and keys.size(-1) < 4:
        raise ValueError(
            f"keys: need at least 3 items and the query; got shape {tuple(keys.shape)}"
        )
    match, weights = _query_weights(model, keys, values)  # (N, P), (N, H, L)
    head = int((weights[..., :-1] * match[:, None, :]).sum(dim=-1).mean(dim=0).argmax())
    w = weights[:, head]  # (N, L)
    items = w[:, :-1]  # (N, P)
    others = items[~match].view(items.size(0), -1).sort(dim=-1, descending=True).values  # (N, P-1)
    return WeightProfile(
        head=head,
        answer=items[match].mean().item(),
        largest_other=others[:, 0].mean().item(),
        second_other=others[:, 1].mean().item(),
        median_other=others.median(dim=-1).values.mean().item(),
        own=w[:, -1].mean().item(),
        effective_positions=effective_count(w),
    )


def train_retrieval(
    attention: Attention, config: RetrievalConfig, seed: int = 0, *, progress: bool = False
) -> RetrievalRun:
    """Train one ToyModel with ``attention`` on retrieval for ``config.steps`` steps.

    The seed fixes the initialisation and the training batches; the test set is the same for
    every seed (``config.test_seed``). Returns the final test accuracy, the learning curve, the
    best head's :func:`weight_on_answer` and the trained model.
    """
    (run,) = train_retrieval_seeds(attention, config, (seed,), progress=progress)
    return run


def train_retrieval_seeds(
    attention: Attention, config: RetrievalConfig, seeds: Sequence[int], *, progress: bool = False
) -> list[RetrievalRun]:
    """:func:`train_retrieval` for several seeds; two or more train side by side.

    One seed trains with :func:`~attnbook.train.fit`; two or more with
    :func:`~attnbook.train.fit_together`, each as it would alone up to rounding.
    """
    if attention not in ("full", "linear"):
        raise ValueError(f"attention must be 'full' or 'linear'; got {attention!r}")
    if not seeds:
        raise ValueError("seeds must be non-empty")
    c = config
    models = []
    for seed in seeds:
        torch.manual_seed(seed)
        models.append(
            ToyModel(
                ToyConfig(
                    vocab_size=c.num_keys,
                    value_vocab=c.num_values + 1,  # + the blank value of the query position
                    num_classes=c.num_values,
                    embed_dim=c.embed_dim,
                    num_heads=c.num_heads,
                    max_len=c.items + 1,
                    positions=False,  # a set of items: their order carries nothing
                    attention=attention,
                )
            )
        )

    def make(n: int, g: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        return retrieval_batch(n, g, items=c.items, num_keys=c.num_keys, num_values=c.num_values)

    keys, values, target = retrieval_test_set(c)

    def loss(model: ToyModel, batch: tuple[Tensor, Tensor, Tensor]) -> Tensor:
        return F.cross_entropy(model(batch[0], batch[1])[:, -1], batch[2])

    def accuracy(model: ToyModel) -> dict[str, float]:
        correct = model(keys, values)[:, -1].argmax(dim=-1) == target
        return {"accuracy": correct.float().mean().item()}

    configs = [
        TrainConfig(
            steps=c.steps,
            batch_size=c.batch_size,
            lr=c.lr,
            eval_every=c.eval_every,
            seed=seed,
            progress=progress,
        )
        for seed in seeds
    ]
    if len(models) == 1:
        histories = [fit(models[0], make, loss, configs[0], accuracy)]
    else:
        histories = fit_together(models, make, loss, configs, accuracy)
    return [
        RetrievalRun(
            attention=attention,
            items=c.items,
            seed=seed,
            accuracy=history.last("accuracy"),
            weight_on_answer=weight_on_answer(model, keys, values).max().item(),
            curve_steps=list(history.eval_steps),
            curve=list(history.metrics["accuracy"]),
            model=model,
        )
        for seed, model, history in zip(seeds, models, histories)
    ]


def retrieval_sweep(
    attentions: tuple[Attention, ...],
    items: tuple[int, ...],
    seeds: tuple[int, ...],
    config: RetrievalConfig = RetrievalConfig(),
    *,
    keep_models: bool = False,
    progress: bool = True,
) -> list[RetrievalRun]:
    """:func:`train_retrieval` for every (attention, items, seed), at one budget.

    The seeds of one (attention, items) train side by side (:func:`train_retrieval_seeds`).

    Args:
        attentions: e.g. ``("full", "linear")``.
        items: the numbers of items P to try; each must be at most ``config.num_keys``.
        seeds: one run per seed for every (attention, P).
        config: everything else, the same for every run (its ``items`` is replaced).
        keep_models: keep each trained model in its run (``model``); otherwise ``None``.
        progress: one progress bar over the runs.

    Returns:
        The runs, in the order attention, then items, then seed.
    """
    if not attentions or not items or not seeds:
        raise ValueError(
            f"attentions, items and seeds must be non-empty; got {attentions}, {items}, {seeds}"
        )
    if any(p < 1 or p > config.num_keys for p in items):
        raise ValueError(f"items must be in [1, num_keys={config.num_keys}]; got {items}")
    grid = [(a, p) for a in attentions for p in items]
    runs = []
    for attention, p in progress_bar(
        grid, desc=f"retrieval, {len(seeds)} seeds side by side", disable=not progress
    ):
        for run in train_retrieval_seeds(attention, replace(config, items=p), seeds):
            if not keep_models:
                run.model = None
            runs.append(run)
    return runs
