"""A small, readable training loop shared by every chapter that trains something.

``fit`` takes a model, a function that makes a batch, and a :class:`TrainConfig`; it seeds
everything, shows a text progress bar (:mod:`attnbook.progress`), evaluates every
``eval_every`` steps, and returns the :class:`History` of what it measured. The learning rate
follows :func:`lr_factor`: a linear warm-up, then constant, inverse-square-root or cosine decay.
Nothing is hidden in globals, and nothing is stashed on the model.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.utils._pytree import tree_flatten, tree_unflatten

from attnbook.progress import progress
from attnbook.run_cache import reusable

# Whatever make_batch returns and loss_fn takes: a tuple of tensors, a tasks.coref.Batch, ...
AnyBatch = Any
Schedule = Literal["constant", "inverse_sqrt", "cosine"]
SCHEDULES = ("constant", "inverse_sqrt", "cosine")


@dataclass
class TrainConfig:
    """Hyperparameters of one training run."""

    steps: int = 1000  # optimiser steps
    batch_size: int = 64  # examples per step (passed to make_batch)
    lr: float = 3e-3  # AdamW learning rate (after warm-up)
    weight_decay: float = 0.0  # AdamW weight decay
    warmup_steps: int = 50  # linear learning-rate warm-up
    schedule: Schedule = "constant"  # after warm-up: constant, inverse_sqrt or cosine; lr_factor
    grad_clip: float | None = 1.0  # max global gradient norm, or None
    eval_every: int = 100  # evaluate every this many steps (and at the end)
    seed: int = 0  # seeds Python, torch and the batch generator
    progress: bool = True  # show a progress bar (attnbook.progress)


@dataclass
class History:
    """What ``fit`` measured: training loss per step, evaluation metrics per evaluation."""

    steps: list[int] = field(default_factory=list)  # step of each training loss
    loss: list[float] = field(default_factory=list)  # training loss at each step
    eval_steps: list[int] = field(default_factory=list)  # step of each evaluation
    metrics: dict[str, list[float]] = field(default_factory=dict)  # name -> value per evaluation

    def last(self, name: str) -> float:
        """The most recent value of an evaluation metric."""
        if not self.metrics.get(name):
            raise KeyError(f"no metric {name!r}; have {sorted(self.metrics)}")
        return self.metrics[name][-1]


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's and torch's global generators; return a fresh generator for batches."""
    random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def lr_factor(
    step: int, warmup_steps: int, total_steps: int, schedule: Schedule = "constant"
) -> float:
    """The learning rate of optimiser step ``step`` (1-based), as a fraction of the peak.

    A linear warm-up, ``step / warmup_steps``, up to 1 at ``step = warmup_steps``; then

    * ``"constant"``: 1;
    * ``"inverse_sqrt"``: ``sqrt(warmup_steps / step)``, the schedule of Vaswani et al. (2017,
      section 5.3), ``d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)``, divided by
      its peak;
    * ``"cosine"``: ``(1 + cos(pi * p)) / 2`` with ``p`` the fraction of the steps after the
      warm-up done so far: 1 after the warm-up, 0 at ``step = total_steps``.

    ``warmup_steps = 0`` means no warm-up (as 1: the first step already has the peak rate).
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}; got {schedule!r}")
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step:
        raise ValueError(f"step must be an integer >= 1 (steps count from 1); got {step!r}")
    if warmup_steps < 0 or total_steps < 1:
        raise ValueError(
            f"warmup_steps must be >= 0 and total_steps >= 1; got {warmup_steps}, {total_steps}"
        )
    warmup = max(1, warmup_steps)
    if step <= warmup or schedule == "constant":
        return min(1.0, step / warmup)
    if schedule == "inverse_sqrt":
        return math.sqrt(warmup / step)
    progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def _check_config(config: TrainConfig) -> None:
    """Reject a run that cannot start, before any training: no steps, no batch, a bad schedule."""
    if config.steps <= 0 or config.batch_size <= 0:
        raise ValueError(
            f"steps and batch_size must be positive; got {config.steps}, {config.batch_size}"
        )
    lr_factor(1, config.warmup_steps, config.steps, config.schedule)


def _record_evaluation(
    model: nn.Module, evaluate: Callable[[nn.Module], dict[str, float]], history: History, step: int
) -> None:
    """Evaluate ``model`` in eval mode without gradients and append the results to ``history``."""
    model.eval()
    with torch.no_grad():
        results = evaluate(model)
    history.eval_steps.append(step)
    for name, value in results.items():
        history.metrics.setdefault(name, []).append(float(value))


@reusable  # make test's second notebook pass takes a finished run instead (attnbook.run_cache)
def fit(
    model: nn.Module,
    make_batch: Callable[[int, torch.Generator], AnyBatch],
    loss_fn: Callable[[nn.Module, AnyBatch], Tensor],
    config: TrainConfig,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
) -> History:
    """Train ``model`` with AdamW for ``config.steps`` steps and return its history.

    Args:
        model: the module to train (in place).
        make_batch: ``make_batch(batch_size, generator) -> batch``; must draw all its randomness
            from ``generator`` so that runs are reproducible.
        loss_fn: ``loss_fn(model, batch) -> scalar loss``.
        config: the run's hyperparameters.
        evaluate: optional ``evaluate(model) -> {metric: value}``, called in eval mode under
            ``torch.no_grad`` every ``config.eval_every`` steps and after the last step.
    """
    _check_config(config)
    generator = seed_everything(config.seed)
    # foreach: one call per update for all parameters instead of a Python loop over them; on
    # CPU this trains the small models of the book about a fifth faster, with bit-identical
    # weights (checked on PyTorch's AVX-512, AVX2 and generic kernels).
    parameters = list(model.parameters())
    optimizer = torch.optim.AdamW(
        parameters, lr=config.lr, weight_decay=config.weight_decay, foreach=True
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(  # LambdaLR counts from 0, lr_factor from 1
        optimizer,
        lambda i: lr_factor(i + 1, config.warmup_steps, config.steps, config.schedule),
    )
    history = History()

    def run_evaluation(step: int) -> None:
        if evaluate is not None:
            _record_evaluation(model, evaluate, history, step)
            model.train()

    model.train()
    for step in progress(range(1, config.steps + 1), desc="training", disable=not config.progress):
        batch = make_batch(config.batch_size, generator)
        loss = loss_fn(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip is not None:
            nn.utils.clip_grad_norm_(parameters, config.grad_clip)
        optimizer.step()
        scheduler.step()
        history.steps.append(step)
        history.loss.append(float(loss.detach()))
        if step % config.eval_every == 0 or step == config.steps:
            run_evaluation(step)
    model.eval()
    return history


@reusable
def fit_together(
    models: Sequence[nn.Module],
    make_batch: Callable[[int, torch.Generator], AnyBatch],
    loss_fn: Callable[[nn.Module, AnyBatch], Tensor],
    configs: Sequence[TrainConfig],
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
) -> list[History]:
    """Train several runs of one architecture as one batched run; return one history per run.

    Member ``i`` trains as ``fit(models[i], make_batch, loss_fn, configs[i], evaluate)`` would:
    its own initial weights (build each model with its seed), its own batches (a generator
    seeded with ``configs[i].seed``), its own gradient clipping by norm, and its own learning
    rate, warm-up and schedule. The members' parameters are stacked into one tensor per
    parameter (S, ...), and ``torch.func.vmap`` runs the loss over the stack, so a step makes
    about as many operations as one run's step, each on S times the numbers. Batched kernels
    round differently in the last bits, so a member's weights match its solo run closely at
    first and then drift, as they would on another CPU. Dropout draws different masks per member
    from the global generator (seeded with the first member's seed), not the solo runs' masks.

    How much time this saves depends on the model: the fewer numbers per operation, the more
    (``benchmarks/bench_together.py``: about 1.7 times for 8 seeds of a small 6-layer Transformer,
    about 1.3 times for 10 seeds of chapter 3's one-layer model, nothing for 3 seeds).

    The models are trained in place: during training their parameters are views into the
    stack (so ``evaluate(models[i])`` sees the current weights); afterwards they own them again.

    Args:
        models: S models of one architecture (S >= 1): the same parameter names and shapes
            and the same printed structure, since every member runs ``models[0]``'s forward.
        make_batch, loss_fn, evaluate: as for :func:`fit`; ``loss_fn`` runs under ``vmap``, so it
            and the model must not branch on tensor values (see :mod:`attnbook.values`).
        configs: one per model. They may differ in ``seed``, ``lr``, ``warmup_steps`` and
            ``schedule``; ``steps``, ``batch_size``, ``weight_decay``, ``grad_clip``,
            ``eval_every`` and ``progress`` must be the same.
    """
    models, configs = list(models), list(configs)
    if not models or len(models) != len(configs):
        raise ValueError(
            f"models and configs must be non-empty and of one length; got {len(models)} models "
            f"and {len(configs)} configs"
        )
    shared = ("steps", "batch_size", "weight_decay", "grad_clip", "eval_every", "progress")
    first = configs[0]
    for name in shared:
        if any(getattr(c, name) != getattr(first, name) for c in configs):
            raise ValueError(
                f"configs must share {name}; got {[getattr(c, name) for c in configs]}"
            )
    shapes = [[(n, p.shape) for n, p in m.named_parameters()] for m in models]
    if any(s != shapes[0] for s in shapes):
        raise ValueError("models must have the same parameter names and shapes to train together")
    # Every member runs models[0]'s forward: two heads and four share their parameter shapes,
    # so the printed structure (which names the heads and other options) must agree too.
    differs = [i for i, m in enumerate(models) if repr(m) != repr(models[0])]
    if differs:
        raise ValueError(
            f"models must be one architecture to train together; models {differs} print "
            "differently from models[0] (e.g. another number of heads)"
        )
    for c in configs:
        _check_config(c)
    seed_everything(first.seed)  # dropout and anything else drawn from the global generator
    generators = [torch.Generator().manual_seed(c.seed) for c in configs]

    params, buffers = torch.func.stack_module_state(models)  # name -> (S, ...)
    for s, model in enumerate(models):  # each model's tensors become views into the stack
        for name, tensor in (*model.named_parameters(), *model.named_buffers()):
            tensor.data = (params.get(name, buffers.get(name))).detach()[s]
    base = _LossOf(copy.deepcopy(models[0]).to("meta"), loss_fn)

    def member_loss(p: dict[str, Tensor], b: dict[str, Tensor], batch: AnyBatch) -> Tensor:
        state = {f"model.{name}": t for name, t in (*p.items(), *b.items())}
        return torch.func.functional_call(base, state, (batch,))

    batched_loss = torch.func.vmap(member_loss, randomness="different")
    with torch.no_grad():  # once unbatched, so that bad input meets the model's own checks
        loss_fn(models[0], make_batch(first.batch_size, torch.Generator().manual_seed(first.seed)))
    stacked = list(params.values())
    # AdamW with a learning rate of 1, then each member's change scaled by its own rate: AdamW's
    # step is p * (1 - lr * wd) - lr * u, with u independent of lr, so this is AdamW at lr.
    optimizer = torch.optim.AdamW(stacked, lr=1.0, weight_decay=first.weight_decay, foreach=True)
    histories = [History() for _ in models]
    base.train()
    steps = progress(
        range(1, first.steps + 1),
        desc=f"training {len(models)} runs together",
        disable=not first.progress,
    )
    for step in steps:
        batch = _stack([make_batch(first.batch_size, g) for g in generators])
        losses = batched_loss(params, buffers, batch)  # (S,)
        optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()  # the members are independent: each gets its own gradient
        if first.grad_clip is not None:
            clip_grad_norm_per_member(stacked, first.grad_clip)
        rates = torch.tensor(
            [c.lr * lr_factor(step, c.warmup_steps, c.steps, c.schedule) for c in configs]
        )  # (S,)
        with torch.no_grad():
            before = [p.clone() for p in stacked]
            optimizer.step()
            for p, old in zip(stacked, before):
                p.copy_(torch.lerp(old, p, rates.view(-1, *([1] * (p.dim() - 1))).to(p.dtype)))
        for history, loss in zip(histories, losses.detach().tolist()):
            history.steps.append(step)
            history.loss.append(loss)
        if evaluate is not None and (step % first.eval_every == 0 or step == first.steps):
            for model, history in zip(models, histories):
                _record_evaluation(model, evaluate, history, step)
    for model in models:  # each model owns its weights again
        for tensor in (*model.parameters(), *model.buffers()):
            tensor.data = tensor.data.clone()
        model.eval()
    return histories


def clip_grad_norm_per_member(parameters: Sequence[Tensor], max_norm: float) -> Tensor:
    """``nn.utils.clip_grad_norm_`` for each member of stacked (S, ...) parameters on its own.

    Returns the S total norms before clipping, as ``clip_grad_norm_`` returns its one norm.
    """
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(0)
    members = grads[0].shape[0]
    norms = torch.stack([g.reshape(members, -1).norm(dim=1) for g in grads])  # (P, S)
    total = norms.norm(dim=0)  # (S,)
    factor = (max_norm / (total + 1e-6)).clamp(max=1.0)  # as clip_grad_norm_ computes it
    for g in grads:
        g.mul_(factor.view(members, *([1] * (g.dim() - 1))))
    return total


class _LossOf(nn.Module):
    """``loss_fn(model, batch)`` as a module, so that ``functional_call`` can swap the weights."""

    def __init__(self, model: nn.Module, loss_fn: Callable[[nn.Module, AnyBatch], Tensor]):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, batch: AnyBatch) -> Tensor:
        return self.loss_fn(self.model, batch)


def _stack(batches: list[AnyBatch]) -> AnyBatch:
    """One batch per member -> one batch whose tensors have a leading member dimension."""
    leaves, spec = tree_flatten(batches[0])
    others = [tree_flatten(b) for b in batches[1:]]
    if any(other_spec != spec for _, other_spec in others):
        raise ValueError("make_batch must return batches of one structure for every seed")
    stacked = []
    for i, leaf in enumerate(leaves):
        column = [leaf, *(other[i] for other, _ in others)]
        if not isinstance(leaf, Tensor):
            raise TypeError(f"a batch may hold only tensors to train together; got {type(leaf)}")
        stacked.append(torch.stack(column))
    return tree_unflatten(stacked, spec)
