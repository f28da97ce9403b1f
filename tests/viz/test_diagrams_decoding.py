"""The decoding diagrams (key/value cache, grouped-query heads) and the whole encoder–decoder:
labels in both languages, no English word left in Chinese, every text inside the canvas and apart
from the others, alt text in the figure's language, roles in their colours, shown as SVG,
arguments checked by name."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch, Rectangle

from attnbook.viz import diagrams, diagrams_decoding
from attnbook.viz.diagrams import ROLE_COLORS

from .diagram_checks import (
    assert_alt_in_language,
    assert_no_english_left,
    assert_svg_with_alt,
    assert_texts_inside_and_apart,
    texts,
)

DIAGRAMS = {
    "kv_cache_step": diagrams_decoding.kv_cache_step,
    "kv_cache_step 1": lambda lang: diagrams_decoding.kv_cache_step(step=1, lang=lang),
    "kv_cache_step 6": lambda lang: diagrams_decoding.kv_cache_step(step=6, lang=lang),
    "grouped_query": diagrams_decoding.grouped_query,
    "grouped_query 8": lambda lang: diagrams_decoding.grouped_query(
        num_heads=8, kv_heads=(8, 2), lang=lang),
    "encoder_decoder": diagrams.encoder_decoder,
}  # fmt: skip
EXPECTED = {
    "kv_cache_step": [("position t = ", "位置 t = "), ("$q_t$  (N, H, 1, D)", "$q_t$  (N, H, 1, D)"),
                      ("$k_t$", "$k_t$"), ("$v_t$", "$v_t$"), ("+1 row", "新增一行"),
                      ("cache (N, H, t + 1, D)", "缓存 (N, H, t + 1, D)"),
                      ("(N, H, S, D)", "(N, H, S, D)"), ("cross-attention", "交叉注意力"),
                      ("never cached", "从不缓存")],
    "grouped_query": [("multi-head", "多头"), ("$q_1$", "$q_1$"), ("$k_1$", "$k_1$"),
                      ("$v_1$", "$v_1$"), ("cache × 1", "缓存 × 1")],
    "encoder_decoder": [("source tokens (N, S)", "源序列的词元 (N, S)"),
                        ("embedding + positions", "词元嵌入 + 位置"),
                        ("encoder block × num_layers", "编码器块 × num_layers"),
                        ("cross-attention", "交叉注意力"), ("memory (N, S, E)", "记忆 (N, S, E)"),
                        ("K, V", "K, V"), ("logits (N, T, V)", "logits (N, T, V)")],
}  # fmt: skip
KEPT = ("num_layers", "logits")


@pytest.fixture(params=list(DIAGRAMS))
def name(request) -> str:
    return request.param


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_diagram_shows_its_labels(book_style, name, lang):
    drawn = "\n".join(t.get_text() for t in texts(DIAGRAMS[name](lang=lang)))
    for english, chinese in EXPECTED[name.split()[0]]:
        assert (english if lang == "en" else chinese) in drawn, (name, lang, drawn)


def test_a_diagram_drawn_in_chinese_keeps_no_english_word(book_style, name):
    fig = DIAGRAMS[name](lang="zh")
    assert_no_english_left(fig, KEPT)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_lies_inside_the_canvas_and_apart_from_the_others(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    assert_texts_inside_and_apart(fig)


def test_each_diagram_fits_the_text_column_with_readable_text(book_style, shown, name):
    shown(DIAGRAMS[name](lang="en"))
    shown(DIAGRAMS[name](lang="zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_alt_text_describes_the_diagram_in_its_language(book_style, name, lang):
    assert_alt_in_language(DIAGRAMS[name](lang=lang), lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_diagram_is_shown_as_svg_with_its_alt_text(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    assert_svg_with_alt(fig)


def edge_colours(fig) -> set[str]:
    return {to_hex(p.get_edgecolor()) for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)}


def rows(fig, role: str) -> list[Rectangle]:
    colour = to_hex(ROLE_COLORS[role])
    return [p for p in fig.axes[0].patches
            if type(p) is Rectangle and to_hex(p.get_facecolor()) == colour]  # fmt: skip


@pytest.mark.parametrize("name", ["kv_cache_step", "grouped_query", "encoder_decoder"])
def test_each_role_has_its_colour(book_style, name):
    edges = edge_colours(DIAGRAMS[name](lang="en"))
    roles = {"kv_cache_step": ("query", "key", "value", "attention", "linear"),
             "grouped_query": ("query", "key", "value"),
             "encoder_decoder": ("key", "attention", "linear")}[name]  # fmt: skip
    for role in roles:
        assert to_hex(ROLE_COLORS[role]) in edges, role


@pytest.mark.parametrize("step", [1, 3, 6])
def test_the_cache_holds_one_row_per_position_plus_the_new_one(book_style, step):
    fig = diagrams_decoding.kv_cache_step(step=step)
    for role in ("key", "value"):
        # t + 1 cache rows and the memory's 5, all of one colour; the new row alone is opaque
        cached = rows(fig, role)
        assert len(cached) == step + 1 + 5, role
        assert sum(p.get_facecolor()[3] > 0.5 for p in cached) == 1, role


@pytest.mark.parametrize("kv_heads", [(4, 2, 1), (2,), (1, 4)])
def test_every_query_head_joins_one_key_value_head(book_style, kv_heads):
    fig = diagrams_decoding.grouped_query(kv_heads=kv_heads)
    drawn = [t.get_text() for t in texts(fig)]
    assert drawn.count("$q_1$") == len(kv_heads) and drawn.count("$q_4$") == len(kv_heads)
    assert sum(drawn.count(f"$k_{j}$") for j in range(1, 5)) == sum(kv_heads)
    assert len(fig.axes[0].lines) == 4 * len(kv_heads)  # one line per query head, per panel


@pytest.mark.parametrize(
    "call, error, argument",
    [
        (lambda: diagrams_decoding.kv_cache_step(step=0), ValueError, "step"),
        (lambda: diagrams_decoding.kv_cache_step(step=7), ValueError, "step"),
        (lambda: diagrams_decoding.kv_cache_step(step=2.0), TypeError, "step"),
        (lambda: diagrams_decoding.kv_cache_step(lang="fr"), ValueError, "lang"),
        (lambda: diagrams_decoding.grouped_query(num_heads=1), ValueError, "num_heads"),
        (lambda: diagrams_decoding.grouped_query(num_heads=True), TypeError, "num_heads"),
        (lambda: diagrams_decoding.grouped_query(kv_heads=[4, 2]), TypeError, "kv_heads"),
        (lambda: diagrams_decoding.grouped_query(kv_heads=()), ValueError, "kv_heads"),
        (lambda: diagrams_decoding.grouped_query(kv_heads=(3,)), ValueError, "kv_heads"),
        (lambda: diagrams_decoding.grouped_query(kv_heads=(8,)), ValueError, "kv_heads"),
        (lambda: diagrams_decoding.grouped_query(kv_heads=(2.0,)), TypeError, "kv_heads"),
        (lambda: diagrams.encoder_decoder(lang=2), TypeError, "lang"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, argument):
    with pytest.raises(error, match=argument):
        call()
    plt.close("all")
