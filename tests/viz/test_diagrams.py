"""The architecture diagrams: the labels and shapes they promise, in both languages, every text
inside the canvas and apart from the others, alt text that says what is drawn, and arguments
checked by name."""

from __future__ import annotations

import itertools
import re

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from attnbook.viz import diagrams
from attnbook.viz.style import alt_text

DIAGRAMS = {
    "sdpa_flow": diagrams.sdpa_flow,
    "heads_split_merge": diagrams.heads_split_merge,
    "heads_split_merge 1 head": lambda lang: diagrams.heads_split_merge(num_heads=1, lang=lang),
    "heads_split_merge 3 heads": lambda lang: diagrams.heads_split_merge(num_heads=3, lang=lang),
    "encoder_block": diagrams.encoder_block,
    "decoder_block": diagrams.decoder_block,
    "encoder_block pre-LN": lambda lang: diagrams.encoder_block(norm_first=True, lang=lang),
    "decoder_block pre-LN": lambda lang: diagrams.decoder_block(norm_first=True, lang=lang),
}
# What each diagram must show, as (English, Chinese) label fragments; shapes are the same in both.
EXPECTED = {
    "sdpa_flow": [
        ("Q  (L, E)", "Q  (L, E)"), ("K  (S, E)", "K  (S, E)"), ("V  (S, Ev)", "V  (S, Ev)"),
        ("K^{T}", "K^{T}"), ("weights · V", "权重 · V"), ("÷ √E", "÷ √E"), ("mask (optional)", "掩码"),
        ("softmax over S", "softmax"), ("weights (L, S)", "权重 (L, S)"),
        ("output (L, Ev)", "输出 (L, Ev)"),
    ],
    "heads_split_merge": [
        ("X  (N, L, E)", "X  (N, L, E)"), ("W_Q", "W_Q"), ("W_K", "W_K"), ("W_V", "W_V"),
        ("view → (N, L, H, D)", "view → (N, L, H, D)"),
        ("transpose → (N, H, L, D)", "transpose → (N, H, L, D)"), ("head ", "头 "),
        ("(N, H, L, D)", "(N, H, L, D)"), ("reshape → (N, L, E)", "reshape → (N, L, E)"),
        ("output projection W_O", "输出投影 W_O"),
    ],
    "encoder_block": [
        ("src  (N, L, E)", "src  (N, L, E)"), ("multi-head self-attention", "多头自注意力"),
        ("feed-forward", "前馈网络"), ("LayerNorm (norm2)", "层归一化 (norm2)"),
        ("residual", "残差"), ("norm_first=False", "norm_first=False"),
    ],
    "decoder_block": [
        ("tgt  (N, L, E)", "tgt  (N, L, E)"), ("masked multi-head self-attention", "掩码多头自注意力"),
        ("cross-attention", "交叉注意力"), ("(N, S, E)", "(N, S, E)"), ("K, V", "K, V"),
        ("LayerNorm (norm3)", "层归一化 (norm3)"), ("norm_first=False", "norm_first=False"),
    ],
}  # fmt: skip
# Code names and symbols that the Chinese figure writes in Latin letters too.
KEPT = ("softmax", "view", "transpose", "reshape", "norm_first", "norm1", "norm2", "norm3",
        "src", "tgt", "False", "True", "mathrm")  # fmt: skip


def texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.fixture(params=list(DIAGRAMS))
def name(request) -> str:
    return request.param


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_diagram_shows_its_labels_and_shapes(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    assert isinstance(fig, Figure)
    drawn = "\n".join(t.get_text() for t in texts(fig))
    for english, chinese in EXPECTED[name.split()[0]]:
        label = english if lang == "en" else chinese
        if name.endswith("pre-LN"):
            label = label.replace("norm_first=False", "norm_first=True")
        assert label in drawn, (name, lang, drawn)
    plt.close(fig)


def test_a_diagram_drawn_in_chinese_keeps_no_english_word(book_style, name):
    fig = DIAGRAMS[name](lang="zh")
    words = re.compile(r"[A-Za-z]{3,}")
    kept = re.compile("|".join(map(re.escape, KEPT)))
    left = [t.get_text() for t in texts(fig) if words.search(kept.sub("", t.get_text()))]
    assert left == []
    assert not words.search(kept.sub("", alt_text(fig)))
    plt.close(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_lies_inside_the_canvas_and_apart_from_the_others(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts(fig)]
    for text, box in boxes:
        assert canvas.x0 <= box.x0 and box.x1 <= canvas.x1, (text, box, canvas)
        assert canvas.y0 <= box.y0 and box.y1 <= canvas.y1, (text, box, canvas)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), (a, b)
    plt.close(fig)


def test_each_diagram_fits_the_text_column_with_readable_text(book_style, shown, name):
    shown(DIAGRAMS[name](lang="en"))
    shown(DIAGRAMS[name](lang="zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_alt_text_describes_the_diagram(book_style, name, lang):
    fig = DIAGRAMS[name](lang=lang)
    alt = alt_text(fig)
    assert len(alt) > 120 if lang == "en" else len(alt) > 50
    shape = {"sdpa": "(L, S)", "heads": "(N, H, L, D)"}.get(name.split("_")[0], "(N, L, E)")
    assert shape in alt
    plt.close(fig)


def test_the_optional_mask_can_be_left_out(book_style):
    with_mask = "\n".join(t.get_text() for t in texts(diagrams.sdpa_flow()))
    without = diagrams.sdpa_flow(mask=False)
    assert "mask (optional)" in with_mask
    assert "mask" not in "\n".join(t.get_text() for t in texts(without))
    assert "mask" not in alt_text(without)
    plt.close("all")


def test_pre_ln_puts_the_norm_before_the_sublayer(book_style):
    def order(fig):
        labels = [t for t in texts(fig) if "LayerNorm (norm1)" in t.get_text()
                  or "self-attention" in t.get_text()]  # fmt: skip
        return [t.get_text() for t in sorted(labels, key=lambda t: -t.get_position()[1])]

    assert order(diagrams.encoder_block()) == ["multi-head self-attention", "LayerNorm (norm1)"]
    assert order(diagrams.encoder_block(norm_first=True))[0] == "LayerNorm (norm1)"
    plt.close("all")


@pytest.mark.parametrize("heads", [1, 3, 4, 8])
def test_numbered_heads_are_drawn(book_style, heads):
    fig = diagrams.heads_split_merge(num_heads=heads)
    drawn = [t.get_text() for t in texts(fig)]
    assert any(t.startswith(f"head {heads}") for t in drawn)
    assert (sum(t.startswith("head ") for t in drawn) == heads) == (heads <= 4)
    plt.close(fig)


@pytest.mark.parametrize(
    "call, error, argument",
    [
        (lambda: diagrams.sdpa_flow(lang="fr"), ValueError, "lang"),
        (lambda: diagrams.sdpa_flow(lang=1), TypeError, "lang"),
        (lambda: diagrams.sdpa_flow(mask="yes"), TypeError, "mask"),
        (lambda: diagrams.heads_split_merge(num_heads=0), ValueError, "num_heads"),
        (lambda: diagrams.heads_split_merge(num_heads=2.0), TypeError, "num_heads"),
        (lambda: diagrams.heads_split_merge(num_heads=True), TypeError, "num_heads"),
        (lambda: diagrams.encoder_block(norm_first=1), TypeError, "norm_first"),
        (lambda: diagrams.decoder_block(norm_first=None), TypeError, "norm_first"),
        (lambda: diagrams.decoder_block(lang="de"), ValueError, "lang"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, argument):
    with pytest.raises(error, match=argument):
        call()
    plt.close("all")


def test_by_default_the_heads_are_drawn_symbolically(book_style):
    drawn = [t.get_text() for t in texts(diagrams.heads_split_merge())]
    assert [t.split("\n")[0] for t in drawn if t.startswith("head ")] == [
        "head 1",
        "head 2",
        "head H",
    ]
    plt.close("all")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_diagram_is_shown_as_svg_with_its_alt_text(book_style, name, lang):
    from attnbook.viz.style import is_vector, render_svg

    fig = DIAGRAMS[name](lang=lang)
    assert is_vector(fig)
    image = render_svg(fig)
    assert f"<title>{image.alt}</title>" in image.svg and len(image.svg.encode()) < 100_000
    assert bool(re.search(r"[\u4e00-\u9fff]", image.alt)) == (lang == "zh")
