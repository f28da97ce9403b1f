"""Chapter 12's checker: numbers in Chinese, read as a school textbook reads them.

* ``my_number_to_chinese(n)``: ``0 <= n < 10**8`` as Chinese numerals, with the rules of
  :func:`~attnbook.tasks.translation.number_to_chinese`: 二 everywhere (the book's
  simplification; speech often says 两); 十 alone at the start
  (十一, 十万) but 一十 inside a number (一百一十); one 零 for a run of zeros inside a group of four
  digits and before a group that starts with zeros (一百零五, 十万零五百), none for zeros at a
  group's end (一百万一千).
"""

from __future__ import annotations

from collections.abc import Callable

from attnbook.exercises.report import Report, call
from attnbook.i18n import tr
from attnbook.tasks.translation import number_to_chinese

__all__ = ["check_number_to_chinese", "CASES"]

#: The numbers the checker asks for, each testing one rule (and a few that test them together).
CASES: tuple[int, ...] = (
    0, 2, 7, 10, 11, 20, 22, 105, 110, 222, 1010, 1050, 2002, 10_000, 12_000, 100_000,
    100_500, 110_000, 1_001_000, 1_000_001, 20_002, 10_101_010, 12_345_678, 99_999_999,
)  # fmt: skip


def _diagnose(n: int, got: str, expected: str) -> str:
    """A sentence naming the learner's likely mistake for ``n``."""
    if "两" in got:
        return tr(
            "got {got!r}; this book writes 二 everywhere, its simplification, though speech often "
            "says 两 before 千, 万 or 百 (expected {expected!r})"
        ).format(got=got, expected=expected)
    if got == "一" + expected:
        return tr("got {got!r}; a number that starts with ten drops the 一: {expected!r}").format(
            got=got, expected=expected
        )
    if "一十" in expected and got == expected.replace("一十", "十"):
        return tr("got {got!r}; inside a number, ten keeps its 一: {expected!r}").format(
            got=got, expected=expected
        )
    if got.count("零") < expected.count("零"):
        return tr(
            "got {got!r}; zeros inside a number are read as one 零 per run (also before a group "
            "of four digits that starts with zeros): {expected!r}"
        ).format(got=got, expected=expected)
    if got.count("零") > expected.count("零"):
        return tr(
            "got {got!r}; one 零 per run of zeros, and none for zeros at the end of a group: "
            "{expected!r}"
        ).format(got=got, expected=expected)
    return tr("expected {expected!r}, got {got!r}").format(expected=expected, got=got)


def check_number_to_chinese(my_number_to_chinese: Callable[[int], str]) -> Report:
    """Chapter 12: the Chinese reading of every number in ``CASES`` (each tests one rule)."""
    report = Report("numbers in Chinese")

    def case(n: int) -> Callable[[], str | None]:
        def run() -> str | None:
            got = call(my_number_to_chinese, n)
            if not isinstance(got, str):
                return tr("my_number_to_chinese must return a str; got {got_type}").format(
                    got_type=type(got).__name__
                )
            expected = number_to_chinese(n)
            return None if got == expected else _diagnose(n, got, expected)

        return run

    for n in CASES:
        report.run(f"{n:,}", case(n))
    return report
