"""Check your understanding (book/_ext/quizzes.py): the ``{quiz}`` directive's parsing, the
build errors that keep a broken quiz off the site, its HTML, and the chapters' quizzes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from quizzes import QuizError, parse_quiz  # noqa: E402

# The chapters that end with "Check your understanding", and how many questions each may hold.
CHAPTERS = [
    "01_detective",
    "02_scaled_dot_product",
    "03_why_many_heads",
    "03b_overfitting",
    "04_building_mha",
    "05_transformer",
    "05b_complete_transformer",
    "06_training_a_detective",
    "07_seeing_the_heads",
    "08_what_heads_do",
    "09_cost_of_attention",
    "10_approximations",
    "11_training_in_linear_memory",
    "12_translation",
    "13_reading_comprehension",
    "14_summarising",
    "15_vision",
    "16_pretrained_model",
    "17_real_heads",
    "18_tuning",
    "19_troubleshooting",
    "19b_unstable_training",
    "20_outlook",
]
QUIZ = re.compile(r"^```\{quiz\}", re.MULTILINE)

CHOICE = """\
- [ ] The nearest name.
  : No: that is the baseline rule,
  which ignores gender.
- [x] A soft lookup.
  : Right: every key gets a weight.
""".splitlines()


def test_a_choice_quiz_has_its_options_feedback_and_one_right_answer():
    quiz = parse_quiz(CHOICE)
    assert quiz.kind == "choice"
    assert [o.text for o in quiz.options] == ["The nearest name.", "A soft lookup."]
    assert quiz.options[0].feedback == "No: that is the baseline rule, which ignores gender."
    assert quiz.answer.text == "A soft lookup."


def test_an_option_may_wrap_onto_indented_lines():
    quiz = parse_quiz(["- [x] one", "  two", "  : why", "- [ ] three", "  : why not"])
    assert quiz.options[0].text == "one two"


def test_no_right_answer_is_an_error():
    with pytest.raises(QuizError, match="no right answer"):
        parse_quiz([line.replace("[x]", "[ ]") for line in CHOICE])


def test_two_right_answers_are_an_error():
    with pytest.raises(QuizError, match="2 options are marked right"):
        parse_quiz([line.replace("[ ]", "[x]") for line in CHOICE])


def test_an_option_without_feedback_is_an_error():
    with pytest.raises(QuizError, match="'The nearest name.' has no feedback"):
        parse_quiz(["- [ ] The nearest name.", *CHOICE[3:]])


def test_a_line_that_is_neither_option_nor_feedback_is_an_error():
    with pytest.raises(QuizError, match="neither an option"):
        parse_quiz(["* [x] a star, not a dash", "  : why"])


def test_a_choice_quiz_needs_two_options():
    with pytest.raises(QuizError, match="at least two options"):
        parse_quiz(CHOICE[3:])


def test_a_numeric_quiz_reads_its_answer_tolerance_and_wrong_numbers():
    quiz = parse_quiz(["- [x] 0.47", "  : right", "- [ ] 12,288", "  : too big"], "number", "0.01")
    assert (quiz.answer.value, quiz.tolerance) == (0.47, 0.01)
    assert quiz.options[1].value == 12288


@pytest.mark.parametrize(
    ("lines", "tolerance", "message"),
    [
        (["- [x] eight", "  : right"], None, "'eight' is not a number"),
        (["- [x] 8", "  : right", "- [ ] many", "  : no"], None, "'many' is not a number"),
        (["- [x] 8", "  : right"], "-1", "tolerance '-1'"),
        (["- [x] 8", "  : right"], "small", "tolerance 'small'"),
        (["- [x] 8", "  : right", "- [ ] 8.2", "  : no"], "0.5", "within the tolerance"),
        (["- [ ] 8", "  : no"], None, "no right answer"),
    ],
)
def test_a_bad_numeric_answer_is_an_error(lines, tolerance, message):
    with pytest.raises(QuizError, match=message):
        parse_quiz(lines, "number", tolerance)


# A tiny Sphinx project with MyST and the extension: what the strict build makes of a quiz.
PAGE = """\
# {title}

```{{quiz}} Why does a query look at *every* key, $w_i$?
:name: {name}
- [ ] Because the nearest name wins.
  : No: that is the baseline.
- [x] Because the lookup is soft.
  : Right.
```

```{{quiz}} How many scores?
:name: {name}-n
:type: number
- [x] 7
  : One per key.
- [ ] 6
  : The query scores itself too.
```
"""


def build(tmp_path: Path, pages: dict[str, str], edition: str = "en") -> Path:
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"extensions = ['myst_parser', 'quizzes']\nmyst_enable_extensions = ['dollarmath']\n"
        f"attnbook_edition = {edition!r}\nhtml_static_path = [{str(ROOT / 'assets')!r}]\n"
        "suppress_warnings = ['config.cache']\n",
        encoding="utf-8",
    )
    toc = "\n".join(p for p in pages if p != "index")
    pages = {"index": f"# Home\n\n```{{toctree}}\n{toc}\n```\n", **pages}
    for name, text in pages.items():
        (src / f"{name}.md").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    with docutils_namespace():  # each build registers its nodes and directives afresh
        app = Sphinx(
            str(src),
            str(src),
            str(out),
            str(out / ".doctrees"),
            "html",
            status=None,
            warning=None,
            freshenv=True,
            warningiserror=True,
        )
        app.build()
    return out


@pytest.fixture(autouse=True)
def _sphinx_import_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "book" / "_ext"))


def test_a_quiz_is_a_form_with_labelled_options_and_a_live_result(tmp_path):
    page = (build(tmp_path, {"a": PAGE.format(title="A", name="ch1-a")}) / "a.html").read_text()
    form = re.search(r'<form class="attnbook-quiz" id="quiz-ch1-a".*?</form>', page, re.S).group()
    assert "<fieldset>" in form and '<legend class="attnbook-quiz-question">' in form
    assert "<em>every</em>" in form and r"\(w_i\)" in form  # MyST inline markup and math
    assert form.count('type="radio"') == 2 and form.count('data-correct="true"') == 1
    assert form.count('<label for="quiz-ch1-a-') == 2
    assert form.count('class="attnbook-quiz-feedback" hidden') == 2
    assert 'aria-live="polite"' in form and ">Check</button>" in form
    numeric = re.search(r'<form[^>]*id="quiz-ch1-a-n".*?</form>', page, re.S).group()
    assert 'data-answer="7"' in numeric and '<label for="quiz-ch1-a-n-value">' in numeric
    assert "attnbook-quiz.js" in page and "attnbook-quiz.css" in page


def test_the_labels_speak_the_editions_language(tmp_path):
    page = build(tmp_path, {"a": PAGE.format(title="A", name="x")}, edition="zh") / "a.html"
    text = page.read_text(encoding="utf-8")
    assert ">核对</button>" in text and 'data-correct-label="答对了。"' in text


def test_a_page_without_quiz_loads_no_quiz_script(tmp_path):
    out = build(tmp_path, {"a": "# A\n\nNo questions.\n"})
    assert "attnbook-quiz.js" not in (out / "a.html").read_text()


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (lambda p: p.replace("- [x] Because", "- [ ] Because"), "no right answer"),
        (lambda p: p.replace("  : No: that is the baseline.\n", ""), "has no feedback"),
        (lambda p: p.replace("- [x] 7", "- [x] seven"), "'seven' is not a number"),
        (lambda p: p.replace(":name: q-n", ":name: q"), "used twice"),
        (lambda p: p.replace(":name: q\n", ""), ":name:"),
        (lambda p: p.replace("No: that is the baseline.", "See {ref}`a`."), "cross-reference"),
    ],
)
def test_a_broken_quiz_fails_the_strict_build(tmp_path, broken, message):
    from sphinx.errors import SphinxWarning

    page = broken(PAGE.format(title="A", name="q").replace("{name}-n", "q-n"))
    with pytest.raises(SphinxWarning, match=message):
        build(tmp_path, {"a": page})


def test_a_name_used_on_two_pages_fails_the_strict_build(tmp_path):
    from sphinx.errors import SphinxWarning

    with pytest.raises(SphinxWarning, match="used twice"):
        build(tmp_path, {p: PAGE.format(title=p, name="same") for p in ("a", "b")})


def quiz_count(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(
        len(QUIZ.findall("".join(c["source"]))) for c in cells if c["cell_type"] == "markdown"
    )


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_two_to_four_questions_in_both_editions(chapter):
    english = quiz_count(ROOT / "book" / f"{chapter}.ipynb")
    chinese = quiz_count(ROOT / "zh" / "book" / f"{chapter}.ipynb")
    assert 2 <= english <= 4, f"{chapter}: {english} questions in English"
    assert chinese == english, f"{chapter}: {chinese} questions in Chinese, {english} in English"


@pytest.mark.parametrize("edition", ["book", "zh/book"])
def test_every_quiz_names_itself_on_the_line_after_its_question(edition):
    """A question wrapped onto a second line pushes ``:name:`` into the body, and only the site's
    strict build would notice (CI failed that way once): catch it here, in a second."""
    wrapped = []
    for chapter in CHAPTERS:
        cells = json.loads((ROOT / edition / f"{chapter}.ipynb").read_text(encoding="utf-8"))
        for cell in cells["cells"]:
            lines = "".join(cell["source"]).splitlines()
            for i, line in enumerate(lines):
                if QUIZ.match(line) and not lines[i + 1].startswith(":name: "):
                    wrapped.append(f"{chapter}: {line[:60]}")
    assert not wrapped, wrapped
