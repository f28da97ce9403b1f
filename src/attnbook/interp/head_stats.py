"""Per-head statistics of attention weights: entropy, the largest weight, the share on a sink.

Every function takes the weights as models return them — one (N, H, L, S) tensor per layer, or
one stacked (layers, N, H, L, S) tensor — and returns one number per head, (layers, H), averaged
over the query rows that count: rows of padding queries (``key_padding_mask``, ``True`` =
padding, the convention of :class:`torch.nn.MultiheadAttention`; a
:class:`~attnbook.tasks.coref.Batch` stands for its own ``key_padding_mask``) and rows outside
``queries`` are left out, and so are rows with no allowed key (all weights 0). Each real query
counts once, whatever its sentence's length. What the statistics mean for a task (where the
detective's pronoun looks, the roles of chapter 7) is in :mod:`attnbook.interp.coref_heads`.

* :func:`head_entropy` — the entropy of each row, in nats (a weight of 0 adds 0, the limit of
  p log p, not NaN); ``normalise=True`` divides it by the entropy of the uniform distribution
  over the row's allowed keys, so 1 means *uniform* (diffuse attention) and 0 means *one key*
  (over-sharp attention);
* :func:`max_weight` — the largest weight of each row (1 = all weight on one key);
* :func:`sink_share` — the weight on chosen keys (a ``[CLS]``, the first token…) that many
  heads use as a place to put weight when they have nothing to do (Xiao et al. 2024);
* :func:`head_report` — all of them as a :class:`HeadReport`.

Shape legend: N batch, H heads, L queries, S keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attnbook.tasks.coref import Batch

__all__ = ["HeadReport", "head_entropy", "max_weight", "sink_share", "head_report", "stack_layers"]


def stack_layers(weights: Sequence[Tensor] | Tensor) -> Tensor:
    """One (N, H, L, S) tensor per layer, or a (layers, N, H, L, S) tensor -> the latter."""
    if isinstance(weights, Tensor):
        stacked = weights
    else:
        if not weights or not all(isinstance(w, Tensor) for w in weights):
            raise TypeError("weights must be a tensor or a non-empty sequence of tensors")
        shapes = {tuple(w.shape) for w in weights}
        if len(shapes) != 1:
            raise ValueError(f"every layer's weights must have one shape; got {sorted(shapes)}")
        stacked = torch.stack(list(weights))
    if stacked.dim() != 5:
        raise ValueError(
            f"weights must be (N, H, L, S) per layer or (layers, N, H, L, S); got {tuple(stacked.shape)}"
        )
    # float32 for half precision (its sums lose too much); float64 stays float64
    return stacked if stacked.dtype in (torch.float32, torch.float64) else stacked.float()


def _padding(key_padding_mask: Tensor | Batch | None) -> Tensor | None:
    return getattr(key_padding_mask, "key_padding_mask", key_padding_mask)


def _rows(
    w: Tensor, key_padding_mask: Tensor | Batch | None, queries: Tensor | None
) -> Tensor:  # (N, L) bool: rows that count
    _, N, _, L, S = w.shape
    key_padding_mask = _padding(key_padding_mask)
    rows = w.sum(-1).gt(0).any(0).any(1)  # (N, L): some weight in some layer and head
    if key_padding_mask is not None:
        if key_padding_mask.shape != (N, S) or L != S:
            raise ValueError(
                f"key_padding_mask must be (N, S) = ({N}, {S}) for self-attention weights; "
                f"got {tuple(key_padding_mask.shape)} with weights {tuple(w.shape)}"
            )
        rows = rows & ~key_padding_mask.bool()
    if queries is not None:
        if queries.shape != (N, L):
            raise ValueError(f"queries must be (N, L) = ({N}, {L}); got {tuple(queries.shape)}")
        rows = rows & queries.bool()
    if not rows.any():
        raise ValueError("no query row to average over (all padding, masked or empty)")
    return rows


def _average(per_row: Tensor, rows: Tensor) -> Tensor:
    """(layers, N, H, L) values, (N, L) rows -> (layers, H) mean over the rows that count."""
    keep = rows[None, :, None, :].to(per_row.dtype)  # (1, N, 1, L)
    return (per_row * keep).sum((1, 3)) / keep.sum((1, 3))


def head_entropy(
    weights: Sequence[Tensor] | Tensor,
    key_padding_mask: Tensor | Batch | None = None,
    queries: Tensor | None = None,
    *,
    normalise: bool = False,
    allowed: Tensor | None = None,
) -> Tensor:
    """Mean row entropy per head, (layers, H), in nats (or as a fraction of uniform's).

    Args:
        weights: one (N, H, L, S) tensor per layer, or (layers, N, H, L, S).
        key_padding_mask: (N, S) bool, ``True`` = padding: not a query to average over, nor a key
            the row could attend to; or a :class:`~attnbook.tasks.coref.Batch` (its own).
        queries: (N, L) bool, the query rows to average over (default all real rows).
        normalise: divide each row's entropy by ``log`` of the number of keys it was allowed to
            attend to, so that 1 is uniform over them. The allowed keys are the keys that are not
            padding and, if given, allowed by ``allowed``; a key that the softmax pushed to
            exactly 0 still counts (a very sharp head is not "uniform over its survivors").
        allowed: bool mask broadcastable to (N, H, L, S), ``True`` where a query may attend
            (e.g. a causal or window mask); default every key.
    """
    w = stack_layers(weights)
    rows = _rows(w, key_padding_mask, queries)
    plogp = torch.where(w > 0, w * w.clamp_min(1e-30).log(), 0.0)
    entropy = -plogp.sum(-1)  # (layers, N, H, L)
    key_padding_mask = _padding(key_padding_mask)
    if normalise:
        _, N, H, L, S = w.shape
        keys = torch.ones(N, H, L, S, dtype=torch.bool, device=w.device)
        if key_padding_mask is not None:
            keys = keys & ~key_padding_mask.bool()[:, None, None, :]
        if allowed is not None:
            try:
                keys = keys & allowed.bool()
            except RuntimeError as error:
                raise ValueError(
                    f"allowed must broadcast to (N, H, L, S) = {(N, H, L, S)}; "
                    f"got {tuple(allowed.shape)}"
                ) from error
        count = keys.sum(-1).clamp_min(2).float()  # (N, H, L) allowed keys per row
        entropy = entropy / count.log()
    return _average(entropy, rows)


def max_weight(
    weights: Sequence[Tensor] | Tensor,
    key_padding_mask: Tensor | Batch | None = None,
    queries: Tensor | None = None,
) -> Tensor:
    """Mean of each row's largest weight, per head: (layers, H), in [0, 1]."""
    w = stack_layers(weights)
    return _average(w.amax(-1), _rows(w, key_padding_mask, queries))


def sink_share(
    weights: Sequence[Tensor] | Tensor,
    sink: int | Tensor = 0,
    key_padding_mask: Tensor | Batch | None = None,
    queries: Tensor | None = None,
) -> Tensor:
    """Mean weight each head puts on the sink keys, (layers, H).

    Args:
        sink: a key position (int; default the first), or an (N, S) bool tensor of sink keys.
    """
    w = stack_layers(weights)
    _, N, _, _, S = w.shape
    if isinstance(sink, int):
        if not -S <= sink < S:
            raise ValueError(f"sink position {sink} is outside the {S} keys")
        keys = torch.zeros(N, S, dtype=torch.bool, device=w.device)
        keys[:, sink] = True
    else:
        if sink.shape != (N, S) or sink.dtype != torch.bool:
            raise ValueError(
                f"sink must be an int or a bool (N, S) = ({N}, {S}); got {tuple(sink.shape)}"
            )
        keys = sink
    share = (w * keys[None, :, None, None, :]).sum(-1)  # (layers, N, H, L)
    return _average(share, _rows(w, key_padding_mask, queries))


@dataclass
class HeadReport:
    """Per-head statistics, each (layers, H)."""

    entropy: Tensor  # mean row entropy, nats
    uniformity: Tensor  # entropy / entropy of uniform over allowed keys (1 = uniform)
    max_weight: Tensor  # mean largest weight of a row (1 = one key)
    sink: Tensor  # mean weight on the sink keys

    def table(self, digits: int = 2) -> str:
        """A text table, one line per head, rounded to ``digits``."""
        lines = ["layer head  entropy  uniformity  max weight  sink"]
        layers, H = self.entropy.shape
        for i in range(layers):
            for h in range(H):
                cells = (self.entropy, self.uniformity, self.max_weight, self.sink)
                values = "  ".join(f"{float(t[i, h]):>{9}.{digits}f}" for t in cells)
                lines.append(f"{i:>5} {h:>4} {values}")
        return "\n".join(lines)


def head_report(
    weights: Sequence[Tensor] | Tensor,
    key_padding_mask: Tensor | Batch | None = None,
    queries: Tensor | None = None,
    sink: int | Tensor = 0,
    allowed: Tensor | None = None,
) -> HeadReport:
    """All of :func:`head_entropy`, its normalised form, :func:`max_weight` and :func:`sink_share`.

    ``allowed`` (a causal or window mask, ``True`` = may attend) is passed to the normalised
    entropy; see :func:`head_entropy`.
    """
    args = (key_padding_mask, queries)
    return HeadReport(
        entropy=head_entropy(weights, *args),
        uniformity=head_entropy(weights, *args, normalise=True, allowed=allowed),
        max_weight=max_weight(weights, *args),
        sink=sink_share(weights, sink, *args),
    )
