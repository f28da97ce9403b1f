"""One term per concept in the Chinese edition: no page writes a variant the glossary retires.

The "## 统一译名" section of ``zh/book/glossary.md`` has a table ``| 统一译名 | 英文术语 | 不再使用的写法 |``:
the term the book uses, its English, and the variants it no longer writes, separated by "、". A
variant may carry a condition in brackets: ``代码单元（后面没有“格”字）`` is 代码单元 not followed by
格 (代码单元格 is the term), ``汇点（前面没有“聚”字）`` is 汇点 not preceded by 聚.

Checked: the markdown cells of the Chinese notebooks (``zh/book/*.ipynb``), the Chinese markdown
pages (``zh/book/**/*.md``; the glossary without the table itself, whose third column lists the
variants on purpose) and ``zh/_toc.yml``. Code cells are not checked: their strings are what the
code prints, and some of them are compared by asserts.

When this fails, write the term of the table's first column in place of the variant; if the
variant is right after all, change the table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "zh"
GLOSSARY = ZH / "book" / "glossary.md"
SECTION = "## 统一译名"
ROW = re.compile(r"^\|([^|]+)\|([^|]+)\|([^|]+)\|$")
VARIANT = re.compile(r"^(?P<term>[^（）]+?)(?:（(?P<side>前|后)面没有“(?P<char>[^”]+)”字）)?$")
#: Pages allowed to keep a variant while another branch revises them (none at present).
PENDING: dict[str, str] = {}


class Rule(NamedTuple):
    preferred: str
    variant: str
    pattern: re.Pattern


def rule(preferred: str, variant: str) -> Rule:
    """The pattern of one variant of the table's third column, with its condition if any."""
    match = VARIANT.match(variant)
    assert match, f"cannot read the variant {variant!r} of {preferred}"
    term, side, char = match["term"].strip(), match["side"], match["char"]
    pattern = re.escape(term)
    if side == "后":
        pattern = f"{pattern}(?!{re.escape(char)})"
    elif side == "前":
        pattern = f"(?<!{re.escape(char)}){pattern}"
    return Rule(preferred, term, re.compile(pattern))


def unified_terms(text: str) -> tuple[list[Rule], str]:
    """The rules of the 统一译名 table in a glossary's text, and the text without the table."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    rules, kept = [], lines[: start + 1]
    for line in lines[start + 1 : end]:
        match = ROW.match(line.strip())
        if not match:
            kept.append(line)
            continue
        preferred, _, variants = (cell.strip() for cell in match.groups())
        if preferred == "统一译名" or set(preferred) <= set("-: "):
            continue  # the header and the separator
        rules.extend(rule(preferred, v) for v in re.split(r"、", variants))
    return rules, "".join(kept + lines[end:])


RULES, GLOSSARY_WITHOUT_TABLE = unified_terms(GLOSSARY.read_text(encoding="utf-8"))


def notebook_texts(notebook: dict, name: str) -> list[tuple[str, str]]:
    """(where, text) for each markdown cell of a notebook."""
    return [
        (f"{name} cell {i}", "".join(cell["source"]))
        for i, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "markdown"
    ]


def variants(texts: list[tuple[str, str]], rules: list[Rule]) -> list[str]:
    """Every retired variant in the texts, as "where: variant (write …): …context…"."""
    found = []
    for where, text in texts:
        for r in rules:
            for match in r.pattern.finditer(text):
                context = " ".join(text[max(0, match.start() - 20) : match.end() + 20].split())
                found.append(f"{where}: {r.variant!r} (write {r.preferred}): …{context}…")
    return found


def texts_of(path: Path) -> list[tuple[str, str]]:
    name = str(path.relative_to(ROOT))
    if path.suffix == ".ipynb":
        return notebook_texts(json.loads(path.read_text(encoding="utf-8")), name)
    if path == GLOSSARY:
        return [(name, GLOSSARY_WITHOUT_TABLE)]
    return [(name, path.read_text(encoding="utf-8"))]


PAGES = [
    *sorted((ZH / "book").glob("*.ipynb")),
    *sorted((ZH / "book").rglob("*.md")),
    ZH / "_toc.yml",
]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=PENDING[p.name]))
        if p.name in PENDING
        else p
        for p in PAGES
    ],
    ids=[str(p.relative_to(ZH)) for p in PAGES],
)
def test_no_page_writes_a_retired_variant(path):
    found = variants(texts_of(path), RULES)
    assert found == [], "\n".join(found)


def test_the_table_is_read_and_no_term_is_its_own_variant():
    assert len(RULES) >= 10
    read = {r.variant for r in RULES}
    assert {"失效头", "头批量", "后归一化", "前归一化", "前置归一化", "代码单元", "汇点"} <= read
    for r in RULES:
        for term in re.split(r"、", r.preferred):
            assert not r.pattern.search(term), f"{term} contains its own variant {r.variant}"
    # the table itself is not checked, the rest of the glossary is
    assert "失效头" not in GLOSSARY_WITHOUT_TABLE and "死头" in GLOSSARY_WITHOUT_TABLE
    assert "注意力汇聚点" in GLOSSARY_WITHOUT_TABLE


def test_the_check_can_fail():
    """Variants planted in a small notebook and glossary are found, and only those."""
    glossary = (
        "# 术语表\n\n## 统一译名\n\n| 统一译名 | 英文术语 | 不再使用的写法 |\n|---|---|---|\n"
        "| 死头 | dead head | 失效头 |\n| 代码单元格 | code cell | 代码单元（后面没有“格”字） |\n"
        "| 注意力汇聚点 | attention sink | 汇点（前面没有“聚”字） |\n\n失效头一词写在表外。\n"
    )
    rules, rest = unified_terms(glossary)
    assert [r.variant for r in rules] == ["失效头", "代码单元", "汇点"]
    found = variants([("glossary", rest)], rules)
    assert len(found) == 1 and found[0].startswith("glossary: '失效头' (write 死头): …")
    notebook = {
        "cells": [
            {
                "cell_type": "markdown",
                "source": ["这是死头，", "下一个代码单元格会画出注意力汇聚点。"],
            },
            {"cell_type": "code", "source": ['print("失效头")']},
            {
                "cell_type": "markdown",
                "source": ["这个失效头由代码单元画出，", "看汇点；聚汇点不算。"],
            },
        ]
    }
    found = variants(notebook_texts(notebook, "x.ipynb"), rules)
    assert [f.split(" (")[0] for f in found] == [
        "x.ipynb cell 2: '失效头'",
        "x.ipynb cell 2: '代码单元'",
        "x.ipynb cell 2: '汇点'",
    ]
