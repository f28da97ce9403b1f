"""Synthetic tasks whose answers are known by construction, small enough to train in seconds.

A *lookup task* shows a model a random token sequence and asks it, at every position, for the
tokens found at other positions: ``"previous"`` (one back), ``"two_back"``, ``"first"`` (position
0). Each lookup is a different place to look, so a model that must answer several of them at once
has to look at several places at once — which is what chapter 3 uses to show why attention has
more than one head.

Every batch draws all its randomness from a ``torch.Generator``, so runs reproduce exactly.

Shape legend: N batch, L sequence length, K lookups, V vocabulary size.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "IGNORE_INDEX",
    "LOOKUPS",
    "lookup_batch",
    "lookup_targets",
    "lookup_loss",
    "lookup_accuracy",
]

#: The target of a position that is not scored (``F.cross_entropy``'s default ``ignore_index``).
IGNORE_INDEX = -100

#: name -> (kind, where) — "relative" looks `where` positions back, "absolute" at position `where`.
LOOKUPS: dict[str, tuple[str, int]] = {
    "previous": ("relative", 1),
    "two_back": ("relative", 2),
    "first": ("absolute", 0),
}


def _check_lookups(lookups: Sequence[str]) -> None:
    if isinstance(lookups, str) or not lookups:
        raise ValueError(f"lookups must be a non-empty sequence of names; got {lookups!r}")
    unknown = [name for name in lookups if name not in LOOKUPS]
    if unknown:
        raise ValueError(f"unknown lookups {unknown}; choose from {sorted(LOOKUPS)}")
    if len(set(lookups)) != len(lookups):
        raise ValueError(f"lookups must not repeat; got {list(lookups)}")


def lookup_targets(tokens: Tensor, lookups: Sequence[str]) -> Tensor:
    """The answers to each lookup at each position of ``tokens``.

    A position is *scored* only where every lookup is defined (``previous`` needs one token
    before it) and all lookups point at different positions (at position 1, ``previous`` and
    ``first`` are the same token, so nothing there tells whether a model can look at two places).
    Every other position gets ``IGNORE_INDEX`` for every lookup.

    Args:
        tokens: (N, L) integer tokens.
        lookups: names from :data:`LOOKUPS`, one per output.

    Returns:
        (N, K, L) integer targets.
    """
    _check_lookups(lookups)
    if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.dtype.is_floating_point:
        shape = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must be a 2-D integer tensor (N, L); got {shape}")
    N, L = tokens.shape
    positions = torch.arange(L, device=tokens.device)  # (L,)
    sources = []
    for name in lookups:
        kind, where = LOOKUPS[name]
        sources.append(
            positions - where if kind == "relative" else torch.full_like(positions, where)
        )
    source = torch.stack(sources)  # (K, L): the position each lookup reads, per position
    defined = (source >= 0).all(dim=0)  # (L,)
    distinct = torch.ones(L, dtype=torch.bool, device=tokens.device)
    for i in range(len(lookups)):
        for j in range(i + 1, len(lookups)):
            distinct &= source[i] != source[j]
    scored = defined & distinct  # (L,)
    index = source.clamp(min=0).unsqueeze(0).expand(N, -1, -1)  # (N, K, L)
    targets = tokens.unsqueeze(1).expand(-1, len(lookups), -1).gather(2, index)  # (N, K, L)
    return targets.masked_fill(~scored, IGNORE_INDEX)


def lookup_batch(
    batch_size: int,
    generator: torch.Generator,
    *,
    seq_len: int = 8,
    vocab_size: int = 8,
    lookups: Sequence[str] = ("previous", "first"),
) -> tuple[Tensor, Tensor]:
    """A batch of uniformly random token sequences and the answers to ``lookups``.

    Args:
        batch_size: N.
        generator: the only source of randomness.
        seq_len: L.
        vocab_size: V; tokens are 0 .. V-1.
        lookups: names from :data:`LOOKUPS`.

    Returns:
        ``(tokens, targets)``: tokens (N, L) and targets (N, K, L), see :func:`lookup_targets`.
    """
    if batch_size <= 0 or seq_len <= 0 or vocab_size <= 0:
        raise ValueError(
            "batch_size, seq_len and vocab_size must be positive; got "
            f"{batch_size}, {seq_len}, {vocab_size}"
        )
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)  # (N, L)
    return tokens, lookup_targets(tokens, lookups)


def _check_logits(logits: Tensor, targets: Tensor) -> None:
    if logits.dim() != 4 or logits.shape[:3] != targets.shape:
        raise ValueError(
            "logits must be (N, K, L, V) and targets (N, K, L); got "
            f"logits {tuple(logits.shape)} and targets {tuple(targets.shape)}"
        )


def lookup_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Cross-entropy averaged over every scored (position, lookup).

    Args:
        logits: (N, K, L, V), one distribution over tokens per lookup and position.
        targets: (N, K, L), with ``IGNORE_INDEX`` where not scored.
    """
    _check_logits(logits, targets)
    return F.cross_entropy(logits.flatten(0, 2), targets.flatten(), ignore_index=IGNORE_INDEX)


def lookup_accuracy(logits: Tensor, targets: Tensor, names: Sequence[str]) -> dict[str, float]:
    """Accuracy of each lookup, and ``"all"``: the fraction of positions where every one is right.

    Args:
        logits: (N, K, L, V).
        targets: (N, K, L), with ``IGNORE_INDEX`` where not scored.
        names: the K lookup names, used as keys of the result.
    """
    _check_logits(logits, targets)
    if len(names) != targets.size(1):
        raise ValueError(f"names has {len(names)} entries for K = {targets.size(1)} lookups")
    scored = targets[:, 0] != IGNORE_INDEX  # (N, L)
    if not scored.any():
        raise ValueError("no position is scored; use longer sequences")
    right = logits.argmax(dim=-1) == targets  # (N, K, L)
    result = {name: right[:, k][scored].float().mean().item() for k, name in enumerate(names)}
    result["all"] = right.all(dim=1)[scored].float().mean().item()
    return result
