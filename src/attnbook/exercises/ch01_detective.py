"""Checker for chapter 1's exercise: a soft dictionary lookup.

The reader writes ``soft_lookup(query, keys, values, temperature)`` with shapes
``(d,), (n, d), (n, dv) -> (dv,)``: softmax over ``keys @ query / temperature``, then the
weighted average of ``values``. The reference is the library's attention with ``scale=1``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report

SoftLookup = Callable[[Tensor, Tensor, Tensor, float], Tensor]


def _reference(query: Tensor, keys: Tensor, values: Tensor, temperature: float) -> Tensor:
    output, _ = scaled_dot_product_attention(
        query[None], keys, values, scale=1.0, temperature=temperature
    )
    return output[0]


def _cases(seed: int = 0) -> tuple[Tensor, Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(4, generator=g),
        torch.randn(5, 4, generator=g),
        torch.randn(5, 3, generator=g),
    )


def check_soft_lookup(soft_lookup: SoftLookup) -> Report:
    """Run the reader's ``soft_lookup`` on known cases and say what is right and wrong."""
    report = Report("soft_lookup")
    query, keys, values = _cases()

    def shape() -> str | None:
        out = torch.as_tensor(soft_lookup(query, keys, values, 1.0))
        if out.shape != (3,):
            return f"for query (4,), keys (5, 4), values (5, 3) it should return shape (3,), got {tuple(out.shape)}"
        return None

    def matches(temperature: float) -> Callable[[], str | None]:
        def case() -> str | None:
            out = torch.as_tensor(
                soft_lookup(query, keys, values, temperature), dtype=torch.float32
            )
            expected = _reference(query, keys, values, temperature)
            if out.shape != expected.shape:
                return "wrong shape (see above)"
            if torch.allclose(out, expected, atol=1e-5):
                return None
            if torch.allclose(out, _reference(query, keys, values, 1.0 / temperature), atol=1e-5):
                return "you multiply the scores by the temperature; divide them by it instead"
            if torch.allclose(out, values.mean(0), atol=1e-5):
                return "you return the plain average of the values: the weights ignore the query"
            if torch.allclose(out, (keys @ query) @ values, atol=1e-4):
                return "you weight the values by the raw scores; apply softmax to them first"
            return f"expected {expected.tolist()}, got {out.tolist()}"

        return case

    def convex() -> str | None:
        ones = torch.ones(5, 1)
        out = torch.as_tensor(soft_lookup(query, keys, ones, 0.7), dtype=torch.float32)
        if not torch.allclose(out, torch.ones(1), atol=1e-5):
            return f"with every value equal to 1 the output must be 1 (weights sum to one); got {out.tolist()}"
        return None

    def hard_limit() -> str | None:
        exact = keys[2] * 10
        out = torch.as_tensor(soft_lookup(exact, keys, values, 0.01), dtype=torch.float32)
        if not torch.allclose(out, values[_reference_argmax(exact, keys)], atol=1e-4):
            return (
                "at a tiny temperature the lookup should return the value of the best-matching key"
            )
        return None

    def stable() -> str | None:
        out = torch.as_tensor(soft_lookup(query * 1000, keys, values, 1.0), dtype=torch.float32)
        if not torch.isfinite(out).all():
            return "large scores overflow exp(); subtract the largest score before exponentiating"
        return None

    report.run("returns one output vector of the values' size", shape)
    report.run("equals the reference at temperature 1", matches(1.0))
    report.run(
        "equals the reference at temperature 0.5 (temperature divides the scores)", matches(0.5)
    )
    report.run("the weights sum to one", convex)
    report.run("temperature → 0 gives the hard lookup", hard_limit)
    report.run("stays finite for very large scores", stable)
    return report


def _reference_argmax(query: Tensor, keys: Tensor) -> int:
    return int((keys @ query).argmax())
