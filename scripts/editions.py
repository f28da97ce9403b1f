"""The English and Chinese editions: make a Chinese page to translate, and check the two agree.

The Chinese edition lives in ``zh/`` with the same paths as the English one (``book/03_….ipynb``
↔ ``zh/book/03_….ipynb``). Its notebooks run **the same code**: every code cell equals the
English cell at the same place, line for line, except lines that end in ``# i18n`` (an example
sentence, a figure's title, a printed label), which may differ or exist in one edition only.

Usage:
    python scripts/editions.py new book/03_why_many_heads.ipynb   # zh/book/03_….ipynb to translate
    python scripts/editions.py check                              # what tests/test_editions.py checks
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "zh"
#: A code line that may differ between the editions ends with this comment.
MARK = re.compile(r"#\s*i18n\s*$")
#: The lines a Chinese notebook adds to its first code cell.
ZH_SETUP = ["from attnbook.i18n import set_language  # i18n", 'set_language("zh")  # i18n']
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# What is not prose: code blocks and spans, math, roles and directives' options, links' targets.
NOT_PROSE = [
    # code, and directives whose body is code (not admonitions, exercises, figures)
    re.compile(
        r"^(`{3,}|~{3,})(?!\{)[^\n]*\n.*?^\1\s*$"
        r"|^(`{3,}|~{3,})\{(?:eval-rst|literalinclude|code-block|code|math)\}[^\n]*\n.*?^\2\s*$",
        re.S | re.M,
    ),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\{[a-z:-]+\}"),
    re.compile(r"^:[a-z-]+:.*$", re.M),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"https?://\S+"),
    re.compile(r"<[^>]+>"),
    re.compile(r"^\(.*\)=\s*$", re.M),
]


def toc_files(toc: Path) -> list[str]:
    """The toc's files in reading order (root first), as written there."""
    files: list[str] = []
    text = toc.read_text(encoding="utf-8")
    for match in re.finditer(r"^\s*(?:root|- file):\s*(\S+)\s*$", text, re.M):
        files.append(match.group(1))
    return files


def source_of(base: Path, name: str) -> Path:
    for suffix in (".ipynb", ".md"):
        if (base / (name + suffix)).exists():
            return base / (name + suffix)
    raise FileNotFoundError(f"{base / name}.ipynb or .md")


def is_marked(line: str) -> bool:
    return bool(MARK.search(line))


def shared_lines(source: str) -> list[str]:
    """A code cell's lines that both editions must have: all but the ``# i18n`` ones."""
    return [line for line in source.splitlines() if not is_marked(line)]


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def src(cell: dict) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def prose(text: str) -> str:
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


# Emphasis that CommonMark leaves as literal asterisks: "**时间：**约" does not close, because a
# closing ** after punctuation must be followed by a space or punctuation ("**时间**：约" does).
CJK_OR_PUNCT = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
STRAY_STARS = re.compile(rf"\*{{1,2}}(?={CJK_OR_PUNCT})|(?<={CJK_OR_PUNCT})\*{{1,2}}")
CODE_HTML = re.compile(r"<(code|pre)>.*?</\1>", re.S)


def unrendered_emphasis(text: str) -> list[str]:
    """Bits of Markdown whose asterisks would be shown instead of making bold or italic text."""
    from markdown_it import MarkdownIt

    for pattern in NOT_PROSE[1:4]:  # math and code spans, as a letter (they end a word)
        text = pattern.sub("X", text)
    rendered = CODE_HTML.sub(" ", MarkdownIt("commonmark").render(text))
    return [rendered[max(0, m.start() - 12) : m.end() + 12] for m in STRAY_STARS.finditer(rendered)]


def new(english: Path) -> Path:
    """Write the Chinese page to translate: the English page, outputs cleared, Chinese set up."""
    english = english.resolve()
    target = ZH / english.relative_to(ROOT)
    if target.exists():
        raise SystemExit(f"{target.relative_to(ROOT)} exists already")
    target.parent.mkdir(parents=True, exist_ok=True)
    if english.suffix == ".md":
        target.write_text(english.read_text(encoding="utf-8"), encoding="utf-8")
        return target
    nb = copy.deepcopy(load(english))
    first = True
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell["outputs"], cell["execution_count"] = [], None
        if first:
            cell["source"] = src(cell).rstrip("\n") + "\n" + "\n".join(ZH_SETUP)
            first = False
    target.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return target


def check_pair(english: Path, chinese: Path) -> list[str]:
    """What differs between an English page and its Chinese counterpart that may not."""
    problems: list[str] = []
    where = chinese.relative_to(ROOT) if chinese.is_relative_to(ROOT) else chinese
    if english.suffix != chinese.suffix:
        return [f"{where}: {english.name} has its counterpart as {chinese.suffix}"]
    if english.suffix == ".ipynb":
        en, zh = code_cells(load(english)), code_cells(load(chinese))
        if len(en) != len(zh):
            problems.append(f"{where}: {len(zh)} code cells, the English page has {len(en)}")
        for i, (a, b) in enumerate(zip(en, zh)):
            tags_a, tags_b = a["metadata"].get("tags", []), b["metadata"].get("tags", [])
            if tags_a != tags_b:
                problems.append(f"{where}: code cell {i} has tags {tags_b}, English {tags_a}")
            la, lb = shared_lines(src(a)), shared_lines(src(b))
            if la != lb:
                diff = next(
                    (j for j, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb))
                )
                got = lb[diff] if diff < len(lb) else "(nothing)"
                want = la[diff] if diff < len(la) else "(nothing)"
                problems.append(
                    f"{where}: code cell {i} differs from the English one at an unmarked line:\n"
                    f"    English: {want}\n    Chinese: {got}\n"
                    "  (copy the English line, or end both lines with '# i18n' if they are text)"
                )
            try:
                body = "\n".join(
                    "pass" if line.lstrip().startswith(("%", "!")) else line
                    for line in src(b).splitlines()
                )
                ast.parse(body)
            except SyntaxError as exc:
                problems.append(f"{where}: code cell {i} is not valid Python: {exc}")
        if zh and not all(line in src(zh[0]) for line in ZH_SETUP):
            problems.append(f"{where}: the first code cell must end with {ZH_SETUP}")
        texts = [src(c) for c in load(chinese)["cells"] if c["cell_type"] == "markdown"]
    else:
        texts = [chinese.read_text(encoding="utf-8")]
    cjk = sum(len(CJK.findall(prose(t))) for t in texts)
    latin = sum(len(LATIN_WORD.findall(prose(t))) for t in texts)
    if cjk < 2 * latin:
        problems.append(
            f"{where}: {cjk} Chinese characters against {latin} English words in the prose; "
            "is it translated?"
        )
    for t in texts:
        for bit in unrendered_emphasis(t):
            problems.append(
                f"{where}: asterisks that will show instead of bold/italic: {bit!r} "
                "(put the punctuation outside: **时间**：)"
            )
        words = LATIN_WORD.findall(prose(t))
        if len(words) > 25 and not CJK.search(prose(t)):
            problems.append(f"{where}: an English paragraph is left: {t[:80]!r}")
    return problems


def check() -> list[str]:
    """Every English page has its Chinese counterpart in the same place, and they agree."""
    problems: list[str] = []
    en_files = toc_files(ROOT / "_toc.yml")
    zh_files = toc_files(ZH / "_toc.yml")
    if en_files != zh_files:
        missing = [f for f in en_files if f not in zh_files]
        extra = [f for f in zh_files if f not in en_files]
        problems.append(
            "zh/_toc.yml must list the pages of _toc.yml in the same order; "
            f"missing {missing}, extra {extra}"
        )
    for name in en_files:
        english = source_of(ROOT, name)
        chinese = ZH / english.relative_to(ROOT)
        if not chinese.exists():
            problems.append(
                f"{chinese.relative_to(ROOT)} is missing (python scripts/editions.py new {english.relative_to(ROOT)})"
            )
            continue
        problems += check_pair(english, chinese)
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("new").add_argument("pages", nargs="+", type=Path)
    one = sub.add_parser("check")
    one.add_argument("pages", nargs="*", type=Path, help="English pages (default: all)")
    args = parser.parse_args()
    if args.command == "new":
        for page in args.pages:
            print(new(page).relative_to(ROOT))
        return
    if args.pages:
        problems = [
            p
            for page in args.pages
            for p in check_pair(page.resolve(), ZH / page.resolve().relative_to(ROOT))
        ]
    else:
        problems = check()
    print("\n".join(problems) or "the editions agree")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
