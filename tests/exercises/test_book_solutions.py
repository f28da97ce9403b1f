"""The solutions printed in the book pass their checkers: the two cannot drift apart."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import attnbook.exercises as checkers
from attnbook.exercises.ch01_detective import check_two_way_lookup
from attnbook.exercises.ch08_what_heads_do import check_replace_head
from attnbook.models.handbuilt import WORD_FEATURES
from attnbook.tasks.vocab import tokenize

BOOK = Path(__file__).resolve().parents[2] / "book"
# solution label -> (the name the solution defines, the checker)
SOLUTIONS = {
    "ch1-ex-soft-lookup": ("soft_lookup", checkers.check_soft_lookup),
    "ch1-ex-new-name": ("lexicon", checkers.check_new_suspect),
    "ch1-ex-two-way": ("matrices", check_two_way_lookup),
    "ch3-ex-param-count": ("mha_param_count", checkers.check_param_count),
    "ch4-ex-split": ("split_heads", checkers.check_split_heads),
    "ch4-ex-merge": ("merge_heads", checkers.check_merge_heads),
    "ch4-ex-adapter": ("article_mask", checkers.check_article_mask),
    "ch5-ex-sinusoidal": ("sinusoidal", checkers.check_sinusoidal_encoding),
    "ch5-ex-pre-ln": ("pre_ln_forward", checkers.check_pre_ln_block),
    "ch5b-ex-schedule": ("transformer_lr", checkers.check_transformer_schedule),
    "ch5b-ex-kv-rows": ("kv_rows", checkers.check_kv_rows),
    "ch6-ex-loss": ("my_pointer_loss", checkers.check_pointer_loss),
    "ch7-ex-hits": ("my_head_hits", checkers.check_head_hits),
    "ch7-ex-baseline": ("my_baseline", checkers.check_gender_baseline),
    "ch7-ex-binding": ("my_binding", checkers.check_binding),
    "ch8-ex-entropy": ("my_head_entropy", checkers.check_head_entropy),
    "ch8-ex-replace": ("my_replace_head", check_replace_head),
    "ch9-ex-merge": ("merge", checkers.check_online_softmax_merge),
    "ch9-ex-blocks": ("block_attention", checkers.check_block_attention),
    "ch10-ex-linear": ("linear_attn", checkers.check_linear_attention),
    "ch12-ex-chinese": ("my_number_to_chinese", checkers.check_number_to_chinese),
    "ch13-ex-last-place": ("my_last_place", checkers.check_last_place),
    "ch13-ex-share": ("my_supporting_share", checkers.check_supporting_share),
    "ch14-ex-central": ("my_central_sentence", checkers.check_central_sentence),
    "ch15-ex-patchify": ("my_patchify", checkers.check_patchify),
    "ch15-ex-rollout": ("my_rollout", checkers.check_rollout),
    "ch16-ex-count": ("bert_param_count", checkers.check_bert_param_count),
    "ch16-ex-pool": ("my_mean_pool", checkers.check_mean_pool),
    "ch16-ex-tokens": ("tokens", checkers.check_predicted_tokens),
    "ch17-ex-previous": ("my_previous_weight", checkers.check_previous_weight),
    "ch17-ex-hits": ("my_candidate_hits", checkers.check_candidate_hits),
    "ch18-ex-soft": ("my_soft_loss", checkers.check_soft_loss),
    "ch18-ex-diversity": ("my_diversity", checkers.check_diversity),
    "ch19-ex-uniformity": ("my_uniformity", checkers.check_uniformity),
    "ch19-ex-verdicts": ("my_verdicts", checkers.check_verdicts),
    "ch19b-ex-largest": ("largest_dot", checkers.check_largest_dot),
    "ch19b-ex-rotate": ("my_rotate", checkers.check_rotate),
    "ch20-ex-cache": ("my_cache_bytes", checkers.check_cache_bytes),
    "ch20-ex-step": ("my_linear_step", checkers.check_linear_step),
}


def solution_code(label: str) -> str:
    """The python code block of the book's solution with this label."""
    for path in sorted(BOOK.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            match = re.search(
                r"\{solution\} " + re.escape(label) + r"\n.*?```python\n(.*?)```", text, re.S
            )
            if cell["cell_type"] == "markdown" and match:
                return match.group(1)
    raise LookupError(f"no python solution labelled {label}")


def definitions(code: str) -> dict:
    """Run only the imports, definitions and assignments of a solution (not its demo calls)."""
    tree = ast.parse(code)
    kept = [
        n
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign))
    ]
    namespace = {"torch": torch, "F": F, "WORD_FEATURES": WORD_FEATURES, "tokenize": tokenize}
    for node in kept:
        try:
            exec(compile(ast.Module([node], type_ignores=[]), "<solution>", "exec"), namespace)
        except NameError:  # a demo line that uses the chapter's own objects
            assert isinstance(node, ast.Assign), ast.unparse(node)
    return namespace


def test_every_checked_solution_is_found():
    for label in SOLUTIONS:
        assert solution_code(label)


@pytest.mark.parametrize("label", SOLUTIONS)
def test_the_books_solution_passes_its_checker(label):
    name, check = SOLUTIONS[label]
    report = check(definitions(solution_code(label))[name])
    assert report.passed, str(report)
