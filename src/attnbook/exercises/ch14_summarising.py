"""Chapter 14's checker: the most central sentence, the lexical baseline of extractive summarising.

``my_central_sentence(sentences)``: sentences a list of token lists; the index of the sentence
that shares the most distinct content words (``attnbook.tasks.summaries.STOPWORDS`` left out)
with the other sentences, summed over them; ties go to the earliest sentence.
"""

from __future__ import annotations

from collections.abc import Callable

from attnbook.exercises.report import Report, as_int, call
from attnbook.i18n import tr
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
        ("count the stop words too?"),
        (
            "Leave STOPWORDS out: 'the' and '.' are shared by every sentence and say nothing "
            "about the topic."
        ),
        dict(stop=False),
    ),
    (
        ("compare a sentence with itself too?"),
        ("Sum over the OTHER sentences only."),
        dict(self_too=True),
    ),
    (
        ("count repeated words more than once?"),
        ("Count DISTINCT shared words (sets)."),
        dict(distinct=False),
    ),
    (
        ("divide by the sentence's length?"),
        ("Sum the shared words and do not normalise: a sentence that shares more is more central."),
        dict(normalise=True),
    ),
)


def _mistake(sentences: list[list[str]], answer: int) -> str:
    scores = _scores(sentences)
    best = max(scores)
    matches = []
    for question, advice, kind in _VARIANTS:
        other = _scores(sentences, **kind)
        if answer == other.index(max(other)):
            matches.append((question, advice))
    other_score = ""
    if matches:
        questions = tr(" Or did you ").join(tr(q) for q, _ in matches)
        advice = " ".join(tr(a) for _, a in matches)
        other_score = tr("your answer matches another score: did you {questions} {advice}").format(
            questions=questions, advice=advice
        )
    if scores[answer] == best:  # a tie is named first, the matching score after it
        tie = tr("a tie: several sentences share the most words; return the EARLIEST of them")
        return f"{tie} ({other_score})" if other_score else tie
    if other_score:
        return other_score
    return tr(
        "sentence {answer} shares {scores_answer:g} words with the others; the best shares {best:g}"
    ).format(answer=answer, scores_answer=scores[answer], best=best)


def check_central_sentence(my_central_sentence: Central) -> Report:
    """Compare the reader's centrality with ``attnbook.tasks.summaries.central_sentence``."""
    report = Report("most central sentence")

    def case(split: str, seed: int, n: int) -> Callable[[], str | None]:
        def run() -> str | None:
            for p in paragraphs(n, split, seed):
                raw = call(my_central_sentence, [list(s) for s in p.sentences])
                answer = as_int(raw)
                if answer is None or not 0 <= answer < len(p.sentences):
                    return tr(
                        "return a sentence index in [0, {len_p_sentences}); got {raw!r}"
                    ).format(len_p_sentences=len(p.sentences), raw=raw)
                if answer != central_sentence(p.sentences):
                    text = " / ".join(" ".join(s) for s in p.sentences)
                    return tr("for the paragraph {text!r}: ").format(text=text) + _mistake(
                        p.sentences, answer
                    )
            return None

        return run

    def tie() -> str | None:
        sentences = [["it", "rained", "."], ["the", "rained", "bridge"], ["bridge", "it", "."]]
        raw = call(my_central_sentence, sentences)
        answer = as_int(raw)
        if answer is None:
            return tr("return a sentence index (an int); got {raw!r}").format(raw=raw)
        if answer != 0:
            return tr(
                "each sentence shares two words with the others; the earliest, 0, wins the tie; got "
                "{answer}"
            ).format(answer=answer)
        return None

    def repeats() -> str | None:
        # distinct shared words 2, 1, 2, 3: sentence 3; counting repeats picks 0, dividing
        # by the length picks 2
        sentences = [["bridge", "bridge", "park"], ["board"], ["bridge"], ["bridge", "board"]]
        raw = call(my_central_sentence, sentences)
        answer = as_int(raw)
        if answer is None or not 0 <= answer < len(sentences):
            return tr("return a sentence index in [0, 4); got {raw!r}").format(raw=raw)
        if answer != 3:
            return tr("expected 3; got {answer}: ").format(answer=answer) + _mistake(
                sentences, answer
            )
        return None

    report.run("a three-way tie goes to the first sentence", tie)
    report.run("a repeated word counts once, a short sentence gets no bonus", repeats)
    report.run("20 training paragraphs", case("train", 0, 20))
    report.run("20 long paragraphs (8 sentences)", case("long", 0, 20))
    return report
