"""Whether Python may look at a tensor's values: not inside ``torch.func.vmap``.

:func:`attnbook.train.fit_together` trains several seeds as one run by mapping the loss over
a stack of weights with ``torch.func.vmap``. Inside it a tensor is *batched*: it stands for one
slice per member, so ``bool(t.any())`` has no single answer and vmap refuses it. Code that
checks its input's values (token ids in range) or takes a shortcut when it can (no row of a
mask is empty) asks :func:`has_values` first, and under vmap skips the check or takes the
general path, which is right for every value. The checks still run on every unbatched call, and
``fit_together`` runs the loss once unbatched on the first batch of its first member, so bad
input is still reported with its clear error before training starts.
"""

from __future__ import annotations

from torch import Tensor
from torch._C._functorch import is_batchedtensor

__all__ = ["has_values"]


def has_values(tensor: object) -> bool:
    """False for a tensor batched by ``torch.func.vmap`` (no single value to branch on).

    True for anything else, so that a caller's own checks still see (and reject) a non-tensor.
    """
    return not (isinstance(tensor, Tensor) and is_batchedtensor(tensor))
