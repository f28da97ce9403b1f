"""Chapter 12's checker accepts the library's reading and names each likely mistake."""

from __future__ import annotations

from attnbook.exercises.ch12_translation import CASES, check_number_to_chinese
from attnbook.tasks.translation import number_to_chinese


def test_the_library_passes():
    assert check_number_to_chinese(number_to_chinese).passed


def test_every_case_is_checked():
    assert len(check_number_to_chinese(number_to_chinese).lines) == len(CASES)


def test_liang_is_named():
    report = check_number_to_chinese(lambda n: number_to_chinese(n).replace("二", "两"))
    assert not report.passed and "两" in str(report)


def test_a_leading_yi_shi_is_named():
    def with_yi(n: int) -> str:
        text = number_to_chinese(n)
        return "一" + text if text.startswith("十") else text

    report = check_number_to_chinese(with_yi)
    assert not report.passed and "starts with ten" in str(report)


def test_a_dropped_inner_yi_is_named():
    def without_yi(n: int) -> str:
        text = number_to_chinese(n)
        return text[0] + text[1:].replace("一十", "十")

    report = check_number_to_chinese(without_yi)
    assert not report.passed and "keeps its 一" in str(report)


def test_missing_zeros_are_named():
    report = check_number_to_chinese(lambda n: number_to_chinese(n).replace("零", "") or "零")
    assert not report.passed and "one 零 per run" in str(report)


def test_a_zero_per_digit_is_named():
    report = check_number_to_chinese(lambda n: number_to_chinese(n).replace("零", "零零"))
    assert not report.passed and "none for zeros at the end" in str(report)


def test_a_crash_is_reported():
    def crashes(n: int) -> str:
        raise RuntimeError("boom")

    report = check_number_to_chinese(crashes)
    assert not report.passed and "boom" in str(report)


def test_a_wrong_type_is_reported():
    report = check_number_to_chinese(lambda n: n)
    assert not report.passed and "must return a str" in str(report)
