"""Chapter 2's numeric answers: the variance of q · k, and where BERT-base spends its FLOPs."""

from __future__ import annotations

from attnbook.exercises.report import Report
from attnbook.measure import cost

__all__ = ["check_variance", "check_bert_cost"]


def check_variance(variance: float, divisor: float) -> Report:
    """Check the variance of q · k for components of variance σ² = 4 and d_k = 64, and the
    divisor that brings the scores back to variance 1."""
    report = Report("scaling for other variances")
    sigma2, d = 4.0, 64

    def variance_case() -> str | None:
        if abs(variance - d * sigma2**2) < 1e-6:
            return None
        if abs(variance - d * sigma2) < 1e-6:
            return "each term q_i k_i has variance E[q_i²] E[k_i²] = σ² · σ² = σ⁴, not σ²"
        if abs(variance - d) < 1e-6:
            return "that is the variance for σ = 1; here σ = 2"
        return f"expected d_k σ⁴ = {d * sigma2**2:g}, got {variance}"

    def divisor_case() -> str | None:
        if abs(divisor - sigma2 * d**0.5) < 1e-6:
            return None
        if abs(divisor - d**0.5) < 1e-6:
            return "√d_k alone is right only for σ = 1: divide by σ²√d_k"
        if abs(divisor - d * sigma2**2) < 1e-6:
            return "divide by the standard deviation (the square root of the variance)"
        return f"expected σ²√d_k = {sigma2 * d**0.5:g}, got {divisor}"

    report.run("Var(q · k) for σ = 2, d_k = 64", variance_case)
    report.run("the divisor that gives variance 1", divisor_case)
    return report


def check_bert_cost(projection_flops: int, core_flops: int, crossover: int) -> Report:
    """Check one BERT-base layer (d = 768, h = 12) at n = 512: the FLOPs of the four projections,
    of the attention core, and the length at which the core costs as much as the projections."""
    report = Report("where BERT-base spends its attention FLOPs")
    truth = {
        "the four projections": (cost.projection_flops(512, 512, 768), projection_flops),
        "the attention core": (cost.attention_flops(512, 512, 768, 12), core_flops),
    }
    for name, (expected, answer) in truth.items():

        def case(expected: int = expected, answer: int = answer) -> str | None:
            if answer == expected:
                return None
            if answer * 2 == expected:
                return (
                    "half the expected: did you count multiply-adds (each is 2 FLOPs), or leave out "
                    "half of the products (Q·Kᵀ and weights·V; four projections, not two)?"
                )
            return f"expected {expected:,}, got {answer:,}"

        report.run(name, case)

    def crossover_case() -> str | None:
        expected = cost.crossover_length(768, 12)
        if crossover == expected:
            return None
        if crossover == 768:
            return "the core (4n²d) equals the projections (8nd²) at n = 2d, not n = d"
        return f"expected n = {expected}, got {crossover}"

    report.run("the length where the core catches up", crossover_case)
    return report
