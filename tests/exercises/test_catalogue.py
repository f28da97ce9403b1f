"""Every checker against the mistake catalogue (tests/exercises/catalogue/).

A wrong answer must fail, the checker must not crash on it, the report must name the mistake the
catalogue says it makes, and it must not name another mistake of the same checker that the
answer did not make. Every checker must have entries, and the four exercises checked last have
theirs too.
"""

from __future__ import annotations

from collections import Counter

import pytest

import attnbook.exercises as checkers
from attnbook.i18n import language

from .catalogue import Fact, Mistake
from .catalogue.chapters_01_05 import MISTAKES as CHAPTERS_01_05
from .catalogue.chapters_06_10 import MISTAKES as CHAPTERS_06_10
from .catalogue.chapters_11_20 import MISTAKES as CHAPTERS_11_20
from .test_chinese import assert_chinese

MISTAKES: list[Mistake] = [*CHAPTERS_01_05, *CHAPTERS_06_10, *CHAPTERS_11_20]
CRASH = "the checker could not use your answer"


def _fragments() -> dict[str, set[str]]:
    """The fragments that name a mistake, per checker."""
    found: dict[str, set[str]] = {}
    for m in MISTAKES:
        own = {f for f in (m.says, *m.also) if f is not None and not isinstance(f, Fact)}
        found.setdefault(m.checker, set()).update(own)
    return found


FRAGMENTS = _fragments()


def others(mistake: Mistake) -> set[str]:
    """The fragments that name mistakes this answer did not make (a fragment that contains, or
    is contained in, one of its own names the same mistake in other words)."""
    own = {mistake.says, *mistake.also} - {None}
    return {
        f for f in FRAGMENTS[mistake.checker] if not any(f in mine or mine in f for mine in own)
    }


def counts() -> Counter:
    """How many wrong answers the catalogue holds for each checker."""
    return Counter(m.checker for m in MISTAKES)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_wrong_answer_fails_and_is_named_for_what_it_did(mistake: Mistake) -> None:
    report = getattr(checkers, mistake.checker)(*mistake.answer)
    text = str(report)
    assert not report.passed, text
    assert CRASH not in text, text
    if mistake.says is not None:
        assert mistake.says in text, text
    named = sorted(f for f in others(mistake) if f in text)
    assert not named, f"names {named}, which this answer did not do:\n{text}"


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_wrong_answer_is_reported_in_chinese(mistake: Mistake) -> None:
    with language("zh"):
        report = getattr(checkers, mistake.checker)(*mistake.answer)
        assert_chinese(report)


def test_every_checker_has_wrong_answers_in_the_catalogue() -> None:
    names = {n for n in checkers.__all__ if n.startswith("check_")}
    missing = names - set(counts())
    assert not missing, sorted(missing)
