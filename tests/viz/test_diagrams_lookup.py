"""The soft-lookup and mask diagrams: labels in both languages, no English word left in Chinese,
every text inside the canvas and apart from the others, alt text that says what is drawn in the
figure's language, roles in their colours, shown as SVG, arguments checked by name."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch, Rectangle

from attnbook.viz import diagrams_lookup
from attnbook.viz.diagrams import ROLE_COLORS

from .diagram_checks import (
    assert_alt_in_language,
    assert_no_english_left,
    assert_svg_with_alt,
    assert_texts_inside_and_apart,
    texts,
)

DIAGRAMS = {
    "soft_lookup": diagrams_lookup.soft_lookup,
    "soft_lookup 5 keys": lambda lang: diagrams_lookup.soft_lookup(num_keys=5, lang=lang),
    "mask_grids": diagrams_lookup.mask_grids,
}
EXPECTED = {
    "soft_lookup": [("query $q$", "查询 $q$"), ("keys", "键"), ("values", "值"),
                    ("$s_{1} = q \\cdot k_{1}$", "$s_{1} = q \\cdot k_{1}$"),
                    ("$w_{1}\\,v_{1}$", "$w_{1}\\,v_{1}$"), ("softmax", "softmax"),
                    ("output", "输出"), ("sum to 1", "总和为 1")],
    "mask_grids": [("padding mask", "填充掩码"), ("causal mask", "因果掩码"),
                   ("keys (S)", "键 (S)"), ("queries (L)", "查询 (L)"), ("$-\\infty$", "$-\\infty$"),
                   ("scores", "分数"), ("weights", "权重"), ("softmax", "softmax")],
}  # fmt: skip
KEPT = ("softmax", "False", "infty", "cdot", "sum")


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
    alt = assert_alt_in_language(DIAGRAMS[name](lang=lang), lang)
    assert ("−∞" in alt) == name.startswith("mask")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_diagram_is_shown_as_svg_with_its_alt_text(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    assert_svg_with_alt(fig)


def edge_colours(fig, kind=FancyBboxPatch) -> set[str]:
    return {to_hex(p.get_edgecolor()) for p in fig.axes[0].patches if isinstance(p, kind)}


def test_the_soft_lookup_draws_query_keys_values_and_weights_in_their_colours(book_style):
    fig = diagrams_lookup.soft_lookup()
    edges = edge_colours(fig)
    for role in ("query", "key", "value", "attention"):
        assert to_hex(ROLE_COLORS[role]) in edges, role
    bars = [p for p in fig.axes[0].patches if type(p) is Rectangle]
    assert len(bars) == 3 and all(
        to_hex(b.get_facecolor()) == to_hex(ROLE_COLORS["attention"]) for b in bars
    )
    widths = [b.get_width() for b in bars]
    assert widths == sorted(widths, reverse=True)  # the best-matching key weighs most


@pytest.mark.parametrize("num_keys", [2, 4, 5])
def test_the_soft_lookup_draws_one_row_per_key(book_style, num_keys):
    fig = diagrams_lookup.soft_lookup(num_keys=num_keys)
    keys = [t.get_text() for t in texts(fig) if re.fullmatch(r"\$k_\{\d\}\$", t.get_text())]
    assert len(keys) == num_keys


def test_the_masked_cells_are_minus_infinity_then_zero_in_the_mask_colour(book_style):
    fig = diagrams_lookup.mask_grids()
    drawn = [t.get_text() for t in texts(fig)]
    # padding: 4 queries x 2 padding keys; causal: the 6 cells above a 4x4 diagonal
    assert drawn.count(r"$-\infty$") == 8 + 6 and drawn.count("0") == 8 + 6
    masked = [
        p for p in fig.axes[0].patches
        if type(p) is Rectangle and to_hex(p.get_facecolor()) == to_hex(ROLE_COLORS["mask"])
    ]  # fmt: skip
    assert len(masked) == 2 * (8 + 6)


@pytest.mark.parametrize(
    "call, error, argument",
    [
        (lambda: diagrams_lookup.soft_lookup(num_keys=1), ValueError, "num_keys"),
        (lambda: diagrams_lookup.soft_lookup(num_keys=6), ValueError, "num_keys"),
        (lambda: diagrams_lookup.soft_lookup(num_keys=3.0), TypeError, "num_keys"),
        (lambda: diagrams_lookup.soft_lookup(num_keys=True), TypeError, "num_keys"),
        (lambda: diagrams_lookup.soft_lookup(lang="fr"), ValueError, "lang"),
        (lambda: diagrams_lookup.mask_grids(lang=2), TypeError, "lang"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, argument):
    with pytest.raises(error, match=argument):
        call()
    plt.close("all")
