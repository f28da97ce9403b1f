"""The detective running in the reader's browser (attnbook.viz.live), in headless Chromium, offline.

A minimal page holds the live panel; the committed checkpoint lies in its ``_static/models/`` as
the book's build puts it there (book/_ext/live_models.py); the page is served on 127.0.0.1 and
every other request is blocked. Sentences typed into the panel must give PyTorch's attention
weights (every layer, head, query and key) and pointer probabilities to 1e-4, and its answer; an
unknown word gets a message and no drawing; the model file is fetched only once the panel is
opened. The same runs on chapter 7's built page when it has the panel.

Like test_views.py, these tests write their own page and need no built book, only Chromium.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import sys
import threading
import types
from pathlib import Path

import pytest
import torch
from conftest import CHROMIUM, ROOT, SITE, OfflinePage
from test_site import KNOWN_CONSOLE_NOISE

from attnbook.checkpoint import load_checkpoint
from attnbook.tasks.coref import CorefTask
from attnbook.tasks.vocab import tokenize
from attnbook.viz.explorer import PRONOUNS
from attnbook.viz.live import EXAMPLES, MODEL_FILE, OFFSITE, detective_vocabulary, live_panel

CHECKPOINT = ROOT / "book" / "checkpoints" / MODEL_FILE
CHAPTER = "book/07_seeing_the_heads.html"
TOLERANCE = 1e-4


def _keep_these_tests(config, items) -> None:
    """tests/site/conftest.py skips tests/site when no book is built; these need none, only
    Chromium (without it they are skipped too, unless ATTNBOOK_REQUIRE_SITE=1 as in make)."""
    required = os.environ.get("ATTNBOOK_REQUIRE_SITE") == "1"
    for item in items:
        if item.path.name != "test_live.py" or item.path.parent.name != "site":
            continue
        item.own_markers[:] = [
            m
            for m in item.own_markers
            if not (m.name == "skip" and "no built site" in str(m.kwargs))
        ]
        if not (Path(CHROMIUM).exists() or required):
            item.add_marker(pytest.mark.skip(reason=f"needs Chromium at {CHROMIUM}"))


_plugin = types.ModuleType(
    "attnbook_test_live_plugin", "Keeps tests/site/test_live.py running. PYTEST_DONT_REWRITE"
)
_plugin.pytest_collection_modifyitems = pytest.hookimpl(trylast=True)(_keep_these_tests)
sys.modules[_plugin.__name__] = _plugin
pytest_plugins = [_plugin.__name__]

ENGLISH = EXAMPLES[0]
CHINESE = CorefTask("zh").examples(1, "test", seed=3)[0].text  # in the vocabulary by construction
LONG = CorefTask("en").examples(1, "long", seed=1)[0].text  # six people, more fillers
SENTENCES = {"english": ENGLISH, "chinese": CHINESE, "long": LONG, "chinese-example": EXAMPLES[1]}


def reference(text: str) -> dict:
    """PyTorch's answer: Detective.forward with need_weights=True on the committed checkpoint."""
    model = load_checkpoint(CHECKPOINT)
    tokens = tokenize(text)
    ids = torch.tensor([detective_vocabulary().encode(tokens)])  # (1, S)
    pronoun = next(i for i, t in enumerate(tokens) if t in PRONOUNS)
    with torch.no_grad():
        logits, weights = model(
            ids, torch.zeros_like(ids, dtype=torch.bool), torch.tensor([pronoun]), need_weights=True
        )
    return {
        "tokens": tokens,
        "pronoun": pronoun,
        "weights": torch.stack([w[0] for w in weights]).double(),  # (layers, H, S, S)
        "probs": logits[0].softmax(-1).double(),  # (S,)
    }


class _LoggingHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.requests.append(self.path)
        super().do_GET()


def _page_html(panel: str, content_root: str | None) -> str:
    root = "" if content_root is None else f' data-content_root="{content_root}"'
    return (
        f'<!doctype html><html lang="en"{root}><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>live</title></head><body><main><h1>Live</h1>{panel}</main></body></html>"
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A folder served on 127.0.0.1: live.html with the panel and the model where the book's
    build puts it; offsite.html without data-content_root, as a notebook would be; nomodel.html
    whose site root has no model file."""
    folder = tmp_path_factory.mktemp("live")
    (folder / "_static" / "models").mkdir(parents=True)
    shutil.copyfile(CHECKPOINT, folder / "_static" / "models" / MODEL_FILE)
    panel = live_panel(checkpoint=CHECKPOINT).html
    (folder / "live.html").write_text(_page_html(panel, "./"), encoding="utf-8")
    (folder / "offsite.html").write_text(_page_html(panel, None), encoding="utf-8")
    (folder / "nomodel.html").write_text(_page_html(panel, "nowhere/"), encoding="utf-8")
    handler = type("Handler", (_LoggingHandler,), {"requests": []})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.requests
    httpd.shutdown()


@pytest.fixture
def live(offline_page, server):
    url, requests = server
    requests.clear()
    offline_page.page.goto(f"{url}/live.html", wait_until="load")
    yield offline_page.page, requests
    assert offline_page.blocked == [], f"asked the network for {offline_page.blocked}"
    assert offline_page.errors == [], f"console errors {offline_page.errors}"


PANEL = ".attnbook-live-panel"


def run_sentence(page, text: str | None, *, label: str = "Your sentence", run: str = "Run") -> dict:
    """Type ``text`` (None: leave the box as it is), press Run, return the script's result.
    ``label`` and ``run``: the text box's label and the button's name (the Chinese panel's
    are 你的句子… and 运行)."""
    panel = page.locator(PANEL).first
    if not panel.locator("details").evaluate("d => d.open"):
        panel.locator("summary").click()
        page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    panel.evaluate("p => { p.lastResult = null; }")
    if text is not None:
        panel.get_by_label(label).fill(text)
    panel.get_by_role("button", name=run, exact=True).click()
    page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    return panel.evaluate("p => p.lastResult")


def max_difference(result: dict, expected: dict) -> tuple[float, float]:
    weights = torch.tensor(result["weights"], dtype=torch.float64)
    probs = torch.tensor(result["probs"], dtype=torch.float64)
    assert weights.shape == expected["weights"].shape
    return (
        (weights - expected["weights"]).abs().max().item(),
        (probs - expected["probs"]).abs().max().item(),
    )


def test_the_model_is_fetched_only_when_the_panel_is_opened(live):
    page, requests = live
    page.wait_for_timeout(300)
    assert not any(MODEL_FILE in r for r in requests), requests
    assert not page.locator(f"{PANEL} .attnbook-live-drawing svg").count()
    page.locator(f"{PANEL} summary").click()
    page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    assert [r for r in requests if MODEL_FILE in r] == [f"/_static/models/{MODEL_FILE}"]
    # Opening runs the sentence already in the box: the English example.
    assert page.locator(f"{PANEL} .attnbook-live-answer").text_content() == "she → Anna, p = " + (
        f"{reference(ENGLISH)['probs'][reference(ENGLISH)['tokens'].index('Anna')]:.2f}"
    )


@pytest.mark.parametrize("name", list(SENTENCES))
def test_the_browser_gives_pytorchs_weights_probabilities_and_answer(live, name):
    page, _ = live
    text = SENTENCES[name]
    result = run_sentence(page, text)
    expected = reference(text)
    assert result["tokens"] == expected["tokens"]
    assert result["pronoun"] == expected["pronoun"]
    weights_diff, probs_diff = max_difference(result, expected)
    print(f"{name}: max |browser - PyTorch| weights {weights_diff:.2e}, probs {probs_diff:.2e}")
    assert weights_diff < TOLERANCE and probs_diff < TOLERANCE
    answer = int(expected["probs"].argmax())
    assert result["answer"] == answer
    tokens, p = expected["tokens"], expected["probs"][answer].item()
    shown = page.locator(f"{PANEL} .attnbook-live-answer").text_content()
    assert shown == f"{tokens[expected['pronoun']]} → {tokens[answer]}, p = {p:.2f}"
    listed = page.locator(f"{PANEL} .attnbook-live-list li").evaluate_all(
        "ls => ls.map(l => Number(l.dataset.p))"
    )
    assert torch.allclose(torch.tensor(listed).double(), expected["probs"], atol=1e-4)


def test_the_drawing_is_the_hover_view_of_every_layer_and_head(live):
    page, _ = live
    expected = reference(ENGLISH)
    run_sentence(page, ENGLISH)
    view = page.locator(f"{PANEL} .attnbook-view[data-kind=attention]")
    panel = view.locator(".attnbook-sentence")
    keys = panel.locator(".attnbook-k")

    def shown() -> torch.Tensor:
        return torch.tensor(keys.evaluate_all("ks => ks.map(k => Number(k.dataset.weight))"))

    she = expected["pronoun"]
    assert "is-current" in panel.locator(f'[data-query-index="{she}"]').get_attribute("class")
    assert panel.locator(".attnbook-q").all_text_contents() == expected["tokens"]
    assert view.locator(".attnbook-status").get_attribute("aria-live") == "polite"
    assert panel.locator("svg").get_attribute("role") == "img"
    label = panel.locator("svg").get_attribute("aria-label")
    assert label.startswith("attention lines of layer 0 from the query 'she' to the keys; ")
    assert view.get_by_role("button", name="download the drawing as SVG").count() == 1
    layers, heads = expected["weights"].shape[:2]
    for layer in range(layers):
        view.get_by_role("group", name="layer").get_by_role("button", name=f"layer {layer}").click()
        for head in range(heads):
            view.get_by_role("group", name="head").get_by_role(
                "button", name=f"head {head}"
            ).click()
            row = expected["weights"][layer, head, she].float()
            assert torch.allclose(shown(), row, atol=1e-4), (layer, head)
    panel.locator('[data-query-index="0"]').hover()
    assert torch.allclose(shown(), expected["weights"][layers - 1, heads - 1, 0].float(), atol=1e-4)
    assert panel.locator("svg line").count() > 0


def test_an_unknown_word_gets_a_message_and_no_drawing(live):
    page, _ = live
    run_sentence(page, ENGLISH)  # a drawing first, which the unknown word must remove
    result = run_sentence(page, "Anna cried and Bob ran . later she dried the tears .")
    assert "error" in result
    message = page.locator(f"{PANEL} .attnbook-live-message").text_content()
    assert "'Bob' (token 3)" in message
    assert all(name in message for name in ("Tom", "Anna", "she", "cried"))
    assert page.locator(f"{PANEL} .attnbook-live-drawing").inner_html() == ""
    assert page.locator(f"{PANEL} .attnbook-live-answer").text_content() == ""
    assert page.locator(f"{PANEL} .attnbook-live-list").count() == 0


def test_a_sentence_without_a_pronoun_gets_a_message(live):
    page, _ = live
    result = run_sentence(page, "Anna cried and Tom ran .")
    assert "pronoun" in result["error"]
    assert page.locator(f"{PANEL} .attnbook-live-drawing").inner_html() == ""


def test_the_example_buttons_run_their_sentence(live):
    page, _ = live
    run_sentence(page, None)
    panel = page.locator(PANEL)
    panel.evaluate("p => { p.lastResult = null; }")
    panel.get_by_role("button", name=EXAMPLES[1]).click()
    page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    assert panel.evaluate("p => p.lastResult.tokens") == tokenize(EXAMPLES[1])
    assert panel.get_by_label("Your sentence").input_value() == EXAMPLES[1]


TRICKY = [
    "  she ran.  ",
    "Anna's tears,dried!",
    "王芳 哭了 ，她",
    "snake_case and 3.5 words",
    "tab\tand\u3000ideographic space",
    "",
]


def test_the_browser_tokenizes_as_python_does(live):
    page, _ = live
    got = page.evaluate("ts => ts.map(t => window.attnbookDetective.tokenize(t))", TRICKY)
    assert got == [tokenize(t) for t in TRICKY]


def test_without_the_site_the_panel_says_where_it_works(offline_page, server):
    url, requests = server
    page = offline_page.page
    page.goto(f"{url}/offsite.html", wait_until="load")
    page.locator(f"{PANEL} summary").click()
    page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    assert page.locator(f"{PANEL} .attnbook-live-message").text_content() == OFFSITE
    assert not any(MODEL_FILE in r for r in requests)
    assert offline_page.errors == [] and offline_page.blocked == []


def test_a_missing_model_file_is_said_plainly(offline_page, server):
    url, _ = server
    page = offline_page.page
    page.goto(f"{url}/nomodel.html", wait_until="load")
    page.locator(f"{PANEL} summary").click()
    page.wait_for_function(f"() => document.querySelector('{PANEL}').lastResult")
    message = page.locator(f"{PANEL} .attnbook-live-message").text_content()
    assert (
        message == f"The model could not be loaded (nowhere/_static/models/{MODEL_FILE}: HTTP 404)."
    )
    assert page.locator(f"{PANEL} .attnbook-live-drawing").inner_html() == ""


@pytest.mark.parametrize("edition", ["", "zh/"], ids=["English", "Chinese"])
def test_the_panel_on_chapter_7_runs_the_model(browser, edition):
    chapter = SITE / edition / CHAPTER
    if not chapter.exists():
        pytest.skip(f"no built book at {SITE}")
    assert "attnbook-live" in chapter.read_text(encoding="utf-8"), f"{chapter} lost its live panel"
    models = SITE / edition / "_static" / "models"
    assert (models / MODEL_FILE).read_bytes() == CHECKPOINT.read_bytes()
    requests: list[str] = []
    handler = type("Handler", (_LoggingHandler,), {"requests": requests})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(SITE))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    offline = OfflinePage(browser)
    try:
        page = offline.page
        url = f"http://127.0.0.1:{httpd.server_address[1]}/{edition}{CHAPTER}"
        page.goto(url, wait_until="load")
        page.wait_for_timeout(300)
        assert not any(MODEL_FILE in r for r in requests), "fetched before the panel was opened"
        words = {"label": "你的句子", "run": "运行"} if edition else {}
        for text in (ENGLISH, CHINESE):
            result = run_sentence(page, text, **words)
            weights_diff, probs_diff = max_difference(result, reference(text))
            assert weights_diff < TOLERANCE and probs_diff < TOLERANCE
            assert result["answer"] == int(reference(text)["probs"].argmax())
        assert [r for r in requests if MODEL_FILE in r] == [
            f"/{edition}_static/models/{MODEL_FILE}"
        ]
        if edition:  # the Chinese page's panel speaks Chinese
            message = page.locator(".attnbook-live-message").first.text_content()
            assert message.startswith("已在 ") and message.endswith(" 个词元上运行模型。"), message
        assert offline.blocked == []
        assert [e for e in offline.errors if not any(n.match(e) for n in KNOWN_CONSOLE_NOISE)] == []
    finally:
        offline.close()
        httpd.shutdown()


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def test_axe_finds_no_serious_or_critical_violation_in_the_open_panel(live):
    page, _ = live
    run_sentence(page, ENGLISH)
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("() => axe.run(document)")
    bad = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert bad == []


def test_a_phone_shows_the_open_panel_without_horizontal_overflow(browser, server):
    url, _ = server
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, has_touch=True
    )
    try:
        page = context.new_page()
        page.goto(f"{url}/live.html", wait_until="load")
        run_sentence(page, LONG)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
