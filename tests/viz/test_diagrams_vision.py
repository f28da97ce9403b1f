"""The Vision Transformer's input diagram: labels in both languages, no English word left in
Chinese, every text inside the canvas and apart from the others, alt text in the figure's language,
one outlined patch per patch, shown as SVG, arguments checked by name."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import FancyBboxPatch, Rectangle

from attnbook.viz import diagrams_vision
from attnbook.viz.diagrams import ROLE_COLORS

from .diagram_checks import (
    assert_alt_in_language,
    assert_no_english_left,
    assert_svg_with_alt,
    assert_texts_inside_and_apart,
    texts,
)

SIZES = [(8, 2), (8, 4), (12, 3), (16, 4)]
EXPECTED = [("image 8×8", "图像 8×8"), ("16 patches, flattened: (N, 16, 4)", "16 个图像块"),
            ("(N, 16, E)", "(N, 16, E)"), ("class token", "类别词元"), ("(N, 17, E)", "(N, 17, E)"),
            ("num_layers", "num_layers"), ("LayerNorm", "LayerNorm")]  # fmt: skip
KEPT = ("num_layers", "LayerNorm", "pre-LN", "Transformer")  # names the Chinese edition keeps


def draw(sizes, lang):
    return diagrams_vision.vit_patches(image_size=sizes[0], patch_size=sizes[1], lang=lang)


@pytest.fixture(params=SIZES, ids=str)
def sizes(request) -> tuple[int, int]:
    return request.param


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_diagram_shows_its_labels(book_style, lang):
    drawn = "\n".join(t.get_text() for t in texts(draw((8, 2), lang)))
    for english, chinese in EXPECTED:
        assert (english if lang == "en" else chinese) in drawn, (lang, drawn)


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
    alt = assert_alt_in_language(draw((8, 2), lang), lang)
    assert "16" in alt and "17" in alt


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_diagram_is_shown_as_svg_with_its_alt_text(book_style, lang):
    fig = draw((8, 2), lang)
    assert_svg_with_alt(fig)


def test_the_class_token_and_the_encoder_have_the_attention_colour(book_style):
    fig = draw((8, 2), "en")
    edges = {
        to_hex(p.get_edgecolor()) for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)
    }
    assert {to_hex(ROLE_COLORS["attention"]), to_hex(ROLE_COLORS["linear"])} <= edges


def test_one_numbered_patch_and_one_flattened_strip_per_patch(book_style, sizes):
    side, p = sizes
    patches = (side // p) ** 2
    fig = draw(sizes, "en")
    numbers = sorted(int(t.get_text()) for t in texts(fig) if t.get_text().isdigit())
    assert numbers == list(range(patches))
    outlined = [r for r in fig.axes[0].patches
                if type(r) is Rectangle and to_hex(r.get_edgecolor()) == to_hex(ROLE_COLORS["plain"])]  # fmt: skip
    assert len(outlined) == 2 * patches  # the patch outlines on the image, then the strips


@pytest.mark.parametrize(
    "call, error, argument",
    [
        (lambda: diagrams_vision.vit_patches(image_size=3), ValueError, "image_size"),
        (lambda: diagrams_vision.vit_patches(image_size=8.0), TypeError, "image_size"),
        (lambda: diagrams_vision.vit_patches(patch_size=3), ValueError, "patch_size"),
        (lambda: diagrams_vision.vit_patches(patch_size=1), ValueError, "patch_size"),
        (lambda: diagrams_vision.vit_patches(patch_size=8), ValueError, "patch_size"),
        (lambda: diagrams_vision.vit_patches(patch_size=True), TypeError, "patch_size"),
        (lambda: diagrams_vision.vit_patches(lang="fr"), ValueError, "lang"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, argument):
    with pytest.raises(error, match=argument):
        call()
    plt.close("all")
