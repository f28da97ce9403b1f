"""Chapter 10's checkers: linear attention in O(n), the limit of its weights, and the numeric
questions (the state of a linear-attention RNN, the reach of stacked windows).

* ``linear_attn(query, key, value) -> output``: non-causal linear attention with
  ``phi(x) = elu(x) + 1`` (see :func:`attnbook.efficient.linear_attention`).
* ``weight_on_first(c, P)``: the weight linear attention gives item 1 of P one-hot keys for the
  query ``c·e_1``, as the formula the derivation finds (it tends to 2/(P + 1)).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.utils.flop_counter import FlopCounterMode

from attnbook.attention import scaled_dot_product_attention
from attnbook.efficient.linear import (
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_weights,
)
from attnbook.exercises.cases import random_qkv
from attnbook.exercises.observers import LargestTensor
from attnbook.exercises.report import (
    LearnerError,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr

__all__ = [
    "check_linear_attention",
    "check_state_bytes",
    "check_window_layers",
    "check_linear_limit",
]


def _close(a: Tensor, b: Tensor, atol: float = 1e-5) -> bool:
    return a.shape == b.shape and torch.allclose(
        a.float(), b.float(), atol=atol, rtol=1e-5, equal_nan=True
    )


def _factored(phi_q: Tensor, phi_k: Tensor, v: Tensor, mean_normaliser: bool = False) -> Tensor:
    """phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1); with ``mean_normaliser``, a mean over the keys
    in the denominator (a typical mistake)."""
    z = phi_k.mean(0) if mean_normaliser else phi_k.sum(0)  # (E,)
    return (phi_q @ (phi_k.T @ v)) / (phi_q @ z)[:, None]  # (L, Ev)


def check_linear_attention(linear_attn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Compare the reader's non-causal ``linear_attn(query, key, value)`` with the library."""
    report = Report(
        N_("linear attention"),
        refused=library(linear_attention, linear_attention_weights, linear_attention_recurrent),
    )

    def matches(seed: int, L: int, S: int, E: int, Ev: int) -> Callable[[], str | None]:
        def case() -> str | None:
            q, k, v = random_qkv(seed, L, S, E, Ev)
            out = call(linear_attn, q, k, v)
            problem = expect_tensor(out, (L, Ev), what="linear_attn")
            if problem is not None:
                return problem
            if _close(out, linear_attention(q, k, v), atol=1e-4):
                return None
            phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
            if _close(out, phi_q @ (phi_k.T @ v), atol=1e-4):
                return tr("divide by the normaliser phi(q) . sum_j phi(k_j)")
            if _close(out, _factored(phi_q, phi_k, v, mean_normaliser=True), atol=1e-4):
                return tr(
                    "the normaliser is phi(q) . sum_j phi(k_j), a sum over the keys, not a mean: the "
                    "weights must add up to 1"
                )
            if _close(out, _factored(F.elu(q), F.elu(k), v), atol=1e-4):
                return tr("the feature map is elu(x) + 1: without the + 1 it can be negative")
            if _close(out, linear_attention(q / E**0.5, k, v), atol=1e-4):
                return tr(
                    "linear attention has no 1 / sqrt(E) scaling (that belongs to softmax attention): "
                    "apply phi to the queries as they are"
                )
            if _close(out, _factored(torch.exp(q), torch.exp(k), v), atol=1e-4):
                return tr(
                    "the feature map is elu(x) + 1, not exp(x) (exp(q) . exp(k) is not exp(q . k) either)"
                )
            if _close(out, (q @ (k.T @ v)) / (q @ k.sum(0, keepdim=True).T), atol=1e-4):
                return tr("apply the feature map phi(x) = elu(x) + 1 to queries and keys first")
            if _close(
                out,
                (F.relu(q) @ (F.relu(k).T @ v)) / (F.relu(q) @ F.relu(k).sum(0)[:, None]),
                atol=1e-4,
            ):
                return tr("the feature map is elu(x) + 1 (always positive), not relu")
            if _close(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-4):
                return tr(
                    "that is softmax attention; linear attention replaces exp(q . k) by phi(q) . phi(k)"
                )
            return tr("the output differs from phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1)")

        return case

    def linear_cost() -> str | None:
        # The quadratic form builds an (L, S) matrix, by a matrix product (counted FLOPs) or by
        # broadcasting (the largest tensor any operation makes); the linear form needs neither.
        if matches(2, 6, 9, 4, 3)() is not None:
            return tr("cannot check the cost: the output is wrong already (see above)")
        n = 1024
        q, k, v = random_qkv(5, n, n, 4, 4)
        with FlopCounterMode(display=False) as counter, LargestTensor() as sizes:
            out = call(linear_attn, q, k, v)
        if expect_tensor(out, (n, 4)) is not None or not _close(
            out, linear_attention(q, k, v), atol=1e-4
        ):
            return tr("wrong on a long sequence")
        if counter.get_total_flops() >= n * n:
            return tr(
                "{value:,} FLOPs for L = S = {n}: an (L, S) matrix product is still in there; "
                "compute phi(K)^T V and the normaliser phi(K)^T 1 first, then multiply phi(Q) by them"
            ).format(value=counter.get_total_flops(), n=n)
        if sizes.largest >= n * n:
            return tr(
                "an intermediate tensor has {sizes_largest:,} elements for L = S = {n}: an L x S "
                "matrix built by broadcasting is still quadratic; sum over the keys first"
            ).format(sizes_largest=sizes.largest, n=n)
        return None

    report.run("equals the library's linear attention", matches(2, 6, 9, 4, 3))
    report.run("other sizes: 3 queries, 12 keys of 8, values of 5", matches(3, 3, 12, 8, 5))
    report.run("costs O(n): no (L, S) intermediate for L = S = 1024", linear_cost)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(linear_attn, ("query", "key", "value"), *random_qkv(4, 5, 7, 4, 2)),
    )
    return report


def check_state_bytes(kv_cache: int, state: int) -> Report:
    """Check the bytes per head at n = 16,384, d = 64, float32: softmax attention's KV cache
    and the recurrent state of linear attention (S, d x d, and z, d)."""
    report = Report(N_("the state of a linear-attention RNN"))
    n, d, size = 16_384, 64, 4
    true_cache, true_state = 2 * n * d * size, (d * d + d) * size

    def cache_case() -> str | None:
        if kv_cache == true_cache:
            return None
        if kv_cache == true_cache // 2:
            return tr(
                "half the expected: the cache keeps the keys AND the values (2 x n x d numbers), "
                "each float32 taking 4 bytes; did you count one of them, or 2 bytes a number?"
            )
        if kv_cache == true_cache // size:
            return tr("that is the number of floats; each float32 takes 4 bytes")
        return tr("expected 2 x {n} x {d} x 4 = {true_cache:,} bytes, got {kv_cache:,}").format(
            n=n, d=d, true_cache=true_cache, kv_cache=kv_cache
        )

    def state_case() -> str | None:
        if state == true_state:
            return None
        if state == d * d * size:
            return tr("the normaliser z (d numbers) is part of the state too")
        if state == true_state // size:
            return tr("that is the number of floats; each float32 takes 4 bytes")
        return tr("expected (64 x 64 + 64) x 4 = {true_state:,} bytes, got {state:,}").format(
            true_state=true_state, state=state
        )

    report.run("KV cache bytes per head", cache_case)
    report.run("linear-attention state bytes per head", state_case)
    return report


def check_window_layers(reach: Callable[[int, int], int], layers_needed: int) -> Report:
    """Check ``reach(layers, w)``, how far back information can travel through that many layers
    of local attention of half-width ``w``, and the layers of ``w = 128`` a 16,384-token context
    needs."""
    report = Report(N_("how far can a window see?"))

    def reach_case() -> str | None:
        for layers, w in [(1, 4), (3, 4), (5, 128)]:
            answer = call(reach, layers, w)
            if answer == layers * w:
                continue
            if answer == w**layers:
                return tr("the reach grows by w per layer (a sum), not by a factor w (a product)")
            if answer == layers * (2 * w + 1):
                return tr(
                    "a window of half-width w moves information at most w positions back per layer"
                )
            if answer == 2 * layers * w:
                return tr(
                    "2ℓw is the width of the receptive field, w to each side; the question is how far "
                    "back information travels: w positions per layer"
                )
            if answer == layers * (w + 1):
                return tr("the query's own position is not a step back: w positions per layer")
            noun = tr("layer") if layers == 1 else tr("layers")
            return tr("for {layers} {noun} of w = {w} expected {layers_w}, got {answer}").format(
                layers=layers, noun=noun, w=w, layers_w=layers * w, answer=answer
            )
        return None

    def layers_case() -> str | None:
        expected = math.ceil(16_384 / 128)
        if layers_needed == expected:
            return None
        if layers_needed == math.ceil(16_384 / (2 * 128)):
            return tr(
                "that counts 2w positions per layer, the receptive field's width; to reach a token "
                "16,384 positions back, information moves w = 128 per layer: {expected} layers"
            ).format(expected=expected)
        return tr("16,384 / 128 = {expected} layers; got {layers_needed}").format(
            expected=expected, layers_needed=layers_needed
        )

    report.run("ℓ layers reach ℓ · w positions", reach_case)
    report.run("layers of w = 128 for 16,384 tokens", layers_case)
    return report


def _weight_on_first(c: float, P: int, *, q_ones: bool = True, k_ones: bool = True) -> float:
    """The elu + 1 weight on item 1 of P one-hot keys for the query c·e_1, by the formula (the
    variants leave out the 1s of φ(q) or of φ(k) outside their own coordinate)."""
    first = 2 * (c + 1) + (P - 1) * (1 if q_ones and k_ones else 0)  # φ(q)·φ(e_1)
    other = (c + 1) * (1 if k_ones else 0) + 2 * (1 if q_ones else 0)
    other += (P - 2) * (1 if q_ones and k_ones else 0)  # φ(q)·φ(e_j), j ≠ 1
    return first / (first + (P - 1) * other)


def check_linear_limit(weight_on_first: Callable[[float, int], float]) -> Report:
    """Check ``weight_on_first(c, P)``: the weight that linear attention with φ(x) = elu(x) + 1
    gives item 1 of P one-hot keys e_1 ... e_P for the query c·e_1, as a formula in c and P
    (compared with the weights computed from φ, for c ≥ 0), which tends to 2/(P + 1)."""
    refused = library(linear_attention, linear_attention_weights, linear_attention_recurrent)
    report = Report(N_("the limit 2 / (P + 1)"), refused=refused)

    def numeric_formula(c: float, P: int) -> float:  # the closed form, for P too large to build
        return (2 * c + P + 1) / ((2 * c + P + 1) + (P - 1) * (c + P + 1))

    def numeric(c: float, P: int) -> float:
        phi_q = elu_feature_map(c * torch.eye(P, dtype=torch.float64)[0])  # (P,)
        kernel = elu_feature_map(torch.eye(P, dtype=torch.float64)) @ phi_q  # (P,)
        return float(kernel[0] / kernel.sum())

    slips = {
        N_("that is 2/(P + 1) at every c, the limit only: φ(c·e_1) = elu(c·e_1) + 1 has 1 in "
        "every other coordinate too, so φ(q)·φ(e_j) = (c + 1) + 2 + (P - 2) for j ≠ 1"):
            lambda c, P: 2 / (P + 1),
        N_("φ(e_j) = elu(e_j) + 1 has 2 in coordinate j and 1 in every other one, and so has "
        "φ(q) outside coordinate 1: you left out those 1s"):
            lambda c, P: _weight_on_first(c, P, q_ones=False, k_ones=False),
        N_("φ(e_j) = elu(e_j) + 1 has 1 in every coordinate but j (where it has 2): you left out "
        "those 1s"): lambda c, P: _weight_on_first(c, P, k_ones=False),
        N_("that is softmax attention's weight, exp(c) / (exp(c) + P - 1); linear attention "
        "replaces exp(q·k) by φ(q)·φ(k)"): lambda c, P: 1 / (1 + (P - 1) * math.exp(-c)),
        N_("that is uniform weight, 1/P; the weight on item 1 grows with c (and tends to "
        "2/(P + 1))"): lambda c, P: 1 / P,
        N_("elu(c) + 1 = c + 1 for c ≥ 0 (not c)"): lambda c, P: _weight_on_first(c - 1, P),
        N_("there are P - 1 other items, not P"): lambda c, P: (
            (2 * c + P + 1) / ((2 * c + P + 1) + P * (c + P + 1))
        ),
    }  # fmt: skip
    points = [(c, P) for P in (2, 4, 16) for c in (0.0, 0.5, 1.0, 3.0, 10.0, 1000.0)]

    def formula() -> str | None:
        values = []
        for c, P in points:
            got = call(weight_on_first, c, P)
            try:
                values.append(float(got))
            except (TypeError, ValueError):
                return tr("return a number; got {got_type}").format(got_type=type(got).__name__)
        wrong = [
            (point, v)
            for point, v in zip(points, values)
            if not math.isclose(v, numeric(*point), rel_tol=1e-6, abs_tol=1e-12)
        ]
        if not wrong:
            return None
        for why, slip in slips.items():
            if all(math.isclose(v, slip(*x), rel_tol=1e-6) for x, v in zip(points, values)):
                return tr(why)
        (c, P), value = wrong[0]
        return tr(
            "for c = {c:g} and P = {P}, φ gives item 1 the weight {expected:.6g}; your formula "
            "gives {value:.6g}"
        ).format(c=c, P=P, expected=numeric(c, P), value=value)

    def limit() -> str | None:
        if formula() is not None:
            return tr("cannot check: wrong at finite c already (see above)")
        for P in (2, 8, 100):
            value = float(call(weight_on_first, 1e9, P))
            if not math.isclose(value, 2 / (P + 1), rel_tol=1e-6):
                return tr(
                    "for P = {P} and c = 10⁹ expected about 2/(P + 1) = {limit:.6g}; got {value:.6g}"
                ).format(P=P, limit=2 / (P + 1), value=value)
        return None

    def by_formula() -> str | None:
        if formula() is not None:
            return tr("cannot check: wrong at finite c already (see above)")
        P = 4096
        with LargestTensor() as sizes:
            call(weight_on_first, 3.0, P)
        if sizes.largest >= P:
            return tr(
                "for P = {P} your function makes a tensor of {largest:,} numbers: it computes the "
                "weights rather than the formula; write the weight as an expression in c and P"
            ).format(P=P, largest=sizes.largest)
        # A formula takes any P at once; P x P numbers (with NumPy, say) cannot be allocated.
        huge = 2**22
        try:
            value = float(call(weight_on_first, 3.0, huge))
        except LearnerError as exc:
            if not isinstance(exc.original, (MemoryError, RuntimeError)):
                raise
            return tr(
                "for P = {P:,} your function fails ({error}): it computes over the P items; "
                "write the weight as an expression in c and P"
            ).format(P=huge, error=type(exc.original).__name__)
        if not math.isclose(value, numeric_formula(3.0, huge), rel_tol=1e-6):
            return tr("for P = {P:,} your formula gives {value:.6g}, not {expected:.6g}").format(
                P=huge, value=value, expected=numeric_formula(3.0, huge)
            )
        return None

    report.run("the weight on item 1 for c from 0 to 1000 and P = 2, 4, 16", formula)
    report.run("tends to 2/(P + 1) as c grows", limit)
    report.run("a formula in c and P, not a computation over P items", by_formula)
    return report
