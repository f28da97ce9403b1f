"""Chapter 18's checkers: the softened distillation term, and a diversity penalty between heads.

* ``my_soft_loss(student_logits, teacher_logits, targets, temperature)``: logits (N, L, C),
  targets (N, L) with ``IGNORE`` (-100) where not scored; ``T² · KL(softmax(teacher/T) ‖
  softmax(student/T))`` summed over the classes and averaged over the scored positions — the
  soft term of :func:`attnbook.lab.tuning.distillation_loss` (``alpha = 1``).
* ``my_diversity(weights)``: one layer's weights (N, H, L, S); the cosine similarity between
  two different heads' rows, averaged over every pair of different heads and every row
  (:func:`attnbook.lab.tuning.head_diversity_penalty`, on rows that all have weight).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr
from attnbook.lab.lab_model import IGNORE
from attnbook.lab.tuning import distillation_loss, head_diversity_penalty

__all__ = ["check_soft_loss", "check_diversity"]

RTOL = 1e-4


def _logits_case(seed: int, N: int = 3, L: int = 5, C: int = 6) -> tuple[Tensor, Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    student = torch.randn(N, L, C, generator=g) * 2
    teacher = torch.randn(N, L, C, generator=g) * 3
    targets = torch.randint(C, (N, L), generator=g)
    targets[:, : L // 2] = IGNORE  # the first positions are not scored
    return student, teacher, targets


def _kl(p_log: Tensor, q_log: Tensor) -> Tensor:
    """KL(p ‖ q) per position from log-probabilities, (..., C) -> (...)."""
    return (p_log.exp() * (p_log - q_log)).sum(-1)


def _soft_variants(student: Tensor, teacher: Tensor, targets: Tensor, T: float) -> dict[str, float]:
    """What the usual mistakes compute, each as a number."""
    scored = targets != IGNORE
    N, C = student.size(0), student.size(-1)
    log_s, log_t = F.log_softmax(student / T, -1), F.log_softmax(teacher / T, -1)
    kl = _kl(log_t, log_s)
    return {
        N_("no T²"): float(kl[scored].mean()),
        "reversed": float(_kl(log_s, log_t)[scored].mean() * T * T),
        N_("teacher not softened"): float(
            _kl(F.log_softmax(teacher, -1), log_s)[scored].mean() * T * T
        ),
        N_("student not softened"): float(
            _kl(log_t, F.log_softmax(student, -1))[scored].mean() * T * T
        ),
        N_("mean over classes"): float(kl[scored].mean() * T * T / C),
        N_("every position"): float(kl.mean() * T * T),
        N_("divided by T"): float(kl[scored].mean() * T),
        N_("with cross-entropy"): float(
            kl[scored].mean() * T * T + F.cross_entropy(student[scored], targets[scored])
        ),
        N_("batchmean on (N, L, C)"): float(kl.sum() * T * T / N),
        N_("divided by N"): float(kl[scored].sum() * T * T / N),
        N_("summed over positions"): float(kl[scored].sum() * T * T),
        N_("soft cross-entropy"): float(-(log_t.exp() * log_s).sum(-1)[scored].mean() * T * T),
        N_("probabilities as log-target"): float(
            (log_t.exp().exp() * (log_t.exp() - log_s)).sum(-1)[scored].mean() * T * T
        ),
    }


SOFT_HINTS = {
    "no T²": N_(
        "you left out the T² factor: softening by T shrinks the gradients by 1/T², and "
        "multiplying by T² gives them back their size (Hinton et al. 2015)"
    ),
    "divided by T": N_("the factor is T², not T"),
    "with cross-entropy": N_(
        "you added the cross-entropy with the targets: this exercise asks for the soft term "
        "only (distillation_loss with alpha = 1)"
    ),
    "reversed": N_(
        "your KL runs the wrong way: KL(student ‖ teacher). The teacher's distribution is "
        "the target, so it weights the log-ratio: sum over classes of p_teacher · (log "
        "p_teacher - log p_student). (F.kl_div(input, target) expects the STUDENT's "
        "log-probabilities as input and the teacher's as target.)"
    ),
    "teacher not softened": N_("divide the teacher's logits by T too, not only the student's"),
    "student not softened": N_("divide the student's logits by T too, not only the teacher's"),
    "mean over classes": N_(
        "you averaged over the classes too (F.kl_div's reduction='mean' does that): sum over "
        "the classes, then average over the positions"
    ),
    "every position": N_(
        "you averaged over every position, the unscored ones too: keep only the positions "
        "whose target is not {IGNORE}"
    ),
    "batchmean on (N, L, C)": N_(
        "you applied F.kl_div(..., reduction='batchmean') to the (N, L, C) tensors: it sums "
        "over every position, the unscored ones too, and divides by N only. Select the "
        "scored positions first, (P, C), then 'batchmean' divides by P"
    ),
    "divided by N": N_(
        "you summed over the scored positions and divided by N, the number of sequences: "
        "divide by the number of scored positions instead (a mean over them)"
    ),
    "summed over positions": N_(
        "you summed over the scored positions: average over them instead, so the loss does "
        "not grow with the number of answers"
    ),
    "soft cross-entropy": N_(
        "you computed the cross-entropy with the teacher's distribution, not the KL: they "
        "differ by the teacher's entropy, which is why a student equal to its teacher does "
        "not cost 0. Use sum p_teacher · (log p_teacher - log p_student)"
    ),
    "probabilities as log-target": N_(
        "you passed the teacher's probabilities to F.kl_div with log_target=True, which "
        "expects log-probabilities: pass log_softmax(teacher / T), or softmax with "
        "log_target=False"
    ),
}


def check_soft_loss(my_soft_loss: Callable[[Tensor, Tensor, Tensor, float], Tensor]) -> Report:
    """Chapter 18: T² · KL(teacher_T ‖ student_T), summed over classes, mean over scored positions."""
    report = Report(N_("softened distillation loss"), refused=library(distillation_loss))

    def case(seed: int, T: float) -> Callable[[], str | None]:
        def run() -> str | None:
            student, teacher, targets = _logits_case(seed)
            out = call(my_soft_loss, student, teacher, targets, T)
            problem = expect_tensor(out, (), what="my_soft_loss")
            if problem is not None:
                return problem
            expected = float(distillation_loss(student, teacher, targets, T, alpha=1.0))
            got = float(out.detach())
            if abs(got - expected) <= RTOL * max(1.0, abs(expected)):
                return None
            for name, value in _soft_variants(student, teacher, targets, T).items():
                if abs(got - value) <= RTOL * max(1.0, abs(value)):
                    return tr(SOFT_HINTS[name]).format(IGNORE=IGNORE)
            return tr("expected {expected:.5f}, got {got:.5f}").format(expected=expected, got=got)

        return run

    def same_is_zero() -> str | None:
        student, _, targets = _logits_case(3)
        out = call(my_soft_loss, student, student.clone(), targets, 2.0)
        problem = expect_tensor(out, (), what="my_soft_loss")
        if problem is not None:
            return problem
        got = float(out.detach())
        if abs(got) <= 1e-5:
            return None
        scored = targets != IGNORE
        ce = float(F.cross_entropy(student[scored], targets[scored]))
        if abs(got - ce) <= RTOL * max(1.0, ce):
            return tr(
                "a student equal to its teacher must cost 0; got {got:.5f}, the cross-entropy with "
                "the targets: this term is the soft one only"
            ).format(got=got)
        variants = _soft_variants(student, student.clone(), targets, 2.0)
        for name in ("soft cross-entropy", "probabilities as log-target"):
            if abs(got - variants[name]) <= RTOL * max(1.0, abs(variants[name])):
                return tr("a student equal to its teacher must cost 0; got {got:.5f}: ").format(
                    got=got
                ) + tr(SOFT_HINTS[name]).format(IGNORE=IGNORE)
        return tr(
            "a student equal to its teacher must cost 0; got {got:.5f}: the two distributions "
            "must be the same, so soften both logits by the same T"
        ).format(got=got)

    def gradient() -> str | None:
        student, teacher, targets = _logits_case(4)
        out = call(my_soft_loss, student.requires_grad_(True), teacher, targets, 2.0)
        expected = float(distillation_loss(student.detach(), teacher, targets, 2.0, alpha=1.0))
        if not isinstance(out, Tensor) or out.shape != ():
            return tr("cannot check: the loss is not a scalar tensor (see above)")
        if abs(float(out.detach()) - expected) > RTOL * max(1.0, abs(expected)):
            return tr("cannot check the gradient: the loss is wrong already (see above)")
        if not out.requires_grad:
            return tr(
                "the result carries no gradient: compute it with torch operations, not .item()"
            )
        return None

    report.run("a student equal to its teacher costs 0", same_is_zero)
    report.run("temperature 2", case(0, 2.0))
    report.run("temperature 4", case(1, 4.0))
    report.run("temperature 1 (no softening)", case(2, 1.0))
    report.run("the loss has a gradient", gradient)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            lambda s, t, y: my_soft_loss(s, t, y, 2.0),
            ("student_logits", "teacher_logits", "targets"),
            *_logits_case(5),
        ),
    )
    return report


def _maps_case(seed: int, N: int = 2, H: int = 3, L: int = 4, S: int = 5) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(N, H, L, S, generator=g) * 2, dim=-1)


def _diversity_variants(w: Tensor) -> dict[str, float]:
    H = w.size(1)
    unit = F.normalize(w, dim=-1)
    cos = torch.einsum("nals,nbls->nabl", unit, unit).mean((0, 3))  # (H, H)
    dots = torch.einsum("nals,nbls->nabl", w, w).mean((0, 3))
    flat = F.normalize(w.flatten(2), dim=-1)  # each head's whole map as one vector
    whole = torch.einsum("nax,nbx->nab", flat, flat).mean(0)
    off = ~torch.eye(H, dtype=torch.bool)
    unit_q = F.normalize(w, dim=-2)  # normalised over the queries instead of the keys
    over_queries = torch.einsum("nals,nbls->nabl", unit_q, unit_q).mean((0, 3))
    return {
        N_("over queries"): float(over_queries[off].mean()),
        "diagonal": float(cos.mean()),
        "dot": float(dots[off].mean()),
        N_("whole map"): float(whole[off].mean()),
        N_("one minus"): float(1 - cos[off].mean()),
        N_("divided by H²"): float(cos[off].sum() / (H * H)),
        N_("summed over pairs"): float(cos[off].sum()),
        N_("summed over unordered pairs"): float(cos[off].sum() / 2),
    }


DIVERSITY_HINTS = {
    "over queries": N_(
        "you normalised along the queries (dim -2); a row is one query's weights over the "
        "keys: normalise along the last dimension"
    ),
    "diagonal": N_(
        "you included each head's similarity with itself (always 1); average over pairs of "
        "DIFFERENT heads only"
    ),
    "dot": N_(
        "you used plain dot products; divide each row by its length first (cosine "
        "similarity), or two sharp heads on different keys and two flat heads on the same "
        "keys score alike"
    ),
    "whole map": N_(
        "you compared each head's whole (L, S) map as one vector; compare row by row (one "
        "query at a time) and average the cosines"
    ),
    "one minus": N_(
        "you returned 1 - similarity (a distance): the penalty is the similarity itself, "
        "high when heads look alike"
    ),
    "divided by H²": N_(
        "you divided the sum over pairs of different heads by H², which counts the H pairs "
        "of a head with itself too: divide by H · (H - 1), the number of pairs of different "
        "heads"
    ),
    "summed over pairs": N_(
        "you summed over the pairs of heads: average over them, so the penalty stays in [0, "
        "1] whatever the number of heads"
    ),
    "summed over unordered pairs": (
        "you summed over the pairs of heads: average over them, so the penalty stays in [0, "
        "1] whatever the number of heads"
    ),
}


def check_diversity(my_diversity: Callable[[Tensor], Tensor]) -> Report:
    """Chapter 18: mean cosine similarity of rows between different heads."""
    report = Report(N_("head diversity penalty"), refused=library(head_diversity_penalty))

    def known() -> str | None:
        apart = F.one_hot(torch.tensor([[0, 1], [1, 0]]), 2).float()[None]  # (1, 2, 2, 2)
        same = F.one_hot(torch.tensor([[0, 1], [0, 1]]), 2).float()[None]
        outs = [call(my_diversity, maps) for maps in (apart, same)]
        one_minus = all(  # 1 for heads apart and 0 for copies: the distance, not the similarity
            isinstance(out, Tensor) and out.shape == () and abs(float(out.detach()) - want) <= RTOL
            for out, want in zip(outs, (1.0, 0.0))
        )
        for out, value, what in (
            (outs[0], 0.0, tr("never share a key")),
            (outs[1], 1.0, tr("are copies")),
        ):
            problem = expect_tensor(out, (), what="my_diversity")
            if problem is not None:
                return problem
            got = float(out.detach())
            if abs(got - value) > 1e-5:
                if one_minus:
                    hint = tr(DIVERSITY_HINTS["one minus"])
                    return tr("two heads that {what} must score {value}; {hint}").format(
                        what=what, value=value, hint=hint
                    )
                return tr("two heads that {what} must score {value}; got {got:.4f}").format(
                    what=what, value=value, got=got
                )
        return None

    def case(seed: int, H: int) -> Callable[[], str | None]:
        def run() -> str | None:
            w = _maps_case(seed, H=H)
            out = call(my_diversity, w)
            problem = expect_tensor(out, (), what="my_diversity")
            if problem is not None:
                return problem
            expected, got = float(head_diversity_penalty(w)), float(out.detach())
            if abs(got - expected) <= RTOL:
                return None
            for name, value in _diversity_variants(w).items():
                if abs(got - value) <= RTOL:
                    return tr(DIVERSITY_HINTS[name])
            return tr("expected {expected:.5f}, got {got:.5f}").format(expected=expected, got=got)

        return run

    report.run("hand-built heads: apart 0, copies 1", known)
    report.run("3 random heads", case(0, 3))
    report.run("4 random heads", case(1, 4))
    report.run(
        "does not modify its input",
        lambda: changed_inputs(my_diversity, ("weights",), _maps_case(2)),
    )
    return report
