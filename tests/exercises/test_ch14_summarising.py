"""Chapter 14's checker passes the library's answer and names likely mistakes."""

from __future__ import annotations

from attnbook.exercises.ch14_summarising import check_central_sentence
from attnbook.tasks.summaries import STOPWORDS, central_sentence


def _scores(sentences, stop=True, self_too=False):
    words = [set(s) - (STOPWORDS if stop else set()) for s in sentences]
    return [
        sum(len(w & o) for j, o in enumerate(words) if self_too or j != i)
        for i, w in enumerate(words)
    ]


def test_a_centrality_written_by_hand_passes():
    def by_hand(sentences):
        s = _scores(sentences)
        return s.index(max(s))

    assert check_central_sentence(by_hand).passed


def test_the_library_is_refused():
    report = check_central_sentence(central_sentence)
    assert not report.passed and "calls central_sentence" in str(report)


def test_counting_stop_words_is_named():
    def wrong(sentences):
        s = _scores(sentences, stop=False)
        return s.index(max(s))

    report = check_central_sentence(wrong)
    assert not report.passed and "STOPWORDS" in str(report)


def test_last_of_a_tie_is_named():
    def wrong(sentences):
        s = _scores(sentences)
        return len(s) - 1 - s[::-1].index(max(s))

    report = check_central_sentence(wrong)
    assert not report.passed and "earliest" in str(report).lower()


def test_a_crash_and_a_string_are_reported_not_raised():
    def crash(sentences):
        raise RuntimeError("boom")

    assert "raised RuntimeError" in str(check_central_sentence(crash))
    assert "sentence index" in str(check_central_sentence(lambda s: "0"))


def test_counting_repeated_words_is_named():
    def wrong(sentences):
        words = [[w for w in s if w not in STOPWORDS] for s in sentences]
        s = [
            sum(sum(1 for x in w if x in set(o)) for j, o in enumerate(words) if j != i)
            for i, w in enumerate(words)
        ]
        return s.index(max(s))

    report = check_central_sentence(wrong)
    assert not report.passed and "DISTINCT" in str(report)


def test_dividing_by_the_length_is_named():
    def wrong(sentences):
        words = [set(s) - STOPWORDS for s in sentences]
        s = [
            sum(len(w & o) for j, o in enumerate(words) if j != i) / max(1, len(w))
            for i, w in enumerate(words)
        ]
        return s.index(max(s))

    report = check_central_sentence(wrong)
    assert not report.passed and "length" in str(report) and "DISTINCT" not in str(report)


def test_a_last_of_a_tie_answer_is_told_about_the_tie_first():
    def wrong(sentences):
        s = _scores(sentences)
        return len(s) - 1 - s[::-1].index(max(s))

    for line in str(check_central_sentence(wrong)).splitlines():
        if "✗" in line and "paragraph" in line:
            assert "ties go to the EARLIEST sentence" in line, line
            assert "STOPWORDS" not in line, line
