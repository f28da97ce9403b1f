"""Chapter 11's checker: the backward pass of attention from O and the log-sum-exp alone.

``my_backward(query, key, value, output, lse, grad_output)`` for one block: query (L, E), key
(S, E), value (S, Ev), the forward's output (L, Ev) and log-sum-exp (L, 1) of the scaled scores,
and the gradient of the loss with respect to the output (L, Ev); it returns the gradients
``(d_query, d_key, d_value)`` of the attention ``softmax(Q Kᵀ / √E) V``, recomputing P from
the scores and ``lse``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.observers import AUTOGRAD
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.i18n import N_, tr

__all__ = ["check_attention_backward", "check_backward_memory"]

_BY_HAND = N_(
    "your function uses autograd ({names}): the exercise asks for the gradients written out. "
    "Recompute P = exp(Q Kᵀ/√E - lse), then dV = Pᵀ dO, dP = dO Vᵀ, D = rowsum(dO ∘ O), "
    "dS = P ∘ (dP - D), dQ = dS K/√E and dK = dSᵀ Q/√E"
)

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


def _gradients(q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor, do: Tensor, **slip: bool):
    """(dQ, dK, dV) by the chapter's formulas, or with one ``slip`` of a learner; None where
    the slip cannot even be computed for these shapes."""
    scale = q.size(-1) ** -0.5
    p = torch.exp(q @ k.T * (1.0 if slip.get("p_unscaled") else scale) - lse)
    dp = do @ v.T
    if slip.get("no_d"):
        d = torch.zeros_like(lse)
    elif slip.get("plain_sum"):
        d = dp.sum(-1, keepdim=True)
    else:
        d = (do * o).sum(-1, keepdim=True)
    ds = p * (dp + d) if slip.get("d_added") else p * (dp - d)
    dq = ds @ k * (1.0 if slip.get("dq_unscaled") else scale)
    dk = ds.T @ q * (1.0 if slip.get("dk_unscaled") else scale)
    if slip.get("dk_untransposed"):
        dk = scale * ds @ q if ds.size(0) == ds.size(1) == q.size(0) else None
    dv = p.T @ do
    if slip.get("dv_untransposed"):
        dv = p @ do if p.size(0) == p.size(1) else None
    return dq, dk, dv


_SLIPS: dict[str, dict[str, bool]] = {
    N_(
        "dS = P (dP - D): the term D_i = sum_k dO_ik O_ik, which the softmax subtracts, is missing"
    ): {"no_d": True},
    N_(
        "D_i is the P-weighted sum of dP's row, sum_j P_ij dP_ij (= sum_k dO_ik O_ik), not its plain "
        "sum"
    ): {"plain_sum": True},
    N_("dS = P (dP - D): subtract D_i, do not add it"): {"d_added": True},
    N_("the scores were scaled by 1/√E, so dQ = (1/√E) dS K (and dK = (1/√E) dSᵀ Q)"): {
        "dq_unscaled": True
    },
    N_("the scores were scaled by 1/√E, so dK = (1/√E) dSᵀ Q (and dQ = (1/√E) dS K)"): {
        "dk_unscaled": True
    },
    N_("the scores were scaled by 1/√E, so both dQ = (1/√E) dS K and dK = (1/√E) dSᵀ Q"): {
        "dq_unscaled": True,
        "dk_unscaled": True,
    },
    N_(
        "P = exp(Q Kᵀ / √E - lse): lse belongs to the scaled scores, so scale them before you "
        "subtract it"
    ): {"p_unscaled": True},
    N_("dK = (1/√E) dSᵀ Q: transpose dS (keys index its columns)"): {"dk_untransposed": True},
    N_("dV = Pᵀ dO, of shape (S, Ev)"): {"dv_untransposed": True},
}


def _close(a: Tensor | None, b: Tensor | None) -> bool:
    if a is None or b is None or a.shape != b.shape:
        return False
    return torch.allclose(a, b, atol=1e-4, rtol=1e-4)


def _mistake(inputs: tuple[Tensor, ...], answer: tuple[Tensor, ...]) -> str:
    """The slip that explains all three returned gradients (and differs from the right ones
    here); otherwise which gradients differ."""
    right = _gradients(*inputs)
    for message, slip in _SLIPS.items():
        with torch.no_grad():
            wrong = _gradients(*inputs, **slip)
        if None in wrong:  # this slip cannot happen with these shapes
            continue
        differs = any(not _close(w, r) for w, r in zip(wrong, right))
        if differs and all(_close(a, w) for a, w in zip(answer, wrong)):
            return tr(message)
    names = [
        n for n, a, r in zip(("d_query", "d_key", "d_value"), answer, right) if not _close(a, r)
    ]
    return tr("these gradients differ from autograd's: {names}").format(names=", ".join(names))


def check_attention_backward(my_backward: Backward) -> Report:
    """Compare the reader's backward pass with autograd's gradients on several shapes; an
    answer that calls autograd itself is refused."""
    report = Report(
        N_("attention backward from O and the log-sum-exp"), refused=AUTOGRAD, advice=_BY_HAND
    )

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


def check_backward_memory(qkvo_bytes: int, lse_bytes: int) -> Report:
    """Check the bytes that the recomputing backward keeps from the forward, for n = 16,384, 8
    head-batches, d = 64 in float32: Q, K, V and O together, and the log-sum-exp."""
    report = Report(N_("the memory of the recomputing backward"))
    n, batches, d, size = 16_384, 8, 64, 4
    tensor = batches * n * d * size  # one of Q, K, V, O: 32 MiB
    lse = batches * n * size  # one number per query and head-batch: 0.5 MiB

    def judge(
        answer: object, expected: int, slips: list[tuple[float, str]], otherwise: str
    ) -> str | None:
        """None if right; else every slip that gives this number (several can), or
        ``otherwise``."""
        if isinstance(answer, Tensor) and answer.numel() == 1:
            answer = answer.item()  # a one-element tensor, e.g. from torch.prod
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            return tr("answer with a number of bytes; got {kind}").format(
                kind=type(answer).__name__
            )
        answer = float(answer)  # NumPy's integers and floats count as numbers
        if abs(answer - expected) <= 1e-9 * expected:
            return None
        found = [why for value, why in slips if abs(answer - value) <= 1e-9 * value]
        return tr("; or ").join(found) if found else otherwise

    def qkvo_case() -> str | None:
        slips = [
            (
                3 * tensor,
                tr(
                    "that is Q, K and V; the output O is kept too: the backward reads it for "
                    "D = rowsum(dO ∘ O)"
                ),
            ),
            (tensor, tr("that is one of the four tensors; Q, K, V and O take 4 times as much")),
            (4 * tensor // size, tr("that is the number of floats; each float32 takes 4 bytes")),
            (
                4 * tensor // batches,
                tr("that is one head-batch; each of the 8 has its own Q, K, V and O"),
            ),
            (4 * tensor + lse, tr("give Q, K, V and O here, and the log-sum-exp apart")),
            (
                7 * tensor,
                tr(
                    "the three gradients dQ, dK, dV are not kept from the forward: they are "
                    "made by the backward; count Q, K, V and O only"
                ),
            ),
            (4 * tensor / 2**20, tr("that is in MiB; the question asks for bytes (1 MiB = 2²⁰)")),
            (
                4 * tensor / 10**6,
                tr(
                    "that is in millions of bytes; the question asks for bytes (and 1 MiB = 2²⁰ "
                    "bytes, not 10⁶)"
                ),
            ),
        ]
        otherwise = tr(
            "expected 4 tensors of 8 x 16,384 x 64 float32 = {expected:,} bytes, got {got}"
        ).format(expected=4 * tensor, got=qkvo_bytes)
        return judge(qkvo_bytes, 4 * tensor, slips, otherwise)

    def lse_case() -> str | None:
        slips = [
            (lse // size, tr("that is the number of floats; each float32 takes 4 bytes")),
            (lse // batches, tr("that is one head-batch; each of the 8 has its own log-sum-exp")),
            (
                tensor,
                tr(
                    "the log-sum-exp is one number per query (per head-batch), not d of them: "
                    "8 x 16,384 floats"
                ),
            ),
            (lse / 2**20, tr("that is in MiB; the question asks for bytes (1 MiB = 2²⁰)")),
        ]
        otherwise = tr(
            "expected one float32 per query and head-batch, 8 x 16,384 x 4 = {expected:,} bytes, "
            "got {got}"
        ).format(expected=lse, got=lse_bytes)
        return judge(lse_bytes, lse, slips, otherwise)

    report.run("the bytes of Q, K, V and O", qkvo_case)
    report.run("the bytes of the log-sum-exp", lse_case)
    return report
