"""Chapter 14's checker: the most central sentence, the lexical baseline of extractive summarising.

``my_central_sentence(sentences)``: sentences a list of token lists; the index of the sentence
that shares the most distinct content words (``attnbook.tasks.summaries.STOPWORDS`` left out)
with the other sentences, summed over them; ties go to the earliest sentence.
"""

from __future__ import annotations

from collections.abc import Callable

from attnbook.exercises.report import LearnerError, Report, as_int, call, library
from attnbook.i18n import N_, tr
from attnbook.tasks.summaries import STOPWORDS, central_sentence, paragraphs

__all__ = ["check_central_sentence"]

Central = Callable[[list[list[str]]], int]


def _scores(
    sentences: list[list[str]],
    *,
    stop: bool = True,
    self_too: bool = False,
    distinct: bool = True,
    normalise: bool = False,
) -> list[float]:
    """Variants of the centrality score, to name a reader's likely mistake."""
    words = [(set(s) if distinct else list(s)) for s in sentences]
    if stop:
        words = [[w for w in s if w not in STOPWORDS] for s in words]
    scores: list[float] = [
        sum(sum(1 for x in w if x in set(o)) for j, o in enumerate(words) if self_too or j != i)
        for i, w in enumerate(words)
    ]
    if normalise:
        scores = [v / max(1, len(set(w))) for v, w in zip(scores, words)]
    return scores


_VARIANTS = (  # (question, advice, variant of the score)
    (
        N_("count the stop words too?"),
        N_(
            "Leave STOPWORDS out: 'the' and '.' are shared by every sentence and say nothing "
            "about the topic."
        ),
        dict(stop=False),
    ),
    (
        N_("compare a sentence with itself too?"),
        N_("Sum over the OTHER sentences only."),
        dict(self_too=True),
    ),
    (
        N_("count repeated words more than once?"),
        N_("Count DISTINCT shared words (sets)."),
        dict(distinct=False),
    ),
    (
        N_("divide by the sentence's length?"),
        N_(
            "Sum the shared words and do not normalise: a sentence that shares more is more central."
        ),
        dict(normalise=True),
    ),
)


def _pick(scores: list[float], latest: bool) -> int:
    best = max(scores)
    picks = [i for i, v in enumerate(scores) if v == best]
    return picks[-1] if latest else picks[0]


def _slip(paragraphs: list[list[list[str]]], answers: list[int | None]) -> str | None:
    """The one variant (a score of _VARIANTS, or ties to the latest sentence) that gives every
    answer on every paragraph; None if no single variant does."""
    named = []
    for latest in (False, True):
        for question, advice, kind in ((None, None, {}), *_VARIANTS):
            if question is None and not latest:
                continue  # the right answer
            if all(a == _pick(_scores(p, **kind), latest) for p, a in zip(paragraphs, answers)):
                named.append((question, advice, latest))
    if len(named) != 1:
        return None
    question, advice, latest = named[0]
    parts = (
        [tr("ties go to the EARLIEST sentence; you return the latest of them")] if latest else []
    )
    if question is not None:
        parts.append(
            tr("your answer matches another score: did you {questions} {advice}").format(
                questions=tr(question), advice=tr(advice)
            )
        )
    return tr("; ").join(parts)


def _facts(sentences: list[list[str]], answer: int) -> str:
    """What is true of a wrong answer on one paragraph, without guessing why."""
    scores = _scores(sentences)
    best = max(scores)
    if scores[answer] == best:
        return tr("a tie: several sentences share the most words; return the EARLIEST of them")
    return tr(
        "sentence {answer} shares {scores_answer:g} words with the others; the best shares {best:g}"
    ).format(answer=answer, scores_answer=scores[answer], best=best)


# The two hand-made paragraphs: a three-way tie, and one where repeats and length mislead
# (distinct shared words 2, 1, 2, 3: sentence 3; counting repeats picks 0, dividing by the
# length picks 2).
_TIE = [["it", "rained", "."], ["the", "rained", "bridge"], ["bridge", "it", "."]]
_REPEATS = [["bridge", "bridge", "park"], ["board"], ["bridge"], ["bridge", "board"]]


def check_central_sentence(my_central_sentence: Central) -> Report:
    """Compare the reader's centrality with ``attnbook.tasks.summaries.central_sentence``.

    The function runs on every paragraph first; a slip ("did you count the stop words?") is
    named only when it gives every one of the learner's answers; a single paragraph says only
    what is true of the answer there (a tie broken the other way, or how many words it shares).
    """
    report = Report(N_("most central sentence"), refused=library(central_sentence))
    cases = {
        N_("a three-way tie goes to the first sentence"): [_TIE],
        N_("a repeated word counts once, a short sentence gets no bonus"): [_REPEATS],
        N_("20 training paragraphs"): [p.sentences for p in paragraphs(20, "train", 0)],
        N_("20 long paragraphs (8 sentences)"): [p.sentences for p in paragraphs(20, "long", 0)],
    }
    raw: dict[str, list | LearnerError] = {}
    with report.refusing():
        for description, paragraphs_ in cases.items():
            try:
                raw[description] = [
                    call(my_central_sentence, [list(s) for s in p]) for p in paragraphs_
                ]
            except LearnerError as exc:
                raw[description] = exc
    usable = all(
        not isinstance(r, LearnerError)
        and all(as_int(a) is not None and 0 <= as_int(a) < len(p) for a, p in zip(r, cases[d]))
        for d, r in raw.items()
    )
    slip = None
    if usable:
        every = [p for d in cases for p in cases[d]]
        slip = _slip(every, [as_int(a) for d in cases for a in raw[d]])

    def judge(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            answers = raw[description]
            if isinstance(answers, LearnerError):
                raise answers
            for p, given in zip(cases[description], answers):
                answer = as_int(given)
                if answer is None or not 0 <= answer < len(p):
                    return tr("return a sentence index in [0, {n}); got {raw!r}").format(
                        n=len(p), raw=given
                    )
                if answer != central_sentence(p):
                    text = " / ".join(" ".join(s) for s in p)
                    return tr("for the paragraph {text!r}: ").format(text=text) + (
                        slip or _facts(p, answer)
                    )
            return None

        return run

    for description in cases:
        report.run(description, judge(description))
    return report
