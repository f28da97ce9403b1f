"""The tiles diagram of exact attention in blocks: labels in both languages, no English word left
in Chinese, every text inside the canvas and apart from the others, alt text in the figure's
language, roles in their colours, one tile at work, shown as SVG, arguments checked by name."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch, Rectangle

from attnbook.viz import diagrams_efficient
from attnbook.viz.diagrams import ROLE_COLORS

from .diagram_checks import (
    assert_alt_in_language,
    assert_no_english_left,
    assert_svg_with_alt,
    assert_texts_inside_and_apart,
    texts,
)

SIZES = [(3, 4), (2, 2), (4, 5)]
EXPECTED = [("keys K", "键 K"), ("values V", "值 V"), ("$Q_{1}$", "$Q_{1}$"), ("$K_{1}$", "$K_{1}$"),
            ("$V_{1}$", "$V_{1}$"), ("$S_{ij}$", "$S_{ij}$"), ("rowmax", "rowmax"),
            ("running state", "累计状态"), ("acc / ℓ", "acc / ℓ"), ("never stored", "从不整个存下")]  # fmt: skip
KEPT = ("softmax", "rowmax", "rowsum", "mathrm", "leftarrow", "max", "ell", "acc")


def draw(sizes, lang):
    return diagrams_efficient.attention_tiles(query_blocks=sizes[0], key_blocks=sizes[1], lang=lang)


@pytest.fixture(params=SIZES, ids=str)
def sizes(request) -> tuple[int, int]:
    return request.param


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_diagram_shows_its_labels(book_style, lang):
    drawn = "\n".join(t.get_text() for t in texts(draw((3, 4), lang)))
    for english, chinese in EXPECTED:
        assert (english if lang == "en" else chinese).replace("{1}", "1") in drawn, (lang, drawn)


def test_drawn_in_chinese_it_keeps_no_english_word(book_style, sizes):
    fig = draw(sizes, "zh")
    assert_no_english_left(fig, KEPT)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_lies_inside_the_canvas_and_apart_from_the_others(book_style, sizes, lang):
    fig = draw(sizes, lang)
    assert_texts_inside_and_apart(fig)


def test_the_diagram_fits_the_text_column_with_readable_text(book_style, shown, sizes):
    shown(draw(sizes, "en"))
    shown(draw(sizes, "zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_alt_text_describes_the_diagram_in_its_language(book_style, lang):
    alt = assert_alt_in_language(draw((3, 4), lang), lang)
    assert ("3" in alt and "4" in alt) and "acc / ℓ" in alt


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_diagram_is_shown_as_svg_with_its_alt_text(book_style, lang):
    fig = draw((3, 4), lang)
    assert_svg_with_alt(fig)


def test_queries_keys_values_and_scores_have_their_colours(book_style):
    fig = draw((3, 4), "en")
    edges = {
        to_hex(p.get_edgecolor()) for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)
    }
    for role in ("query", "key", "value", "attention"):
        assert to_hex(ROLE_COLORS[role]) in edges, role


def test_one_block_per_query_and_key_block_and_one_tile_per_pair_of_them(book_style, sizes):
    nq, nk = sizes
    fig = draw(sizes, "en")
    drawn = [t.get_text() for t in texts(fig)]
    assert sum(bool(re.fullmatch(r"\$Q_\d\$", t)) for t in drawn) == nq
    assert sum(bool(re.fullmatch(r"\$K_\d\$", t)) for t in drawn) == nk
    assert sum(bool(re.fullmatch(r"\$V_\d\$", t)) for t in drawn) == nk
    tiles = [p for p in fig.axes[0].patches if type(p) is Rectangle]
    assert len(tiles) == nq * nk
    solid = [p for p in tiles if p.get_linestyle() == "-"]
    assert len(solid) == 1  # one tile at a time; the rest of the score matrix is never stored


@pytest.mark.parametrize(
    "call, error, argument",
    [
        (lambda: diagrams_efficient.attention_tiles(query_blocks=1), ValueError, "query_blocks"),
        (lambda: diagrams_efficient.attention_tiles(query_blocks=5), ValueError, "query_blocks"),
        (lambda: diagrams_efficient.attention_tiles(query_blocks=2.0), TypeError, "query_blocks"),
        (lambda: diagrams_efficient.attention_tiles(key_blocks=6), ValueError, "key_blocks"),
        (lambda: diagrams_efficient.attention_tiles(key_blocks=True), TypeError, "key_blocks"),
        (lambda: diagrams_efficient.attention_tiles(lang="fr"), ValueError, "lang"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, argument):
    with pytest.raises(error, match=argument):
        call()
    plt.close("all")
