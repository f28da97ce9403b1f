"""Chapter 9's checkers: merge two online-softmax blocks, and attention over key blocks.

* ``merge(state_a, state_b) -> state`` with ``state = (m, l, acc)`` of shapes (L, 1), (L, 1),
  (L, Ev): the running maximum, sum of exponentials and weighted sum of values of a block of keys
  (see :func:`attnbook.efficient.online_softmax_merge`).
* ``block_attention(query, key, value, block) -> output``: exact attention of (L, E) queries over
  (S, E) keys and (S, Ev) values, visiting the keys ``block`` at a time with the online softmax.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report

__all__ = ["check_online_softmax_merge", "check_block_attention"]

State = tuple[Tensor, Tensor, Tensor]
ATOL = RTOL = 1e-5


def _state(scores: Tensor, values: Tensor) -> State:
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m.masked_fill(torch.isneginf(m), 0.0))
    return m, p.sum(dim=-1, keepdim=True), p @ values


def _close(a: Tensor, b: Tensor, atol: float = ATOL) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=RTOL)


def check_online_softmax_merge(merge: Callable[[State, State], State]) -> Report:
    """Run the reader's ``merge`` on pairs of blocks and compare with a softmax over both."""
    report = Report("online softmax merge")
    g = torch.Generator().manual_seed(0)
    scores, values = 3 * torch.randn(4, 9, generator=g), torch.randn(9, 2, generator=g)
    a, b = _state(scores[:, :4], values[:4]), _state(scores[:, 4:], values[4:])
    expected = torch.softmax(scores, dim=-1) @ values

    def result(x: State, y: State) -> State:
        out = merge(x, y)
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise TypeError(f"return a triple (m, l, acc); got {type(out).__name__}")
        return tuple(torch.as_tensor(t) for t in out)

    def union() -> str | None:
        m, l, acc = result(a, b)
        if not _close(m, scores.amax(dim=-1, keepdim=True)):
            return "m must be the larger of the two maxima"
        if _close(acc / l, expected):
            return None
        if _close(l, a[1] + b[1]):
            return "you add l (and acc) without rescaling: multiply each block's l and acc by exp(m_block - m)"
        if _close(
            acc / l,
            (a[2] * torch.exp(m - a[0]) + b[2] * torch.exp(m - b[0]))
            / (a[1] * torch.exp(m - a[0]) + b[1] * torch.exp(m - b[0])),
        ):
            return "the output is right but m, l or acc have the wrong shape or type"
        return "acc / l of the merged state is not the softmax over both blocks times the values"

    def symmetric() -> str | None:
        m1, l1, acc1 = result(a, b)
        m2, l2, acc2 = result(b, a)
        return (
            None
            if _close(acc1 / l1, acc2 / l2)
            else "merging (a, b) and (b, a) must give the same output"
        )

    def huge() -> str | None:
        big = _state(scores[:, :4] + 1000, values[:4]), _state(scores[:, 4:] + 1000, values[4:])
        m, l, acc = result(*big)
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return "scores near 1000 overflow: never exponentiate m itself, only differences such as m_a - m"
        return (
            None
            if _close(acc / l, expected)
            else "with all scores shifted by 1000 the output must not change"
        )

    def empty() -> str | None:
        nothing = (torch.full((4, 1), float("-inf")), torch.zeros(4, 1), torch.zeros(4, 2))
        m, l, acc = result(a, nothing)
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return (
                "merging with an empty block (m = -inf, l = 0, acc = 0) gives NaN; "
                "exp(-inf - m) is 0, but check -inf - (-inf)"
            )
        if not _close(acc / l, a[2] / a[1]):
            return "merging with an empty block must leave the output unchanged"
        m, l, acc = result(nothing, nothing)
        if torch.isnan(l).any() or torch.isnan(acc).any():
            return "merging two empty blocks gives NaN: when both maxima are -inf, rescale against 0 instead"
        return None

    report.run("acc / l equals the softmax over both blocks", union)
    report.run("the order of the blocks does not matter", symmetric)
    report.run("stays finite and exact for very large scores", huge)
    report.run("empty blocks (all keys masked) are harmless", empty)
    return report


def check_block_attention(
    block_attention: Callable[[Tensor, Tensor, Tensor, int], Tensor],
) -> Report:
    """Compare the reader's ``block_attention(query, key, value, block)`` with exact attention."""
    report = Report("attention over key blocks")
    g = torch.Generator().manual_seed(1)
    q, k, v = (
        torch.randn(5, 4, generator=g),
        torch.randn(11, 4, generator=g),
        torch.randn(11, 3, generator=g),
    )
    expected = scaled_dot_product_attention(q, k, v)[0]

    def blocks(size: int) -> Callable[[], str | None]:
        def case() -> str | None:
            out = torch.as_tensor(block_attention(q, k, v, size))
            if out.shape != expected.shape:
                return f"expected shape {tuple(expected.shape)}, got {tuple(out.shape)}"
            if _close(out, expected):
                return None
            unscaled = scaled_dot_product_attention(q, k, v, scale=1.0)[0]
            if _close(out, unscaled):
                return "multiply the scores by 1 / sqrt(E) (E = 4 here)"
            return "the output differs from exact attention; is every block rescaled by exp(m_old - m_new)?"

        return case

    def huge() -> str | None:
        out = torch.as_tensor(block_attention(q * 500, k, v, 3))
        if not torch.isfinite(out).all():
            return "large scores overflow: subtract the running maximum before exponentiating"
        return (
            None
            if _close(out, scaled_dot_product_attention(q * 500, k, v)[0], atol=1e-4)
            else "wrong for large scores"
        )

    report.run("equals exact attention with blocks of 3 (the last block is shorter)", blocks(3))
    report.run("equals exact attention with blocks of 1", blocks(1))
    report.run("equals exact attention with one block larger than S", blocks(20))
    report.run("stays finite for very large scores", huge)
    return report
