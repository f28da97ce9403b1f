"""What a checker can observe of how an answer computes, beyond the numbers it returns.

* :class:`LargestTensor` records the size of the largest tensor any torch function returns: a
  score matrix of every query against every key shows, whether it was built by a matrix product,
  by broadcasting or by ``einsum``. (A function mode, not a dispatch mode: entering it costs
  nothing, where the first dispatch mode of a process imports ``torch._dynamo``, about 1.5 s.)
* :data:`AUTOGRAD` lists the entry points of autograd (``backward``, ``torch.autograd.grad`` and
  everything built on them, such as ``torch.func.vjp``) for an exercise that asks for a gradient
  written out by hand; see :class:`~attnbook.exercises.report.Refused`.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from attnbook.exercises.report import Refused

__all__ = ["LargestTensor", "AUTOGRAD"]


class LargestTensor(TorchFunctionMode):
    """Records in ``largest`` the number of elements of the largest tensor any torch function
    returns while the mode is active."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, Tensor):
                self.largest = max(self.largest, t.numel())
        return out


#: Tensor.backward calls torch.autograd.backward; torch.func and torch.autograd.functional call
#: torch.autograd.grad: these two see every use of autograd.
AUTOGRAD = (
    Refused(torch.autograd, "backward", "backward()"),
    Refused(torch.autograd, "grad", "torch.autograd.grad"),
)
