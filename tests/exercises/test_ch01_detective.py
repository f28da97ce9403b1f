"""Chapter 1's checkers accept right answers and name the typical wrong ones."""

import pytest
import torch

from attnbook.exercises import check_new_suspect, check_soft_lookup
from attnbook.exercises.ch01_detective import check_two_way_lookup
from attnbook.models.handbuilt import FEATURE_INDEX, QUERY_MATRIX, WORD_FEATURES


def book_solution(query, keys, values, temperature):
    scores = keys @ query / temperature
    weights = torch.softmax(scores, dim=-1)
    return weights @ values


def by_hand(query, keys, values, temperature):
    scores = (keys * query).sum(-1) / temperature
    e = torch.exp(scores - scores.max())
    return (e[:, None] * values).sum(0) / e.sum()


def edits_query(query, keys, values, temperature):
    query /= temperature  # correct value, but edits the caller's tensor
    return torch.softmax(keys @ query, dim=-1) @ values


LOOKUP_RIGHT = {"the book's solution": book_solution, "by hand, max subtracted": by_hand}
LOOKUP_WRONG = {
    "multiplies by the temperature": (
        lambda q, k, v, t: torch.softmax(k @ q * t, -1) @ v,
        "divide them by it instead",
    ),
    "no softmax": (lambda q, k, v, t: (k @ q / t) @ v, "apply softmax to them first"),
    "naive exp overflows": (
        lambda q, k, v, t: (torch.exp(k @ q / t) / torch.exp(k @ q / t).sum()) @ v,
        "overflow",
    ),
    "plain average": (lambda q, k, v, t: v.mean(0), "plain average"),
    "averages the keys": (lambda q, k, v, t: torch.softmax(k @ q / t, -1) @ k, "shape (3,)"),
    "temperature ignored": (
        lambda q, k, v, t: torch.softmax(k @ q, -1) @ v,
        "temperature is ignored",
    ),
    "edits its input": (edits_query, "changed its input query in place"),
    "returns a list": (lambda q, k, v, t: book_solution(q, k, v, t).tolist(), "got a list"),
}


@pytest.mark.parametrize("name", LOOKUP_RIGHT)
def test_right_soft_lookups_pass(name):
    report = check_soft_lookup(LOOKUP_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", LOOKUP_WRONG)
def test_wrong_soft_lookups_are_named(name):
    fn, fragment = LOOKUP_WRONG[name]
    report = check_soft_lookup(fn)
    assert not report.passed
    assert fragment in str(report), str(report)


def test_a_naive_exp_is_told_that_it_overflows_not_that_the_limit_is_wrong():
    naive, _ = LOOKUP_WRONG["naive exp overflows"]
    lines = str(check_soft_lookup(naive)).splitlines()
    hard_limit = next(line for line in lines if "temperature → 0" in line)
    assert "✗" in hard_limit and "overflows" in hard_limit, hard_limit
    assert "best-matching key" not in hard_limit, hard_limit


def test_a_wrong_limit_without_overflow_is_named_as_such():
    def uniform_when_cold(q, k, v, t):  # right above T = 0.1, gives up below it
        return v.mean(0) if t < 0.1 else torch.softmax(k @ q / t, -1) @ v

    lines = str(check_soft_lookup(uniform_when_cold)).splitlines()
    hard_limit = next(line for line in lines if "temperature → 0" in line)
    assert "best-matching key" in hard_limit, hard_limit


def with_wang(features):
    return dict(WORD_FEATURES, 王=features)


SUSPECT_RIGHT = {
    "the book's solution (张's features)": with_wang(WORD_FEATURES["张"]),
    "李's features": with_wang(WORD_FEATURES["李"]),
}
female = list(WORD_FEATURES["丽"])
pronoun_like = list(WORD_FEATURES["他"])
SUSPECT_WRONG = {
    "王 missing": (dict(WORD_FEATURES), "王 is not in your lexicon"),
    "a woman's features": (with_wang(female), "features of a woman"),
    "marked as a pronoun": (with_wang(pronoun_like), "marked as a pronoun"),
    "too few features": (with_wang((1.0, 1.0)), "one number per feature"),
    "other tokens dropped": (
        {"王": WORD_FEATURES["张"], "老": WORD_FEATURES["老"]},
        "start from a copy",
    ),
}


@pytest.mark.parametrize("name", SUSPECT_RIGHT)
def test_right_lexicons_pass(name):
    report = check_new_suspect(SUSPECT_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", SUSPECT_WRONG)
def test_wrong_lexicons_are_named(name):
    lexicon, fragment = SUSPECT_WRONG[name]
    report = check_new_suspect(lexicon)
    assert not report.passed
    assert fragment in str(report), str(report)


def test_the_feature_index_names_the_columns_the_checker_reads():
    assert female[FEATURE_INDEX["female"]] == 1 and pronoun_like[FEATURE_INDEX["pronoun"]] == 1


def with_entry(value, row="pronoun", column="person"):
    w = QUERY_MATRIX.clone()
    w[FEATURE_INDEX[row], FEATURE_INDEX[column]] = value
    return w


TWO_WAY_RIGHT = {
    "the book's solution": (with_entry(1.0), torch.eye(6)),
    "a stronger entry, still below 3": (with_entry(2.5), torch.eye(6)),
    "float64": (with_entry(1.0).double(), torch.eye(6, dtype=torch.float64)),
}
TWO_WAY_WRONG = {
    "the chapter's W_q unchanged": (
        (QUERY_MATRIX, torch.eye(6)),
        "张 puts its largest weight on 张; the antecedent's query must seek the pronoun",
    ),
    "tied matrices": ((with_entry(1.0), with_entry(1.0)), "w_q equals w_k"),
    "so strong that the pronoun looks at itself": (
        (with_entry(5.0), torch.eye(6)),
        "他 puts its largest weight on 他",
    ),
    "an entry that makes names avoid pronouns": (
        (with_entry(-1.0), torch.eye(6)),
        "every antecedent puts its largest weight on its pronoun: fails in 170 of 170",
    ),
    "one matrix, not a pair": (with_entry(1.0), "pass a pair (w_q, w_k)"),
    "wrong shape": ((with_entry(1.0), torch.eye(5)), "w_k must have shape (6, 6)"),
    "integer matrices": (
        (with_entry(1.0).long(), torch.eye(6, dtype=torch.long)),
        "floating-point tensor",
    ),
}


@pytest.mark.parametrize("name", TWO_WAY_RIGHT)
def test_right_two_way_lookups_pass(name):
    report = check_two_way_lookup(TWO_WAY_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", TWO_WAY_WRONG)
def test_wrong_two_way_lookups_are_named(name):
    matrices, fragment = TWO_WAY_WRONG[name]
    report = check_two_way_lookup(matrices)
    assert not report.passed
    assert fragment in str(report), str(report)
