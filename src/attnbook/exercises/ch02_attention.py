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

An answer that calls the library's attention or PyTorch's ``F.scaled_dot_product_attention`` is
refused: the checker would only compare them with themselves. The padding-mask exercise of
chapter 4 is checked in :mod:`attnbook.exercises.ch04_padding`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.attention_mistakes import (
    ATOL,
    RANDOM,
    SCALED_AFTER,
    attention_mistake,
    reference,
)
from attnbook.exercises.report import (
    LearnerError,
    Refused,
    RefusedCall,
    Report,
    call,
    call_as_is,
    changed_inputs,
    library,
)
from attnbook.i18n import tr

__all__ = ["check_attention"]

Attention = Callable[..., tuple[Tensor, Tensor]]

# Batch N, queries L, keys S, query/key size E, value size Ev. E != Ev, so that scaling by the
# wrong size is visible, and L != S, so that a transposed result has the wrong shape.
N, L, S, E, EV = 2, 3, 5, 4, 6


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


def check_attention(fn: Attention) -> Report:
    """Check a learner's ``fn(query, key, value, mask=None) -> (output, weights)``.

    Args:
        fn: scaled dot-product attention with a bool mask that is ``True`` where a query may
            attend, broadcastable to (..., L, S).

    Returns:
        a :class:`~attnbook.exercises.report.Report` with one line per case; ``passed`` is True
        only if every case is right. The report never raises: a crash is one of its lines.
    """
    refused = (
        *library(scaled_dot_product_attention),
        Refused(F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
    )
    report = Report("check_attention", refused=refused)
    query, key, value = _inputs(0, N)
    said: list[str] = []  # diagnoses already given: a later case refers to them ("see above")

    def random() -> bool:
        """Two calls on the same inputs differ: dropout left on."""
        try:
            with report.refusing():
                first, second = (_call(fn, query, key, value, _random_mask(1)) for _ in range(2))
        except LearnerError:
            return False
        if isinstance(first, str) or isinstance(second, str):
            return False
        return any(
            a.shape != b.shape or not torch.equal(a.nan_to_num(), b.nan_to_num())
            for a, b in zip(first, second)
        )

    is_random = random()

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
        sums = weights.sum(-1)
        if torch.allclose(sums, ones, atol=ATOL):
            return None if (weights >= 0).all() else tr("some weights are negative")
        if is_random:
            return tr(RANDOM)
        if torch.allclose(weights.sum(-2), torch.ones(N, S), atol=ATOL):
            return tr("softmax must run over the keys (dim=-1), not over the queries (dim=-2)")
        if torch.allclose(sums, torch.full_like(sums, E**-0.5), atol=ATOL):
            return tr(SCALED_AFTER)
        if torch.allclose(sums, sums.flatten()[0].expand_as(sums), atol=ATOL):
            return tr(
                "every row of weights sums to {total:.4g}, not 1: do not scale the weights after "
                "the softmax; scale the scores before it"
            ).format(total=float(sums.flatten()[0]))
        return tr("the weights of each query must sum to 1: apply softmax over the last dimension")

    def values() -> str | None:
        result = _call(fn, query, key, value, None)
        if isinstance(result, str):
            return result
        problem = attention_mistake(query, key, value, None, *result)
        return tr(RANDOM) if problem is not None and is_random else problem

    def with_mask() -> str | None:
        mask = _random_mask(1)
        result = _call(fn, query, key, value, mask)
        if isinstance(result, str):
            return result
        problem = attention_mistake(query, key, value, mask, *result)
        return tr(RANDOM) if problem is not None and is_random else problem

    def heads_and_causal_mask() -> str | None:
        q, k, v = _inputs(2, N, 2)  # (N, H=2, L, E): one more batch dimension, for heads
        causal = torch.ones(L, S, dtype=torch.bool).tril()  # (L, S), broadcast over N and H
        try:
            result = _call(fn, q, k, v, causal)
        except LearnerError as exc:  # usually a transpose that only works for 3-D inputs
            if isinstance(exc, RefusedCall):
                raise
            return tr(
                "your function raised {exc} (with inputs of shape (N, H, L, E), transpose the last "
                "two dims: key.transpose(-2, -1))"
            ).format(exc=exc)
        if isinstance(result, str):
            return result
        output, _ = result
        expected, _ = reference(q, k, v, causal)
        if tuple(output.shape) != tuple(expected.shape):
            hint = (  # a transpose of the wrong dimensions keeps the rank, mixes the sizes
                tr(" (use key.transpose(-2, -1), not key.T or transpose(1, 2))")
                if output.dim() == 4 and output.size(-1) == EV
                else ""
            )
            return tr(
                "with inputs of shape (N, H, L, E) = {q} the output should have shape {want}; "
                "got {got}{hint}"
            ).format(
                q=tuple(q.shape), want=tuple(expected.shape), got=tuple(output.shape), hint=hint
            )
        problem = attention_mistake(q, k, v, causal, *result)
        return tr(RANDOM) if problem is not None and is_random else problem

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
        problem = attention_mistake(query, key, value, mask, output, weights)
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
        output = call_as_is(fn, q, k, v, mask)  # the leaves whose gradients we read
        output = output[0] if isinstance(output, (tuple, list)) else output
        if not isinstance(output, Tensor):
            return tr("cannot check: the output is not a tensor (see above)")
        if not torch.isfinite(output.detach()).all():  # NaN in the output: named above
            return tr("cannot check the gradients: the output is not finite already (see above)")
        if not output.requires_grad:
            return tr("the output is detached from the inputs: no gradient can reach them")
        try:
            output.backward(torch.ones_like(output))
        except RuntimeError as exc:  # e.g. an input autograd needs was edited in place
            return tr(
                "the backward pass through your function fails ({error}); an in-place edit of a "
                "tensor autograd needs (x /= ..., x[...] = ...) is the usual cause"
            ).format(error=f"{type(exc).__name__}: {str(exc).split('. ')[0]}")
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
