"""Chapter 20's checkers: the size of a grouped key/value cache, one step of linear attention.

* ``my_cache_bytes(num_layers, num_heads, num_kv_heads, head_dim, length, batch,
  bytes_per_value)``: the bytes of the keys and values a decoder caches (an int).
* ``my_linear_step(state, z, q, k, v)``: one step of causal linear attention as an RNN with
  ``phi(x) = elu(x) + 1``: ``(output (Ev,), new state (E, Ev), new z (E,))`` from the state
  ``(E, Ev)`` and normaliser ``(E,)`` before the step, the query and key ``(E,)`` and the value
  ``(Ev,)`` of the new position.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.efficient.linear import elu_feature_map, linear_attention
from attnbook.exercises.report import Report, as_int, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr
from attnbook.lab.decoding import kv_cache_bytes

__all__ = ["check_cache_bytes", "check_linear_step"]

# (num_layers, num_heads, num_kv_heads, head_dim, length, batch, bytes_per_value)
CACHE_CASES = [
    (32, 32, 8, 128, 8192, 1, 2),  # Mistral 7B's shape at its context length, float16
    (3, 4, 1, 16, 100, 5, 4),  # multi-query, float32, a batch of 5
    (6, 12, 12, 64, 512, 3, 2),  # ordinary multi-head attention, a batch of 3, float16
]


def _cache_mistake(answer: int, layers: int, H: int, K: int, D: int, L: int, N: int, b: int) -> str:
    right = kv_cache_bytes(layers, K, D, L, N, b)
    # (the wrong answer, what the mistake is); several can give the same number
    slips = [
        (right // 2, tr("the cache holds the keys AND the values (a factor 2)")),
        (
            kv_cache_bytes(layers, H, D, L, N, b) if K != H else None,
            tr(
                "only the {K} key/value head(s) are cached, not all {H} query heads, nor {K} times "
                "the group size H/K = {H_K} (the query heads of a group share them)"
            ).format(K=K, H=H, H_K=H // K),
        ),
        (right // K if K != 1 else None, tr("multiply by the number of key/value heads too")),
        (right // b, tr("multiply the number of values by the bytes per value")),
        (right // b * 4 if b != 4 else None, tr("{b} bytes per value here, not 4").format(b=b)),
        (right // layers, tr("every layer has its own cache: multiply by the number of layers")),
        (
            right // N if N != 1 else None,
            tr("every sequence of the batch has its own cache: multiply by the batch"),
        ),
        (right // D, tr("each cached key and value has head_dim numbers")),
    ]
    found = [why for wrong, why in slips if wrong == answer]
    if found:
        return tr("expected {right:,}, got {answer:,}: ").format(
            right=right, answer=answer
        ) + "; or ".join(found)
    return tr("expected {right:,} bytes, got {answer:,}").format(right=right, answer=answer)


def check_cache_bytes(cache_bytes: Callable[..., int]) -> Report:
    """Compare the reader's ``cache_bytes(num_layers, num_heads, num_kv_heads, head_dim, length,
    batch, bytes_per_value)`` with :func:`attnbook.lab.decoding.kv_cache_bytes`."""
    report = Report(N_("the bytes of a key/value cache"), refused=library(kv_cache_bytes))

    def case(args: tuple[int, ...]) -> Callable[[], str | None]:
        def run() -> str | None:
            answer = as_int(call(cache_bytes, *args))
            if answer is None:
                return tr("return a whole number of bytes (an int)")
            layers, H, K, D, L, N, b = args
            if answer == kv_cache_bytes(layers, K, D, L, N, b):
                return None
            return _cache_mistake(answer, layers, H, K, D, L, N, b)

        return run

    names = [
        N_("32 layers, 32 query and 8 key/value heads of 128, 8192 tokens, float16"),
        N_("3 layers, 4 query heads and 1 key/value head, a batch of 5, float32"),
        N_("6 layers of 12 ordinary heads, a batch of 3, float16"),
    ]
    for name, args in zip(names, CACHE_CASES):
        report.run(name, case(args))
    return report


def _reference(state: Tensor, z: Tensor, q: Tensor, k: Tensor, v: Tensor, eps: float = 1e-6):
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
    state, z = state + phi_k[:, None] * v[None, :], z + phi_k
    return (phi_q @ state) / (phi_q @ z + eps), state, z


def _step_mistake(out: Tensor, state: Tensor, z: Tensor, args: tuple[Tensor, ...]) -> str:
    s0, z0, q, k, v = args
    close = lambda a, b: a.shape == b.shape and torch.allclose(a, b, atol=1e-4, rtol=1e-4)  # noqa: E731
    phi_q = elu_feature_map(q)
    right_out, right_state, right_z = _reference(*args)
    if close(out, (phi_q @ s0) / (phi_q @ z0 + 1e-6)):
        return tr(
            "the output uses the state BEFORE the new key and value are added: a causal query "
            "sees its own position too; update the state first"
        )
    if close(out, phi_q @ right_state):
        return tr("divide by the normaliser phi(q) . z, or the weights do not add up to 1")
    if close(state, s0 + k[:, None] * v[None, :]) or close(z, z0 + k):
        return tr("apply the feature map to the key before adding it: phi(k) = elu(k) + 1")
    if close(out, (q @ right_state) / (q @ right_z + 1e-6)):
        return tr("apply the feature map to the query too: phi(q) = elu(q) + 1")
    if close(
        out,
        (F.elu(q) @ (s0 + F.elu(k)[:, None] * v[None, :])) / (F.elu(q) @ (z0 + F.elu(k)) + 1e-6),
    ):
        return tr("the feature map is elu(x) + 1; without the + 1 it can be negative")
    if not close(state, right_state):
        return tr(
            "the new state should be state + phi(k) v^T, an (E, Ev) outer product, with the "
            "feature map phi(x) = elu(x) + 1"
        )
    if not close(z, right_z):
        return tr("the new normaliser should be z + phi(k), with phi(x) = elu(x) + 1")
    return tr(
        "the output should be phi(q) . S / (phi(q) . z), with S and z after the update and "
        "phi(x) = elu(x) + 1"
    )


def check_linear_step(linear_step: Callable[..., tuple[Tensor, Tensor, Tensor]]) -> Report:
    """Compare the reader's one-step update with :mod:`attnbook.efficient.linear`."""
    report = Report(N_("one step of linear attention"))

    def inputs(seed: int, E: int, Ev: int, steps: int) -> tuple[Tensor, ...]:
        g = torch.Generator().manual_seed(seed)
        q, k = torch.randn(steps, E, generator=g), torch.randn(steps, E, generator=g)
        return q, k, torch.randn(steps, Ev, generator=g)

    def one_step(seed: int, E: int, Ev: int) -> Callable[[], str | None]:
        def run() -> str | None:
            q, k, v = inputs(seed, E, Ev, 4)
            s0 = elu_feature_map(k[:3]).T @ v[:3]  # (E, Ev): three earlier positions
            z0 = elu_feature_map(k[:3]).sum(0)  # (E,)
            args = (s0, z0, q[3], k[3], v[3])
            result = call(linear_step, *args)
            if not isinstance(result, tuple) or len(result) != 3:
                return tr("return three things: (output, new state, new z)")
            out, state, z = result
            for what, got, shape in (
                (N_("the output"), out, (Ev,)),
                (N_("the state"), state, (E, Ev)),
                (N_("the z"), z, (E,)),
            ):
                problem = expect_tensor(got, shape, what=what)
                if problem is not None:
                    return problem
            right_out, right_state, right_z = _reference(*args)
            if all(
                torch.allclose(a, b, atol=1e-4, rtol=1e-4)
                for a, b in ((out, right_out), (state, right_state), (z, right_z))
            ):
                return None
            return _step_mistake(out, state, z, args)

        return run

    def whole_sequence() -> str | None:
        if one_step(2, 8, 2)() is not None:
            return tr("cannot check: one step is wrong already (see above)")
        q, k, v = inputs(7, 5, 3, 12)
        state, z, outputs = torch.zeros(5, 3), torch.zeros(5), []
        for i in range(12):
            out, state, z = call(linear_step, state, z, q[i], k[i], v[i])
            outputs.append(out)
        if torch.allclose(
            torch.stack(outputs), linear_attention(q, k, v, is_causal=True), atol=1e-4, rtol=1e-4
        ):
            return None
        return tr(
            "run from a zero state over 12 positions, the outputs differ from causal linear "
            "attention"
        )

    report.run("one step, E = 4, Ev = 6", one_step(1, 4, 6))
    report.run("one step, E = 8, Ev = 2", one_step(2, 8, 2))
    report.run("12 steps from zero equal linear_attention(..., is_causal=True)", whole_sequence)
    q, k, v = inputs(3, 4, 2, 1)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            linear_step,
            ("state", "z", "q", "k", "v"),
            torch.rand(4, 2),
            torch.rand(4),
            q[0],
            k[0],
            v[0],
        ),
    )
    return report
