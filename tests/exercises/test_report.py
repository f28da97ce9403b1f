"""The harness: fresh inputs for every call, errors blamed only when they are the learner's."""

import pytest
import torch

from attnbook.exercises.report import LearnerError, Report, call, changed_inputs, expect_tensor


def test_each_call_gets_fresh_copies_so_in_place_edits_do_not_leak():
    x = torch.ones(3)

    def edits(t):
        t /= 2
        return t

    assert torch.equal(call(edits, x), torch.full((3,), 0.5))
    assert torch.equal(x, torch.ones(3))


def test_only_exceptions_inside_the_learners_code_are_reported_as_theirs():
    report = Report("demo")

    def theirs():
        return call(lambda: 1 / 0)

    def ours():
        return torch.ones(2).item()  # a checker-side conversion error

    report.run("learner", theirs)
    report.run("checker", ours)
    assert "your function raised ZeroDivisionError" in report.lines[0][1]
    assert "your function raised" not in report.lines[1][1]
    assert "the checker could not use your answer" in report.lines[1][1]
    with pytest.raises(LearnerError):
        call(lambda: [][1])


def test_changed_inputs_names_the_argument_edited_in_place():
    def scale_query(q, k):
        q.mul_(2)
        return q @ k

    message = changed_inputs(scale_query, ("query", "key"), torch.ones(2, 2), torch.ones(2, 2))
    assert (
        message is not None
        and "query" in message
        and "key" not in message.split("in place")[0].replace("query", "")
    )
    assert (
        changed_inputs(lambda q, k: q @ k, ("query", "key"), torch.ones(2, 2), torch.ones(2, 2))
        is None
    )


@pytest.mark.parametrize(
    ("result", "fragment"),
    [
        ((torch.ones(2), torch.ones(2)), "got a tuple (Tensor, Tensor)"),
        (None, "got NoneType"),
        (torch.ones(4), "(a scalar: reduce with .mean())"),
        (torch.ones((), dtype=torch.float64), "got torch.float64"),
    ],
)
def test_expect_tensor_says_what_was_expected(result, fragment):
    assert fragment in expect_tensor(result, ())


def test_expect_tensor_accepts_the_right_tensor():
    assert expect_tensor(torch.zeros(2, 3), (2, 3)) is None


def test_a_report_with_no_case_has_not_passed():
    assert not Report("empty").passed
