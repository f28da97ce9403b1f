"""Chapter 7's checkers: measure heads on sentences, and a fairer baseline.

* ``my_head_hits(weights, pronoun, antecedent)``: weights (N, H, S, S) of one layer; for each
  head, the fraction of sentences whose pronoun row has its largest weight on the antecedent;
  returns (H,).
* ``my_binding(weights, names, actions)``: weights (N, H, S, S); names and actions (N, P), the
  positions of each person's name and of their action; the mean weight from each name to its own
  action, over people and sentences; returns (H,).
* ``my_baseline(example)``: the position of the nearest name before the pronoun that has the
  pronoun's gender (an :class:`~attnbook.tasks.coref.Example` in, an int out).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import (
    LearnerError,
    Refused,
    Report,
    as_int,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr
from attnbook.interp.coref_heads import name_action_weight, pronoun_hits
from attnbook.tasks.coref import LEXICON, CorefTask, Example

__all__ = ["check_head_hits", "check_binding", "check_gender_baseline"]

ATOL = 1e-5


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=ATOL)


def _tensor_cases(
    report: Report,
    fn: Callable[..., Tensor],
    cases: dict[str, tuple[Tensor, ...]],
    reference: Callable[..., Tensor],
    mistakes: dict[str, Callable[..., Tensor]],
    what: str,
) -> None:
    """Run ``fn`` on every case first, then report each case.

    A mistake is named only when its rule gives the learner's answer in *every* case and no
    other rule does; an answer that matches a rule by chance in one case gets the plain
    expected/got line instead of a wrong diagnosis.
    """
    outs: dict[str, Tensor | LearnerError] = {}
    with report.refusing():
        for description, args in cases.items():
            try:
                outs[description] = call(fn, *args)
            except LearnerError as exc:
                outs[description] = exc

    def explains(rule: Callable[..., Tensor]) -> bool:
        return all(
            isinstance(out, Tensor) and _close(out, rule(*cases[d])) for d, out in outs.items()
        )

    named = [why for why, rule in mistakes.items() if explains(rule)]
    why = tr(named[0]) if len(named) == 1 else None

    def case(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            out, args = outs[description], cases[description]
            if isinstance(out, LearnerError):
                raise out
            expected = reference(*args)
            problem = expect_tensor(out, tuple(expected.shape), what=what)
            if problem is not None or _close(out, expected):
                return problem
            return why or (
                tr("expected {value}, got {value2}").format(
                    value=[round(x, 3) for x in expected.tolist()],
                    value2=[round(x, 3) for x in out.tolist()],
                )
            )

        return run

    for description in cases:
        report.run(description, case(description))


def _on_antecedent(weights: Tensor, pronoun: Tensor, antecedent: Tensor) -> Tensor:
    rows = weights[torch.arange(len(pronoun)), :, pronoun]  # (N, H, S)
    return rows.gather(-1, antecedent[:, None, None].expand(-1, rows.size(1), 1))[..., 0]  # (N, H)


_HITS_MISTAKES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    N_(
        "you read the pronoun's column (who attends TO it); read its row: "
        "weights[n, h, pronoun[n], :] is where the pronoun looks"
    ): lambda w, p, a: pronoun_hits(w.transpose(-1, -2), p, a),
    N_("you average the weight on the antecedent; count how often it is the LARGEST weight"): (
        lambda w, p, a: _on_antecedent(w, p, a).mean(0)
    ),
    N_(
        "you count weights above 0.5; the antecedent can be the largest weight of its row "
        "with less than half of it (head 1 here: 0.4): compare with the row's argmax"
    ): (lambda w, p, a: (_on_antecedent(w, p, a) > 0.5).float().mean(0)),
    N_("you count the hits; divide by the number of sentences to get a fraction"): (
        lambda w, p, a: pronoun_hits(w, p, a) * len(p)
    ),
    N_(
        "weights[:, :, pronoun] takes every sentence's row at every sentence's pronoun "
        "position; pair them: weights[torch.arange(N), :, pronoun]"
    ): (lambda w, p, a: (w[:, :, p].argmax(-1) == a[:, None, None]).float().mean((0, 2))),
}


def check_head_hits(my_head_hits: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the fraction of sentences where each head's pronoun row peaks on the antecedent."""
    report = Report(N_("head hits"), refused=library(pronoun_hits))
    cases = {
        N_("6 sentences, 3 heads, one peaking at 0.4"): random_attention(0, 6, 3, 7),
        "9 sentences, 2 heads, 10 positions": random_attention(1, 9, 2, 10),
        N_("1 sentence, 4 heads"): random_attention(2, 1, 4, 6),
    }
    cases = {d: (w, p, a) for d, (w, _, p, a) in cases.items()}
    _tensor_cases(report, my_head_hits, cases, pronoun_hits, _HITS_MISTAKES, "my_head_hits")
    weights, _, pronoun, antecedent = random_attention(3)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            my_head_hits, ("weights", "pronoun", "antecedent"), weights, pronoun, antecedent
        ),
    )
    return report


def _people(seed: int, N: int, P: int, S: int) -> tuple[Tensor, Tensor]:
    """Distinct name positions and, for each, an action position a little after it."""
    g = torch.Generator().manual_seed(seed)
    names = torch.stack([torch.randperm(S - 2, generator=g)[:P].sort().values for _ in range(N)])
    actions = names + torch.randint(1, 3, (N, P), generator=g)
    return names, actions


def _every_pair(w: Tensor, names: Tensor, actions: Tensor) -> Tensor:
    return torch.stack(
        [w[n][:, names[n]][:, :, actions[n]].mean((1, 2)) for n in range(len(names))]
    ).mean(0)


_BINDING_MISTAKES: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    N_("you read the action's row (where it looks); read each NAME's row"): lambda w, nm, ac: (
        name_action_weight(w.transpose(-1, -2), nm, ac)
    ),
    N_(
        "you average every name's weight on every action; take each name's weight on its OWN "
        "action only (the diagonal)"
    ): _every_pair,
    N_("you sum; take the mean over people and sentences"): lambda w, nm, ac: (
        name_action_weight(w, nm, ac) * nm.numel()
    ),
    N_(
        "you read each name's weight on the NEXT token; the action is at actions[n, p], and an "
        "adverb can stand in between"
    ): lambda w, nm, ac: name_action_weight(w, nm, nm + 1),
}


def check_binding(my_binding: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the mean weight from each name to its own action, per head."""
    report = Report(N_("binding head"), refused=library(name_action_weight))
    cases = {
        N_("6 sentences, 3 heads, 3 people"): (
            random_attention(0, 6, 3, 9)[0],
            *_people(0, 6, 3, 9),
        ),
        N_("4 sentences, 2 heads, 5 people"): (
            random_attention(1, 4, 2, 12)[0],
            *_people(1, 4, 5, 12),
        ),
    }
    _tensor_cases(report, my_binding, cases, name_action_weight, _BINDING_MISTAKES, "my_binding")
    weights, _, _, _ = random_attention(2, 3, 2, 8)
    names, actions = _people(2, 3, 2, 8)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            my_binding, ("weights", "names", "actions"), weights, names, actions
        ),
    )
    return report


def _names_of(example: Example, gender: str) -> list[int]:
    lex = LEXICON[example.language]
    return [c for c, name in zip(example.candidates, example.names) if name in lex[gender]]


def _gender(example: Example, opposite: bool = False) -> str:
    lex = LEXICON[example.language]
    male = example.tokens[example.pronoun] == lex["pronoun"]["male"]
    return "male" if male != opposite else "female"


def _nearest_of(example: Example, gender: str) -> int:
    return max((c for c in _names_of(example, gender) if c < example.pronoun), default=-1)


_BASELINE_MISTAKES: dict[str, Callable[[Example], int]] = {
    N_(
        "you return example.antecedent, the answer itself; the baseline must find the name from "
        "the pronoun's gender and the names' positions alone"
    ): lambda e: e.antecedent,
    N_("you ignore gender: only names of the pronoun's gender count"): lambda e: (
        e.nearest_preceding_name()
    ),
    N_(
        "you take the other gender's names: read the pronoun's gender in its own language (他 is male)"
    ): (lambda e: _nearest_of(e, _gender(e, opposite=True))),
    N_(
        "you read the gender in English only (tokens[pronoun] == 'he'); read it in the sentence's "
        'own language, LEXICON[language]["pronoun"] (他 is male)'
    ): lambda e: _nearest_of(e, "male" if e.tokens[e.pronoun] == "he" else "female"),
    N_("you take the FIRST name of the right gender; take the nearest one"): (
        lambda e: min(_names_of(e, _gender(e)))
    ),
    N_(
        "return the name's POSITION in the sentence (an index into tokens), not its index among the "
        "candidates"
    ): lambda e: e.candidates.index(e.nearest_preceding_name(same_gender=True)),
    N_("only names BEFORE the pronoun count"): (
        lambda e: min(_names_of(e, _gender(e)), key=lambda c: (abs(c - e.pronoun), c > e.pronoun))
    ),
}


def _name_after_the_pronoun() -> Example:
    """Generated sentences never name anyone after the pronoun; this one does, right next to
    it, so "the nearest name of that gender in either direction" picks the wrong one."""
    base = CorefTask("en").examples(1, "test", seed=11)[0]
    lex = LEXICON["en"]
    gender = "male" if base.tokens[base.pronoun] == lex["pronoun"]["male"] else "female"
    extra = next(n for n in lex[gender] if n not in base.names)
    p = base.pronoun
    tokens = (*base.tokens[: p + 1], "and", extra, *base.tokens[p + 1 :])
    # Keep every recorded field (gender, verbs, cue), so a solution may read them.
    return dataclasses.replace(
        base, tokens=tokens, candidates=(*base.candidates, p + 2), names=(*base.names, extra)
    )


def _applies(rule: Callable[[Example], int], example: Example) -> int | None:
    try:
        return rule(example)
    except (ValueError, IndexError):  # e.g. no name of that gender: the rule has no answer
        return None


def check_gender_baseline(my_baseline: Callable[[Example], int]) -> Report:
    """Chapter 7: "the nearest preceding name of the pronoun's gender", on generated sentences.

    The learner's function runs on every sentence of every case first; a mistake is named only
    when one rule gives all of its answers (over 181 sentences, never from one example).
    """
    same_gender = Refused(
        Example,
        "nearest_preceding_name",
        "Example.nearest_preceding_name(same_gender=True)",
        when=lambda *args, **kwargs: bool(kwargs.get("same_gender", args[1:2] == (True,))),
    )
    report = Report(N_("gender-aware baseline"), refused=(same_gender,))
    cases = {
        N_("English sentences, test split"): CorefTask("en").examples(60, "test", seed=5),
        N_("Chinese sentences, held-out pairs"): CorefTask("zh").examples(60, "pairs", seed=5),
        N_("six-person sentences"): CorefTask("en").examples(60, "long", seed=5),
        N_("a name after the pronoun does not count"): [_name_after_the_pronoun()],
    }
    given: dict[str, list | LearnerError] = {}
    with report.refusing():
        for description, examples in cases.items():
            try:
                given[description] = [call(my_baseline, e) for e in examples]
            except LearnerError as exc:
                given[description] = exc
    pool = [
        (e, as_int(a))
        for d, answers in given.items()
        if not isinstance(answers, LearnerError)
        for e, a in zip(cases[d], answers)
    ]
    named = [
        why
        for why, rule in _BASELINE_MISTAKES.items()
        if len(pool) > 1 and all(a is not None and _applies(rule, e) == a for e, a in pool)
    ]
    why = (
        tr(named[0])
        if len(named) == 1
        else tr("that is not the nearest preceding name of the pronoun's gender")
    )

    def judge(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            answers, examples = given[description], cases[description]
            if isinstance(answers, LearnerError):
                raise answers
            for a in answers:
                if as_int(a) is None:
                    return tr("return a position (an integer); got {a_type} {a!r}").format(
                        a_type=type(a).__name__, a=a
                    )
            expected = [e.nearest_preceding_name(same_gender=True) for e in examples]
            wrong = [n for n, (a, b) in enumerate(zip(answers, expected)) if as_int(a) != b]
            if not wrong:
                return None
            e, n = examples[wrong[0]], wrong[0]
            return tr(
                "{why} — in {e_text!r} expected position {expected_n}, got {answers_n}"
            ).format(why=why, e_text=e.text, expected_n=expected[n], answers_n=answers[n])

        return run

    for description in cases:
        report.run(description, judge(description))
    return report
