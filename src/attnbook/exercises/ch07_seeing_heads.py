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
from attnbook.exercises.report import Report, as_int, call, changed_inputs, expect_tensor
from attnbook.interp.heads import name_action_weight, pronoun_hits
from attnbook.tasks.coref import LEXICON, CorefTask, Example

__all__ = ["check_head_hits", "check_binding", "check_gender_baseline"]

ATOL = 1e-5


def _close(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=ATOL)


def _hits_mistake(out: Tensor, weights: Tensor, pronoun: Tensor, antecedent: Tensor) -> str:
    n = torch.arange(len(pronoun))
    rows = weights[n, :, pronoun]  # (N, H, S)
    column = weights[n, :, :, pronoun]  # (N, H, S): who attends TO the pronoun
    if _close(out, (column.argmax(-1) == antecedent[:, None]).float().mean(0)):
        return (
            "you read the pronoun's column (who attends TO it); read its row: "
            "weights[n, h, pronoun[n], :] is where the pronoun looks"
        )
    on_antecedent = rows.gather(-1, antecedent[:, None, None].expand(-1, rows.size(1), 1))[..., 0]
    if _close(out, on_antecedent.mean(0)):
        return "you average the weight on the antecedent; count how often it is the LARGEST weight"
    if _close(out, (on_antecedent > 0.5).float().mean(0)):
        return (
            "you count weights above 0.5; the antecedent can be the largest weight of its row "
            "with less than half of it (head 1 here: 0.4): compare with the row's argmax"
        )
    if _close(out, (rows.argmax(-1) == antecedent[:, None]).float().sum(0)):
        return "you count the hits; divide by the number of sentences to get a fraction"
    every_pair = weights[:, :, pronoun]  # (N, H, N, S): each sentence at EVERY pronoun position
    if _close(out, (every_pair.argmax(-1) == antecedent[:, None, None]).float().mean((0, 2))):
        return (
            "weights[:, :, pronoun] takes every sentence's row at every sentence's pronoun "
            "position; pair them: weights[torch.arange(N), :, pronoun]"
        )
    expected = pronoun_hits(weights, pronoun, antecedent)
    return f"expected {[round(x, 3) for x in expected.tolist()]}, got {[round(x, 3) for x in out.tolist()]}"


def check_head_hits(my_head_hits: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the fraction of sentences where each head's pronoun row peaks on the antecedent."""
    report = Report("head hits")

    def case(seed: int, N: int, H: int, S: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, _, pronoun, antecedent = random_attention(seed, N, H, S)
            out = call(my_head_hits, weights, pronoun, antecedent)
            problem = expect_tensor(out, (H,), what="my_head_hits")
            if problem is not None:
                return problem
            if _close(out, pronoun_hits(weights, pronoun, antecedent)):
                return None
            return _hits_mistake(out, weights, pronoun, antecedent)

        return run

    report.run("6 sentences, 3 heads, one peaking at 0.4", case(0, 6, 3, 7))
    report.run("9 sentences, 2 heads, 10 positions", case(1, 9, 2, 10))
    report.run("1 sentence, 4 heads", case(2, 1, 4, 6))
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


def check_binding(my_binding: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Report:
    """Chapter 7: the mean weight from each name to its own action, per head."""
    report = Report("binding head")

    def case(seed: int, N: int, H: int, S: int, P: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, _, _, _ = random_attention(seed, N, H, S)
            names, actions = _people(seed, N, P, S)
            out = call(my_binding, weights, names, actions)
            problem = expect_tensor(out, (H,), what="my_binding")
            if problem is not None:
                return problem
            expected = name_action_weight(weights, names, actions)
            if _close(out, expected):
                return None
            if _close(out, name_action_weight(weights.transpose(-1, -2), names, actions)):
                return "you read the action's row (where it looks); read each NAME's row"
            every_pair = torch.stack(
                [weights[n][:, names[n]][:, :, actions[n]].mean((1, 2)) for n in range(N)]
            ).mean(0)
            if _close(out, every_pair):
                return (
                    "you average every name's weight on every action; take each name's weight "
                    "on its OWN action only (the diagonal)"
                )
            if _close(out, name_action_weight(weights, names, actions) * P * N):
                return "you sum; take the mean over people and sentences"
            if _close(out, name_action_weight(weights, names, names + 1)):
                return (
                    "you read each name's weight on the NEXT token; the action is at "
                    "actions[n, p], and an adverb can stand in between"
                )
            return f"expected {[round(x, 3) for x in expected.tolist()]}, got {[round(x, 3) for x in out.tolist()]}"

        return run

    report.run("6 sentences, 3 heads, 3 people", case(0, 6, 3, 9, 3))
    report.run("4 sentences, 2 heads, 5 people", case(1, 4, 2, 12, 5))
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


_BASELINE_MISTAKES: dict[str, Callable[[Example], int]] = {
    "you ignore gender: only names of the pronoun's gender count": lambda e: (
        e.nearest_preceding_name()
    ),
    "you take the other gender's names: read the pronoun's gender in its own language (他 is male)": (
        lambda e: max(
            (c for c in _names_of(e, _gender(e, opposite=True)) if c < e.pronoun), default=-1
        )
    ),
    "you take the FIRST name of the right gender; take the nearest one": (
        lambda e: min(_names_of(e, _gender(e)))
    ),
    "return the name's POSITION in the sentence (an index into tokens), not its index among the "
    "candidates": lambda e: e.candidates.index(e.nearest_preceding_name(same_gender=True)),
    "only names BEFORE the pronoun count": (
        lambda e: min(_names_of(e, _gender(e)), key=lambda c: (abs(c - e.pronoun), c > e.pronoun))
    ),
}


def check_gender_baseline(my_baseline: Callable[[Example], int]) -> Report:
    """Chapter 7: "the nearest preceding name of the pronoun's gender", on generated sentences."""
    report = Report("gender-aware baseline")

    def judge(examples: list[Example]) -> str | None:
        answers = []
        for example in examples:
            given = call(my_baseline, example)
            answer = as_int(given)
            if answer is None:
                return f"return a position (an integer); got {type(given).__name__} {given!r}"
            answers.append(answer)
        expected = [e.nearest_preceding_name(same_gender=True) for e in examples]
        wrong = [n for n, (a, b) in enumerate(zip(answers, expected)) if a != b]
        if not wrong:
            return None
        # Name the rule that explains every answer, when one does.
        why = next(
            (why for why, rule in _BASELINE_MISTAKES.items()
             if all(rule(e) == a for e, a in zip(examples, answers))),
            "that is not the nearest preceding name of the pronoun's gender",
        )  # fmt: skip
        e = examples[wrong[0]]
        return (
            f"{why} — in {e.text!r} expected position {expected[wrong[0]]}, got {answers[wrong[0]]}"
        )

    def case(language: str, split: str) -> Callable[[], str | None]:
        return lambda: judge(CorefTask(language).examples(60, split, seed=5))

    def name_after_the_pronoun() -> str | None:
        # Generated sentences never name anyone after the pronoun; this one does, right next to
        # it, so "the nearest name of that gender in either direction" picks the wrong one.
        base = CorefTask("en").examples(1, "test", seed=11)[0]
        lex = LEXICON["en"]
        gender = "male" if base.tokens[base.pronoun] == lex["pronoun"]["male"] else "female"
        extra = next(n for n in lex[gender] if n not in base.names)
        p = base.pronoun
        tokens = (*base.tokens[: p + 1], "and", extra, *base.tokens[p + 1 :])
        # Keep every recorded field (gender, verbs, cue), so a solution may read them.
        example = dataclasses.replace(
            base, tokens=tokens, candidates=(*base.candidates, p + 2), names=(*base.names, extra)
        )
        return judge([example])

    report.run("English sentences, test split", case("en", "test"))
    report.run("Chinese sentences, held-out pairs", case("zh", "pairs"))
    report.run("six-person sentences", case("en", "long"))
    report.run("a name after the pronoun does not count", name_after_the_pronoun)
    return report
