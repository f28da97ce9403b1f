"""The mistakes :func:`~attnbook.exercises.ch02_attention.check_attention` can name.

:func:`attention_mistake` compares a learner's ``(output, weights)`` with scaled dot-product
attention and, when they differ, tries the usual mistakes one by one (softmax over the queries,
no scale or the wrong one, the scale applied after the softmax, an inverted or ignored mask,
weights zeroed after the softmax) and names the first that gives the learner's output.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.i18n import N_, tr

__all__ = [
    "ATOL",
    "RTOL",
    "RANDOM",
    "SCALED_AFTER",
    "attention_mistake",
    "block_mistake",
    "close",
    "reference",
]

ATOL, RTOL = 1e-5, 1e-4


def close(a: Tensor, b: Tensor) -> bool:
    """Same shape and equal within the checker's tolerances (NaN never equals)."""
    if a.shape != b.shape:
        return False
    return torch.allclose(a.double(), b.double(), atol=ATOL, rtol=RTOL, equal_nan=False)


def reference(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    return scaled_dot_product_attention(query, key, value, mask, scale=scale)


RANDOM = N_(
    "your function gives different results for the same inputs: dropout (or something else "
    "random) is on; this attention has no dropout, so leave it out (dropout_p=0.0)"
)
SCALED_AFTER = N_(
    "you divided by √d_k after the softmax, so each row of weights sums to 1/√d_k; divide the "
    "scores Q·Kᵀ by √d_k before the softmax"
)


def attention_mistake(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    output: Tensor,
    weights: Tensor,
) -> str | None:
    """None if right; else the likeliest mistake, found by trying each one in turn."""
    expected, expected_weights = reference(query, key, value, mask)
    if output.shape != expected.shape:
        return tr("the output should have shape {expected_shape}; got {output_shape}").format(
            expected_shape=tuple(expected.shape), output_shape=tuple(output.shape)
        )
    if close(output, expected):
        if close(weights, expected_weights):
            return None
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        if weights.shape == scores.shape and torch.allclose(weights, scores, atol=ATOL):
            return tr(
                "the second value returned must be the weights softmax(scores), not the scores"
            )
        return tr("the output is right but the weights returned are not the ones applied to value")
    if weights.shape == expected_weights.shape and close(weights, expected_weights):
        return tr(
            "the weights are right but the output is not weights @ value: compute the output "
            "from the weights you return (after the mask)"
        )
    d = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    over_queries = torch.nan_to_num(torch.softmax(scores, dim=-2)) @ value
    columns = weights.sum(-2) if weights.shape == scores.shape else None
    if close(torch.nan_to_num(output), over_queries) or (
        columns is not None
        and torch.isnan(output).any()
        and (torch.isnan(columns) | (columns - 1).abs().le(ATOL)).all()
    ):
        return tr("softmax must run over the keys (dim=-1), not over the queries (dim=-2)")
    unscaled, _ = reference(query, key, value, mask, scale=1.0)
    if close(output, unscaled / math.sqrt(d)):
        return tr(SCALED_AFTER)
    for scale, mistake in [
        (
            1.0,
            N_("you forgot to divide the scores Q·Kᵀ by √d_k (the result equals the unscaled one)"),
        ),
        (1.0 / d, N_("divide the scores by √d_k, not by d_k")),
        (
            1.0 / math.sqrt(value.size(-1)),
            N_("d_k is the size of the queries and keys, not of the values"),
        ),
    ]:
        if close(output, reference(query, key, value, mask, scale=scale)[0]):
            return tr(mistake)
    if mask is not None:
        if close(output, reference(query, key, value, ~mask)[0]):
            return tr(
                "the mask convention is inverted: True must mean the key MAY be attended (as in "
                "F.scaled_dot_product_attention), not that it is masked out"
            )
        if close(output, reference(query, key, value)[0]):
            return tr("the mask is ignored: keys where the mask is False must get weight 0")
        unmasked = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(d), dim=-1)
        if close(output, (unmasked * mask) @ value):  # zeroed after softmax, not renormalised
            return tr(
                "mask the scores before the softmax, not the weights after: zeroing weights after "
                "the softmax leaves rows that no longer sum to 1"
            )
        if (
            weights.shape == mask.broadcast_to(weights.shape).shape
            and (weights[~mask.broadcast_to(weights.shape)].abs() > ATOL).any()
        ):
            return tr("keys where the mask is False still get some weight; they must get exactly 0")
    if not torch.isfinite(output).all():
        return tr("the output contains NaN or inf where softmax(Q·Kᵀ/√d_k)·V is finite")
    worst = (output - expected).abs().max().item()
    return tr("the output differs from softmax(Q·Kᵀ/√d_k)·V by up to {worst:.3g}").format(
        worst=worst
    )


def _near(a: Tensor, b: Tensor, atol: float) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=RTOL)


def block_mistake(q: Tensor, k: Tensor, v: Tensor, block: int, out: Tensor) -> str:
    """The likeliest mistake behind a wrong ``block_attention`` output (chapter 9)."""
    E, S = q.size(-1), k.size(0)
    for scale, mistake in [
        (1.0, tr("multiply the scores by 1 / sqrt(E) (E = {E} here)").format(E=E)),
        (1.0 / E, tr("scale the scores by 1 / sqrt(E), not 1 / E")),
        (1.0 / v.size(-1) ** 0.5, tr("E is the size of the queries and keys, not of the values")),
    ]:
        if _near(out, scaled_dot_product_attention(q, k, v, scale=scale)[0], atol=1e-4):
            return mistake
    full = S - S % block
    if 0 < full < S and _near(
        out, scaled_dot_product_attention(q, k[:full], v[:full])[0], atol=1e-4
    ):
        return tr("the last, shorter block is missing: range(0, S, block) visits it too")
    if torch.isnan(out).all():
        return tr(
            "the output is NaN everywhere (0 / 0): did the loop over the blocks run at all? "
            "range(0, S, block) visits every block, also when block > S"
        )
    tail = S % block or block
    if _near(out, scaled_dot_product_attention(q, k[-tail:], v[-tail:])[0], atol=1e-4):
        return tr(
            "only the last block counts: the running (m, l, acc) starts afresh at every block. "
            "Is m updated to m_new after each block? If it stays -inf, exp(m_old - m_new) is 0"
        )
    return tr(
        "the output differs from exact attention; is every block rescaled by exp(m_old - m_new)?"
    )
