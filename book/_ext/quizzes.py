"""Check your understanding: the ``{quiz}`` directive, a question answered on the static site.

A chapter ends with two to four questions, each a MyST directive in a markdown cell::

    ```{quiz} Why does a query compare itself with *every* key?
    :name: ch01-every-key
    - [ ] Because the nearest name is always the answer.
      : The nearest-name rule is the baseline attention beats; ...
    - [x] Because the lookup is soft: every key gets a weight.
      : Right: the softmax gives each key a share, ...
    ```

Each option is a list item, ``[x]`` for the right one and ``[ ]`` for a wrong one, and every
option carries its feedback on the next line after a colon (indented like the option's text):
what a reader who picked it has understood or misunderstood. A numeric question
(``:type: number``) lists its answer as the ``[x]`` item and common wrong numbers as ``[ ]``
items; ``:tolerance:`` says how far an answer may be from it (0 unless given). The question and
every option and feedback may hold MyST inline markup and ``$math$``.

The build checks each quiz (:func:`parse_quiz`) and fails the strict build on a quiz with no right
answer or more than one, an option without feedback, a name used twice, or a numeric answer that
is not a number. On the page a quiz is a plain form (fieldset, legend, radio buttons or a number
field, labels) that ``assets/attnbook-quiz.js`` answers with no kernel; without JavaScript the
question and its options still show, and the feedback stays hidden. Its labels are in the
edition's language (``attnbook_edition``, ``editions.py``).
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)
XREF = re.compile(r"\{(?:ref|numref|doc|eq|term|any)\}`[^`]*`")

# The words a quiz shows, in each edition (the JavaScript reads the ones it needs from the form).
LABELS = {
    "en": {
        "question": "Question",
        "check": "Check",
        "correct": "Correct.",
        "wrong": "Not quite.",
        "choose": "Choose an answer first.",
        "number": "Your answer",
        "enter": "Enter a number first.",
        "other": "That is not it; read the question again.",
    },
    "zh": {
        "question": "问题",
        "check": "核对",
        "correct": "答对了。",
        "wrong": "再想想。",
        "choose": "请先选一个答案。",
        "number": "你的答案",
        "enter": "请先填一个数。",
        "other": "不对，再读一遍题目。",
    },
}
NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
OPTION = re.compile(r"^- \[( |x|X)\] (.+)$")
FEEDBACK = re.compile(r"^\s+: (.+)$")
CONTINUATION = re.compile(r"^\s{2,}(\S.*)$")


class QuizError(ValueError):
    """A quiz that cannot be answered as written; the message says which line and why."""


@dataclass
class Option:
    text: str
    correct: bool
    line: int  # 0-based, within the directive's content
    feedback: str = ""
    value: float | None = None  # a numeric question's number


@dataclass
class Quiz:
    kind: str  # "choice" or "number"
    options: list[Option] = field(default_factory=list)
    tolerance: float = 0.0

    @property
    def answer(self) -> Option:
        return next(o for o in self.options if o.correct)


def parse_number(text: str) -> float | None:
    """``text`` as a finite number (``0.47``, ``-3``, ``1e-4``, ``12,288``), else None."""
    try:
        value = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_quiz(lines: list[str], kind: str = "choice", tolerance: str | None = None) -> Quiz:
    """Read a quiz's content lines into a :class:`Quiz`, or raise :class:`QuizError`."""
    if kind not in ("choice", "number"):
        raise QuizError(f"unknown quiz type {kind!r}: use choice or number")
    quiz = Quiz(kind)
    target: str | None = None  # what a continuation line continues: "text" or "feedback"
    for i, line in enumerate(lines):
        if not line.strip():
            target = None
            continue
        if m := OPTION.match(line):
            quiz.options.append(Option(m.group(2).strip(), m.group(1) != " ", i))
            target = "text"
        elif (m := FEEDBACK.match(line)) and quiz.options:
            option = quiz.options[-1]
            if option.feedback:
                raise QuizError(f"line {i + 1}: a second feedback for option {option.text!r}")
            option.feedback = m.group(1).strip()
            target = "feedback"
        elif (m := CONTINUATION.match(line)) and target:
            option = quiz.options[-1]
            if target == "text":
                option.text += " " + m.group(1).strip()
            else:
                option.feedback += " " + m.group(1).strip()
        else:
            raise QuizError(
                f"line {i + 1}: {line.strip()!r} is neither an option ('- [ ] text' or "
                "'- [x] text') nor its feedback (an indented line that starts with ': ')"
            )
    if len(quiz.options) < 2 and kind == "choice":
        raise QuizError("a multiple-choice quiz needs at least two options")
    right = [o for o in quiz.options if o.correct]
    if not right:
        raise QuizError("no right answer: mark the right option '- [x] ...'")
    if len(right) > 1:
        raise QuizError(f"{len(right)} options are marked right; mark exactly one '- [x]'")
    for option in quiz.options:
        if not option.feedback:
            raise QuizError(
                f"line {option.line + 1}: option {option.text!r} has no feedback (an indented "
                "line after it that starts with ': ')"
            )
    if kind == "number":
        tol = 0.0 if tolerance is None else parse_number(tolerance)
        if tol is None or tol < 0:
            raise QuizError(f"tolerance {tolerance!r} is not a number >= 0")
        quiz.tolerance = tol
        for option in quiz.options:
            option.value = parse_number(option.text)
            if option.value is None:
                raise QuizError(
                    f"line {option.line + 1}: {option.text!r} is not a number (a numeric "
                    "quiz's answer and wrong answers are plain numbers)"
                )
        answer = quiz.answer.value
        for option in quiz.options:
            if not option.correct and abs(option.value - answer) <= tol:
                raise QuizError(
                    f"line {option.line + 1}: the wrong answer {option.text} lies within the "
                    f"tolerance {tol:g} of the answer {quiz.answer.text}"
                )
    return quiz


# Doctree nodes, written as HTML by the visitors below.
class quiz(nodes.General, nodes.Element):
    pass


class quiz_question(nodes.Inline, nodes.TextElement):
    pass


class quiz_option(nodes.General, nodes.Element):
    pass


class quiz_label(nodes.Inline, nodes.TextElement):
    pass


class quiz_feedback(nodes.General, nodes.Element):
    pass


class QuizDirective(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {
        "name": directives.unchanged_required,
        "type": lambda arg: directives.choice(arg, ("choice", "number")),
        "tolerance": directives.unchanged_required,
    }

    def run(self) -> list[nodes.Node]:
        name = self.options.get("name", "")
        if not NAME.match(name):
            wrapped = " (is the question wrapped? it must stay on the directive's line)"
            first = self.content[0] if self.content else ""
            raise self.error(
                f"quiz: :name: {name!r} is missing or not lower-case letters, digits and '-'"
                + (wrapped if not name and not first.startswith("- [") else "")
            )
        xref = XREF.search("\n".join([*self.arguments, *self.content]))
        if xref:  # the HTML writer cannot draw a resolved reference inside a quiz's option
            raise self.error(
                f"quiz {name}: a cross-reference ({xref.group()}) cannot render inside a quiz; "
                "name the section or exercise in words"
            )
        try:
            parsed = parse_quiz(
                list(self.content),
                self.options.get("type", "choice"),
                self.options.get("tolerance"),
            )
        except QuizError as error:
            raise self.error(f"quiz {name}: {error}") from None
        names = self.env.attnbook_quizzes  # name -> (docname, line)
        if name in names and names[name][0] != self.env.docname or name in self._seen():
            where = names.get(name, (self.env.docname, self.lineno))
            raise self.error(f"quiz: the name {name!r} is used twice (also in {where[0]})")
        names[name] = (self.env.docname, self.lineno)
        self._seen().add(name)

        node = quiz(kind=parsed.kind, qname=name, ids=[f"quiz-{name}"])
        self.set_source_info(node)
        if parsed.kind == "number":
            node["answer"] = parsed.answer.value
            node["tolerance"] = parsed.tolerance
        question = quiz_question()
        question += self._inline(self.arguments[0])
        node += question
        for index, option in enumerate(parsed.options, start=1):
            item = quiz_option(index=index, correct=option.correct, value=option.value)
            if parsed.kind == "choice":
                label = quiz_label()
                label += self._inline(option.text, option.line)
                item += label
            feedback = quiz_feedback(correct=option.correct)
            feedback += self._inline(option.feedback, option.line)
            item += feedback
            node += item
        return [node]

    def _seen(self) -> set[str]:
        """The names of the quizzes read so far on this page (a page re-read starts afresh)."""
        memo = self.state.document
        if not hasattr(memo, "attnbook_quiz_names"):
            memo.attnbook_quiz_names = set()
        return memo.attnbook_quiz_names

    def _inline(self, text: str, line: int = 0) -> list[nodes.Node]:
        children, messages = self.state.inline_text(text, self.lineno + line)
        return [*children, *messages]


def _html_attrs(**attrs: Any) -> str:
    return "".join(
        f' {k.replace("_", "-")}="{html.escape(str(v), quote=True)}"'
        for k, v in attrs.items()
        if v is not None
    )


def _labels(translator) -> dict[str, str]:
    return LABELS.get(translator.builder.config.attnbook_edition, LABELS["en"])


def visit_quiz(self, node: quiz) -> None:
    labels = _labels(self)
    data = {
        f"data_{k}_label": v for k, v in labels.items() if k not in ("question", "check", "number")
    }
    if node["kind"] == "number":
        data["data_answer"] = f"{node['answer']:.12g}"
        data["data_tolerance"] = f"{node['tolerance']:.12g}"
    self.body.append(
        f'<form class="attnbook-quiz"{_html_attrs(id=node["ids"][0], data_kind=node["kind"], **data)}>'
        "<fieldset>"
    )


def depart_quiz(self, node: quiz) -> None:
    labels = _labels(self)
    name = node["qname"]
    if node["kind"] == "number":
        self.body.append(
            '<p class="attnbook-quiz-number">'
            f'<label for="quiz-{name}-value">{html.escape(labels["number"])}</label> '
            f'<input type="text" inputmode="decimal" autocomplete="off" id="quiz-{name}-value" '
            f'name="quiz-{name}"></p>'
        )
    self.body.append(
        f'<button type="submit" class="attnbook-quiz-check" hidden>'
        f"{html.escape(labels['check'])}</button>"
        '<div class="attnbook-quiz-result" aria-live="polite"></div>'
        "</fieldset></form>\n"
    )


def visit_quiz_question(self, node: quiz_question) -> None:
    label = html.escape(_labels(self)["question"])
    self.body.append(
        f'<legend class="attnbook-quiz-question"><span class="attnbook-quiz-tag">{label}</span> '
    )


def depart_quiz_question(self, node: quiz_question) -> None:
    self.body.append("</legend>")


def visit_quiz_option(self, node: quiz_option) -> None:
    form = node.parent
    name, index = form["qname"], node["index"]
    correct = ' data-correct="true"' if node["correct"] else ""
    if form["kind"] == "choice":
        self.body.append(
            f'<div class="attnbook-quiz-option"><input type="radio" name="quiz-{name}" '
            f'id="quiz-{name}-{index}" value="{index}"{correct}>'
            f'<label for="quiz-{name}-{index}">'
        )
    else:
        value = f"{node['value']:.12g}"
        self.body.append(f'<div class="attnbook-quiz-option" data-value="{value}"{correct} hidden>')


def depart_quiz_option(self, node: quiz_option) -> None:
    self.body.append("</div>")


def visit_quiz_label(self, node: quiz_label) -> None:
    pass


def depart_quiz_label(self, node: quiz_label) -> None:
    self.body.append("</label>")


def visit_quiz_feedback(self, node: quiz_feedback) -> None:
    self.body.append('<div class="attnbook-quiz-feedback" hidden>')


def depart_quiz_feedback(self, node: quiz_feedback) -> None:
    self.body.append("</div>")


def _skip(self, node) -> None:
    raise nodes.SkipNode


def _init_env(app, env, docnames) -> None:
    if not hasattr(env, "attnbook_quizzes"):
        env.attnbook_quizzes = {}


def _purge(app, env, docname: str) -> None:
    quizzes = getattr(env, "attnbook_quizzes", {})
    for name in [n for n, (doc, _) in quizzes.items() if doc == docname]:
        del quizzes[name]


def _merge(app, env, docnames, other) -> None:
    _init_env(app, env, docnames)
    for name, (doc, line) in getattr(other, "attnbook_quizzes", {}).items():
        if name in env.attnbook_quizzes and env.attnbook_quizzes[name][0] != doc:
            logger.error(
                "quiz: the name %r is used twice (also in %s)",
                name,
                env.attnbook_quizzes[name][0],
                location=(doc, line),
            )
        env.attnbook_quizzes[name] = (doc, line)


def _add_assets(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is not None and next(iter(doctree.findall(quiz)), None) is not None:
        app.add_js_file("attnbook-quiz.js", defer="defer")


def setup(app) -> dict[str, Any]:
    if "attnbook_edition" not in app.config.values:  # editions.py registers it in the book
        app.add_config_value("attnbook_edition", "en", "html", types=[str])
    app.add_directive("quiz", QuizDirective)
    visitors = {
        quiz: (visit_quiz, depart_quiz),
        quiz_question: (visit_quiz_question, depart_quiz_question),
        quiz_option: (visit_quiz_option, depart_quiz_option),
        quiz_label: (visit_quiz_label, depart_quiz_label),
        quiz_feedback: (visit_quiz_feedback, depart_quiz_feedback),
    }
    for node, html_visitors in visitors.items():
        app.add_node(node, html=html_visitors, latex=(_skip, None), text=(_skip, None))
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("html-page-context", _add_assets)
    app.add_css_file("attnbook-quiz.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
