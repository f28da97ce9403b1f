"""The tiles diagram of exact attention in blocks: labels in both languages, no English word left
in Chinese, every text inside the canvas and apart from the others, alt text in the figure's
language, roles in their colours, one tile at work, shown as SVG, arguments checked by name."""

from __future__ import annotations

import itertools
import re

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch, Rectangle
from matplotlib.text import Text

from attnbook.viz import diagrams_efficient
from attnbook.viz.diagrams import ROLE_COLORS
from attnbook.viz.style import alt_text, is_vector, render_svg

SIZES = [(3, 4), (2, 2), (4, 5)]
EXPECTED = [("keys K", "键 K"), ("values V", "值 V"), ("$Q_{1}$", "$Q_{1}$"), ("$K_{1}$", "$K_{1}$"),
            ("$V_{1}$", "$V_{1}$"), ("$S_{ij}$", "$S_{ij}$"), ("rowmax", "rowmax"),
            ("running state", "累计状态"), ("acc / ℓ", "acc / ℓ"), ("never stored", "从不整个存下")]  # fmt: skip
KEPT = ("softmax", "rowmax", "rowsum", "mathrm", "leftarrow", "max", "ell", "acc")
CJK = re.compile(r"[\u4e00-\u9fff]")


def draw(sizes, lang):
    return diagrams_efficient.attention_tiles(query_blocks=sizes[0], key_blocks=sizes[1], lang=lang)


def texts(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


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
    words = re.compile(r"[A-Za-z]{3,}")
    kept = re.compile("|".join(map(re.escape, KEPT)))
    assert [t.get_text() for t in texts(fig) if words.search(kept.sub("", t.get_text()))] == []
    assert not words.search(kept.sub("", alt_text(fig)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_lies_inside_the_canvas_and_apart_from_the_others(book_style, sizes, lang):
    fig = draw(sizes, lang)
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts(fig)]
    for text, box in boxes:
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (text, box)
        assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1, (text, box)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), (a, b)


def test_the_diagram_fits_the_text_column_with_readable_text(book_style, shown, sizes):
    shown(draw(sizes, "en"))
    shown(draw(sizes, "zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_alt_text_describes_the_diagram_in_its_language(book_style, lang):
    alt = alt_text(draw((3, 4), lang))
    assert len(alt) > (200 if lang == "en" else 80)
    assert bool(CJK.search(alt)) == (lang == "zh")
    assert ("3" in alt and "4" in alt) and "acc / ℓ" in alt


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_diagram_is_shown_as_svg_with_its_alt_text(book_style, lang):
    fig = draw((3, 4), lang)
    assert is_vector(fig)
    image = render_svg(fig)
    assert image.svg.startswith("<svg ") and f"<title>{image.alt}</title>" in image.svg
    assert len(image.svg.encode()) < 100_000


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
