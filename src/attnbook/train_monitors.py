"""Monitors that watch a model while it trains: attention-logit growth and gradient norms.

Both attach hooks to an existing model — nothing in the model or in
:func:`attnbook.train.fit` changes — and record one entry per forward pass (logits) or per
backward pass (gradients). Use them as context managers, or call ``.remove()`` when done.

* :class:`LogitMonitor` — a forward hook on every
  :class:`~attnbook.mha.AttentionLogits` module records the largest ``|score|`` of
  each head in each forward pass: the scores that grow without bound before a softmax
  saturates, or that overflow float16 (largest finite value 65504, :data:`FLOAT16_MAX`).
* :class:`GradientMonitor` — a hook on every parameter
  (:meth:`torch.Tensor.register_post_accumulate_grad_hook`) records the global gradient norm,
  the norm of each module's parameters, and whether any gradient is non-finite, at each
  backward pass. The norms are those *before* any clipping (``fit`` clips after the backward
  pass), so they are the norms that ``torch.nn.utils.clip_grad_norm_`` returns.

Shape legend: T recorded passes, layers the hooked attention modules in model order, H heads.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnbook.mha import AttentionLogits

__all__ = ["FLOAT16_MAX", "GradientMonitor", "LogitMonitor"]

#: The largest finite float16 value; a score above it becomes ``inf``.
FLOAT16_MAX = float(torch.finfo(torch.float16).max)


class _Hooks:
    """What both monitors share: their hook handles, ``remove()``, and use as a context manager."""

    _handles: list

    def remove(self) -> None:
        """Remove the hooks (the records stay)."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class LogitMonitor(_Hooks):
    """Record the largest ``|score|`` per layer and head of every forward pass.

    The scores are those *before* masking: entries for keys that the causal mask, a window or
    the padding mask hide are included, so an ``inf`` in a masked entry (which never reaches
    the softmax) is still reported by :meth:`peak` and :meth:`overflowed`.

    Args:
        model: a module containing :class:`~attnbook.mha.AttentionLogits` modules (every
            :class:`~attnbook.mha.MultiHeadAttention` has one, called on the path that forms the
            weights, as the lab model's always is), hooked in the order of
            ``model.named_modules()``.

    Attributes:
        names: the hooked modules' names, one per layer.

    Example::

        with LogitMonitor(model) as monitor:
            model(tokens)
        monitor.maxima  # (1, layers, H)
    """

    def __init__(self, model: nn.Module) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be an nn.Module; got {type(model).__name__}")
        found = [(n, m) for n, m in model.named_modules() if isinstance(m, AttentionLogits)]
        if not found:
            raise ValueError("model has no AttentionLogits module to watch (no MultiHeadAttention)")
        self.names = [name for name, _ in found]
        self._records: list[list[Tensor]] = [[] for _ in found]
        self._handles = [
            module.register_forward_hook(self._hook(i)) for i, (_, module) in enumerate(found)
        ]

    def _hook(self, layer: int):
        def hook(module: nn.Module, inputs, output: Tensor) -> None:
            # (N, H, L, S) -> (H,): the largest |score| of each head, in float32 (inf stays inf)
            scores = output.detach().abs().float()
            self._records[layer].append(scores.transpose(0, 1).flatten(1).amax(-1))

        return hook

    @property
    def maxima(self) -> Tensor:
        """The largest ``|score|`` of each head in each forward pass, a (T, layers, H) float32 tensor.

        ``inf`` where a score overflowed; ``nan`` where a score was NaN.
        """
        counts = {len(r) for r in self._records}
        if counts == {0}:
            return torch.empty(0, len(self._records), 0)
        if len(counts) != 1:
            raise RuntimeError(f"layers were called different numbers of times: {counts}")
        return torch.stack([torch.stack(r) for r in self._records], dim=1)  # (T, layers, H)

    def layer_max(self) -> Tensor:
        """(T, layers): the largest ``|score|`` of any head of each layer in each pass."""
        return self.maxima.amax(-1)

    def peak(self) -> float:
        """The largest ``|score|`` recorded anywhere (``nan`` if any was NaN; 0 if none)."""
        m = self.maxima
        return float(m.max()) if m.numel() else 0.0

    def overflowed(self, limit: float = FLOAT16_MAX) -> Tensor:
        """(T,) bool: passes in which some ``|score|`` exceeded ``limit`` or was not finite."""
        m = self.maxima.flatten(1)  # (T, layers * H)
        return ((m > limit) | ~torch.isfinite(m)).any(-1)

    def clear(self) -> None:
        """Forget what was recorded (the hooks stay)."""
        for record in self._records:
            record.clear()


class GradientMonitor(_Hooks):
    """Record gradient norms at each backward pass: global, per module, and non-finite flags.

    A new pass starts at each call of ``model``'s forward (a forward pre-hook) and, failing
    that, when some parameter's gradient arrives a second time (several backward passes after
    one call, or a submodule called on its own). Parameters that get no gradient in a pass
    (unused in its forward pass) count as 0 in that pass. Forward passes without a backward
    pass (evaluation) record nothing.

    Args:
        model: the module whose trainable parameters are watched. A parameter belongs to the
            module that owns it directly (``"blocks.0.attn.q_proj"`` for
            ``"blocks.0.attn.q_proj.weight"``).

    Attributes:
        modules: the module names, in the order of ``model.named_parameters()``.

    Example::

        with GradientMonitor(model) as monitor:
            history = fit(model, make_batch, loss_fn, config)
        monitor.global_norms  # (steps,)
    """

    def __init__(self, model: nn.Module) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be an nn.Module; got {type(model).__name__}")
        params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not params:
            raise ValueError("model has no trainable parameters to watch")
        self.modules: list[str] = []
        self._module_of: list[int] = []
        for name, _ in params:
            owner = name.rpartition(".")[0] or "(model)"
            if owner not in self.modules:
                self.modules.append(owner)
            self._module_of.append(self.modules.index(owner))
        self._pending: dict[int, Tensor] = {}  # parameter index -> squared norm, this pass
        self._squares: list[Tensor] = []  # one (modules,) tensor of squared norms per pass
        self._handles = [
            p.register_post_accumulate_grad_hook(self._hook(i)) for i, (_, p) in enumerate(params)
        ]
        self._handles.append(model.register_forward_pre_hook(lambda module, args: self._flush()))

    def _hook(self, index: int):
        def hook(param: Tensor) -> None:
            if index in self._pending:
                self._flush()
            self._pending[index] = param.grad.detach().double().pow(2).sum()

        return hook

    def _flush(self) -> None:
        if not self._pending:
            return
        squares = torch.zeros(len(self.modules), dtype=torch.float64)
        for index, square in self._pending.items():
            squares[self._module_of[index]] += square.cpu()
        self._squares.append(squares)
        self._pending = {}

    def _table(self) -> Tensor:
        self._flush()
        if not self._squares:
            return torch.empty(0, len(self.modules), dtype=torch.float64)
        return torch.stack(self._squares)  # (T, modules), squared norms

    @property
    def global_norms(self) -> Tensor:
        """The norm of all gradients together at each backward pass, a (T,) float64 tensor."""
        return self._table().sum(-1).sqrt()

    @property
    def module_norms(self) -> Tensor:
        """The gradient norm of each module's parameters (``modules``), a (T, modules) float64 tensor."""
        return self._table().sqrt()

    @property
    def nonfinite(self) -> Tensor:
        """Which passes had some gradient ``inf`` or ``nan``, a (T,) bool tensor."""
        return ~torch.isfinite(self._table()).all(-1)

    def first_nonfinite(self) -> int | None:
        """The 1-based number of the first pass with a non-finite gradient, or ``None``."""
        bad = self.nonfinite.nonzero()
        return int(bad[0, 0]) + 1 if len(bad) else None

    def norms_of(self, contains: str) -> Tensor:
        """(T,): the gradient norm of the modules whose name contains ``contains``, together."""
        chosen = [i for i, name in enumerate(self.modules) if contains in name]
        if not chosen:
            raise ValueError(f"no module name contains {contains!r}; have {self.modules}")
        return self._table()[:, chosen].sum(-1).sqrt()

    def clear(self) -> None:
        """Forget what was recorded (the hooks stay)."""
        self._pending, self._squares = {}, []
