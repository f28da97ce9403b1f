"""Chapter 11's checker: the backward pass of attention from O and the log-sum-exp alone.

``my_backward(query, key, value, output, lse, grad_output)`` for one block: query (L, E), key
(S, E), value (S, Ev), the forward's output (L, Ev) and log-sum-exp (L, 1) of the scaled scores,
and the gradient of the loss with respect to the output (L, Ev); it returns the gradients
``(d_query, d_key, d_value)`` of the attention ``softmax(Q Kᵀ / √E) V``, recomputing P from
the scores and ``lse``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.i18n import tr

__all__ = ["check_attention_backward"]

Backward = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], tuple[Tensor, Tensor, Tensor]]


def _case(
    seed: int, L: int, S: int, E: int, Ev: int
) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...]]:
    """The six inputs of one case, and autograd's three gradients."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(n, d, generator=g) for n, d in ((L, E), (S, E), (S, Ev)))
    grad_output = torch.randn(L, Ev, generator=g)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    output, _ = scaled_dot_product_attention(*leaves)
    output.backward(grad_output)
    lse = torch.logsumexp(q @ k.T / E**0.5, dim=-1, keepdim=True)
    return (q, k, v, output.detach(), lse, grad_output), tuple(t.grad for t in leaves)


def _mistake(inputs: tuple[Tensor, ...], answer: tuple[Tensor, ...]) -> str:
    q, k, v, o, lse, do = inputs
    scale = q.size(-1) ** -0.5
    p = torch.exp(q @ k.T * scale - lse)
    dp = do @ v.T
    close = lambda a, b: a.shape == b.shape and torch.allclose(a, b, atol=1e-4)  # noqa: E731
    no_d = p * dp
    if close(answer[0], scale * no_d @ k):
        return tr(
            "dS = P (dP - D): the term D_i = sum_k dO_ik O_ik, which the softmax subtracts, is "
            "missing"
        )
    if close(answer[0], scale * (p * (dp - dp.sum(-1, keepdim=True))) @ k):
        return tr(
            "D_i is the P-weighted sum of dP's row, sum_j P_ij dP_ij (= sum_k dO_ik O_ik), not "
            "its plain sum"
        )
    ds = p * (dp - (do * o).sum(-1, keepdim=True))
    if close(answer[0], ds @ k):
        return tr("the scores were scaled by 1/√E, so dQ = (1/√E) dS K (and dK = (1/√E) dSᵀ Q)")
    if close(answer[1], scale * ds @ q):
        return tr("dK = (1/√E) dSᵀ Q: transpose dS (keys index its columns)")
    if close(answer[2], p @ do[: p.size(1)]) or close(answer[2], do.T @ p):
        return tr("dV = Pᵀ dO, of shape (S, Ev)")
    return tr("the gradients differ from autograd's")


def check_attention_backward(my_backward: Backward) -> Report:
    """Compare the reader's backward pass with autograd's gradients on several shapes."""
    report = Report("attention backward from O and the log-sum-exp")

    def case(seed: int, L: int, S: int, E: int, Ev: int) -> Callable[[], str | None]:
        def run() -> str | None:
            inputs, expected = _case(seed, L, S, E, Ev)
            answer = call(my_backward, *inputs)
            if not isinstance(answer, (tuple, list)) or len(answer) != 3:
                return tr("return a triple (d_query, d_key, d_value); got {answer_type}").format(
                    answer_type=type(answer).__name__
                )
            for name, a, b in zip(("d_query", "d_key", "d_value"), answer, expected):
                problem = expect_tensor(a, b.shape, what=name)
                if problem is not None:
                    return problem
            if all(torch.allclose(a, b, atol=1e-4, rtol=1e-4) for a, b in zip(answer, expected)):
                return None
            return _mistake(inputs, tuple(answer))

        return run

    report.run("5 queries, 7 keys of 4, values of 3", case(0, 5, 7, 4, 3))
    report.run("9 queries, 4 keys of 8, values of 6", case(1, 9, 4, 8, 6))
    report.run("one query, one key", case(2, 1, 1, 4, 2))
    inputs, _ = _case(3, 4, 5, 4, 3)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            my_backward, ("query", "key", "value", "output", "lse", "grad_output"), *inputs
        ),
    )
    return report
