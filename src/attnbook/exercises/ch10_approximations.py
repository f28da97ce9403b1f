"""Chapter 10's checker: linear attention in O(n).

``linear_attn(query, key, value) -> output``: non-causal linear attention with
``phi(x) = elu(x) + 1`` (see :func:`attnbook.efficient.linear_attention`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor
from torch.utils.flop_counter import FlopCounterMode

from attnbook.attention import scaled_dot_product_attention
from attnbook.efficient.linear import elu_feature_map, linear_attention
from attnbook.exercises.report import Report

__all__ = ["check_linear_attention"]


def _close(a: Tensor, b: Tensor, atol: float = 1e-5) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=1e-5)


def check_linear_attention(linear_attn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Compare the reader's non-causal ``linear_attn(query, key, value)`` with the library."""
    report = Report("linear attention")
    g = torch.Generator().manual_seed(2)
    q, k, v = (
        torch.randn(6, 4, generator=g),
        torch.randn(9, 4, generator=g),
        torch.randn(9, 3, generator=g),
    )
    expected = linear_attention(q, k, v)

    def matches() -> str | None:
        out = torch.as_tensor(linear_attn(q, k, v))
        if out.shape != expected.shape:
            return f"expected shape {tuple(expected.shape)}, got {tuple(out.shape)}"
        if _close(out, expected, atol=1e-4):
            return None
        phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
        if _close(out, phi_q @ (phi_k.T @ v), atol=1e-4):
            return "divide by the normaliser phi(q) . sum_j phi(k_j)"
        if _close(out, (q @ (k.T @ v)) / (q @ k.sum(0, keepdim=True).T), atol=1e-4):
            return "apply the feature map phi(x) = elu(x) + 1 to queries and keys first"
        if _close(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-4):
            return (
                "that is softmax attention; linear attention replaces exp(q . k) by phi(q) . phi(k)"
            )
        return "the output differs from phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1)"

    def linear_cost() -> str | None:
        # Count the multiply-adds of the matrix products: the quadratic form multiplies an
        # (L, E) by an (E, S) matrix, L * S * E of them; the linear form needs about (L + S) E Ev.
        n = 2048
        qq, kk, vv = (torch.randn(n, 4, generator=g) for _ in range(3))
        with FlopCounterMode(display=False) as counter:
            out = torch.as_tensor(linear_attn(qq, kk, vv))
        if not _close(out, linear_attention(qq, kk, vv), atol=1e-4):
            return "wrong on a long sequence"
        if counter.get_total_flops() >= n * n:
            return (
                f"{counter.get_total_flops():,} FLOPs for L = S = {n}: that is the quadratic form; "
                "compute phi(K)^T V first, then multiply phi(Q) by it"
            )
        return None

    report.run("equals the library's linear attention", matches)
    report.run("costs O(n): no (L, S) matrix product for L = S = 2048", linear_cost)
    return report
