"""Gradient checkpointing: keep a layer's inputs, recompute its insides during backward.

Autograd normally stores, for every operation of the forward pass, the tensors its backward
needs (for attention: the (L, S) weights of every head). :class:`Checkpointed` runs the wrapped
module under :func:`torch.utils.checkpoint.checkpoint`, which stores only the module's inputs
and runs the module's forward a second time when its gradients are needed: less memory, about
one extra forward of time. Without a backward pass (inference, ``torch.no_grad``) nothing is
stored in the first place, so checkpointing saves nothing; the wrapper then simply calls the
module.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

__all__ = ["Checkpointed"]


class Checkpointed(nn.Module):
    """Wrap ``module`` so that, in training with autograd on, its activations are recomputed.

    Uses ``torch.utils.checkpoint.checkpoint(module, *args, use_reentrant=False, **kwargs)``:
    the non-reentrant implementation that PyTorch recommends (it supports keyword arguments,
    inputs that do not require grad, and ``torch.autograd.grad``), with the random state saved
    so that dropout draws the same mask when the forward is replayed.

    Args:
        module: any module; its forward's arguments and outputs pass through unchanged.
        enabled: set to False to call ``module`` directly (to compare with and without).
    """

    def __init__(self, module: nn.Module, *, enabled: bool = True) -> None:
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module; got {type(module).__name__}")
        self.module = module
        self.enabled = enabled

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.enabled and self.training and torch.is_grad_enabled():
            return checkpoint(self.module, *args, use_reentrant=False, **kwargs)
        return self.module(*args, **kwargs)
