"""Chapter 4's coding exercises: split a tensor into heads, and merge the heads back.

* ``split_heads(x, num_heads)``: (N, L, E) -> (N, H, L, D), where head ``h`` holds the features
  ``h*D : (h+1)*D`` of every position, D = E // H.
* ``merge_heads(x)``: (N, H, L, D) -> (N, L, H*D), the inverse.

:func:`check_split_heads` and :func:`check_merge_heads` compare the reader's functions with the
reference on tensors whose sizes all differ (so that a wrong order shows), and name the usual
mistakes: reshaping straight to (N, H, L, D), which cuts the sequence instead of the features;
interleaving features across heads; merging without moving the heads back next to the features;
and merging with ``view`` after a ``transpose`` (``view`` can always split one dimension in two,
but it can merge two only if they sit together in memory, which a transpose undoes).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook import mha
from attnbook.exercises.report import Report

__all__ = ["check_split_heads", "check_merge_heads"]

N, L, H, D = 2, 3, 4, 5  # all different, so that a mixed-up order gives a different tensor
E = H * D


def _numbered(*shape: int) -> Tensor:
    """A tensor whose entries are 0, 1, 2, ...: every mix-up gives different numbers."""
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape)


def _as_tensor(result: object) -> Tensor | str:
    if not isinstance(result, Tensor):
        return f"return a tensor; got {type(result).__name__}"
    return result


def _is_view_error(exc: Exception) -> bool:
    return isinstance(exc, RuntimeError) and "view" in str(exc)


def check_split_heads(split_heads: Callable[[Tensor, int], Tensor]) -> Report:
    """Run the reader's ``split_heads(x, num_heads)`` and say what is right and wrong."""
    report = Report("split_heads")
    x = _numbered(N, L, E)

    def shape() -> str | None:
        out = _as_tensor(split_heads(x, H))
        if isinstance(out, str):
            return out
        if out.shape != (N, H, L, D):
            return (
                f"for x of shape (N, L, E) = {tuple(x.shape)} and {H} heads it should return "
                f"(N, H, L, D) = {(N, H, L, D)}; got {tuple(out.shape)}"
            )
        return None

    def values() -> str | None:
        out = _as_tensor(split_heads(x, H))
        if isinstance(out, str) or out.shape != (N, H, L, D):
            return "wrong shape (see above)"
        if torch.equal(out, mha.split_heads(x, H)):
            return None
        if torch.equal(out, x.reshape(N, H, L, D)):
            return (
                "reshaping straight to (N, H, L, D) cuts the sequence, not the features; "
                "view as (N, L, H, D), then transpose(1, 2)"
            )
        if torch.equal(out, x.reshape(N, L, D, H).permute(0, 3, 1, 2)):
            return (
                "your heads take every H-th feature; head h must get the block of features "
                "h*D to (h+1)*D: view as (N, L, H, D), not (N, L, D, H)"
            )
        return "head h at position i must hold x[:, i, h*D:(h+1)*D]"

    def head_is_a_block() -> str | None:
        out = _as_tensor(split_heads(x, H))
        if isinstance(out, str) or out.shape != (N, H, L, D):
            return "wrong shape (see above)"
        if not torch.equal(out[:, 1], x[:, :, D : 2 * D]):
            return f"head 1 should be x[:, :, {D}:{2 * D}], the second block of {D} features"
        return None

    report.run("returns (N, H, L, D)", shape)
    report.run("puts the right features in each head", values)
    report.run("head 1 is the second block of D features", head_is_a_block)
    return report


def check_merge_heads(merge_heads: Callable[[Tensor], Tensor]) -> Report:
    """Run the reader's ``merge_heads(x)`` and say what is right and wrong."""
    report = Report("merge_heads")

    def call(x: Tensor) -> Tensor | str:
        try:
            out = merge_heads(x)
        except Exception as exc:
            if _is_view_error(exc):
                return (
                    "view cannot merge the heads after transpose(1, 2): the tensor is no "
                    "longer contiguous in memory; use reshape, or .contiguous().view(...)"
                )
            raise
        return _as_tensor(out)

    def shape() -> str | None:
        out = call(_numbered(N, H, L, D))
        if isinstance(out, str):
            return out
        if out.shape != (N, L, E):
            return (
                f"for x of shape (N, H, L, D) = {(N, H, L, D)} it should return "
                f"(N, L, H*D) = {(N, L, E)}; got {tuple(out.shape)}"
            )
        return None

    def values() -> str | None:
        x = _numbered(N, H, L, D)
        out = call(x)
        if isinstance(out, str):
            return out
        if out.shape != (N, L, E):
            return "wrong shape (see above)"
        if torch.equal(out, mha.merge_heads(x)):
            return None
        if torch.equal(out, x.reshape(N, L, E)):
            return (
                "reshaping (N, H, L, D) straight to (N, L, E) mixes positions; first "
                "transpose(1, 2) to (N, L, H, D)"
            )
        return "position i must hold head 0's features, then head 1's, ... for that position"

    def round_trip() -> str | None:
        x = _numbered(N, L, E)
        out = call(mha.split_heads(x, H))
        if isinstance(out, str):
            return out
        if out.shape != x.shape or not torch.equal(out, x):
            return "merge_heads(split_heads(x)) should give back x"
        return None

    report.run("returns (N, L, H*D)", shape)
    report.run("puts each head's features back in place", values)
    report.run("undoes split_heads exactly", round_trip)
    return report
