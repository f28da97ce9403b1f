"""Write one edition's prose, as plain paragraphs, to attnbook's corpus, with the pages they are from.

    python scripts/snapshot_prose.py zh           # writes book_prose_zh.txt and book_prose_zh_pages.json
    python scripts/snapshot_prose.py en --force   # a NEW English snapshot (replaces the frozen one)

Both files go to ``src/attnbook/corpus/``. Chapters that need natural text read them through
:mod:`attnbook.corpus`, never the chapters themselves: a snapshot stays fixed while the book's
text changes, so the numbers measured on it do not move with every edit. The script therefore
refuses to replace a snapshot that exists unless ``--force`` is given; after a new snapshot,
regenerate the notebooks that read it (``grep -l book_prose book/*.ipynb``).

What is kept: the paragraphs of the markdown cells of the edition's ``book/*.ipynb`` and of its
``book/intro.md``, in the order of its ``_toc.yml`` (the chapters of every part; sections are
not read), without headings, tables, lists' markers, code blocks, directives, labels and
paragraphs with mathematics; inline code keeps its text (``[CLS]`` loses its brackets, so that no
tokenizer reads a special token), MyST roles keep only their text, emphasis its words. English
paragraphs of fewer than 20 words are dropped, Chinese ones of fewer than 40 Han characters; in
Chinese, no space is left between two Chinese characters or punctuation marks (where a line break
or markup was). The text is the
book's, under CC BY 4.0.

The pages file lists, for each page in order, its name and how many of the snapshot's paragraphs
it gave, so that a held-out split can keep whole pages apart (:func:`attnbook.corpus.book_documents`).
For the English snapshot of December 2026, which was written before pages were recorded,
``scripts/prose_pages.py`` recovered that file by matching.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "src" / "attnbook" / "corpus"
#: Where each edition's ``_toc.yml`` and ``book/`` are.
EDITIONS = {"en": ROOT, "zh": ROOT / "zh"}
SPECIAL = re.compile(r"\[(CLS|SEP|PAD|MASK|UNK)\]")
ROLE = re.compile(r"\{[a-z:]+\}`([^`]*)`")
CODE = re.compile(r"``?([^`]+)``?")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: A Chinese character or full-width punctuation mark, on either side of a line break.
WIDE = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"


def snapshot_path(language: str) -> Path:
    return CORPUS / f"book_prose_{language}.txt"


def pages_path(language: str) -> Path:
    return CORPUS / f"book_prose_{language}_pages.json"


def chapters(root: Path = ROOT) -> list[Path]:
    """The notebooks and ``intro.md`` of the edition in ``root``, in the order of its table."""
    toc = yaml.safe_load((root / "_toc.yml").read_text("utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    paths = []
    for name in files:
        for suffix in (".ipynb", ".md"):
            if (root / (name + suffix)).exists():
                paths.append(root / (name + suffix))
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


def long_enough(paragraph: str, language: str = "en") -> bool:
    """At least 20 words (English) or 40 Han characters (Chinese, which has no spaces)."""
    if language == "zh":
        return len(HAN.findall(paragraph)) >= 40
    return len(paragraph.split()) >= 20


def paragraphs(text: str, language: str = "en") -> list[str]:
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
        if language == "zh":  # a space between Chinese characters is a line break or markup
            words = re.sub(rf"(?<={WIDE}) (?={WIDE})", "", words)
        if long_enough(words, language):
            kept.append(words)
    return kept


def book_pages(root: Path, language: str) -> list[tuple[str, list[str]]]:
    """``(page name, its paragraphs)`` for every page of the edition in ``root``."""
    return [(path.stem, paragraphs(markdown(path), language)) for path in chapters(root)]


def pages_record(language: str, counts: list[tuple[str, int]], how: str) -> str:
    """The text of a pages file: the page names and paragraph counts, in the snapshot's order."""
    head = {"corpus": snapshot_path(language).name, "written_by": how}
    rows = ",\n".join(f"  {json.dumps([name, n])}" for name, n in counts)
    return json.dumps(head, indent=1)[:-2] + ',\n "pages": [\n' + rows + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("language", choices=sorted(EDITIONS))
    parser.add_argument("--force", action="store_true", help="replace an existing snapshot")
    args = parser.parse_args(argv)
    out, sidecar = snapshot_path(args.language), pages_path(args.language)
    if out.exists() and not args.force:
        parser.error(f"{out.relative_to(ROOT)} exists and is frozen; --force replaces it")
    pages = [(name, ps) for name, ps in book_pages(EDITIONS[args.language], args.language) if ps]
    text = [p for _, ps in pages for p in ps]
    out.write_text("\n".join(text) + "\n", "utf-8")
    how = f"scripts/snapshot_prose.py {args.language}, with the snapshot"
    sidecar.write_text(pages_record(args.language, [(n, len(ps)) for n, ps in pages], how), "utf-8")
    size = len(out.read_bytes())
    print(f"{out.relative_to(ROOT)}: {len(pages)} pages, {len(text)} paragraphs, {size} bytes")


if __name__ == "__main__":
    main()
