"""The syllabus (scripts/syllabus.py): its times are computed from the chapters, and every place
that states a chapter's time — the syllabus page, the introduction's chapter map, the chapter's
own opening box — agrees with the computation, in both editions."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("syllabus", ROOT / "scripts" / "syllabus.py")
syllabus = importlib.util.module_from_spec(spec)
sys.modules["syllabus"] = syllabus  # dataclasses look their module up
spec.loader.exec_module(syllabus)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_stated_time_is_the_computed_one(lang):
    stale = [
        path.relative_to(ROOT)
        for path, text in syllabus.updated_files(lang).items()
        if path.read_text("utf-8") != text
    ]
    assert not stale, f"stale; run `python scripts/syllabus.py`: {stale}"


def test_a_chapters_time_is_reading_plus_running_plus_exercises():
    page = syllabus.Page("book/x", "part", "A title", words=1200, core_words=600, exercises=2,
                         core_exercises=1, run_minutes=1.0, deeper_page=False)  # fmt: skip
    # 1,200 words at 120 a minute, 1 minute of running, 2 exercises of 12 minutes: 35 minutes
    assert page.minutes("en", core=False) == 35
    # the core path: 600 words, the same run, 1 exercise: 18 minutes, rounded to 20
    assert page.minutes("en", core=True) == 20
    # Chinese at 250 characters a minute: 1,200 characters are 4.8 minutes: 29.8, rounded to 30
    assert page.minutes("zh", core=False) == 30


def test_going_deeper_cells_and_pages_are_off_the_core_path(tmp_path, monkeypatch):
    def cell(text, deeper=False):
        return {"cell_type": "markdown", "metadata": {"tags": ["deeper"]} if deeper else {},
                "source": [text]}  # fmt: skip

    words = " ".join(["word"] * 120)
    book = tmp_path / "book"
    book.mkdir()
    nb = {"cells": [cell("# A chapter\n\n" + words), cell(words + "\n```{exercise}\n```", True)]}
    (book / "01_a.ipynb").write_text(json.dumps(nb), "utf-8")
    deeper = {"cells": [cell("# Going deeper: a side study\n\n" + words)]}
    (book / "02_b.ipynb").write_text(json.dumps(deeper), "utf-8")
    monkeypatch.setitem(syllabus.EDITIONS, "en", tmp_path)
    a = syllabus.read_page("en", "Part", "book/01_a", {"book/01_a": 60})
    # the title's two words and 120 in each cell; the exercise is in the deeper cell
    assert (a.words, a.core_words, a.exercises, a.core_exercises) == (242, 122, 1, 0)
    assert not a.deeper_page
    b = syllabus.read_page("en", "Part", "book/02_b", {})
    assert b.deeper_page and b.minutes("en", core=True) == 0


def test_the_check_fails_when_a_stated_time_is_edited(tmp_path, monkeypatch):
    for name in ("_toc.yml",):
        (tmp_path / name).write_text((ROOT / name).read_text("utf-8"), "utf-8")
    (tmp_path / "book").mkdir()
    for path in (ROOT / "book").glob("*.ipynb"):
        (tmp_path / "book" / path.name).write_text(path.read_text("utf-8"), "utf-8")
    for name in ("syllabus.md", "intro.md"):
        (tmp_path / "book" / name).write_text((ROOT / "book" / name).read_text("utf-8"), "utf-8")
    monkeypatch.setitem(syllabus.EDITIONS, "en", tmp_path)
    assert all(p.read_text("utf-8") == t for p, t in syllabus.updated_files("en").items())
    intro = tmp_path / "book" / "intro.md"
    text = intro.read_text("utf-8")
    first_time = text.index(" min |")
    intro.write_text(text[:first_time] + "0" + text[first_time:], "utf-8")  # 85 min -> 850 min
    changed = [p for p, t in syllabus.updated_files("en").items() if p.read_text("utf-8") != t]
    assert changed == [intro]
