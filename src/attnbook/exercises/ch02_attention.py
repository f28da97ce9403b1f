"""Chapter 2's coding exercise: write scaled dot-product attention with a boolean mask.

The reader writes ``my_attention(query, key, value, mask=None) -> (output, weights)`` with the
conventions of :func:`~attnbook.attention.scaled_dot_product_attention`:

* query (..., L, E), key (..., S, E), value (..., S, Ev); output (..., L, Ev), weights (..., L, S);
* ``mask`` is bool, broadcastable to (..., L, S), ``True`` where a query **may attend**;
* a query with no allowed key gets output 0 and weights 0, never NaN.

:func:`check_attention` runs it on small cases and compares with the library; when an answer is
wrong it tries the usual mistakes (no scaling, the wrong scale, softmax over the wrong dimension,
an inverted mask, weights masked after the softmax, NaN or a uniform average for a fully masked
row) and names the one it finds; a later case with the same mistake says "see above".

:func:`check_padding_to_sdpa` checks the translation of an ``nn.MultiheadAttention`` padding mask
into the ``attn_mask`` of ``F.scaled_dot_product_attention``; chapter 4 uses it, since the
``nn.MultiheadAttention`` convention is taught there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import LearnerError, Report, call, changed_inputs
from attnbook.i18n import tr

__all__ = ["check_attention", "check_padding_to_sdpa"]

Attention = Callable[..., tuple[Tensor, Tensor]]

# Batch N, queries L, keys S, query/key size E, value size Ev. E != Ev, so that scaling by the
# wrong size is visible, and L != S, so that a transposed result has the wrong shape.
N, L, S, E, EV = 2, 3, 5, 4, 6
ATOL, RTOL = 1e-5, 1e-4


def _inputs(seed: int, *batch: int) -> tuple[Tensor, Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    # Spread 2: large enough that 1/sqrt(E), 1/E and 1 give clearly different weights.
    query = 2.0 * torch.randn(*batch, L, E, generator=gen)
    key = 2.0 * torch.randn(*batch, S, E, generator=gen)
    value = torch.randn(*batch, S, EV, generator=gen)
    return query, key, value


def _random_mask(seed: int) -> Tensor:
    """(N, L, S) bool mask in which every row, and every row of its inverse, has a True."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        mask = torch.rand(N, L, S, generator=gen) < 0.5
        if mask.any(-1).all() and (~mask).any(-1).all():
            return mask


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=ATOL, rtol=RTOL, equal_nan=False)


def _call(
    fn: Attention, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None
) -> tuple[Tensor, Tensor] | str:
    """The learner's (output, weights) on fresh copies of the inputs, or why it is unusable."""
    result = call(fn, query, key, value, mask)
    if isinstance(result, Tensor) or not isinstance(result, (tuple, list)) or len(result) != 2:
        return tr(
            "return a pair (output, weights), as attnbook.scaled_dot_product_attention does; got "
            "{result_type}"
        ).format(result_type=type(result).__name__)
    output, weights = result
    if not isinstance(output, Tensor) or not isinstance(weights, Tensor):
        return tr(
            "output and weights must be tensors; got {output_type} and {weights_type}"
        ).format(output_type=type(output).__name__, weights_type=type(weights).__name__)
    if output.dtype != query.dtype or weights.dtype != query.dtype:
        return tr(
            "return tensors of the inputs' dtype {query_dtype}; got output {output_dtype} and "
            "weights {weights_dtype} (a tensor made with torch.tensor(...) can change it)"
        ).format(query_dtype=query.dtype, output_dtype=output.dtype, weights_dtype=weights.dtype)
    return output, weights


def _reference(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    return scaled_dot_product_attention(query, key, value, mask, scale=scale)


def _diagnose(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    output: Tensor,
    weights: Tensor,
) -> str | None:
    """None if right; else the likeliest mistake, found by trying each one in turn."""
    expected, expected_weights = _reference(query, key, value, mask)
    if output.shape != expected.shape:
        return tr("the output should have shape {expected_shape}; got {output_shape}").format(
            expected_shape=tuple(expected.shape), output_shape=tuple(output.shape)
        )
    if _close(output, expected):
        if _close(weights, expected_weights):
            return None
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        if weights.shape == scores.shape and torch.allclose(weights, scores, atol=ATOL):
            return tr(
                "the second value returned must be the weights softmax(scores), not the scores"
            )
        return tr("the output is right but the weights returned are not the ones applied to value")
    d = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    over_queries = torch.nan_to_num(torch.softmax(scores, dim=-2)) @ value
    if _close(torch.nan_to_num(output), over_queries) or (
        torch.isnan(output).any()
        and weights.shape == scores.shape
        and torch.allclose(torch.nan_to_num(weights.sum(-2)), torch.ones_like(weights.sum(-2)))
    ):
        return tr("softmax must run over the keys (dim=-1), not over the queries (dim=-2)")
    for scale, mistake in [
        (1.0, "you forgot to divide the scores Q·Kᵀ by √d_k (the result equals the unscaled one)"),
        (1.0 / d, "divide the scores by √d_k, not by d_k"),
        (
            1.0 / math.sqrt(value.size(-1)),
            "d_k is the size of the queries and keys, not of the values",
        ),
    ]:
        if _close(output, _reference(query, key, value, mask, scale=scale)[0]):
            return tr(mistake)
    if mask is not None:
        if _close(output, _reference(query, key, value, ~mask)[0]):
            return tr(
                "the mask convention is inverted: True must mean the key MAY be attended (as in "
                "F.scaled_dot_product_attention), not that it is masked out"
            )
        if _close(output, _reference(query, key, value)[0]):
            return tr("the mask is ignored: keys where the mask is False must get weight 0")
        unmasked = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(d), dim=-1)
        if _close(output, (unmasked * mask) @ value):  # zeroed after softmax, not renormalised
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


def check_attention(fn: Attention) -> Report:
    """Check a learner's ``fn(query, key, value, mask=None) -> (output, weights)``.

    Args:
        fn: scaled dot-product attention with a bool mask that is ``True`` where a query may
            attend, broadcastable to (..., L, S).

    Returns:
        a :class:`~attnbook.exercises.report.Report` with one line per case; ``passed`` is True
        only if every case is right. The report never raises: a crash is one of its lines.
    """
    report = Report("check_attention")
    query, key, value = _inputs(0, N)
    said: list[str] = []  # diagnoses already given: a later case refers to them ("see above")

    def once(case: Callable[[], str | None]) -> Callable[[], str | None]:
        def run() -> str | None:
            problem = case()
            for earlier in said:
                if problem is not None and problem.endswith(earlier):
                    same = tr("the same mistake (see above)")
                    return problem[: len(problem) - len(earlier)] + same
            if problem is not None:
                said.append(problem)
            return problem

        return run

    def shapes() -> str | None:
        result = _call(fn, query, key, value, None)
        if isinstance(result, str):
            return result
        output, weights = result
        if tuple(output.shape) == (N, L, E) and E != EV:
            return tr(
                "output has shape {output_shape}: multiply the weights by value (Ev = {EV} "
                "features), not by key"
            ).format(output_shape=tuple(output.shape), EV=EV)
        if tuple(output.shape) != (N, L, EV):
            return tr("output should have shape (N, L, Ev) = {N_L_EV}; got {output_shape}").format(
                N_L_EV=(N, L, EV), output_shape=tuple(output.shape)
            )
        if tuple(weights.shape) != (N, L, S):
            return tr("weights should have shape (N, L, S) = {N_L_S}; got {weights_shape}").format(
                N_L_S=(N, L, S), weights_shape=tuple(weights.shape)
            )
        return None

    def sums_to_one() -> str | None:
        result = _call(fn, query, key, value, None)
        if isinstance(result, str):
            return result
        _, weights = result
        if tuple(weights.shape) != (N, L, S):
            return tr("cannot check: the weights have the wrong shape (see above)")
        ones = torch.ones(N, L)
        if torch.allclose(weights.sum(-1), ones, atol=ATOL):
            return None if (weights >= 0).all() else tr("some weights are negative")
        if torch.allclose(weights.sum(-2), torch.ones(N, S), atol=ATOL):
            return tr("softmax must run over the keys (dim=-1), not over the queries (dim=-2)")
        return tr("the weights of each query must sum to 1: apply softmax over the last dimension")

    def values() -> str | None:
        result = _call(fn, query, key, value, None)
        if isinstance(result, str):
            return result
        return _diagnose(query, key, value, None, *result)

    def with_mask() -> str | None:
        mask = _random_mask(1)
        result = _call(fn, query, key, value, mask)
        if isinstance(result, str):
            return result
        return _diagnose(query, key, value, mask, *result)

    def heads_and_causal_mask() -> str | None:
        q, k, v = _inputs(2, N, 2)  # (N, H=2, L, E): one more batch dimension, for heads
        causal = torch.ones(L, S, dtype=torch.bool).tril()  # (L, S), broadcast over N and H
        try:
            result = _call(fn, q, k, v, causal)
        except LearnerError as exc:  # usually a transpose that only works for 3-D inputs
            return tr(
                "your function raised {exc} (with inputs of shape (N, H, L, E), transpose the last "
                "two dims: key.transpose(-2, -1))"
            ).format(exc=exc)
        if isinstance(result, str):
            return result
        output, _ = result
        expected, _ = _reference(q, k, v, causal)
        if tuple(output.shape) != tuple(expected.shape):
            return tr(
                "with inputs of shape (N, H, L, E) = {q} the output should have shape {want}; "
                "got {got} (use key.transpose(-2, -1), not key.T or transpose(1, 2))"
            ).format(q=tuple(q.shape), want=tuple(expected.shape), got=tuple(output.shape))
        return _diagnose(q, k, v, causal, *result)

    def fully_masked_row() -> str | None:
        mask = _random_mask(3)
        mask[0, 1] = False  # query 1 of sequence 0 may attend to nothing
        result = _call(fn, query, key, value, mask)
        if isinstance(result, str):
            return result
        output, weights = result
        if tuple(output.shape) != (N, L, EV) or tuple(weights.shape) != (N, L, S):
            return tr("cannot check: the output or the weights have the wrong shape (see above)")
        row, row_weights = output[0, 1], weights[0, 1]
        if torch.isnan(row).any() or torch.isnan(row_weights).any():
            return tr(
                "a query with no allowed key gives NaN (softmax of a row of -inf); give such rows "
                "output 0 and weights 0"
            )
        if torch.allclose(row, value[0].mean(0), atol=ATOL):
            return tr(
                "a query with no allowed key gets the average of all values (the masked_fill(-1e9) "
                "trap); give it output 0 and weights 0"
            )
        if not (
            torch.allclose(row, torch.zeros(EV)) and torch.allclose(row_weights, torch.zeros(S))
        ):
            return tr("a query with no allowed key must get output 0 and weights 0")
        problem = _diagnose(query, key, value, mask, output, weights)
        if problem is not None:
            return tr("the fully masked row is right, but not the others: {problem}").format(
                problem=problem
            )
        return None

    def inputs_unchanged() -> str | None:
        return changed_inputs(
            fn, ("query", "key", "value", "mask"), query, key, value, _random_mask(4)
        )

    def gradients() -> str | None:
        q, k, v = (t.clone().requires_grad_() for t in (query, key, value))
        mask = _random_mask(5)
        mask[1, 0] = False  # one fully masked row: its gradient must not be NaN either
        try:  # these copies are the leaves whose gradients we read: no second copy here
            output = fn(q, k, v, mask)[0]
        except Exception as exc:
            raise LearnerError(exc) from exc
        if not isinstance(output, Tensor):
            return tr("cannot check: the output is not a tensor (see above)")
        if not output.requires_grad:
            return tr("the output is detached from the inputs: no gradient can reach them")
        output.backward(torch.ones_like(output))
        missing = [name for name, t in (("query", q), ("key", k), ("value", v)) if t.grad is None]
        if missing:
            return tr("no gradient reaches {join_missing}").format(join_missing=", ".join(missing))
        bad = [
            name
            for name, t in (("query", q), ("key", k), ("value", v))
            if not torch.isfinite(t.grad).all()
        ]
        if bad:
            return tr(
                "the gradient of {join_bad} contains NaN or inf (often from a fully masked row); "
                "mask the scores with masked_fill or torch.where before softmax"
            ).format(join_bad=", ".join(bad))
        return None

    report.run("returns (output, weights) of shapes (N, L, Ev) and (N, L, S)", once(shapes))
    report.run("weights are non-negative and each query's weights sum to 1", once(sums_to_one))
    report.run("without a mask, equals softmax(Q·Kᵀ/√d_k)·V", once(values))
    report.run("a bool mask: True = may attend, False = weight 0", once(with_mask))
    report.run("inputs (N, H, L, E) with a causal (L, S) mask", once(heads_and_causal_mask))
    report.run("a query with no allowed key gets output 0 and weights 0", once(fully_masked_row))
    report.run("does not modify its inputs", inputs_unchanged)
    report.run("gradients reach query, key and value and are finite", gradients)
    return report


def check_padding_to_sdpa(convert: Callable[[Tensor], Tensor]) -> Report:
    """Check ``convert(key_padding_mask)``: an ``nn.MultiheadAttention`` padding mask (N, S),
    ``True`` on padding, turned into the ``attn_mask`` that ``F.scaled_dot_product_attention``
    needs for queries (N, H, L, E) so that both ignore the same keys."""
    report = Report("padding mask for F.scaled_dot_product_attention")
    padding = torch.tensor(
        [[False, False, False, True, True], [False] * 5, [False, True, True, True, True]]
    )
    Nb, Hb, Lb, Sb = 3, 2, 4, 5
    g = torch.Generator().manual_seed(7)
    q, k, v = (
        torch.randn(Nb, Hb, Lb, 8, generator=g),
        torch.randn(Nb, Hb, Sb, 8, generator=g),
        torch.randn(Nb, Hb, Sb, 8, generator=g),
    )
    right = ~padding[:, None, None, :]  # (N, 1, 1, S), True = may attend

    def case() -> str | None:
        mask = call(convert, padding)
        if not isinstance(mask, Tensor):
            return tr("return a tensor mask; got {mask_type}").format(mask_type=type(mask).__name__)
        if mask.dtype != torch.bool and not mask.is_floating_point():
            return tr(
                "return a bool mask (True = may attend); F.scaled_dot_product_attention refuses a "
                "mask of dtype {mask_dtype}"
            ).format(mask_dtype=mask.dtype)
        try:
            allowed = mask.broadcast_to(Nb, Hb, Lb, Sb) if mask.dtype == torch.bool else None
        except RuntimeError:
            return tr(
                "a mask of shape {mask_shape} does not broadcast to the scores (N, H, L, S) = "
                "{Nb_Hb_Lb_Sb}: add the head and query dimensions, key_padding_mask[:, None, None, :]"
            ).format(mask_shape=tuple(mask.shape), Nb_Hb_Lb_Sb=(Nb, Hb, Lb, Sb))
        if allowed is None:  # a float mask: added to the scores
            try:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))
            except RuntimeError as exc:
                return tr("F.scaled_dot_product_attention refuses this mask: {exc}").format(exc=exc)
            if torch.allclose(
                out, F.scaled_dot_product_attention(q, k, v, attn_mask=right), atol=1e-5
            ):
                return None
            return tr("a float mask must be 0 where a key is allowed and -inf on padding")
        if torch.equal(allowed, right.broadcast_to(allowed.shape)):
            return None
        if torch.equal(allowed, (~right).broadcast_to(allowed.shape)):
            return tr(
                "the convention is inverted: for F.scaled_dot_product_attention True means MAY "
                "attend, for nn.MultiheadAttention True means padding; invert it with ~"
            )
        return tr(
            "some allowed keys are wrong; each sequence's padded keys (and only those) must be "
            "False"
        )

    report.run("the same keys are ignored as with nn.MultiheadAttention", case)
    report.run(
        "does not modify the padding mask",
        lambda: changed_inputs(convert, ("key_padding_mask",), padding),
    )
    return report
