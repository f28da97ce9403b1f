"""Recover which page each paragraph of a frozen prose snapshot came from, and write its pages file.

    python scripts/prose_pages.py en                  # match against the pages of the working tree
    python scripts/prose_pages.py en --rev 7842f34    # ... against the pages as they were at a commit
    python scripts/prose_pages.py en --rev 7842f34 --write

The English snapshot (``src/attnbook/corpus/book_prose_en.txt``) was written before
``scripts/snapshot_prose.py`` recorded pages, and must stay byte for byte as it is. This script
leaves it alone: it extracts the paragraphs of every page (as ``snapshot_prose.py`` does, in the
order of ``_toc.yml``) and assigns each frozen paragraph to a page, **monotonically** (the
snapshot follows the table of contents, so the pages of consecutive paragraphs never go back),
maximising the total similarity by dynamic programming. A paragraph found verbatim on a page has
similarity 1; otherwise its similarity is the best Jaccard overlap of its lower-cased word sets
with a paragraph of that page. It prints how many frozen paragraphs were found verbatim and, with
``--write``, writes ``book_prose_<language>_pages.json``.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path

from snapshot_prose import EDITIONS, ROOT, book_pages, pages_path, pages_record, snapshot_path


def words(paragraph: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", paragraph.lower()))


def similarity(frozen: list[str], pages: list[tuple[str, list[str]]]) -> list[list[float]]:
    """(paragraphs, pages): 1 where a paragraph is on a page verbatim, else the best Jaccard."""
    table = []
    page_words = [[words(p) for p in ps] for _, ps in pages]
    page_sets = [set(ps) for _, ps in pages]
    for paragraph in frozen:
        mine, row = words(paragraph), []
        for exact, candidates in zip(page_sets, page_words):
            if paragraph in exact:
                row.append(1.0)
            else:
                row.append(max((len(mine & c) / len(mine | c) for c in candidates), default=0.0))
        table.append(row)
    return table


def monotone_assignment(table: list[list[float]]) -> list[int]:
    """The page of each paragraph, never decreasing, that maximises the summed similarity."""
    n_pages = len(table[0])
    best = [list(table[0])]  # best[i][j]: best total of paragraphs 0..i with paragraph i on page j
    back = []
    for row in table[1:]:
        prev, run, arg, choice, scores = best[-1], float("-inf"), 0, [], []
        for j in range(n_pages):
            if prev[j] > run:
                run, arg = prev[j], j
            choice.append(arg)
            scores.append(run + row[j])
        best.append(scores)
        back.append(choice)
    page = max(range(n_pages), key=lambda j: best[-1][j])
    pages = [page]
    for choice in reversed(back):
        page = choice[page]
        pages.append(page)
    return pages[::-1]


def pages_at(rev: str | None, language: str, tmp: Path) -> list[tuple[str, list[str]]]:
    """The pages of the edition in the working tree (``rev`` None) or at commit ``rev``."""
    root = EDITIONS[language]
    if rev is None:
        return book_pages(root, language)
    prefix = root.relative_to(ROOT).as_posix()
    paths = [f"{prefix}/_toc.yml", f"{prefix}/book"] if prefix != "." else ["_toc.yml", "book"]
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, *paths],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data")
    return book_pages(tmp / prefix, language)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("language", choices=sorted(EDITIONS))
    parser.add_argument("--rev", help="read the pages at this commit (default: working tree)")
    parser.add_argument("--write", action="store_true", help="write the pages file")
    args = parser.parse_args(argv)
    frozen = [p for p in snapshot_path(args.language).read_text("utf-8").splitlines() if p]
    with tempfile.TemporaryDirectory() as tmp:
        pages = pages_at(args.rev, args.language, Path(tmp))
    assignment = monotone_assignment(similarity(frozen, pages))
    exact = sum(p in set(pages[j][1]) for p, j in zip(frozen, assignment))
    current = sum(len(ps) for _, ps in pages)
    where = f"commit {args.rev}" if args.rev else "the working tree"
    print(f"{len(frozen)} frozen paragraphs; {current} paragraphs on the pages of {where}")
    print(f"found verbatim on their assigned page: {exact} of {len(frozen)}")
    counts = [(name, assignment.count(j)) for j, (name, _) in enumerate(pages)]
    for (name, n), (_, ps) in zip(counts, pages):
        print(f"  {name:32} {n:4} frozen  {len(ps):4} now")
    if args.write:
        how = (
            f"scripts/prose_pages.py {args.language} --rev {args.rev or 'working tree'}: "
            f"{exact} of {len(frozen)} paragraphs found verbatim"
        )
        kept = [(name, n) for name, n in counts if n]
        pages_path(args.language).write_text(pages_record(args.language, kept, how), "utf-8")
        print(f"wrote {pages_path(args.language).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
