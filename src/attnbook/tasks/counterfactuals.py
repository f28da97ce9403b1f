"""Counterfactual sentences: change one clue, and the right answer moves to a known rival.

The controls of chapters 6 and 8. If a model reads the cue, then giving the pronoun the *gender
rival's* cue (``later she had a sore throat`` instead of ``... dried the tears``) must move its
answer to the gender rival; if it reads the gender, switching the pronoun (*she* → *he*) must move
its answer to the cue rival. Everything else in the sentence stays as it was, token for token, so
the rate at which a model's answer follows is a direct measure of its use of that clue.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from attnbook.tasks.coref import Example
from attnbook.tasks.coref_lexicon import LEXICON, gender_of
from attnbook.tasks.vocab import tokenize

__all__ = ["swap_cue", "swap_gender"]


def _genders(e: Example) -> list[str]:
    return [gender_of(e.language, name) for name in e.names]


def _check(e: Example) -> None:
    hidden_gender = bool(e.gender) and gender_of(e.language, e.tokens[e.pronoun]) != e.gender
    if not e.verbs or not e.cue or not e.gender or hidden_gender:
        raise ValueError(
            "swaps need an example from CorefTask with its cue and verbs recorded "
            "(not one whose cue or gender is hidden)"
        )


def swap_cue(e: Example) -> Example:
    """``e`` with the cue clause of the gender rival's action; the answer becomes that rival.

    The gender rival is the other person of the pronoun's gender whose action is shared with
    someone of the other gender (in ``"long"`` sentences, the first such person).
    """
    _check(e)
    genders = _genders(e)
    count = Counter(zip(genders, e.verbs))
    doers = Counter(e.verbs)
    rival = next(
        k
        for k, (g, verb) in enumerate(zip(genders, e.verbs))
        if g == e.gender and verb != e.cue and count[(g, verb)] == 1 and doers[verb] > 1
    )
    lex, verb = LEXICON[e.language], e.verbs[rival]
    tokens = (*e.tokens[: e.pronoun + 1], *tokenize(lex["verbs"][verb]), lex["stop"])
    return dataclasses.replace(e, tokens=tokens, cue=verb, antecedent=e.candidates[rival])


def swap_gender(e: Example) -> Example:
    """``e`` with the other gender's pronoun; the answer becomes the cue rival (the person of the
    other gender who did the cued action)."""
    _check(e)
    lex = LEXICON[e.language]
    other = "female" if e.gender == "male" else "male"
    matches = [
        c for c, g, verb in zip(e.candidates, _genders(e), e.verbs) if g == other and verb == e.cue
    ]
    if len(matches) != 1:
        raise ValueError(f"expected one cue rival of gender {other!r}; found {len(matches)}")
    tokens = list(e.tokens)
    tokens[e.pronoun] = lex["pronoun"][other]
    return dataclasses.replace(e, tokens=tuple(tokens), gender=other, antecedent=matches[0])
