"""Chapter 7's checkers: hit rates, the binding head, and the gender-aware baseline."""

import pytest
import torch

from attnbook.exercises import check_binding, check_gender_baseline, check_head_hits
from attnbook.tasks.coref import LEXICON


def book_hits(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, pronoun]
    return (rows.argmax(-1) == antecedent[:, None]).float().mean(0)


def loop_hits(weights, pronoun, antecedent):
    N, H = weights.shape[:2]
    hits = torch.zeros(H)
    for n in range(N):
        for h in range(H):
            hits[h] += float(weights[n, h, pronoun[n]].argmax() == antecedent[n])
    return hits / N


def threshold_hits(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, pronoun]
    return (
        (rows.gather(-1, antecedent[:, None, None].expand(-1, rows.size(1), 1))[..., 0] > 0.5)
        .float()
        .mean(0)
    )


def average_weight(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, pronoun]  # (N, H, S)
    return rows.gather(-1, antecedent[:, None, None].expand(-1, rows.size(1), 1))[..., 0].mean(0)


def column_hits(weights, pronoun, antecedent):
    return book_hits(weights.transpose(-1, -2), pronoun, antecedent)


HITS_RIGHT = {"the book's solution": book_hits, "two loops": loop_hits}
HITS_WRONG = {
    "weights above 0.5": (threshold_hits, "you count weights above 0.5"),
    "the pronoun's column": (column_hits, "you read the pronoun's column"),
    "average weight": (
        lambda w, p, a: (
            w[torch.arange(len(p)), :, p]
            .gather(-1, a[:, None, None].expand(-1, w.size(1), 1))[..., 0]
            .mean(0)
        ),
        "count how often it is the LARGEST",
    ),
    "a count, not a fraction": (
        lambda w, p, a: book_hits(w, p, a) * len(p),
        "divide by the number",
    ),
    "sizes written in": (lambda w, p, a: book_hits(w, p, a)[:3], "must return shape"),
    "unpaired indices": (
        lambda w, p, a: (w[:, :, p].argmax(-1) == a[:, None, None]).float().mean((0, 2)),
        "pair them: weights[torch.arange(N), :, pronoun]",
    ),
}


def antecedent_row_hits(weights, pronoun, antecedent):
    rows = weights[torch.arange(len(pronoun)), :, antecedent]  # where the ANTECEDENT looks
    return (rows.argmax(-1) == pronoun[:, None]).float().mean(0)


def test_a_rule_that_matches_in_one_case_only_is_not_named():
    # Reading the antecedent's row equals "the pronoun's column" in one random case by chance;
    # a diagnosis must hold in every case, so this answer gets the plain expected/got line.
    report = check_head_hits(antecedent_row_hits)
    assert not report.passed and "column" not in str(report), str(report)
    assert "expected [0.667, 1.0], got" in str(report), str(report)


@pytest.mark.parametrize("name", HITS_RIGHT)
def test_right_hit_rates_pass(name):
    report = check_head_hits(HITS_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", HITS_WRONG)
def test_wrong_hit_rates_are_named(name):
    fn, fragment = HITS_WRONG[name]
    report = check_head_hits(fn)
    assert not report.passed and fragment in str(report), str(report)


def book_binding(weights, names, actions):
    n = torch.arange(names.size(0))[:, None]
    rows = weights[n, :, names]  # (N, P, H, S)
    return rows.gather(-1, actions[:, :, None, None].expand(-1, -1, rows.size(2), 1))[..., 0].mean(
        (0, 1)
    )


def loop_binding(weights, names, actions):
    N, P = names.shape
    total = torch.zeros(weights.size(1))
    for n in range(N):
        for p in range(P):
            total += weights[n, :, names[n, p], actions[n, p]]
    return total / (N * P)


BINDING_RIGHT = {"advanced indexing": book_binding, "two loops": loop_binding}
BINDING_WRONG = {
    "the action's row": (
        lambda w, nm, ac: book_binding(w.transpose(-1, -2), nm, ac),
        "read each NAME's row",
    ),
    "every name on every action": (
        lambda w, nm, ac: torch.stack(
            [w[n][:, nm[n]][:, :, ac[n]].mean((1, 2)) for n in range(len(nm))]
        ).mean(0),
        "its OWN action only",
    ),
    "a sum": (lambda w, nm, ac: loop_binding(w, nm, ac) * nm.numel(), "take the mean"),
    "the next token": (lambda w, nm, ac: book_binding(w, nm, nm + 1), "the NEXT token"),
}


@pytest.mark.parametrize("name", BINDING_RIGHT)
def test_right_binding_measures_pass(name):
    report = check_binding(BINDING_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", BINDING_WRONG)
def test_wrong_binding_measures_are_named(name):
    fn, fragment = BINDING_WRONG[name]
    report = check_binding(fn)
    assert not report.passed and fragment in str(report), str(report)


def gender_of_pronoun(example):
    lex = LEXICON[example.language]
    return "male" if example.tokens[example.pronoun] == lex["pronoun"]["male"] else "female"


def book_baseline(example):
    names = LEXICON[example.language][gender_of_pronoun(example)]
    before = [
        c
        for c, name in zip(example.candidates, example.names)
        if c < example.pronoun and name in names
    ]
    return max(before)


def scanning_baseline(example):
    names = set(LEXICON[example.language][gender_of_pronoun(example)])
    for position in range(example.pronoun - 1, -1, -1):
        if example.tokens[position] in names and position in example.candidates:
            return position
    raise ValueError("no name")


def first_of_gender(example):
    names = LEXICON[example.language][gender_of_pronoun(example)]
    return min(c for c, name in zip(example.candidates, example.names) if name in names)


def recorded_gender_baseline(example):
    names = LEXICON[example.language][example.gender]
    return max(
        c
        for c, name in zip(example.candidates, example.names)
        if c < example.pronoun and name in names
    )


BASELINE_RIGHT = {
    "the rule with max()": book_baseline,
    "scanning back from the pronoun": scanning_baseline,
    "reading Example.gender": recorded_gender_baseline,
}
BASELINE_WRONG = {
    "ignores gender": (lambda e: e.nearest_preceding_name(), "you ignore gender"),
    "first, not nearest": (first_of_gender, "take the nearest one"),
    "returns a name": (lambda e: e.tokens[book_baseline(e)], "return a position (an integer)"),
    "index among the candidates": (
        lambda e: e.candidates.index(book_baseline(e)),
        "not its index among the candidates",
    ),
}


@pytest.mark.parametrize("name", BASELINE_RIGHT)
def test_right_baselines_pass(name):
    report = check_gender_baseline(BASELINE_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", BASELINE_WRONG)
def test_wrong_baselines_are_named(name):
    fn, fragment = BASELINE_WRONG[name]
    report = check_gender_baseline(fn)
    assert not report.passed and fragment in str(report), str(report)


def other_gender(example):
    names = LEXICON[example.language]["female" if gender_of_pronoun(example) == "male" else "male"]
    before = [
        c
        for c, name in zip(example.candidates, example.names)
        if c < example.pronoun and name in names
    ]
    return max(before, default=0)


def either_direction(example):
    names = LEXICON[example.language][gender_of_pronoun(example)]
    same = [c for c, name in zip(example.candidates, example.names) if name in names]
    return min(same, key=lambda c: abs(c - example.pronoun))


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        (other_gender, "the other gender's names"),
        (either_direction, "only names BEFORE the pronoun"),
    ],
)
def test_the_rules_a_learner_confuses_are_told_apart(fn, fragment):
    report = check_gender_baseline(fn)
    assert not report.passed and fragment in str(report), str(report)


def english_only_gender(example):
    gender = "male" if example.tokens[example.pronoun] == "he" else "female"
    names = LEXICON[example.language][gender]
    return max(
        c
        for c, name in zip(example.candidates, example.names)
        if c < example.pronoun and name in names
    )


def right_except_after_the_pronoun(example):
    # Wrong only on the checker's one sentence that names someone after the pronoun.
    return (
        example.antecedent if max(example.candidates) > example.pronoun else book_baseline(example)
    )


def test_returning_the_answer_is_named():
    report = check_gender_baseline(lambda e: e.antecedent)
    assert not report.passed and "the answer itself" in str(report), str(report)
    assert "FIRST" not in str(report)


def test_reading_the_gender_in_english_only_gets_the_chinese_hint():
    report = check_gender_baseline(english_only_gender)
    failed = [message for ok, message in report.lines if not ok]
    assert len(failed) == 1 and failed[0].startswith("Chinese"), str(report)
    assert "(他 is male)" in failed[0] and "English only" in failed[0], str(report)


def test_one_wrong_example_is_never_diagnosed():
    report = check_gender_baseline(right_except_after_the_pronoun)
    failed = [message for ok, message in report.lines if not ok]
    assert len(failed) == 1 and failed[0].startswith("a name after the pronoun"), str(report)
    assert "that is not the nearest preceding name" in failed[0], str(report)
