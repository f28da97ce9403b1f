"""The figures speak the reader's language: drawn in Chinese, no English word is left in them."""

import re

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.text import Text

from attnbook import i18n, viz
from attnbook.i18n import ZH_STRINGS as STRINGS
from attnbook.viz.efficient_plots import scaling_plot, tile_map
from attnbook.viz.head_plots import attention_lines, head_grid, head_heatmap
from attnbook.viz.patch_plots import patch_maps, similarity_grid
from attnbook.viz.pointer import pointer_panels
from attnbook.viz.transformer_plots import (
    dot_product_by_offset,
    dot_product_matrix,
    dot_product_profiles,
    layer_gradient_norms,
    norms_against_depth,
    positional_image,
)

TOKENS = ["老张", "说", "他", "很", "累"]
W = torch.softmax(torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(0)), -1)
TABLE = torch.randn(6, 8, generator=torch.Generator().manual_seed(1)).tanh()
ENGLISH_WORD = re.compile(r"[A-Za-z]{3,}")
# Names that Chinese text writes in Latin letters too.
KEPT = ("softmax", "PE(p)", "PE(q)")

# Every drawing function of the library, with data whose own labels are Chinese or numbers.
FIGURES = {
    "heatmap": lambda lang: viz.heatmap(W[0], TOKENS, TOKENS, lang=lang),
    "bars": lambda lang: viz.bars(W[0, 2], TOKENS, xlabel="key token", ylabel="weight", lang=lang),
    "attention_steps": lambda lang: viz.attention_steps(
        TOKENS, 2, torch.randn(5), W[0, 2], torch.rand(2), ["x", "y"], lang=lang
    ),
    "mask_image": lambda lang: viz.mask_image(torch.ones(5, 5, dtype=torch.bool).tril(), lang=lang),
    "head_heatmap": lambda lang: head_heatmap(W[0], TOKENS, query=2, lang=lang),
    "head_grid": lambda lang: head_grid([W[None]], TOKENS, query=2, lang=lang),
    "attention_lines": lambda lang: attention_lines(W, TOKENS, query=2, lang=lang),
    "scaling_plot": lambda lang: scaling_plot(
        {"computed": ([256, 512, 1024], [1.0, 4.0, 16.0])}, title="", ylabel="", lang=lang
    ),
    "tile_map": lambda lang: tile_map(8, 8, 4, 4, is_causal=True, lang=lang),
    "patch_maps": lambda lang: patch_maps({"L0 H0": torch.rand(16)}, torch.rand(8, 8), lang=lang),
    "similarity_grid": lambda lang: similarity_grid(torch.rand(4, 4), lang=lang),
    "pointer_panels": lambda lang: pointer_panels(
        [(TOKENS[:2], torch.tensor([0.3, 0.7]), 1, "")], lang=lang
    ),
    "positional_image": lambda lang: positional_image(TABLE, title="", lang=lang),
    "dot_product_matrix": lambda lang: dot_product_matrix(TABLE, title="", lang=lang),
    "dot_product_profiles": lambda lang: dot_product_profiles({"": TABLE}, 2, lang=lang),
    "dot_product_by_offset": lambda lang: dot_product_by_offset(TABLE, title="", lang=lang),
    "layer_gradient_norms": lambda lang: layer_gradient_norms(
        {"头": [1.0, 2.0]}, title="", ylabel="", lang=lang
    ),
    "norms_against_depth": lambda lang: norms_against_depth(
        [1, 2, 4], {"头": [1.0, 0.7, 0.5]}, title="", ylabel="", lang=lang
    ),
}


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


@pytest.mark.parametrize("name", FIGURES)
def test_a_figure_drawn_in_chinese_keeps_no_english_word(book_style, name):
    english = texts(FIGURES[name]("en"))
    chinese = texts(FIGURES[name]("zh"))
    plt.close("all")
    left = [
        t for t in chinese if ENGLISH_WORD.search(re.sub("|".join(map(re.escape, KEPT)), "", t))
    ]
    assert left == [], f"{name} drawn in Chinese still shows {left}"
    # the English figure does show English words, so the check above can fail
    if name not in {"pointer_panels"}:
        assert any(ENGLISH_WORD.search(t) for t in english), english


def test_the_current_language_is_the_default_and_lang_overrides_it(book_style):
    with i18n.language("zh"):
        assert viz.heatmap(W[0]).axes[0].get_xlabel() == STRINGS["key (attended to)"]
        assert viz.heatmap(W[0], lang="en").axes[0].get_xlabel() == "key (attended to)"
    assert viz.heatmap(W[0]).axes[0].get_xlabel() == "key (attended to)"
    plt.close("all")


def test_a_language_that_does_not_exist_is_refused():
    with pytest.raises(ValueError, match=r"lang must be one of \('en', 'zh'\); got 'fr'"):
        i18n.set_language("fr")
    with pytest.raises(TypeError, match="lang must be a str"):
        i18n.tr("weight", lang=1)
    assert i18n.get_language() == "en"


def test_every_template_keeps_its_fields_in_chinese():
    for english, chinese in STRINGS.items():
        assert set(re.findall(r"\{[^}]*\}", english)) == set(re.findall(r"\{[^}]*\}", chinese))
        assert re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef“”]", chinese), english
