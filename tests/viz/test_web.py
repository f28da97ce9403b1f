"""HTML views: self-contained structure, labelled controls, one image per distinct figure, the
attention data round-tripping to the weights, errors for bad input, nbval's sanitize patterns."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch

from attnbook.viz.attention_view import (
    HEAD_COLORS,
    ROW_PX,
    attention_view,
    attention_views,
    peak,
    summary,
)
from attnbook.viz.style import render_png, set_alt
from attnbook.viz.web import HTMLView, asset, figure_explorer, figure_switcher

SANITIZE = Path(__file__).resolve().parents[1] / "nbval_sanitize.cfg"
VOID = {"img", "input", "br", "meta", "link", "hr", "source"}


class Element:
    def __init__(self, tag: str, attrs: dict, parent: Element | None):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str, **attrs) -> list[Element]:
        def matches(e):
            return e.tag == tag and all(
                v in e.attrs.get(k.rstrip("_"), "").split()
                if k == "class_"
                else e.attrs.get(k.replace("_", "-")) == v
                for k, v in attrs.items()
            )

        return [e for e in self.iter() if matches(e)]

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)


class _Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Element("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: "" if v is None else v for k, v in attrs}, self.node)
        self.node.children.append(element)
        if tag not in VOID:
            self.node = element

    def handle_endtag(self, tag):
        node = self.node
        while node.tag != tag and node.parent is not None:
            node = node.parent
        assert node.tag == tag, f"</{tag}> closes nothing"
        self.node = node.parent

    def handle_data(self, data):
        self.node.text += data


def parse(html: str) -> Element:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    assert tree.node is tree.root, "unclosed elements"
    return tree.root


def view_data_of(html: str) -> dict:
    (script,) = parse(html).find_all("script", class_="attnbook-data")
    return json.loads(script.text)


def view_data(view: HTMLView) -> dict:
    return view_data_of(view.html)


def chart(title: str, eps: float = 0.0):
    fig, ax = plt.subplots(figsize=(2, 1.2))
    ax.plot([0, 1], [0, 1 + eps])
    set_alt(fig, f"a line titled {title}")
    return fig


WEIGHTS = torch.softmax(torch.randn(2, 2, 5, 5, generator=torch.Generator().manual_seed(0)), -1)
TOKENS = ["Tom", "cried", ".", "he", "ate"]


# --- every view -------------------------------------------------------------------------------


def test_a_view_is_one_self_contained_div_with_data_style_and_script():
    view = figure_switcher({"a": lambda: chart("a")}, description="pick")
    bundle = view._repr_mimebundle_()
    assert bundle == {"text/html": view.html, "text/plain": view.text}
    (div,) = parse(view.html).children
    assert div.tag == "div" and div.attrs["data-kind"] == "figures"
    assert set(div.attrs["class"].split()) == {"attnbook-view", "mathjax_ignore", "tex2jax_ignore"}
    assert div.find_all("style")[0].text == asset("attnview.css")
    assert div.find_all("script", class_="attnbook-js")[0].text == asset("attnview.js")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", view.html), "no external resources"


def test_the_data_cannot_close_its_script_early():
    view = attention_view(WEIGHTS[0], ["</script>", "<b>", "&", '"', "é"])
    assert view.html.count("</script>") == 2  # the data's and the behaviour's, nothing else
    assert view_data(view)["sentences"][0]["queries"] == ["</script>", "<b>", "&", '"', "é"]


# --- figure views -----------------------------------------------------------------------------


def test_figure_switcher_dropdown_has_a_label_and_one_image_per_option():
    view = figure_switcher(
        {"one": lambda: chart("one"), "two": lambda: chart("two")}, description="pick"
    )
    root = parse(view.html)
    (select,) = root.find_all("select")
    (label,) = root.find_all("label")
    assert label.attrs["for"] == select.attrs["id"] and label.all_text() == "pick"
    assert [o.all_text() for o in select.find_all("option")] == ["one", "two"]
    images = root.find_all("img")
    assert [img.attrs["alt"] for img in images] == ["a line titled one", "a line titled two"]
    assert "hidden" not in images[0].attrs and "hidden" in images[1].attrs
    expected = render_png(chart("one"))
    assert images[0].attrs["src"].startswith("data:image/png;base64,")
    assert (images[0].attrs["width"], images[0].attrs["height"]) == (
        str(expected.width),
        str(expected.height),
    )
    assert images[0].attrs["style"] == "max-width:100%;height:auto"
    assert view.text == "figure view: 2 images; pick (2)"


def test_toggle_buttons_sit_in_a_fieldset_with_a_legend():
    view = figure_switcher({"a": lambda: chart("a"), "b": lambda: chart("b")}, control="toggle")
    (fieldset,) = parse(view.html).find_all("fieldset")
    assert fieldset.find_all("legend")[0].all_text() == "figure"  # for screen readers only
    buttons = fieldset.find_all("button")
    assert [b.attrs["aria-pressed"] for b in buttons] == ["true", "false"]
    assert [b.all_text() for b in buttons] == ["a", "b"]


def test_a_slider_has_a_label_and_shows_its_value():
    view = figure_switcher(
        {"0.5": lambda: chart("x"), "1": lambda: chart("y")}, description="T", control="slider"
    )
    root = parse(view.html)
    (slider,) = root.find_all("input", type="range")
    assert (slider.attrs["min"], slider.attrs["max"], slider.attrs["value"]) == ("0", "1", "0")
    assert root.find_all("label")[0].attrs["for"] == slider.attrs["id"]
    assert root.find_all("output")[0].all_text() == "0.5"


CONTROLS = {"sentence": ["a", "b", "c"], "layer": ["0", "1"], "view": ["heat", "grid"]}


def test_a_key_shares_images_and_every_combination_reaches_the_image_of_its_choice():
    calls = []

    def render(choice):
        calls.append(dict(choice))
        return chart(" ".join(choice.values()))

    def key(c):
        return c["sentence"], c["view"], c["layer"] if c["view"] == "heat" else None

    view = figure_explorer(CONTROLS, render, key=key, kinds={"view": "toggle"})
    assert len(calls) == 3 * (2 + 1)
    root = parse(view.html)
    alts = [img.attrs["alt"] for img in root.find_all("img")]
    assert len(alts) == len(set(alts)) == 9
    images = view_data(view)["images"]
    combos = [(s, l, v) for s in CONTROLS["sentence"] for l in ["0", "1"] for v in ["heat", "grid"]]
    for combo, image in zip(combos, images, strict=True):
        first = next(c for c in calls if key(c) == key(dict(zip(CONTROLS, combo))))
        assert alts[image] == f"a line titled {' '.join(first.values())}"
    assert images[1] == images[3]  # the grid ignores the layer


def test_figure_explorer_rejects_what_widgets_rejected():
    with pytest.raises(ValueError, match="12 distinct images would be rendered, more than"):
        figure_explorer(CONTROLS, lambda c: chart("x"), max_images=5)
    with pytest.raises(ValueError, match="at least one option"):
        figure_explorer({"a": []}, lambda c: chart("x"))
    with pytest.raises(ValueError, match="kinds names controls that do not exist"):
        figure_explorer(CONTROLS, lambda c: chart("x"), kinds={"colour": "toggle"})
    with pytest.raises(ValueError, match="at least one"):
        figure_switcher({})
    with pytest.raises(ValueError, match="control must be"):
        figure_switcher({"a": lambda: chart("a")}, control="knob")


# --- attention views --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights",
    [WEIGHTS, list(WEIGHTS), [w.numpy() for w in WEIGHTS], WEIGHTS.numpy()],
    ids=["4-D", "list", "numpy list", "numpy 4-D"],
)
def test_the_data_round_trips_to_the_weights_at_4_decimals(weights):
    data = view_data(attention_view(weights, TOKENS, query=3))
    (sentence,) = data["sentences"]
    assert torch.equal(
        torch.tensor(sentence["weights"], dtype=torch.float64),
        (WEIGHTS.double() * 1e4).round() / 1e4,
    )
    assert sentence["query"] == 3 and sentence["queries"] == sentence["keys"] == TOKENS
    assert data["layers"] == ["layer 0", "layer 1"] and data["heads"] == ["head 0", "head 1"]


@pytest.mark.parametrize("one_layer", [WEIGHTS[1], WEIGHTS[1].numpy()], ids=["tensor", "numpy"])
def test_one_layer_is_one_3d_tensor(one_layer):
    data = view_data(attention_view(one_layer, TOKENS))
    assert len(data["sentences"][0]["weights"]) == 1 and data["sentences"][0]["query"] == 0


def test_python_writes_data_and_a_fallback_and_the_script_builds_the_controls():
    """The controls, token panels and status line are built by attnview.js (see
    tests/site/test_views.py); Python writes none of them, so there is one builder."""
    view = attention_view(WEIGHTS, TOKENS, query=3)
    root = parse(view.html)
    assert not root.find_all("button") and not root.find_all("fieldset")
    assert not root.find_all("svg") and not root.find_all("select")
    (fallback,) = root.find_all("div", class_="attnbook-fallback")
    assert [p.attrs["class"] for p in fallback.find_all("p")] == [
        "attnbook-note",
        "attnbook-text",
        "attnbook-summary",
    ]
    assert "attention(view, d)" in asset("attnview.js")


def test_the_view_data_names_layers_heads_colours_and_the_selector():
    data = view_data(attention_view(WEIGHTS, TOKENS, head_names=["A", "B"]))
    assert data["heads"] == ["A", "B"] and data["layers"] == ["layer 0", "layer 1"]
    assert data["colors"] == list(HEAD_COLORS[:2])
    assert data["row"] == ROW_PX and data["description"] == "sentence"
    assert data["id"].startswith("attnbook-")
    (sentence,) = data["sentences"]
    assert sentence["label"] == sentence["title"] == ""


def test_the_fallback_says_where_the_default_query_looks_in_every_head():
    w = torch.zeros(1, 2, 3, 3)
    w[0, 0, 1] = torch.tensor([0.1, 0.2, 0.7])
    w[0, 1, 1] = torch.tensor([0.6, 0.3, 0.1])
    root = parse(attention_view(w, ["Mary", "she", "ran"], query=1, title="s").html)
    (fallback,) = root.find_all("div", class_="attnbook-fallback")
    texts = [p.all_text() for p in fallback.find_all("p")][1:]
    assert texts == [
        "s",
        "Mary she ran",
        "In layer 0, for the query 'she': head 0 attends most to 'ran' (0.70); "
        "head 1 attends most to 'Mary' (0.60).",
    ]


def test_the_fallback_rounds_like_the_browser_ties_away_from_zero():
    d = {"weights": [[[[0.125, 0.875]]]], "queries": ["a"], "keys": ["b", "c"], "query": 0}
    assert summary(d, 0, "L0", ["H0"]) == "In L0, for the query 'a': H0 attends most to 'c' (0.88)."
    d["weights"] = [[[[0.625, 0.375]]]]
    assert summary(d, 0, "L0", ["H0"]).endswith("'b' (0.63).")


def test_peak_names_every_key_that_ties_as_shown_and_an_even_spread():
    keys = ["老", "张", "丽", "他"]
    assert (
        peak([0.1, 0.2067, 0.2066, 0.2068], keys)
        == "attends most to '张', '丽' and '他' (0.21 each)"
    )
    assert peak([0.25, 0.25, 0.25, 0.25], keys) == (
        "spreads its weight evenly over all 4 keys (0.25 each)"
    )
    assert peak([0.1, 0.7, 0.1, 0.1], keys) == "attends most to '张' (0.70)"
    assert peak([0.3, 0.3, 0.2, 0.2], keys) == "attends most to '老' and '张' (0.30 each)"


def test_cross_attention_has_its_own_key_tokens():
    w = torch.softmax(torch.randn(2, 3, 4), -1)
    view = attention_view(w, ["我", "爱", "你"], key_tokens=["I", "love", "you", "."])
    (sentence,) = view_data(view)["sentences"]
    assert sentence["queries"] == ["我", "爱", "你"]
    assert sentence["keys"] == ["I", "love", "you", "."]
    (text,) = parse(view.html).find_all("p", class_="attnbook-text")
    assert text.all_text() == "queries: 我爱你; keys: I love you ."  # Chinese runs together


def test_several_sentences_share_layers_and_heads_and_each_has_its_fallback():
    view = attention_views(
        {
            "en": dict(weights=WEIGHTS, tokens=TOKENS, query=3),
            "zh": dict(weights=WEIGHTS[:, :, :3, :3], tokens=["他", "哭", "了"], title="中文"),
        },
        description="which sentence",
    )
    data = view_data(view)
    assert [d["label"] for d in data["sentences"]] == ["en", "zh"]
    assert data["description"] == "which sentence"
    root = parse(view.html)
    titles = [p.all_text() for p in root.find_all("p", class_="attnbook-title")]
    assert titles == ["en", "zh: 中文"]
    texts = [p.all_text() for p in root.find_all("p", class_="attnbook-text")]
    assert texts == [" ".join(TOKENS), "他哭了"]
    assert len(root.find_all("p", class_="attnbook-summary")) == 2
    assert view.text == "attention view: 2 sentences, 2 layers x 2 heads"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: attention_view(WEIGHTS[0, 0], TOKENS), r"got shape \(5, 5\)"),
        (lambda: attention_view(WEIGHTS[None], TOKENS), r"\(layers, H, L, S\) tensor; got shape"),
        (lambda: attention_view([], TOKENS), "empty sequence"),
        (lambda: attention_view(WEIGHTS, TOKENS[:4]), "tokens has 4 entries"),
        (
            lambda: attention_view(WEIGHTS, TOKENS, key_tokens=["a"]),
            r"key_tokens has 1 entries but weights have shape \(layers=2, H=2, L=5, S=5\)",
        ),
        (lambda: attention_view(WEIGHTS, TOKENS, query=5), r"query must be in \[0, L\) = \[0, 5\)"),
        (
            lambda: attention_view([WEIGHTS[0], WEIGHTS[1, :1]], TOKENS),
            r"mismatched layers in weights: layer 1 has shape \(1, 5, 5\)",
        ),
        (lambda: attention_view(WEIGHTS, TOKENS, head_names=["a"]), "head_names has 1 entries"),
        (
            lambda: attention_views(
                {
                    "a": dict(weights=WEIGHTS, tokens=TOKENS),
                    "b": dict(weights=WEIGHTS[:1], tokens=TOKENS),
                }
            ),
            "sentence 'b' has 1 layers x 2 heads, sentence 'a' has 2 x 2",
        ),
        (lambda: attention_views({}), "at least one sentence"),
        (lambda: attention_view(torch.full((1, 5, 5), float("nan")), TOKENS), "NaN or infinite"),
        (
            lambda: attention_views({"a": dict(weight=WEIGHTS, tokens=TOKENS)}),
            r"missing \['weights'\], unknown \['weight'\]",
        ),
    ],
)
def test_bad_input_is_rejected_naming_the_argument_and_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- nbval ------------------------------------------------------------------------------------


def sanitize(text: str) -> str:
    """What nbval does with tests/nbval_sanitize.cfg (nbval.plugin: re.sub for every pair)."""
    pairs = re.findall(r"^regex: (.*)$\n^replace: (.*)$", SANITIZE.read_text(), flags=re.M)
    for regex, replace in pairs:
        text = re.sub(regex, replace, text)
    return text


def test_nbval_compares_a_views_structure_not_its_data_script_or_images():
    """Two runs whose weights and pictures differ in the last digits (other CPU kernels)."""

    def views(eps):
        figure = figure_switcher({"a": lambda: chart("a", eps)}, description="pick")
        weights = (WEIGHTS + eps) / (WEIGHTS + eps).sum(-1, keepdim=True)
        return attention_view(weights, TOKENS, query=1).html, figure.html

    (attn_a, fig_a), (attn_b, fig_b) = views(0.0), views(2e-5)
    assert view_data_of(attn_a) != view_data_of(attn_b)
    clean = sanitize(attn_a)
    assert '<script type="application/json" class="attnbook-data">DATA</script>' in clean
    assert '<script class="attnbook-js">SCRIPT</script>' in clean and "function" not in clean
    assert '<style class="attnbook-css">STYLE</style>' in clean and "{" not in clean
    assert "data:image/png;base64,PNG" in sanitize(fig_a) and len(sanitize(fig_a)) < 2000
    assert 'alt="ALT"' in sanitize(fig_a)  # the alt text names the data's numbers
    assert '<p class="attnbook-summary">SUMMARY</p>' in clean
    assert f'<p class="attnbook-text">{" ".join(TOKENS)}</p>' in clean  # the text stays
    # The view's counter differs here because both views are made in one process.
    assert re.sub(r"attnbook-\d+-", "", clean) == re.sub(r"attnbook-\d+-", "", sanitize(attn_b))
    assert re.sub(r"attnbook-\d+-", "", sanitize(fig_a)) == re.sub(
        r"attnbook-\d+-", "", sanitize(fig_b)
    )
