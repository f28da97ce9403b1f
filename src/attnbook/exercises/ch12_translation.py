"""Chapter 12's checker: numbers in Chinese, read as a school textbook reads them.

* ``my_number_to_chinese(n)``: ``0 <= n < 10**8`` as Chinese numerals, with the rules of
  :func:`~attnbook.tasks.translation.number_to_chinese`: 二 everywhere (the book's
  simplification; speech often says 两); 十 alone at the start
  (十一, 十万) but 一十 inside a number (一百一十); one 零 for a run of zeros inside a group of four
  digits and before a group that starts with zeros (一百零五, 十万零五百), none for zeros at a
  group's end (一百万一千).

The checker asks for one number per rule, then for numbers drawn afresh inside the checker (not
kept anywhere a lookup table could copy), and refuses an answer that calls the library's
:func:`~attnbook.tasks.translation.number_to_chinese`. A mistake is named only when undoing that
one mistake gives the right reading.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnbook.exercises.report import Report, call, library
from attnbook.i18n import N_, tr
from attnbook.tasks.translation import number_to_chinese

__all__ = ["check_number_to_chinese"]

# One number per rule (and a few that test them together); the unseen numbers come after.
_RULES: tuple[int, ...] = (
    0, 2, 7, 10, 11, 20, 22, 105, 110, 222, 1010, 1050, 2002, 10_000, 12_000, 100_000,
    100_500, 110_000, 1_001_000, 1_000_001, 20_002, 10_101_010, 12_345_678, 99_999_999,
)  # fmt: skip


def _unseen(count: int = 32, seed: int = 12) -> list[int]:
    """Numbers of 1 to 8 digits, about two digits in five zero (runs of zeros, empty groups)."""
    g = torch.Generator().manual_seed(seed)
    numbers = []
    for i in range(count):
        digits = [int(torch.randint(1, 10, (1,), generator=g))]
        for _ in range(i % 8):
            zero = float(torch.rand(1, generator=g)) < 0.4
            digits.append(0 if zero else int(torch.randint(1, 10, (1,), generator=g)))
        numbers.append(int("".join(map(str, digits))))
    return numbers


def _without_wan(n: int) -> str:
    return number_to_chinese(n % 10_000) if n % 10_000 else ""


def _diagnose(n: int, got: str, expected: str) -> str:
    """A sentence naming the one slip that, undone, gives the right reading (if there is one)."""
    said = {"got": got, "expected": expected}
    if got.replace("两", "二") == expected and "两" in got:
        return tr(
            "got {got!r}; this book writes 二 everywhere, its simplification, though speech often "
            "says 两 before 千, 万 or 百 (expected {expected!r})"
        ).format(**said)
    if got.replace("〇", "零") == expected and "〇" in got:
        return tr(
            "got {got!r}; inside a number, zero is written 零; 〇 is for digits read one by one, "
            "as in the year 二〇二四 (expected {expected!r})"
        ).format(**said)
    if got == "一" + expected:
        return tr("got {got!r}; a number that starts with ten drops the 一: {expected!r}").format(
            **said
        )
    if "一十" in expected and got == expected.replace("一十", "十"):
        return tr("got {got!r}; inside a number, ten keeps its 一: {expected!r}").format(**said)
    if n >= 10_000 and "万" not in got:
        if got == expected.replace("万", ""):
            return tr(
                "got {got!r}; the 万 is missing: from 10,000 on, a number is read in two groups "
                "of four digits, the upper one followed by 万: {expected!r}"
            ).format(**said)
        if n % 10_000 and got == _without_wan(n):
            return tr(
                "got {got!r}, the reading of the last four digits only; the group above them is "
                "read too, followed by 万: {expected!r}"
            ).format(**said)
    if n % 10_000 and got == expected.split("万")[0] + "万" and "万" in expected:
        return tr(
            "got {got!r}; the group after 万 is missing: read the last four digits too: "
            "{expected!r}"
        ).format(**said)
    if n == 0 and not got:
        return tr("got {got!r}; zero itself is read 零: 0 needs a case of its own").format(**said)
    if got.replace("零", "") == expected.replace("零", ""):
        if got.count("零") < expected.count("零"):
            return tr(
                "got {got!r}; zeros inside a number are read as one 零 per run (also before a "
                "group of four digits that starts with zeros): {expected!r}"
            ).format(**said)
        if got.count("零") > expected.count("零"):
            return tr(
                "got {got!r}; one 零 per run of zeros, and none for zeros at the end of a group: "
                "{expected!r}"
            ).format(**said)
    return tr("expected {expected!r}, got {got!r}").format(**said)


def check_number_to_chinese(my_number_to_chinese: Callable[[int], str]) -> Report:
    """Chapter 12: the Chinese reading of one number per rule, then of 32 numbers the checker
    draws (each of 1 to 8 digits, with runs of zeros)."""
    report = Report(N_("numbers in Chinese"), refused=library(number_to_chinese))

    def judge(n: int) -> str | None:
        got = call(my_number_to_chinese, n)
        if not isinstance(got, str):
            return tr("my_number_to_chinese must return a str; got {got_type}").format(
                got_type=type(got).__name__
            )
        expected = number_to_chinese(n)
        return None if got == expected else _diagnose(n, got, expected)

    for n in _RULES:
        report.run(format(n, ","), lambda n=n: judge(n))  # a number: nothing to translate

    def unseen() -> str | None:
        for n in _unseen():
            problem = judge(n)
            if problem is not None:
                return tr("{n:,}: {problem}").format(n=n, problem=problem)
        return None

    report.run("32 more numbers, drawn by the checker", unseen)
    return report
