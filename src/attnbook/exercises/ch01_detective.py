"""Chapter 1's checkers of the hand-built detective: a new name in its lexicon, and a two-way
lookup.

* ``lexicon``: a copy of :data:`~attnbook.models.handbuilt.WORD_FEATURES` with 王 added, so that
  in 老王说他很累 the query of 他 puts most of its weight on 王.
* ``matrices = (w_q, w_k)``: two (6, 6) matrices with ``Q = X w_qᵀ`` and ``K = X w_kᵀ`` such
  that, in every sentence of :func:`~attnbook.models.handbuilt.detective_sentences`, the
  pronoun's largest weight is on its antecedent **and** the antecedent's largest weight is on
  the pronoun: the two-way lookup that a head with ``W_Q = W_K`` cannot make.

The soft lookup and the temperature question are checked in :mod:`attnbook.exercises.ch01_lookup`
(and exported from :mod:`attnbook.exercises` as well).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report
from attnbook.i18n import N_, tr
from attnbook.models.handbuilt import (
    FEATURE_INDEX,
    FEATURES,
    WORD_FEATURES,
    attend,
    detective_sentences,
    features,
)
from attnbook.tasks.vocab import tokenize

__all__ = ["check_new_suspect", "check_two_way_lookup"]


def _is_number(x: object) -> bool:
    """A real number: a Python or NumPy one, or a one-element tensor (features() gives those)."""
    if isinstance(x, Tensor):
        return x.numel() == 1 and not x.dtype.is_complex and x.dtype != torch.bool
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _numbers(row: object) -> tuple | None:
    """A row of features as a tuple of floats (None if it is not one)."""
    try:
        values = list(row)  # type: ignore[call-overload]
    except TypeError:
        return None
    return tuple(float(x) for x in values) if all(_is_number(x) for x in values) else None


def _weight_of(
    lexicon: Mapping[str, Sequence[float]], sentence: str, query: str, key: str
) -> float:
    tokens = tokenize(sentence)
    _, weights, _ = attend(tokens, lexicon)
    return float(weights[tokens.index(query), tokens.index(key)])


def check_new_suspect(lexicon: Mapping[str, Sequence[float]]) -> Report:
    """Check a lexicon in which 王 was added so that 他 in 老王说他很累 points at 王."""
    report = Report(N_("a new suspect"))
    sentence = "老王说他很累"

    def has_wang() -> str | None:
        if not isinstance(lexicon, Mapping):
            return tr("pass the lexicon, a dict from token to features; got {lexicon_type}").format(
                lexicon_type=type(lexicon).__name__
            )
        if "王" not in lexicon:
            return tr("王 is not in your lexicon: add lexicon['王'] = (...six features...)")
        row = lexicon["王"]
        if len(row) != len(FEATURES):
            return tr("王 needs one number per feature {FEATURES}; got {len_row} numbers").format(
                FEATURES=FEATURES, len_row=len(row)
            )
        if not all(_is_number(x) for x in row):
            return tr(
                "王's features must be numbers, one per feature {FEATURES}; got {list_row}"
            ).format(FEATURES=FEATURES, list_row=list(row))
        return None

    def others_kept() -> str | None:
        if not isinstance(lexicon, Mapping):
            return tr("cannot check: pass the lexicon as a dict first (see above)")
        missing = [t for t in WORD_FEATURES if t not in lexicon]
        changed = [
            t for t in WORD_FEATURES if t in lexicon and _numbers(lexicon[t]) != WORD_FEATURES[t]
        ]
        if missing:
            return tr("start from a copy of WORD_FEATURES: {join_missing_6}... are missing").format(
                join_missing_6="".join(missing[:6])
            )
        if changed:
            return tr("only add 王; you changed {changed_4}").format(changed_4=changed[:4])
        return None

    def points_at_wang() -> str | None:
        if has_wang() is not None:
            return tr("cannot check: add 王 first (see above)")
        if others_kept() is not None:
            return tr("cannot check: keep every other token's features first (see above)")
        tokens = tokenize(sentence)
        _, weights, _ = attend(tokens, lexicon)
        row = weights[tokens.index("他")]
        best = tokens[int(row.argmax())]
        if best == "王":
            return None
        wang = lexicon["王"]
        if wang[FEATURE_INDEX["female"]] > 0:
            return tr("王 has the features of a woman: 他 looks for a male person")
        if wang[FEATURE_INDEX["pronoun"]] > 0:
            return tr("王 is marked as a pronoun: 他 looks for a person who is NOT a pronoun")
        if wang[FEATURE_INDEX["person"]] <= 0:
            return tr("王 is not marked as a person")
        return tr("他 puts most of its weight on {best} ({float_row_max:.2f}), not on 王").format(
            best=best, float_row_max=float(row.max())
        )

    report.run("王 is in the lexicon with one value per feature", has_wang)
    report.run("every other token keeps its features", others_kept)
    report.run("in 老王说他很累, 他 puts its largest weight on 王", points_at_wang)
    return report


def _misses(w_q: Tensor, w_k: Tensor, back: bool) -> list[tuple[str, str, str]]:
    """(sentence, query token, token it weights most) for every sentence where the lookup fails.

    The forward lookup is pronoun → antecedent, ``back`` is antecedent → pronoun. A tie for the
    largest weight counts as a miss.
    """
    misses = []
    for s in detective_sentences():
        x = features(s.tokens)  # (L, 6)
        _, weights = scaled_dot_product_attention(x @ w_q.T, x @ w_k.T, x, scale=1.0)
        query, target = (s.antecedent, s.pronoun) if back else (s.pronoun, s.antecedent)
        row = weights[query].clone()
        right = float(row[target])
        row[target] = -1.0
        if right <= float(row.max()):
            misses.append(("".join(s.tokens), s.tokens[query], s.tokens[int(row.argmax())]))
    return misses


def check_two_way_lookup(matrices: Sequence[Tensor]) -> Report:
    """Check ``(w_q, w_k)``: pronouns find their antecedents and antecedents look back."""
    report = Report(N_("a two-way lookup"))
    d = len(FEATURES)

    def shapes() -> str | None:
        if not isinstance(matrices, (tuple, list)) or len(matrices) != 2:
            return tr("pass a pair (w_q, w_k); got {matrices_type}").format(
                matrices_type=type(matrices).__name__
            )
        for name, m in zip(("w_q", "w_k"), matrices):
            if not isinstance(m, Tensor) or not m.dtype.is_floating_point:
                kind = m.dtype if isinstance(m, Tensor) else type(m).__name__
                return tr("{name} must be a floating-point tensor; got {kind}").format(
                    name=name, kind=kind
                )
            if tuple(m.shape) != (d, d):
                return tr(
                    "{name} must have shape ({d}, {d}) (one row per query/key feature, one column per "
                    "input feature {FEATURES}); got {m_shape}"
                ).format(name=name, d=d, FEATURES=FEATURES, m_shape=tuple(m.shape))
        return None

    def untied() -> str | None:
        if shapes() is not None:
            return tr("cannot check: pass two (6, 6) tensors first (see above)")
        w_q, w_k = (m.detach().float() for m in matrices)
        if torch.equal(w_q, w_k):
            return tr(
                "w_q equals w_k: then 他 scores 张 exactly as 张 scores 他, and by Cauchy–Schwarz they "
                "cannot both prefer the other to themselves; make the two matrices differ"
            )
        return None

    def lookup(back: bool):
        def case() -> str | None:
            if shapes() is not None:
                return tr("cannot check: pass two (6, 6) tensors first (see above)")
            w_q, w_k = (m.detach().float() for m in matrices)
            misses = _misses(w_q, w_k, back)
            if not misses:
                return None
            sentence, query, best = misses[0]
            total = len(detective_sentences())
            hint = (
                tr(
                    "the antecedent's query must seek the pronoun feature, more than the features it "
                    "shares with itself"
                )
                if back
                else tr(
                    "check that the pronoun still seeks a person of its gender, more than it seeks itself"
                )
            )
            return tr(
                "fails in {len_misses} of {total} sentences, e.g. {sentence}: {query} puts its "
                "largest weight on {best}; {hint}"
            ).format(
                len_misses=len(misses),
                total=total,
                sentence=sentence,
                query=query,
                best=best,
                hint=hint,
            )

        return case

    report.run("two (6, 6) matrices", shapes)
    report.run("W_Q and W_K differ", untied)
    report.run("every pronoun puts its largest weight on its antecedent", lookup(back=False))
    report.run("every antecedent puts its largest weight on its pronoun", lookup(back=True))
    return report
