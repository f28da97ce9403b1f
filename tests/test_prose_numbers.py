"""Every number in the prose comes from a cell, a cited source, or a stated reason (both editions).

What scripts/prose_numbers.py checks, as tests: a number written into a chapter's prose, a table
or a solution that no cell of the notebook computes fails here, with the page, the cell and the
words around it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "prose_numbers", ROOT / "scripts" / "prose_numbers.py"
)
prose_numbers = importlib.util.module_from_spec(_spec)
sys.modules["prose_numbers"] = prose_numbers  # its dataclass looks its module up by name
_spec.loader.exec_module(prose_numbers)

PAGES = prose_numbers.pages()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_prose_number_is_placed(page):
    _, unplaced = prose_numbers.check(page)
    assert not unplaced, "numbers no cell computes:\n" + "\n".join(map(str, unplaced))


def test_the_check_reads_both_editions_and_their_numbers():
    assert {p.parent for p in PAGES} == {ROOT / "book", ROOT / "zh" / "book"}
    total = sum(prose_numbers.check(page)[0] for page in PAGES)
    print(f"prose numbers checked: {total} in {len(PAGES)} pages")
    assert total > 1500  # about 1,000 per edition: the check cannot silently read nothing


def test_no_allowance_outlives_its_number():
    assert prose_numbers.stale_allowances() == []


def notebook(tmp_path, prose, code="", output=""):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": prose},
        {
            "cell_type": "code",
            "metadata": {},
            "source": code,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": output}],
            "execution_count": 1,
        },
    ]
    path = tmp_path / "page.ipynb"
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return [u.number for u in prose_numbers.check(path)[1]]


@pytest.mark.parametrize(
    "prose, code, output",
    [
        ("Accuracy was about 0.47.", "", "accuracy 0.468\n"),  # rounded as the prose rounds
        ("It trains for 1,500 steps.", "fit(steps=1_500)", ""),  # separators in both
        ("In 99.6% of sentences.", "", "share 0.996\n"),  # a percentage of a printed share
        ("About 107,000 parameters.", "", "106,978 parameters\n"),  # 'about' rounds the zeros
        ("As Vaswani et al. {cite:p}`vaswani2017attention` report, 27.3 BLEU.", "", ""),
        ("See § 5.3 of the paper.", "", ""),
        ("```python\nx = 123.45\n```\nand `y = 678`.", "", ""),  # code is not prose
    ],
)
def test_placed_numbers_pass(tmp_path, prose, code, output):
    assert notebook(tmp_path, prose, code, output) == []


@pytest.mark.parametrize(
    "prose, output, unplaced",
    [
        ("One run gave 1.000 and 0.992.", "accuracy 1.000\n", ["0.992"]),  # the uncomputed run
        ("Accuracy was about 0.65.", "accuracy 0.643\n", ["0.65"]),  # rounded wrongly
        ("It needed 1,200 steps.", "needed 1,100 steps\n", ["1,200"]),
        ("In 99.6% of sentences.", "share 0.9\n", ["99.6"]),
    ],
)
def test_unplaced_numbers_fail(tmp_path, prose, output, unplaced):
    assert notebook(tmp_path, prose, "", output) == unplaced


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_running_text_carries_at_most_the_limit_of_numbers(page):
    """Tables carry the numbers, the prose the story (issue 40): at most 3.5 per 100 words."""
    value = prose_numbers.page_density(page)
    assert value <= prose_numbers.DENSITY_LIMIT, (
        f"{value:.1f} numbers per 100 words of running text (limit "
        f"{prose_numbers.DENSITY_LIMIT}): let a table carry them; "
        "python scripts/prose_numbers.py --density lists every page"
    )


def test_density_counts_quantities_and_leaves_out_tables_math_code_and_references():
    text = (
        "Seed 0 reached 0.91 and seed 1 reached 0.87, as chapter 3 and section 5.12 showed.\n\n"
        "| seed | accuracy |\n| 0 | 0.91 |\n\n$x_1 = 2$ and `steps=400`.\n"
    )
    numbers, words = prose_numbers.density(text, "en")
    assert numbers == 4  # 0, 0.91, 1, 0.87: not 3, not 5.12, nothing in the table, math or code
    assert words == 20  # as the syllabus counts: digits too, 0.91 as two
    chinese, zh_words = prose_numbers.density("第 3 章里，种子 0 的准确率是 0.91。", "zh")
    assert chinese == 2 and zh_words > 0


def test_a_quiz_is_read_like_prose_and_an_exercise_is_not():
    """A finding restated in a quiz goes stale with the finding (chapter 13's did once)."""
    pool = prose_numbers.Pool(prose_numbers.numbers_in("0.77"))
    quiz = (
        "```{quiz} The pointer puts about 0.78 of its weight there. Why?\n:name: q\n- [x] A\n```\n"
    )
    assert [n for n, _ in prose_numbers.unplaced_in(quiz, pool, {})] == ["0.78"]
    fixed = quiz.replace("0.78", "0.77")
    assert prose_numbers.unplaced_in(fixed, pool, {}) == []
    exercise = (
        "````{exercise} Sum\n:label: e\nIt gives 12.5 here.\n```python\nx = 3.25\n```\n````\n"
    )
    assert prose_numbers.unplaced_in(exercise, pool, {}) == []
