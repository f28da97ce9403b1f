"""Write the book's own English prose, as plain paragraphs, to attnbook's corpus (one file).

    python scripts/snapshot_prose.py            # writes src/attnbook/corpus/book_prose_en.txt

Chapters that need natural text read this file through :func:`attnbook.corpus.book_prose`, never
the chapters themselves: the snapshot stays fixed while the book's text changes, so the numbers
measured on it do not move with every edit. Rerun it only to take a new snapshot, and then
regenerate the notebooks that read it (``grep -l book_prose book/*.ipynb``).

What is kept: the paragraphs of the markdown cells of ``book/*.ipynb`` and of ``book/intro.md``,
in the order of ``_toc.yml``, without headings, tables, lists' markers, code blocks, directives,
labels and paragraphs with mathematics; inline code keeps its text (``[CLS]`` loses its brackets,
so that no tokenizer reads a special token), MyST roles keep only their text, emphasis its words.
Paragraphs of fewer than 20 words are dropped. The text is the book's, under CC BY 4.0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "attnbook" / "corpus" / "book_prose_en.txt"
SPECIAL = re.compile(r"\[(CLS|SEP|PAD|MASK|UNK)\]")
ROLE = re.compile(r"\{[a-z:]+\}`([^`]*)`")
CODE = re.compile(r"``?([^`]+)``?")


def chapters() -> list[Path]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text("utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    paths = []
    for name in files:
        for suffix in (".ipynb", ".md"):
            if (ROOT / (name + suffix)).exists():
                paths.append(ROOT / (name + suffix))
    return [p for p in paths if p.suffix == ".ipynb" or p.name == "intro.md"]


def markdown(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text("utf-8")
    cells = json.loads(path.read_text("utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def role_text(match: re.Match) -> str:
    text = match.group(1)
    inner = re.match(r"(.*?)\s*<[^>]*>$", text)  # {ref}`words <label>` -> words
    if inner and inner.group(1):
        return inner.group(1)
    return "" if match.group(0).startswith("{cite") else "the chapter"


def outside_fences(text: str) -> str:
    """The text without fenced blocks (code, directives), nested ones included."""
    kept, stack = [], []
    for line in text.splitlines():
        fence = re.match(r"\s*(`{3,}|~{3,}|:{3,})", line)
        if fence:
            if stack and line.strip() == stack[-1]:
                stack.pop()
            else:
                stack.append(fence.group(1))
            continue
        if not stack:
            kept.append(line)
    return "\n".join(kept)


def paragraphs(text: str) -> list[str]:
    kept = []
    for block in re.split(r"\n\s*\n", outside_fences(text)):
        lines = block.strip().splitlines()
        if not lines:
            continue
        first = lines[0].lstrip()
        if first.startswith(("#", "|", "(", "{", ":", "<", "!", ">")) or "$" in block:
            continue
        words = " ".join(re.sub(r"^\s*([-*+]|\d+\.)\s+", "", line) for line in lines)
        words = ROLE.sub(role_text, words)
        words = CODE.sub(lambda m: m.group(1), words)
        words = SPECIAL.sub(lambda m: m.group(1), words)
        words = re.sub(r"\*\*?([^*]+)\*\*?", r"\1", words)
        words = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", words)  # [text](link) -> text
        words = re.sub(r"\s+", " ", words).strip()
        if len(words.split()) >= 20:
            kept.append(words)
    return kept


def main() -> None:
    out = []
    for path in chapters():
        out += paragraphs(markdown(path))
    OUT.write_text("\n".join(out) + "\n", "utf-8")
    print(
        f"{OUT.relative_to(ROOT)}: {len(out)} paragraphs, {sum(len(p.split()) for p in out)} words"
    )


if __name__ == "__main__":
    main()
