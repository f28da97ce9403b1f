"""The HTML views of attnbook.viz.web in headless Chromium, offline, with no kernel and no widget
manager: every control switches its figure; pointing at, focusing or clicking a query token
shows (or locks) that token's weights in the chosen layer and head; export downloads; Chinese
tokens; a phone's width; axe-core.

These tests write their own page, so they need no built book: unlike the rest of tests/site they
run when _build/html is absent (see ``_RunWithoutTheBook``). They do need Chromium.
"""

from __future__ import annotations

import json
import os
import sys
import types
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch
from conftest import CHROMIUM, ROOT, OfflinePage

from attnbook.viz.attention_view import attention_view, attention_views, peak, summary, view_text
from attnbook.viz.style import set_alt
from attnbook.viz.web import figure_explorer


def _keep_these_tests(config, items) -> None:
    """tests/site/conftest.py skips tests/site when no book is built; these need none, only
    Chromium (without it they are skipped too, unless ATTNBOOK_REQUIRE_SITE=1 as in make)."""
    required = os.environ.get("ATTNBOOK_REQUIRE_SITE") == "1"
    for item in items:
        if item.path.name != "test_views.py":
            continue
        item.own_markers[:] = [
            m
            for m in item.own_markers
            if not (m.name == "skip" and "no built site" in str(m.kwargs))
        ]
        if not (Path(CHROMIUM).exists() or required):
            item.add_marker(pytest.mark.skip(reason=f"needs Chromium at {CHROMIUM}"))


# A plugin with only that hook (runs after conftest's), registered through pytest_plugins.
_plugin = types.ModuleType(
    "attnbook_test_views_plugin", "Keeps tests/site/test_views.py running. PYTEST_DONT_REWRITE"
)
_plugin.pytest_collection_modifyitems = pytest.hookimpl(trylast=True)(_keep_these_tests)
sys.modules[_plugin.__name__] = _plugin
pytest_plugins = [_plugin.__name__]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
EN = ["Tom", "cried", "and", "Mary", "ran", ".", "later", "she", "was", "full", "."]
ZH = ["王芳", "哭", "了", "，", "老张", "跑", "了", "。", "她", "饱", "了", "。"]
SRC = ["我", "爱", "你", "。"]
TGT = ["I", "love", "you", "."]


def weights(layers: int, heads: int, L: int, S: int, seed: int) -> torch.Tensor:
    """(layers, H, L, S) weights, peaked enough that rows differ."""
    g = torch.Generator().manual_seed(seed)
    return (3 * torch.randn(layers, heads, L, S, generator=g)).softmax(-1)


W_EN, W_ZH, W_CROSS = weights(2, 2, 11, 11, 0), weights(2, 2, 12, 12, 1), weights(1, 3, 4, 4, 2)


def fixed(x: float, digits: int = 4) -> str:
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def expected(w: torch.Tensor, layer: int, head: int | None, query: int) -> list[str]:
    """What the keys' data-weight should say: 4-decimal data, the mean over heads for "all"."""
    rounded = [[[round(x, 4) for x in row] for row in h] for h in w[layer].double().tolist()]
    heads = range(len(rounded)) if head is None else [head]
    S = len(rounded[0][0])
    return [fixed(sum(rounded[h][query][j] for h in heads) / len(heads)) for j in range(S)]


def drawing_label(sentence: dict, layer: int, query: int, heads: list[str]) -> str:
    """What the drawing's aria-label must say, from the data: where each head peaks (every key
    tied as shown named; Python's attention_view.peak, which the script mirrors)."""
    tops = [
        f"{name} {peak(sentence['weights'][layer][h][query], sentence['keys'])}"
        for h, name in enumerate(heads)
    ]
    title = f"{sentence['title']}: " if sentence["title"] else ""
    return (
        f"{title}attention lines of layer {layer} from the query '{sentence['queries'][query]}' "
        f"to the keys; per head: {'; '.join(tops)}"
    )


def render(choice):
    fig, ax = plt.subplots(figsize=(3, 1.5))
    ax.bar(range(3), [len(v) for v in choice.values()])
    ax.set_title(" / ".join(choice.values()))
    return set_alt(fig, "bars for " + ", ".join(choice.values()))


# A head whose first query ties between three keys and whose second spreads evenly (chapter 1's
# hand-built 说 and 小).
TIES = ["说", "张", "丽", "他"]
W_TIES = torch.tensor(
    [[[0.1, 0.3, 0.3, 0.3], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1], [1.0, 0, 0, 0]]]
)


@pytest.fixture(scope="module")
def views_page(tmp_path_factory):
    """A minimal page with a figure explorer (dropdown, toggle, slider), a two-sentence attention
    view (English and Chinese, 2 layers x 2 heads) and a cross-attention view."""
    figures = figure_explorer(
        {"sentence": ["a", "bb"], "layer": ["0", "1"], "temperature": ["0.5", "1", "2"]},
        render,
        kinds={"layer": "toggle", "temperature": "slider"},
    )
    sentences = attention_views(
        {
            "English": dict(weights=W_EN, tokens=EN, query=7, title="who is she?"),
            "中文": dict(weights=W_ZH, tokens=ZH, query=8),
        }
    )
    cross = attention_view(W_CROSS, TGT, key_tokens=SRC, query=1, title="translation")
    ties = attention_view(W_TIES, TIES, query=0, title="ties")
    ties_zh = attention_view(
        W_TIES[None].repeat(1, 2, 1, 1), TIES, query=0, title="并列", lang="zh"
    )
    body = "".join(
        f'<section id="{name}"><h2>{name}</h2>{view.html}</section>'
        for name, view in [
            ("figures", figures),
            ("sentences", sentences),
            ("cross", cross),
            ("ties", ties),
            ("ties_zh", ties_zh),
        ]
    )
    page = tmp_path_factory.mktemp("views") / "views.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>views</title></head><body><main><h1>Views</h1>{body}</main></body></html>",
        encoding="utf-8",
    )
    return page.as_uri()


@pytest.fixture
def page(offline_page, views_page):
    offline_page.page.goto(views_page, wait_until="load")
    yield offline_page.page
    assert offline_page.blocked == [], f"asked the network for {offline_page.blocked}"
    assert offline_page.errors == [], f"console errors {offline_page.errors}"


def key_weights(panel) -> list[str]:
    return panel.locator(".attnbook-k").evaluate_all("ks => ks.map(k => k.dataset.weight)")


def query(panel, i: int):
    return panel.locator(f'.attnbook-q[data-query-index="{i}"]')


# --- figures ----------------------------------------------------------------------------------

VISIBLE = """view => Array.from(view.querySelectorAll('img'))
  .filter(img => img.offsetParent !== null && img.getBoundingClientRect().height > 0)
  .map(img => img.dataset.image)"""


def test_every_control_switches_the_visible_figure(page):
    view = page.locator("#figures .attnbook-view")
    data = json.loads(view.locator(".attnbook-data").text_content())

    def shown_for(s, l, t):
        return [str(data["images"][(s * 2 + l) * 3 + t])]

    assert view.evaluate(VISIBLE) == shown_for(0, 0, 0)
    view.get_by_label("sentence").select_option("bb")
    assert view.evaluate(VISIBLE) == shown_for(1, 0, 0)
    view.get_by_role("group", name="layer").get_by_role("button", name="1").click()
    assert view.evaluate(VISIBLE) == shown_for(1, 1, 0)
    assert view.get_by_role("button", name="1").get_attribute("aria-pressed") == "true"
    slider = view.get_by_label("temperature")
    slider.focus()
    slider.press("End")
    assert view.evaluate(VISIBLE) == shown_for(1, 1, 2)
    assert view.locator("output").text_content() == "2"
    slider.press("ArrowLeft")
    assert view.evaluate(VISIBLE) == shown_for(1, 1, 1)
    alt = view.locator("img:not([hidden])").get_attribute("alt")
    assert alt == "bars for bb, 1, 1"
    assert page.evaluate("() => Array.from(document.images).every(i => i.naturalWidth > 0)")


# --- attention --------------------------------------------------------------------------------


def test_the_default_query_is_drawn_and_described_as_python_says(page):
    panel = page.locator('#sentences .attnbook-sentence[data-sentence="0"]')
    assert key_weights(panel) == expected(W_EN, 0, 0, 7)
    assert "is-current" in query(panel, 7).get_attribute("class")
    data = json.loads(page.locator("#sentences .attnbook-data").text_content())
    label = drawing_label(data["sentences"][0], 0, 7, ["head 0", "head 1"])
    assert panel.locator("svg").get_attribute("aria-label") == label
    assert (
        page.locator("#sentences .attnbook-status")
        .text_content()
        .startswith("layer 0, head 0: 'she' attends most to '")
    )
    lines = panel.locator("svg line").count()
    assert 0 < lines <= len(EN)


def test_the_script_builds_labelled_controls_and_token_panels_from_the_data(page):
    view = page.locator("#sentences .attnbook-view")
    assert view.locator(".attnbook-fallback").count() == 0, "the fallback is replaced"
    select = view.get_by_label("sentence")
    assert select.evaluate("s => s.tagName") == "SELECT"
    assert select.locator("option").all_text_contents() == ["English", "中文"]
    layers = view.get_by_role("group", name="layer").get_by_role("button")
    assert layers.all_text_contents() == ["layer 0", "layer 1"]
    assert [layers.nth(i).get_attribute("aria-pressed") for i in range(2)] == ["true", "false"]
    heads = view.get_by_role("group", name="head").locator("button")
    assert heads.all_text_contents() == ["head 0", "head 1", "all"]
    assert [heads.nth(i).get_attribute("data-value") for i in range(3)] == ["0", "1", "-1"]
    assert view.locator(".attnbook-swatch").count() == 2
    for kind in ("SVG", "PNG"):
        assert view.get_by_role("button", name=f"download the drawing as {kind}").count() == 1
    panels = view.locator(".attnbook-sentence")
    assert [panels.nth(i).evaluate("p => p.hidden") for i in range(2)] == [False, True]
    panel = panels.nth(0)
    assert panel.locator(".attnbook-title").text_content() == "who is she?"
    assert query(panel, 7).get_attribute("aria-label") == "query 7: she"
    assert panel.locator(".attnbook-k").evaluate_all("ks => ks.map(k => k.dataset.keyIndex)") == [
        str(j) for j in range(len(EN))
    ]
    svg = panel.locator("svg.attnbook-lines")
    assert svg.get_attribute("role") == "img"
    assert svg.get_attribute("viewBox") == f"0 0 100 {24 * len(EN)}"
    assert view.locator(".attnbook-status").get_attribute("aria-live") == "polite"
    cross = page.locator("#cross .attnbook-view")
    assert cross.locator("select").count() == 0, "one sentence needs no sentence selector"
    assert cross.get_by_role("group", name="head").locator("button").count() == 4


def test_without_scripts_the_fallback_shows_titles_text_and_strongest_keys(browser, views_page):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(views_page, wait_until="load")
        view = page.locator("#sentences .attnbook-view")
        assert view.locator(".attnbook-fallback").is_visible()
        assert view.locator(".attnbook-q").count() == 0
        titles = view.locator(".attnbook-fallback .attnbook-title").all_text_contents()
        assert titles == ["English: who is she?", "中文"]
        texts = view.locator(".attnbook-text").all_text_contents()
        assert texts == [" ".join(EN), "".join(ZH)]
        data = json.loads(view.locator(".attnbook-data").text_content())
        first = data["sentences"][0]
        said = view.locator(".attnbook-summary").first.text_content()
        assert said == summary(first, 0, "layer 0", ["head 0", "head 1"])
        assert said.startswith("In layer 0, for the query 'she': head 0 attends most to ")
    finally:
        context.close()


def test_pointing_at_a_query_shows_its_weights_and_another_changes_them(page):
    panel = page.locator('#sentences .attnbook-sentence[data-sentence="0"]')
    query(panel, 3).hover()
    assert key_weights(panel) == expected(W_EN, 0, 0, 3)
    query(panel, 9).hover()
    assert key_weights(panel) == expected(W_EN, 0, 0, 9) != expected(W_EN, 0, 0, 3)


def test_head_layer_and_all_heads_change_what_is_shown(page):
    view = page.locator("#sentences .attnbook-view")
    panel = view.locator('.attnbook-sentence[data-sentence="0"]')
    query(panel, 2).hover()
    view.get_by_role("group", name="head").get_by_role("button", name="head 1").click()
    assert key_weights(panel) == expected(W_EN, 0, 1, 2)
    view.get_by_role("group", name="layer").get_by_role("button", name="layer 1").click()
    assert key_weights(panel) == expected(W_EN, 1, 1, 2)
    assert view.locator(".attnbook-status").text_content().startswith("layer 1, head 1: 'and'")
    view.get_by_role("button", name="all").click()
    assert key_weights(panel) == expected(W_EN, 1, None, 2)
    colours = set(
        panel.locator("svg line").evaluate_all("ls => ls.map(l => l.getAttribute('stroke'))")
    )
    assert len(colours) == 2, "every head in its own colour"


def test_a_click_locks_the_query_until_clicked_again(page):
    panel = page.locator('#sentences .attnbook-sentence[data-sentence="0"]')
    query(panel, 4).click()
    assert query(panel, 4).get_attribute("aria-pressed") == "true"
    query(panel, 6).hover()
    assert key_weights(panel) == expected(W_EN, 0, 0, 4)
    query(panel, 4).click()
    assert query(panel, 4).get_attribute("aria-pressed") == "false"
    query(panel, 6).hover()
    assert key_weights(panel) == expected(W_EN, 0, 0, 6)


def test_the_keyboard_moves_between_queries_and_enter_locks(page):
    panel = page.locator('#sentences .attnbook-sentence[data-sentence="0"]')
    query(panel, 0).focus()
    assert key_weights(panel) == expected(W_EN, 0, 0, 0)
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.dataset.queryIndex") == "1"
    assert key_weights(panel) == expected(W_EN, 0, 0, 1)
    page.keyboard.press("Enter")
    assert query(panel, 1).get_attribute("aria-pressed") == "true"


def test_chinese_tokens_read_as_given_and_respond(page):
    view = page.locator("#sentences .attnbook-view")
    view.get_by_label("sentence").select_option("中文")
    panel = view.locator('.attnbook-sentence[data-sentence="1"]')
    assert panel.is_visible() and not view.locator('[data-sentence="0"]').is_visible()
    assert panel.locator(".attnbook-q").all_text_contents() == ZH
    assert panel.locator(".attnbook-k").all_text_contents() == ZH
    assert key_weights(panel) == expected(W_ZH, 0, 0, 8)  # the sentence's own default query
    query(panel, 4).hover()
    assert key_weights(panel) == expected(W_ZH, 0, 0, 4)


def test_cross_attention_draws_from_queries_to_other_keys(page):
    panel = page.locator("#cross .attnbook-sentence")
    assert panel.locator(".attnbook-k").all_text_contents() == SRC
    query(panel, 3).hover()
    assert key_weights(panel) == expected(W_CROSS, 0, 0, 3)
    page.locator("#cross").get_by_role("button", name="head 2").click()
    assert key_weights(panel) == expected(W_CROSS, 0, 2, 3)


def test_status_names_every_tied_key_and_an_even_spread(page):
    view = page.locator("#ties .attnbook-view")
    panel = view.locator(".attnbook-sentence")
    status = view.locator(".attnbook-status")
    query(panel, 0).hover()
    assert status.text_content() == (
        "layer 0, head 0: '说' attends most to '张', '丽' and '他' (0.30 each)"
    )
    query(panel, 1).hover()
    assert status.text_content() == (
        "layer 0, head 0: '张' spreads its weight evenly over all 4 keys (0.25 each)"
    )
    query(panel, 2).hover()
    assert status.text_content() == "layer 0, head 0: '丽' attends most to '说' (0.70)"


@pytest.mark.parametrize("kind", ["svg", "png"])
def test_export_downloads_the_current_drawing(page, kind, tmp_path):
    view = page.locator("#sentences .attnbook-view")
    with page.expect_download() as info:
        view.locator(f'[data-export="{kind}"]').click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    content = path.read_bytes()
    assert info.value.suggested_filename == f"attention-s0-layer0-head0-query7.{kind}"
    if kind == "svg":
        text = content.decode("utf-8")
        assert text.startswith("<svg") and all(f">{t}</text>" in text for t in ("Mary", "she"))
    else:
        assert content.startswith(b"\x89PNG") and len(content) > 2000


# --- the page as a whole ----------------------------------------------------------------------


class _Phone:
    """A browser whose new contexts are a 390-pixel phone screen at 2x density."""

    def __init__(self, browser):
        self.browser = browser

    def new_context(self, **_):
        return self.browser.new_context(
            viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True
        )


def test_a_phone_shows_every_view_without_horizontal_overflow(browser, views_page):
    phone = OfflinePage(_Phone(browser))
    try:
        page = phone.page
        page.goto(views_page, wait_until="load")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        panel = page.locator('#sentences .attnbook-sentence[data-sentence="0"]')
        query(panel, 3).tap()
        assert key_weights(panel) == expected(W_EN, 0, 0, 3)
        assert query(panel, 3).get_attribute("aria-pressed") == "true"
        assert phone.errors == [] and phone.blocked == []
    finally:
        phone.close()


def test_axe_finds_no_serious_or_critical_violation(page):
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("() => axe.run(document)")
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert bad == []


def test_a_chinese_view_speaks_chinese_as_python_does(page):
    """The Chinese edition's views: buttons, status line and drawing label in Chinese, with the
    same rule for ties and even spreads as the English (and as Python's fallback)."""
    view = page.locator("#ties_zh .attnbook-view")
    buttons = view.locator("button").evaluate_all("bs => bs.map(b => b.textContent)")
    assert buttons[:4] == ["第 0 层", "头 0", "头 1", "全部"], buttons
    panel = view.locator(".attnbook-sentence")
    status = view.locator(".attnbook-status")
    query(panel, 0).hover()
    assert status.text_content() == "第 0 层，头 0：“说”最关注“张”、“丽”和“他”（各 0.30）"
    query(panel, 1).hover()
    assert status.text_content() == "第 0 层，头 0：“张”把权重平均分给全部 4 个键（各 0.25）"
    view.get_by_role("button", name="全部").click()
    assert status.text_content() == "第 0 层，所有头：“张”把权重平均分给全部 4 个键（各 平均 0.25）"
    label = panel.locator("svg").get_attribute("aria-label")
    assert label.startswith("并列: 第 0 层从查询“张”到各个键的注意力连线；各头：头 0 把权重"), label
    text = view_text("zh")
    data = json.loads(view.locator(".attnbook-data").text_content())
    assert data["text"] == text and data["layers"] == ["第 0 层"]
    fallback = summary(data["sentences"][0], 0, "第 0 层", data["heads"], text)
    assert fallback.startswith("在第 0 层，查询“说”：头 0 最关注“张”、“丽”和“他”（各 0.30）；")
