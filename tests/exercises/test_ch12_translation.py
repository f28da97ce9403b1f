"""Chapter 12's checker accepts a reading written by hand and names each likely mistake."""

from __future__ import annotations

import attnbook.exercises.ch12_translation as ch12
from attnbook.exercises.ch12_translation import check_number_to_chinese
from attnbook.tasks import translation
from attnbook.tasks.translation import number_to_chinese

DIGITS = "零一二三四五六七八九"


def by_hand(n: int) -> str:
    """The book's solution: a right reading that does not call the library."""

    def group(g: int) -> str:
        out, zero = "", False
        for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d = g // value % 10
            if d == 0:
                zero = zero or out != ""
            else:
                out += ("零" if zero else "") + DIGITS[d] + unit
                zero = False
        return out

    if n == 0:
        return "零"
    high, low = divmod(n, 10_000)
    text = group(high) + "万" if high else ""
    if low:
        text += ("零" if high and low < 1000 else "") + group(low)
    return text[1:] if text.startswith("一十") else text


def test_a_reading_written_by_hand_passes():
    assert check_number_to_chinese(by_hand).passed


def test_every_rule_case_and_the_drawn_numbers_are_checked():
    report = check_number_to_chinese(by_hand)
    assert len(report.lines) == len(ch12._RULES) + 1
    assert report.lines[-1][1].startswith("32 more numbers")


def test_the_test_cases_are_not_exported():
    assert not hasattr(ch12, "CASES") and "CASES" not in ch12.__all__


def test_the_drawn_numbers_are_new_and_of_every_length():
    unseen = ch12._unseen()
    assert len(set(unseen) - set(ch12._RULES)) >= 28
    assert {len(str(n)) for n in unseen} == set(range(1, 9))
    assert any("0" in str(n)[1:] for n in unseen)  # runs of zeros inside


def test_calling_the_library_is_refused_however_it_is_reached():
    for answer in (
        number_to_chinese,
        lambda n: number_to_chinese(n),
        lambda n: translation.number_to_chinese(n),
    ):
        report = check_number_to_chinese(answer)
        assert not report.passed
        assert "calls number_to_chinese" in report.lines[0][1], str(report)
    assert translation.number_to_chinese is number_to_chinese  # restored afterwards


def test_a_lookup_table_of_the_rule_cases_fails_on_the_drawn_numbers():
    table = {n: by_hand(n) for n in ch12._RULES}
    report = check_number_to_chinese(lambda n: table[n])
    assert not report.passed and "KeyError" in report.lines[-1][1], str(report)


def test_liang_is_named():
    report = check_number_to_chinese(lambda n: by_hand(n).replace("二", "两"))
    assert not report.passed and "两" in str(report)


def test_a_leading_yi_shi_is_named():
    def with_yi(n: int) -> str:
        text = by_hand(n)
        return "一" + text if text.startswith("十") else text

    report = check_number_to_chinese(with_yi)
    assert not report.passed and "starts with ten" in str(report)


def test_a_dropped_inner_yi_is_named():
    def without_yi(n: int) -> str:
        text = by_hand(n)
        return text[0] + text[1:].replace("一十", "十")

    report = check_number_to_chinese(without_yi)
    assert not report.passed and "keeps its 一" in str(report)


def test_missing_zeros_are_named():
    report = check_number_to_chinese(lambda n: by_hand(n).replace("零", "") or "零")
    assert not report.passed and "one 零 per run" in str(report)


def test_a_zero_per_digit_is_named():
    report = check_number_to_chinese(lambda n: by_hand(n).replace("零", "零零"))
    assert not report.passed and "none for zeros at the end" in str(report)


def test_ling_written_as_the_circle_is_named_not_blamed_on_runs_of_zeros():
    report = str(check_number_to_chinese(lambda n: by_hand(n).replace("零", "〇")))
    assert "〇 is for digits read one by one" in report and "one 零 per run" not in report


def test_a_missing_wan_is_named_not_blamed_on_zeros():
    report = str(check_number_to_chinese(lambda n: by_hand(n).replace("万", "")))
    assert "the 万 is missing" in report and "one 零 per run" not in report
    report = str(check_number_to_chinese(lambda n: by_hand(n % 10_000) if n % 10_000 else "零"))
    assert "last four digits only" in report and "one 零 per run" not in report


def test_a_crash_is_reported():
    def crashes(n: int) -> str:
        raise RuntimeError("boom")

    report = check_number_to_chinese(crashes)
    assert not report.passed and "boom" in str(report)


def test_a_wrong_type_is_reported():
    report = check_number_to_chinese(lambda n: n)
    assert not report.passed and "must return a str" in str(report)
