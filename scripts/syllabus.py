"""The syllabus: each chapter's time, from its words, its notebook's run time and its exercises.

A chapter's time is its reading time (its prose words at the reading pace) plus its notebook's
measured run time plus 12 minutes per exercise and 1 per quiz question, rounded to 5 minutes: for the whole chapter (the
full course) and for its core path (the cells outside "going deeper" sections, tagged
``deeper``; a page whose first cell is tagged, or whose title begins "Going deeper", is a
going-deeper page and has no core path). The paces, stated on the syllabus page, are 120 English
words and 250 Chinese characters a minute: slow enough to follow equations and code. The run
times are the measured ones in ``book/run_seconds.json``: ``python scripts/execute_notebooks.py
--timings t.json`` then ``python scripts/syllabus.py --run-times t.json`` records them.

The script writes three things in both editions: the table of ``book/syllabus.md`` (between
``<!-- syllabus:begin -->`` and ``<!-- syllabus:end -->``), the time column of the
introduction's chapter map, and the time each chapter states in its opening box (its
``**Time:**`` line). ``--check`` writes nothing and fails if any of them is stale
(``tests/test_syllabus.py`` checks the same).

    python scripts/syllabus.py          # rewrite the syllabus and the stated times
    python scripts/syllabus.py --check  # exit 1 if anything is stale
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_SECONDS = ROOT / "book" / "run_seconds.json"
PACE = {"en": 120, "zh": 250}  # words (English) or characters (Chinese) a minute
EXERCISE_MINUTES = 12
QUESTION_MINUTES = 1  # a question of "Check your understanding"
BEGIN, END = "<!-- syllabus:begin -->", "<!-- syllabus:end -->"
#: How a going-deeper page's title begins (chapter 3's section 3.14, for one).
DEEPER_TITLE = {"en": "Going deeper", "zh": "深入"}
EDITIONS = {"en": ROOT, "zh": ROOT / "zh"}
TIME_LINE = {
    "en": re.compile(r"\*\*Time:\*\* about [0-9]+ minutes, (?:the exercise|exercises) included\."),
    "zh": re.compile(r"\*\*时间\*\*：约 [0-9]+ 分钟（含练习）。"),
}
TIME_TEXT = {
    "en": "**Time:** about {m} minutes, {exercises} included.",
    "zh": "**时间**：约 {m} 分钟（含练习）。",
}
LABELS = {
    "en": {
        "chapter": "Chapter",
        "words": "Words",
        "exercises": "Exercises",
        "run": "Notebook run",
        "core": "Core path",
        "full": "Full course",
        "total": "Total",
        "deeper": "— (going deeper)",
        "min": "min",
        "hours": "{h:.0f} h",
        "weeks": "At five hours a week: the core path in {core} weeks, the full course in {full}.",
        "weeks_same": "At five hours a week, either path takes {core} weeks.",
    },
    "zh": {
        "chapter": "章节",
        "words": "字数",
        "exercises": "练习",
        "run": "笔记本运行",
        "core": "核心路线",
        "full": "完整课程",
        "total": "合计",
        "deeper": "—（深入）",
        "min": "分钟",
        "hours": "{h:.0f} 小时",
        "weeks": "每周学五个小时：核心路线约 {core} 周，完整课程约 {full} 周。",
        "weeks_same": "每周学五个小时，两条路线都约需 {core} 周。",
    },
}


def prose(text: str) -> str:
    """Markdown with code blocks, directives' bodies, display math and tables removed."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " x ", text)
    return re.sub(r"^\|.*$", " ", text, flags=re.M)


def count_words(text: str, lang: str) -> int:
    """English words, or Chinese characters plus the Latin words between them."""
    text = prose(text)
    latin = len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’\-]*", text))
    return latin if lang == "en" else latin + len(re.findall(r"[\u4e00-\u9fff]", text))


def chapters(lang: str) -> list[tuple[str, str]]:
    """(part caption, page) for every numbered chapter and section, in the table of contents."""
    toc = (EDITIONS[lang] / "_toc.yml").read_text("utf-8")
    pages, caption = [], ""
    for line in toc.splitlines():
        if m := re.match(r'\s*- caption: "(.*)"', line):
            caption = m.group(1)
        elif m := re.match(r"\s*- file: (book/\d\S*)", line):
            pages.append((caption, m.group(1)))
    return pages


@dataclass
class Page:
    page: str
    part: str
    title: str
    words: int
    core_words: int
    exercises: int
    core_exercises: int
    run_minutes: float
    deeper_page: bool
    questions: int = 0

    def minutes(self, lang: str, core: bool) -> int:
        """The time at ``lang``'s pace, rounded to 5 minutes; 0 for a going-deeper page's core."""
        if core and self.deeper_page:
            return 0
        words, exercises = (
            (self.core_words, self.core_exercises) if core else (self.words, self.exercises)
        )
        raw = (
            words / PACE[lang]
            + self.run_minutes
            + EXERCISE_MINUTES * exercises
            + QUESTION_MINUTES * self.questions
        )
        return 5 * max(1, round(raw / 5))


def read_page(lang: str, part: str, page: str, run_seconds: dict[str, float]) -> Page:
    nb = json.loads((EDITIONS[lang] / f"{page}.ipynb").read_text("utf-8"))
    cells = nb["cells"]
    deeper = ["deeper" in c.get("metadata", {}).get("tags", []) for c in cells]
    texts = ["".join(c["source"]) for c in cells]
    markdown = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown"]
    title = re.search(r"^#\s+(.*)", texts[0], flags=re.M).group(1).strip()
    words = [count_words(texts[i], lang) for i in markdown]
    exercises = [texts[i].count("{exercise}") for i in markdown]
    core = [not deeper[i] for i in markdown]
    return Page(
        page=page,
        part=part,
        title=title,
        words=sum(words),
        core_words=sum(w for w, c in zip(words, core) if c),
        exercises=sum(exercises),
        core_exercises=sum(e for e, c in zip(exercises, core) if c),
        run_minutes=run_seconds.get(page, 0.0) / 60,
        deeper_page=bool(deeper and deeper[0]) or title.startswith(DEEPER_TITLE[lang]),
        questions=sum(texts[i].count("{quiz}") for i in markdown),
    )


def pages(lang: str) -> list[Page]:
    run_seconds = json.loads(RUN_SECONDS.read_text("utf-8"))
    return [read_page(lang, part, page, run_seconds) for part, page in chapters(lang)]


def table(lang: str) -> str:
    """The syllabus table of ``lang``: one row per chapter, the parts as headings, the totals."""
    t = LABELS[lang]
    rows, part = [], None
    head = f"| {t['chapter']} | {t['words']} | {t['exercises']} | {t['run']} | {t['core']} | {t['full']} |"
    rule = "|---|--:|--:|--:|--:|--:|"
    total_core = total_full = 0
    for p in pages(lang):
        if p.part != part:
            part = p.part
            rows += ["", f"**{part}**", "", head, rule]
        core, full = p.minutes(lang, True), p.minutes(lang, False)
        total_core, total_full = total_core + core, total_full + full
        core_text = t["deeper"] if p.deeper_page else f"{core} {t['min']}"
        rows.append(
            f"| {{doc}}`{Path(p.page).name}` | {p.words:,} | {p.exercises} | "
            f"{math.ceil(p.run_minutes)} {t['min']} | {core_text} | {full} {t['min']} |"
        )
    weeks = math.ceil(total_core / 300), math.ceil(total_full / 300)  # at 300 minutes a week
    rows += [
        "",
        f"| | {t['core']} | {t['full']} |",
        "|---|--:|--:|",
        f"| {t['total']} | {t['hours'].format(h=total_core / 60)} | "
        f"{t['hours'].format(h=total_full / 60)} |",
        "",
        t["weeks" if weeks[0] != weeks[1] else "weeks_same"].format(core=weeks[0], full=weeks[1]),
    ]
    return "\n".join(rows).strip()


def replace_block(text: str, block: str, where: Path) -> str:
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{where}: no {BEGIN} … {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def chapter_map(text: str, chapter_pages: list[Page], lang: str, where: Path) -> str:
    """``text`` with the time column of its chapter map (one row per page, in order) computed."""
    head, rest = text.split("```{container} chapter-map\n", 1)
    table_text, tail = rest.split("```", 1)
    rows = table_text.rstrip("\n").split("\n")
    body = rows[2:]
    if len(body) != len(chapter_pages):
        raise SystemExit(
            f"{where}: the chapter map has {len(body)} rows for {len(chapter_pages)} pages"
        )
    unit = LABELS[lang]["min"]
    body = [
        re.sub(r"\| [0-9]+ \S+ \|$", f"| {p.minutes(lang, False)} {unit} |", row)
        for row, p in zip(body, chapter_pages)
    ]
    return head + "```{container} chapter-map\n" + "\n".join(rows[:2] + body) + "\n```" + tail


def updated_files(lang: str) -> dict[Path, str]:
    """Every file the syllabus writes for ``lang``, with its new text."""
    out: dict[Path, str] = {}
    root = EDITIONS[lang]
    syllabus = root / "book" / "syllabus.md"
    out[syllabus] = replace_block(syllabus.read_text("utf-8"), table(lang), syllabus)
    intro = root / "book" / "intro.md"
    out[intro] = chapter_map(intro.read_text("utf-8"), pages(lang), lang, intro)
    for p in pages(lang):
        path = root / f"{p.page}.ipynb"
        nb = json.loads(path.read_text("utf-8"))
        what = "the exercise" if p.exercises == 1 else "exercises"
        stated = TIME_TEXT[lang].format(m=p.minutes(lang, False), exercises=what)
        # the time line is in the chapter's opening box, in one of its first markdown cells
        found = [c for c in nb["cells"][:3] if TIME_LINE[lang].search("".join(c["source"]))]
        if not found:
            raise SystemExit(f"{path}: no opening cell states a time like {stated!r}")
        text = "".join(found[0]["source"])
        new_text = TIME_LINE[lang].sub(stated, text, count=1)
        if new_text != text:
            lines = new_text.split("\n")
            found[0]["source"] = [line + "\n" for line in lines[:-1]] + (
                [lines[-1]] if lines[-1] else []
            )
            out[path] = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument(
        "--run-times", type=Path, help="record the run times of this --timings file"
    )
    args = parser.parse_args()
    if args.run_times:
        seconds = json.loads(RUN_SECONDS.read_text("utf-8")) if RUN_SECONDS.exists() else {}
        for page, timing in json.loads(args.run_times.read_text("utf-8")).items():
            key = re.sub(r"^zh/", "", page).removesuffix(".ipynb")
            seconds[key] = round(timing["total"])
        RUN_SECONDS.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n", "utf-8")
    stale = []
    for lang in EDITIONS:
        for path, text in updated_files(lang).items():
            if path.read_text("utf-8") != text:
                stale.append(path.relative_to(ROOT))
                if not args.check:
                    path.write_text(text, "utf-8")
    if args.check and stale:
        print("stale, run `python scripts/syllabus.py`:", *stale, sep="\n  ")
        return 1
    print("updated:" if stale else "the syllabus is current", *stale, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
