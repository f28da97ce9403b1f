"""Two synthetic tasks that separate exact attention from its approximations (chapter 10).

* :func:`offset_copy_batch` — at every position, output the token ``offset`` positions back.
  With ``offset=1`` the answer is next door (a local task); with a large offset it is far away
  (a long-range task). Local attention with a window smaller than the offset cannot see it.
* :func:`retrieval_batch` — a set of (key, value) items, then a query key: output the value
  stored under it. Solving it needs one-hot attention: all weight on one matching item among
  many. Softmax attention can sharpen its weights as much as it likes; linear attention's
  weights ``phi(q) . phi(k)`` cannot, once there are more items than feature dimensions.

Shape legend: N batch, L sequence length, P items.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnbook.tasks.lookup import IGNORE_INDEX

__all__ = ["offset_copy_batch", "retrieval_batch", "IGNORE_INDEX"]


def offset_copy_batch(
    batch_size: int,
    generator: torch.Generator,
    *,
    length: int = 32,
    vocab_size: int = 16,
    offset: int = 1,
) -> tuple[Tensor, Tensor]:
    """Random tokens and, at each position ``i >= offset``, the target ``tokens[i - offset]``.

    Returns:
        ``(tokens, targets)``, both (N, L); targets are :data:`~attnbook.tasks.lookup.IGNORE_INDEX` for ``i < offset``.
    """
    if not 0 < offset < length:
        raise ValueError(f"offset must be in [1, length); got offset={offset}, length={length}")
    tokens = torch.randint(0, vocab_size, (batch_size, length), generator=generator)
    targets = torch.full_like(tokens, IGNORE_INDEX)
    targets[:, offset:] = tokens[:, :-offset]
    return tokens, targets


def retrieval_batch(
    batch_size: int,
    generator: torch.Generator,
    *,
    items: int = 32,
    num_keys: int = 64,
    num_values: int = 16,
) -> tuple[Tensor, Tensor, Tensor]:
    """``items`` distinct keys with random values, then one of the keys again as the query.

    Returns:
        ``(keys, values, target)``: keys (N, items + 1) in ``0 .. num_keys - 1``, the last one
        the query; values (N, items + 1) in ``0 .. num_values - 1``, the query's value being the
        blank ``num_values``; target (N,), the value stored under the query key.
    """
    if not 0 < items <= num_keys:
        raise ValueError(f"items must be in [1, num_keys]; got items={items}, num_keys={num_keys}")
    keys = torch.rand(batch_size, num_keys, generator=generator).argsort(dim=-1)[
        :, :items
    ]  # (N, P)
    values = torch.randint(0, num_values, (batch_size, items), generator=generator)  # (N, P)
    pick = torch.randint(0, items, (batch_size, 1), generator=generator)  # (N, 1)
    blank = torch.full((batch_size, 1), num_values)
    return (
        torch.cat([keys, keys.gather(1, pick)], dim=1),
        torch.cat([values, blank], dim=1),
        values.gather(1, pick)[:, 0],
    )
