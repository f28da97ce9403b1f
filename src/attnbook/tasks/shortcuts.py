"""Rules that skip a clue, and how often each finds the antecedent of a coreference sentence.

A task proves that a model relates words only if no cheaper rule solves it. Each rule here reads
an :class:`~attnbook.tasks.coref.Example` the way a shortcut would — the pronoun's gender only,
the cue only, positions only, or a clue combined with a statistical regularity of the generator
(an action that occurs twice, the nearest name) — and returns the candidates it cannot tell
apart. Its accuracy on a sentence is the chance that a uniform guess among them is the
antecedent: 1 if it names the antecedent alone, 1/k if the antecedent is one of k, 0 otherwise.

:data:`SHORTCUTS` are the rules that skip a clue; :data:`BOTH_CLUES` reads gender and cue and is
the sanity check (it must be perfect). Chapter 6 prints the table, and the tests require every
shortcut to stay near a coin flip in both languages and every split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from attnbook.tasks.coref import Example
from attnbook.tasks.coref_lexicon import gender_of

__all__ = ["SHORTCUTS", "BOTH_CLUES", "rule_accuracy", "shortcut_table"]


def _people(e: Example) -> list[tuple[int, str, str]]:
    """(name position, gender, action) for each person, in sentence order."""
    if not e.verbs or not e.gender:
        raise ValueError("the rules need examples from CorefTask (with verbs and gender recorded)")
    return [
        (position, gender_of(e.language, name), verb)
        for position, name, verb in zip(e.candidates, e.names, e.verbs)
    ]


def _pronoun_gender(e: Example) -> str:
    return gender_of(e.language, e.tokens[e.pronoun])


def _or_all(picked: list[int], e: Example) -> tuple[int, ...]:
    """A rule that finds nobody falls back to guessing among every name."""
    return tuple(picked) or tuple(e.candidates)


def gender_alone(e: Example) -> tuple[int, ...]:
    """Everyone of the pronoun's gender."""
    g = _pronoun_gender(e)
    return _or_all([p for p, gender, _ in _people(e) if gender == g], e)


def cue_alone(e: Example) -> tuple[int, ...]:
    """Everyone who did what the cue names (ignores the pronoun)."""
    return _or_all([p for p, _, verb in _people(e) if verb == e.cue], e)


def gender_and_repeated_action(e: Example) -> tuple[int, ...]:
    """Of the pronoun's gender, those whose action someone else also did (the shortcut that
    solved the first edition's task)."""
    people, g = _people(e), _pronoun_gender(e)
    count = Counter(verb for _, _, verb in people)
    picked = [p for p, gender, verb in people if gender == g and count[verb] > 1]
    return picked and tuple(picked) or gender_alone(e)


def gender_and_unique_action(e: Example) -> tuple[int, ...]:
    """Of the pronoun's gender, those whose action nobody else did."""
    people, g = _people(e), _pronoun_gender(e)
    count = Counter(verb for _, _, verb in people)
    picked = [p for p, gender, verb in people if gender == g and count[verb] == 1]
    return picked and tuple(picked) or gender_alone(e)


def nearest_of_gender(e: Example) -> tuple[int, ...]:
    """The last name of the pronoun's gender before the pronoun."""
    return (max(gender_alone(e)),)


def first_of_gender(e: Example) -> tuple[int, ...]:
    """The first name of the pronoun's gender."""
    return (min(gender_alone(e)),)


def nearest_with_cue(e: Example) -> tuple[int, ...]:
    """The last person before the pronoun who did what the cue names."""
    return (max(cue_alone(e)),)


def nearest_name(e: Example) -> tuple[int, ...]:
    """The last name before the pronoun (position only)."""
    return (max(e.candidates),)


def first_name(e: Example) -> tuple[int, ...]:
    """The first name of the sentence (position only)."""
    return (min(e.candidates),)


def both_clues(e: Example) -> tuple[int, ...]:
    """The pronoun's gender and the cued action: the rule the task is built for."""
    g = _pronoun_gender(e)
    return _or_all([p for p, gender, verb in _people(e) if gender == g and verb == e.cue], e)


#: Rules that skip at least one clue, by a short description.
SHORTCUTS: dict[str, Callable[[Example], tuple[int, ...]]] = {
    "nearest name (position only)": nearest_name,
    "first name (position only)": first_name,
    "pronoun's gender alone": gender_alone,
    "gender + nearest of that gender": nearest_of_gender,
    "gender + first of that gender": first_of_gender,
    "gender + an action that occurs twice": gender_and_repeated_action,
    "gender + an action nobody else did": gender_and_unique_action,
    "cue alone": cue_alone,
    "cue + nearest who did it": nearest_with_cue,
}
#: The rule that reads both clues.
BOTH_CLUES: dict[str, Callable[[Example], tuple[int, ...]]] = {
    "gender + cue (both clues)": both_clues
}


def rule_accuracy(rule: Callable[[Example], tuple[int, ...]], examples: Sequence[Example]) -> float:
    """Mean over ``examples`` of the chance that a uniform guess among ``rule(e)`` is right."""
    if not examples:
        raise ValueError("rule_accuracy needs at least one example")
    total = 0.0
    for e in examples:
        picked = rule(e)
        total += (e.antecedent in picked) / len(picked)
    return total / len(examples)


def shortcut_table(
    examples: dict[str, Sequence[Example]],
    rules: dict[str, Callable[[Example], tuple[int, ...]]] | None = None,
) -> dict[str, dict[str, float]]:
    """``{rule name: {set name: accuracy}}`` for each rule (default: shortcuts and both clues)."""
    rules = {**SHORTCUTS, **BOTH_CLUES} if rules is None else rules
    return {
        name: {key: rule_accuracy(rule, exs) for key, exs in examples.items()}
        for name, rule in rules.items()
    }
