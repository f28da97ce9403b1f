"""Helpers for the tests of MultiHeadAttention's options: random modules, and a comparison of
outputs and gradients with a reference that reuses only the module's parameters.

The reference side never calls attnbook: it projects with ``F.linear``, splits heads with
``unflatten``/``transpose`` and attends with PyTorch's or Hugging Face's code.

Shape legend: N batch, L query length, S key length, E embedding, H query heads, K key/value
heads, D head size.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook import MultiHeadAttention

TOL = {"rtol": 1e-5, "atol": 1e-5}
GRAD_TOL = {"rtol": 1e-4, "atol": 1e-4}


def make(seed: int, embed_dim: int, num_heads: int, **options) -> MultiHeadAttention:
    """A MultiHeadAttention with random biases and norm weights (so that they matter)."""
    torch.manual_seed(seed)
    mha = MultiHeadAttention(embed_dim, num_heads, **options)
    with torch.no_grad():
        for name, p in mha.named_parameters():
            if p.dim() == 1:
                p.normal_(mean=1.0 if name.endswith("norm.weight") else 0.0, std=0.5)
    return mha


def inputs(seed: int, N: int, L: int, S: int, E: int, dtype=torch.float32) -> list[Tensor]:
    """query (N, L, E), key and value (N, S, E), all requiring gradients."""
    g = torch.Generator().manual_seed(seed)
    shapes = ((N, L, E), (N, S, E), (N, S, E))
    return [torch.randn(*s, generator=g, dtype=dtype).requires_grad_() for s in shapes]


def heads(mha: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor) -> list[Tensor]:
    """The projected q (N, H, L, D), k and v (N, K, S, D), without attnbook's split_heads."""
    D = mha.head_dim
    projections = (mha.q_proj, mha.k_proj, mha.v_proj)
    return [
        F.linear(x, p.weight, p.bias).unflatten(-1, (-1, D)).transpose(1, 2)  # (N, H|K, L|S, D)
        for p, x in zip(projections, (query, key, value))
    ]


def merge(mha: MultiHeadAttention, out: Tensor) -> Tensor:
    """(N, H, L, D) head outputs -> (N, L, E) through ``out_proj``."""
    merged = out.transpose(1, 2).flatten(2)  # (N, L, E)
    return F.linear(merged, mha.out_proj.weight, mha.out_proj.bias)


def assert_same_forward_and_backward(
    ours: Callable[[], Tensor],
    reference: Callable[[], Tensor],
    tensors: dict[str, Tensor],
    tol: dict = TOL,
    grad_tol: dict = GRAD_TOL,
) -> None:
    """Equal outputs, and equal gradients of a random projection of them w.r.t. ``tensors``."""
    out, ref = ours(), reference()
    torch.testing.assert_close(out, ref, **tol)
    seed = torch.Generator().manual_seed(0)
    direction = torch.randn(out.shape, generator=seed, dtype=out.dtype)
    names, leaves = list(tensors), list(tensors.values())
    got = torch.autograd.grad(out, leaves, direction)
    want = torch.autograd.grad(ref, leaves, direction)
    for name, a, b in zip(names, got, want):
        torch.testing.assert_close(a, b, **grad_tol, msg=lambda m, name=name: f"d/d {name}: {m}")


def leaves(mha: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor) -> dict:
    """The inputs and every parameter, by name: what the gradients are compared for."""
    return {"query": query, "key": key, "value": value, **dict(mha.named_parameters())}
