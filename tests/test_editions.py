"""The English and Chinese editions agree: the same pages in the same places, the same code.

What scripts/editions.py checks, as tests: a contributor who changes an English code cell and
forgets the Chinese one (or the other way round) is told which line differs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("editions", ROOT / "scripts" / "editions.py")
editions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(editions)

EN_PAGES = editions.toc_files(ROOT / "_toc.yml")


def test_both_tables_of_contents_list_the_same_pages_in_the_same_order():
    assert len(EN_PAGES) >= 30
    assert editions.toc_files(ROOT / "zh" / "_toc.yml") == EN_PAGES


@pytest.mark.parametrize("name", EN_PAGES)
def test_every_page_has_a_chinese_counterpart_that_agrees(name):
    english = editions.source_of(ROOT, name)
    chinese = ROOT / "zh" / english.relative_to(ROOT)
    assert chinese.exists(), f"{chinese.relative_to(ROOT)} is missing"
    problems = editions.check_pair(english, chinese)
    assert problems == [], "\n".join(problems)


def _notebook(cells: list[tuple[str, str]]) -> dict:
    return {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source}
            | ({"outputs": [], "execution_count": None} if kind == "code" else {})
            for kind, source in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


PROSE_ZH = "这一段是中文的说明文字，足够长，用来通过检查。" * 5
SETUP = "\n".join(editions.ZH_SETUP)


@pytest.fixture
def check(tmp_path):
    """check_pair on an English notebook and a Chinese one with the given code cells."""

    def run(en_code: list[str], zh_code: list[str], zh_prose: str = PROSE_ZH) -> list[str]:
        en = _notebook([("markdown", "English text."), *(("code", c) for c in en_code)])
        zh = _notebook([("markdown", zh_prose), *(("code", c) for c in zh_code)])
        paths = tmp_path / "en.ipynb", tmp_path / "zh.ipynb"
        for path, nb in zip(paths, (en, zh)):
            path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        return editions.check_pair(*paths)

    return run


def test_marked_lines_may_differ_and_unmarked_ones_may_not(check):
    en = ['x = 1\nplt.title("Loss")  # i18n']
    assert check(en, [f'x = 1\nplt.title("损失")  # i18n\n{SETUP}']) == []
    changed = check(en, [f'x = 2\nplt.title("损失")  # i18n\n{SETUP}'])
    assert len(changed) == 1 and "x = 1" in changed[0] and "x = 2" in changed[0]
    # a translated line that is not marked in the English edition is a difference too
    unmarked = check(['plt.title("Loss")'], [f'plt.title("损失")  # i18n\n{SETUP}'])
    assert len(unmarked) == 1 and "plt.title" in unmarked[0]


def test_a_missing_code_cell_a_syntax_error_and_english_prose_are_caught(check):
    assert "the English page has 2" in " ".join(check(["a = 1", "b = 2"], [f"a = 1\n{SETUP}"]))
    broken = check(['print("x")  # i18n'], [f'print("未闭合)  # i18n\n{SETUP}'])
    assert any("not valid Python" in p for p in broken)
    english = check(["a = 1"], [f"a = 1\n{SETUP}"], zh_prose="An English paragraph. " * 20)
    assert any("is it translated" in p for p in english)
    assert any("the first code cell" in p for p in check(["a = 1"], ["a = 1"]))


def _extension():
    spec = importlib.util.spec_from_file_location("ext_editions", ROOT / "book/_ext/editions.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    return ext


def _glossary_terms() -> list[str]:
    return _extension().glossary_terms(ROOT / "zh" / "book" / "glossary.md")


def test_the_chinese_search_splits_and_stems_as_sphinxs_does():
    """The build's Chinese search (a set of Latin words, not Sphinx's list) indexes the same
    words: the same split, and the same stem for a word it has seen and for one it has not."""
    from sphinx.search.zh import SearchChinese

    ours, sphinxs = _extension().chinese_search()({}), SearchChinese({})
    assert isinstance(ours.latin_terms, set)
    text = "多头注意力 (multi-head attention) is what its heads in GPT-2 were doing"
    assert ours.split(text) == sphinxs.split(text)
    # "its" and "abs" stem to two letters: Sphinx keeps such a word whole if a page had it.
    for word in [*ours.split(text), "its", "abs", "running", "GPU"]:
        assert ours.stem(word) == sphinxs.stem(word), word
    assert (ours.stem("its"), ours.stem("abs")) == ("its", "ab")


def test_the_glossary_terms_are_the_ones_the_chinese_chapters_use():
    """The glossary is also the Chinese search's dictionary: a term no chapter uses is a typo
    or a translation the chapters do not follow."""
    terms = [t for t in _glossary_terms() if t not in {"中文术语", "英文术语", "首次介绍"}]
    assert len(terms) >= 60
    text = "".join(
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "zh" / "book").rglob("*"))
        if p.suffix in {".ipynb", ".md"} and p.name != "glossary.md"
    )
    unused = [t for t in terms if t not in text]
    assert unused == [], f"glossary terms that no Chinese page uses: {unused}"
