"""Chapter 3's checkers accept right counts and name the usual miscounts."""

import pytest
import torch

from attnbook.exercises import check_fixed_head_size, check_param_count
from attnbook.exercises.ch03_many_heads import mha_param_count_reference


def book_solution(embed_dim, num_heads, bias=True, kdim=None, vdim=None):
    kdim = embed_dim if kdim is None else kdim
    vdim = embed_dim if vdim is None else vdim
    weights = embed_dim * embed_dim + embed_dim * kdim + embed_dim * vdim + embed_dim * embed_dim
    return weights + (4 * embed_dim if bias else 0)


def by_building_one(embed_dim, num_heads, bias=True, kdim=None, vdim=None):
    module = torch.nn.MultiheadAttention(embed_dim, num_heads, bias=bias, kdim=kdim, vdim=vdim)
    return sum(p.numel() for p in module.parameters())


def no_biases(E, H, bias=True, kdim=None, vdim=None):
    return book_solution(E, H, False, kdim, vdim)


def ignores_kdim(E, H, bias=True, kdim=None, vdim=None):
    return book_solution(E, H, bias)


RIGHT = {"the book's formula": book_solution, "counting a real module": by_building_one}
WRONG = {
    "no biases": (
        lambda E, H, bias=True, kdim=None, vdim=None: book_solution(E, H, False, kdim, vdim),
        "not the biases",
    ),
    "the article's 3E²": (lambda E, H, **kw: 3 * E * E, "786,432"),
    "grows with the heads": (lambda E, H, **kw: H * book_solution(E, H, **kw), "slice of E/H rows"),
    "ignores kdim and vdim": (
        lambda E, H, bias=True, kdim=None, vdim=None: book_solution(E, H, bias),
        "kdim features to E",
    ),
    "a float a little off": (
        lambda *a, **kw: book_solution(*a, **kw) + 0.9,
        "return the count as an int",
    ),
    "a string": (lambda *a, **kw: str(book_solution(*a, **kw)), "got str"),
    "a float that is exact": (lambda *a, **kw: float(book_solution(*a, **kw)), "got float"),
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_counts_pass(name):
    report = check_param_count(RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", WRONG)
def test_wrong_counts_are_named(name):
    fn, fragment = WRONG[name]
    report = check_param_count(fn)
    assert not report.passed and fragment in str(report), str(report)


def test_the_reference_matches_the_chapters_numbers():
    assert mha_param_count_reference(512, 8) == 1_050_624
    assert mha_param_count_reference(512, 8, bias=False) == 1_048_576


def test_a_crash_is_reported_as_the_learners():
    report = check_param_count(lambda *a, **kw: {}["x"])
    assert not report.passed and "your function raised KeyError" in str(report)


FIXED_RIGHT = {
    "the book's numbers": {1: 16_640, 2: 66_048, 4: 263_168, 8: 1_050_624, 16: 4_198_400},
    "computed": {H: 16_384 * H * H + 256 * H for H in (1, 2, 4, 8, 16)},
}
FIXED_WRONG = {
    "E kept at 512": ({H: 1_050_624 for H in (1, 2, 4, 8, 16)}, "the count for E = 512"),
    "no biases": ({H: 4 * (64 * H) ** 2 for H in (1, 2, 4, 8, 16)}, "biases"),
    "a missing H": ({1: 16_640, 2: 66_048}, "one count for each H"),
    "a wrong value": (
        {1: 16_640, 2: 66_048, 4: 263_168, 8: 1_050_624, 16: 4_198_401},
        "expected 4,198,400",
    ),
}


@pytest.mark.parametrize("name", FIXED_RIGHT)
def test_right_fixed_head_size_counts_pass(name):
    report = check_fixed_head_size(FIXED_RIGHT[name])
    assert report.passed, str(report)


@pytest.mark.parametrize("name", FIXED_WRONG)
def test_wrong_fixed_head_size_counts_are_named(name):
    counts, fragment = FIXED_WRONG[name]
    report = check_fixed_head_size(counts)
    assert not report.passed and fragment in str(report), str(report)
