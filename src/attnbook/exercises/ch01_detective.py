"""Chapter 1's checkers: a soft dictionary lookup, and a new name in the detective's lexicon.

* ``soft_lookup(query, keys, values, temperature)`` with shapes ``(d,), (n, d), (n, dv) ->
  (dv,)``: softmax over ``keys @ query / temperature``, then the weighted average of ``values``.
  The reference is the library's attention with ``scale=1``.
* ``lexicon``: a copy of :data:`~attnbook.models.handbuilt.WORD_FEATURES` with 王 added, so that
  in 老王说他很累 the query of 他 puts most of its weight on 王.
* ``matrices = (w_q, w_k)``: two (6, 6) matrices with ``Q = X w_qᵀ`` and ``K = X w_kᵀ`` such
  that, in every sentence of :func:`~attnbook.models.handbuilt.detective_sentences`, the
  pronoun's largest weight is on its antecedent **and** the antecedent's largest weight is on
  the pronoun: the two-way lookup that a head with ``W_Q = W_K`` cannot make.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.i18n import tr
from attnbook.models.handbuilt import (
    FEATURE_INDEX,
    FEATURES,
    WORD_FEATURES,
    attend,
    detective_sentences,
    features,
)
from attnbook.tasks.vocab import tokenize

__all__ = ["check_soft_lookup", "check_new_suspect", "check_two_way_lookup"]

SoftLookup = Callable[[Tensor, Tensor, Tensor, float], Tensor]


def _reference(query: Tensor, keys: Tensor, values: Tensor, temperature: float) -> Tensor:
    output, _ = scaled_dot_product_attention(
        query[None], keys, values, scale=1.0, temperature=temperature
    )
    return output[0]


def _cases(seed: int = 0, n: int = 5, d: int = 4, dv: int = 3) -> tuple[Tensor, Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(d, generator=g),
        torch.randn(n, d, generator=g),
        torch.randn(n, dv, generator=g),
    )


def _diagnose(out: Tensor, query: Tensor, keys: Tensor, values: Tensor, temperature: float) -> str:
    if not torch.isfinite(out).all():
        return tr(
            "the output contains NaN or inf: exp() of a large score overflows (inf / inf = NaN); "
            "use torch.softmax, which subtracts the largest score first"
        )
    if torch.allclose(
        out, _reference(query, keys, values, temperature * query.numel() ** 0.5), atol=1e-5
    ):
        return tr("you also divide by √d: a soft lookup divides the scores by the temperature only")
    if torch.allclose(out, _reference(query, keys, values, 1.0 / temperature), atol=1e-5):
        return tr("you multiply the scores by the temperature; divide them by it instead")
    if temperature != 1.0 and torch.allclose(out, _reference(query, keys, values, 1.0), atol=1e-5):
        return tr("the temperature is ignored: divide the scores by it before the softmax")
    if torch.allclose(out, values.mean(0), atol=1e-5):
        return tr("you return the plain average of the values: the weights ignore the query")
    if torch.allclose(out, (keys @ query / temperature) @ values, atol=1e-4):
        return tr("you weight the values by the raw scores; apply softmax to them first")
    weights = torch.softmax(keys @ query / temperature, dim=0)
    if keys.shape == values.shape and torch.allclose(out, weights @ keys, atol=1e-5):
        return tr("you average the keys; the output is the weighted average of the VALUES")
    expected = _reference(query, keys, values, temperature)
    return tr("expected {value}, got {value2}").format(
        value=[round(x, 4) for x in expected.tolist()], value2=[round(x, 4) for x in out.tolist()]
    )


def check_soft_lookup(soft_lookup: SoftLookup) -> Report:
    """Run the reader's ``soft_lookup`` on known cases and say what is right and wrong."""
    report = Report("soft_lookup")

    def matches(temperature: float, seed: int = 0, n: int = 5, d: int = 4, dv: int = 3):
        def case() -> str | None:
            query, keys, values = _cases(seed, n, d, dv)
            out = call(soft_lookup, query, keys, values, temperature)
            problem = expect_tensor(out, (dv,), what="soft_lookup")
            if problem is not None:
                return problem + tr(" (query ({d},), keys ({n}, {d}), values ({n}, {dv}))").format(
                    d=d, n=n, dv=dv
                )
            expected = _reference(query, keys, values, temperature)
            if torch.allclose(out, expected, atol=1e-5):
                return None
            return _diagnose(out, query, keys, values, temperature)

        return case

    def convex() -> str | None:
        query, keys, _ = _cases()
        out = call(soft_lookup, query, keys, torch.ones(5, 1), 0.7)
        problem = expect_tensor(out, (1,), what="soft_lookup")
        if problem is not None:
            return problem
        if not torch.allclose(out, torch.ones(1), atol=1e-5):
            return tr(
                "with every value equal to 1 the output must be 1 (weights sum to one); got "
                "{out_tolist}"
            ).format(out_tolist=out.tolist())
        return None

    def hard_limit() -> str | None:
        _, keys, values = _cases()
        exact = keys[2] * 10
        out = call(soft_lookup, exact, keys, values, 0.01)
        best = int((keys @ exact).argmax())
        if expect_tensor(out, (3,)) is not None:
            return tr("cannot check: the result is not a tensor of shape (3,) (see above)")
        if torch.allclose(out, values[best], atol=1e-4):
            return None
        if not torch.isfinite(out).all():  # scores of several hundred at T = 0.01: exp() overflows
            return _diagnose(out, exact, keys, values, 0.01)
        return tr(
            "at a tiny temperature the lookup should return the value of the best-matching key"
        )

    def stable() -> str | None:
        query, keys, values = _cases()
        out = call(soft_lookup, query * 1000, keys, values, 1.0)
        if expect_tensor(out, (3,)) is not None:
            return tr("cannot check: the result is not a tensor of shape (3,) (see above)")
        if torch.isfinite(out).all():
            return None
        return tr("large scores overflow exp(); subtract the largest score before exponentiating")

    def unchanged() -> str | None:
        return changed_inputs(
            lambda *a: soft_lookup(*a, 0.5), ("query", "keys", "values"), *_cases(4)
        )

    report.run("equals the reference at temperature 1", matches(1.0))
    report.run("temperature 0.5 divides the scores (sharper)", matches(0.5, seed=1))
    report.run("temperature 3 divides the scores (flatter)", matches(3.0, seed=2))
    report.run("other sizes: 7 keys of size 2, values of size 5", matches(1.0, 3, n=7, d=2, dv=5))
    report.run("the weights sum to one", convex)
    report.run("temperature → 0 gives the hard lookup", hard_limit)
    report.run("stays finite for very large scores", stable)
    report.run("does not modify its inputs", unchanged)
    return report


def _weight_of(
    lexicon: Mapping[str, Sequence[float]], sentence: str, query: str, key: str
) -> float:
    tokens = tokenize(sentence)
    _, weights, _ = attend(tokens, lexicon)
    return float(weights[tokens.index(query), tokens.index(key)])


def check_new_suspect(lexicon: Mapping[str, Sequence[float]]) -> Report:
    """Check a lexicon in which 王 was added so that 他 in 老王说他很累 points at 王."""
    report = Report("a new suspect")
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
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in row):
            return tr(
                "王's features must be numbers, one per feature {FEATURES}; got {list_row}"
            ).format(FEATURES=FEATURES, list_row=list(row))
        return None

    def others_kept() -> str | None:
        missing = [t for t in WORD_FEATURES if t not in lexicon]
        changed = [
            t for t in WORD_FEATURES if t in lexicon and tuple(lexicon[t]) != WORD_FEATURES[t]
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
    report = Report("a two-way lookup")
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
