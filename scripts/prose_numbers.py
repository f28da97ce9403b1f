"""The prose-number check: every number in the book's prose comes from a cell, a source or a reason.

A number in a chapter's markdown — prose, a table, a quiz — that has a decimal
point or three or more digits must

* occur among the numbers of the same notebook's code and text outputs, at the precision the
  prose gives it ("about 0.47" is placed by a printed 0.468; "1,500" by ``steps=1500``; "99.6%"
  by a printed 0.996), or
* sit in a sentence that cites its source (``{cite:p}``/``{cite:t}``), or follow "§" or
  "section" (a reference to a part of a source, not a measurement), or
* be listed in ``ALLOWED`` below, for that page, with the reason it needs no cell.

Numbers inside code (fenced blocks and `inline code`) are code, checked by running it, and are
not read; nor are exercises and their solutions (their worked arithmetic is checked by the
checkers, not by a printed number), nor the syllabus's table, which scripts/syllabus.py computes
from the chapters. A quiz's question and options are read like prose (a finding restated in a
quiz goes stale with it). A markdown page (``.md``) has no cells: its numbers must be cited or
allowed. Both editions are checked; ``ALLOWED`` is keyed by the page's name, shared by its two
editions.

    python scripts/prose_numbers.py     # every number it cannot place, and how many it checked
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = (ROOT / "book", ROOT / "zh" / "book")

# A number the prose states: 1,500 or 1500 (three or more digits), or with a decimal point.
PROSE_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{3,})(?![\w])")
# Any number in code or output, scientific notation included.
ANY_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
PERCENT_AFTER = re.compile(r"\s*(?:%|％| percentage points?| points?|个百分点)")
CODE_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.MULTILINE | re.DOTALL)
# A quiz is text the reader reads: its fence and options (:name:) are dropped, its question and
# answers kept, so that their numbers are checked like the prose around them.
QUIZ_BLOCK = re.compile(r"^(`{3,}|~{3,})\{quiz\}([^\n]*)\n(.*?)^\1\s*$", re.MULTILINE | re.DOTALL)
OPTION_LINE = re.compile(r"^:[\w-]+:.*$", re.MULTILINE)  # a directive's option, e.g. ":name: q"
INLINE_CODE = re.compile(r"`[^`\n]+`")
CITATION = re.compile(r"\{cite:[a-z]+\}`[^`]*`")
REFERENCE_BEFORE = re.compile(r"(?:§|section |sections |Section |第)\s*$")
REFERENCE_AFTER = re.compile(r"\s*节")  # 5.12 节: a section of this book
ABOUT_BEFORE = re.compile(r"(?:about|around|roughly|nearly|约|大约)\s*$", re.IGNORECASE)
CITED = "\x00cited\x00"  # what a citation becomes before code is stripped
HTML_NOISE = re.compile(r"<script.*?</script>|<img[^>]*>|<style.*?</style>", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n")

#: page name -> {number as written in the prose: why it needs no cell}. The same reason holds in
#: both editions; a number allowed here but found nowhere in the page fails the test, so the list
#: cannot outlive the prose.
ALLOWED: dict[str, dict[str, str]] = {
    "intro": {
        "200": "the page of a detective novel in the opening scene, not a measurement",
        "003": "the name of a source article (its file number)",
        "000": "the name of a source article (its file number)",
        "4.0": "the version of the Creative Commons licence, CC BY 4.0",
    },
    "01_detective": {
        "200": "the opening scene's page 200; and train_lookup's default of 200 steps, shown above",
    },
    "02_scaled_dot_product": {"2.13": "the PyTorch version the book pins (requirements.txt)"},
    "syllabus": {
        "120": "the reading pace the syllabus assumes (English words a minute), a stated choice",
        "250": "the reading pace the syllabus assumes (Chinese characters a minute), a stated choice",
        "3.14": "the number of a section of the book (chapter 3's going-deeper section)",
    },
    "03_why_many_heads": {
        "127": "the task's vocab_size=128, shown in its code: token ids 0 to 127",
        "8404992": "a quiz's wrong option: the count a full set of matrices per head would give",
    },
    "04_building_mha": {"2.13": "the PyTorch version the book pins (requirements.txt)"},
    "05b_complete_transformer": {"128": "F = 2 d_model for d_model = 64, as build() sets it"},
    "06_training_a_detective": {
        "340,000": "arithmetic, not a measurement: 1 / P(more than 300 heads in 500 fair flips) "
        "= 1 / 2.93e-6 = 341,789",
    },
    "08_what_heads_do": {
        "0.0017": "1/600: what one sentence of the 600 is worth",
    },
    "09_cost_of_attention": {"16000": "an illustration: a chapter of 16,000 tokens"},
    "11_training_in_linear_memory": {"4095": "n - 1 for the printed n = 4096"},
    "12_translation": {
        "1900": "the task's range of years, set in attnbook.tasks.translation",
        "2099": "the task's range of years, set in attnbook.tasks.translation",
    },
    "13_reading_comprehension": {
        "0.003": "a learning rate the sweep tried: a setting (the last exercise reruns the sweep)",
        "0.03": "a learning rate the sweep tried: a setting (the last exercise reruns the sweep)",
    },
    "15_vision": {
        "1,797": "the size of scikit-learn's digits data set (sklearn.datasets.load_digits)",
        "0.0022": "1/450: what one image of the 450 held-out images is worth",
        "120": "the pairs of 16 positions, 16 * 15 / 2",
    },
    "18_tuning": {
        "0.76": "0.99 - 0.23, the two printed accuracies of the sentence before",
        "0.56": "the mean of the three printed seeds 0.517, 0.539 and 0.610",
    },
    "19_troubleshooting": {"768": "BERT-base's and GPT-2's width, a published constant"},
    "19b_unstable_training": {
        "2.5": "2.5e5: the printed q . k, written in powers of ten",
        "3.4": "3.4e38, float32's largest value (torch.finfo(torch.float32).max)",
        "3.2": "3.2e5 = 200 * 200 * 64 / 8, the sentence's own arithmetic",
    },
    "20_outlook": {
        "4,096": "the sliding window of the model the cell before names, a published constant"
    },
}


@dataclass(frozen=True)
class Unplaced:
    """A number in the prose that no cell, source or reason accounts for."""

    page: Path
    cell: int | None  # index of the markdown cell, None for a .md page
    number: str
    context: str

    def __str__(self) -> str:
        where = f"{self.page.relative_to(ROOT)}" + (
            f" cell {self.cell}" if self.cell is not None else ""
        )
        return f"{where}: {self.number}  …{self.context}…"


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def numbers_in(text: str) -> set[Decimal]:
    """Every number in code or output text, thousands separators read as part of the number."""
    text = re.sub(r"(?<=\d)[,_](?=\d{3}(?!\d))", "", text)  # 1,500 and Python's 1_500
    found = set()
    for match in ANY_NUMBER.finditer(text):
        value = _decimal(match.group())
        if value is not None:
            found.add(value)
    return found


class Pool:
    """The numbers of a notebook's code and outputs, and each of them rounded as prose rounds."""

    def __init__(self, numbers: set[Decimal]):
        self.exact = numbers
        self._rounded: dict[int, set[Decimal]] = {}

    def rounded(self, places: int) -> set[Decimal]:
        if places not in self._rounded:
            step = Decimal(1).scaleb(-places)
            values = set()
            for x in self.exact:
                if abs(x) >= Decimal(10) ** 12:
                    continue  # nothing prose rounds to places is that large
                for rounding in (ROUND_HALF_UP, ROUND_HALF_EVEN):
                    values.add(x.quantize(step, rounding=rounding).normalize())
            self._rounded[places] = values
        return self._rounded[places]

    def places(self, number: str, percent: bool, about: bool = False) -> bool:
        """Whether ``number`` as the prose writes it is one of the pool at the prose's precision.

        ``about``: the prose says "about 107,000", so its trailing zeros are rounding too.
        """
        plain = number.replace(",", "")
        value = Decimal(plain)
        decimals = len(plain.split(".")[1]) if "." in plain else 0
        if about and not decimals:
            decimals = -(len(plain) - len(plain.rstrip("0")))
        candidates = [(value, decimals)]
        if percent:  # 99.6% is 0.996; 2.3 points are 0.023
            candidates.append((value / 100, decimals + 2))
        return any(
            target in self.exact
            or target.normalize() in self.exact
            or (places != 0 and target in self.rounded(places))
            for target, places in candidates
        )


# The syllabus's table, written and checked by scripts/syllabus.py from the chapters themselves.
GENERATED = re.compile(r"<!-- syllabus:begin -->.*?<!-- syllabus:end -->", re.S)


def prose_of(markdown: str) -> str:
    """The markdown without code, citations and generated tables, with TeX's digit separators
    (65\\,536) undone."""
    text = GENERATED.sub(" ", markdown)
    text = QUIZ_BLOCK.sub(lambda m: f"\n{m.group(2)}\n" + OPTION_LINE.sub("", m.group(3)), text)
    text = CODE_FENCE.sub(" ", text)
    text = CITATION.sub(CITED, text)
    text = INLINE_CODE.sub(" ", text)
    text = re.sub(
        r"(?<=\d)(?:\\,|\{,\}|\\ )(?=\d)", lambda m: "," if "{" in m.group() else "", text
    )
    return text


def sentence_around(text: str, start: int, end: int) -> str:
    starts = [m.end() for m in SENTENCE_END.finditer(text, 0, start)]
    after = SENTENCE_END.search(text, end)
    return text[starts[-1] if starts else 0 : after.start() if after else len(text)]


def unplaced_in(markdown: str, pool: Pool, allowed: dict[str, str]) -> list[tuple[str, str]]:
    """(number, context) for every number of ``markdown`` that is not placed, cited or allowed."""
    text = prose_of(markdown)
    missing = []
    for match in PROSE_NUMBER.finditer(text):
        number = match.group(1)
        if number in allowed or REFERENCE_BEFORE.search(
            text[max(0, match.start() - 12) : match.start()]
        ):
            continue
        if REFERENCE_AFTER.match(text, match.end()):
            continue
        if CITED in sentence_around(text, match.start(), match.end()):
            continue
        percent = bool(PERCENT_AFTER.match(text, match.end()))
        about = bool(ABOUT_BEFORE.search(text[max(0, match.start() - 10) : match.start()]))
        if pool.places(number, percent, about):
            continue
        context = text[max(0, match.start() - 50) : match.end() + 30].replace("\n", " ")
        missing.append((number, context))
    return missing


def count_in(markdown: str) -> int:
    return len(PROSE_NUMBER.findall(prose_of(markdown)))


def check_notebook(path: Path) -> tuple[int, list[Unplaced]]:
    """How many prose numbers the notebook has, and those that are not placed."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    corpus = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        corpus.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            corpus.append("".join(output.get("text", "")))
            data = output.get("data", {})
            for kind in ("text/plain", "text/markdown"):
                corpus.append("".join(data.get(kind, "")))
            # A table drawn as HTML counts; a view's script and images do not.
            corpus.append(HTML_NOISE.sub(" ", "".join(data.get("text/html", ""))))
    pool = Pool(numbers_in("\n".join(corpus)))
    allowed = ALLOWED.get(path.stem, {})
    total, missing = 0, []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        total += count_in(source)
        missing += [Unplaced(path, index, n, c) for n, c in unplaced_in(source, pool, allowed)]
    return total, missing


def check_page(path: Path) -> tuple[int, list[Unplaced]]:
    """A markdown page: no cells, so every number must be cited or allowed."""
    source = path.read_text(encoding="utf-8")
    allowed = ALLOWED.get(path.stem, {})
    missing = [Unplaced(path, None, n, c) for n, c in unplaced_in(source, Pool(set()), allowed)]
    return count_in(source), missing


def pages() -> list[Path]:
    found = []
    for edition in EDITIONS:
        found += sorted(edition.glob("*.ipynb")) + sorted(edition.glob("*.md"))
    return found


def check(path: Path) -> tuple[int, list[Unplaced]]:
    return check_notebook(path) if path.suffix == ".ipynb" else check_page(path)


def stale_allowances() -> list[str]:
    """Allowed numbers that no longer occur in their page's prose (in either edition)."""
    stale = []
    for name, numbers in ALLOWED.items():
        texts = []
        for edition in EDITIONS:
            for path in (edition / f"{name}.ipynb", edition / f"{name}.md"):
                if path.exists():
                    if path.suffix == ".ipynb":
                        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
                        texts += [
                            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                        ]
                    else:
                        texts.append(path.read_text(encoding="utf-8"))
        prose = " ".join(prose_of(t) for t in texts)
        stale += [f"{name}: {n}" for n in numbers if n not in PROSE_NUMBER.findall(prose)]
    return stale


# Density: how many numbers the running text carries. Tables, code, math, exercises and quizzes
# carry numbers by design and are left out; so are references to a chapter or a section.
DENSITY_LIMIT = 3.5  # numbers per 100 words of running text (issue 40: "tables carry the numbers")
ANY_PROSE_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
NOT_A_QUANTITY = re.compile(r"(?:\b(?:[Cc]hapters?|[Ss]ections?|[Pp]art)|§|第)\s*$")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)
LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
HAN = re.compile(r"[\u4e00-\u9fff]")
CHARACTERS_PER_WORD = 250 / 120  # the syllabus's reading paces: Chinese characters per English word


def running_text(markdown: str) -> str:
    """``prose_of`` without quizzes, math, tables and directive options (``:label: ch15-...``)."""
    text = TABLE_ROW.sub(" ", MATH.sub(" ", prose_of(QUIZ_BLOCK.sub(" ", markdown))))
    return OPTION_LINE.sub(" ", text.replace(CITED, " "))


def density(markdown: str, lang: str) -> tuple[int, float]:
    """(numbers, words) of the running text; a Chinese page's words are its Latin words plus its
    characters at the syllabus's characters per English word."""
    text = running_text(markdown)
    numbers = sum(
        1
        for m in ANY_PROSE_NUMBER.finditer(text)
        if not NOT_A_QUANTITY.search(text[max(0, m.start() - 12) : m.start()])
    )
    words = len(LATIN_WORD.findall(text))
    if lang == "zh":
        words += len(HAN.findall(text)) / CHARACTERS_PER_WORD
    return numbers, words


def page_density(path: Path) -> float:
    """Numbers per 100 words of the page's running text (notebook markdown cells, or a page)."""
    lang = "zh" if "zh" in path.relative_to(ROOT).parts[:1] else "en"
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    else:
        texts = [path.read_text(encoding="utf-8")]
    counts = [density(t, lang) for t in texts]
    words = sum(w for _, w in counts)
    return 100 * sum(n for n, _ in counts) / words if words else 0.0


def main() -> int:
    if "--density" in sys.argv:
        for path in pages():
            value = page_density(path)
            flag = "  over the limit" if value > DENSITY_LIMIT else ""
            print(f"{value:5.1f}  {path.relative_to(ROOT).as_posix()}{flag}")
        return 0
    total, missing = 0, []
    for path in pages():
        count, unplaced = check(path)
        total += count
        missing += unplaced
    for item in missing:
        print(item)
    for item in stale_allowances():
        print(f"allowed but not in the prose: {item}")
    print(f"prose numbers checked: {total} in {len(pages())} pages; not placed: {len(missing)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
