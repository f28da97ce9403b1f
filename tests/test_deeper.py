"""Going-deeper sections (CONTRIBUTING.md): the core path of a chapter reads on its own.

A going-deeper section is a run of consecutive notebook cells tagged ``deeper``. Its first cell
is a markdown cell whose heading starts with the edition's marker ("Going deeper:", "深入一步："),
and whose first paragraph links ({ref}) to the label that opens the cell right after the run,
where the core path continues; that cell's heading is at the deeper heading's level or above, so
the section is exactly the run (the site sets the section apart: book/_ext/site_fixes.py). The
two editions tag the same code cells, and no core cell uses a name that only a deeper cell
defines. A whole page can be a deeper one (section 3.14): its title starts with the marker, and
its first cell links ({doc}) to the page where the core path continues.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import site_fixes  # noqa: E402

MARKERS = {"en": "Going deeper:", "zh": "深入一步："}
EDITIONS = {"en": ROOT / "book", "zh": ROOT / "zh" / "book"}
NOTEBOOKS = sorted(p.name for p in EDITIONS["en"].glob("*.ipynb"))
HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)
LABEL = re.compile(r"^\(([\w-]+)\)=\s*$")
REF = re.compile(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`")


def source(cell: dict) -> str:
    return "".join(cell["source"])


def is_deeper(cell: dict) -> bool:
    return "deeper" in cell["metadata"].get("tags", [])


def runs(cells: list[dict]) -> list[tuple[int, int]]:
    """(first, last + 1) of every run of consecutive deeper-tagged cells."""
    found, start = [], None
    for i, cell in enumerate([*cells, {"metadata": {}}]):
        if is_deeper(cell) and start is None:
            start = i
        elif not is_deeper(cell) and start is not None:
            found.append((start, i))
            start = None
    return found


def problems(cells: list[dict], marker: str) -> list[str]:
    """What breaks the convention in one notebook's cells."""
    found = []
    for start, end in runs(cells):
        first = cells[start]
        text = source(first)
        heading = HEADING.search(text)
        if first["cell_type"] != "markdown" or not heading or not heading[2].startswith(marker):
            found.append(f"cell {start}: a deeper run must start with a '{marker}' heading")
            continue
        level = len(heading[1])
        paragraph = text[heading.end() :].strip().split("\n\n")[0]
        if end == len(cells):
            found.append(f"cell {start}: the deeper run ends the page; the core path must go on")
            continue
        after = source(cells[end]).splitlines()
        label = LABEL.match(after[0]) if after else None
        if not label or label[1] not in REF.findall(paragraph):
            found.append(
                f"cell {start}: the first paragraph must link ({{ref}}) to the label that opens "
                f"cell {end}, where the core path continues"
            )
        next_heading = HEADING.search(source(cells[end]))
        if cells[end]["cell_type"] != "markdown" or not next_heading:
            found.append(f"cell {end}: the core path must go on with a heading")
        elif len(next_heading[1]) > level:
            found.append(f"cell {end}: the core path's heading is below the deeper one's level")
        for i in range(start, end):
            for hashes, _ in HEADING.findall(source(cells[i])) if i > start else []:
                if len(hashes) <= level and cells[i]["cell_type"] == "markdown":
                    found.append(f"cell {i}: a heading inside the deeper run ends its section")
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and not is_deeper(cell):
            for hashes, title in HEADING.findall(source(cell)):
                if hashes == "#" and i == 0 and title.startswith(marker):
                    if "{doc}`" not in source(cell):
                        found.append("cell 0: a deeper page must link to where the core goes on")
                elif title.startswith(marker):
                    found.append(f"cell {i}: a '{marker}' heading on a cell not tagged deeper")
    return found


def names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a cell binds at its top level, and the names it reads."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):  # a function's or a lambda's parameter
            bound.add(node.arg)
    return bound, read


def core_uses_deeper_names(cells: list[dict]) -> list[str]:
    """Core code cells that read a name defined so far only in deeper cells."""
    core, deeper, found = set(dir(builtins)), set(), []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        body = "\n".join(
            "pass" if line.lstrip().startswith(("%", "!")) else line
            for line in source(cell).splitlines()
        )
        bound, read = names(ast.parse(body))
        if is_deeper(cell):
            deeper |= bound
        else:
            missing = sorted((read & deeper) - core - bound)
            if missing:
                found.append(f"cell {i} reads {missing}, defined only in a deeper section")
            core |= bound
    return found


def load(edition: str, name: str) -> list[dict]:
    return json.loads((EDITIONS[edition] / name).read_text(encoding="utf-8"))["cells"]


def test_the_markers_are_the_ones_the_site_marks():
    assert set(MARKERS.values()) == set(site_fixes.DEEPER_MARKERS)


def test_the_book_has_deeper_sections():
    assert any(runs(load("en", name)) for name in NOTEBOOKS)


@pytest.mark.parametrize("edition", MARKERS)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_deeper_run_opens_with_its_heading_and_a_way_back(edition, name):
    assert problems(load(edition, name), MARKERS[edition]) == []


@pytest.mark.parametrize("edition", MARKERS)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_core_cell_needs_a_name_from_a_deeper_one(edition, name):
    assert core_uses_deeper_names(load(edition, name)) == []


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_both_editions_put_the_same_code_cells_in_the_same_sections(name):
    def sections(cells: list[dict]) -> list[list[int]]:
        code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
        return [[code.index(i) for i in range(a, b) if i in code] for a, b in runs(cells)]

    assert sections(load("zh", name)) == sections(load("en", name))


def test_the_checks_catch_a_broken_convention():
    cells = load("en", "01_detective.ipynb")
    start, end = runs(cells)[0]
    marker = MARKERS["en"]
    assert problems(cells, marker) == []
    untagged = json.loads(json.dumps(cells))
    untagged[start]["metadata"]["tags"].remove("deeper")  # the heading cell left out of the run
    assert problems(untagged, marker)
    no_way_back = json.loads(json.dumps(cells))
    no_way_back[end]["source"] = no_way_back[end]["source"][1:]  # the label dropped
    assert problems(no_way_back, marker)
    core_needs = json.loads(json.dumps(cells))
    first_code = next(i for i in range(start, end) if cells[i]["cell_type"] == "code")
    core_needs.insert(end, {"cell_type": "code", "metadata": {}, "source": ["tied\n"]})
    assert "tied" in source(cells[first_code])
    assert core_uses_deeper_names(core_needs)


def test_the_site_marks_the_deeper_sections_and_a_deeper_page():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    def sections(title: str, inner: str) -> dict[str, list[str]]:
        doc = new_document("page", get_default_settings(Parser))
        rst = f"{title}\n{'=' * 40}\n\n{inner}\n{'-' * 40}\n\nText.\n\nCore\n{'-' * 40}\n\nMore.\n"
        Parser().parse(rst, doc)
        site_fixes._mark_deeper_sections(None, doc)
        return {s.next_node(nodes.title).astext(): s["classes"] for s in doc.findall(nodes.section)}

    marked = sections("A chapter", "Going deeper: a proof")
    assert marked == {"A chapter": [], "Going deeper: a proof": ["deeper"], "Core": []}
    marked = sections("深入一步：一项旁支研究", "A part")
    assert marked["深入一步：一项旁支研究"] == ["deeper-page"] and marked["A part"] == []


def test_the_name_check_flags_a_deeper_global_but_not_a_parameter():
    def code(text, deeper=False):
        return {
            "cell_type": "code",
            "source": text,
            "metadata": {"tags": ["deeper"] if deeper else []},
        }

    cells = [code("b = 1\nx = 2", deeper=True), code("f = lambda b: b + 1\nprint(x)")]
    assert core_uses_deeper_names(cells) == ["cell 1 reads ['x'], defined only in a deeper section"]
