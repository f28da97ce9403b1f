"""The checkers speak Chinese in the Chinese edition: every line a report writes is translated.

For every exercise module, a right answer (the book's solution, or the one the chapter's tests
use) and a wrong one (a mistake the chapter's tests already name) are checked under
``language("zh")``; the report must contain Chinese and no English sentence. Data (stories,
sentences, tokens), quoted values, code and exception messages from Python are left as they are.
"""

from __future__ import annotations

import ast
import pkgutil
import re
import string
from pathlib import Path

import pytest
import torch

import attnbook.exercises as checkers
from attnbook.attention import scaled_dot_product_attention
from attnbook.i18n import ZH_STRINGS, language

from . import test_book_solutions as book
from . import test_ch01_detective as t01
from . import test_ch02_attention as t02
from . import test_ch03_many_heads as t03
from . import test_ch04_building_mha as t04
from . import test_ch05_transformer as t05
from . import test_ch06_training as t06
from . import test_ch07_seeing_heads as t07
from . import test_ch08_what_heads_do as t08
from . import test_ch09_cost as t09
from . import test_ch11_training as t11
from . import test_ch15_vision as t15
from . import test_ch16_pretrained as t16
from . import test_ch17_real_heads as t17

EXERCISES = Path(checkers.__file__).parent
CJK = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")  # characters and punctuation
# What a translated line may keep in English: quoted or back-ticked text (data, code), the
# message of an exception that Python or PyTorch raised ("抛出了 RuntimeError: ..."), and a list
# of Python type names, as a report shows what a function returned: "(float, float, ...)".
QUOTED = re.compile(
    r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\]|[（(](?:[A-Za-z_]\w*, )+[A-Za-z_]\w*[）)]"
)
EXCEPTION = re.compile(r"\b[A-Z]\w*(Error|Exception)\b: [^（）\n]*")
# Four English words in a row, two letters or more each: an untranslated sentence.
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z]{2,}\b){3,}")


def english_left(text: str) -> list[str]:
    """The runs of English words in ``text`` outside data, code and exception messages."""
    runs = []
    for line in text.splitlines():
        if not line.startswith(("  ✓", "  ✗")) and ": " not in line:
            continue  # a story or paragraph the checker prints as data, on lines of its own
        kept = EXCEPTION.sub("", QUOTED.sub("", line))
        runs += [m.group(0) for m in ENGLISH_RUN.finditer(kept)]
    return runs


def assert_chinese(report) -> None:
    text = str(report)
    assert CJK.search(text.splitlines()[0]), text
    lines = [line for line in text.splitlines() if line.startswith(("  ✓", "  ✗"))]
    # a line with words has Chinese among them (a line may be only a number, as in chapter 12)
    assert lines and all(CJK.search(x) or not re.search("[A-Za-z]{2}", x) for x in lines), text
    assert not english_left(text), f"{english_left(text)} in\n{text}"


def solution(label: str):
    """The book's solution to the exercise ``label`` (see test_book_solutions)."""
    name, _ = book.SOLUTIONS[label]
    return book.definitions(book.solution_code(label))[name]


def first(mistakes: dict):
    """The first mistake of a chapter test's table: a function, or (function, fragment)."""
    value = next(iter(mistakes.values()))
    return value[0] if isinstance(value, tuple) else value


# module -> (checker, a thunk giving a right answer, a thunk giving a wrong one)
CASES = {
    "ch01_lookup": (
        checkers.check_soft_lookup,
        lambda: solution("ch1-ex-soft-lookup"),
        lambda: first(t01.LOOKUP_WRONG),
    ),
    "ch01_detective": (
        checkers.check_new_suspect,
        lambda: solution("ch1-ex-new-name"),
        lambda: first(t01.SUSPECT_WRONG),
    ),
    "ch02_attention": (
        checkers.check_attention,
        lambda: t02.attention,
        lambda: lambda q, k, v, m=None: t02.attention(q, k, v, m, scale=1.0),
    ),
    "ch04_padding": (
        checkers.check_padding_to_sdpa,
        lambda: next(iter(t02.PADDING_RIGHT.values())),
        lambda: first(t02.PADDING_WRONG),
    ),
    "ch02_numbers": (
        lambda answer: checkers.check_variance(*answer),
        lambda: (1024.0, 32.0),
        lambda: (64.0, 8.0),
    ),
    "ch03_many_heads": (
        checkers.check_param_count,
        lambda: solution("ch3-ex-param-count"),
        lambda: first(t03.WRONG),
    ),
    "ch04_building_mha": (
        checkers.check_split_heads,
        lambda: solution("ch4-ex-split"),
        lambda: first(t04.SPLIT_WRONG),
    ),
    "ch05_transformer": (
        checkers.check_sinusoidal_encoding,
        lambda: solution("ch5-ex-sinusoidal"),
        lambda: t05.concatenated_halves,
    ),
    "ch05b_complete": (
        checkers.check_kv_rows,
        lambda: solution("ch5b-ex-kv-rows"),
        lambda: t05.memory_once,
    ),
    "ch06_training": (
        checkers.check_pointer_loss,
        lambda: solution("ch6-ex-loss"),
        lambda: first(t06.WRONG),
    ),
    "ch07_seeing_heads": (
        checkers.check_head_hits,
        lambda: solution("ch7-ex-hits"),
        lambda: first(t07.HITS_WRONG),
    ),
    "ch08_what_heads_do": (
        checkers.check_head_entropy,
        lambda: solution("ch8-ex-entropy"),
        lambda: first(t08.WRONG),
    ),
    "ch09_online_softmax": (
        checkers.check_online_softmax_merge,
        lambda: solution("ch9-ex-merge"),
        lambda: t09.whole_tensor_special_case,
    ),
    "ch09_cost": (
        lambda answer: checkers.check_checkpoint_segments(*answer),
        lambda: (lambda s, a, A: 24 * a / s + s * A, lambda a, A: (24 * a / A) ** 0.5),
        lambda: (lambda s, a, A: 24 * a + s * A, lambda a, A: 4),
    ),
    "ch10_approximations": (
        checkers.check_linear_attention,
        lambda: solution("ch10-ex-linear"),
        lambda: lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    ),
    "ch11_training": (
        checkers.check_attention_backward,
        lambda: next(iter(t11.RIGHT.values())),
        lambda: first(t11.WRONG),
    ),
    "ch12_translation": (
        checkers.check_number_to_chinese,
        lambda: solution("ch12-ex-chinese"),
        lambda: lambda n: str(n),
    ),
    "ch13_reading": (
        checkers.check_last_place,
        lambda: solution("ch13-ex-last-place"),
        lambda: lambda story: story.sentences[-1][-2],
    ),
    "ch14_summarising": (
        checkers.check_central_sentence,
        lambda: solution("ch14-ex-central"),
        lambda: lambda sentences: len(sentences) - 1,
    ),
    "ch15_vision": (
        checkers.check_patchify,
        lambda: solution("ch15-ex-patchify"),
        lambda: t15.columns_first,
    ),
    "ch16_pretrained": (
        checkers.check_bert_param_count,
        lambda: solution("ch16-ex-count"),
        lambda: first(t16.WRONG_COUNTS),
    ),
    "ch17_real_heads": (
        checkers.check_previous_weight,
        lambda: solution("ch17-ex-previous"),
        lambda: t17.previous_next_token,
    ),
    "ch18_tuning": (
        checkers.check_diversity,
        lambda: solution("ch18-ex-diversity"),
        lambda: lambda weights: 1 - solution("ch18-ex-diversity")(weights),
    ),
    "ch19_troubleshooting": (
        checkers.check_uniformity,
        lambda: solution("ch19-ex-uniformity"),
        lambda: lambda weights, padding: torch.zeros(weights.size(1)),
    ),
    "ch19b_unstable": (
        checkers.check_largest_dot,
        lambda: solution("ch19b-ex-largest"),
        lambda: lambda head_dim, query_first: 65536.0,
    ),
    "ch20_outlook": (
        checkers.check_cache_bytes,
        lambda: solution("ch20-ex-cache"),
        lambda: lambda *args: solution("ch20-ex-cache")(*args) // 2,
    ),
}


def test_every_exercise_module_is_checked_in_chinese():
    modules = {m.name for m in pkgutil.iter_modules([str(EXERCISES)]) if m.name.startswith("ch")}
    assert modules == set(CASES)


@pytest.mark.parametrize("module", CASES)
def test_a_right_answer_is_reported_in_chinese(module):
    check, right, _ = CASES[module]
    with language("zh"):
        report = check(right())
        assert report.passed, str(report)
        assert_chinese(report)
        assert "全部通过" in str(report)


@pytest.mark.parametrize("module", CASES)
def test_a_wrong_answer_is_reported_in_chinese(module):
    check, _, wrong = CASES[module]
    with language("zh"):
        report = check(wrong())
        assert not report.passed, str(report)
        assert_chinese(report)
        assert "还没有通过" in str(report)


def test_a_crash_and_a_harness_message_are_reported_in_chinese():
    with language("zh"):
        report = checkers.check_param_count(lambda *a, **kw: {}["x"])
        assert "你的函数抛出了 KeyError" in str(report)
        assert_chinese(report)
        report = checkers.check_split_heads(lambda x, h: [x])
        assert not report.passed
        assert_chinese(report)


def test_the_english_report_is_unchanged():
    report = checkers.check_param_count(first(t03.WRONG))
    assert str(report).splitlines()[:3] == [
        "mha_param_count: not yet",
        "  ✗ d_model = 512, 8 heads: 1,050,624 parameters: you counted the weights but not the "
        "biases (each of the four projections has E)",
        "  ✓ bias=False: 1,048,576 parameters",
    ]


def test_an_untranslated_line_is_caught(monkeypatch):
    """The check can fail: drop one string's Chinese and the report shows it in English."""
    for key in ("the same count for 1, 2 and 16 heads", "with {heads} heads: {problem}"):
        monkeypatch.delitem(ZH_STRINGS, key)
        with language("zh"):
            report = checkers.check_param_count(first(t03.WRONG))
        with pytest.raises(AssertionError):
            assert_chinese(report)
        monkeypatch.undo()
    with language("zh"):
        assert_chinese(checkers.check_param_count(first(t03.WRONG)))


def _translated_in_the_source() -> set[str]:
    """Every constant string a checker passes to tr(), N_(), Report() or report.run()."""
    found = set()
    for path in sorted(EXERCISES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = ast.unparse(node.func)
            arg = node.args[0]
            if name in ("tr", "N_", "Report") or name.endswith(".run"):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
    return found


def test_every_string_a_checker_translates_has_its_chinese():
    strings = _translated_in_the_source()
    assert len(strings) > 500
    code_names = {s for s in strings if re.fullmatch(r"[\w.]+", s)}  # soft_lookup, ...
    missing = sorted(strings - code_names - set(ZH_STRINGS))
    assert not missing, missing


def _fields(text: str) -> list[tuple[str, str, str]]:
    return sorted(
        (name, conversion or "", spec or "")
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    )


def test_every_template_keeps_its_fields_in_chinese():
    assert len(ZH_STRINGS) > 900
    for english, chinese in ZH_STRINGS.items():
        assert _fields(english) == _fields(chinese), (english, chinese)
        # Chinese, or Chinese quotation marks (the attention view's "'{token}'" is "“{token}”")
        assert CJK.search(chinese) or "“" in chinese, (english, chinese)
