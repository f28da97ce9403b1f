"""Chapter 2's numeric answers: the variance of q · k, and the temperature that sharpens 他.

Chapter 4's cost exercise, where BERT-base spends its attention FLOPs and memory, is checked here
too (:func:`check_bert_cost`): it was chapter 2's until the cost section moved to chapter 4.
"""

from __future__ import annotations

import math
import numbers

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report
from attnbook.i18n import N_, tr
from attnbook.measure import cost
from attnbook.models import handbuilt
from attnbook.tasks.vocab import tokenize

__all__ = ["check_variance", "check_largest_temperature", "check_bert_cost"]


def check_variance(variance: float, divisor: float) -> Report:
    """Check the variance of q · k for components of variance σ² = 4 and d_k = 64, and the
    divisor that brings the scores back to variance 1."""
    report = Report(N_("scaling for other variances"))
    sigma2, d = 4.0, 64

    def variance_case() -> str | None:
        if abs(variance - d * sigma2**2) < 1e-6:
            return None
        if abs(variance - d * sigma2) < 1e-6:
            return tr("each term q_i k_i has variance E[q_i²] E[k_i²] = σ² · σ² = σ⁴, not σ²")
        if abs(variance - d) < 1e-6:
            return tr("that is the variance for σ = 1; here σ = 2")
        return tr("expected d_k σ⁴ = {d_sigma2_2:g}, got {variance}").format(
            d_sigma2_2=d * sigma2**2, variance=variance
        )

    def divisor_case() -> str | None:
        if abs(divisor - sigma2 * d**0.5) < 1e-6:
            return None
        if abs(divisor - d**0.5) < 1e-6:
            return tr("√d_k alone is right only for σ = 1: divide by σ²√d_k")
        if abs(divisor - sigma2**0.5 * d**0.5) < 1e-6:
            return tr(
                "σ√d_k is the square root of d_k σ², but each term q_i k_i has variance σ⁴: the "
                "standard deviation of q · k is √(d_k σ⁴) = σ²√d_k"
            )
        if abs(divisor - d * sigma2**2) < 1e-6:
            return tr("divide by the standard deviation (the square root of the variance)")
        return tr("expected σ²√d_k = {sigma2_d_0_5:g}, got {divisor}").format(
            sigma2_d_0_5=sigma2 * d**0.5, divisor=divisor
        )

    report.run("Var(q · k) for σ = 2, d_k = 64", variance_case)
    report.run("the divisor that gives variance 1", divisor_case)
    return report


# Chapter 2's example: chapter 1's sentence and features, the query of 他, the key of 张.
SENTENCE, QUERY, KEY, TARGET = "老张对小丽说他很累", "他", "张", 0.9
# The answer is asked for to three decimals; it may lie below the true threshold by up to
# TOLERANCE, but never above it: above, 张 gets less than 0.9.
TOLERANCE = 0.001


def weight_on_key(temperature: float, scale: float | None = None) -> float:
    """The weight that 他's query gives 张 in chapter 2's example at this temperature."""
    tokens = tokenize(SENTENCE)
    q, k, v = handbuilt.queries_keys_values(handbuilt.features(tokens))  # (S, 6) each
    row = tokens.index(QUERY)
    _, weights = scaled_dot_product_attention(
        q[row : row + 1], k, v, scale=scale, temperature=temperature
    )  # (1, S)
    return weights[0, tokens.index(KEY)].item()


def largest_temperature(scale: float | None = None) -> float:
    """The largest T at which 张 gets at least 0.9 of 他's weight (the weight falls as T rises)."""
    low, high = 1e-3, 1e3
    for _ in range(80):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if weight_on_key(middle, scale) >= TARGET else (low, middle)
    return low


def check_largest_temperature(temperature: float) -> Report:
    """Check the largest temperature at which 张 gets at least 0.9 of 他's weight in chapter 2's
    example (scores divided by √d_k, then by T). The tolerance is one-sided: an answer up to
    ``TOLERANCE`` below the threshold passes, one above it (where 张 gets less than 0.9) fails."""
    report = Report(N_("the largest temperature that gives 张 0.9"))

    def case() -> str | None:
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
            return tr("answer with a number; got {temperature_type}").format(
                temperature_type=type(temperature).__name__
            )
        T = float(temperature)
        if not math.isfinite(T) or T <= 0:
            return tr("a temperature must be a positive number; got {temperature}").format(
                temperature=temperature
            )
        expected = largest_temperature()
        if expected - TOLERANCE <= T <= expected * (1 + 1e-9):
            return None
        if expected < T <= expected + TOLERANCE:
            return tr(
                "at T = {T:g} 张 gets {weight_on_key_T:.4f}, just under {TARGET}: the largest T lies "
                "below your answer; round down to three decimals, not up or to the nearest"
            ).format(T=T, weight_on_key_T=weight_on_key(T), TARGET=TARGET)
        if abs(1 / T - expected) <= TOLERANCE:
            return tr("the scores are divided by T, not multiplied: your answer is 1/T")
        if T >= 1:
            return tr(
                "at T = {T:g} 张 gets {weight_on_key_T:.2f}: a temperature above 1 flattens the "
                "weights; to sharpen them, T must be below 1"
            ).format(T=T, weight_on_key_T=weight_on_key(T))
        if abs(T - largest_temperature(scale=1.0)) <= TOLERANCE:
            return tr(
                "that threshold leaves out the division by √d_k (chapter 1's scale=1); this "
                "chapter's scores are Q·Kᵀ/√d_k, then divided by T"
            )
        weight = weight_on_key(T)
        if weight < TARGET:
            return tr(
                "at T = {T:g} 张 gets only {weight:.4f} < {TARGET}: the answer is smaller"
            ).format(T=T, weight=weight, TARGET=TARGET)
        return tr(
            "at T = {T:g} 张 gets {weight:.3f} ≥ {TARGET}, but a larger temperature still does: "
            "find the largest one (to three decimals)"
        ).format(T=T, weight=weight, TARGET=TARGET)

    report.run("the largest T with weight ≥ 0.9 on 张", case)
    return report


def check_bert_cost(
    projection_flops: int,
    core_flops: int,
    crossover: int,
    memory_crossover: int | None = None,
) -> Report:
    """Check one BERT-base layer (E = 768, H = 12) at n = 512: the FLOPs of the four projections,
    of the attention core, the length at which the core costs as many FLOPs as the projections,
    and the length from which the H·n² weights take at least as much memory as Q, K, V and the
    output (4·n·E numbers). All four are asked for: a missing ``memory_crossover`` is a failed
    line, not a skipped one."""
    report = Report(N_("where BERT-base spends its attention FLOPs and memory"))
    truth = {
        N_("the four projections"): (cost.projection_flops(512, 512, 768), projection_flops),
        N_("the attention core"): (cost.attention_flops(512, 512, 768, 12), core_flops),
    }
    for name, (expected, answer) in truth.items():

        def case(expected: int = expected, answer: int = answer) -> str | None:
            if answer == expected:
                return None
            if answer * 4 == expected * 3:
                return tr(
                    "that is three projections (Q, K, V); the output projection W_O is the fourth: 4 · "
                    "2nE² = 8nE² FLOPs"
                )
            if answer * 2 == expected:
                return tr(
                    "half the expected: did you count multiply-adds (each is 2 FLOPs), or leave out half "
                    "of the products (Q·Kᵀ and weights·V; four projections, not two)?"
                )
            return tr("expected {expected:,}, got {answer:,}").format(
                expected=expected, answer=answer
            )

        report.run(name, case)

    def crossover_case() -> str | None:
        expected = cost.crossover_length(768, 12)
        if crossover == expected:
            return None
        if crossover == 768:
            return tr("the core (4n²E) equals the projections (8nE²) at n = 2E, not n = E")
        if crossover == 3 * 768 // 2:
            return tr(
                "n = 1.5E is where the core catches up with three projections (6nE²); with the "
                "output projection there are four (8nE²), so n = 2E"
            )
        return tr("expected n = {expected}, got {crossover}").format(
            expected=expected, crossover=crossover
        )

    report.run("the length where the core catches up in FLOPs", crossover_case)

    def memory_case() -> str | None:
        expected = 4 * 768 // 12  # H·n² ≥ 4·n·E  ⇔  n ≥ 4E/H
        if memory_crossover is None:
            return tr("missing: pass the fourth answer, memory_crossover, to have it checked")
        if memory_crossover == expected:
            return None
        if memory_crossover == 4 * 768:
            return tr("the weights are H·n² numbers, one n × n matrix per head: divide by H")
        if memory_crossover == 768 // 12:
            return tr("Q, K, V and the output are four n × E tensors: 4·n·E numbers, not n·E")
        if memory_crossover == 2 * 768:
            return tr("that is the FLOP crossover; memory compares H·n² weights with 4·n·E numbers")
        return tr("expected n = 4E/H = {expected}, got {memory_crossover}").format(
            expected=expected, memory_crossover=memory_crossover
        )

    report.run("the length where the weights outgrow Q, K, V and the output", memory_case)
    return report
