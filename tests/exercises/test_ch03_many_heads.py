"""The chapter 3 checker accepts a right parameter count and names each typical mistake."""

from attnbook.exercises import check_param_count
from attnbook.exercises.ch03_many_heads import mha_param_count_reference


def correct(embed_dim, num_heads, bias=True, kdim=None, vdim=None):
    kdim = embed_dim if kdim is None else kdim
    vdim = embed_dim if vdim is None else vdim
    weights = embed_dim * (embed_dim + kdim + vdim + embed_dim)
    return weights + (4 * embed_dim if bias else 0)


def test_reference_matches_the_chapters_numbers():
    assert mha_param_count_reference(512, 8) == 1_050_624
    assert mha_param_count_reference(512, 8, bias=False) == 1_048_576


def test_correct_answer_passes():
    report = check_param_count(correct)
    assert report.passed, str(report)


def test_missing_biases_are_named():
    report = check_param_count(
        lambda E, H, bias=True, kdim=None, vdim=None: correct(E, H, False, kdim, vdim)
    )
    assert not report.passed
    assert "not the biases" in str(report)


def test_the_articles_three_matrices_are_named():
    report = check_param_count(lambda E, H, **kw: 3 * E * E)
    assert "786,432" in str(report)


def test_missing_output_projection_is_named():
    report = check_param_count(
        lambda E, H, bias=True, kdim=None, vdim=None: (
            correct(E, H, bias, kdim, vdim) - E * E - (E if bias else 0)
        )
    )
    assert "output projection" in str(report)


def test_count_growing_with_heads_is_named():
    report = check_param_count(
        lambda E, H, bias=True, kdim=None, vdim=None: H * correct(E, H, bias, kdim, vdim)
    )
    assert "slice of E/H" in str(report)


def test_ignoring_kdim_and_vdim_is_named():
    report = check_param_count(lambda E, H, bias=True, kdim=None, vdim=None: correct(E, H, bias))
    assert "kdim" in str(report)
    assert report.lines[0][0]  # the default sizes are still right


def test_counting_biases_when_there_are_none_is_named():
    report = check_param_count(
        lambda E, H, bias=True, kdim=None, vdim=None: correct(E, H, True, kdim, vdim)
    )
    assert "no biases to count" in str(report)


def test_non_integer_answer_is_reported():
    report = check_param_count(lambda E, H, **kw: "many")
    assert "return an int" in str(report)


def test_a_crash_is_reported_not_raised():
    def broken(E, H, **kw):
        raise ZeroDivisionError("oops")

    report = check_param_count(broken)
    assert not report.passed
    assert "raised ZeroDivisionError" in str(report)
