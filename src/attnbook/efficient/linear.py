r"""Linear attention (Katharopoulos et al. 2020): replace the softmax kernel by a feature map.

Softmax attention weighs key ``j`` for query ``i`` by :math:`\exp(q_i \cdot k_j)`. Linear
attention uses :math:`\phi(q_i) \cdot \phi(k_j)` with a positive feature map, here
:math:`\phi(x) = \operatorname{elu}(x) + 1`. Because a dot product of features factorises,

.. math::

    \text{out}_i = \frac{\sum_j \phi(q_i)^\top \phi(k_j)\, v_j^\top}{\sum_j \phi(q_i)^\top \phi(k_j)}
    = \frac{\phi(q_i)^\top \big(\sum_j \phi(k_j) v_j^\top\big)}{\phi(q_i)^\top \sum_j \phi(k_j)},

the sums over keys are computed once, in O(S E Ev), and reused by every query: time and memory
are linear in the length. With a causal mask the sums run over ``j <= i`` and become a
recurrence, :math:`S_i = S_{i-1} + \phi(k_i) v_i^\top`, :math:`z_i = z_{i-1} + \phi(k_i)`: an RNN
whose state is an (E, Ev) matrix.

Shape legend: L target (query) length, S source (key) length, E query/key feature size,
Ev value feature size, C chunk size; ``...`` is any number of batch dimensions.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import check_attention_inputs

__all__ = [
    "elu_feature_map",
    "linear_attention",
    "linear_attention_recurrent",
    "linear_attention_weights",
]

FeatureMap = Callable[[Tensor], Tensor]


def elu_feature_map(x: Tensor) -> Tensor:
    """:math:`\\phi(x) = \\operatorname{elu}(x) + 1`: positive (in float32 it rounds to 0 below -17)."""
    return F.elu(x) + 1.0


def _check(query: Tensor, key: Tensor, value: Tensor, is_causal: bool) -> None:
    check_attention_inputs(query, key, value)
    if is_causal and query.size(-2) != key.size(-2):
        raise ValueError(
            "causal linear attention needs L == S; got "
            f"query {tuple(query.shape)} and key {tuple(key.shape)}"
        )


def linear_attention_weights(
    query: Tensor,
    key: Tensor,
    *,
    is_causal: bool = False,
    feature_map: FeatureMap = elu_feature_map,
    eps: float = 1e-6,
) -> Tensor:
    """The (..., L, S) weights that linear attention applies implicitly (O(L S); for plots, tests).

    ``weights[i, j] = phi(q_i) . phi(k_j) / (sum_j' phi(q_i) . phi(k_j') + eps)`` over the
    allowed keys; ``linear_attention(...) == linear_attention_weights(...) @ value``.
    """
    _check(query, key, key, is_causal)
    kernel = feature_map(query) @ feature_map(key).transpose(-2, -1)  # (..., L, S)
    if is_causal:
        kernel = kernel.tril()
    return kernel / (kernel.sum(dim=-1, keepdim=True) + eps)


def linear_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    is_causal: bool = False,
    feature_map: FeatureMap = elu_feature_map,
    eps: float = 1e-6,
    chunk_size: int = 64,
) -> Tensor:
    """Linear attention in O(L) time and memory.

    Non-causal: ``phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1 + eps)``. Causal (L == S): the sums
    run over ``j <= i``; computed chunk by chunk, with the (E, Ev) state carried between chunks
    and the (C, C) triangle inside a chunk done directly. Equals
    :func:`linear_attention_recurrent` and ``linear_attention_weights(...) @ value``.

    Args:
        query: (..., L, E).
        key: (..., S, E).
        value: (..., S, Ev).
        is_causal: query ``i`` sees only keys ``j <= i`` (needs L == S).
        feature_map: positive feature map phi, applied to queries and keys.
        eps: added to the normaliser.
        chunk_size: C, positions per chunk in the causal form.

    Returns:
        output of shape (..., L, Ev).
    """
    _check(query, key, value, is_causal)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive integer; got {chunk_size!r}")
    phi_q, phi_k = feature_map(query), feature_map(key)  # (..., L, E), (..., S, E)
    if not is_causal:
        kv = phi_k.transpose(-2, -1) @ value  # (..., E, Ev): sum_j phi(k_j) v_j^T
        z = phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # (..., E, 1): sum_j phi(k_j)
        return (phi_q @ kv) / (phi_q @ z + eps)  # (..., L, Ev)

    batch = torch.broadcast_shapes(phi_q.shape[:-2], phi_k.shape[:-2], value.shape[:-2])
    state = phi_q.new_zeros((*batch, phi_q.size(-1), value.size(-1)))  # (..., E, Ev)
    z = phi_q.new_zeros((*batch, phi_q.size(-1), 1))  # (..., E, 1)
    outputs = []
    for c0 in range(0, query.size(-2), chunk_size):
        c1 = min(c0 + chunk_size, query.size(-2))
        q, k, v = phi_q[..., c0:c1, :], phi_k[..., c0:c1, :], value[..., c0:c1, :]
        inside = (q @ k.transpose(-2, -1)).tril()  # (..., C, C): keys of this chunk, j <= i
        numerator = q @ state + inside @ v  # (..., C, Ev)
        denominator = q @ z + inside.sum(dim=-1, keepdim=True)  # (..., C, 1)
        outputs.append(numerator / (denominator + eps))
        state = state + k.transpose(-2, -1) @ v  # (..., E, Ev)
        z = z + k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # (..., E, 1)
    return torch.cat(outputs, dim=-2)  # (..., L, Ev)


def linear_attention_recurrent(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    feature_map: FeatureMap = elu_feature_map,
    eps: float = 1e-6,
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """Causal linear attention as an RNN, one position at a time (the form used to generate).

    Args:
        query, key, value: (..., L, E), (..., L, E), (..., L, Ev).
        feature_map, eps: as in :func:`linear_attention`.

    Returns:
        ``(output, (state, z))``: output (..., L, Ev); the final state
        ``sum_j phi(k_j) v_j^T`` (..., E, Ev) and normaliser ``sum_j phi(k_j)`` (..., E).
    """
    _check(query, key, value, True)
    phi_q, phi_k = feature_map(query), feature_map(key)
    batch = torch.broadcast_shapes(phi_q.shape[:-2], phi_k.shape[:-2], value.shape[:-2])
    state = phi_q.new_zeros((*batch, phi_q.size(-1), value.size(-1)))  # (..., E, Ev)
    z = phi_q.new_zeros((*batch, phi_q.size(-1)))  # (..., E)
    outputs = []
    for i in range(query.size(-2)):
        q, k, v = (
            phi_q[..., i, :],
            phi_k[..., i, :],
            value[..., i, :],
        )  # (..., E), (..., E), (..., Ev)
        state = state + k[..., :, None] * v[..., None, :]  # (..., E, Ev)
        z = z + k
        numerator = (q[..., None, :] @ state).squeeze(-2)  # (..., Ev)
        denominator = (q * z).sum(dim=-1, keepdim=True)  # (..., 1)
        outputs.append(numerator / (denominator + eps))
    return torch.stack(outputs, dim=-2), (state, z)  # (..., L, Ev)
